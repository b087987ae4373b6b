/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capture and traces (docs/DESIGN.md, "Capture and traces"): while
 * reqrouterctl capture or trace runs, a request that matches the
 * capture's filter, or one in trace_sample of its function's, is marked
 * (RR_MARK_*) where its port's entry is found. What the XDP program
 * does with a marked request is written into capture_ring, with the
 * request's bytes copied before anything changed the frame, and the
 * reply's after it was built, before XDP_TX; a marked request for the
 * workers carries its mark in its metadata, and they write its records.
 * A function that taps its answers from XDP (rr_fn_tap(): dnstap) has one
 * request in its tap_sample marked RR_MARK_TAP, which the workers never
 * see: what the in-kernel tier answers of it is written whole, request
 * and reply, for the main thread to hand to the function's tap.
 * Off, all of it costs the load of capture_on and a branch.
 */
#ifndef RR_LIB_CAPTURE_H
#define RR_LIB_CAPTURE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_capture.h>

#include "lib/common.h"
#include "lib/stats.h"
#include "shared/capture.h"
#include "shared/common.h"

/* What requests are marked for now (RR_MARK_*), 0 while nobody listens:
 * the one load on the fast path. Written by user space
 * (rr_xdp_set_capture()). */
volatile __u32 capture_on SEC(".data") = 0;
/* With RR_MARK_CAPTURE, which requests: to port capture_port (0: any),
 * from a source in capture_addr/capture_mask (words in memory order, as
 * in the packet) of family capture_family (0: any, 4 or 6), one in
 * capture_sample (0 or 1: all); capture_snap bytes of each frame. Plain
 * words, so that every user of the skeleton compiles them. */
volatile __u32 capture_port SEC(".data") = 0;
volatile __u32 capture_family SEC(".data") = 0;
volatile __u32 capture_addr[4] SEC(".data") = {};
volatile __u32 capture_mask[4] SEC(".data") = {};
volatile __u32 capture_sample SEC(".data") = 0;
volatile __u32 capture_snap SEC(".data") = 0;
/* By function slot: one request in this many is traced, 0 none. */
volatile __u32 trace_sample[RR_MAX_SLOTS] SEC(".data") = {};
/* By function slot: one request in this many is tapped (RR_MARK_TAP),
 * 0 none; capture_on has RR_MARK_TAP while any is set. */
volatile __u32 tap_sample[RR_MAX_SLOTS] SEC(".data") = {};

/* Countdowns to the next sampled request: shared by the CPUs, whose
 * races only move a sample by a request. */
__u32 capture_left SEC(".bss");
__u32 trace_left[RR_MAX_SLOTS] SEC(".bss");
__u32 tap_left[RR_MAX_SLOTS] SEC(".bss");

/* The records, read by the main thread (src/daemon/ops/capture.c). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RR_CAPTURE_RING_SIZE);
} capture_ring SEC(".maps");

/* A marked request's record and bytes, per CPU (and the records the ring
 * had no room for), across the tail call into a function's program. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_capture_scratch);
	__uint(max_entries, 1);
} capture_scratch SEC(".maps");

/* Whether a countdown @left of one in @n is at its sample. */
static __always_inline int capture_due(__u32 *left, __u32 n)
{
	if (n <= 1)
		return 1;
	if (*left && *left <= n) {
		*left -= 1;
		return 0;
	}
	*left = n - 1;
	return 1;
}

/* Whether the source at @l3_off (IPv6 with @ipv6) is in the filter's
 * prefix. */
static __always_inline int capture_source(struct xdp_md *ctx, __u32 l3_off,
					  __u32 ipv6)
{
	__u32 family = capture_family, src[4] = {}, i;

	if (!family)
		return 1;
	if (family != (ipv6 ? 6 : 4))
		return 0;
	if (bpf_xdp_load_bytes(ctx, l3_off + (ipv6 ? 8 : 12), src,
			       ipv6 ? 16 : 4))
		return 0;
	for (i = 0; i < 4; i++)
		if ((src[i] & capture_mask[i]) != capture_addr[i])
			return 0;
	return 1;
}

/*
 * The record of a request marked @mark (RR_MARK_*) begun in this CPU's
 * scratch, with its bytes: for capture_mark(), and on an xdp_spread CPU
 * for a request marked on the receiving one (reqrouter_spread). Returns
 * @mark, or 0 without a scratch.
 */
__noinline __u32 capture_begin(struct xdp_md *ctx, __u32 queue, __u32 slot,
			       __u32 mark)
{
	struct rr_capture_scratch *sc;
	__u32 zero = 0, snap;

	if (!ctx)
		return 0;
	sc = bpf_map_lookup_elem(&capture_scratch, &zero);
	if (!sc)
		return 0;
	/* A tap takes the frame whole: its messages are the real bytes. */
	snap = mark & RR_MARK_TAP ? RR_CAPTURE_SNAP_MAX : capture_snap;
	sc->snap = snap < RR_CAPTURE_SNAP_MAX ? snap : RR_CAPTURE_SNAP_MAX;
	sc->rec.arrival_ns = bpf_ktime_get_ns();
	sc->rec.delay_ns = 0;
	sc->rec.fn_ns = 0;
	sc->rec.reply_len = 0;
	sc->rec.kind = RR_CAPTURE_REQUEST;
	sc->rec.mark = mark;
	sc->rec.tier = RR_CAPTURE_TIER_XDP;
	sc->rec.xdp_stat = 0;
	sc->rec.drop = 0;
	sc->rec.queue = queue;
	sc->rec.thread = 0;
	sc->rec.slot = slot;
	rr_capture_load(ctx, sc);
	return mark;
}

/*
 * What the request in @ctx, to port @dport of function slot @slot, its
 * IP header @l3 bytes in (low 16 bits; IPv6 with bit 16), arrived on
 * @queue, is marked for (RR_MARK_*, 0: nothing); a marked request's
 * record is begun in the CPU's scratch, with its bytes. Called only
 * while capture_on is set; a function of its own, verified once (which
 * takes five arguments at most).
 */
__noinline __u32 capture_mark(struct xdp_md *ctx, __u32 queue, __u32 slot,
			      __u32 l3, __u32 dport)
{
	__u32 on = capture_on, port, mark = 0;
	__u32 l3_off = l3 & 0xffff, ipv6 = l3 >> 16;

	if (!ctx || slot >= RR_MAX_SLOTS)
		return 0;
	port = capture_port;
	if (on & RR_MARK_CAPTURE && (!port || port == dport) &&
	    capture_source(ctx, l3_off, ipv6) &&
	    capture_due(&capture_left, capture_sample))
		mark |= RR_MARK_CAPTURE;
	if (on & RR_MARK_TRACE && trace_sample[slot] &&
	    capture_due(&trace_left[slot], trace_sample[slot]))
		mark |= RR_MARK_TRACE;
	if (on & RR_MARK_TAP && tap_sample[slot] &&
	    capture_due(&tap_left[slot], tap_sample[slot]))
		mark |= RR_MARK_TAP;
	if (!mark)
		return 0;
	return capture_begin(ctx, queue, slot, mark);
}

/*
 * The XDP program's verdict @stat (enum rr_xdp_stat) on a request marked
 * by capture_mark(), with action @act, and for a drop its reason @drop
 * (enum rr_drop, 0: @stat says it): the request's record, and after
 * XDP_TX the reply's. A request marked for a tap alone is written only
 * when the reply cache answered it (a function's program writes its own
 * answers, rr_xdp_finish()). Returns @act.
 */
__noinline int capture_verdict(struct xdp_md *ctx, __u32 stat, __u32 drop,
			       int act)
{
	struct rr_capture_scratch *sc;
	__u32 zero = 0;

	if (!ctx)
		return act;
	sc = bpf_map_lookup_elem(&capture_scratch, &zero);
	if (!sc)
		return act;
	if (!(sc->rec.mark & RR_MARK_WORKERS) && stat != RR_XDP_TX_CACHE)
		return act;
	sc->rec.xdp_stat = stat;
	sc->rec.drop = drop;
	if (act == XDP_TX)
		rr_capture_answered(ctx, &capture_ring, sc);
	else
		rr_capture_out(&capture_ring, sc);
	return act;
}

/* A marked request's record is of function slot @slot, not its port's
 * (a gather's reply, to the worker's gather port). */
static __always_inline void capture_slot(__u32 mark, __u32 slot)
{
	struct rr_capture_scratch *sc;
	__u32 zero = 0;

	if (!mark)
		return;
	sc = bpf_map_lookup_elem(&capture_scratch, &zero);
	if (sc)
		sc->rec.slot = (__u16)slot;
}

/* Counts @stat on @queue and returns @act (rr_count()), after writing
 * the verdict of a request marked @mark: but for a redirect to a worker,
 * which writes the request's records itself. */
static __always_inline int rr_count_marked(struct xdp_md *ctx, __u32 mark,
					   __u32 queue, enum rr_xdp_stat stat,
					   int act)
{
	if (mark && act != XDP_REDIRECT)
		capture_verdict(ctx, stat, 0, act);
	return rr_count(queue, stat, act);
}

#endif /* RR_LIB_CAPTURE_H */
