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

/*
 * Not ff00::/8, :: or ::1. Bytes 0-14 are read as two overlapping words
 * (0-7 and 7-14), whatever the byte order, and the function is kept in
 * line: a BPF subprogram call costs some 7 ns on these VMs (a return
 * through the SRSO thunk), twice per IPv6 request.
 */
static __inline __attribute__((always_inline)) int
rr_ipv6_unicast(const __u8 *a)
{
	__u64 lo, mid;

	__builtin_memcpy(&lo, a, 8);
	__builtin_memcpy(&mid, a + 7, 8);
	return a[0] != 0xff && ((lo | mid) || a[15] > 1);
}

#endif /* RR_SHARED_UNICAST_H */
