/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guards' keys (docs/DESIGN.md, "A request, from the NIC to its
 * reply", steps 2 and 3): the source allow-lists' (and the rate-limit
 * exemptions') LPM keys, the host's local routes for the destination
 * check, and the direct-mapped table of its own addresses in front of
 * them.
 */
#ifndef RR_SHARED_GUARD_H
#define RR_SHARED_GUARD_H

#include <linux/types.h>

#define RR_MAX_ALLOW 1024 /* allow-list entries per address family */

/*
 * Allow-list keys: the function slot then the source address, so one LPM
 * trie serves every function. prefixlen counts the slot's 32 bits too.
 */
struct rr_allow_v4 {
	__u32 prefixlen;
	__u32 slot;
	__u8 addr[4];
};

struct rr_allow_v6 {
	__u32 prefixlen;
	__u32 slot;
	__u8 addr[16];
};

/*
 * The host's own destinations, for the destination check: the kernel's
 * local routes (every address on any interface, lo's VIPs, "local"
 * prefixes such as AnyIP ranges), kept current from netlink by user space
 * (src/daemon/core/localaddr.c). A request for anything else goes to the kernel.
 * prefixlen counts address bits only.
 */
#define RR_MAX_LOCAL 4096 /* local routes per address family */

struct rr_local_v4 {
	__u32 prefixlen;
	__u8 addr[4];
};

struct rr_local_v6 {
	__u32 prefixlen;
	__u8 addr[16];
};

/*
 * In front of the tries, a direct-mapped table of the host's own
 * addresses (its local /32 and /128 routes), one per slot: the usual
 * request, for an address of ours, is then an array lookup the verifier
 * inlines, where a trie lookup costs ~25 ns. A miss, or an address whose
 * slot another one took, asks the tries, which hold the truth. User space
 * adds to the tries before the table, and clears a slot before the trie
 * loses its address, so the table never says more than the tries.
 */
#define RR_LOCAL_TAB_BITS 8
#define RR_LOCAL_TAB (1U << RR_LOCAL_TAB_BITS)

struct rr_local_ent {
	__u32 family; /* 0: empty, AF_INET (addr[0..3]) or AF_INET6 */
	__u8 addr[16];
};

/* The slot of an address folded to 32 bits (an IPv4 address as it lies in
 * memory; an IPv6 address's four words XORed). */
static __inline __u32 rr_local_slot(__u32 folded)
{
	return (folded * 0x9e3779b1U) >> (32 - RR_LOCAL_TAB_BITS);
}

#endif /* RR_SHARED_GUARD_H */
