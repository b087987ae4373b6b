/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel tier's packet helpers, for BPF programs: a payload's bytes,
 * growing or shrinking it, reversing bytes, the checksum, and turning a
 * request into its reply exactly as user space does. A function's XDP
 * program gets them through rr_xdp.h; reqrouter's steering program
 * (kern/) and the reflector tool include this file alone, since they
 * declare no function entry point. Nothing here touches a map.
 *
 * Needs kernel 5.18 (bpf_xdp_load_bytes/store_bytes); reqrouter checks.
 */
#ifndef RR_XDP_PACKET_H
#define RR_XDP_PACKET_H

#include <linux/bpf.h>
#include <linux/errno.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "rr_xdp_req.h"

#ifndef AF_INET
#define AF_INET 2
#define AF_INET6 10
#endif

#define RR_REPLY_TTL 64

/* A pointer to @n (a constant) payload bytes at @off, or NULL past the
 * end of the frame. */
static __always_inline void *rr_xdp_bytes(struct xdp_md *ctx,
					  const struct rr_xdp_req *req,
					  __u32 off, const __u32 n)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 o = (__u64)req->payload_off + off;
	void *p;

	if (o > RR_XDP_MAX_FRAME)
		return NULL;
	p = data + o;
	if (p + n > end)
		return NULL;
	return p;
}

/* Sets the payload to @len bytes, growing or shrinking the frame; 0 or
 * -errno (no room to grow: punt instead). */
static __always_inline int rr_xdp_resize(struct xdp_md *ctx,
					 struct rr_xdp_req *req, __u32 len)
{
	long cur = (long)ctx->data_end - (long)ctx->data;
	long want = (long)req->payload_off + len;

	if (len > req->room)
		return -EMSGSIZE;
	if (want == cur)
		return 0;
	return bpf_xdp_adjust_tail(ctx, (int)(want - cur));
}

/* Hides a value from clang's rewriting (e.g. "p + (len - 8)" into
 * "(p + len) - 8", which the verifier refuses as a negative offset). */
#define rr_opaque(x) asm volatile("" : "+r"(x))

/*
 * Reverses @len bytes at @off from the frame start in place: 8-byte words
 * from both ends (bswap), the middle byte by byte. A global function: the
 * verifier checks it once for any offset and length, and every offset is
 * derived from a loop counter it knows exactly. 0, or -1 if the frame is
 * shorter than that.
 */
__attribute__((noinline)) int rr_xdp_reverse(struct xdp_md *ctx, __u64 off,
					     __u64 len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 k, i, m, o, *pa, *pb, a, b;
	__u8 *p, *ca, *cb, t;

	if (off > RR_XDP_MAX_L3_OFF + 68 || len > RR_XDP_MAX_PAYLOAD)
		return -1;
	p = data + off;
	for (k = 0; k < RR_XDP_MAX_PAYLOAD / 16; k++) {
		if (len < 16 * (k + 1))
			break;
		pa = (__u64 *)(p + 8 * k);
		/* clang turns o into its own induction variable; check
		 * it where it is used so the verifier knows its range. */
		o = len - 8 - 8 * k;
		rr_opaque(o);
		if (o > RR_XDP_MAX_PAYLOAD - 8)
			return -1;
		pb = (__u64 *)(p + o);
		if ((void *)(pa + 1) > end || (void *)(pb + 1) > end)
			return -1;
		a = *pa;
		b = *pb;
		*pa = __builtin_bswap64(b);
		*pb = __builtin_bswap64(a);
	}
	/* At most 15 bytes are left in the middle. */
	m = len - 16 * k;
	p += 8 * k;
	for (i = 0; i < 8; i++) {
		if (2 * (i + 1) > m || m > 15)
			break;
		ca = p + i;
		o = m - 1 - i;
		rr_opaque(o);
		if (o > 15)
			return -1;
		cb = p + o;
		if ((void *)(ca + 1) > end || (void *)(cb + 1) > end)
			return -1;
		t = *ca;
		*ca = *cb;
		*cb = t;
	}
	return 0;
}

static __always_inline __u32 rr_fold32(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	return (__u32)s;
}

static __always_inline __u16 rr_fold16(__u64 s)
{
	__u32 v = rr_fold32(s);

	v = (v & 0xffff) + (v >> 16);
	v = (v & 0xffff) + (v >> 16);
	return (__u16)v;
}

/*
 * A handler whose reply is the request's payload with every byte left at,
 * or moved to, an offset of the same parity (echo; a reverse of odd
 * length) says so: the reply's sum is the request's, and the reply's
 * checksum is made without reading the payload again. Nothing where the
 * request's sum is unknown (an IPv4 request without a checksum): the
 * reply is then summed as it is built.
 */
static __always_inline void rr_xdp_reply_sum_same(struct rr_xdp_req *req)
{
	if (req->sums & RR_XDP_SUM_PAYLOAD) {
		req->reply_sum = req->payload_sum;
		req->sums |= RR_XDP_SUM_REPLY;
	}
}

/*
 * The same for a reply whose every byte moved to an offset of the other
 * parity (a reverse of even length): each byte changes places within its
 * 16-bit word, and so do the two bytes of the sum (RFC 1071, 2(B)).
 */
static __always_inline void rr_xdp_reply_sum_swapped(struct rr_xdp_req *req)
{
	__u16 s = req->payload_sum;

	if (req->sums & RR_XDP_SUM_PAYLOAD) {
		req->reply_sum = (__u16)(s << 8 | s >> 8);
		req->sums |= RR_XDP_SUM_REPLY;
	}
}

/*
 * @acc with the last @len bytes (0 to 7) at @p added, as 4, 2 and 1 bytes
 * (an odd last byte is at an even offset: a word's low byte): the end of
 * every ones' complement sum here. -1 (as u64) if the frame is shorter.
 */
static __always_inline __u64 rr_csum_tail(__u8 *p, void *end, __u64 len,
					  __u64 acc)
{
	if (len >= 4) {
		if ((void *)(p + 4) > end)
			return (__u64)-1;
		acc += *(__u32 *)p;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		if ((void *)(p + 2) > end)
			return (__u64)-1;
		acc += *(__u16 *)p;
		p += 2;
		len -= 2;
	}
	if (len) {
		if ((void *)(p + 1) > end)
			return (__u64)-1;
		acc += *p;
	}
	return acc;
}

/*
 * The sum of an 8-byte word's two 32-bit halves, kept apart from the
 * running sum (rr_opaque()): clang would otherwise fold "acc += lo + hi"
 * into two adds on the running sum's chain, and the JIT's code spills
 * that chain to the stack between words: each word would wait for the
 * one before. Added to it as one value, a word's loads and adds overlap
 * the next's.
 */
static __always_inline __u64 rr_csum_word(__u64 w)
{
	__u64 s = (__u32)w + (w >> 32);

	rr_opaque(s);
	return s;
}

/* The sum of the 32 bytes at @p (checked by the caller), for one add to
 * the running sum: a tree, not a chain (rr_csum_word()). */
static __always_inline __u64 rr_csum_block(const __u8 *p)
{
	__u64 s = rr_csum_word(*(const __u64 *)p) +
		  rr_csum_word(*(const __u64 *)(p + 8)) +
		  (rr_csum_word(*(const __u64 *)(p + 16)) +
		   rr_csum_word(*(const __u64 *)(p + 24)));

	rr_opaque(s);
	return s;
}

/* The last bound a summed offset may reach: what the verifier is shown. */
#define RR_XDP_CSUM_MAX_OFF (RR_XDP_MAX_L3_OFF + 68 + RR_XDP_MAX_FRAME)

/*
 * Ones' complement sum (32 bits, unfolded, memory byte order as the
 * kernel's csum_partial keeps it) of @len bytes at @off, at most @max (a
 * constant), read straight from the packet: 32 bytes a step, each 8-byte
 * word added as its two 32-bit halves to a 64-bit accumulator, so no
 * carry is ever lost (3584 bytes add up to less than 2^42) and none needs
 * checking; then 8-byte words, then the last 0-7 bytes. -1 (as u64) if
 * the frame is shorter, or @len over @max. In line: the verifier walks
 * its steps wherever it is used, so rr_xdp_csum() below is the one to
 * call, but for a sum on a path that must not pay for a call.
 */
static __always_inline __u64 rr_csum_loop(struct xdp_md *ctx, __u64 off,
					  __u64 len, const __u32 max)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 acc = 0, i;
	__u8 *p;

	if (off > RR_XDP_MAX_L3_OFF + 68 || len > max)
		return (__u64)-1;
	for (i = 0; i < max / 32; i++) {
		if (len < 32)
			break;
		/* clang would fold the offset into pointer arithmetic the
		 * verifier refuses; keep it a checked scalar. */
		rr_opaque(off);
		if (off > RR_XDP_CSUM_MAX_OFF)
			return (__u64)-1;
		p = data + off;
		if ((void *)(p + 32) > end)
			return (__u64)-1;
		acc += rr_csum_block(p);
		off += 32;
		len -= 32;
	}
	for (i = 0; i < 3; i++) {
		if (len < 8)
			break;
		rr_opaque(off);
		if (off > RR_XDP_CSUM_MAX_OFF)
			return (__u64)-1;
		p = data + off;
		if ((void *)(p + 8) > end)
			return (__u64)-1;
		acc += rr_csum_word(*(__u64 *)p);
		off += 8;
		len -= 8;
	}
	rr_opaque(off);
	if (off > RR_XDP_CSUM_MAX_OFF)
		return (__u64)-1;
	acc = rr_csum_tail(data + off, end, len, acc);
	return acc == (__u64)-1 ? acc : rr_fold32(acc);
}

/*
 * rr_csum_loop() up to the largest frame, as a global function, checked
 * once by the verifier. Under test_run this costs ~13 ns at 64 B and
 * ~115 ns at 808 B, less than bpf_csum_diff()'s helper calls at every
 * size; of it, on these VMs, about 7 ns is the call's return (the SRSO
 * thunk).
 */
__attribute__((noinline)) __u64 rr_xdp_csum(struct xdp_md *ctx, __u64 off,
					    __u64 len)
{
	return rr_csum_loop(ctx, off, len, RR_XDP_MAX_FRAME);
}

/* Swaps the words of type T at a and b. */
#define RR_SWAP_WORD(T, a, b)          \
	do {                           \
		T _t = *(T *)(a);      \
		*(T *)(a) = *(T *)(b); \
		*(T *)(b) = _t;        \
	} while (0)

/*
 * Swaps @n bytes at a and b (n a constant: 2, 4, 6 or 16, a port, an
 * IPv4 address, a MAC, an IPv6 address) in registers, a word at a time:
 * a copy through a buffer of the packed Ethernet header is a byte load
 * and store for each byte, and went through the stack. A MAC goes as
 * three 16-bit words, always aligned; an address's words may not be
 * (under VLAN tags), which the verifier refuses only on machines without
 * cheap unaligned access, where it checks packet alignment.
 */
static __always_inline void rr_swap(void *a, void *b, const __u32 n)
{
	if (n == 2) {
		RR_SWAP_WORD(__u16, a, b);
	} else if (n == 4) {
		RR_SWAP_WORD(__u32, a, b);
	} else if (n == 6) {
		RR_SWAP_WORD(__u16, a, b);
		RR_SWAP_WORD(__u16, (__u8 *)a + 2, (__u8 *)b + 2);
		RR_SWAP_WORD(__u16, (__u8 *)a + 4, (__u8 *)b + 4);
	} else if (n == 16) {
		RR_SWAP_WORD(__u64, a, b);
		RR_SWAP_WORD(__u64, (__u8 *)a + 8, (__u8 *)b + 8);
	} else {
		__u8 t[16];

		__builtin_memcpy(t, a, n);
		__builtin_memcpy(a, b, n);
		__builtin_memcpy(b, t, n);
	}
}

/*
 * Turns the request whose payload now holds @reply_len bytes into the
 * reply, exactly as user space's rr_build_reply() does: frame trimmed to
 * the reply, MACs, addresses and ports swapped, lengths set, TTL or hop
 * limit 64, the full UDP checksum recomputed (a sender with checksum
 * offload leaves a partial one, so it is not updated incrementally):
 * over the reply's payload, or from the sum the handler gave for it
 * (RR_XDP_SUM_REPLY), without reading the payload a second time. The
 * IPv4 header checksum is moved by the two words that change (RFC 1624):
 * the request's must be right, as the steering program checks before any
 * tier sees it. 0, or -1 if the frame cannot hold it.
 */
static __always_inline int rr_xdp_build_reply(struct xdp_md *ctx,
					      const struct rr_xdp_req *req,
					      __u32 reply_len)
{
	__u32 ulen = sizeof(struct udphdr) + reply_len, hlen;
	void *data, *end;
	struct udphdr *udp;
	struct ethhdr *eth;
	__u64 sum, l3, l4, ports;
	__u16 csum;

	if (reply_len > req->room ||
	    rr_xdp_resize(ctx, (struct rr_xdp_req *)req, reply_len))
		return -1;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	l3 = req->l3_off;
	l4 = req->l4_off;
	/* Where clang can prove the offsets small (the reflector's fixed
	 * headers) it drops the checks below but still reads them back from
	 * memory, where the verifier cannot: keep the checks. */
	rr_opaque(l3);
	rr_opaque(l4);
	if (l3 > RR_XDP_MAX_L3_OFF || l4 > RR_XDP_MAX_L3_OFF + 60 ||
	    (void *)(eth + 1) > end)
		return -1;
	rr_swap(eth->h_dest, eth->h_source, ETH_ALEN);
	udp = data + l4;
	/* One register for the pointer, checked once: clang would otherwise
	 * recompute it for a later store, unchecked as far as the verifier
	 * knows. */
	rr_opaque(udp);
	if ((void *)(udp + 1) > end)
		return -1;
	/* The ports' sum, which their swap keeps, read before it. */
	ports = (__u64)udp->source + udp->dest;
	rr_swap(&udp->source, &udp->dest, 2);
	udp->len = bpf_htons(ulen);
	udp->check = 0;
	if (req->family == AF_INET) {
		struct iphdr *ip = data + l3;
		__u16 *ttl_word, tot, ttl_proto;
		__u64 hsum;

		if ((void *)(ip + 1) > end)
			return -1;
		ttl_word = (__u16 *)&ip->ttl; /* TTL and protocol */
		hlen = ip->ihl * 4;
		rr_swap(&ip->saddr, &ip->daddr, 4);
		/* ~HC + ~m + m' for each changed word m (the swap moves
		 * none): the sum is the same in either byte order. The new
		 * words are made in registers and stored whole: the TTL
		 * stored as a byte and its word read back would wait for
		 * the store. */
		tot = bpf_htons(hlen + ulen);
		ttl_proto = bpf_htons((__u16)RR_REPLY_TTL << 8 | ip->protocol);
		hsum = (__u16)~ip->check;
		hsum += (__u16)~ip->tot_len + (__u16) ~*ttl_word;
		hsum += tot + ttl_proto;
		ip->tot_len = tot;
		*ttl_word = ttl_proto;
		ip->check = (__u16)~rr_fold16(hsum);
		sum = (__u64)ip->saddr + ip->daddr;
	} else {
		struct ipv6hdr *ip6 = data + l3;

		if ((void *)(ip6 + 1) > end)
			return -1;
		rr_swap(&ip6->saddr, &ip6->daddr, 16);
		ip6->payload_len = bpf_htons(ulen);
		ip6->hop_limit = RR_REPLY_TTL;
		sum = 0;
#pragma unroll
		for (int i = 0; i < 4; i++)
			sum += (__u64)ip6->saddr.in6_u.u6_addr32[i] +
			       ip6->daddr.in6_u.u6_addr32[i];
	}
	/* The pseudo-header's protocol and length, in memory order. */
	sum += bpf_htons(IPPROTO_UDP) + bpf_htons(ulen);
	if (req->sums & RR_XDP_SUM_REPLY) {
		/* The header (its checksum field 0) and the sum the handler
		 * gave for the payload. */
		l4 = ports + bpf_htons(ulen) + req->reply_sum;
	} else {
		l4 = req->l4_off;
		l4 = rr_xdp_csum(ctx, l4, ulen);
		if (l4 == (__u64)-1)
			return -1;
	}
	csum = (__u16)~rr_fold16(sum + l4);
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	l4 = req->l4_off;
	rr_opaque(l4);
	if (l4 > RR_XDP_MAX_L3_OFF + 60)
		return -1;
	udp = data + l4;
	if ((void *)(udp + 1) > end)
		return -1;
	udp->check = csum ? csum : 0xffff; /* 0 means "no checksum" */
	return 0;
}

#endif /* RR_XDP_PACKET_H */
