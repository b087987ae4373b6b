// SPDX-License-Identifier: GPL-2.0
/*
 * The worker: per round, for each of its sockets take a batch off RX, run
 * the function on each request in place, put the replies on TX and kick
 * it; then, under the queue's lock, return dropped frames and completed
 * transmissions to the shared fill ring. Frames never leave the UMEM and
 * nothing is allocated here.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "cache.h"
#include "clock.h"
#include "frame.h"
#include "gather.h"
#include "invoker.h"
#include "log.h"
#include "priority.h"
#include "rl.h"
#include "seccomp.h"
#include "worker.h"
#include "xsk_txmd.h"

#define SLEEP_MS 100	      /* bounds how long a stop request waits */
#define SLEEP_MS_TX_PENDING 1 /* completions due: come back soon */
/* poll() on a socket with need_wakeup transmits too (xsk_poll(): in copy
 * mode up to 32 frames, in zero-copy mode a driver wake-up), before it
 * sleeps: a worker about to sleep leaves that many to it. */
#define POLL_TX 32

/* Every reply the worker's first @nsocks sockets hold goes out now. */
static void kick_pending(struct rr_worker *w, uint32_t nsocks)
{
	struct rr_sock *s;
	uint32_t i;

	for (i = 0; i < nsocks; i++) {
		s = &w->socks[i];
		if (xsk_ring_prod__needs_wakeup(&s->tx) && rr_tx_pending(s))
			rr_kick_tx(s);
	}
}

/*
 * The load the XDP program steers by (struct rr_worker_load): @n more
 * requests done with, a batch at a time. One writer, the worker; the
 * program reads.
 */
static void load_done(struct rr_worker *w, uint32_t n)
{
	w->done += n;
	if (w->load)
		__atomic_store_n(&w->load->done, w->done, __ATOMIC_RELAXED);
}

/* A batch begins (@now) or ends (0). */
static void load_busy(struct rr_worker *w, uint64_t now)
{
	if (w->load)
		__atomic_store_n(&w->load->busy_ns, now, __ATOMIC_RELAXED);
}

/* How far behind the worker is: the queuing delay of its batch's first
 * request, the oldest (kern/lib/deadline.h). */
static void load_delay(struct rr_worker *w, uint64_t delay)
{
	if (w->load)
		__atomic_store_n(&w->load->delay_ns, delay, __ATOMIC_RELAXED);
}

/*
 * At the start of a round, done is set to what the program sent less what
 * the worker's RX rings hold: a frame the kernel dropped after the
 * program counted it (no fill frame, a full ring) would otherwise count
 * as backlog for ever. sent is read first, so a frame that arrives in
 * between is counted as held: the error is an overestimate, for a round.
 */
static void load_sync(struct rr_worker *w, uint32_t nsocks)
{
	uint64_t sent, held = 0, done;
	struct rr_sock *s;
	uint32_t i;

	if (!w->load)
		return;
	sent = __atomic_load_n(&w->load->sent, __ATOMIC_ACQUIRE);
	for (i = 0; i < nsocks; i++) {
		s = &w->socks[i];
		held += __atomic_load_n(s->rx.producer, __ATOMIC_ACQUIRE) -
			*s->rx.consumer;
	}
	done = w->done = sent - held;
	/* Usually what the last batch left there: stored only when not, or
	 * a busy-polling worker would pull the line from the steering CPU
	 * at every idle round. Compared with the line itself, which a cell
	 * before this one may have left otherwise. */
	if (__atomic_load_n(&w->load->done, __ATOMIC_RELAXED) != done)
		__atomic_store_n(&w->load->done, done, __ATOMIC_RELAXED);
}

/* Stores a pure function's reply; a few stores, no system call. */
static void cache_reply(struct rr_worker *w, struct rr_sock *s,
			const struct rr_function *fn, const uint8_t *frame,
			uint32_t frame_len)
{
	const struct rr_keep *k = &w->keep;
	struct rr_cache_entry *part;
	uint64_t expires = 0;

	/* Its cell group's partition of the queue's cache: the only one
	 * its cell maps. */
	part = rr_xdp_cache_of(&w->inv->xdp, w->queue, w->cell_group);
	if (!part)
		return;
	if (s->svc->cache_ttl)
		expires = rr_now_ns() +
			  (uint64_t)s->svc->cache_ttl * 1000000000ULL;
	switch (rr_cache_insert(
		part, w->inv->xdp.cache_queue_entries, s->svc->port,
		__atomic_load_n(&w->inv->live->cache_gen[s->slot],
				__ATOMIC_RELAXED),
		expires, k->req, k->len, frame + k->reply_off,
		frame_len - k->reply_off, fn->id_bytes, k->cookie)) {
	case RR_CACHE_EVICTED:
		rr_stat_add(&s->stats->cache_evictions, 1);
		/* fall through */
	case RR_CACHE_INSERTED:
		rr_stat_add(&s->stats->cache_inserts, 1);
		break;
	case RR_CACHE_SKIPPED:
		rr_stat_add(&s->stats->cache_skips, 1);
		break;
	}
}

/* A quarantined function's queued requests go back unanswered (the batch
 * mark is set: each one recycled counts as done). */
static uint32_t drop_batch(struct rr_worker *w, struct rr_sock *s, uint32_t n,
			   uint32_t idx_rx, enum rr_drop why)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		rr_recycle(w, rr_frame_of(
				      xsk_ring_cons__rx_desc(&s->rx, idx_rx + i)
					      ->addr));
	xsk_ring_cons__release(&s->rx, n);
	rr_frames_held(w, n);
	load_done(w, n);
	__atomic_store_n(&w->rep->batch.sock, RR_NO_BATCH, __ATOMIC_RELEASE);
	rr_stat_add(&s->stats->rx, n);
	rr_stat_add(&s->stats->drops[why], n);
	return n;
}

/*
 * Whether the XDP program marked the request behind @meta (its struct
 * rr_rx_meta) as a slip: rate-limited, to be answered with the slip
 * reply where the program's own would be lost. The mark is cleared, so
 * that the frame never carries it into another use.
 */
static bool rx_slip(uint8_t *meta)
{
	struct rr_rx_meta m;
	uint32_t none = 0;

	memcpy(&m, meta, sizeof(m));
	if (m.magic != RR_RX_META_MAGIC || !(m.flags & RR_RX_META_SLIP))
		return false;
	memcpy(meta + offsetof(struct rr_rx_meta, flags), &none, sizeof(none));
	return true;
}

/* What the XDP program marked the request behind @meta for (RR_MARK_*;
 * read before its stamp is wiped). */
static uint32_t rx_mark(const uint8_t *meta)
{
	struct rr_rx_meta m;

	memcpy(&m, meta, sizeof(m));
	if (m.magic != RR_RX_META_MAGIC)
		return 0;
	return m.flags >> RR_RX_META_MARK_SHIFT &
	       (RR_MARK_CAPTURE | RR_MARK_TRACE);
}

/*
 * A request marked @mark (capture.h), @len bytes at @data, queued for
 * @delay ns, before its call: its record begun (its bytes as they came)
 * in the worker's own memory, for capture_end() to put into its ring.
 */
static struct rr_capture_wslot *
capture_begin(struct rr_worker *w, const struct rr_sock *s, uint32_t mark,
	      const uint8_t *data, uint32_t len, uint64_t now, uint64_t delay)
{
	struct rr_capture_wslot *cs = &w->capture_req;

	memset(&cs->rec, 0, sizeof(cs->rec));
	cs->rec.kind = RR_CAPTURE_REQUEST;
	cs->rec.mark = (uint8_t)mark;
	cs->rec.tier = RR_CAPTURE_TIER_USER;
	cs->rec.xdp_stat = RR_XDP_REDIRECT;
	cs->rec.queue = (uint16_t)w->queue;
	cs->rec.thread = (uint16_t)w->thread;
	cs->rec.slot = (uint16_t)s->slot;
	cs->rec.arrival_ns = delay ? now - delay : 0;
	cs->rec.delay_ns = delay;
	rr_capture_wbytes(
		cs, data, len,
		__atomic_load_n(&w->inv->live->capture_snap, __ATOMIC_RELAXED));
	return cs;
}

/* The record @cs begun for a request, its call begun at @t0, ended with
 * @ret (a reply's length, or -enum rr_drop), and the reply's, at @data. */
static void capture_end(struct rr_worker *w, struct rr_capture_wslot *cs,
			int ret, const uint8_t *data, uint64_t t0)
{
	struct rr_capture_wring *r = &w->rep->capture;
	struct rr_capture_wslot *rs;
	uint64_t now = rr_now_ns();

	/* The request as it came, the reply as it leaves. */
	cs->rec.ts_ns = cs->rec.arrival_ns ? cs->rec.arrival_ns : t0;
	cs->rec.fn_ns = now - t0;
	cs->rec.drop = ret < 0 ? (uint16_t)-ret : 0;
	cs->rec.reply_len = ret > 0 ? (uint32_t)ret : 0;
	rs = rr_capture_wnext(r);
	if (!rs)
		return;
	rs->rec = cs->rec;
	memcpy(rs->data, cs->data, cs->rec.caplen);
	rr_capture_wput(r);
	if (ret <= 0 || !(cs->rec.mark & RR_MARK_CAPTURE))
		return;
	rs = rr_capture_wnext(r);
	if (!rs)
		return;
	rs->rec = cs->rec;
	rs->rec.ts_ns = now;
	rs->rec.kind = RR_CAPTURE_REPLY;
	rr_capture_wbytes(
		rs, data, (uint32_t)ret,
		__atomic_load_n(&w->inv->live->capture_snap, __ATOMIC_RELAXED));
	rr_capture_wput(r);
}

/* The worker's own copy of a frame whose data starts @room bytes before
 * its end, at the same place. */
static uint8_t *private_copy(struct rr_worker *w, uint32_t room)
{
	return w->priv + RR_FRAME_SIZE - room;
}

/*
 * rr_serve_keep() for a cached function while other cell groups serve the
 * same queue: the UMEM's frames are every cell's of the queue (the kernel
 * gives a queue one UMEM), so another group's cell could rewrite a
 * request under the call or a reply before it is cached, and the cache
 * would then serve that to every client. The frame's @len bytes are
 * copied into the worker's own memory first, served there, and the reply
 * copied back; the cache is filled from the copy (serve_batch()).
 */
static int serve_private(struct rr_worker *w, uint8_t *data, uint32_t len,
			 uint32_t room, uint32_t mtu, uint32_t amp,
			 const struct rr_function *fn,
			 const struct rr_request *ctx, struct rr_keep *keep,
			 uint32_t *csum_start)
{
	uint8_t *copy = private_copy(w, room);
	int ret;

	memcpy(copy, data, len);
	ret = rr_serve_keep(copy, len, room, mtu, amp, fn, ctx, keep,
			    csum_start);
	if (ret > 0)
		memcpy(data, copy, (size_t)ret);
	return ret;
}

/* The time of a call from @ch's source, added to the batch's charges
 * (w->charges, @n of them): one entry per source. */
static void charge_add(struct rr_worker *w, uint32_t *n,
		       const struct rr_rl_charge *ch)
{
	uint32_t i, len = ch->family == AF_INET ? 4 : 16;

	for (i = 0; i < *n; i++)
		if (w->charges[i].family == ch->family &&
		    !memcmp(w->charges[i].addr, ch->addr, len)) {
			w->charges[i].ns += ch->ns;
			return;
		}
	if (*n < RR_MAX_BATCH)
		w->charges[(*n)++] = *ch;
}

/* A gather_target function's requests: no gathers of its own. */
static struct rr_gather_ctx target_only = { .target = true };

/*
 * One batch from socket @si; returns the number of requests taken. While it
 * runs, w->rep->batch says where it is (struct rr_batch_mark): the supervisor
 * reads it if the cell dies.
 */
static uint32_t serve_batch(struct rr_worker *w, uint32_t si)
{
	struct rr_sock *s = &w->socks[si];
	const struct rr_fn_instance *inst;
	const struct rr_function *fn;
	uint32_t batch = w->inv->cfg->batch;
	uint32_t mtu = __atomic_load_n(&w->inv->live->mtu, __ATOMIC_RELAXED);
	uint32_t amp = s->svc->max_amplification;
	bool offload = w->inv->tx_csum_offload;
	uint32_t idx_rx = 0, n, i, ntx = 0, room, limit, csum_start = 0;
	uint32_t replies = 0;
	struct rr_request ctx = { .queue = w->queue, .thread = w->thread };
	struct rr_batch_mark *mark = &w->rep->batch;
	struct xsk_tx_metadata *meta;
	struct rr_keep *keep = NULL;
	/* rate_limit_us: its calls' time charged to their sources. */
	const struct rr_rl_cost *cost = NULL;
	struct rr_rl_charge ch;
	uint32_t ncharge = 0;
	uint64_t tcall;
	bool charge;
	const struct xdp_desc *rxd;
	uint64_t deadline = (uint64_t)s->svc->deadline_us * 1000;
	uint64_t addr, base, now, delay, t0 = 0;
	struct rr_capture_wslot *cs;
	uint32_t watched, marked;
	uint8_t *data;
	bool slip, priv;
	int ret;

	/* Take no more than TX can hold: the rest waits in RX. */
	limit = xsk_prod_nb_free(&s->tx, batch);
	if (limit > batch)
		limit = batch;
	n = xsk_ring_cons__peek(&s->rx, limit, &idx_rx);
	/* Counted only when requests were really left waiting. */
	if (limit < batch && xsk_cons_nb_avail(&s->rx, 1))
		rr_stat_add(&s->stats->tx_ring_full, 1);
	if (!n)
		return 0;
	now = rr_now_ns();
	tcall = now;
	rr_latency_start(&s->stats->latency, now);
	load_busy(w, now);
	mark->rx_cons = idx_rx;
	mark->tx_prod = *s->tx.producer;
	mark->n = n;
	mark->ntx = 0;
	mark->recycle_start = w->nrecycle;
	mark->kept = 0;
	__atomic_store_n(&mark->sock, si, __ATOMIC_RELEASE);
	if (__atomic_load_n(&w->inv->live->quarantined[s->slot],
			    __ATOMIC_RELAXED)) {
		load_busy(w, 0);
		return drop_batch(w, s, n, idx_rx, RR_DROP_QUARANTINED);
	}
	/* Queued for a function that has moved to cells of its own (a
	 * deploy of a module over it): its code never runs here. */
	if (w->inv->slots[s->slot].cell_group != w->cell_group) {
		load_busy(w, 0);
		return drop_batch(w, s, n, idx_rx, RR_DROP_MOVED);
	}
	if (w->inv->slots[s->slot].cached) {
		keep = &w->keep;
		keep->max = s->svc->cache_max_payload;
	}
	/* The function and its state as of this batch (a reload or a deploy
	 * may swap them; the old ones live until this worker's next round). */
	inst = __atomic_load_n(&w->inv->slots[s->slot].inst, __ATOMIC_ACQUIRE);
	fn = inst->fn;
	rr_fn_request_bind(&ctx, inst, w->index, w->rep->fn_counters[s->slot]);
	if (w->gathers && fn->flags & RR_FN_GATHER) {
		ctx.gather = &w->gathers->ctx;
		w->gathers->cur_slot = s->slot;
		w->gathers->ctx.target = s->svc->gather_target;
	} else if (s->svc->gather_target) {
		ctx.gather = &target_only;
	}
	if (w->inv->xdp.rl_cost &&
	    __atomic_load_n(&w->inv->live->rl_cost[s->slot].len[0][0],
			    __ATOMIC_RELAXED))
		cost = &w->inv->live->rl_cost[s->slot];
	/* Other cell groups' cells share the queue's frames: what is cached
	 * is made out of their reach (serve_private()). */
	priv = keep && w->inv->ngroups > 1 && !ctx.gather;
	/* Captured or traced: looked at once a batch while nothing is. */
	watched = __atomic_load_n(&w->inv->live->capture, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		rxd = xsk_ring_cons__rx_desc(&s->rx, idx_rx + i);
		addr = rxd->addr;
		base = rr_frame_of(addr);
		room = RR_FRAME_SIZE - (uint32_t)(addr - base);
		data = xsk_umem__get_data(w->umem->area, addr);
		/* The stamp lies in the frame's headroom, never before its
		 * chunk: RX data starts 256 bytes in. */
		slip = false;
		delay = 0;
		marked = 0;
		cs = NULL;
		if (addr - base >= sizeof(struct rr_rx_meta)) {
			if (watched)
				marked = rx_mark(data -
						 sizeof(struct rr_rx_meta)) &
					 watched;
			slip = rx_slip(data - sizeof(struct rr_rx_meta));
			delay = rr_queue_delay(&s->stats->queue_delay,
					       data - sizeof(struct rr_rx_meta),
					       now, &s->stats->stamp_skewed);
			if (!i)
				load_delay(w, delay);
		}
		if (marked) {
			cs = capture_begin(w, s, marked, data, rxd->len, now,
					   delay);
			t0 = rr_now_ns();
		}
		mark->cur = i;
		/* Its age when reached: a batch's calls take their time. */
		if (deadline && delay &&
		    delay + (i ? rr_now_ns() - now : 0) > deadline) {
			/* Its client has given up on it: no call, nothing
			 * cached, counted. */
			if (keep)
				keep->len = UINT32_MAX;
			ret = -RR_DROP_EXPIRED;
		} else if (slip) {
			/* Over its rate limit: the slip reply, never the
			 * function, and nothing cached. */
			if (keep)
				keep->len = UINT32_MAX;
			ret = fn->flags & RR_FN_SLIP_TC
				      ? rr_rl_slip(data, rxd->len,
						   offload ? &csum_start : NULL)
				      : -RR_DROP_MALFORMED;
		} else {
			/* A reply to one of this worker's gathers, not a
			 * request: only a gathering function's socket gets
			 * those. */
			if (ctx.gather && ctx.gather->start &&
			    rr_gathers_frame(w, data, rxd->len)) {
				rr_recycle(w, base);
				replies++;
				continue;
			}
			if (ctx.gather && ctx.gather->start) {
				w->gathers->cur_addr = addr;
				w->gathers->cur_len = rxd->len;
				w->gathers->cur_mark = marked;
			}
			/* Its source, before the reply takes its place. */
			charge = cost && rr_rl_source(data, rxd->len, &ch);
			rr_call_step(w);
			if (priv)
				ret = serve_private(w, data, rxd->len, room,
						    mtu, amp, fn, &ctx, keep,
						    offload ? &csum_start
							    : NULL);
			else
				ret = rr_serve_keep(data, rxd->len, room, mtu,
						    amp, fn, &ctx, keep,
						    offload ? &csum_start
							    : NULL);
			rr_call_step(w);
			/* One clock read a call: each call's time runs from
			 * the end of the one before (or the batch's start). */
			if (charge) {
				ch.ns = rr_now_ns() - tcall;
				tcall += ch.ns;
				charge_add(w, &ncharge, &ch);
			}
			if (ret == RR_SERVE_KEPT) {
				/* Kept by its gather (gather.c), listed in
				 * the report's gather_frames; its reply is
				 * captured when it is sent. */
				if (cs)
					capture_end(w, cs, 0, data, t0);
				mark->kept++;
				continue;
			}
		}
		if (cs)
			capture_end(w, cs, ret, data, t0);
		if (ret < 0) {
			rr_stat_add(&s->stats->drops[-ret], 1);
			rr_recycle(w, base);
			continue;
		}
		if (keep && keep->len != UINT32_MAX)
			cache_reply(w, s, fn,
				    priv ? private_copy(w, room) : data,
				    (uint32_t)ret);
		w->tx[ntx].addr = addr;
		w->tx[ntx].len = (uint32_t)ret;
		w->tx[ntx].options = offload ? XDP_TX_METADATA : 0;
		w->rep->tx[ntx] = w->tx[ntx];
		mark->ntx = ++ntx;
		if (!offload)
			continue;
		/* The checksum request goes in the RR_TX_META_LEN bytes
		 * right before addr, where the kernel looks for it: RX put
		 * the frame 256 bytes into its chunk. The kernel sums from
		 * the UDP header on, field included, and stores the result
		 * in the field, 6 bytes in. */
		meta = (struct xsk_tx_metadata *)(data - RR_TX_META_LEN);
		meta->flags = XDP_TXMD_FLAGS_CHECKSUM;
		meta->request.csum_start = (uint16_t)csum_start;
		meta->request.csum_offset = 6;
	}
	mark->cur = n;
	/* Counted as the worker's only once off RX, and no longer once on TX
	 * or fill: a snapshot may miss a frame in passing, never see it twice. */
	xsk_ring_cons__release(&s->rx, n);
	rr_frames_held(w, n);
	/* Done with, all at once: a store per request would pull the line
	 * away from the CPU that steers at every request. Meanwhile the
	 * batch's age (busy_ns) tells a slow one. */
	load_done(w, n);

	ntx = rr_tx_put(w, s, ntx);
	/* The replies out first: charged once a batch, a source once. */
	if (ncharge)
		rr_rl_charge(w->inv->xdp.rl_cost, cost, w->charges, ncharge,
			     tcall);
	load_busy(w, 0);
	rr_latency_end(&s->stats->latency, ntx);
	__atomic_store_n(&mark->sock, RR_NO_BATCH, __ATOMIC_RELEASE);
	/* A gather's replies are not requests: not counted as such. */
	rr_stat_add(&s->stats->rx, n - replies);
	rr_stat_add(&s->stats->tx, ntx);
	return n;
}

/*
 * Returns the round's dropped frames and every completed transmission to
 * the fill ring. The fill ring can hold all frames of the UMEM, so the
 * reservation always succeeds. A cell that dies in here is put right by
 * the supervisor (cells/supervise.c, recover_lock()), which tells from the rings'
 * indices at the lock (fill_prod, comp_cons) how far it got: completions
 * are copied to the stock (rr_divert()) and the fill ring first, released,
 * then the stock counted and the lot submitted.
 */
static void recycle_frames(struct rr_worker *w, uint32_t nsocks,
			   bool poll_sends)
{
	uint32_t idx_comp = 0, idx_fill = 0, ncomp, nrecycle = w->nrecycle;
	uint32_t nstock, nfill, i;
	struct rr_umem *u = w->umem;

	/* Replies left to poll() must not wait behind a lock a sibling
	 * holds (or a cell the supervisor has yet to take it back from). */
	if (poll_sends && pthread_spin_trylock(&u->sh->lock)) {
		kick_pending(w, nsocks);
		rr_umem_lock(u, w->index + 1);
	} else if (poll_sends) {
		rr_umem_locked(u, w->index + 1);
	} else {
		rr_umem_lock(u, w->index + 1);
	}
	ncomp = xsk_ring_cons__peek(&u->comp, RR_COMP_SIZE, &idx_comp);
	/* The first completions top up the stock, the rest are filled. */
	nstock = rr_divert(w, idx_comp, ncomp);
	nfill = ncomp - nstock + nrecycle;
	if (ncomp + nrecycle &&
	    (!nfill ||
	     xsk_ring_prod__reserve(&u->fill, nfill, &idx_fill) == nfill)) {
		for (i = nstock; i < ncomp; i++)
			*xsk_ring_prod__fill_addr(&u->fill, idx_fill++) =
				rr_frame_of(*xsk_ring_cons__comp_addr(
					&u->comp, idx_comp + i));
		for (i = 0; i < nrecycle; i++)
			*xsk_ring_prod__fill_addr(&u->fill, idx_fill++) =
				w->recycle[i];
		xsk_ring_cons__release(&u->comp, ncomp);
		rr_stocked(w, nstock);
		xsk_ring_prod__submit(&u->fill, nfill);
		rr_recycled(w);
		rr_frames_held(w, (int64_t)nstock - (int64_t)nrecycle);
	} else if (ncomp) {
		xsk_ring_cons__cancel(&u->comp, ncomp);
		ncomp = 0;
	}
	rr_umem_unlock(u);
	if (ncomp)
		__atomic_sub_fetch(&u->sh->tx_outstanding, ncomp,
				   __ATOMIC_RELAXED);
}

/* Nothing left on any of the worker's RX and TX rings (what it sent was
 * taken by the kernel; completions come back on the queue's shared ring,
 * which the queue's other workers keep recycling). */
static bool rings_empty(struct rr_worker *w, uint32_t nsocks)
{
	struct rr_sock *s;
	uint32_t i;

	for (i = 0; i < nsocks; i++) {
		s = &w->socks[i];
		if (__atomic_load_n(s->rx.producer, __ATOMIC_ACQUIRE) !=
			    __atomic_load_n(s->rx.consumer, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(s->tx.producer, __ATOMIC_ACQUIRE) !=
			    __atomic_load_n(s->tx.consumer, __ATOMIC_ACQUIRE)) {
			rr_kick_tx(s);
			return false;
		}
	}
	return true;
}

static void wait_for_work(struct rr_worker *w, uint32_t n)
{
	uint32_t i;
	struct pollfd pfd[RR_MAX_SLOTS + 1];
	int timeout;

	for (i = 0; i < n; i++) {
		pfd[i].fd = w->socks[i].fd;
		pfd[i].events = POLLIN;
	}
	/* A concatenation's replies from other queues come there. */
	if (rr_gathers_fd(w) >= 0) {
		pfd[n].fd = rr_gathers_fd(w);
		pfd[n++].events = POLLIN;
	}
	timeout =
		__atomic_load_n(&w->umem->sh->tx_outstanding, __ATOMIC_RELAXED)
			? SLEEP_MS_TX_PENDING
			: SLEEP_MS;
	/* A gather's deadline ends the sleep, and its last reply wakes
	 * it (only now: awake, the worker finds it at its next round). */
	timeout = rr_gathers_timeout(w, timeout);
	if (!rr_gathers_sleep(w))
		return;
	poll(pfd, n, timeout);
	rr_gathers_awake(w);
}

/* The moving average @avg (0: none yet) of the gaps between poll()'s
 * wake-ups, with one more, @gap. */
static uint64_t gap_average(uint64_t avg, uint64_t gap)
{
	return avg ? avg - avg / 4 + gap / 4 : gap;
}

/*
 * coalesce_us: while requests come faster than two in that time, a
 * worker that took less than a full batch sends its replies and sleeps
 * that long rather than in poll(), where every request would wake it:
 * what comes meanwhile is taken in one round at its end, as a NIC's
 * interrupt moderation does. It starts when poll() has been woken every
 * half of that time or sooner (a moving average of the last few gaps: a
 * burst of two is not a rate), and stops when a sleep brought fewer than
 * two: slower requests each wake it as before, and an idle worker costs
 * nothing more.
 */
static void coalesce(struct rr_worker *w, uint32_t nsocks)
{
	struct timespec ts = {
		.tv_nsec = (long)w->inv->cfg->coalesce_us * 1000,
	};

	kick_pending(w, nsocks);
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

/*
 * What socket @s has on TX goes out: a sleeping worker's next system
 * call is poll(), which sends a few, so no sendto() for them (at low
 * rates, one system call of two per request). Returns whether it left
 * them to poll().
 */
static bool send_socket(struct rr_sock *s, bool busy)
{
	uint32_t pending =
		xsk_ring_prod__needs_wakeup(&s->tx) ? rr_tx_pending(s) : 0;

	if (pending && !busy && pending <= POLL_TX)
		return true;
	if (pending)
		rr_kick_tx(s);
	return false;
}

/* send_socket() for each of the worker's first @nsocks sockets. */
static bool send_pending(struct rr_worker *w, uint32_t nsocks, bool busy)
{
	bool left = false;
	uint32_t i;

	for (i = 0; i < nsocks; i++)
		left |= send_socket(&w->socks[i], busy);
	return left;
}

/*
 * A cell told to make way (a reload renews it) answers its outstanding
 * gathers first: as they complete, for RR_SG_DRAIN_NS at most, then with
 * what came by then. What queued meanwhile waits for the next cell.
 */
static void drain_gathers(struct rr_worker *w, uint32_t nsocks)
{
	struct timespec ms = { .tv_nsec = 1000000 };
	uint64_t until = rr_now_ns() + RR_SG_DRAIN_NS;

	if (!w->gathers || !w->gathers->outstanding)
		return;
	while (w->gathers->outstanding && rr_now_ns() < until) {
		if (rr_gathers_poll(w))
			kick_pending(w, nsocks);
		recycle_frames(w, nsocks, false);
		if (w->gathers->outstanding)
			clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL);
	}
	rr_gathers_end(w);
	kick_pending(w, nsocks);
	recycle_frames(w, nsocks, false);
}

/* A worker thread that ends returns its stock to the fill ring. */
static void give_back_stock(struct rr_worker *w, uint32_t nsocks)
{
	w->stock_want = 0;
	/* Listed twice rather than nowhere, if a cell dies in between
	 * (take_stock() skips what recycle[] has). */
	while (w->nstock) {
		rr_recycle(w, w->stock[w->nstock - 1]);
		w->nstock--;
		__atomic_store_n(&w->rep->nstock, w->nstock, __ATOMIC_RELEASE);
	}
	recycle_frames(w, nsocks, false);
}

void rr_worker_drop_bounding(void)
{
	int cap;

	for (cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0)
			prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
}

/*
 * A worker runs functions, which are user code: it holds no capability.
 * Linux keeps capabilities per thread, and capset() and the bounding-set
 * and no_new_privs prctl()s change only the calling one, so a worker
 * thread drops everything for itself while the main thread keeps what it
 * needs; a cell, a process, drops it all the same. Nothing a worker does
 * (rings in shared memory, sendto()/recvfrom()/poll() on its own sockets,
 * the mapped reply cache) needs one. Without CAP_SETPCAP (under --user)
 * the bounding set is already empty. Returns 0 or -errno.
 */
int rr_worker_drop_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};

	/* A uid-0 worker could otherwise get the bounding set back by
	 * executing any program. */
	rr_worker_drop_bounding();
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &hdr, none))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}

/*
 * A worker's views of its rings start from where the rings are: a cell's
 * copies are the main thread's, made at its fork, and the cell before it
 * (or the supervisor, putting a dead cell's batch right) moved on since.
 */
static void catch_up(struct rr_worker *w, uint32_t nsocks)
{
	struct rr_sock *s;
	uint32_t i;

	for (i = 0; i < nsocks; i++) {
		s = &w->socks[i];
		s->rx.cached_prod =
			__atomic_load_n(s->rx.producer, __ATOMIC_ACQUIRE);
		s->rx.cached_cons =
			__atomic_load_n(s->rx.consumer, __ATOMIC_ACQUIRE);
		s->tx.cached_prod =
			__atomic_load_n(s->tx.producer, __ATOMIC_ACQUIRE);
		s->tx.cached_cons =
			__atomic_load_n(s->tx.consumer, __ATOMIC_ACQUIRE) +
			s->tx.size;
	}
}

/*
 * A cell sees the sockets that existed when it was forked: a socket added
 * later (a deploy) has no ring mappings in it, so it keeps its own count
 * until the main thread replaces it with a fresh cell.
 */
static void run(struct rr_worker *w, bool cell)
{
	bool busy = w->inv->cfg->busy_poll, prefer, poll_sends, full,
	     last = false;
	uint32_t i, work, taken, nsocks = w->nsocks;
	uint32_t batch = w->inv->cfg->batch;
	bool co = w->inv->cfg->coalesce_us && !busy, coalescing = false;
	bool coalesced = false;
	uint64_t half = (uint64_t)w->inv->cfg->coalesce_us * 500;
	uint64_t gap = 0, woken = 0, now; /* gap 0: none measured yet */
	struct rr_live *live = w->inv->live;
	struct rr_sock *s;
	int ret;

	rr_priority_raise(w);
	/* A normal thread's sleeps run up to 50 us late (timer slack);
	 * before the system call filter, which has no prctl(). */
	if (co)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	ret = rr_worker_drop_caps();
	if (ret)
		pr_warn("worker %u/%u: cannot drop its capabilities: %s\n",
			w->queue, w->thread, strerror(-ret));
	/* A cell that cannot be confined does not serve: its functions
	 * would run with more than they were given. */
	if (cell) {
		ret = rr_cell_seccomp(w->inv, w->cell_group);
		if (ret) {
			pr_warn("cell %u/%u: cannot load its system call filter: %s\n",
				w->queue, w->thread, strerror(-ret));
			_exit(RR_CELL_UNCONFINED);
		}
	}
	catch_up(w, nsocks);
	rr_gathers_reset(w);
	/* Its stock: the one it was given at the start, or the one the
	 * cell before it left (checked by the supervisor, cells/supervise.c). */
	w->stock_want =
		w->gathers && w->inv->cfg->gather_scatter == RR_SCATTER_UMEM
			? RR_SG_STOCK
			: 0;
	w->nstock = __atomic_load_n(&w->rep->nstock, __ATOMIC_ACQUIRE);
	if (w->nstock > RR_SG_STOCK)
		w->nstock = RR_SG_STOCK;
	memcpy(w->stock, w->rep->stock, w->nstock * sizeof(w->stock[0]));
	/* What the supervisor could not return for a dead predecessor goes
	 * back first: a round adds up to RR_MAX_RECYCLE of its own. */
	if (w->nrecycle)
		recycle_frames(w, nsocks, false);
	__atomic_store_n(&w->rep->serving, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&live->stop, __ATOMIC_RELAXED)) {
		/* A quiescent point: nothing of the last round is held. */
		__atomic_store_n(
			&w->rep->seen_epoch,
			__atomic_load_n(&w->inv->epoch, __ATOMIC_SEQ_CST),
			__ATOMIC_RELEASE);
		/* Told to end: one round more first. What the XDP program
		 * sent before a function moved to cells of its own (a deploy)
		 * is served here, by the code it was sent to, where the next
		 * cell could only drop it; the rest it would serve anyway. */
		if (cell && !last &&
		    __atomic_load_n(&live->restart[w->index], __ATOMIC_ACQUIRE))
			last = true;
		/* The main thread may fall back to plain spinning. */
		prefer = __atomic_load_n(&live->prefer_busy_poll,
					 __ATOMIC_RELAXED);
		work = 0;
		poll_sends = false;
		full = false;
		/* A deployed function adds a socket between two rounds. */
		if (!cell)
			nsocks = __atomic_load_n(&w->nsocks, __ATOMIC_ACQUIRE);
		load_sync(w, nsocks);
		for (i = 0; i < nsocks; i++) {
			s = &w->socks[i];
			taken = serve_batch(w, i);
			work += taken;
			full |= taken == batch;
			poll_sends |= send_socket(s, busy);
			/* Preferred busy polling: NAPI runs when we ask, so
			 * an empty RX ring is our cue (as in xdpsock). A
			 * socket that never received has no NAPI to run yet;
			 * its siblings on the queue do. */
			if (prefer && !taken)
				recvfrom(s->fd, NULL, 0, MSG_DONTWAIT, NULL,
					 NULL);
		}
		/* Gathers complete between batches: their replies go out
		 * as the batches' do, the last few with poll(). */
		if (rr_gathers_poll(w)) {
			work++;
			poll_sends |= send_pending(w, nsocks, busy);
		}
		recycle_frames(w, nsocks, poll_sends);
		if (coalesced && work < 2)
			coalescing = false;
		coalesced = false;
		if (last) {
			drain_gathers(w, nsocks);
			break;
		}
		/* Retiring (fewer threads): out of the XDP map already, so
		 * once its rings are empty nothing more can come. */
		if (__atomic_load_n(&live->retire[w->index],
				    __ATOMIC_ACQUIRE) &&
		    !work && rings_empty(w, nsocks) &&
		    !(w->gathers && w->gathers->outstanding))
			break;
		if (busy) {
			if (!prefer &&
			    xsk_ring_prod__needs_wakeup(&w->umem->fill))
				recvfrom(w->socks[0].fd, NULL, 0, MSG_DONTWAIT,
					 NULL, NULL);
			/* An idle round lets whoever shares the CPU run:
			 * softirq threads, the client, a sibling worker. */
			if (!work)
				sched_yield();
		} else if (coalescing && work && !full) {
			coalesce(w, nsocks);
			coalesced = true;
		} else if (!work || poll_sends) {
			/* After work, poll() sends what is left on TX and
			 * returns at once if more came meanwhile. */
			wait_for_work(w, nsocks);
			if (co) {
				now = rr_now_ns();
				if (woken)
					gap = gap_average(gap, now - woken);
				woken = now;
				coalescing = gap && gap < half;
			}
		}
	}
	/* A cell's stock stays in its report for the next one. */
	if (!cell)
		give_back_stock(w, nsocks);
}

void *rr_worker_run(void *arg)
{
	struct rr_worker *w = arg;
	char name[16];

	/* As a cell is named: top -H and /proc tell the workers apart. */
	snprintf(name, sizeof(name), "rr-worker %u/%u", w->queue, w->thread);
	prctl(PR_SET_NAME, name);
	run(w, false);
	return NULL;
}

/* A cell's functions are its copy of the invoker's slots, frozen at the
 * fork: the main thread's later changes never reach it. */
void rr_worker_run_cell(struct rr_worker *w)
{
	run(w, true);
}
