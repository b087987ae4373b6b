/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface's MAC, MTU and VLANs as the program reads them
 * (shared/link.h): globals in .data that user space rewrites when netlink
 * says they changed, so a read is a plain load of a map value.
 */
#ifndef RR_LIB_LINK_H
#define RR_LIB_LINK_H

#include <linux/types.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "shared/link.h"

volatile __u64 link_mac SEC(".data") = 0;
volatile __u32 link_mtu SEC(".data") = 1500;
/* Whether a tagged frame's VLAN IDs are checked against link_vlans (the
 * BPF tests load the program bare: any tag). */
volatile __u32 link_vlan_check SEC(".data") = 0;
volatile __u64 link_vlans[RR_VLAN_WORDS] SEC(".data") = {};

/* Whether @dst is this interface's address, or the check is off: three
 * 16-bit words against link_mac's bytes as user space stored them (a
 * copy of ethhdr's packed bytes is six byte loads and their shifts). */
static __always_inline int link_mac_ours(const __u8 *dst)
{
	const __u16 *d = (const __u16 *)dst;
	__u64 mac = link_mac;
	__u16 m[4];

	if (!mac)
		return 1;
	__builtin_memcpy(m, &mac, sizeof(m));
	return !((d[0] ^ m[0]) | (d[1] ^ m[1]) | (d[2] ^ m[2]));
}

/* Whether a tag's TCI (network order) is one the host answers: VLAN ID 0
 * (a priority tag, 802.1p) always is. */
static __always_inline int link_vlan_ours(__be16 tci)
{
	__u32 vid = bpf_ntohs(tci) & 0xfff;

	if (!vid || !link_vlan_check)
		return 1;
	return !!(link_vlans[(vid >> 6) & (RR_VLAN_WORDS - 1)] &
		  (1ULL << (vid & 63)));
}

#endif /* RR_LIB_LINK_H */
