/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Steering (docs/DESIGN.md, "Steering"): a request goes to one of its
 * function's AF_XDP sockets on the receiving queue (xsks_map), the next
 * in turn (rr_cursor) or the least loaded worker's (worker_load, which
 * the workers keep), with its arrival time in front of it. rr_steer() is
 * how a request or a punt reaches a worker (a gather's reply goes to its
 * owner's socket straight, lib/gather.h).
 */
#ifndef RR_LIB_STEER_H
#define RR_LIB_STEER_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "lib/common.h"
#include "lib/deadline.h"
#include "lib/stats.h"
#include "shared/capture.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "shared/steer.h"

/* The sockets' RX ring size, set before load: a worker with this much
 * backlog can take no more (0: never judged so). */
const volatile __u32 rx_ring_size = 0;

/* AF_XDP sockets, keyed by RR_XSK_KEY(queue, thread, slot). */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, RR_XSKMAP_SIZE);
} xsks_map SEC(".maps");

/*
 * Round-robin cursor per (queue, slot). A queue is processed by one NAPI
 * context at a time, so plain increments do not race.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, RR_MAX_QUEUES *RR_MAX_SLOTS);
} rr_cursor SEC(".maps");

/* The workers' load, one struct rr_queue_load per queue: mapped by user
 * space, where each worker keeps its own. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_queue_load);
	__uint(max_entries, RR_MAX_QUEUES);
	__uint(map_flags, BPF_F_MMAPABLE);
} worker_load SEC(".maps");

/* Worker @l's backlog (rr_backlog()), each counter read once. */
static __always_inline __u64 backlog(const struct rr_worker_load *l)
{
	return rr_backlog(READ_ONCE_U64(l->sent), READ_ONCE_U64(l->done));
}

/* Worker @t's load. t < RR_MAX_THREADS already, which the compiler
 * knows and the verifier may not: hidden from the one, masked for the
 * other. */
static __always_inline struct rr_worker_load *load_of(struct rr_queue_load *ql,
						      __u32 t)
{
	asm volatile("" : "+r"(t));
	return &ql->w[t & (RR_MAX_THREADS - 1)];
}

/* least_loaded()'s state, for its bpf_loop() callback. */
struct ll_scan {
	__u64 now, best;
	__u32 queue, nsocks, mask, start, pick, first;
};

/* Worker @first + @t's score at @now: backlog first, then how far
 * behind it is in microseconds (at most 2^24 - 1: it never outweighs a
 * request): the age of its batch, and with a backlog the queuing delay
 * its batch's first request had (delay_ns, deadline.h), which a worker
 * between batches still owes the requests behind it. */
static __always_inline __u64 ll_score(struct rr_queue_load *ql, __u32 first,
				      __u32 t, __u64 now)
{
	struct rr_worker_load *l = load_of(ql, first + t);
	__u64 held = backlog(l), score = held << 24, busy, age = 0;

	busy = READ_ONCE_U64(l->busy_ns);
	if (busy && now > busy)
		age = (now - busy) >> 10;
	if (held)
		age += READ_ONCE_U64(l->delay_ns) >> 10;
	score += age < (1U << 24) ? age : (1U << 24) - 1;
	return score;
}

/* Worker @i of the scan from the cursor on: scored, kept if the best. */
static long ll_step(__u32 i, void *data)
{
	struct ll_scan *c = data;
	struct rr_queue_load *ql;
	__u64 score;
	__u32 t;

	if (i >= c->nsocks)
		return 1;
	t = c->start + i;
	if (t >= c->nsocks)
		t -= c->nsocks;
	if (t >= RR_MAX_THREADS || (c->mask && !(c->mask & (1U << t))))
		return 0;
	ql = bpf_map_lookup_elem(&worker_load, &c->queue);
	if (!ql)
		return 1;
	score = ll_score(ql, c->first, t, c->now);
	if (score < c->best) {
		c->best = score;
		c->pick = t;
	}
	return 0;
}

/*
 * steering = least_loaded: of the function's @nsocks workers in the queue
 * from thread @first on (those in @mask, counted from @first, where it is
 * not 0: steering = groups), the one with the least backlog, as its
 * number from @first;
 * between equals, the one whose batch began last (a long batch is
 * likelier a slow call), and between those, the first from the
 * round-robin cursor @start, so that idle workers take turns. Scores
 * backlog first, then the batch's age in microseconds (at most 2^24).
 * A mask with no worker below nsocks leaves @start. Two workers, the
 * usual case, are compared in line; more are scanned by a bpf_loop(),
 * whose callback is verified once, where an unrolled or bounded loop's
 * branches multiplied the verifier's states past its limit (and which
 * costs some 17 ns a worker).
 */
static __always_inline __u32 least_loaded(struct rr_queue_load *ql, __u32 queue,
					  __u32 first, __u32 nsocks, __u32 mask,
					  __u32 start, __u64 now)
{
	__u32 other = start ^ 1;
	struct ll_scan c = {
		.now = now,
		.best = ~0ULL,
		.queue = queue,
		.nsocks = nsocks,
		.mask = mask,
		.start = start,
		.pick = start,
		.first = first,
	};

	/* One worker: nothing to choose (its ring's guard is the caller's). */
	if (nsocks < 2)
		return start;
	if (nsocks == 2 && (!mask || (mask & 3) == 3) && start < 2)
		return ll_score(ql, first, other, now) <
				       ll_score(ql, first, start, now)
			       ? other
			       : start;
	bpf_loop(nsocks < RR_MAX_THREADS ? nsocks : RR_MAX_THREADS, ll_step, &c,
		 0);
	return c.pick < RR_MAX_THREADS ? c.pick : start;
}

/* The arrival time and @flags (RR_RX_META_*) in front of the frame, for
 * the worker (struct rr_rx_meta); -1 where the driver has no room for
 * metadata. */
static __always_inline int stamp_arrival(struct xdp_md *ctx, __u64 now,
					 __u32 flags)
{
	struct rr_rx_meta *m;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return -1;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return -1;
	m->arrival_ns = now;
	m->magic = RR_RX_META_MAGIC;
	m->flags = flags;
	return 0;
}

/*
 * Hands the request to one of function slot @slot's sockets on the
 * receiving queue (docs/DESIGN.md, "Steering"): the next in turn, or with
 * RR_PORT_LEAST_LOADED in @flags the least loaded worker (of those in the
 * group mask), among its cell group's workers. @socks packs the
 * function's socket count per queue (low 8 bits), its first thread (the
 * next 8) and its group mask (high 16): a BPF function takes five
 * arguments at most. A worker whose backlog fills its RX ring could take
 * nothing more: the frame is dropped here, before the kernel copies it
 * into the UMEM only to drop it. With RR_STEER_SLIP in @flags the frame
 * is a slip, marked so in its metadata (RR_RX_META_SLIP), or dropped
 * where it cannot be: unmarked, a worker would answer it. The
 * request's mark (RR_MARK_*), from RR_STEER_MARK_SHIFT on in @flags,
 * goes into its metadata (RR_RX_META_CAPTURE, _TRACE). With
 * RR_PORT_DEADLINE a request for a worker further behind than the
 * function's deadline is dropped (lib/deadline.h). Returns XDP_REDIRECT,
 * XDP_DROP (overload, an unmarked slip), RR_STEER_EXPIRED (a drop past
 * the deadline: steer_act() makes it XDP_DROP) or XDP_PASS (no socket:
 * a missing socket never drops silently). A function of its own,
 * verified once rather than inlined into the three paths that redirect
 * (a request, a punt, a slip).
 */
__noinline int rr_steer(struct xdp_md *ctx, __u32 queue, __u32 slot,
			__u32 socks, __u32 flags)
{
	__u32 key = queue * RR_MAX_SLOTS + slot, *rr, t, turn;
	__u32 nsocks = socks & 0xff, first = (socks >> 8) & 0xff;
	__u32 mask = socks >> 16;
	struct rr_queue_load *ql = NULL;
	__u64 now, held;
	int act;

	if (!ctx || slot >= RR_MAX_SLOTS || queue >= RR_MAX_QUEUES)
		return XDP_PASS;
	rr = bpf_map_lookup_elem(&rr_cursor, &key);
	if (!rr)
		return XDP_PASS;
	if (*rr >= nsocks || *rr >= RR_MAX_THREADS)
		*rr = 0;
	turn = *rr;
	*rr += 1;
	now = bpf_ktime_get_ns();
	if (flags & RR_PORT_LOAD)
		ql = bpf_map_lookup_elem(&worker_load, &queue);
	/* From here a thread of the queue: the function's first on. */
	t = turn;
	if (ql && flags & RR_PORT_LEAST_LOADED)
		t = least_loaded(ql, queue, first, nsocks, mask, turn, now);
	t += first;
	turn += first;
	if (ql) {
		held = backlog(load_of(ql, t));
		if (rx_ring_size && held >= rx_ring_size)
			return XDP_DROP;
		if (flags & RR_PORT_DEADLINE &&
		    deadline_behind(load_of(ql, t), held, slot, now)) {
			rr_fn_count_at(queue, slot,
				       RR_FN_XDP_DROP + RR_DROP_EXPIRED);
			return RR_STEER_EXPIRED;
		}
	}
	act = bpf_redirect_map(&xsks_map, RR_XSK_KEY(queue, t, slot), XDP_PASS);
	/* A worker without this function's socket (one the kernel refused
	 * to make) has no backlog and would win every pick: the worker in
	 * turn takes it instead, as round-robin would have (a full ring
	 * there drops it, counted by the kernel). A failed lookup leaves
	 * nothing behind, so the second one decides. */
	if (act != XDP_REDIRECT && t != turn) {
		t = turn;
		act = bpf_redirect_map(&xsks_map, RR_XSK_KEY(queue, t, slot),
				       XDP_PASS);
	}
	if (act != XDP_REDIRECT)
		return act;
	/* Only on its way to a socket: a frame the kernel gets is as it
	 * came. */
	if (stamp_arrival(ctx, now,
			  (flags & RR_STEER_SLIP ? RR_RX_META_SLIP : 0) |
				  (flags >> RR_STEER_MARK_SHIFT &
				   (RR_MARK_CAPTURE | RR_MARK_TRACE))
					  << RR_RX_META_MARK_SHIFT) &&
	    flags & RR_STEER_SLIP)
		return XDP_DROP;
	if (ql)
		__sync_fetch_and_add(&load_of(ql, t)->sent, 1);
	return act;
}

/* rr_steer()'s @socks for a request of class @cls to the port of
 * @conf. */
static __always_inline __u32 steer_socks(const struct rr_port_conf *conf,
					 __u32 cls)
{
	return (conf->nsocks & 0xff) | (conf->first_thread & 0xff) << 8 |
	       (__u32)conf->group_mask[cls & (RR_XDP_CLASSES - 1)] << 16;
}

/* The counter of rr_steer()'s result @act: @redirect (a request's or a
 * punt's) for a redirect, else overload, the deadline or no socket. */
static __always_inline enum rr_xdp_stat steer_stat(int act,
						   enum rr_xdp_stat redirect)
{
	if (act == XDP_REDIRECT)
		return redirect;
	if (act == RR_STEER_EXPIRED)
		return RR_XDP_DROP_EXPIRED;
	return act == XDP_DROP ? RR_XDP_DROP_OVERLOAD : RR_XDP_PASS_NO_SOCKET;
}

/* The XDP action of rr_steer()'s result @act. */
static __always_inline int steer_act(int act)
{
	return act == RR_STEER_EXPIRED ? XDP_DROP : act;
}

#endif /* RR_LIB_STEER_H */
