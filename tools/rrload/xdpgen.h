/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside rrload's XDP engine: the request frames it sends, built by
 * xdpgen_frame.c from the interface's addresses and the neighbour table,
 * and offered from the kernel by xdpgen.c.
 */
#ifndef RL_XDPGEN_H
#define RL_XDPGEN_H

#include <stdint.h>

#include "rrload.h"
#include "rrload_gen.h"

/* The requests' source port: one per run, so replies a slow server still
 * sends to an earlier run are not counted (as wrong) by this one. */
#define GEN_PORT_BASE 40000
#define GEN_PORT_SPAN 20000

struct gen_frames {
	/* Two bytes in, so the IP header after the 14-byte Ethernet header
	 * is 4-byte aligned for the header structs. */
	uint8_t buf[GEN_FRAME_MAX + 2] __attribute__((aligned(8)));
	uint8_t *frame; /* the frame sent (the largest, with --payloads) */
	uint32_t flen;
	uint16_t port;		   /* the requests' source port */
	struct gen_req *reqs;	   /* --payloads: one frame each */
	struct gen_reply *replies; /* and the reply each must get */
};

/*
 * Builds the request frame into @g; fills @req as the server's function
 * sees it, @payload_out with the payload (*@plen_out bytes) and *@hlen_out
 * with the headers' length. Returns 0, or -errno after saying why.
 */
int gen_build_frame(const struct rl_config *cfg, struct gen_frames *g,
		    struct rr_request *req, uint8_t *payload_out,
		    uint32_t *plen_out, uint32_t *hlen_out);

/*
 * --payloads: request frame i is the one gen_build_frame() made, with
 * payload i behind its headers and i in the payload's first two bytes;
 * the reply expected for it is what @fn answers. The largest frame
 * becomes @g's frame, so the generator only ever shrinks frames.
 */
int gen_indexed_requests(const struct rl_config *cfg, struct gen_frames *g,
			 const struct rr_function *fn, struct rr_request *req,
			 uint32_t hlen);

#endif /* RL_XDPGEN_H */
