// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel reflector: runs reverse (port 1232) or echo (port 7) on a
 * UDP request inside XDP and answers with XDP_TX. No copy to user space,
 * no socket, no skb: the ceiling of what any server on this path can do,
 * so the benchmark shows how far reqrouter and the socket servers are
 * from it.
 *
 * The reversal swaps 8-byte words from both ends (bswap) and finishes the
 * middle byte by byte, every loop bounded by a constant for the verifier.
 * The UDP checksum is recomputed in full: a sender with checksum offload
 * leaves a partial one, so an incremental update would be wrong.
 *
 * A second program, "pass", does nothing but XDP_PASS: a veth only takes
 * XDP_TX frames from its peer when an XDP program runs on it, so the
 * client side of the test bed loads this one.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define MAX_PAYLOAD 1472 /* a 1500-byte MTU minus IPv4 and UDP headers */

/* Hides a value from clang's rewriting (e.g. "p + (len - 8)" into
 * "(p + len) - 8", which the verifier refuses as a negative offset). */
#define opaque(x) asm volatile("" : "+r"(x))

/* Ports served; load-time knobs, so the reflector can stand in for a
 * function moved to another port. */
const volatile __u16 port_reverse = 1232;
const volatile __u16 port_echo = 7;

enum { STAT_REFLECTED, STAT_PASSED, STAT_MAX };

/* Per-CPU counters: requests answered, packets left to the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline int count(__u32 idx, int verdict)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
	return verdict;
}

/*
 * The loops below are global functions: the verifier checks each once,
 * for any offset and length, instead of once per path through the
 * parser, and every offset is a 64-bit value derived from a loop counter
 * it knows exactly, so its bounds survive.
 *
 * reverse_payload() reverses @len bytes at @off from the frame start in
 * place; -1 if the frame is shorter than that.
 */
__attribute__((noinline)) int reverse_payload(struct xdp_md *ctx, __u64 off,
					      __u64 len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 k, i, m, o, *pa, *pb, a, b;
	__u8 *p, *ca, *cb, t;

	if (off > 128 || len > MAX_PAYLOAD)
		return -1;
	p = data + off;
	for (k = 0; k < MAX_PAYLOAD / 16; k++) {
		if (len < 16 * (k + 1))
			break;
		pa = (__u64 *)(p + 8 * k);
		/* clang turns o into its own induction variable; check
		 * it where it is used so the verifier knows its range. */
		o = len - 8 - 8 * k;
		opaque(o);
		if (o > MAX_PAYLOAD - 8)
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
		opaque(o);
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

/*
 * Ones' complement sum (folded to 16 bits, native byte order, as the
 * kernel's csum helpers keep it) of @len bytes at @off: the UDP header
 * and payload. -1 if the frame is shorter than that.
 */
__attribute__((noinline)) int sum_udp(struct xdp_md *ctx, __u64 off, __u64 len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 k, i, s = 0, m;
	__u32 *w;
	__u8 *p, *c;

	if (off > 128 || len > MAX_PAYLOAD + 8)
		return -1;
	p = data + off;
	for (k = 0; k < (MAX_PAYLOAD + 8) / 4; k++) {
		if (len < 4 * (k + 1))
			break;
		w = (__u32 *)(p + 4 * k);
		if ((void *)(w + 1) > end)
			return -1;
		s += *w;
	}
	m = len - 4 * k;
	p += 4 * k;
	for (i = 0; i < 3; i++) {
		if (i >= m || m > 3)
			break;
		c = p + i;
		if ((void *)(c + 1) > end)
			return -1;
		/* Even offsets are the low byte of a little-endian word. */
		s += (i & 1) ? (__u64)*c << 8 : *c;
	}
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (int)s;
}

static __always_inline __u16 fold(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)s;
}

static __always_inline void swap_mac(struct ethhdr *eth)
{
	__u8 tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, tmp, ETH_ALEN);
}

SEC("xdp")
int reflect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct udphdr *udp;
	struct ipv6hdr *ip6;
	struct iphdr *ip4;
	__u32 ulen, plen, i;
	__u64 sum = 0;
	__be32 t4;
	__be16 tp;
	__u16 dport, csum;
	int v6, r;

	if ((void *)(eth + 1) > end)
		return count(STAT_PASSED, XDP_PASS);
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip4 = (void *)(eth + 1);
		if ((void *)(ip4 + 1) > end || ip4->ihl != 5 ||
		    ip4->protocol != IPPROTO_UDP ||
		    (ip4->frag_off & bpf_htons(0x3fff)))
			return count(STAT_PASSED, XDP_PASS);
		udp = (void *)(ip4 + 1);
		ip6 = NULL;
		v6 = 0;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return count(STAT_PASSED, XDP_PASS);
		udp = (void *)(ip6 + 1);
		ip4 = NULL;
		v6 = 1;
	} else {
		return count(STAT_PASSED, XDP_PASS);
	}
	if ((void *)(udp + 1) > end)
		return count(STAT_PASSED, XDP_PASS);
	dport = bpf_ntohs(udp->dest);
	if (dport != port_reverse && dport != port_echo)
		return count(STAT_PASSED, XDP_PASS);
	ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(*udp) || ulen > MAX_PAYLOAD + sizeof(*udp) ||
	    (void *)udp + ulen > end)
		return count(STAT_PASSED, XDP_PASS);
	plen = ulen - sizeof(*udp);

	if (dport == port_reverse &&
	    reverse_payload(ctx, (void *)(udp + 1) - data, plen) < 0)
		return count(STAT_PASSED, XDP_DROP);

	swap_mac(eth);
	tp = udp->source;
	udp->source = udp->dest;
	udp->dest = tp;
	/* The pseudo-header is the same sum whichever way round. A flag,
	 * not a NULL test: the verifier cannot null-check a packet pointer. */
	if (!v6) {
		t4 = ip4->saddr;
		ip4->saddr = ip4->daddr;
		ip4->daddr = t4;
		sum = (__u64)ip4->saddr + ip4->daddr;
	} else {
		for (i = 0; i < 4; i++) {
			t4 = ip6->saddr.in6_u.u6_addr32[i];
			ip6->saddr.in6_u.u6_addr32[i] =
				ip6->daddr.in6_u.u6_addr32[i];
			ip6->daddr.in6_u.u6_addr32[i] = t4;
			sum += (__u64)ip6->saddr.in6_u.u6_addr32[i] +
			       ip6->daddr.in6_u.u6_addr32[i];
		}
	}
	sum += bpf_htons(IPPROTO_UDP) + udp->len;
	udp->check = 0;
	r = sum_udp(ctx, (void *)udp - data, ulen);
	if (r < 0)
		return count(STAT_PASSED, XDP_DROP);
	csum = ~fold(sum + (__u64)r);
	udp->check = csum ? csum : 0xffff;
	return count(STAT_REFLECTED, XDP_TX);
}

SEC("xdp")
int pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
