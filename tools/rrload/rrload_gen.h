/* SPDX-License-Identifier: GPL-2.0 */
/* What rrload_gen.bpf.c and xdpgen.c agree on. */
#ifndef RRLOAD_GEN_H
#define RRLOAD_GEN_H

#define GEN_HDR_MAX 62 /* Ethernet + IPv6 + UDP */
#define GEN_EDGE 16    /* payload bytes rewritten and checked at each end */
#define GEN_FRAME_MAX 1514

/*
 * --payloads: up to GEN_MAX_REQS request frames, sent in turn, each with
 * its index in the first two payload bytes (a DNS message ID); a reply is
 * matched by those two bytes and checked in full against the function's.
 */
#define GEN_MAX_REQS 256
#define GEN_REQ_FRAME_MAX 512
#define GEN_REPLY_MAX 1472

struct gen_req {
	__u32 len;
	__u8 frame[GEN_REQ_FRAME_MAX];
};

struct gen_reply {
	__u32 len;
	__u8 payload[GEN_REPLY_MAX];
};

enum gen_stat {
	GEN_STAT_ANSWERED,
	GEN_STAT_WRONG,
	GEN_STAT_SENT,
	GEN_STAT_MAX,
};

#endif /* RRLOAD_GEN_H */
