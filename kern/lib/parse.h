/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsing with a bounds-checked cursor: Ethernet and up to two VLAN
 * tags, IPv4 (no options, no fragments) or IPv6 (no extension headers),
 * UDP; either end of a reply must be unicast (kern/shared/unicast.h). A
 * frame that does not parse is the kernel's, and each parser says why (an
 * enum rr_xdp_stat). And the UDP checksum, verified as the kernel would.
 */
#ifndef RR_LIB_PARSE_H
#define RR_LIB_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_packet.h>

#include "lib/link.h"
#include "shared/stats.h"
#include "shared/unicast.h"

#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

struct vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

struct cursor {
	void *pos;
	void *end;
};

/* Returns the EtherType after the Ethernet header and up to two tags;
 * *stat says why the frame is not ours (a group address at either end,
 * another host's destination), or stays 0. */
static __always_inline int parse_eth(struct cursor *c, int *stat)
{
	struct ethhdr *eth = c->pos;
	struct vlan_hdr *vlan;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > c->end)
		return -1;
	proto = eth->h_proto;
	if (!rr_mac_unicast(eth->h_dest, eth->h_source))
		*stat = RR_XDP_PASS_NOT_UNICAST;
	/* Frames for another host (a promiscuous interface, a bridge
	 * port) are the kernel's to drop. */
	else if (!link_mac_ours(eth->h_dest))
		*stat = RR_XDP_PASS_OTHER_HOST;
	c->pos = eth + 1;
#pragma unroll
	for (i = 0; i < 2; i++) {
		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		vlan = c->pos;
		if ((void *)(vlan + 1) > c->end)
			return -1;
		if (!*stat && !link_vlan_ours(vlan->tci))
			*stat = RR_XDP_PASS_VLAN;
		proto = vlan->encap_proto;
		c->pos = vlan + 1;
	}
	return bpf_ntohs(proto);
}

/* Returns the L4 protocol, or a negative rr_xdp_stat to pass for. */
static __always_inline int parse_ipv4(struct cursor *c, __u32 *l4_len)
{
	struct iphdr *iph = c->pos;
	__u32 hlen, tot;

	if ((void *)(iph + 1) > c->end)
		return -RR_XDP_PASS_MALFORMED;
	hlen = iph->ihl * 4;
	tot = bpf_ntohs(iph->tot_len);
	if (iph->version != 4 || hlen < sizeof(*iph) || tot < hlen ||
	    c->pos + tot > c->end)
		return -RR_XDP_PASS_MALFORMED;
	if (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET))
		return -RR_XDP_PASS_FRAGMENT;
	/* Options (record route, timestamps, source routes) ask things of
	 * the host that a reply built by swapping addresses would get wrong:
	 * the kernel's to handle. */
	if (hlen != sizeof(*iph))
		return -RR_XDP_PASS_IP_OPTIONS;
	if (!rr_ipv4_unicast((__u8 *)&iph->saddr) ||
	    !rr_ipv4_unicast((__u8 *)&iph->daddr))
		return -RR_XDP_PASS_NOT_UNICAST;
	*l4_len = tot - hlen;
	c->pos += hlen;
	return iph->protocol;
}

static __always_inline int parse_ipv6(struct cursor *c, __u32 *l4_len)
{
	struct ipv6hdr *ip6h = c->pos;
	__u32 plen;

	if ((void *)(ip6h + 1) > c->end)
		return -RR_XDP_PASS_MALFORMED;
	plen = bpf_ntohs(ip6h->payload_len);
	if (ip6h->version != 6 || (void *)(ip6h + 1) + plen > c->end)
		return -RR_XDP_PASS_MALFORMED;
	switch (ip6h->nexthdr) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_FRAGMENT:
	case IPPROTO_DSTOPTS:
	case IPPROTO_AH:
	case IPPROTO_ESP:
	case IPPROTO_MH:
		return -RR_XDP_PASS_IPV6_EXT;
	}
	if (!rr_ipv6_unicast(ip6h->saddr.in6_u.u6_addr8) ||
	    !rr_ipv6_unicast(ip6h->daddr.in6_u.u6_addr8))
		return -RR_XDP_PASS_NOT_UNICAST;
	*l4_len = plen;
	c->pos = ip6h + 1;
	return ip6h->nexthdr;
}

/* Payloads up to this long are summed in line (csum_small()). */
/*
 * The source address of the IPv4 or IPv6 header at @l3 (@end the
 * frame's) as two words, as the heavy hitters, the rate limiter and the
 * canaries hash it: an IPv4 address in @a, @b 0; an IPv6 one's first 8
 * bytes in @a, its last 8 in @b. Returns -1 for a header past @end.
 */
static __always_inline int src_words(void *l3, void *end, int ipv6, __u64 *a,
				     __u64 *b)
{
	*a = 0;
	*b = 0;
	if (ipv6) {
		struct ipv6hdr *ip6h = l3;

		if ((void *)(ip6h + 1) > end)
			return -1;
		__builtin_memcpy(a, &ip6h->saddr.in6_u.u6_addr8[0], 8);
		__builtin_memcpy(b, &ip6h->saddr.in6_u.u6_addr8[8], 8);
	} else {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > end)
			return -1;
		*a = iph->saddr;
	}
	return 0;
}

#define CSUM_SMALL 64
/* The longest payload the in-kernel tier's own check sums in line: a
 * datagram that fills a 1500-byte link's IPv4 packet. */
#define CSUM_IN_LINE 1472

/*
 * The ones' complement sum of the @n bytes at @p (n at most CSUM_SMALL),
 * as rr_xdp_csum() sums them but in line: a call into it costs more than
 * the sum of 64 bytes on these VMs (7 ns for its return, the SRSO
 * thunk). Left unfolded (under 2^36): its one reader folds it to 16 bits
 * at once. -1 (as u64) if the frame is shorter.
 */
static __always_inline __u64 csum_small(__u8 *p, void *end, __u32 n)
{
	__u64 acc = 0;
	int i;

#pragma unroll
	for (i = 0; i < CSUM_SMALL / 8; i++) {
		if (n < 8)
			break;
		if ((void *)(p + 8) > end)
			return (__u64)-1;
		acc += rr_csum_word(*(__u64 *)p);
		p += 8;
		n -= 8;
	}
	return rr_csum_tail(p, end, n, acc);
}

/*
 * Whether the request's UDP checksum is one the kernel would accept: the
 * full sum over the pseudo-header and the datagram checks out, or the
 * field holds only the pseudo-header's sum, as a local sender with
 * checksum offload (a veth peer, a container) leaves it for the device to
 * finish (the kernel trusts such a frame, CHECKSUM_PARTIAL). A zero field
 * over IPv4 means "no checksum". The same rule as user space's
 * rr_udp_csum_ok(). Only what the in-kernel tier answers pays for it: user
 * space checks what it is handed. The payload's own sum is kept in @req
 * (RR_XDP_SUM_PAYLOAD): a handler whose reply has the same sum, or its
 * bytes swapped, says so, and the reply is not summed again. @in_line, a
 * constant: the in-kernel tier's check, on every request it answers,
 * sums up to CSUM_IN_LINE bytes without a call into rr_xdp_csum(), whose
 * return alone costs 5-7 ns on these VMs (the price list: 800 bytes 4-6
 * ns less; the verifier walks the loop on each path to it, 60 000
 * instructions more); the rarer checks (the reply cache's hit, a gather's
 * reply, a slip) call.
 */
static __always_inline int
udp_csum_ok(struct xdp_md *ctx, struct rr_xdp_req *req, const int in_line)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 l3_off = req->l3_off, l4_off = req->l4_off, pseudo, sum, hdr;
	struct udphdr *udp;
	__u16 field, ulen;

	/* Offsets the verifier can bound (options never get here). */
	rr_opaque(l3_off);
	rr_opaque(l4_off);
	if (l3_off > RR_XDP_MAX_L3_OFF || l4_off > RR_XDP_MAX_L3_OFF + 40)
		return 0;
	udp = data + l4_off;
	if ((void *)(udp + 1) > end)
		return 0;
	field = udp->check;
	ulen = udp->len;
	if (req->family == AF_INET6) {
		struct ipv6hdr *ip6 = data + l3_off;

		if ((void *)(ip6 + 1) > end)
			return 0;
		pseudo = 0;
#pragma unroll
		for (int i = 0; i < 4; i++)
			pseudo += (__u64)ip6->saddr.in6_u.u6_addr32[i] +
				  ip6->daddr.in6_u.u6_addr32[i];
	} else {
		struct iphdr *ip = data + l3_off;

		if (!field)
			return 1;
		if ((void *)(ip + 1) > end)
			return 0;
		pseudo = (__u64)ip->saddr + ip->daddr;
	}
	pseudo += bpf_htons(IPPROTO_UDP) + ulen;
	/* The header and the pseudo-header, folded while the payload is
	 * summed; then the payload, whose sum is kept for the reply's
	 * checksum (rr_xdp_reply_sum_same()). */
	hdr = rr_fold16(pseudo + udp->source + udp->dest + ulen + field);
	if (bpf_ntohs(ulen) < sizeof(*udp))
		return 0;
	if (bpf_ntohs(ulen) - sizeof(*udp) <= CSUM_SMALL)
		sum = csum_small((__u8 *)(udp + 1), end,
				 bpf_ntohs(ulen) - sizeof(*udp));
	else if (in_line && bpf_ntohs(ulen) - sizeof(*udp) <= CSUM_IN_LINE)
		sum = rr_csum_loop(ctx, l4_off + sizeof(*udp),
				   bpf_ntohs(ulen) - sizeof(*udp),
				   CSUM_IN_LINE);
	else
		sum = rr_xdp_csum(ctx, l4_off + sizeof(*udp),
				  bpf_ntohs(ulen) - sizeof(*udp));
	if (sum == (__u64)-1)
		return 0;
	req->payload_sum = rr_fold16(sum);
	req->sums |= RR_XDP_SUM_PAYLOAD;
	/* Two 16-bit sums: one fold, with its carry, is the whole sum. */
	sum = (__u32)req->payload_sum + hdr;
	return (__u16)(sum + (sum >> 16)) == 0xffff ||
	       field == rr_fold16(pseudo);
}

#endif /* RR_LIB_PARSE_H */
