/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The request path in user space: one raw frame in, the reply frame (built
 * in place) or a named drop reason out. No I/O, so it is unit-tested and
 * fuzzed on its own.
 */
#ifndef RR_PACKET_H
#define RR_PACKET_H

#include <stdbool.h>
#include <stdint.h>

#include <reqrouter/rr_function.h>
#include "shared/cache.h"
#include "shared/stats.h"

#define RR_REPLY_TTL 64

/* Why a frame was recycled instead of answered: enum rr_drop, shared with
 * the XDP tier (shared/stats.h). */
const char *rr_drop_label(enum rr_drop drop);

/* Offsets into a parsed request frame. */
struct rr_pkt {
	uint32_t l3_off; /* IP header */
	uint32_t l4_off; /* UDP header */
	uint32_t payload_off;
	uint32_t payload_len; /* from the UDP length, not the frame length */
	int family;	      /* AF_INET or AF_INET6 */
	int vlans;	      /* 0..2 tags kept on the reply */
};

/* Validates a UDP request frame; returns 0, -RR_DROP_MALFORMED (IPv4
 * options included), -RR_DROP_BAD_CHECKSUM (rr_udp_csum_ok()), or
 * -RR_DROP_NOT_UNICAST when either end is broadcast, multicast, 0/8,
 * loopback, :: or ::1 (the XDP program passes those to the kernel; this is
 * the second line). */
int rr_parse(const uint8_t *frame, uint32_t len, struct rr_pkt *pkt);
/* rr_parse() but for the UDP checksum: for a frame whose checksum the
 * XDP program checked, or that rr_parse() will see again. */
int rr_parse_headers(const uint8_t *frame, uint32_t len, struct rr_pkt *pkt);

/* Fills the function's read-only view of a parsed request. */
void rr_request_init(struct rr_request *req, const uint8_t *frame,
		     const struct rr_pkt *pkt, uint32_t queue, uint32_t thread);

/*
 * Turns a parsed request whose payload has been replaced by reply_len bytes
 * into the reply: swaps addresses and ports, sets lengths and TTL, and
 * recomputes the IPv4 header checksum and the full UDP checksum (incoming
 * ones may be partial, so nothing is updated incrementally). Returns the
 * reply frame length.
 */
uint32_t rr_build_reply(uint8_t *frame, const struct rr_pkt *pkt,
			uint32_t reply_len);

/*
 * rr_build_reply() for a transmitter that completes the UDP checksum (AF_XDP
 * TX metadata with XDP_TXMD_FLAGS_CHECKSUM: the skb's CHECKSUM_PARTIAL in
 * copy mode, the NIC in zero-copy). The field carries only the
 * pseudo-header sum, folded but not complemented, as the kernel leaves it
 * for CHECKSUM_PARTIAL; summing from the UDP header to the end then gives
 * the checksum rr_build_reply() would have written.
 */
uint32_t rr_build_reply_partial(uint8_t *frame, const struct rr_pkt *pkt,
				uint32_t reply_len);

/*
 * The whole path: parse, call fn in place, build the reply. @room is the
 * buffer size from @frame, @mtu the interface MTU (the reply's IP packet
 * must fit it). A reply's IP packet may be at most @max_amplification
 * times the request's (0: no limit); the function is offered only that
 * much room. Returns the reply frame length or -enum rr_drop.
 */
int rr_serve(uint8_t *frame, uint32_t len, uint32_t room, uint32_t mtu,
	     uint32_t max_amplification, const struct rr_function *fn,
	     uint32_t queue, uint32_t thread);

/*
 * What the reply cache needs from one request: rr_serve_keep() copies a
 * payload of up to @max bytes before the function overwrites it.
 */
struct rr_keep {
	uint32_t max;	    /* in: keep payloads up to this long */
	uint32_t len;	    /* out: the payload's length, or UINT32_MAX */
	uint32_t reply_off; /* out: where the reply's payload starts */
	bool cookie;	    /* out: both end with the client's DNS cookie */
	uint8_t req[RR_CACHE_MAX_PAYLOAD];
};

/* rr_serve(), with the queue, thread, state and counters the function
 * sees taken from @ctx (its addresses and ports are ignored), keeping the
 * request's payload in @keep (if not NULL) when it is short, and with
 * @csum_start (if not NULL) as rr_serve_partial(). */
int rr_serve_keep(uint8_t *frame, uint32_t len, uint32_t room, uint32_t mtu,
		  uint32_t max_amplification, const struct rr_function *fn,
		  const struct rr_request *ctx, struct rr_keep *keep,
		  uint32_t *csum_start);
/*
 * rr_serve_keep()'s return when the function started a gather with the
 * request (ctx->gather set, RR_GATHER_PENDING): no reply yet, and the
 * frame stays with the caller until rr_serve_gathered(). Never a frame
 * length.
 */
#define RR_SERVE_KEPT 0

/*
 * The reply to a request kept for gather @res: the frame as it was kept
 * (addresses not yet swapped), the function's gathered() (or
 * rr_gather_format()) writing the payload under the same limits as its
 * handler, the reply built with a full UDP checksum. Returns the reply
 * frame length or -enum rr_drop.
 */
int rr_serve_gathered(uint8_t *frame, uint32_t len, uint32_t room, uint32_t mtu,
		      uint32_t max_amplification, const struct rr_function *fn,
		      const struct rr_request *ctx,
		      const struct rr_gather_result *res);

/* rr_serve() with rr_build_reply_partial(); *csum_start is where the
 * transmitter's checksumming starts (the UDP header), the field being 6
 * bytes further. */
int rr_serve_partial(uint8_t *frame, uint32_t len, uint32_t room, uint32_t mtu,
		     uint32_t max_amplification, const struct rr_function *fn,
		     uint32_t queue, uint32_t thread, uint32_t *csum_start);

/* rr_serve() without an amplification limit. */
int rr_serve_unlimited(uint8_t *frame, uint32_t len, uint32_t room,
		       uint32_t mtu, const struct rr_function *fn,
		       uint32_t queue, uint32_t thread);

/* The two ends of a UDP datagram that is no reply (a gather's copy):
 * addresses of @family's size, ports in host order. */
struct rr_udp_ends {
	int family; /* AF_INET or AF_INET6 */
	uint8_t dst_hw[6];
	uint8_t src_hw[6];
	uint8_t saddr[16];
	uint8_t daddr[16];
	uint16_t sport;
	uint16_t dport;
};

/* Where a new frame's payload starts: untagged Ethernet, IP without
 * options, UDP. */
static inline uint32_t rr_udp_payload_off(int family)
{
	return 14 + (family == AF_INET6 ? 40 : 20) + 8;
}

/* Headers for @payload_len bytes already at rr_udp_payload_off() of
 * @frame, from @e: IPv4 with DF, TTL or hop limit RR_REPLY_TTL, the full
 * UDP checksum. Returns the frame's length. */
uint32_t rr_build_udp(uint8_t *frame, const struct rr_udp_ends *e,
		      uint32_t payload_len);

/* RFC 1071 checksum helpers, exposed for the tests. */
uint32_t rr_csum_partial(const void *data, uint32_t len, uint32_t sum);
uint16_t rr_csum_fold(uint32_t sum);
/* The UDP checksum of a parsed frame as it stands (field included): 0 when
 * valid, and for the reply's field 0 is encoded as 0xffff. */
uint16_t rr_udp_csum(const uint8_t *frame, const struct rr_pkt *pkt);
/* The UDP pseudo-header sum, folded, not complemented: what a partial
 * checksum field holds. */
uint16_t rr_udp_pseudo_csum(const uint8_t *frame, const struct rr_pkt *pkt);
/* Whether a parsed frame's UDP checksum is one the kernel would accept:
 * valid, partial (the pseudo-header sum a sender with offload leaves), or
 * zero over IPv4. */
bool rr_udp_csum_ok(const uint8_t *frame, const struct rr_pkt *pkt);

#endif /* RR_PACKET_H */
