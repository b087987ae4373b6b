// SPDX-License-Identifier: GPL-2.0
/*
 * Setting the invoker up and tearing it down: check the interface, attach
 * the XDP program, create one UMEM per RX queue and on it one socket per
 * (port, thread), publish the sockets and ports to the program, start the
 * pinned workers. Teardown runs the same steps backwards and copes with a
 * setup that stopped half-way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <xdp/libxdp.h>

#include "cell.h"
#include "invoker.h"
#include "log.h"
#include "module.h"
#include "registry.h"
#include "xsk_txmd.h"

int rr_count_rx_queues(const char *ifname)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "rx-", 3))
			n++;
	closedir(d);
	return n;
}

/* Reads /sys/class/net/IFNAME/ATTR into buf, without the newline. */
static int read_sysfs(const char *ifname, const char *attr, char *buf,
		      size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, attr);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -EINVAL;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_mac_mtu(const char *ifname, uint8_t *mac, uint32_t *mtu)
{
	unsigned int b[6], v;
	char buf[64];
	int i;

	if (read_sysfs(ifname, "mtu", buf, sizeof(buf)) ||
	    sscanf(buf, "%u", &v) != 1)
		return -EINVAL;
	*mtu = v;
	if (read_sysfs(ifname, "address", buf, sizeof(buf)) ||
	    sscanf(buf, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int check_interface(struct rr_invoker *inv, const struct rr_config *cfg)
{
	int nrx, ret;

	inv->ifindex = (int)if_nametoindex(cfg->ifname);
	if (!inv->ifindex) {
		pr_warn("no network interface named '%s'\n", cfg->ifname);
		return -ENODEV;
	}
	nrx = rr_count_rx_queues(cfg->ifname);
	if (nrx <= 0) {
		pr_warn("cannot count the RX queues of %s\n", cfg->ifname);
		return nrx ? nrx : -ENODEV;
	}
	inv->nrxqueues = (uint32_t)nrx;
	inv->nqueues = cfg->queues ? cfg->queues : (uint32_t)nrx;
	if (inv->nqueues > (uint32_t)nrx) {
		pr_warn("%s has %d RX queue%s; -q %u asks for more\n",
			cfg->ifname, nrx, nrx == 1 ? "" : "s", inv->nqueues);
		return -EINVAL;
	}
	if (inv->nqueues < (uint32_t)nrx)
		pr_warn("serving %u of %s's %d RX queues: requests arriving on the others go to the kernel\n",
			inv->nqueues, cfg->ifname, nrx);
	if (inv->nqueues > RR_MAX_QUEUES) {
		pr_warn("%s has %u RX queues; serving the first %u\n",
			cfg->ifname, inv->nqueues, RR_MAX_QUEUES);
		inv->nqueues = RR_MAX_QUEUES;
	}
	ret = read_mac_mtu(cfg->ifname, inv->mac, &inv->mtu);
	if (ret) {
		pr_warn("cannot read the MTU and MAC address of %s\n",
			cfg->ifname);
		return ret;
	}
	return 0;
}

/* @shared: the area is mapped shared, for cells forked later to use the
 * same pages the kernel pinned (a private mapping would be copied on a
 * cell's first write). */
static int umem_create(struct rr_umem *u, bool shared)
{
	struct xsk_umem_config ucfg = {
		.fill_size = RR_FILL_SIZE,
		.comp_size = RR_COMP_SIZE,
		.frame_size = RR_FRAME_SIZE,
		.frame_headroom = 0,
		.flags = 0,
	};
	int ret;

	u->size = (size_t)RR_NUM_FRAMES * RR_FRAME_SIZE;
	u->area = mmap(NULL, u->size, PROT_READ | PROT_WRITE,
		       (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS |
			       MAP_POPULATE,
		       -1, 0);
	if (u->area == MAP_FAILED) {
		u->area = NULL;
		return -errno;
	}
	/* Fewer TLB misses; the prototype's measurements favoured it. */
	madvise(u->area, u->size, MADV_HUGEPAGE);
	ret = xsk_umem__create(&u->umem, u->area, u->size, &u->fill, &u->comp,
			       &ucfg);
	if (ret)
		return ret;
	pthread_spin_init(&u->lock, PTHREAD_PROCESS_SHARED);
	return 0;
}

/* Every frame starts in the fill ring, which can hold them all. */
static int umem_fill_all(struct rr_umem *u)
{
	uint32_t idx, i;

	if (xsk_ring_prod__reserve(&u->fill, RR_NUM_FRAMES, &idx) !=
	    RR_NUM_FRAMES)
		return -ENOSPC;
	for (i = 0; i < RR_NUM_FRAMES; i++)
		*xsk_ring_prod__fill_addr(&u->fill, idx++) =
			(uint64_t)i * RR_FRAME_SIZE;
	xsk_ring_prod__submit(&u->fill, RR_NUM_FRAMES);
	return 0;
}

/*
 * Registers the UMEM again, with RR_TX_META_LEN bytes of TX metadata in
 * front of each frame's data, on an AF_XDP socket of our own; gives that
 * socket fill and completion rings and puts it in place of libxdp's under
 * the same fd number. Called before any socket is bound to the UMEM.
 *
 * libxdp 1.3.1 registers a UMEM itself and cannot ask for tx_metadata_len.
 * libxdp >= 1.5 can (xsk_umem__create_opts() with .tx_metadata_len and
 * XDP_UMEM_TX_METADATA_LEN in .flags) and replaces this function. All that
 * libxdp keeps about the UMEM stays true: the area, the sizes, its fd
 * number and the ring structs it was given, which now describe rings of the
 * same sizes on our socket; it unmaps them with the sizes it knows.
 *
 * -EINVAL: the kernel refused the registration (no TX metadata before 6.8,
 * no XDP_UMEM_TX_METADATA_LEN before 6.11); libxdp's UMEM is then as it
 * was.
 */
static int umem_add_tx_metadata(struct rr_umem *u)
{
	struct rr_xdp_umem_reg reg = {
		.addr = (uintptr_t)u->area,
		.len = u->size,
		.chunk_size = RR_FRAME_SIZE,
		.headroom = 0,
		.flags = XDP_UMEM_TX_METADATA_LEN,
		.tx_metadata_len = RR_TX_META_LEN,
	};
	uint32_t nfill = RR_FILL_SIZE, ncomp = RR_COMP_SIZE;
	size_t fill_len, comp_len;
	struct xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	char *fill, *comp;
	int fd, ret;

	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &nfill,
		       sizeof(nfill)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ncomp,
		       sizeof(ncomp)) ||
	    getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen)) {
		ret = -errno;
		goto err_close;
	}
	fill_len = off.fr.desc + nfill * sizeof(uint64_t);
	comp_len = off.cr.desc + ncomp * sizeof(uint64_t);
	fill = mmap(NULL, fill_len, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd, XDP_UMEM_PGOFF_FILL_RING);
	if (fill == MAP_FAILED) {
		ret = -errno;
		goto err_close;
	}
	comp = mmap(NULL, comp_len, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd,
		    XDP_UMEM_PGOFF_COMPLETION_RING);
	if (comp == MAP_FAILED) {
		ret = -errno;
		goto err_unmap_fill;
	}
	/* libxdp's socket goes once its fd number is ours and its rings
	 * are unmapped. */
	if (dup2(fd, xsk_umem__fd(u->umem)) < 0) {
		ret = -errno;
		munmap(comp, comp_len);
		goto err_unmap_fill;
	}
	close(fd);
	munmap((char *)u->fill.ring - off.fr.desc, fill_len);
	munmap((char *)u->comp.ring - off.cr.desc, comp_len);

	/* As libxdp sets up the rings it maps itself. */
	memset(&u->fill, 0, sizeof(u->fill));
	u->fill.mask = nfill - 1;
	u->fill.size = nfill;
	u->fill.producer = (uint32_t *)(fill + off.fr.producer);
	u->fill.consumer = (uint32_t *)(fill + off.fr.consumer);
	u->fill.flags = (uint32_t *)(fill + off.fr.flags);
	u->fill.ring = fill + off.fr.desc;
	u->fill.cached_cons = nfill;
	memset(&u->comp, 0, sizeof(u->comp));
	u->comp.mask = ncomp - 1;
	u->comp.size = ncomp;
	u->comp.producer = (uint32_t *)(comp + off.cr.producer);
	u->comp.consumer = (uint32_t *)(comp + off.cr.consumer);
	u->comp.flags = (uint32_t *)(comp + off.cr.flags);
	u->comp.ring = comp + off.cr.desc;
	u->tx_metadata = true;
	return 0;

err_unmap_fill:
	munmap(fill, fill_len);
err_close:
	close(fd);
	return ret;
}

static int sock_create(struct rr_invoker *inv, struct rr_sock *s,
		       struct rr_umem *u, uint32_t queue)
{
	struct xsk_socket_config scfg = {
		.rx_size = RR_RX_SIZE,
		.tx_size = RR_TX_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = inv->xdp.flags & XDP_FLAGS_MODES,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	int ret;

	/* Generic XDP cannot do zero-copy; otherwise the kernel chooses. */
	if (inv->xdp.flags & XDP_FLAGS_SKB_MODE)
		scfg.bind_flags |= XDP_COPY;
	ret = xsk_socket__create_shared(&s->xsk, inv->cfg->ifname, queue,
					u->umem, &s->rx, &s->tx, &u->fill,
					&u->comp, &scfg);
	if (ret)
		return ret;
	s->fd = xsk_socket__fd(s->xsk);
	return 0;
}

static bool sock_zerocopy(int fd)
{
	struct xdp_options opts = { 0 };
	socklen_t len = sizeof(opts);

	if (getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opts, &len))
		return false;
	return opts.flags & XDP_OPTIONS_ZEROCOPY;
}

/*
 * One queue's UMEM: with room for TX metadata when *tx_metadata, which is
 * cleared, with the reason in @why, if the kernel refuses it on the first
 * queue (it then refuses it on all).
 */
static int create_umem(struct rr_invoker *inv, uint32_t q, bool *tx_metadata,
		       const char **why)
{
	struct rr_umem *u = &inv->umems[q];
	int ret;

	ret = umem_create(u, inv->cfg->isolation == RR_ISOLATION_CELL);
	if (ret) {
		pr_warn("cannot create the UMEM for queue %u: %s\n", q,
			strerror(-ret));
		return ret;
	}
	if (*tx_metadata) {
		ret = umem_add_tx_metadata(u);
		if (ret == -EINVAL && !q) {
			*tx_metadata = false;
			*why = "the kernel refused TX metadata in the UMEM registration; Linux 6.11 and later have it";
		} else if (ret) {
			pr_warn("cannot register the UMEM of queue %u with TX metadata: %s\n",
				q, strerror(-ret));
			return ret;
		}
	}
	ret = umem_fill_all(u);
	if (ret)
		pr_warn("cannot put the %d frames of queue %u's UMEM in its fill ring\n",
			RR_NUM_FRAMES, q);
	return ret;
}

/*
 * Decides who computes the replies' UDP checksums, once the sockets are
 * bound, and says so in one line. Offload needs the UMEMs registered with
 * TX metadata; in copy mode the kernel then fills the checksum (as
 * CHECKSUM_PARTIAL on the skb, completed by the device or by
 * skb_checksum_help()). A zero-copy driver may ignore the request without
 * a word, and whether it honours it is not checked here: auto stays with
 * software there.
 */
static int choose_tx_csum(struct rr_invoker *inv, bool tx_metadata,
			  const char *why)
{
	enum rr_tx_csum mode = inv->cfg->tx_csum;

	if (tx_metadata && inv->zerocopy && mode == RR_TX_CSUM_AUTO) {
		tx_metadata = false;
		why = "zero-copy mode: the driver's TX metadata support is not probed; --tx-csum offload forces it";
	}
	if (mode == RR_TX_CSUM_OFFLOAD && !tx_metadata) {
		pr_warn("--tx-csum offload: %s\n", why);
		return -EOPNOTSUPP;
	}
	inv->tx_csum_offload = tx_metadata;
	if (tx_metadata)
		pr_info("TX checksum: offloaded (AF_XDP TX metadata)\n");
	else
		pr_info("TX checksum: software (%s)\n", why);
	return 0;
}

static int create_sockets(struct rr_invoker *inv)
{
	bool tx_metadata = inv->cfg->tx_csum != RR_TX_CSUM_SOFT;
	const char *why = "--tx-csum soft";
	char buf[128];
	uint32_t q, t, p;
	struct rr_sock *s;
	int ret;

	for (q = 0; q < inv->nqueues; q++) {
		ret = create_umem(inv, q, &tx_metadata, &why);
		if (ret)
			return ret;
		for (t = 0; t < inv->nthreads; t++) {
			for (p = 0; p < inv->nports; p++) {
				s = rr_sock_at(inv, q, t, p);
				s->svc = inv->services[p];
				s->slot = p;
				ret = sock_create(inv, s, &inv->umems[q], q);
				if (ret) {
					libxdp_strerror(ret, buf, sizeof(buf));
					pr_warn("cannot create an AF_XDP socket on %s queue %u: %s\n",
						inv->cfg->ifname, q, buf);
					return ret;
				}
				ret = rr_xdp_set_socket(&inv->xdp, q, p, t,
							s->fd);
				if (ret)
					return ret;
			}
		}
	}
	inv->threads_made = inv->nthreads;
	inv->zerocopy = sock_zerocopy(rr_sock_at(inv, 0, 0, 0)->fd);
	pr_info("%u AF_XDP sockets on %u queue%s, %s mode (the kernel's choice)\n",
		inv->nqueues * inv->nthreads * inv->nports, inv->nqueues,
		inv->nqueues == 1 ? "" : "s",
		inv->zerocopy ? "zero-copy" : "copy");
	return choose_tx_csum(inv, tx_metadata, why);
}

/*
 * Preferred busy polling (napi.rst): the socket options make a worker's
 * recvfrom()/sendto() run the queue's NAPI poll, and keep it to the worker
 * once it has; napi_defer_hard_irqs with gro_flush_timeout holds the
 * device's interrupts (on veth: the sender's softirq) back meanwhile, so
 * the receive work moves to the worker's CPU instead of interrupting it.
 */
#define RR_BUSY_POLL_USECS 20
#define RR_NAPI_DEFER_HARD_IRQS "2"
#define RR_GRO_FLUSH_TIMEOUT_NS "200000"

static int knob_set(const char *ifname, struct rr_sysfs_knob *k,
		    const char *val)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, k->attr);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, k->old, sizeof(k->old) - 1, 0);
	if (n <= 0) {
		ret = n ? -errno : -EIO;
		goto err;
	}
	k->old[n] = '\0';
	k->old[strcspn(k->old, "\n")] = '\0';
	if (pwrite(fd, val, strlen(val), 0) < 0) {
		ret = -errno;
		goto err;
	}
	k->fd = fd;
	k->changed = true;
	return 0;
err:
	close(fd);
	return ret;
}

static void knob_restore(const char *ifname, struct rr_sysfs_knob *k)
{
	if (!k->changed)
		return;
	if (pwrite(k->fd, k->old, strlen(k->old), 0) < 0)
		pr_warn("cannot put %s of %s back to %s: %s\n", k->attr, ifname,
			k->old, strerror(errno));
	close(k->fd);
	k->changed = false;
}

static int sock_busy_poll(int fd, bool on, uint32_t budget)
{
	int prefer = on, usecs = on ? RR_BUSY_POLL_USECS : 0;
	int nb = on ? (int)budget : 0;

	if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &prefer,
		       sizeof(prefer)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &nb, sizeof(nb)))
		return -errno;
	return 0;
}

/*
 * -B: preferred busy polling where the kernel allows it, else today's
 * plain spinning on the rings; one line says which. A refusal is not an
 * error: what was changed is undone and the workers spin as before.
 */
/* Socket @i of those made, in (queue, thread, slot) order. */
static struct rr_sock *made_sock(struct rr_invoker *inv, uint32_t i)
{
	uint32_t per_queue = inv->threads_made * inv->nports;

	return rr_sock_at(inv, i / per_queue, i % per_queue / inv->nports,
			  i % inv->nports);
}

static uint32_t socks_made(const struct rr_invoker *inv)
{
	return inv->nqueues * inv->threads_made * inv->nports;
}

static void setup_busy_poll(struct rr_invoker *inv)
{
	const char *ifname = inv->cfg->ifname, *what;
	uint32_t i, n = socks_made(inv);
	int ret;

	inv->napi_defer_hard_irqs.attr = "napi_defer_hard_irqs";
	inv->gro_flush_timeout.attr = "gro_flush_timeout";
	if (!inv->cfg->busy_poll)
		return;
	for (i = 0; i < n; i++) {
		ret = sock_busy_poll(made_sock(inv, i)->fd, true,
				     inv->cfg->batch);
		if (ret) {
			what = "SO_PREFER_BUSY_POLL, SO_BUSY_POLL or SO_BUSY_POLL_BUDGET";
			goto plain;
		}
	}
	what = inv->napi_defer_hard_irqs.attr;
	ret = knob_set(ifname, &inv->napi_defer_hard_irqs,
		       RR_NAPI_DEFER_HARD_IRQS);
	if (ret)
		goto plain;
	what = inv->gro_flush_timeout.attr;
	ret = knob_set(ifname, &inv->gro_flush_timeout,
		       RR_GRO_FLUSH_TIMEOUT_NS);
	if (ret)
		goto plain;
	inv->live->prefer_busy_poll = true;
	pr_info("busy polling: preferred (SO_PREFER_BUSY_POLL, %u us, budget %u; %s napi_defer_hard_irqs %s (was %s), gro_flush_timeout %s ns (was %s) until exit)\n",
		RR_BUSY_POLL_USECS, inv->cfg->batch, ifname,
		RR_NAPI_DEFER_HARD_IRQS, inv->napi_defer_hard_irqs.old,
		RR_GRO_FLUSH_TIMEOUT_NS, inv->gro_flush_timeout.old);
	return;
plain:
	pr_warn("busy polling: plain spinning on the rings (%s refused: %s)\n",
		what, strerror(-ret));
	knob_restore(ifname, &inv->napi_defer_hard_irqs);
	while (i--)
		sock_busy_poll(made_sock(inv, i)->fd, false, 0);
}

/* The NAPI ID that the first socket of queue @q to receive anything got
 * (0: none); false while none has received anything. */
static bool queue_napi_id(struct rr_invoker *inv, uint32_t q, unsigned int *id)
{
	socklen_t len = sizeof(*id);
	struct rr_sock *s;
	uint32_t t, p;

	for (t = 0; t < inv->nthreads; t++) {
		for (p = 0; p < inv->nports; p++) {
			s = rr_sock_at(inv, q, t, p);
			if (!rr_stat_read(&s->stats.rx))
				continue;
			if (getsockopt(s->fd, SOL_SOCKET, SO_INCOMING_NAPI_ID,
				       id, &len))
				*id = 0;
			return true;
		}
	}
	return false;
}

/*
 * An AF_XDP socket learns its queue's NAPI ID from the first packet it
 * receives (from the driver's xdp_rxq_info). If that ID is 0, recvfrom()
 * has nothing to poll, and the deferred interrupts only hold packets back
 * until gro_flush_timeout fires: on veth under 6.18 the sockets get no ID
 * (veth seems to register its queues before their NAPI has one), and every
 * request waited 200 us. So the first socket of each queue to receive
 * anything is asked, and one without an ID undoes preferred busy polling
 * for all.
 */
void rr_invoker_check_busy_poll(struct rr_invoker *inv)
{
	uint64_t all = inv->nqueues < 64 ? (1ULL << inv->nqueues) - 1 : ~0ULL;
	uint32_t q, n = socks_made(inv);
	unsigned int id;

	if (!inv->live->prefer_busy_poll || inv->napi_checked == all)
		return;
	for (q = 0; q < inv->nqueues; q++) {
		if (inv->napi_checked & (1ULL << q) ||
		    !queue_napi_id(inv, q, &id))
			continue;
		if (!id)
			goto plain;
		inv->napi_checked |= 1ULL << q;
		pr_debug("queue %u: NAPI ID %u\n", q, id);
	}
	return;
plain:
	pr_warn("busy polling: plain spinning after all: the kernel gave queue %u's sockets no NAPI to poll; %s's napi_defer_hard_irqs and gro_flush_timeout are back to %s and %s\n",
		q, inv->cfg->ifname, inv->napi_defer_hard_irqs.old,
		inv->gro_flush_timeout.old);
	__atomic_store_n(&inv->live->prefer_busy_poll, false, __ATOMIC_RELAXED);
	knob_restore(inv->cfg->ifname, &inv->gro_flush_timeout);
	knob_restore(inv->cfg->ifname, &inv->napi_defer_hard_irqs);
	for (q = 0; q < n; q++)
		sock_busy_poll(made_sock(inv, q)->fd, false, 0);
}

/* Zeroed, page aligned and shared with cells forked later: the queues',
 * workers' and sockets' state. */
static void *zalloc_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void free_shared(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

#define UMEMS_SIZE(inv) (sizeof(*(inv)->umems) * (inv)->nqueues)
#define WORKERS_SIZE(inv) (sizeof(*(inv)->workers) * RR_WORKER_SLOTS(inv))
#define SOCKS_SIZE(inv) \
	(sizeof(*(inv)->socks) * RR_WORKER_SLOTS(inv) * RR_MAX_PORTS)

/*
 * A veth hands its peer XDP_TX frames only while the peer runs an XDP
 * program of its own; without one, every reply sent from XDP is lost.
 * We cannot see the peer (it may live in another namespace), so say it.
 */
static void warn_veth_peer(const struct rr_invoker *inv)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	bool in_kernel = false;
	uint32_t p;
	int fd;

	for (p = 0; p < inv->nports; p++)
		in_kernel |= inv->tier_xdp[p] || inv->cached[p];
	if (!in_kernel)
		return;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", inv->cfg->ifname);
	ifr.ifr_data = (void *)&info;
	if (!ioctl(fd, SIOCETHTOOL, &ifr) && !strcmp(info.driver, "veth"))
		pr_warn("%s is a veth: replies sent from XDP reach its peer only while an XDP program runs there (any, even one that passes everything); --tier user avoids XDP_TX\n",
			inv->cfg->ifname);
	close(fd);
}

/*
 * Where function @slot is answered: its XDP program when it has one and
 * the tier allows (auto falls back to user space with a warning if the
 * kernel refuses the program; xdp stops the start-up), and for a pure
 * function served in user space, the reply cache.
 */
static int choose_tier(struct rr_invoker *inv, uint32_t slot,
		       struct rr_port_conf *conf)
{
	const struct rr_service *svc = inv->services[slot];
	const struct rr_xdp_impl *impl = rr_registry_xdp(svc->fn->name);
	char why[RR_ERRLEN];
	int ret;

	if (impl && svc->tier != RR_TIER_USER) {
		ret = rr_xdp_load_function(&inv->xdp, slot, impl, why,
					   sizeof(why));
		if (!ret) {
			inv->tier_xdp[slot] = true;
			conf->flags |= RR_PORT_XDP;
			return 0;
		}
		if (svc->tier == RR_TIER_XDP) {
			pr_warn("cannot load the XDP implementation of '%s': %s\n",
				svc->fn->name, why);
			return ret;
		}
		pr_warn("the XDP implementation of '%s' is not used (%s); its C implementation answers\n",
			svc->fn->name, why);
	}
	if (svc->cache && svc->fn->flags & RR_FN_PURE) {
		ret = rr_xdp_map_cache(&inv->xdp);
		if (ret) {
			pr_warn("cannot map the reply cache: %s; '%s' is served uncached\n",
				strerror(-ret), svc->fn->name);
			return 0;
		}
		/* Entries of an earlier configuration never match. */
		inv->cache_gen[slot] += 1;
		conf->cache_gen = inv->cache_gen[slot];
		conf->cache_id_bytes = svc->fn->id_bytes;
		inv->cached[slot] = true;
		conf->flags |= RR_PORT_CACHE;
	}
	return 0;
}

/* A module stays loaded while an instance of one of its functions lives. */
static void hold_module(const struct rr_fn_instance *inst)
{
	struct rr_module *m = rr_registry_module_of(inst->fn);

	if (m)
		m->users++;
}

static void free_instance(struct rr_fn_instance *inst)
{
	struct rr_module *m;

	if (!inst)
		return;
	m = rr_registry_module_of(inst->fn);
	rr_fn_instance_free(inst);
	if (m) {
		m->users--;
		rr_registry_release(m);
	}
}

/* Which worker slots run: thread < nthreads on every served queue. */
static void active_workers(const struct rr_invoker *inv, bool *active)
{
	uint32_t q, t;

	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < RR_MAX_THREADS; t++)
			active[q * RR_MAX_THREADS + t] = t < inv->nthreads;
}

/* Every served function's init(), before anything else is set up: a
 * function that cannot start stops reqrouter with its one line. */
static int create_instances(struct rr_invoker *inv)
{
	bool active[RR_MAX_QUEUES * RR_MAX_THREADS];
	char err[RR_ERRLEN];
	uint32_t p;
	int ret;

	active_workers(inv, active);
	for (p = 0; p < inv->nports; p++) {
		const struct rr_service *svc = inv->services[p];

		ret = rr_fn_instance_new_for(
			svc->fn, svc->port, svc->settings, svc->nsettings,
			RR_WORKER_SLOTS(inv), active, &inv->fn_ctrs[p],
			&inv->inst[p], err, sizeof(err));
		if (ret) {
			pr_warn("%s\n", err);
			return ret;
		}
		hold_module(inv->inst[p]);
	}
	return 0;
}

/* Until every running worker has started a round in epoch @e, or ~5 s;
 * false if one has not (it is stuck inside a function). */
static bool wait_workers(struct rr_invoker *inv, uint64_t e)
{
	struct timespec ms = { 0, 1000000L };
	uint32_t i, n = RR_WORKER_SLOTS(inv), tries;

	/* A cell's copies of the functions are its own: only fresh cells
	 * see the new ones. */
	if (inv->cfg->isolation == RR_ISOLATION_CELL)
		return rr_cells_renew(inv);
	for (tries = 0; tries < 5000; tries++) {
		for (i = 0; i < n; i++)
			if (__atomic_load_n(&inv->workers[i].started,
					    __ATOMIC_ACQUIRE) &&
			    __atomic_load_n(&inv->workers[i].seen_epoch,
					    __ATOMIC_ACQUIRE) < e)
				break;
		if (i == n)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

/* Puts @fresh in slot @p for the workers' next batch (its module held);
 * returns the instance it replaces, still in use until retired. */
static struct rr_fn_instance *swap_instance(struct rr_invoker *inv, uint32_t p,
					    struct rr_fn_instance *fresh)
{
	struct rr_fn_instance *old = inv->inst[p];

	hold_module(fresh);
	__atomic_store_n(&inv->inst[p], fresh, __ATOMIC_RELEASE);
	return old;
}

/*
 * Frees the swapped-out @old[RR_MAX_PORTS] (NULL entries skipped) once
 * every worker has passed a quiescent point after the swaps. False if one
 * has not come back from a function: nothing is freed then, since leaking
 * state is better than freeing it under a worker. The entries are freed,
 * not cleared: a caller may still read which slots changed.
 */
static bool retire_instances(struct rr_invoker *inv,
			     struct rr_fn_instance **old)
{
	uint32_t p;

	if (!wait_workers(inv,
			  __atomic_add_fetch(&inv->epoch, 1, __ATOMIC_SEQ_CST)))
		return false;
	for (p = 0; p < RR_MAX_PORTS; p++)
		free_instance(old[p]);
	return true;
}

int rr_invoker_reload(struct rr_invoker *inv, const struct rr_config *next,
		      char *msg, size_t msglen)
{
	struct rr_fn_instance *old[RR_MAX_PORTS] = { 0 }, *fresh;
	bool active[RR_MAX_QUEUES * RR_MAX_THREADS];
	uint32_t failed = 0, swapped = 0, p;
	const struct rr_service *svc;
	char err[RR_ERRLEN];
	int ret;

	/* A reload is also how a quarantined function is given another
	 * chance without the control socket. */
	for (p = 0; p < inv->nports; p++)
		if (inv->faults[p].quarantined) {
			rr_unquarantine_slot(inv, p);
			pr_info("reload: function '%s' is out of quarantine\n",
				inv->services[p]->fn->name);
		}
	active_workers(inv, active);
	for (p = 0; p < inv->nports; p++) {
		if (!inv->services[p]->fn->init)
			continue;
		svc = rr_config_service_of(next, inv->services[p]->fn);
		ret = rr_fn_instance_new_for(
			inv->services[p]->fn, inv->services[p]->port,
			svc ? svc->settings : NULL, svc ? svc->nsettings : 0,
			RR_WORKER_SLOTS(inv), active, &inv->fn_ctrs[p], &fresh,
			err, sizeof(err));
		if (ret) {
			pr_warn("reload: %s; the old state keeps serving\n",
				err);
			if (!failed++)
				snprintf(msg, msglen,
					 "%s; the old state keeps serving",
					 err);
			continue;
		}
		old[p] = swap_instance(inv, p, fresh);
		swapped++;
	}
	if (!failed)
		snprintf(msg, msglen, "%u function%s re-initialised", swapped,
			 swapped == 1 ? "" : "s");
	if (!swapped)
		return (int)failed;
	if (!retire_instances(inv, old)) {
		pr_warn("reload: a worker has not come back from a function for 5 s; the old state is kept in memory\n");
		return (int)failed + 1;
	}
	for (p = 0; p < inv->nports; p++) {
		if (!old[p])
			continue;
		/* Cached replies of the old state must no longer answer;
		 * workers now insert only new-state replies. */
		if (inv->cached[p]) {
			__atomic_add_fetch(&inv->cache_gen[p], 1,
					   __ATOMIC_RELAXED);
			inv->port_conf[p].cache_gen = inv->cache_gen[p];
			if (rr_xdp_set_port(&inv->xdp, inv->services[p]->port,
					    &inv->port_conf[p]))
				pr_warn("reload: cannot renew the reply cache of '%s'\n",
					inv->services[p]->fn->name);
		}
	}
	pr_info("reload: %u function%s re-initialised%s\n", swapped,
		swapped == 1 ? "" : "s", failed ? ", some failed" : "");
	return (int)failed;
}

static int slot_of(const struct rr_invoker *inv, const char *name)
{
	uint32_t p;

	for (p = 0; p < inv->nports; p++)
		if (!strcmp(inv->services[p]->fn->name, name))
			return (int)p;
	return -1;
}

/* Slot @p is answered only by its sockets from now on: a function that
 * came in by deploy has no XDP program here, and the replies cached for
 * the old code must not answer. */
static void user_tier_only(struct rr_invoker *inv, uint32_t p)
{
	struct rr_port_conf conf = inv->port_conf[p];

	if (!inv->tier_xdp[p] && !inv->cached[p])
		return;
	conf.flags &= ~(RR_PORT_XDP | RR_PORT_CACHE);
	if (!inv->removed[p] &&
	    rr_xdp_set_port(&inv->xdp, inv->services[p]->port, &conf))
		return;
	inv->port_conf[p] = conf;
	inv->tier_xdp[p] = false;
	inv->cached[p] = false;
}

/* Socket (q, t, p) made while serving (a new thread or function), on the
 * queue's shared UMEM and as the others were made. */
static int later_sock(struct rr_invoker *inv, uint32_t q, uint32_t t,
		      uint32_t p, char *msg, size_t msglen)
{
	struct rr_sock *s = rr_sock_at(inv, q, t, p);
	char buf[128];
	int ret;

	s->svc = inv->services[p];
	s->slot = p;
	ret = sock_create(inv, s, &inv->umems[q], q);
	if (ret) {
		libxdp_strerror(ret, buf, sizeof(buf));
		snprintf(msg, msglen,
			 "cannot create an AF_XDP socket on queue %u: %s", q,
			 buf);
		return ret;
	}
	if (inv->live->prefer_busy_poll)
		sock_busy_poll(s->fd, true, inv->cfg->batch);
	return 0;
}

/* Socket (q, t, p) into the XSKMAP: the XDP program may pick it now. */
static int map_sock(struct rr_invoker *inv, uint32_t q, uint32_t t, uint32_t p,
		    char *msg, size_t msglen)
{
	int ret = rr_xdp_set_socket(&inv->xdp, q, p, t,
				    rr_sock_at(inv, q, t, p)->fd);

	if (ret)
		snprintf(msg, msglen, "cannot put a socket into the XSKMAP: %s",
			 strerror(-ret));
	return ret;
}

static int open_port(struct rr_invoker *inv, uint32_t p);

/*
 * A deployed function with no slot yet: its service, as the config file
 * (read again, the module now registered) describes it, with the command
 * line's --tier and --no-cache applied. Appended to the config reqrouter
 * runs with; returns it, or NULL with @msg set.
 */
static struct rr_service *new_service(struct rr_invoker *inv,
				      const struct rr_function *fn, char *msg,
				      size_t msglen)
{
	struct rr_config *cfg = (struct rr_config *)inv->cfg, *tmp;
	struct rr_service *svc = NULL, *t;
	char err[RR_ERRLEN];
	uint32_t p;

	if (cfg->nservices ==
	    sizeof(cfg->services) / sizeof(cfg->services[0])) {
		snprintf(msg, msglen, "no room for another function");
		return NULL;
	}
	tmp = rr_config_read(cfg->config_file, err, sizeof(err));
	if (!tmp) {
		snprintf(msg, msglen, "%s", err);
		return NULL;
	}
	t = rr_config_service_of(tmp, fn);
	if (!t || !t->enabled ||
	    ((fn->flags & RR_FN_OPT_IN) && !t->configured)) {
		snprintf(
			msg, msglen,
			"function '%s' is off in the config (or needs its [function %s] section)",
			fn->name, fn->name);
		goto out;
	}
	for (p = 0; p < inv->nports; p++)
		if (inv->services[p]->port == t->port) {
			snprintf(msg, msglen, "port %u is '%s''s", t->port,
				 inv->services[p]->fn->name);
			goto out;
		}
	if (cfg->no_cache)
		t->cache = false;
	if (cfg->tier_set)
		t->tier = cfg->tier;
	svc = &cfg->services[cfg->nservices++];
	*svc = *t;
	t->nsettings = 0; /* the strings are svc's now */
	/* Their file name pointed into tmp, which goes: the same file. */
	for (p = 0; p < svc->nsettings; p++)
		svc->settings[p].file = cfg->config_file;
out:
	rr_config_destroy(tmp);
	return svc;
}

/* Sockets (for every thread made), XSKMAP entries (for the running ones),
 * workers told, then the port: slot inv->nports comes to life. */
static int add_slot(struct rr_invoker *inv, struct rr_service *svc,
		    struct rr_fn_instance *inst, char *msg, size_t msglen)
{
	uint32_t p = inv->nports, q, t;
	struct rr_sock *s;
	int ret;

	inv->services[p] = svc;	     /* its counters were registered by init */
	swap_instance(inv, p, inst); /* replaces nothing: a new slot */
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < inv->threads_made; t++) {
			s = rr_sock_at(inv, q, t, p);
			memset(&s->stats, 0, sizeof(s->stats));
			ret = later_sock(inv, q, t, p, msg, msglen);
			if (ret)
				return ret;
			if (t < inv->nthreads) {
				ret = map_sock(inv, q, t, p, msg, msglen);
				if (ret)
					return ret;
			}
		}
	inv->nports = p + 1;
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < RR_MAX_THREADS; t++)
			__atomic_store_n(&rr_worker_at(inv, q, t)->nsocks,
					 inv->nports, __ATOMIC_RELEASE);
	ret = open_port(inv, p);
	if (ret)
		snprintf(msg, msglen, "cannot open port %u: %s", svc->port,
			 strerror(-ret));
	return ret;
}

int rr_invoker_deploy(struct rr_invoker *inv, const char *path, char *msg,
		      size_t msglen)
{
	struct rr_fn_instance *fresh[RR_MAX_PORTS] = { 0 };
	struct rr_fn_instance *old[RR_MAX_PORTS] = { 0 };
	struct rr_fn_instance *added[RR_MAX_PORTS] = { 0 };
	struct rr_service *addsvc[RR_MAX_PORTS] = { 0 };
	struct rr_config *cfg = (struct rr_config *)inv->cfg;
	bool active[RR_MAX_QUEUES * RR_MAX_THREADS];
	struct rr_registry_snapshot *snap = NULL;
	uint32_t p, n = 0, nnew = 0, nserv = cfg->nservices, k;
	struct rr_service *svc;
	struct rr_module *m;
	char err[RR_ERRLEN];
	size_t j;
	int ret, slot;

	ret = rr_registry_open_module(path, &m, msg, msglen);
	if (ret)
		return ret;
	active_workers(inv, active);
	/* New functions are read from the config with the module in the
	 * registry; until all is known to work, that can be undone. */
	for (j = 0; j < m->nfns; j++)
		nnew += slot_of(inv, m->fns[j]->name) < 0;
	if (nnew) {
		if (inv->nports + nnew > RR_MAX_PORTS) {
			snprintf(msg, msglen, "%s: more than %d functions",
				 path, RR_MAX_PORTS);
			ret = -E2BIG;
			goto undo;
		}
		snap = rr_registry_save();
		if (!snap) {
			ret = -ENOMEM;
			snprintf(msg, msglen, "out of memory");
			goto undo;
		}
		rr_registry_adopt(m);
	}
	/* Every function first, so a failure changes nothing. */
	for (j = 0, k = 0; j < m->nfns; j++) {
		slot = slot_of(inv, m->fns[j]->name);
		if (slot < 0) {
			svc = new_service(inv, m->fns[j], err, sizeof(err));
			if (!svc) {
				snprintf(msg, msglen, "%s: %s", path, err);
				ret = -EINVAL;
				goto undo;
			}
			addsvc[k] = svc;
			ret = rr_fn_instance_new_for(
				m->fns[j], svc->port, svc->settings,
				svc->nsettings, RR_WORKER_SLOTS(inv), active,
				&inv->fn_ctrs[inv->nports + k], &added[k], err,
				sizeof(err));
			k++;
		} else {
			svc = (struct rr_service *)inv->services[slot];
			ret = rr_fn_instance_new_for(
				m->fns[j], svc->port, svc->settings,
				svc->nsettings, RR_WORKER_SLOTS(inv), active,
				&inv->fn_ctrs[slot], &fresh[slot], err,
				sizeof(err));
		}
		if (ret) {
			snprintf(msg, msglen, "%s: %s", path, err);
			goto undo;
		}
	}
	if (snap)
		free(snap); /* kept: the module is in for good */
	else
		rr_registry_adopt(m);
	snap = NULL;
	for (p = 0; p < inv->nports; p++) {
		if (!fresh[p])
			continue;
		user_tier_only(inv, p);
		old[p] = swap_instance(inv, p, fresh[p]);
		/* The main thread's view; workers read the instance. */
		svc = (struct rr_service *)inv->services[p];
		svc->fn = fresh[p]->fn;
		if (inv->removed[p]) {
			inv->removed[p] = false;
			rr_xdp_set_port(&inv->xdp, svc->port,
					&inv->port_conf[p]);
		}
		n++;
	}
	for (k = 0; k < nnew; k++) {
		ret = add_slot(inv, addsvc[k], added[k], msg, msglen);
		if (ret) {
			pr_warn("deploy: %s\n", msg);
			return ret;
		}
	}
	if (!retire_instances(inv, old)) {
		snprintf(
			msg, msglen,
			"deployed %s, but a worker has not come back from a function for 5 s: the old code stays loaded",
			path);
		pr_warn("%s\n", msg);
		return 0;
	}
	/* New code deserves a new chance, once no cell runs the old. */
	for (p = 0; p < inv->nports; p++)
		if (old[p])
			rr_unquarantine_slot(inv, p);
	snprintf(msg, msglen, "deployed %s: %u function%s replaced, %u added",
		 path, n, n == 1 ? "" : "s", nnew);
	pr_info("%s\n", msg);
	return 0;
undo:
	for (p = 0; p < RR_MAX_PORTS; p++) {
		rr_fn_instance_free(fresh[p]);
		rr_fn_instance_free(added[p]);
	}
	/* Services appended for new functions go again. */
	while (cfg->nservices > nserv) {
		svc = &cfg->services[--cfg->nservices];
		for (j = 0; j < svc->nsettings; j++) {
			free((char *)svc->settings[j].key);
			free((char *)svc->settings[j].value);
		}
		svc->nsettings = 0;
	}
	if (snap)
		rr_registry_restore(snap);
	rr_module_close(m);
	pr_warn("deploy: %s\n", msg);
	return ret;
}

int rr_invoker_remove(struct rr_invoker *inv, const char *name, char *msg,
		      size_t msglen)
{
	int p = slot_of(inv, name);

	if (p < 0 || inv->removed[p]) {
		snprintf(msg, msglen, "no function '%s' is served", name);
		return -ENOENT;
	}
	/* Its port first: new requests go to the kernel, never into a
	 * socket nobody answers; what is queued already still gets its
	 * reply from the code that is there. */
	if (rr_xdp_del_port(&inv->xdp, inv->services[p]->port)) {
		snprintf(msg, msglen, "cannot take port %u out",
			 inv->services[p]->port);
		return -EIO;
	}
	inv->removed[p] = true;
	user_tier_only(inv, p);
	snprintf(
		msg, msglen,
		"removed '%s': port %u goes to the kernel (reqrouterctl deploy brings it back)",
		name, inv->services[p]->port);
	pr_info("%s\n", msg);
	return 0;
}

/* Slot @p's port into the XDP map: from now on its requests reach us. */
static int open_port(struct rr_invoker *inv, uint32_t p)
{
	const struct rr_service *svc = inv->services[p];
	struct rr_port_conf conf = {
		.slot = p,
		.nsocks = inv->nthreads,
		.flags = svc->nallow ? RR_PORT_ALLOWLIST : 0,
		.max_amplification = svc->max_amplification,
		.cache_max_payload = svc->cache_max_payload,
		.xdp_max_payload = svc->xdp_max_payload,
	};
	uint32_t i;
	int ret;

	for (i = 0; i < svc->nallow; i++) {
		ret = rr_xdp_allow(&inv->xdp, p, &svc->allow[i]);
		if (ret)
			return ret;
	}
	ret = choose_tier(inv, p, &conf);
	if (ret)
		return ret;
	ret = rr_xdp_set_port(&inv->xdp, svc->port, &conf);
	if (ret)
		return ret;
	inv->port_conf[p] = conf;
	pr_info("serving '%s' on UDP port %u%s, %s%s\n", svc->fn->name,
		svc->port,
		svc->nallow ? " to the sources in its allow-list" : "",
		inv->tier_xdp[p] ? "in XDP first (tier xdp)"
				 : "in user space (tier user)",
		inv->cached[p] ? ", replies cached in XDP" : "");
	return 0;
}

int rr_invoker_setup(struct rr_invoker *inv, const struct rr_config *cfg)
{
	uint32_t i, p;
	int ret;

	memset(inv, 0, sizeof(*inv));
	inv->cfg = cfg;
	inv->nthreads = cfg->threads;
	for (i = 0; i < cfg->nservices; i++)
		if (cfg->services[i].enabled)
			inv->services[inv->nports++] = &cfg->services[i];

	ret = check_interface(inv, cfg);
	if (ret)
		return ret;
	ret = create_instances(inv);
	if (ret)
		return ret;

	inv->umems = zalloc_shared(UMEMS_SIZE(inv));
	inv->workers = zalloc_shared(WORKERS_SIZE(inv));
	inv->socks = zalloc_shared(SOCKS_SIZE(inv));
	inv->live = zalloc_shared(sizeof(*inv->live));
	if (!inv->umems || !inv->workers || !inv->socks || !inv->live) {
		pr_warn("cannot allocate the queues', workers' and sockets' state: %s\n",
			strerror(ENOMEM));
		return -ENOMEM;
	}

	ret = rr_xdp_load(&inv->xdp, inv->mac, inv->mtu);
	if (ret)
		return ret;
	ret = rr_xdp_attach(&inv->xdp, inv->ifindex, cfg->mode);
	if (ret)
		return ret;
	ret = create_sockets(inv);
	if (ret)
		return ret;
	setup_busy_poll(inv);
	/* Ports last: until now every packet went to the kernel. */
	for (p = 0; p < inv->nports; p++) {
		ret = open_port(inv, p);
		if (ret)
			return ret;
	}
	warn_veth_peer(inv);
	inv->ready = true;
	return 0;
}

static int allowed_cpus(const struct rr_config *cfg, int *cpus)
{
	cpu_set_t set;
	int n = 0, c;

	if (cfg->ncpus) {
		memcpy(cpus, cfg->cpus, sizeof(int) * cfg->ncpus);
		return (int)cfg->ncpus;
	}
	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (c = 0; c < CPU_SETSIZE && n < RR_MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

/*
 * Entries on a ring: the producer's count less the consumer's. Under load
 * the picture is a moment's: the kernel publishes how far it consumed a
 * ring lazily, so a frame it took from the fill ring can already be on an
 * RX ring. At rest it is exact.
 */
static uint32_t ring_used(const uint32_t *producer, const uint32_t *consumer)
{
	return __atomic_load_n(producer, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(consumer, __ATOMIC_ACQUIRE);
}

void rr_invoker_frames(struct rr_invoker *inv, uint32_t queue,
		       struct rr_frames *f)
{
	struct rr_umem *u = &inv->umems[queue];
	uint32_t t, p, known;
	struct rr_sock *s;

	memset(f, 0, sizeof(*f));
	/* Workers move frames from completion to fill under this lock. */
	rr_umem_lock(u, RR_LOCK_MAIN);
	f->fill = ring_used(u->fill.producer, u->fill.consumer);
	f->completion = ring_used(u->comp.producer, u->comp.consumer);
	rr_umem_unlock(u);
	for (t = 0; t < inv->threads_made; t++) {
		f->worker += (uint32_t)rr_stat_read(
			&rr_worker_at(inv, queue, t)->frames_held);
		for (p = 0; p < inv->nports; p++) {
			s = rr_sock_at(inv, queue, t, p);
			f->rx += ring_used(s->rx.producer, s->rx.consumer);
			f->tx += ring_used(s->tx.producer, s->tx.consumer);
		}
	}
	known = f->fill + f->rx + f->worker + f->tx + f->completion;
	f->kernel = known < RR_NUM_FRAMES ? RR_NUM_FRAMES - known : 0;
}

/* Starts worker (q, t) pinned to @cpu; signals blocked by the caller. */
/*
 * Waits for worker @w to end, once it was told to stop or retire. A thread
 * still inside a function after JOIN_TIMEOUT_S is left behind (a cell
 * would have been killed long before): inv->stuck keeps its rings and
 * frames mapped until the process exits.
 */
#define JOIN_TIMEOUT_S 3
static void join_worker(struct rr_invoker *inv, struct rr_worker *w)
{
	struct timespec until;
	uint32_t si;

	if (!w->started)
		return;
	if (inv->cfg->isolation == RR_ISOLATION_CELL) {
		rr_cell_join(inv, w);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += JOIN_TIMEOUT_S;
	if (pthread_timedjoin_np(w->tid, NULL, &until) == ETIMEDOUT) {
		si = __atomic_load_n(&w->batch.sock, __ATOMIC_ACQUIRE);
		pr_warn("the worker of queue %u, thread %u is stuck in function '%s' for %d s: left behind\n",
			w->queue, w->thread,
			si == RR_NO_BATCH ? "?" : w->socks[si].svc->fn->name,
			JOIN_TIMEOUT_S);
		inv->stuck = true;
	}
	__atomic_store_n(&w->started, false, __ATOMIC_RELEASE);
}

static int start_worker(struct rr_invoker *inv, uint32_t q, uint32_t t, int cpu)
{
	struct rr_worker *w = rr_worker_at(inv, q, t);
	cpu_set_t set;
	int ret;

	w->inv = inv;
	w->umem = &inv->umems[q];
	w->socks = rr_sock_at(inv, q, t, 0);
	w->nsocks = inv->nports;
	w->queue = q;
	w->thread = t;
	w->index = q * RR_MAX_THREADS + t;
	w->cpu = cpu;
	w->retire = false;
	/* It starts its first round in the current epoch. */
	w->seen_epoch = __atomic_load_n(&inv->epoch, __ATOMIC_SEQ_CST);
	w->batch.sock = RR_NO_BATCH;
	if (inv->cfg->isolation == RR_ISOLATION_CELL)
		return rr_cell_start(inv, w);
	ret = -pthread_create(&w->tid, NULL, rr_worker_run, w);
	if (ret) {
		pr_warn("cannot start a worker: %s\n", strerror(-ret));
		return ret;
	}
	__atomic_store_n(&w->started, true, __ATOMIC_RELEASE);
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	ret = -pthread_setaffinity_np(w->tid, sizeof(set), &set);
	if (ret) {
		pr_warn("cannot pin worker %u/%u to CPU %d: %s\n", q, t, w->cpu,
			strerror(-ret));
		return ret;
	}
	pr_debug("worker queue %u thread %u on CPU %d\n", q, t, w->cpu);
	return 0;
}

int rr_invoker_start(struct rr_invoker *inv)
{
	int cpus[RR_MAX_CPUS], ncpus;
	uint32_t q, t, i = 0;
	sigset_t all, old;
	int ret = 0;

	ncpus = allowed_cpus(inv->cfg, cpus);
	if (ncpus <= 0) {
		pr_warn("cannot find a CPU this process may run on: %s\n",
			ncpus ? strerror(-ncpus)
			      : "the affinity mask is empty");
		return ncpus ? ncpus : -EINVAL;
	}
	/* Workers leave signals to the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (q = 0; q < inv->nqueues; q++) {
		for (t = 0; t < inv->nthreads; t++, i++) {
			ret = start_worker(inv, q, t,
					   cpus[i % (uint32_t)ncpus]);
			if (ret)
				goto out;
		}
	}
	pr_info("%u worker%s started as %s (%s)\n", i, i == 1 ? "" : "s",
		inv->cfg->isolation == RR_ISOLATION_CELL ? "cells" : "threads",
		!inv->cfg->busy_poll	      ? "sleeping in poll()"
		: inv->live->prefer_busy_poll ? "busy-polling, preferred"
					      : "busy-polling, plain spinning");
	if (inv->cfg->busy_poll && i > (uint32_t)ncpus)
		pr_warn("%u busy-polling workers share %d CPU%s: they take turns, and latency suffers; use fewer queues or threads, or more CPUs\n",
			i, ncpus, ncpus == 1 ? "" : "s");
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/* Every port's round-robin over @n sockets per queue. */
static int set_nsocks(struct rr_invoker *inv, uint32_t n)
{
	uint32_t p;
	int ret;

	for (p = 0; p < inv->nports; p++) {
		inv->port_conf[p].nsocks = n;
		if (inv->removed[p] || (inv->faults[p].quarantined &&
					inv->services[p]->quarantine_pass))
			continue;
		ret = rr_xdp_set_port(&inv->xdp, inv->services[p]->port,
				      &inv->port_conf[p]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Sockets, and XSKMAP entries, for threads nthreads..n-1 of every queue;
 * those made before (and left when threads went down) are reused. */
static int more_sockets(struct rr_invoker *inv, uint32_t n, char *msg,
			size_t msglen)
{
	uint32_t q, t, p;
	int ret;

	for (t = inv->threads_made; t < n; t++) {
		for (q = 0; q < inv->nqueues; q++)
			for (p = 0; p < inv->nports; p++) {
				ret = later_sock(inv, q, t, p, msg, msglen);
				if (ret)
					return ret;
			}
		inv->threads_made = t + 1; /* whole threads only */
	}
	for (t = inv->nthreads; t < n; t++)
		for (q = 0; q < inv->nqueues; q++)
			for (p = 0; p < inv->nports; p++) {
				ret = map_sock(inv, q, t, p, msg, msglen);
				if (ret)
					return ret;
			}
	return 0;
}

/*
 * New states for the functions that keep one per worker (init_worker):
 * every worker that will run needs its own. Those without keep theirs.
 */
static int renew_worker_states(struct rr_invoker *inv, char *msg, size_t msglen)
{
	struct rr_fn_instance *old[RR_MAX_PORTS] = { 0 }, *fresh;
	bool active[RR_MAX_QUEUES * RR_MAX_THREADS];
	const struct rr_service *svc;
	char err[RR_ERRLEN];
	uint32_t p;
	int ret;

	active_workers(inv, active);
	for (p = 0; p < inv->nports; p++) {
		if (!inv->inst[p]->fn->init_worker)
			continue;
		svc = inv->services[p];
		ret = rr_fn_instance_new_for(
			inv->inst[p]->fn, svc->port, svc->settings,
			svc->nsettings, RR_WORKER_SLOTS(inv), active,
			&inv->fn_ctrs[p], &fresh, err, sizeof(err));
		if (ret) {
			snprintf(msg, msglen, "%s", err);
			goto undo;
		}
		old[p] = swap_instance(inv, p, fresh);
	}
	retire_instances(inv, old);
	return 0;
undo:
	/* Put back what was swapped; nothing ran on the new ones yet that
	 * the old ones cannot take over. */
	for (p = 0; p < inv->nports; p++)
		if (old[p]) {
			fresh = inv->inst[p];
			__atomic_store_n(&inv->inst[p], old[p],
					 __ATOMIC_RELEASE);
			old[p] = fresh;
		}
	retire_instances(inv, old);
	return ret;
}

int rr_invoker_set_threads(struct rr_invoker *inv, uint32_t n, char *msg,
			   size_t msglen)
{
	int cpus[RR_MAX_CPUS], ncpus, ret = 0;
	uint32_t q, t, p, was = inv->nthreads;
	struct timespec grace = { 0, 50000000L };
	sigset_t all, old;

	if (n < 1 || n > RR_MAX_THREADS) {
		snprintf(msg, msglen, "threads must be 1-%d, not %u",
			 RR_MAX_THREADS, n);
		return -EINVAL;
	}
	if (n == was) {
		snprintf(msg, msglen, "%u thread%s per queue already", n,
			 n == 1 ? "" : "s");
		return 0;
	}
	if (n < was) {
		/* Out of the rotation first, then out of the map: nothing
		 * new reaches the retiring sockets. Programs still running
		 * with the old entries finish within the grace period; then
		 * each retiring worker empties its rings and exits. */
		ret = set_nsocks(inv, n);
		for (t = n; !ret && t < was; t++)
			for (q = 0; q < inv->nqueues; q++)
				for (p = 0; p < inv->nports; p++)
					rr_xdp_clear_socket(&inv->xdp, q, p, t);
		if (ret) {
			snprintf(msg, msglen, "cannot update the XDP map: %s",
				 strerror(-ret));
			return ret;
		}
		nanosleep(&grace, NULL);
		for (t = n; t < was; t++)
			for (q = 0; q < inv->nqueues; q++)
				__atomic_store_n(
					&rr_worker_at(inv, q, t)->retire, true,
					__ATOMIC_RELEASE);
		for (t = n; t < was; t++)
			for (q = 0; q < inv->nqueues; q++) {
				struct rr_worker *w = rr_worker_at(inv, q, t);

				join_worker(inv, w);
			}
		inv->nthreads = n;
		goto done;
	}

	ret = more_sockets(inv, n, msg, msglen);
	if (ret)
		return ret;
	inv->nthreads = n;
	ret = renew_worker_states(inv, msg, msglen);
	if (ret) {
		inv->nthreads = was;
		return ret;
	}
	ncpus = allowed_cpus(inv->cfg, cpus);
	if (ncpus <= 0) {
		snprintf(msg, msglen, "no CPU to run workers on");
		inv->nthreads = was;
		return -EINVAL;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (q = 0; q < inv->nqueues && !ret; q++)
		for (t = was; t < n && !ret; t++)
			ret = start_worker(inv, q, t,
					   cpus[(q * n + t) % (uint32_t)ncpus]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		snprintf(msg, msglen, "cannot start a worker: %s",
			 strerror(-ret));
		return ret;
	}
	/* Into the rotation last: every new socket has its worker. */
	ret = set_nsocks(inv, n);
	if (ret) {
		snprintf(msg, msglen, "cannot update the XDP map: %s",
			 strerror(-ret));
		return ret;
	}
done:
	snprintf(msg, msglen, "%u thread%s per queue (was %u)", n,
		 n == 1 ? "" : "s", was);
	pr_info("%s\n", msg);
	return 0;
}

const char *rr_invoker_not_ready(struct rr_invoker *inv)
{
	uint32_t q, t;

	if (!inv->ready)
		return "starting";
	if (inv->draining)
		return "draining";
	if (__atomic_load_n(&inv->live->stop, __ATOMIC_RELAXED))
		return "stopping";
	if (!inv->xdp.attached)
		return "the XDP program is not attached";
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < inv->nthreads; t++)
			if (!rr_worker_at(inv, q, t)->started)
				return "a worker is not running";
	return NULL;
}

void rr_invoker_stop(struct rr_invoker *inv)
{
	uint32_t i;

	if (!inv->workers || !inv->live)
		return;
	__atomic_store_n(&inv->live->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < RR_WORKER_SLOTS(inv); i++)
		join_worker(inv, &inv->workers[i]);
}

void rr_invoker_destroy(struct rr_invoker *inv)
{
	uint32_t i, nsocks;

	if (!inv)
		return;
	rr_invoker_stop(inv);
	/* No new packets for sockets that are about to go. */
	rr_xdp_detach(&inv->xdp);
	if (inv->cfg) {
		knob_restore(inv->cfg->ifname, &inv->gro_flush_timeout);
		knob_restore(inv->cfg->ifname, &inv->napi_defer_hard_irqs);
	}
	/* A thread left in a function would touch them if it came back. */
	if (inv->stuck)
		return;
	nsocks = RR_WORKER_SLOTS(inv) * RR_MAX_PORTS;
	for (i = 0; inv->socks && i < nsocks; i++)
		if (inv->socks[i].xsk)
			xsk_socket__delete(inv->socks[i].xsk);
	for (i = 0; inv->umems && i < inv->nqueues; i++) {
		if (inv->umems[i].umem) {
			xsk_umem__delete(inv->umems[i].umem);
			pthread_spin_destroy(&inv->umems[i].lock);
		}
		if (inv->umems[i].area)
			munmap(inv->umems[i].area, inv->umems[i].size);
	}
	rr_xdp_destroy(&inv->xdp);
	for (i = 0; i < RR_MAX_PORTS; i++) {
		free_instance(inv->inst[i]);
		inv->inst[i] = NULL;
	}
	free_shared(inv->socks, SOCKS_SIZE(inv));
	free_shared(inv->workers, WORKERS_SIZE(inv));
	free_shared(inv->umems, UMEMS_SIZE(inv));
	free_shared(inv->live, sizeof(*inv->live));
	inv->socks = NULL;
	inv->workers = NULL;
	inv->umems = NULL;
	inv->live = NULL;
}
