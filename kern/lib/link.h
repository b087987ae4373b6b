/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface's MAC and MTU as the program reads them (shared/link.h):
 * a global in .data that user space rewrites when netlink says they
 * changed, so a read is a plain load of a map value.
 */
#ifndef RR_LIB_LINK_H
#define RR_LIB_LINK_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "shared/link.h"

volatile __u64 link_mac SEC(".data") = 0;
volatile __u32 link_mtu = 1500;

/* Whether @dst is this interface's address, or the check is off. */
static __always_inline int link_mac_ours(const __u8 *dst)
{
	__u64 mac = link_mac;
	__u64 got = 0;

	if (!mac)
		return 1;
	__builtin_memcpy(&got, dst, 6);
	return got == mac;
}

#endif /* RR_LIB_LINK_H */
