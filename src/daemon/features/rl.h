/* SPDX-License-Identifier: GPL-2.0 */
/* Rate limiting in XDP, user space's half (rl.c). */
#ifndef RR_RL_H
#define RR_RL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "shared/port.h"
#include "shared/rl.h"
#include "xdp.h"

struct rr_invoker;

/* The mask of a @bits-long prefix into @mask's @len bytes, in network
 * order (rate_limit_v4_prefix, rate_limit_v6_prefix). */
void rr_rl_mask(uint32_t bits, uint8_t *mask, size_t len);

/* The limiter's levels of prefixes into @conf (its rl_len,
 * rl_interval_ns and rl_burst_ns): @rate replies/s (0: as good as none)
 * and a burst of @burst (0: @rate) for a prefix of @v4_prefix (IPv4) or
 * @v6_prefix (IPv6) bits, and the levels around it, each scaled from it
 * (docs/DESIGN.md, "Rate limiting in XDP", "Several prefix lengths"). */
void rr_rl_levels(struct rr_port_conf *conf, uint32_t rate, uint32_t burst,
		  uint32_t v4_prefix, uint32_t v6_prefix);
/* The rate limit of @svc into @conf, its XDP port entry, as the program
 * reads it (slots.c, rl.c; hh.c judges the top keys by the same). */
void rr_rl_port_conf(const struct rr_invoker *inv, const struct rr_service *svc,
		     struct rr_port_conf *conf);
/* Says @svc's rate limit, or that it has none, in one line for the
 * start-up lines. */
void rr_rl_say(const struct rr_service *svc);
/* Slot @slot's exemptions (@svc's rate_limit_exempt) into the program's
 * maps and its buckets full, before its port opens. */
int rr_rl_open(struct rr_invoker *inv, uint32_t slot,
	       const struct rr_service *svc);

/* Function @slot's rate-limit buckets all full again (a new function in
 * the slot, or new limits), from the port entry written next on: a new
 * generation of its seed (rr_rl_port_conf()); 0 or -errno. */
int rr_rl_reset(struct rr_xdp *x, uint32_t slot);
/* Whether the limiter of the function whose port entry is @conf holds the
 * prefix of @family's address @addr (4 or 16 bytes), a source (@bits 32,
 * 128) or a prefix of @bits, at its limit at @now (CLOCK_MONOTONIC ns):
 * one of its levels no longer than @bits does; false if it cannot tell. */
bool rr_rl_held(struct rr_xdp *x, const struct rr_port_conf *conf, int family,
		const uint8_t *addr, uint32_t bits, uint64_t now);
/*
 * The slip reply, in place, to the request in @frame (@len bytes) that
 * the XDP program handed a worker marked as a slip (RR_RX_META_SLIP,
 * where its own XDP_TX would be lost): for a function flagged
 * RR_FN_SLIP_TC, the bytes slip_tc() (kern/lib/rl.h) sends, DNS's
 * truncated reply. The frame is checked as any request (rr_parse()), and
 * only a query with a single well-formed question gets one. Returns the
 * reply frame's length or -enum rr_drop; with @csum_start, the UDP
 * checksum is left to the transmitter (rr_build_reply_partial()).
 */
int rr_rl_slip(uint8_t *frame, uint32_t len, uint32_t *csum_start);
/* Adds prefix @c to function @slot's rate-limit exemptions, or takes it
 * out (gone already is no error); 0 or -errno. */
int rr_rl_exempt(struct rr_xdp *x, uint32_t slot, const struct rr_cidr *c,
		 bool add);

#endif /* RR_RL_H */
