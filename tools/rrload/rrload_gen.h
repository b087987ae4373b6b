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

/*
 * --spoof: the source addresses the generator gives its frames in turn,
 * each with the one's complement sum that turns the frame's own checksums
 * (IPv4 header, UDP) into the ones for that address: the address's 16-bit
 * words plus the complements of the original's, folded.
 */
#define GEN_SPOOF_MAX (1u << 20)

struct gen_spoof {
	__u8 addr[16]; /* network order; IPv4 in the first four bytes */
	__u32 csum_delta;
};

/*
 * With --spoof, replies to the spoofed sources count apart: the reply the
 * function gives, or a DNS reply with TC set and no answer (a DNS
 * server's rate-limit slip); anything else is wrong.
 */
enum gen_stat {
	GEN_STAT_ANSWERED,
	GEN_STAT_WRONG,
	GEN_STAT_SENT,
	GEN_STAT_FLOOD_ANSWERED,
	GEN_STAT_FLOOD_SLIPPED,
	GEN_STAT_MAX,
};

#endif /* RRLOAD_GEN_H */
