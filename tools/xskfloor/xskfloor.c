// SPDX-License-Identifier: GPL-2.0
/*
 * xskfloor: the floor of the AF_XDP path, for the benchmark. One AF_XDP
 * socket per RX queue (one thread for all) takes every UDP datagram for
 * one port and sends
 * it straight back with addresses and ports swapped, nothing else: no
 * parsing beyond the fixed offsets, no function, no checksum (swapping
 * both ends of each pair leaves IPv4's and UDP's checksums right). What
 * reqrouter costs per reply above this is ours; what this costs is the
 * kernel's (on veth, copy mode: a copy into the UMEM and an skb per
 * reply).
 *
 * Same rhythm as a reqrouter worker: a batch off RX, onto TX, a kick when
 * the kernel asks for one, completions back to the fill ring, poll() when
 * idle (or spin with -B). Stops on SIGINT/SIGTERM and detaches.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <netinet/in.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "config.h"
#include "log.h"
#include "opttable.h"
#include "packet.h"
#include "xskfloor.skel.h"

#define NUM_FRAMES 4096
#define FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define MAX_BATCH 256

enum { OPT_CPU = 256 };

static const struct rr_opt opts[] = {
	{ "iface", 'i', "IFACE", "interface to serve (required)" },
	{ "queues", 'q', "N", "serve RX queues 0..N-1, 1-64 (default 1)" },
	{ "port", 'p', "PORT", "UDP port answered (default 7)" },
	{ "batch", 'b', "N", "descriptors per batch, 1-256 (default 64)" },
	{ "cpu", OPT_CPU, "CPU", "pin to this CPU" },
	{ "busy-poll", 'B', NULL, "spin instead of sleeping in poll()" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ NULL, 0, NULL, NULL },
};

#define SYNOPSIS "xskfloor -i IFACE [-q N] [-p PORT] [-b N] [--cpu CPU] [-B]"
#define ABOUT                                                                \
	"Sends every UDP datagram for PORT on queues 0..N-1 straight back\n" \
	"over AF_XDP with addresses swapped: the floor of the AF_XDP path."
#define MAX_QUEUES 64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void swap(uint8_t *a, uint8_t *b, size_t n)
{
	uint8_t t[16];

	memcpy(t, a, n);
	memcpy(a, b, n);
	memcpy(b, t, n);
}

/*
 * Turns the request into the reply in place; 0, or -1 if it is not one
 * the program can have sent. A sender with checksum offload leaves its
 * UDP checksum partial, so the swapped one cannot be kept: over IPv4 the
 * reply says "no checksum" (0), the least any server can do; over IPv6,
 * where that is not allowed, it is computed in full.
 */
static int reflect(uint8_t *f, uint32_t len)
{
	struct rr_pkt pkt = { .l3_off = 14, .l4_off = 54, .family = AF_INET6 };
	uint32_t ulen;
	uint16_t csum;

	if (len < 14 + 20 + 8)
		return -1;
	swap(f, f + 6, 6);
	if (f[12] == 0x08 && f[13] == 0x00) {
		swap(f + 26, f + 30, 4);
		swap(f + 34, f + 36, 2);
		f[40] = f[41] = 0;
		return 0;
	}
	if (len < 14 + 40 + 8)
		return -1;
	ulen = (uint32_t)f[58] << 8 | f[59];
	if (ulen < 8 || pkt.l4_off + ulen > len)
		return -1;
	swap(f + 22, f + 38, 16);
	swap(f + 54, f + 56, 2);
	f[60] = f[61] = 0;
	csum = rr_udp_csum(f, &pkt);
	if (!csum)
		csum = 0xffff;
	memcpy(f + 60, &csum, 2);
	return 0;
}

struct floor {
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	void *area;
	uint64_t replies, kicks;
};

static int setup(struct floor *fl, const char *ifname, uint32_t queue,
		 uint32_t xdp_flags, int map_fd)
{
	struct xsk_umem_config ucfg = {
		.fill_size = NUM_FRAMES,
		.comp_size = NUM_FRAMES,
		.frame_size = FRAME_SIZE,
	};
	struct xsk_socket_config scfg = {
		.rx_size = 2048,
		.tx_size = 2048,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = xdp_flags,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	uint32_t idx, i;
	int ret, fd;

	fl->area = mmap(NULL, (size_t)NUM_FRAMES * FRAME_SIZE,
			PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (fl->area == MAP_FAILED) {
		fl->area = NULL;
		return -errno;
	}
	ret = xsk_umem__create(&fl->umem, fl->area,
			       (uint64_t)NUM_FRAMES * FRAME_SIZE, &fl->fill,
			       &fl->comp, &ucfg);
	if (ret)
		return ret;
	ret = xsk_socket__create(&fl->xsk, ifname, queue, fl->umem, &fl->rx,
				 &fl->tx, &scfg);
	if (ret)
		return ret;
	fd = xsk_socket__fd(fl->xsk);
	if (bpf_map_update_elem(map_fd, &queue, &fd, 0))
		return -errno;
	if (xsk_ring_prod__reserve(&fl->fill, NUM_FRAMES, &idx) != NUM_FRAMES)
		return -ENOSPC;
	for (i = 0; i < NUM_FRAMES; i++)
		*xsk_ring_prod__fill_addr(&fl->fill, idx++) =
			(uint64_t)i * FRAME_SIZE;
	xsk_ring_prod__submit(&fl->fill, NUM_FRAMES);
	return 0;
}

/* Copy-mode sendto() moves at most 32 frames and says EAGAIN while more
 * wait; EBUSY, ENOBUFS and ENETDOWN are backpressure, retried later. */
static void kick(struct floor *fl)
{
	int i;

	for (i = 0; i < MAX_BATCH / 32 + 1; i++)
		if (sendto(xsk_socket__fd(fl->xsk), NULL, 0, MSG_DONTWAIT, NULL,
			   0) >= 0 ||
		    errno != EAGAIN)
			break;
	fl->kicks++;
}

/* One round on one socket; returns the requests taken. */
static uint32_t round_one(struct floor *fl, uint32_t batch)
{
	uint32_t idx_rx, idx_tx, idx_c, idx_f, n, i, m;
	const struct xdp_desc *rd;
	struct xdp_desc *td;
	uint64_t addr;

	n = xsk_prod_nb_free(&fl->tx, batch);
	n = xsk_ring_cons__peek(&fl->rx, n < batch ? n : batch, &idx_rx);
	if (n && xsk_ring_prod__reserve(&fl->tx, n, &idx_tx) == n) {
		for (i = 0; i < n; i++) {
			rd = xsk_ring_cons__rx_desc(&fl->rx, idx_rx + i);
			td = xsk_ring_prod__tx_desc(&fl->tx, idx_tx + i);
			reflect(xsk_umem__get_data(fl->area, rd->addr),
				rd->len);
			*td = *rd;
		}
		xsk_ring_cons__release(&fl->rx, n);
		xsk_ring_prod__submit(&fl->tx, n);
		fl->replies += n;
	} else if (n) {
		xsk_ring_cons__cancel(&fl->rx, n);
		n = 0;
	}
	if (xsk_ring_prod__needs_wakeup(&fl->tx))
		kick(fl);
	/* The fill ring holds every frame: this never lacks room. */
	m = xsk_ring_cons__peek(&fl->comp, NUM_FRAMES, &idx_c);
	if (m && xsk_ring_prod__reserve(&fl->fill, m, &idx_f) == m) {
		for (i = 0; i < m; i++) {
			addr = *xsk_ring_cons__comp_addr(&fl->comp, idx_c + i);
			*xsk_ring_prod__fill_addr(&fl->fill, idx_f + i) =
				addr & ~(uint64_t)(FRAME_SIZE - 1);
		}
		xsk_ring_prod__submit(&fl->fill, m);
		xsk_ring_cons__release(&fl->comp, m);
	} else if (m) {
		xsk_ring_cons__cancel(&fl->comp, m);
	}
	return n;
}

static void run(struct floor *fls, uint32_t nq, uint32_t batch, bool busy)
{
	struct pollfd pfd[MAX_QUEUES];
	uint32_t q, work;
	int timeout;

	for (q = 0; q < nq; q++) {
		pfd[q].fd = xsk_socket__fd(fls[q].xsk);
		pfd[q].events = POLLIN;
	}
	while (!stop) {
		work = 0;
		timeout = 100;
		for (q = 0; q < nq; q++) {
			work += round_one(&fls[q], batch);
			if (xsk_prod_nb_free(&fls[q].tx, 2048) < 2048)
				timeout = 1; /* completions due */
		}
		if (work)
			continue;
		if (busy)
			sched_yield();
		else
			poll(pfd, nq, timeout);
	}
}

/* What the command line asks for. */
struct floor_opts {
	const char *ifname;
	unsigned long nq, port, batch;
	int cpu; /* -1: not pinned */
	bool busy;
};

/* A number option: --queues, --port, --batch or --cpu. */
static int number_opt(struct floor_opts *o, int c, const char *arg)
{
	unsigned long lo = c == OPT_CPU ? 0 : 1, v;
	unsigned long hi = c == 'q'   ? MAX_QUEUES
			   : c == 'p' ? 65535
			   : c == 'b' ? MAX_BATCH
				      : CPU_SETSIZE - 1;

	if (rr_parse_ulong(arg, lo, hi, &v)) {
		pr_warn("--%s needs a number %lu-%lu, not '%s'\n",
			c == 'q'   ? "queues"
			: c == 'p' ? "port"
			: c == 'b' ? "batch"
				   : "cpu",
			lo, hi, arg);
		return 2;
	}
	if (c == 'q')
		o->nq = v;
	else if (c == 'p')
		o->port = v;
	else if (c == 'b')
		o->batch = v;
	else
		o->cpu = (int)v;
	return 0;
}

/* One option of the table. */
static int apply(int key, const char *arg, void *ctx)
{
	struct floor_opts *o = ctx;

	switch (key) {
	case 'i':
		o->ifname = arg;
		return 0;
	case 'B':
		o->busy = true;
		return 0;
	default: /* --queues, --port, --batch, --cpu */
		return number_opt(o, key, arg);
	}
}

/* Pins the process to @cpu (if >= 0). */
static int pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		pr_warn("cannot pin to CPU %d: %s\n", cpu, strerror(errno));
		return -errno;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct rr_opt_prog prog = { "xskfloor", SYNOPSIS, ABOUT,
						 opts };
	struct floor_opts o = { .nq = 1, .port = 7, .batch = 64, .cpu = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	uint32_t flags = XDP_FLAGS_DRV_MODE;
	struct xskfloor *skel = NULL;
	static struct floor fls[MAX_QUEUES];
	uint64_t replies = 0, kicks = 0;
	int ifindex, err, ret = 1;
	bool attached = false;
	uint32_t q;

	rr_log_set_prog("xskfloor");
	ifindex = rr_opt_parse_iface(&prog, argc, argv, apply, &o, &o.ifname);
	if (!ifindex)
		return 2;
	if (pin(o.cpu))
		return 1;

	skel = xskfloor__open();
	if (!skel) {
		pr_warn("cannot open the BPF object\n");
		return 1;
	}
	skel->rodata->port = htons((uint16_t)o.port);
	err = xskfloor__load(skel);
	if (err) {
		pr_warn("cannot load the XDP program: %s\n", strerror(-err));
		goto out;
	}
	err = bpf_xdp_attach(ifindex,
			     bpf_program__fd(skel->progs.floor_redirect),
			     flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		pr_warn("cannot attach to %s: %s\n", o.ifname, strerror(-err));
		goto out;
	}
	attached = true;
	for (q = 0; q < o.nq; q++) {
		err = setup(&fls[q], o.ifname, q, flags,
			    bpf_map__fd(skel->maps.xsks));
		if (err) {
			pr_warn("cannot set up the socket on queue %u: %s\n", q,
				strerror(-err));
			goto out;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pr_info("port %lu on %s queues 0-%lu, %s, ready\n", o.port, o.ifname,
		o.nq - 1, o.busy ? "spinning" : "sleeping in poll()");
	run(fls, (uint32_t)o.nq, (uint32_t)o.batch, o.busy);
	for (q = 0; q < o.nq; q++) {
		replies += fls[q].replies;
		kicks += fls[q].kicks;
	}
	pr_info("%lu replies, %lu kicks\n", (unsigned long)replies,
		(unsigned long)kicks);
	ret = 0;
out:
	if (attached)
		bpf_xdp_detach(ifindex, flags, NULL);
	for (q = 0; q < o.nq; q++) {
		xsk_socket__delete(fls[q].xsk);
		xsk_umem__delete(fls[q].umem);
		if (fls[q].area)
			munmap(fls[q].area, (size_t)NUM_FRAMES * FRAME_SIZE);
	}
	xskfloor__destroy(skel);
	return ret;
}
