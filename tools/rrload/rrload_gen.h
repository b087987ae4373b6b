/* SPDX-License-Identifier: GPL-2.0 */
/* What rrload_gen.bpf.c and xdpgen.c agree on. */
#ifndef RRLOAD_GEN_H
#define RRLOAD_GEN_H

#define GEN_HDR_MAX 62 /* Ethernet + IPv6 + UDP */
#define GEN_EDGE 16    /* payload bytes rewritten and checked at each end */
#define GEN_FRAME_MAX 1514

enum gen_stat {
	GEN_STAT_ANSWERED,
	GEN_STAT_WRONG,
	GEN_STAT_SENT,
	GEN_STAT_MAX,
};

#endif /* RRLOAD_GEN_H */
