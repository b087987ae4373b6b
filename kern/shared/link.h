/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the XDP program knows of the interface it is attached to, kept
 * current by user space while it serves (src/daemon/core/link.c): the
 * MAC address requests must be sent to, the MTU the in-kernel tier sizes
 * its replies by, and the VLANs the host has on it. And how long a frame a UMEM frame holds, which
 * never changes: a longer request is refused in XDP (frame_too_big).
 */
#ifndef RR_SHARED_LINK_H
#define RR_SHARED_LINK_H

#include "shared/common.h"

/* A UMEM frame, and the part of it a received frame may take: the
 * kernel puts RX data XDP_PACKET_HEADROOM (256) bytes in. */
#define RR_FRAME_SIZE 4096
#define RR_FRAME_DATA_MAX (RR_FRAME_SIZE - 256)

/*
 * The program's globals link_mac and link_mtu (its .data, mapped by user
 * space). link_mac holds the MAC's 6 bytes in its first 6, in wire
 * order, the rest 0: written as one aligned 8-byte store, so the program
 * never sees half of an old address and half of a new one. 0 turns the
 * check off (the BPF tests load the program bare).
 */

/*
 * link_vlans: a bit per VLAN ID (4096), the tags the host answers on the
 * interface (its VLAN devices, followed, or the setting `vlans`); with
 * link_vlan_check 0 any tag is answered. A frame with a tag outside it is
 * the kernel's (pass/vlan_not_ours): a reply would go out on a VLAN the
 * host does not have.
 */
#define RR_VLAN_WORDS 64

#endif /* RR_SHARED_LINK_H */
