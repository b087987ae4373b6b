/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel tier (docs/DESIGN.md, "A request, from the NIC to its
 * reply", step 4): a request described as user space would see it
 * (rr_req), then answered from the reply cache (lib/cache.h) or by a tail
 * call into the function's own XDP program (fn_progs; fn_progs_cpumap on
 * an xdp_spread CPU). What neither answers goes on to the workers through
 * rr_steer(), or is dropped and counted by its reason (not_answered()).
 */
#ifndef RR_LIB_TIER_H
#define RR_LIB_TIER_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_packet.h>

#include "lib/cache.h"
#include "lib/capture.h"
#include "lib/common.h"
#include "lib/link.h"
#include "lib/parse.h"
#include "lib/stats.h"
#include "lib/steer.h"
#include "shared/port.h"
#include "shared/stats.h"

/*
 * The maps a function's XDP program shares (include/reqrouter/rr_xdp.h
 * declares the same names; reqrouter hands it these): the request, here;
 * the counters it bumps at the keys the request carries (lib/stats.h);
 * and where it hands back what it did not answer (lib/verdict.h).
 */

/* The request being served on this CPU (a tail call passes only ctx). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_xdp_req);
	__uint(max_entries, 1);
} rr_req SEC(".maps");

/* The functions' XDP programs, by slot, for ports with RR_PORT_XDP. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, RR_MAX_SLOTS);
} fn_progs SEC(".maps");

/* The same programs loaded as cpumap programs, by slot, for ports with
 * RR_PORT_SPREAD. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, RR_MAX_SLOTS);
} fn_progs_cpumap SEC(".maps");

/*
 * A tail call into @progs at @n, a constant: the key is an immediate the
 * compiler cannot fold back into a register, so the verifier knows it
 * and the JIT patches a direct jump (1 ns on these VMs), where a key in
 * a register is an indirect jump through a retpoline (10 ns).
 */
#define TAIL_CALL_CONST(ctx, progs, n)                                       \
	asm volatile(                                                        \
		"r1 = %[c]\n\t"                                              \
		"r2 = %[m] ll\n\t"                                           \
		"r3 = %[k]\n\t"                                              \
		"call %[helper]\n\t" ::[c] "r"(ctx),                         \
		[m] "i"(progs), [k] "i"(n), [helper] "i"(BPF_FUNC_tail_call) \
		: "r0", "r1", "r2", "r3", "r4", "r5")

#define TAIL_CASE(ctx, progs, n)                \
	case n:                                 \
		TAIL_CALL_CONST(ctx, progs, n); \
		break

/*
 * The tail call into function slot @slot's program in @progs: one call
 * site per slot, each with its slot as a constant (TAIL_CALL_CONST),
 * picked by a few compares. Returns only where the slot has no program.
 */
static __always_inline void tail_call_slot(struct xdp_md *ctx, void *progs,
					   __u32 slot)
{
	switch (slot) {
		TAIL_CASE(ctx, progs, 0);
		TAIL_CASE(ctx, progs, 1);
		TAIL_CASE(ctx, progs, 2);
		TAIL_CASE(ctx, progs, 3);
		TAIL_CASE(ctx, progs, 4);
		TAIL_CASE(ctx, progs, 5);
		TAIL_CASE(ctx, progs, 6);
		TAIL_CASE(ctx, progs, 7);
		TAIL_CASE(ctx, progs, 8);
		TAIL_CASE(ctx, progs, 9);
		TAIL_CASE(ctx, progs, 10);
		TAIL_CASE(ctx, progs, 11);
		TAIL_CASE(ctx, progs, 12);
		TAIL_CASE(ctx, progs, 13);
		TAIL_CASE(ctx, progs, 14);
		TAIL_CASE(ctx, progs, 15);
		TAIL_CASE(ctx, progs, 16);
		TAIL_CASE(ctx, progs, 17);
		TAIL_CASE(ctx, progs, 18);
		TAIL_CASE(ctx, progs, 19);
		TAIL_CASE(ctx, progs, 20);
		TAIL_CASE(ctx, progs, 21);
		TAIL_CASE(ctx, progs, 22);
		TAIL_CASE(ctx, progs, 23);
		TAIL_CASE(ctx, progs, 24);
		TAIL_CASE(ctx, progs, 25);
		TAIL_CASE(ctx, progs, 26);
		TAIL_CASE(ctx, progs, 27);
		TAIL_CASE(ctx, progs, 28);
		TAIL_CASE(ctx, progs, 29);
		TAIL_CASE(ctx, progs, 30);
		TAIL_CASE(ctx, progs, 31);
	}
}
_Static_assert(RR_MAX_SLOTS == 32, "tail_call_slot() has a case per slot");

/*
 * A request the in-kernel tier did not answer, with a handler's verdict
 * (RR_XDP_PUNT, -errno, or a reply that could not be built): a punt goes
 * on to the function's sockets, anything else is dropped and counted by
 * its reason, as user space counts it. On an xdp_spread CPU a punt is
 * dropped too (spread_punt): AF_XDP's copy-mode receive path takes no
 * lock, it counts on one producer per queue, the queue's NAPI, and a
 * cpumap thread would be a second (net/xdp/xsk.c, __xsk_rcv). Returns
 * the action.
 */
static __always_inline int not_answered(struct xdp_md *ctx,
					const struct rr_port_conf *conf,
					struct rr_xdp_req *req, int ret)
{
	int cls = RR_XDP_PUNT_CLASS_OF(ret);
	enum rr_drop why;

	if (cls >= 0 && !req->spread) {
		ret = rr_steer(ctx, req->queue, conf->slot,
			       steer_socks(conf, (__u32)cls),
			       conf->flags |
				       ((__u32)req->mark & RR_MARK_WORKERS)
					       << RR_STEER_MARK_SHIFT);
		/* A punt dropped on the way (overload, a deadline) is
		 * counted as that, not as handed on. */
		if (steer_act(ret) != XDP_DROP)
			rr_fn_count(req, RR_FN_XDP_PUNT);
		return rr_count_marked(ctx, req->mark, req->queue,
				       steer_stat(ret, RR_XDP_REDIRECT_PUNT),
				       steer_act(ret));
	}
	if (cls >= 0)
		why = RR_DROP_SPREAD_PUNT;
	else if (ret == -EMSGSIZE || ret > (int)req->room)
		why = req->amp_limited ? RR_DROP_AMPLIFICATION
				       : RR_DROP_REPLY_TOO_BIG;
	else
		why = RR_DROP_FUNCTION_ERROR;
	rr_fn_count(req, RR_FN_XDP_DROP + why);
	if (req->mark)
		capture_verdict(ctx, RR_XDP_DROP_FUNCTION, why, XDP_DROP);
	return rr_count(req->queue, RR_XDP_DROP_FUNCTION, XDP_DROP);
}

/*
 * Describes the request for the in-kernel tier, as user space's rr_serve()
 * would see it, and applies its checks but the UDP checksum's (the caller
 * verifies it only for what it answers): a bad IPv4 header checksum or a
 * zero UDP checksum over IPv6 is malformed, and the request must leave
 * room for a reply of its own size under the MTU (and the amplification
 * limit, which only narrows the room). Returns 0, or -enum rr_drop.
 */
static __always_inline int describe(struct xdp_md *ctx, struct rr_xdp_req *req,
				    const struct rr_port_conf *conf, void *l3,
				    struct udphdr *udp, int ipv6)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 room, hdr, l3_off = l3 - data, l4_off = (void *)udp - data;
	__u64 cap;

	req->sums = 0;
	if ((void *)(udp + 1) > end)
		return -RR_DROP_MALFORMED;
	req->l3_off = l3_off;
	req->l4_off = l4_off;
	req->payload_off = l4_off + sizeof(*udp);
	req->payload_len = bpf_ntohs(udp->len) - sizeof(*udp);
	req->src_port = bpf_ntohs(udp->source);
	req->dst_port = bpf_ntohs(udp->dest);
	req->family = ipv6 ? AF_INET6 : AF_INET;
	if (ipv6 && !udp->check)
		return -RR_DROP_MALFORMED; /* RFC 8200 8.1 */
	if (!ipv6) {
		struct iphdr *ip = l3;

		const __u32 *w = l3;

		/* Five words in line (parse_ipv4() passes on options),
		 * not a call into rr_xdp_csum()'s loops. */
		if ((void *)(ip + 1) > end)
			return -RR_DROP_MALFORMED;
		if (rr_fold16((__u64)w[0] + w[1] + w[2] + w[3] + w[4]) !=
		    0xffff)
			return -RR_DROP_MALFORMED;
	}

	room = l3_off + link_mtu;
	if (room > l3_off + 0xffff)
		room = l3_off + 0xffff;
	room = room > req->payload_off ? room - req->payload_off : 0;
	if (req->payload_len > room)
		return -RR_DROP_REPLY_TOO_BIG;
	req->amp_limited = 0;
	if (conf->max_amplification) {
		hdr = req->payload_off - l3_off;
		cap = (__u64)conf->max_amplification *
			      (hdr + req->payload_len) -
		      hdr;
		if (cap < room) {
			room = cap;
			req->amp_limited = 1;
		}
	}
	req->room = room > 0xffff ? 0xffff : room;
	return 0;
}

/*
 * The in-kernel tier: the reply cache for a pure function, or a tail call
 * into the function's own XDP program. Returns the action when the
 * request was dealt with here, -1 when it goes on to the AF_XDP sockets.
 * @mark: what the request is marked for (capture_mark()). @echo: its
 * DNS cookie is one the reply cache may echo (RR_COOKIE_ECHO). @on_spread, a
 * constant: in reqrouter_spread, on an xdp_spread CPU, where nothing
 * goes on (and only the cpumap program array is named: a program array
 * keeps to one attach type).
 */
static __always_inline int in_kernel(struct xdp_md *ctx,
				     const struct rr_port_conf *conf, void *l3,
				     struct udphdr *udp, int ipv6, __u32 queue,
				     __u32 mark, int echo, const int on_spread)
{
	struct rr_capture_scratch *sc;
	struct rr_xdp_req *req;
	__u32 zero = 0;
	int ret;

	req = bpf_map_lookup_elem(&rr_req, &zero);
	if (!req)
		return on_spread ? XDP_DROP : -1;
	req->queue = queue;
	req->slot = conf->slot;
	req->nsocks = conf->nsocks;
	req->spread = on_spread;
	req->mark = mark;
	ret = describe(ctx, req, conf, l3, udp, ipv6);

	if (!on_spread && conf->flags & RR_PORT_CACHE) {
		/* User space judges what the cache cannot answer. */
		if (ret)
			return -1;
		ret = cache_answer(ctx, req, conf, echo);
		if (ret == -2) {
			rr_fn_count(req,
				    RR_FN_XDP_DROP + RR_DROP_FUNCTION_ERROR);
			return rr_count_marked(ctx, mark, queue,
					       RR_XDP_DROP_FUNCTION, XDP_DROP);
		}
		if (ret < 0)
			rr_fn_count(req, RR_FN_CACHE_MISS);
		else if (mark)
			capture_verdict(ctx, RR_XDP_TX_CACHE, 0, ret);
		return ret;
	}

	/* Too long for the in-kernel tier (or for what the operator lets it
	 * take): the C implementation answers. */
	if (!ret &&
	    (req->payload_len > conf->xdp_max_payload ||
	     req->payload_len > RR_XDP_MAX_PAYLOAD ||
	     (long)ctx->data_end - (long)ctx->data > RR_XDP_MAX_FRAME)) {
		rr_fn_count(req, RR_FN_XDP_RX);
		return not_answered(ctx, conf, req, RR_XDP_PUNT);
	}
	/* User space finds a bad checksum before the size: the same
	 * reason for the same request (one longer than the in-kernel tier
	 * can sum keeps its own). */
	if (ret != -RR_DROP_MALFORMED &&
	    req->payload_len <= RR_XDP_MAX_PAYLOAD && !udp_csum_ok(ctx, req, 1))
		ret = -RR_DROP_BAD_CHECKSUM;
	if (ret) {
		rr_fn_count(req, RR_FN_XDP_RX);
		rr_fn_count(req, RR_FN_XDP_DROP - ret);
		if (mark)
			capture_verdict(ctx, RR_XDP_DROP_FUNCTION, -ret,
					XDP_DROP);
		return rr_count(queue, RR_XDP_DROP_FUNCTION, XDP_DROP);
	}
	/* Where the function's entry point counts, so that it needs no
	 * knowledge of the counters' layout. */
	req->rx_key = RR_FN_STATS_KEY(queue, conf->slot, RR_FN_XDP_RX);
	req->tx_key = RR_FN_STATS_KEY(queue, conf->slot, RR_FN_XDP_TX);
	/* What the function's program writes if it answers. */
	if (mark) {
		sc = bpf_map_lookup_elem(&capture_scratch, &zero);
		if (sc)
			sc->rec.xdp_stat = RR_XDP_TX_FUNCTION;
	}
	if (on_spread) {
		tail_call_slot(ctx, &fn_progs_cpumap, conf->slot);
		/* No program in the slot: no worker to hand it to here. */
		rr_fn_count(req, RR_FN_XDP_RX);
		return not_answered(ctx, conf, req, RR_XDP_PUNT);
	}
	tail_call_slot(ctx, &fn_progs, conf->slot);
	/* No program in the slot (being replaced): user space answers. */
	return -1;
}

#endif /* RR_LIB_TIER_H */
