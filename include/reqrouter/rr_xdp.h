/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel function API: what a functions/NAME.bpf.c sees.
 *
 * A function that can answer some requests without leaving the kernel
 * ships an XDP implementation beside its C one, in functions/NAME.bpf.c
 * (NAME as registered by RR_FUNCTION). reqrouter's XDP program does all
 * the checks the user-space path does (parsing, group and martian
 * addresses, loop ports, allow-lists, reply room under the MTU and the
 * amplification limit) and then tail-calls the function's program with
 * the request described in struct rr_xdp_req. The handler writes its
 * reply over the payload in place and returns one of:
 *
 *   n >= 0        the reply is n bytes long: the frame is turned into the
 *                 reply (addresses and ports swapped, lengths, TTL, IPv4
 *                 header and full UDP checksum, VLAN tags kept) and sent
 *                 back with XDP_TX;
 *   RR_XDP_PUNT   the request goes on to the function's AF_XDP sockets
 *                 exactly as if there were no XDP implementation: how a
 *                 function leaves what it cannot do here (too large, needs
 *                 state, beyond the verifier) to its C implementation. The
 *                 frame must still be untouched;
 *   RR_XDP_PUNT_CLASS(k)
 *                 a punt of a request of class k (rr_xdp_req.h): under
 *                 steering = groups, to the workers of the k-th group of
 *                 the function's `workers`. A function whose program only
 *                 classifies (every request punted, none answered) says
 *                 so with RR_FN_XDP_CLASSIFIER, and its program then runs
 *                 where replies from XDP would be lost too (a bare veth);
 *   -errno        no reply; counted as reply_too_big (-EMSGSIZE) or
 *                 function_error, as user space counts them.
 *
 * A reply longer than the request needs rr_xdp_resize() before it is
 * written (rr_xdp_packet.h has the helpers). Both implementations must
 * give the same reply for the same request: the tests compare them byte
 * for byte.
 *
 *	static int my_handler(struct xdp_md *ctx, struct rr_xdp_req *req)
 *	{ ...; return req->payload_len; }
 *	RR_XDP_FUNCTION(my_function, my_handler);
 *
 * Why tail calls (one PROG_ARRAY entry per function) rather than one
 * statically linked object: each function is verified on its own, so one
 * that a kernel refuses falls back to user space alone instead of keeping
 * the whole invoker from loading; and an entry can be filled or emptied while
 * serving, without reloading the steering program. A tail call costs a
 * few nanoseconds; the request travels in a per-CPU map, since a tail
 * call passes nothing but the context.
 */
#ifndef RR_XDP_H
#define RR_XDP_H

#include "rr_xdp_capture.h"
#include "rr_xdp_packet.h"

/*
 * The ABI between a function's object and the steering program: the maps
 * below, by name. reqrouter hands the function object the steering
 * program's maps of the same names when it loads it (so their sizes here
 * do not matter); any other map the object declares is its own. The
 * entry point below uses them as follows, and nothing else may:
 *
 *   rr_req      the request being served on this CPU (a tail call passes
 *               only the context);
 *   fn_stats    per-CPU counters: +1 at req->tx_key for every reply
 *               sent, +1 at req->rx_key for every request handed back
 *               (reqrouter reads the requests the function was given as
 *               their sum, and its replies per queue as the tier's: one
 *               counter a reply, the price of the in-kernel tier);
 *   rr_verdict  a request not answered (a punt, an error, a reply that
 *               could not be built) is handed back with its verdict in
 *               req->verdict by a tail call to entry 0, the steering
 *               program's, which counts it and redirects or drops it;
 *   capture_ring, capture_scratch
 *               a request reqrouter marked (req->mark, rr_xdp_capture.h)
 *               and answered leaves its record and its reply's there.
 *
 * For xdp_spread the object is loaded a second time as a cpumap program
 * (BPF_XDP_CPUMAP), with the cpumap side's rr_verdict: a program array
 * holds programs of one attach type only. The same code serves both;
 * req->spread tells it where it runs.
 *
 * A function's XDP object is built with reqrouter and embedded in it, so
 * both sides always come from one build; the ABI is written down to keep
 * it this small.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_xdp_req);
	__uint(max_entries, 1);
} rr_req SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} fn_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} rr_verdict SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} capture_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_capture_scratch);
	__uint(max_entries, 1);
} capture_scratch SEC(".maps");

static __always_inline void rr_xdp_count(void *map, __u32 key)
{
	__u64 *cnt = bpf_map_lookup_elem(map, &key);

	if (cnt)
		*cnt += 1;
}

/* What the entry point does with a handler's verdict: a reply is built
 * and sent here, anything else goes back to the steering program. */
static __always_inline int rr_xdp_finish(struct xdp_md *ctx,
					 struct rr_xdp_req *req, int ret)
{
	struct rr_capture_scratch *sc;
	__u32 zero = 0;

	if (ret >= 0 && (__u32)ret <= req->room &&
	    !rr_xdp_build_reply(ctx, req, (__u32)ret)) {
		rr_xdp_count(&fn_stats, req->tx_key);
		/* Captured or traced: the reply as it leaves. */
		if (req->mark) {
			sc = bpf_map_lookup_elem(&capture_scratch, &zero);
			if (sc)
				rr_capture_answered(ctx, &capture_ring, sc);
		}
		if (req->spread)
			return bpf_redirect(ctx->ingress_ifindex, 0);
		return XDP_TX;
	}
	rr_xdp_count(&fn_stats, req->rx_key);
	req->verdict = ret;
	bpf_tail_call(ctx, &rr_verdict, zero);
	/* Not loaded by reqrouter: an untouched frame to the kernel, never
	 * a silent drop of one. */
	return RR_XDP_PUNT_CLASS_OF(ret) >= 0 ? XDP_PASS : XDP_DROP;
}

/* The entry point of a function's XDP program, named rr_fn_NAME. */
#define RR_XDP_FUNCTION(_name, _handler)                            \
	SEC("xdp") int rr_fn_##_name(struct xdp_md *ctx)            \
	{                                                           \
		struct rr_xdp_req *req;                             \
		__u32 zero = 0;                                     \
                                                                    \
		req = bpf_map_lookup_elem(&rr_req, &zero);          \
		if (!req)                                           \
			return XDP_PASS;                            \
		return rr_xdp_finish(ctx, req, _handler(ctx, req)); \
	}                                                           \
	char _license[] SEC("license") = "GPL"

#endif /* RR_XDP_H */
