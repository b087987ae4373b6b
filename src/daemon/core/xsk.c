// SPDX-License-Identifier: GPL-2.0
/*
 * The AF_XDP side of the invoker's set-up: one UMEM per served RX queue
 * (shared mapping, TX metadata room where the kernel has it) and on it one
 * socket per (queue, thread, slot), each put into the XSKMAP; the choice of
 * who computes the replies' UDP checksums. Also the sockets made later,
 * for a thread or a function added while serving.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/libxdp.h>

#include "busypoll.h"
#include "invoker.h"
#include "log.h"
#include "xsk_txmd.h"

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
	pthread_spin_init(&u->sh->lock, PTHREAD_PROCESS_SHARED);
	return 0;
}

/* Every frame but the last @keep starts in the fill ring, which can hold
 * them all. */
static int umem_fill_all(struct rr_umem *u, uint32_t keep)
{
	uint32_t idx, i, n = RR_NUM_FRAMES - keep;

	if (xsk_ring_prod__reserve(&u->fill, n, &idx) != n)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&u->fill, idx++) =
			(uint64_t)i * RR_FRAME_SIZE;
	xsk_ring_prod__submit(&u->fill, n);
	return 0;
}

/* Queue @q's workers get @n frames each, from the UMEM's last ones,
 * which the fill ring did not get. */
static void seed_stocks(struct rr_invoker *inv, uint32_t q, uint32_t n)
{
	uint64_t frame =
		(uint64_t)(RR_NUM_FRAMES - n * inv->nthreads) * RR_FRAME_SIZE;
	struct rr_worker *w;
	uint32_t t, i;

	for (t = 0; t < inv->nthreads && n; t++) {
		w = rr_worker_at(inv, q, t);
		for (i = 0; i < n; i++, frame += RR_FRAME_SIZE)
			w->rep->stock[i] = frame;
		w->rep->nstock = n;
		w->frames_held = n;
		w->rep->frames_held = n;
	}
}

/* libxdp's struct xsk_ring_prod and xsk_ring_cons have the same fields:
 * ring @r of @n entries mapped at @base, laid out as @off says. */
#define RING_INIT(r, n, base, off)                                    \
	do {                                                          \
		memset(&(r), 0, sizeof(r));                           \
		(r).mask = (n)-1;                                     \
		(r).size = (n);                                       \
		(r).producer = (uint32_t *)((base) + (off).producer); \
		(r).consumer = (uint32_t *)((base) + (off).consumer); \
		(r).flags = (uint32_t *)((base) + (off).flags);       \
		(r).ring = (base) + (off).desc;                       \
	} while (0)

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
	RING_INIT(u->fill, nfill, fill, off.fr);
	u->fill.cached_cons = nfill;
	RING_INIT(u->comp, ncomp, comp, off.cr);
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
static int create_umem(struct rr_invoker *inv, uint32_t q, uint32_t seed,
		       bool *tx_metadata, const char **why)
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
	ret = umem_fill_all(u, seed * inv->nthreads);
	if (ret)
		pr_warn("cannot put the %d frames of queue %u's UMEM in its fill ring\n",
			RR_NUM_FRAMES, q);
	else
		seed_stocks(inv, q, seed);
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

int rr_xsk_create_all(struct rr_invoker *inv, uint32_t stock)
{
	bool tx_metadata = inv->cfg->tx_csum != RR_TX_CSUM_SOFT;
	const char *why = "--tx-csum soft";
	char buf[128];
	uint32_t q, t, slot;
	struct rr_sock *s;
	int ret;

	for (q = 0; q < inv->nqueues; q++) {
		ret = create_umem(inv, q, stock, &tx_metadata, &why);
		if (ret)
			return ret;
		for (t = 0; t < inv->nthreads; t++) {
			for (slot = 0; slot < inv->nslots; slot++) {
				s = rr_sock_at(inv, q, t, slot);
				s->svc = inv->slots[slot].svc;
				s->slot = slot;
				ret = sock_create(inv, s, &inv->umems[q], q);
				if (ret) {
					libxdp_strerror(ret, buf, sizeof(buf));
					pr_warn("cannot create an AF_XDP socket on %s queue %u: %s\n",
						inv->cfg->ifname, q, buf);
					return ret;
				}
				ret = rr_xdp_set_socket(&inv->xdp, q, t, slot,
							s->fd);
				if (ret)
					return ret;
			}
		}
	}
	inv->threads_made = inv->nthreads;
	inv->zerocopy = sock_zerocopy(rr_sock_at(inv, 0, 0, 0)->fd);
	pr_info("%u AF_XDP sockets on %u queue%s, %s mode (the kernel's choice)\n",
		inv->nqueues * inv->nthreads * inv->nslots, inv->nqueues,
		inv->nqueues == 1 ? "" : "s",
		inv->zerocopy ? "zero-copy" : "copy");
	return choose_tx_csum(inv, tx_metadata, why);
}

/* Socket (q, t, slot) made while serving (a new thread or function), on the
 * queue's shared UMEM and as the others were made. */
int rr_xsk_later(struct rr_invoker *inv, uint32_t q, uint32_t t, uint32_t slot,
		 char *msg, size_t msglen)
{
	struct rr_sock *s = rr_sock_at(inv, q, t, slot);
	char buf[128];
	int ret;

	s->svc = inv->slots[slot].svc;
	s->slot = slot;
	ret = sock_create(inv, s, &inv->umems[q], q);
	if (ret) {
		libxdp_strerror(ret, buf, sizeof(buf));
		snprintf(msg, msglen,
			 "cannot create an AF_XDP socket on queue %u: %s", q,
			 buf);
		return ret;
	}
	if (inv->live->prefer_busy_poll)
		rr_busy_poll_sock(s->fd, true, inv->cfg->batch);
	return 0;
}

/* Socket (q, t, slot) into the XSKMAP: the XDP program may pick it now. */
int rr_xsk_map(struct rr_invoker *inv, uint32_t q, uint32_t t, uint32_t slot,
	       char *msg, size_t msglen)
{
	int ret = rr_xdp_set_socket(&inv->xdp, q, t, slot,
				    rr_sock_at(inv, q, t, slot)->fd);

	if (ret)
		snprintf(msg, msglen, "cannot put a socket into the XSKMAP: %s",
			 strerror(-ret));
	return ret;
}
