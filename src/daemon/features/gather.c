// SPDX-License-Identifier: GPL-2.0
/*
 * Gathers, the worker's side (docs/DESIGN.md, "Gathers").
 *
 * A worker owns RR_SG_PER_WORKER entries of the XDP program's gathers
 * map (mapped here; its index is worker index * RR_SG_PER_WORKER + i)
 * and a UDP socket, its gather port, from which its messages leave and
 * to which the targets answer. Starting a gather opens an entry under a
 * new generation and sends a copy to each target: built in a UMEM frame
 * and put on the function's AF_XDP TX ring once the XDP program learned
 * the way to the target (gather_scatter = umem), else through the
 * socket, 64 to a sendmmsg() (or, with gather_scatter = tc, one
 * template that the scatter program at TC egress turns into the
 * copies). The replies never reach the
 * stack: the XDP program checks and merges them into the entry, and
 * hands the last one (every one, for CONCAT) to the worker's socket of
 * the function if the worker sleeps, to wake it. The request's frame
 * stays in the worker's hands meanwhile; completing the gather writes
 * the reply over it and sends it as any other.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "clock.h"
#include "frame.h"
#include "gather.h"
#include "invoker.h"
#include "log.h"
#include "packet.h"

/* How long completing waits for merges that took their ticket before it
 * closed the gather: a merge is a few atomics in softirq. */
#define CLOSE_SPIN_NS 100000ULL

static uint64_t load64(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static uint32_t load32(const __u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

bool rr_gather_needed(const struct rr_invoker *inv)
{
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++)
		if (inv->slots[slot].svc->fn->flags & RR_FN_GATHER)
			return true;
	return false;
}

/*
 * With gather_scatter = umem, the frames each worker starts its stock
 * with (worker.c, rr_stock_take()): taken from completions alone, a stock
 * fills only as fast as replies are sent, and a first gather would find
 * it empty. A quarter of the UMEM at most, shared by the threads.
 */
uint32_t rr_gather_stock_seed(const struct rr_invoker *inv)
{
	uint32_t n = RR_NUM_FRAMES / 4 / inv->nthreads;

	if (inv->cfg->gather_scatter != RR_SCATTER_UMEM ||
	    !rr_gather_needed(inv))
		return 0;
	return n < RR_SG_STOCK ? n : RR_SG_STOCK;
}

bool rr_gather_open_notice(const struct rr_config *cfg,
			   const struct rr_service *svc)
{
	char rate[48], source[48];
	uint32_t i, most = 0;

	if (!(svc->fn->flags & RR_FN_GATHER) || svc->nallow)
		return false;
	for (i = 0; i < cfg->ngroups; i++)
		if (cfg->groups[i].ntargets > most)
			most = cfg->groups[i].ntargets;
	if (svc->gather_rate)
		snprintf(rate, sizeof(rate), "%u copies/s", svc->gather_rate);
	else
		snprintf(rate, sizeof(rate), "nothing (gather_rate = 0)");
	if (svc->gather_source_rate)
		snprintf(source, sizeof(source), "%u copies/s",
			 svc->gather_source_rate);
	else
		snprintf(source, sizeof(source),
			 "nothing (gather_source_rate = 0)");
	pr_warn("'%s' gathers and has no allow-list: a request from any source, spoofed or not, makes it send a copy to every target it asks, up to %u (the config's largest group), each the request's payload and 16 bytes; what bounds them is gather_rate, %s, and gather_source_rate, %s for one source prefix. Give it allow in [function %s]%s%s\n",
		svc->fn->name, most, rate, source, svc->fn->name,
		cfg->config_file[0] ? " of " : "", cfg->config_file);
	return true;
}

int rr_gather_setup(struct rr_invoker *inv)
{
	const struct rr_config *cfg = inv->cfg;
	uint32_t i;
	int ret;

	ret = rr_xdp_map_gathers(&inv->xdp);
	if (ret) {
		pr_warn("cannot map the gathers: %s\n", strerror(-ret));
		return ret;
	}
	for (i = 0; i < cfg->ngroups; i++) {
		ret = rr_xdp_set_targets(&inv->xdp, i, cfg->groups[i].targets,
					 cfg->groups[i].ntargets);
		if (ret) {
			pr_warn("cannot set group %s's targets: %s\n",
				cfg->groups[i].name, strerror(-ret));
			return ret;
		}
	}
	if (cfg->gather_scatter == RR_SCATTER_SOCKET) {
		pr_info("gathers: each copy sent through its worker's socket (gather_scatter = socket)\n");
		return 0;
	}
	if (cfg->gather_scatter == RR_SCATTER_UMEM) {
		pr_info("gathers: each copy built in the UMEM and sent from the function's AF_XDP socket, once its target answered; before that through the worker's socket (gather_scatter = umem)\n");
		return 0;
	}
	ret = rr_xdp_attach_scatter(&inv->xdp, inv->ifindex);
	if (ret) {
		pr_warn("cannot put the scatter program on %s's egress (TC): %s (gather_scatter = socket does without)\n",
			cfg->ifname, strerror(-ret));
		return ret;
	}
	pr_info("gathers: the scatter program is on %s's egress (TC)\n",
		cfg->ifname);
	return 0;
}

void rr_gather_teardown(struct rr_invoker *inv)
{
	rr_xdp_detach_scatter(&inv->xdp, inv->ifindex);
}

void rr_gathers_free(struct rr_invoker *inv)
{
	struct rr_gathers *gs;
	uint32_t i;

	for (i = 0; inv->workers && i < RR_NWORKERS(inv); i++) {
		gs = inv->workers[i].gathers;
		if (!gs)
			continue;
		close(gs->fd);
		free(gs);
		inv->workers[i].gathers = NULL;
	}
}

static int start(struct rr_gather_ctx *ctx, const struct rr_request *req,
		 const struct rr_gather_spec *spec);

const struct rr_worker *rr_gather_port_owner(const struct rr_invoker *inv,
					     uint16_t port)
{
	uint32_t i;

	for (i = 0; inv->workers && i < RR_NWORKERS(inv); i++)
		if (inv->workers[i].gathers &&
		    inv->workers[i].gathers->port == port)
			return &inv->workers[i];
	return NULL;
}

/* Whether a function is served on UDP port @port. */
static bool function_port(const struct rr_invoker *inv, uint16_t port)
{
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++)
		if (inv->slots[slot].svc->port == port)
			return true;
	return false;
}

/*
 * A dual-stack UDP socket on an ephemeral port, the worker's gather
 * port: not one a function is served on (the kernel knows nothing of
 * those), which its port_map entry would take over. Its fd, or -errno.
 */
static int gather_socket(const struct rr_invoker *inv, uint16_t *port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	socklen_t salen = sizeof(sa);
	int fd, off = 0, rcvbuf = 1 << 18, tries, ret = -EADDRINUSE;

	for (tries = 0; tries < 16; tries++) {
		/* A message to an IPv4 target leaves as IPv4. The XDP
		 * program takes every reply but a concatenation's that
		 * came in on another queue than the worker's. */
		fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    0);
		sa.sin6_port = 0;
		if (fd < 0 ||
		    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off,
			       sizeof(off)) ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			       sizeof(rcvbuf)) ||
		    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    getsockname(fd, (struct sockaddr *)&sa, &salen)) {
			ret = -errno;
			if (fd >= 0)
				close(fd);
			return ret;
		}
		*port = ntohs(sa.sin6_port);
		if (!function_port(inv, *port))
			return fd;
		close(fd);
	}
	return ret;
}

int rr_gathers_new(struct rr_worker *w)
{
	struct rr_invoker *inv = w->inv;
	struct rr_port_conf conf = {
		.nsocks = 1,
		.flags = RR_PORT_GATHER,
	};
	struct rr_gathers *gs;
	uint16_t port = 0;
	uint64_t seed;
	int fd, ret;

	if (w->gathers)
		return 0;
	gs = calloc(1, sizeof(*gs));
	if (!gs)
		return -ENOMEM;
	fd = gather_socket(inv, &port);
	if (fd < 0) {
		pr_warn("worker %u/%u: cannot open its gather socket: %s\n",
			w->queue, w->thread, strerror(-fd));
		free(gs);
		return fd;
	}
	if (getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		seed = rr_now_ns() * 0x9e3779b97f4a7c15ULL;
	rr_sg_budget_init(&gs->budget, seed);
	gs->ctx.start = start;
	gs->w = w;
	gs->fd = fd;
	gs->port = port;
	gs->first = w->index * RR_SG_PER_WORKER;
	gs->entries = &inv->xdp.gathers[gs->first];
	/* What is not for the host's own addresses goes on to the kernel,
	 * as for a function's port. */
	if (inv->cfg->answer_for == RR_ANSWER_LOCAL)
		conf.flags |= RR_PORT_LOCAL_DST;
	ret = rr_xdp_set_port(&inv->xdp, gs->port, &conf);
	if (ret) {
		pr_warn("worker %u/%u: cannot open its gather port %u: %s\n",
			w->queue, w->thread, gs->port, strerror(-ret));
		close(fd);
		free(gs);
		return ret;
	}
	w->gathers = gs;
	return 0;
}

int rr_gathers_confine(struct rr_worker *w)
{
	struct rr_invoker *inv = w->inv;
	struct rr_gathers *gs = w->gathers, *o;
	size_t own, end,
		len = sizeof(struct rr_gather_entry) * RR_SG_PER_WORKER;
	uint8_t *base = (uint8_t *)inv->xdp.gathers;
	uint32_t i;

	if (!gs)
		return 0;
	for (i = 0; i < RR_NWORKERS(inv); i++) {
		o = inv->workers[i].gathers;
		if (o && o != gs)
			close(o->fd);
	}
	if (gs->fd != RR_SG_CELL_FD) {
		if (dup2(gs->fd, RR_SG_CELL_FD) < 0)
			return -errno;
		close(gs->fd);
		gs->fd = RR_SG_CELL_FD;
	}
	/* Its entries fill whole pages (xdp.c), the others go. */
	own = (size_t)gs->first * sizeof(struct rr_gather_entry);
	end = own + len;
	if ((own && munmap(base, own)) ||
	    (end < inv->xdp.gathers_size &&
	     munmap(base + end, inv->xdp.gathers_size - end)))
		return -errno;
	return 0;
}

/* Closes entry @e: no later reply counts. Returns the tickets taken. */
static uint32_t close_entry(struct rr_gather_entry *e)
{
	uint64_t old =
		__atomic_fetch_add(&e->state, RR_SG_CLOSED, __ATOMIC_ACQ_REL);

	return (uint32_t)old & (RR_SG_CLOSED - 1);
}

/*
 * A new generation for an entry whose last one was @old: random (see
 * struct rr_gathers), never @old, so that a late reply to the entry's
 * last use never counts in the next. Without getrandom() (it does not
 * fail once the kernel's generator is up) the clock's bits, mixed.
 */
static uint32_t next_gen(struct rr_gathers *gs, uint32_t old)
{
	uint64_t x;
	uint32_t gen;

	do {
		if (!gs->ngens) {
			if (getrandom(gs->gens, sizeof(gs->gens), 0) ==
			    (ssize_t)sizeof(gs->gens)) {
				gs->ngens = RR_SG_GENS;
			} else {
				x = rr_now_ns() * 0x9e3779b97f4a7c15ULL;
				gs->gens[0] = (uint32_t)(x >> 32) ^ old;
				gs->ngens = 1;
			}
		}
		gen = gs->gens[--gs->ngens];
	} while (gen == old);
	return gen;
}

void rr_gathers_reset(struct rr_worker *w)
{
	struct rr_gathers *gs = w->gathers;
	struct rr_gather_entry *e;
	uint32_t i, gen;

	if (!gs)
		return;
	gs->outstanding = 0;
	gs->concats = 0;
	memset(gs->per_slot, 0, sizeof(gs->per_slot));
	for (i = 0; i < RR_SG_PER_WORKER; i++) {
		e = &gs->entries[i];
		/* Another generation than the last one used, closed: a
		 * late reply to a dead cell's gather never matches again. */
		gen = next_gen(gs, (uint32_t)(load64(&e->state) >> 32));
		__atomic_store_n(&e->state, (uint64_t)gen << 32 | RR_SG_CLOSED,
				 __ATOMIC_RELEASE);
		gs->g[i].busy = false;
		gs->g[i].gen = gen;
	}
	rr_gathers_awake(w);
}

static bool asked(const __u64 *bits, uint32_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

/* @t's address, as the dual-stack gather socket takes it. */
static void target_addr(const struct rr_endpoint *t, struct sockaddr_in6 *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin6_family = AF_INET6;
	sa->sin6_port = htons(t->port);
	if (t->family == AF_INET6) {
		memcpy(&sa->sin6_addr, t->addr, 16);
	} else {
		sa->sin6_addr.s6_addr[10] = 0xff;
		sa->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&sa->sin6_addr.s6_addr[12], t->addr, 4);
	}
}

/* The scatter template: gather @g's message to @t, where the scatter
 * program picks it up. */
static void send_template(struct rr_gathers *gs, struct rr_gather_slot *g,
			  const struct rr_endpoint *t)
{
	struct rr_sg_hdr *h = (void *)g->msg;
	struct sockaddr_in6 sa;

	h->target = htons(RR_SG_TARGET_TEMPLATE);
	target_addr(t, &sa);
	sendto(gs->fd, g->msg, g->msg_len, MSG_DONTWAIT, (struct sockaddr *)&sa,
	       sizeof(sa));
}

/* Copy @n of a batch: header @h for target @i (@t), then @len bytes. */
static void put_copy(struct rr_sg_send *b, uint32_t n,
		     const struct rr_sg_hdr *h, uint32_t i,
		     const struct rr_endpoint *t, const void *data, size_t len)
{
	b->hdr[n] = *h;
	b->hdr[n].target = htons((uint16_t)i);
	target_addr(t, &b->sa[n]);
	b->iov[n][0].iov_base = &b->hdr[n];
	b->iov[n][0].iov_len = sizeof(*h);
	b->iov[n][1].iov_base = (void *)data;
	b->iov[n][1].iov_len = len;
	memset(&b->mmsg[n], 0, sizeof(b->mmsg[n]));
	b->mmsg[n].msg_hdr.msg_name = &b->sa[n];
	b->mmsg[n].msg_hdr.msg_namelen = sizeof(b->sa[n]);
	b->mmsg[n].msg_hdr.msg_iov = b->iov[n];
	b->mmsg[n].msg_hdr.msg_iovlen = 2;
}

/* The batch's @n copies, in one sendmmsg(). A datagram the socket
 * refuses (a route, a full buffer) is skipped, not retried: its target
 * misses; the ones after it go in a second call. */
static void send_copies(struct rr_gathers *gs, uint32_t n)
{
	int sent = sendmmsg(gs->fd, gs->send.mmsg, n, MSG_DONTWAIT);

	if (sent >= 0 && (uint32_t)sent + 1 < n)
		sendmmsg(gs->fd, gs->send.mmsg + sent + 1,
			 n - (uint32_t)sent - 1, MSG_DONTWAIT);
}

/* The copies built in the UMEM so far, onto the TX ring of the socket
 * of the function being served, and sent. */
static void flush_umem(struct rr_gathers *gs)
{
	struct rr_worker *w = gs->w;
	struct rr_sock *s = &w->socks[gs->cur_slot];

	if (!gs->ncopies)
		return;
	rr_stat_add(&s->stats->gather_umem,
		    rr_tx_copies(w, s, gs->copies, gs->ncopies));
	gs->ncopies = 0;
}

/* Where a copy starts in its frame: the room in front an RX frame has. */
#define COPY_HEADROOM 256

/* A frame of @kind the worker sends for a captured request of slot @slot
 * (its gather's copy, its gathered reply), @len bytes at @data, into the
 * worker's capture ring (capture.h). */
static void capture_frame(struct rr_worker *w, uint16_t kind, uint32_t slot,
			  const uint8_t *data, uint32_t len)
{
	rr_capture_wframe(
		&w->rep->capture, kind, RR_MARK_CAPTURE, (uint16_t)w->queue,
		(uint16_t)w->thread, (uint16_t)slot, data, len,
		__atomic_load_n(&w->inv->live->capture_snap, __ATOMIC_RELAXED),
		rr_now_ns());
}

/*
 * gather_scatter = umem: a copy of header @h and @len bytes for target
 * @i of group @group (@t), built in a frame of the worker's stock and
 * queued for the TX ring of the function's socket. Only once the XDP
 * program learned the way to @t from a reply of it (sg_paths), while
 * the stock has a frame and the ring room beside a batch's replies: it
 * returns false otherwise, and the copy goes through the stack.
 */
static bool umem_copy(struct rr_gathers *gs, uint32_t group, uint32_t i,
		      const struct rr_endpoint *t, const struct rr_sg_hdr *h,
		      const void *data, size_t len)
{
	struct rr_worker *w = gs->w;
	const struct rr_sg_path *p;
	struct rr_udp_ends e;
	struct rr_sg_hdr *ch;
	uint64_t hw, own_hw, frame;
	uint8_t *f;
	int b;

	if (!w->stock_want || !w->inv->xdp.sg_paths ||
	    asked(gs->stale[group % RR_SG_MAX_GROUPS], i))
		return false;
	p = &w->inv->xdp.sg_paths[group * RR_SG_MAX_TARGETS + i];
	hw = __atomic_load_n(&p->hw, __ATOMIC_RELAXED);
	own_hw = __atomic_load_n(&p->own_hw, __ATOMIC_RELAXED);
	if (!(hw & own_hw & RR_SG_PATH_VALID) ||
	    p->ifindex != (uint32_t)w->inv->ifindex ||
	    xsk_prod_nb_free(&w->socks[gs->cur_slot].tx,
			     gs->ncopies + 1 + RR_MAX_BATCH) <=
		    gs->ncopies + RR_MAX_BATCH)
		return false;
	if (!rr_stock_take(w, &frame))
		return false;
	e.family = t->family;
	for (b = 0; b < 6; b++) {
		e.dst_hw[b] = (uint8_t)(hw >> (40 - 8 * b));
		e.src_hw[b] = (uint8_t)(own_hw >> (40 - 8 * b));
	}
	memcpy(e.saddr, p->own_addr, 16);
	memcpy(e.daddr, t->addr, 16);
	e.sport = gs->port;
	e.dport = t->port;
	f = xsk_umem__get_data(w->umem->area, frame + COPY_HEADROOM);
	ch = (void *)(f + rr_udp_payload_off(t->family));
	*ch = *h;
	ch->target = htons((uint16_t)i);
	if (len)
		memcpy(ch + 1, data, len);
	gs->copies[gs->ncopies].addr = frame + COPY_HEADROOM;
	gs->copies[gs->ncopies].len =
		rr_build_udp(f, &e, (uint32_t)(sizeof(*h) + len));
	gs->copies[gs->ncopies].options = 0;
	/* Sent past the kernel's stack: a capture has it from here. */
	if (gs->cur_mark & RR_MARK_CAPTURE)
		capture_frame(w, RR_CAPTURE_COPY, gs->cur_slot, f,
			      gs->copies[gs->ncopies].len);
	if (++gs->ncopies == RR_SG_SEND_BATCH)
		flush_umem(gs);
	return true;
}

/* A copy for target @i of group @group (@t): in the UMEM where it can
 * be, else onto the socket's batch (@n so far), sent when full. */
static uint32_t scatter_one(struct rr_gathers *gs, uint32_t n, uint32_t group,
			    uint32_t i, const struct rr_endpoint *t,
			    const struct rr_sg_hdr *h, const void *data,
			    size_t len)
{
	if (umem_copy(gs, group, i, t, h, data, len))
		return n;
	put_copy(&gs->send, n++, h, i, t, data, len);
	if (n < RR_SG_SEND_BATCH)
		return n;
	send_copies(gs, n);
	return 0;
}

/*
 * Gather @g's message to each target of group @group (@grp) in @bits,
 * each its own header (the target's index) in front of the one payload:
 * built in the UMEM (gather_scatter = umem) or through the stack,
 * RR_SG_SEND_BATCH to a sendmmsg().
 */
static void send_each(struct rr_gathers *gs, struct rr_gather_slot *g,
		      uint32_t group, const struct rr_sg_group *grp,
		      const __u64 *bits)
{
	const struct rr_sg_hdr *h = (void *)g->msg;
	uint32_t i, n = 0;

	for (i = 0; i < grp->ntargets; i++)
		if (asked(bits, i))
			n = scatter_one(gs, n, group, i, &grp->targets[i], h,
					g->msg + sizeof(*h),
					g->msg_len - sizeof(*h));
	if (n)
		send_copies(gs, n);
	flush_umem(gs);
}

/* The same with a payload each: spec->payloads[k] to the k-th of the
 * @asked targets @spec asks. */
static void send_payloads(struct rr_gathers *gs, struct rr_gather_slot *g,
			  const struct rr_sg_group *grp,
			  const struct rr_gather_spec *spec, uint32_t asked)
{
	const struct rr_sg_hdr *h = (void *)g->msg;
	uint32_t k, i, n = 0;

	for (k = 0; k < asked; k++) {
		i = spec->targets ? spec->targets[k] : k;
		n = scatter_one(gs, n, (uint32_t)spec->group, i,
				&grp->targets[i], h, spec->payloads[k].data,
				spec->payloads[k].len);
	}
	if (n)
		send_copies(gs, n);
	flush_umem(gs);
}

static int start(struct rr_gather_ctx *ctx, const struct rr_request *req,
		 const struct rr_gather_spec *spec)
{
	struct rr_gathers *gs = (struct rr_gathers *)ctx;
	struct rr_worker *w = gs->w;
	const struct rr_config *cfg = w->inv->cfg;
	const struct rr_slot *s = &w->inv->slots[gs->cur_slot];
	const struct rr_sg_group *grp;
	struct rr_gather_entry *e;
	struct rr_gather_slot *g;
	struct rr_sg_hdr *h;
	uint32_t i, n = 0, last = 0, limit;
	bool in_call;

	/* One gather per request: a second would keep its frame twice. */
	if (ctx->started)
		return -EALREADY;
	if (spec->group < 0 || (uint32_t)spec->group >= cfg->ngroups ||
	    spec->len > RR_SG_MAX_PAYLOAD || spec->reduce >= RR_REDUCE_MAX_OP ||
	    spec->cookie_len > RR_SG_COOKIE_MAX ||
	    (spec->reduce == RR_REDUCE_TOPK && (spec->k < 1 || spec->k > 16)))
		return -EINVAL;
	grp = &cfg->groups[spec->group];
	/* Each payload its target's: as many as asked, each in bounds. */
	if (spec->payloads) {
		n = spec->targets ? spec->ntargets : grp->ntargets;
		for (i = 0; i < n; i++)
			if (spec->payloads[i].len > RR_SG_MAX_PAYLOAD ||
			    (spec->payloads[i].len && !spec->payloads[i].data))
				return -EINVAL;
	}
	limit = s->svc->gather_limit;
	for (i = 0; i < RR_SG_PER_WORKER && gs->g[i].busy; i++)
		;
	if (gs->per_slot[gs->cur_slot] >= limit || i == RR_SG_PER_WORKER) {
		ctx->refused = RR_DROP_GATHER_LIMIT;
		return -EBUSY;
	}
	g = &gs->g[i];
	e = &gs->entries[i];

	/* A new generation, closed while it is laid out. */
	g->gen = next_gen(gs, g->gen);
	__atomic_store_n(&e->state, (uint64_t)g->gen << 32 | RR_SG_CLOSED,
			 __ATOMIC_RELEASE);
	memset(e->sent, 0, sizeof(e->sent));
	if (spec->targets) {
		for (n = 0; n < spec->ntargets; n++) {
			if (spec->targets[n] >= grp->ntargets)
				return -EINVAL;
			/* Asked twice: one reply would count for both. */
			if (spec->payloads &&
			    e->sent[spec->targets[n] / 64] >>
					    (spec->targets[n] % 64) &
				    1)
				return -EINVAL;
			e->sent[spec->targets[n] / 64] |=
				1ULL << (spec->targets[n] % 64);
		}
	} else {
		for (n = 0; n < grp->ntargets; n++)
			e->sent[n / 64] |= 1ULL << (n % 64);
	}
	/* How many, and the last: a word at a time. */
	n = 0;
	for (i = 0; i < RR_SG_WORDS; i++) {
		if (!e->sent[i])
			continue;
		n += (uint32_t)__builtin_popcountll(e->sent[i]);
		last = i * 64 + 63 - (uint32_t)__builtin_clzll(e->sent[i]);
	}
	if (!n || spec->need > n)
		return -EINVAL;
	/* Its copies against the function's budgets, this worker's share
	 * (the workers serving now): a refused request is dropped. */
	ctx->refused = rr_sg_budget_take(
		&gs->budget, s->svc, gs->cur_slot, req, n,
		w->inv->nqueues * __atomic_load_n(&w->inv->group_threads,
						  __ATOMIC_RELAXED),
		rr_now_ns());
	if (ctx->refused)
		return -EBUSY;
	i = (uint32_t)(g - gs->g);
	e->merged = 0;
	e->need = spec->need ? spec->need : n;
	e->reduce = spec->reduce;
	e->group = (uint32_t)spec->group;
	e->slot = gs->cur_slot;
	e->value = spec->reduce == RR_REDUCE_MIN ? UINT64_MAX : 0;
	memset(e->topk, 0, sizeof(e->topk));
	e->scattered = 0;
	memset(e->seen, 0, sizeof(e->seen));
	memset(e->merged_bits, 0, sizeof(e->merged_bits));
	memset(e->unsent, 0, sizeof(e->unsent));
	/* Open: tickets from 0, under the new generation. */
	__atomic_store_n(&e->state, (uint64_t)g->gen << 32, __ATOMIC_RELEASE);

	g->busy = true;
	g->slot = gs->cur_slot;
	g->fn = s->svc->fn;
	g->addr = gs->cur_addr;
	g->len = gs->cur_len;
	g->mark = gs->cur_mark & RR_MARK_CAPTURE;
	g->asked = n;
	g->k = spec->k;
	g->reduce = spec->reduce;
	g->cookie_len = (uint32_t)spec->cookie_len;
	if (spec->cookie_len)
		memcpy(g->cookie, spec->cookie, spec->cookie_len);
	rr_stat_add(&w->socks[gs->cur_slot].stats->gathers, 1);
	g->concat_len = 0;
	g->parts = 0;
	memset(g->got, 0, sizeof(g->got));
	gs->outstanding++;
	if (spec->reduce == RR_REDUCE_CONCAT)
		gs->concats++;
	gs->per_slot[gs->cur_slot]++;

	rr_gather_held(w, i, gs->cur_addr);
	ctx->started = true;
	h = (void *)g->msg;
	h->magic = htonl(RR_SG_MAGIC);
	h->gather = htonl(gs->first + i);
	h->gen = htonl(g->gen);
	h->flags = 0;
	if (spec->len)
		memcpy(g->msg + sizeof(*h), spec->payload, spec->len);
	g->msg_len = (uint32_t)(sizeof(*h) + spec->len);
	/*
	 * The copies are reqrouter's work, not the function's: they leave
	 * outside its timed call (max_run_us), which goes on as a new call
	 * after. A group's first copies go through the stack, neighbour
	 * resolution and, on a veth, the targets' receive work included,
	 * all on this CPU: 1022 cold IPv6 targets cost 10 to 25 ms of CPU,
	 * past the default max_run_us (10 ms), and the cell was killed.
	 */
	in_call = w->call_seq & 1;
	if (in_call)
		rr_call_step(w);
	if (spec->payloads) {
		/* One template cannot carry them: through the socket. */
		g->msg_len = sizeof(*h);
		send_payloads(gs, g, grp, spec,
			      spec->targets ? spec->ntargets : grp->ntargets);
	} else if (w->inv->xdp.scatter_attached) {
		/* One template: the scatter program sends the copies, the
		 * template itself to the last target, where it is aimed. */
		g->unsent = true;
		send_template(gs, g, &grp->targets[last]);
	} else {
		send_each(gs, g, e->group, grp, e->sent);
	}
	if (in_call)
		rr_call_step(w);
	/* From the last copy: a long scatter does not eat the targets'
	 * time to answer. */
	g->deadline_ns =
		rr_now_ns() + (uint64_t)(spec->deadline_us
						 ? spec->deadline_us
						 : s->svc->gather_deadline_us) *
				      1000;
	return RR_GATHER_PENDING;
}

/*
 * The copies the scatter program could not make (no neighbour entry yet
 * for a target's next hop, a device that refused), once it has run:
 * sent through the stack.
 */
static void send_unsent(struct rr_gathers *gs, struct rr_gather_slot *g,
			struct rr_gather_entry *e)
{
	const struct rr_sg_group *grp = &gs->w->inv->cfg->groups[e->group];
	__u64 unsent[RR_SG_WORDS];

	if (!load32(&e->scattered))
		return;
	g->unsent = false;
	memcpy(unsent, e->unsent, sizeof(unsent));
	send_each(gs, g, e->group, grp, unsent);
}

void rr_gather_held(struct rr_worker *w, uint32_t i, uint64_t addr)
{
	__atomic_store_n(&w->rep->gather_frames[i], addr, __ATOMIC_RELEASE);
}

/* A concatenation's reply, header @h and @blen bytes of body after it:
 * taken in, if its gather is still the one it answers. */
static void take_part(struct rr_gathers *gs, const struct rr_sg_hdr *h,
		      uint32_t blen)
{
	struct rr_gather_part *p;
	struct rr_gather_slot *g;
	uint32_t i, t;

	i = ntohl(h->gather) - gs->first;
	if (i >= RR_SG_PER_WORKER)
		return;
	g = &gs->g[i];
	if (!g->busy || g->gen != ntohl(h->gen) ||
	    g->reduce != RR_REDUCE_CONCAT)
		return;
	t = ntohs(h->target) % RR_SG_MAX_TARGETS;
	g->parts++;
	/* No room: it does not count as answered. */
	if (g->concat_len + sizeof(*p) + blen > sizeof(g->concat))
		return;
	g->got[t / 64] |= 1ULL << (t % 64);
	p = (void *)(g->concat + g->concat_len);
	p->target = (uint16_t)t;
	p->len = (uint16_t)blen;
	memcpy(p->body, h + 1, blen);
	g->concat_len += (uint32_t)(sizeof(*p) + blen + 1) & ~1U;
}

bool rr_gathers_frame(struct rr_worker *w, const uint8_t *data, uint32_t len)
{
	struct rr_gathers *gs = w->gathers;
	struct rr_pkt pkt;

	/* The checksum once: the XDP program summed a gather's reply, and
	 * a request's is summed as it is served. */
	if (!gs || rr_parse_headers(data, len, &pkt) ||
	    ntohs(*(const uint16_t *)(data + pkt.l4_off + 2)) != gs->port)
		return false;
	/* The XDP program checked it: its header and entry are sound. */
	if (pkt.payload_len >= sizeof(struct rr_sg_hdr))
		take_part(gs, (const void *)(data + pkt.payload_off),
			  pkt.payload_len - (uint32_t)sizeof(struct rr_sg_hdr));
	return true;
}

/*
 * Reply @k read from the gather socket, if it is one to take: the XDP
 * program passed it there (a concatenation's, on another queue than the
 * worker's) after its checks, but anyone on the host can send to the
 * socket too. So: the header of an outstanding concatenation, from the
 * target it names, which was asked and has not answered yet.
 */
static bool socket_part_ok(struct rr_gathers *gs, uint32_t k)
{
	const struct rr_config *cfg = gs->w->inv->cfg;
	const struct rr_sg_hdr *h = (const void *)gs->rbuf[k];
	const struct rr_gather_entry *e;
	const struct rr_gather_slot *g;
	struct sockaddr_in6 want;
	uint32_t i, t;

	if (gs->rmsg[k].msg_len < sizeof(*h) ||
	    gs->rmsg[k].msg_hdr.msg_flags & MSG_TRUNC ||
	    ntohl(h->magic) != RR_SG_MAGIC)
		return false;
	i = ntohl(h->gather) - gs->first;
	t = ntohs(h->target);
	if (i >= RR_SG_PER_WORKER || t >= RR_SG_MAX_TARGETS)
		return false;
	g = &gs->g[i];
	e = &gs->entries[i];
	if (!g->busy || g->reduce != RR_REDUCE_CONCAT ||
	    g->gen != ntohl(h->gen) || !asked(e->sent, t) ||
	    g->got[t / 64] >> (t % 64) & 1 || e->group >= cfg->ngroups ||
	    t >= cfg->groups[e->group].ntargets)
		return false;
	target_addr(&cfg->groups[e->group].targets[t], &want);
	return !memcmp(&want.sin6_addr, &gs->from[k].sin6_addr,
		       sizeof(want.sin6_addr)) &&
	       want.sin6_port == gs->from[k].sin6_port;
}

/* What the gather socket holds, RR_SG_RECV_BATCH to a recvmmsg(). */
static void read_socket(struct rr_gathers *gs)
{
	uint32_t k;
	int n;

	do {
		for (k = 0; k < RR_SG_RECV_BATCH; k++) {
			gs->riov[k].iov_base = gs->rbuf[k];
			gs->riov[k].iov_len = RR_SG_RECV_LEN;
			memset(&gs->rmsg[k], 0, sizeof(gs->rmsg[k]));
			gs->rmsg[k].msg_hdr.msg_name = &gs->from[k];
			gs->rmsg[k].msg_hdr.msg_namelen = sizeof(gs->from[k]);
			gs->rmsg[k].msg_hdr.msg_iov = &gs->riov[k];
			gs->rmsg[k].msg_hdr.msg_iovlen = 1;
		}
		n = recvmmsg(gs->fd, gs->rmsg, RR_SG_RECV_BATCH, MSG_DONTWAIT,
			     NULL);
		for (k = 0; n > 0 && k < (uint32_t)n; k++)
			if (socket_part_ok(gs, k))
				take_part(gs, (const void *)gs->rbuf[k],
					  gs->rmsg[k].msg_len -
						  (uint32_t)sizeof(
							  struct rr_sg_hdr));
	} while (n == RR_SG_RECV_BATCH);
}

int rr_gathers_fd(const struct rr_worker *w)
{
	return w->gathers && w->gathers->concats ? w->gathers->fd : -1;
}

static uint32_t popcount_bits(const uint64_t *bits)
{
	uint32_t i, n = 0;

	for (i = 0; i < RR_SG_WORDS; i++)
		n += (uint32_t)__builtin_popcountll(bits[i]);
	return n;
}

/* Completes gather @i: closed, its result made, its reply put on TX (or
 * its frame recycled). */
static uint32_t complete(struct rr_worker *w, uint32_t i, bool timed_out)
{
	struct rr_gathers *gs = w->gathers;
	struct rr_gather_slot *g = &gs->g[i];
	struct rr_gather_entry *e = &gs->entries[i];
	uint64_t answered[RR_SG_WORDS], sent[RR_SG_WORDS], until;
	__u64 *stale = gs->stale[e->group % RR_SG_MAX_GROUPS];
	struct rr_gather_result res = { 0 };
	struct rr_request ctx = { .queue = w->queue, .thread = w->thread };
	const struct rr_fn_instance *inst;
	struct rr_sock *s = &w->socks[g->slot];
	uint32_t tickets, v, room;
	uint8_t *data;
	int ret;

	tickets = close_entry(e);
	if (tickets > e->need)
		tickets = e->need;
	until = rr_now_ns() + CLOSE_SPIN_NS;
	while (load32(&e->merged) < tickets && rr_now_ns() < until)
		;
	memcpy(sent, e->sent, sizeof(sent));
	/* CONCAT: what reached the worker, not what the program passed. */
	memcpy(answered,
	       g->reduce == RR_REDUCE_CONCAT ? g->got
					     : (uint64_t *)e->merged_bits,
	       sizeof(answered));
	for (v = 0; v < RR_SG_WORDS; v++) {
		answered[v] &= sent[v];
		/* A miss at the deadline is news; an answer clears it. */
		stale[v] &= ~answered[v];
		if (timed_out)
			stale[v] |= sent[v] & ~answered[v];
	}
	res.asked = g->asked;
	res.answered = popcount_bits(answered);
	if (timed_out)
		rr_stat_add(&s->stats->gathers_timed_out, 1);
	rr_stat_add(&s->stats->gather_missed, res.asked - res.answered);
	res.asked_bits = sent;
	res.answered_bits = answered;
	res.timed_out = timed_out;
	res.reduce = g->reduce;
	res.value = load64(&e->value);
	if (g->reduce == RR_REDUCE_MIN && !res.answered)
		res.value = 0;
	if (g->reduce == RR_REDUCE_TOPK)
		for (v = RR_SG_TOPK_RANGE; v-- > 0 && res.ntopk < g->k;)
			if (e->topk[v / 64] >> (v % 64) & 1)
				res.topk[res.ntopk++] = v;
	res.data = g->concat;
	res.len = g->concat_len;
	res.cookie = g->cookie;
	res.cookie_len = g->cookie_len;

	g->busy = false;
	gs->outstanding--;
	if (g->reduce == RR_REDUCE_CONCAT)
		gs->concats--;
	gs->per_slot[g->slot]--;
	inst = __atomic_load_n(&w->inv->slots[g->slot].inst, __ATOMIC_ACQUIRE);
	data = xsk_umem__get_data(w->umem->area, g->addr);
	room = RR_FRAME_SIZE - (uint32_t)(g->addr - rr_frame_of(g->addr));
	if (g->slot >= w->nsocks || !inst || inst->fn != g->fn) {
		ret = -RR_DROP_GATHER_LOST;
	} else {
		rr_fn_request_bind(&ctx, inst, w->index,
				   w->rep->fn_counters[g->slot]);
		ret = rr_serve_gathered(
			data, g->len, room,
			__atomic_load_n(&w->inv->live->mtu, __ATOMIC_RELAXED),
			s->svc->max_amplification, inst->fn, &ctx, &res);
	}
	rr_gather_held(w, i, 0);
	if (ret < 0) {
		rr_stat_add(&s->stats->drops[-ret], 1);
		rr_recycle(w, rr_frame_of(g->addr));
		return 0;
	}
	/* Its request was captured with "no reply yet": here it is. */
	if (g->mark)
		capture_frame(w, RR_CAPTURE_REPLY, g->slot, data,
			      (uint32_t)ret);
	return rr_tx_one(w, s, g->addr, (uint32_t)ret);
}

uint32_t rr_gathers_poll(struct rr_worker *w)
{
	struct rr_gathers *gs = w->gathers;
	struct rr_gather_entry *e;
	struct rr_gather_slot *g;
	uint32_t i, sent = 0;
	uint64_t now;

	if (!gs || !gs->outstanding)
		return 0;
	if (gs->concats)
		read_socket(gs);
	now = rr_now_ns();
	for (i = 0; i < RR_SG_PER_WORKER; i++) {
		g = &gs->g[i];
		if (!g->busy)
			continue;
		e = &gs->entries[i];
		if (g->unsent)
			send_unsent(gs, g, e);
		if ((g->reduce == RR_REDUCE_CONCAT
			     ? g->parts
			     : load32(&e->merged)) >= e->need)
			sent += complete(w, i, false);
		else if (now >= g->deadline_ns)
			sent += complete(w, i, true);
	}
	return sent;
}

uint32_t rr_gathers_end(struct rr_worker *w)
{
	struct rr_gathers *gs = w->gathers;
	uint32_t i, sent = 0;

	for (i = 0; gs && gs->outstanding && i < RR_SG_PER_WORKER; i++)
		if (gs->g[i].busy)
			sent += complete(w, i, true);
	return sent;
}

bool rr_gathers_sleep(struct rr_worker *w)
{
	struct rr_gathers *gs = w->gathers;
	uint32_t i;

	if (!gs || !gs->outstanding)
		return true;
	/* Then the counts: the XDP program counts, then reads this. */
	__atomic_store_n(&gs->entries[0].asleep, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < RR_SG_PER_WORKER; i++)
		if (gs->g[i].busy && gs->g[i].reduce != RR_REDUCE_CONCAT &&
		    __atomic_load_n(&gs->entries[i].merged, __ATOMIC_SEQ_CST) >=
			    gs->entries[i].need) {
			rr_gathers_awake(w);
			return false;
		}
	return true;
}

void rr_gathers_awake(struct rr_worker *w)
{
	if (w->gathers)
		__atomic_store_n(&w->gathers->entries[0].asleep, 0,
				 __ATOMIC_RELAXED);
}

int rr_gathers_timeout(const struct rr_worker *w, int max)
{
	const struct rr_gathers *gs = w->gathers;
	uint64_t now, next = UINT64_MAX;
	uint32_t i;
	int ms;

	if (!gs || !gs->outstanding)
		return max;
	for (i = 0; i < RR_SG_PER_WORKER; i++) {
		if (!gs->g[i].busy)
			continue;
		if (gs->g[i].unsent)
			return 1;
		if (gs->g[i].deadline_ns < next)
			next = gs->g[i].deadline_ns;
	}
	now = rr_now_ns();
	if (next <= now)
		return 0;
	ms = (int)((next - now + 999999) / 1000000);
	return ms < max ? ms : max;
}
