// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouter's XDP program: parses Ethernet, up to two VLAN tags, IPv4 or
 * IPv6 and UDP; a datagram for a port that has a function is redirected to
 * one of that port's AF_XDP sockets on the receiving queue, round-robin.
 * Everything else, including whatever it cannot parse, goes to the kernel
 * untouched (XDP_PASS), so the host's own traffic never notices.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "rr_shared.h"

#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

/*
 * The interface's MAC, set before load: frames for another host (a
 * promiscuous interface, a bridge port) are the kernel's to drop. All
 * zeros turns the check off (the BPF tests load the program bare).
 */
const volatile __u8 if_mac[ETH_ALEN] = {};

struct vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

/* Function and socket count per UDP destination port (host order). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_port_conf);
	__uint(max_entries, 65536);
} port_map SEC(".maps");

/* AF_XDP sockets, keyed by RR_XSK_KEY(queue, slot, thread). */
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
	__uint(max_entries, RR_MAX_QUEUES *RR_MAX_PORTS);
} rr_cursor SEC(".maps");

/* Allowed source prefixes per function slot, for ports with
 * RR_PORT_ALLOWLIST set. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v4);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} acl_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v6);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} acl_v6 SEC(".maps");

/* Packets per (queue, enum rr_xdp_stat), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, RR_STATS_SIZE);
} xdp_stats SEC(".maps");

struct cursor {
	void *pos;
	void *end;
};

static __always_inline int count(__u32 queue, enum rr_xdp_stat stat, int act)
{
	__u32 key = queue * RR_XDP_STAT_MAX + stat;
	__u64 *cnt = bpf_map_lookup_elem(&xdp_stats, &key);

	if (cnt)
		*cnt += 1;
	return act;
}

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
	if ((eth->h_dest[0] | eth->h_source[0]) & 1)
		*stat = RR_XDP_PASS_NOT_UNICAST;
	else if ((if_mac[0] | if_mac[1] | if_mac[2] | if_mac[3] | if_mac[4] |
		  if_mac[5]) &&
		 (eth->h_dest[0] != if_mac[0] || eth->h_dest[1] != if_mac[1] ||
		  eth->h_dest[2] != if_mac[2] || eth->h_dest[3] != if_mac[3] ||
		  eth->h_dest[4] != if_mac[4] || eth->h_dest[5] != if_mac[5]))
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
		proto = vlan->encap_proto;
		c->pos = vlan + 1;
	}
	return bpf_ntohs(proto);
}

/*
 * Whether the source may reach function @slot: one trie lookup, paid only
 * by ports that have an allow-list. The header was checked while parsing;
 * the check is repeated because the verifier does not carry it over to
 * the saved pointer.
 */
static __always_inline int source_allowed(void *l3, void *end, int ipv6,
					  __u32 slot)
{
	if (ipv6) {
		struct ipv6hdr *ip6h = l3;
		struct rr_allow_v6 key = { .prefixlen = 32 + 128,
					   .slot = slot };

		if ((void *)(ip6h + 1) > end)
			return 0;
		__builtin_memcpy(key.addr, &ip6h->saddr, sizeof(key.addr));
		return bpf_map_lookup_elem(&acl_v6, &key) != NULL;
	} else {
		struct iphdr *iph = l3;
		struct rr_allow_v4 key = { .prefixlen = 32 + 32, .slot = slot };

		if ((void *)(iph + 1) > end)
			return 0;
		__builtin_memcpy(key.addr, &iph->saddr, sizeof(key.addr));
		return bpf_map_lookup_elem(&acl_v4, &key) != NULL;
	}
}

/*
 * Whether an address may be either end of a reply (which swaps them): not
 * multicast or broadcast, not 0/8, not loopback. Such requests go to the
 * kernel, which knows what to do with them.
 */
static __always_inline int ipv4_unicast(__be32 addr)
{
	__u8 first = bpf_ntohl(addr) >> 24;

	return first < 224 && first != 0 && first != 127;
}

static __always_inline int ipv6_unicast(struct in6_addr *a)
{
	/* not ff00::/8, ::, ::1 */
	return a->in6_u.u6_addr8[0] != 0xff &&
	       (a->in6_u.u6_addr32[0] || a->in6_u.u6_addr32[1] ||
		a->in6_u.u6_addr32[2] || bpf_ntohl(a->in6_u.u6_addr32[3]) > 1);
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
	if (!ipv4_unicast(iph->saddr) || !ipv4_unicast(iph->daddr))
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
	if (!ipv6_unicast(&ip6h->saddr) || !ipv6_unicast(&ip6h->daddr))
		return -RR_XDP_PASS_NOT_UNICAST;
	*l4_len = plen;
	c->pos = ip6h + 1;
	return ip6h->nexthdr;
}

SEC("xdp")
int reqrouter_xdp(struct xdp_md *ctx)
{
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	__u32 queue = ctx->rx_queue_index;
	struct rr_port_conf *conf, *sconf;
	__u32 l4_len = 0, key, *rr;
	struct udphdr *udph;
	int proto, act, ipv6, not_ours = 0;
	void *l3;

	if (queue >= RR_MAX_QUEUES)
		return count(RR_MAX_QUEUES, RR_XDP_PASS_QUEUE_RANGE, XDP_PASS);

	proto = parse_eth(&c, &not_ours);
	/* Broadcast and multicast are the kernel's: answering a group
	 * address would be a reply from it, and a reflector. */
	if (proto >= 0 && not_ours)
		return count(queue, not_ours, XDP_PASS);
	l3 = c.pos;
	ipv6 = proto == ETH_P_IPV6;
	if (proto == ETH_P_IP)
		proto = parse_ipv4(&c, &l4_len);
	else if (proto == ETH_P_IPV6)
		proto = parse_ipv6(&c, &l4_len);
	else if (proto < 0)
		return count(queue, RR_XDP_PASS_MALFORMED, XDP_PASS);
	else
		return count(queue, RR_XDP_PASS_NOT_IP, XDP_PASS);

	if (proto < 0)
		return count(queue, -proto, XDP_PASS);
	if (proto != IPPROTO_UDP)
		return count(queue, RR_XDP_PASS_NOT_UDP, XDP_PASS);

	udph = c.pos;
	if ((void *)(udph + 1) > c.end)
		return count(queue, RR_XDP_PASS_MALFORMED, XDP_PASS);
	/* A datagram must fit the IP payload; the kernel drops it otherwise. */
	if (bpf_ntohs(udph->len) < sizeof(*udph) ||
	    bpf_ntohs(udph->len) > l4_len)
		return count(queue, RR_XDP_PASS_MALFORMED, XDP_PASS);

	key = bpf_ntohs(udph->dest);
	conf = bpf_map_lookup_elem(&port_map, &key);
	if (!conf || !conf->nsocks || conf->slot >= RR_MAX_PORTS)
		return count(queue, RR_XDP_PASS_NO_FUNCTION, XDP_PASS);
	/*
	 * A reply to port 0 is meaningless, and one to a service that answers
	 * anything (echo, daytime, chargen, time, or a function of ours, here
	 * or on a peer) can bounce between two servers forever: drop them, as
	 * inetd did.
	 */
	key = bpf_ntohs(udph->source);
	if (key == 0 || key == 7 || key == 13 || key == 19 || key == 37)
		return count(queue, RR_XDP_DROP_LOOP_PORT, XDP_DROP);
	sconf = bpf_map_lookup_elem(&port_map, &key);
	if (sconf && sconf->nsocks)
		return count(queue, RR_XDP_DROP_LOOP_PORT, XDP_DROP);
	/* Unwanted sources cost one lookup and go no further. */
	if (conf->flags & RR_PORT_ALLOWLIST &&
	    !source_allowed(l3, c.end, ipv6, conf->slot))
		return count(queue, RR_XDP_DROP_NOT_ALLOWED, XDP_DROP);

	key = queue * RR_MAX_PORTS + conf->slot;
	rr = bpf_map_lookup_elem(&rr_cursor, &key);
	if (!rr)
		return count(queue, RR_XDP_PASS_NO_SOCKET, XDP_PASS);
	if (*rr >= conf->nsocks || *rr >= RR_MAX_THREADS)
		*rr = 0;
	key = RR_XSK_KEY(queue, conf->slot, *rr);
	*rr += 1;

	/* XDP_PASS as the fallback: a missing socket never drops silently. */
	act = bpf_redirect_map(&xsks_map, key, XDP_PASS);
	if (act != XDP_REDIRECT)
		return count(queue, RR_XDP_PASS_NO_SOCKET, act);
	return count(queue, RR_XDP_REDIRECT, act);
}

char _license[] SEC("license") = "GPL";
