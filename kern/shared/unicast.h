/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which addresses may be either end of a reply: the one rule the XDP
 * program (kern/lib/parse.h, which passes such requests to the kernel)
 * and user space (src/lib/packet.c, which drops them) both apply. A reply
 * swaps the ends, so a spoofed source must not aim it at a group, at
 * 0.0.0.0/8 or at the host itself. Byte pointers and fixed-width types
 * only: the same code compiles for BPF and for user space.
 */
#ifndef RR_SHARED_UNICAST_H
#define RR_SHARED_UNICAST_H

#include <linux/types.h>

/* Neither MAC is a group (multicast or broadcast) address. */
static __inline int rr_mac_unicast(const __u8 *dst, const __u8 *src)
{
	return !((dst[0] | src[0]) & 1);
}

/* Not 224/4 and above (multicast, reserved, broadcast), 0/8 or 127/8. */
static __inline int rr_ipv4_unicast(const __u8 *a)
{
	return a[0] < 224 && a[0] != 0 && a[0] != 127;
}

/* Not ff00::/8, :: or ::1. */
static __inline int rr_ipv6_unicast(const __u8 *a)
{
	__u8 high = 0;
	int i;

	for (i = 0; i < 15; i++)
		high |= a[i];
	return a[0] != 0xff && (high || a[15] > 1);
}

#endif /* RR_SHARED_UNICAST_H */
