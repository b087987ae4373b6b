/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The request an in-kernel function is handed, and the in-kernel tier's
 * limits: part of the function API (rr_xdp.h includes it) and of the ABI
 * between a function's XDP object and reqrouter's steering program, which
 * fills it. Plain fixed-width types only, so that user space (the config's
 * xdp_max_payload range) and kern/ compile it unchanged.
 */
#ifndef RR_XDP_REQ_H
#define RR_XDP_REQ_H

#include <linux/types.h>

/*
 * The largest frame the in-kernel tier handles: a veth (or any driver
 * without multi-buffer XDP) caps the MTU near 3.5 KB for a program like
 * ours; longer requests go to user space, and never reach a function's
 * XDP program.
 */
#define RR_XDP_MAX_FRAME 3584
#define RR_XDP_MAX_PAYLOAD (RR_XDP_MAX_FRAME - 22 - 48)
#define RR_XDP_MAX_L3_OFF (14 + 8) /* Ethernet and two VLAN tags */

#define RR_XDP_PUNT (-1000) /* a handler's "not here": user space answers */
/*
 * A punt with the request's class, 0 to RR_XDP_CLASSES - 1: under
 * steering = groups the request goes to the workers of that class's
 * group (the function's `workers`, groups separated by '|'), so that a
 * function's XDP program can keep its slow requests off the workers of
 * its quick ones. Class 0 is RR_XDP_PUNT.
 */
#define RR_XDP_CLASSES 4
#define RR_XDP_PUNT_CLASS(k) (RR_XDP_PUNT - (int)(k))
/* The class of verdict @v, or -1 if it is no punt. */
#define RR_XDP_PUNT_CLASS_OF(v)                                   \
	((v) <= RR_XDP_PUNT && (v) > RR_XDP_PUNT - RR_XDP_CLASSES \
		 ? RR_XDP_PUNT - (v)                              \
		 : -1)

/* The request, as the steering program checked it. Offsets are from the
 * start of the frame, ports in host byte order. */
struct rr_xdp_req {
	__u32 queue;  /* RX queue it arrived on */
	__u32 slot;   /* function slot */
	__u32 nsocks; /* the function's sockets per queue (a punt is steered
		       * by the port's entry, not by this) */
	__u16 l3_off; /* IP header */
	__u16 l4_off; /* UDP header */
	__u16 payload_off;
	__u16 payload_len; /* from the UDP length */
	__u16 room;	   /* the longest reply allowed */
	__u16 src_port;
	__u16 dst_port;
	__u8 family;	  /* AF_INET or AF_INET6 */
	__u8 amp_limited; /* room was cut by the amplification limit */
	/* Served on an xdp_spread CPU, from a cpumap: a reply leaves by a
	 * redirect to the receiving device (XDP_TX is no action there),
	 * and what the handler does not answer cannot reach a worker. */
	__u8 spread;
	/* Which of the sums below hold (RR_XDP_SUM_*): cleared for every
	 * request before the steering program looks at it. */
	__u8 sums;
	/* reqrouter's, for RR_XDP_FUNCTION (rr_xdp.h), not the handler's:
	 * the keys of the counters it bumps, so that their layout stays the
	 * steering program's, and the handler's verdict when it hands the
	 * request back through rr_verdict. */
	__u32 rx_key; /* in fn_stats: given to it, not answered */
	__u32 tx_key; /* in fn_stats: answered by it */
	__s32 verdict;
	/* The payload's ones' complement sum, folded to 16 bits in memory
	 * byte order: the request's, found while its UDP checksum was
	 * checked (RR_XDP_SUM_PAYLOAD); and the reply's, where the handler
	 * knows it without reading the reply (RR_XDP_SUM_REPLY, set by
	 * rr_xdp_reply_sum_same() or _swapped()), so that the reply's
	 * checksum is made without a second pass over the payload. */
	__u16 payload_sum;
	__u16 reply_sum;
	/* reqrouter's: what the request is marked for (RR_MARK_*,
	 * rr_xdp_capture.h), 0 for most. */
	__u8 mark;
	__u8 pad[3];
};

#define RR_XDP_SUM_PAYLOAD 0x1
#define RR_XDP_SUM_REPLY 0x2

#endif /* RR_XDP_REQ_H */
