/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guards a request passes before either tier sees it: its
 * destination must be one of the host's own addresses (local_tab in
 * front of the local_v4/local_v6 tries, which user space keeps equal to
 * the kernel's local routes), its source port one no reply can loop
 * from (loop_port(), low_port()), and its source in the function's
 * allow-list (acl_v4/acl_v6) where it has one.
 */
#ifndef RR_LIB_GUARD_H
#define RR_LIB_GUARD_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_packet.h>

#include "lib/common.h"
#include "lib/port.h"
#include "shared/guard.h"
#include "shared/port.h"

/* Allowed source prefixes per function slot, for ports with
 * RR_PORT_ALLOWLIST set. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v4);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} acl_v4 SEC(".maps");

/* The same for IPv6 sources. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v6);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} acl_v6 SEC(".maps");

/* The host's own destinations (its local routes), for ports with
 * RR_PORT_LOCAL_DST; user space keeps them current from netlink. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_local_v4);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_LOCAL);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} local_v4 SEC(".maps");

/* The same for IPv6 destinations. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_local_v6);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_LOCAL);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} local_v6 SEC(".maps");

/* The host's own addresses, direct-mapped (struct rr_local_ent). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_local_ent);
	__uint(max_entries, RR_LOCAL_TAB);
} local_tab SEC(".maps");

/*
 * Whether the source is in function @slot's prefixes of @trie_v4 or
 * @trie_v6 (keyed by slot and address): one trie lookup. The header was
 * checked while parsing; the check is repeated because the verifier does
 * not carry it over to the saved pointer.
 */
static __always_inline int source_in(void *trie_v4, void *trie_v6, void *l3,
				     void *end, int ipv6, __u32 slot)
{
	if (ipv6) {
		struct ipv6hdr *ip6h = l3;
		struct rr_allow_v6 key = { .prefixlen = 32 + 128,
					   .slot = slot };

		if ((void *)(ip6h + 1) > end)
			return 0;
		__builtin_memcpy(key.addr, &ip6h->saddr, sizeof(key.addr));
		return bpf_map_lookup_elem(trie_v6, &key) != NULL;
	} else {
		struct iphdr *iph = l3;
		struct rr_allow_v4 key = { .prefixlen = 32 + 32, .slot = slot };

		if ((void *)(iph + 1) > end)
			return 0;
		__builtin_memcpy(key.addr, &iph->saddr, sizeof(key.addr));
		return bpf_map_lookup_elem(trie_v4, &key) != NULL;
	}
}

/* Whether the source may reach function @slot: paid only by ports that
 * have an allow-list. */
static __always_inline int source_allowed(void *l3, void *end, int ipv6,
					  __u32 slot)
{
	return source_in(&acl_v4, &acl_v6, l3, end, ipv6, slot);
}

/*
 * Whether the request's destination is one of the host's own addresses:
 * an inlined array lookup for one of them (local_tab), the tries for the
 * rest. A frame sent to our MAC for
 * another address (a router's transit traffic, an address that failed
 * over elsewhere) is the kernel's to forward or drop, never ours to
 * answer with a reply forged from that address.
 */
static __always_inline int dest_local(void *l3, void *end, int ipv6)
{
	struct rr_local_ent *e;
	__u32 slot, *d, *a;

	if (ipv6) {
		struct ipv6hdr *ip6h = l3;
		struct rr_local_v6 key = { .prefixlen = 128 };

		if ((void *)(ip6h + 1) > end)
			return 0;
		d = ip6h->daddr.in6_u.u6_addr32;
		slot = rr_local_slot(d[0] ^ d[1] ^ d[2] ^ d[3]);
		e = bpf_map_lookup_elem(&local_tab, &slot);
		if (e && e->family == AF_INET6) {
			a = (__u32 *)e->addr;
			if (a[0] == d[0] && a[1] == d[1] && a[2] == d[2] &&
			    a[3] == d[3])
				return 1;
		}
		__builtin_memcpy(key.addr, &ip6h->daddr, sizeof(key.addr));
		return bpf_map_lookup_elem(&local_v6, &key) != NULL;
	} else {
		struct iphdr *iph = l3;
		struct rr_local_v4 key = { .prefixlen = 32 };

		if ((void *)(iph + 1) > end)
			return 0;
		slot = rr_local_slot(iph->daddr);
		e = bpf_map_lookup_elem(&local_tab, &slot);
		if (e && e->family == AF_INET &&
		    *(__u32 *)e->addr == iph->daddr)
			return 1;
		__builtin_memcpy(key.addr, &iph->daddr, sizeof(key.addr));
		return bpf_map_lookup_elem(&local_v4, &key) != NULL;
	}
}

/*
 * Whether source port @sport is one a reply could loop from. A reply to
 * port 0 is meaningless, and one to a service that answers anything
 * (echo, daytime, chargen, time, or a function of ours, here or on a
 * peer) can bounce between two servers forever: such requests are
 * dropped, as inetd did. The ports served are a bitmap (port_served()),
 * not a second port_map lookup.
 */
static __always_inline int loop_port(__u32 sport)
{
	if (sport == 0 || sport == 7 || sport == 13 || sport == 19 ||
	    sport == 37)
		return 1;
	return port_served(sport);
}

/*
 * Whether source port @sport is below the function's min_src_port, where
 * the well-known services are: clients do not send from there, but a
 * spoofed request from another server's service port makes the two
 * answer each other for ever (the CVE-2024-2169 class), whatever ports
 * are served here.
 */
static __always_inline int low_port(const struct rr_port_conf *conf,
				    __u32 sport)
{
	return sport < conf->min_src_port;
}

#endif /* RR_LIB_GUARD_H */
