// SPDX-License-Identifier: GPL-2.0
/*
 * rrload's max-rate engine, kernel side.
 *
 * "gen" is never attached: user space runs it with bpf_prog_test_run_opts
 * and BPF_F_TEST_XDP_LIVE_FRAMES on the client's interface, so every run
 * turns a page-pool frame into a request sent with XDP_TX, at 1+ Mpps from
 * one core. Live frames come back from the pool as the last user left
 * them (a reflector reverses and swaps them in place), so each run
 * rewrites the headers and the payload's first and last bytes; the
 * payload's middle is a palindrome, which reversing leaves unchanged, so
 * the precomputed UDP checksum stays right.
 *
 * "count" is attached to the same interface and takes the replies: UDP
 * from the server port to our port, checked for the expected length and
 * the expected first and last bytes (the socket engine checks every byte;
 * this one has to keep up with a million a second). Replies are dropped
 * here, so the client's stack never sees them.
 *
 * --spoof: each frame leaves with the next of the given source addresses,
 * its IP and UDP checksums moved by the sum user space computed for that
 * address (RFC 1624), so a flood from many sources costs one lookup a
 * frame. The replies go to those addresses, back on this interface: they
 * are counted apart (answers, DNS slips), and replies to our own address
 * pass, as they are some other client's on this host.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "rrload_gen.h"

/* The request frame's headers and payload edges, and what the reply's
 * edges must be; filled in by user space before load. */
const volatile __u32 frame_len;
const volatile __u32 hdr_len;	/* Ethernet + IP + UDP */
const volatile __u32 edge_len;	/* bytes rewritten/checked at each end */
const volatile __u32 reply_len; /* expected reply frame length */
const volatile __u16 srv_port;	/* network byte order */
const volatile __u16 cli_port;	/* network byte order */
const volatile __u8 head[GEN_HDR_MAX + GEN_EDGE];
const volatile __u8 tail[GEN_EDGE];
const volatile __u8 reply_head[GEN_EDGE];
const volatile __u8 reply_tail[GEN_EDGE];
const volatile __u64 interval_ns; /* -r pacing: ns between frames, 0 = none */

const volatile __u32 nreqs; /* --payloads: frames in reqs; 0: head/tail */

const volatile __u32 nspoof;	  /* --spoof: sources in spoof_srcs; 0: none */
const volatile __u32 own_addr[4]; /* the frames' own source address */

/* Written by the generator only (one CPU at a time): frames it may still
 * send, when the next one is due, which of reqs and which spoofed source
 * go next. */
__u64 budget = ~0ull;
__u64 next_ns;
__u32 next_req;
__u32 next_src;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GEN_MAX_REQS);
	__type(key, __u32);
	__type(value, struct gen_req);
} reqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GEN_MAX_REQS);
	__type(key, __u32);
	__type(value, struct gen_reply);
} replies SEC(".maps");
__u64 stop_ns = ~0ull; /* -d: nothing is sent after this */

/* --spoof: the source addresses, in turn, and their checksum sums; sized
 * to N at load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_spoof);
} spoof_srcs SEC(".maps");

/* Per-CPU counters, indexed by enum gen_stat. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GEN_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} gen_stats SEC(".maps");

static __always_inline void bump(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&gen_stats, &idx);

	if (v)
		*v += 1;
}

/* --payloads: the next of the given request frames, whole; 0 or -1. */
static __always_inline int put_next(struct xdp_md *ctx)
{
	__u32 idx = next_req, len;
	struct gen_req *r;
	long cur;

	next_req = idx + 1 >= nreqs ? 0 : idx + 1;
	r = bpf_map_lookup_elem(&reqs, &idx);
	if (!r)
		return -1;
	len = r->len;
	if (len < 14 || len > GEN_REQ_FRAME_MAX)
		return -1;
	cur = (long)bpf_xdp_get_buff_len(ctx);
	if (bpf_xdp_adjust_tail(ctx, (int)len - (int)cur) ||
	    bpf_xdp_store_bytes(ctx, 0, r->frame, len))
		return -1;
	return 0;
}

/* The headers and the payload's edges over what the last user left. */
static __always_inline int put_edges(struct xdp_md *ctx)
{
	__u32 n = hdr_len + edge_len;

	if (n > sizeof(head) || !edge_len || edge_len > GEN_EDGE ||
	    frame_len < edge_len ||
	    bpf_xdp_store_bytes(ctx, 0, (void *)head, n) ||
	    bpf_xdp_store_bytes(ctx, frame_len - edge_len, (void *)tail,
				edge_len))
		return -1;
	return 0;
}

/* @check moved by the one's complement sum @delta (RFC 1624, eqn. 3). */
static __always_inline __u16 csum_move(__u16 check, __u32 delta)
{
	__u32 sum = (__u16)~check + delta;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* --spoof: the next source address into the frame, its checksums moved
 * to match; 0 or -1. The engine's frames carry no IPv4 options. */
static __always_inline int spoof(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 idx = next_src;
	struct gen_spoof *s;
	struct ipv6hdr *ip6;
	struct iphdr *ip4;
	struct udphdr *udp;

	next_src = idx + 1 >= nspoof ? 0 : idx + 1;
	s = bpf_map_lookup_elem(&spoof_srcs, &idx);
	if (!s || (void *)(eth + 1) > end)
		return -1;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip4 = (void *)(eth + 1);
		udp = (void *)(ip4 + 1);
		if ((void *)(udp + 1) > end)
			return -1;
		__builtin_memcpy(&ip4->saddr, s->addr, 4);
		ip4->check = csum_move(ip4->check, s->csum_delta);
		if (!udp->check) /* IPv4 without a UDP checksum */
			return 0;
	} else {
		ip6 = (void *)(eth + 1);
		udp = (void *)(ip6 + 1);
		if ((void *)(udp + 1) > end)
			return -1;
		__builtin_memcpy(&ip6->saddr, s->addr, 16);
	}
	/* A UDP checksum that comes to 0 is sent as 0xffff. */
	udp->check = csum_move(udp->check, s->csum_delta) ?: 0xffff;
	return 0;
}

SEC("xdp")
int gen(struct xdp_md *ctx)
{
	__u64 now, gap;
	int err;

	/* Pacing here rather than in user space: a test run costs far more
	 * to start than a frame, so small paced runs would not keep up,
	 * while a dropped frame costs tens of nanoseconds. */
	if (!budget)
		return XDP_DROP;
	if (interval_ns) {
		now = bpf_ktime_get_ns();
		if (now < next_ns || now >= stop_ns)
			return XDP_DROP;
		/* After a stall, go on from now rather than burst. Gaps are
		 * drawn uniformly from 0.5 to 1.5 intervals (the mean stays
		 * -r): evenly spaced frames lock to the phase of the
		 * receiver's timer tick, and the kernel's tick-sampled CPU
		 * accounting then reads 0 % or 100 % busy depending on that
		 * phase alone. */
		gap = interval_ns / 2 + bpf_get_prandom_u32() % interval_ns;
		next_ns = next_ns + 1000000 < now ? now + gap : next_ns + gap;
	}
	err = nreqs ? put_next(ctx) : put_edges(ctx);
	if (err || (nspoof && spoof(ctx)))
		return XDP_ABORTED;
	budget--;
	bump(GEN_STAT_SENT);
	return XDP_TX;
}

/* Returns the UDP header of a frame from the server's port to ours;
 * *@to_us says (with --spoof only) whether it is for our own address. */
static __always_inline struct udphdr *our_reply(void *data, void *end,
						int *to_us)
{
	struct ethhdr *eth = data;
	struct udphdr *udp;
	struct ipv6hdr *ip6;
	struct iphdr *ip4;

	if ((void *)(eth + 1) > end)
		return NULL;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip4 = (void *)(eth + 1);
		if ((void *)(ip4 + 1) > end || ip4->protocol != IPPROTO_UDP)
			return NULL;
		udp = (void *)ip4 + ip4->ihl * 4;
		*to_us = nspoof && ip4->daddr == own_addr[0];
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return NULL;
		udp = (void *)(ip6 + 1);
		*to_us = nspoof &&
			 ip6->daddr.in6_u.u6_addr32[0] == own_addr[0] &&
			 ip6->daddr.in6_u.u6_addr32[1] == own_addr[1] &&
			 ip6->daddr.in6_u.u6_addr32[2] == own_addr[2] &&
			 ip6->daddr.in6_u.u6_addr32[3] == own_addr[3];
	} else {
		return NULL;
	}
	if ((void *)(udp + 1) > end || udp->source != srv_port ||
	    udp->dest != cli_port)
		return NULL;
	return udp;
}

/* --payloads: the reply whose first two bytes name request idx must be,
 * byte for byte, what the function gave for it. */
static __always_inline int check_indexed(__u8 *p, void *end)
{
	struct gen_reply *e;
	__u32 idx, len, i;

	if ((void *)(p + 2) > end)
		return -1;
	idx = (__u32)p[0] << 8 | p[1];
	if (idx >= nreqs)
		return -1;
	e = bpf_map_lookup_elem(&replies, &idx);
	if (!e)
		return -1;
	len = e->len;
	if (len > GEN_REPLY_MAX || (long)end - (long)p != len)
		return -1;
	for (i = 0; i < GEN_REPLY_MAX; i++) {
		if (i >= len)
			break;
		if ((void *)(p + i + 1) > end || p[i] != e->payload[i])
			return -1;
	}
	return 0;
}

/* Without --payloads: the reply's length and both edges; 0 or -1. */
static __always_inline int check_edges(__u8 *p, void *end)
{
	__u32 i;

	if ((void *)p + reply_len != end || reply_len < hdr_len + edge_len ||
	    reply_len > GEN_FRAME_MAX || edge_len > GEN_EDGE)
		return -1;
	for (i = 0; i < GEN_EDGE; i++) {
		if (i >= edge_len)
			break;
		if ((void *)(p + hdr_len + i + 1) > end ||
		    (void *)(p + reply_len - edge_len + i + 1) > end ||
		    p[hdr_len + i] != reply_head[i] ||
		    p[reply_len - edge_len + i] != reply_tail[i])
			return -1;
	}
	return 0;
}

/* A DNS server's rate-limit slip: a response (QR) with TC set and no
 * answer, to a request of ours (with --payloads, its ID names one). */
static __always_inline int dns_slip(__u8 *p, void *end)
{
	if ((void *)(p + 12) > end || (p[2] & 0x82) != 0x82 || p[6] || p[7])
		return 0;
	return !nreqs || ((__u32)p[0] << 8 | p[1]) < nreqs;
}

SEC("xdp")
int count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct udphdr *udp;
	int to_us = 0;
	int bad;

	udp = our_reply(data, end, &to_us);
	if (!udp || to_us)
		return XDP_PASS;
	bad = nreqs ? check_indexed((__u8 *)(udp + 1), end)
		    : check_edges(data, end);
	if (!nspoof)
		bump(bad ? GEN_STAT_WRONG : GEN_STAT_ANSWERED);
	else if (!bad)
		bump(GEN_STAT_FLOOD_ANSWERED);
	else
		bump(dns_slip((__u8 *)(udp + 1), end) ? GEN_STAT_FLOOD_SLIPPED
						      : GEN_STAT_WRONG);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
