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

/*
 * What a function's workers charge a call's time to (rate_limit_us),
 * as the main thread computes it into struct rr_live for every cell to
 * read (rr_rl_cost_conf()): the port entry's seed, and per family and
 * level the prefix's length (0: no more) and the nanoseconds of bucket
 * time one microsecond of the function's costs it (0: not charged).
 */
struct rr_rl_cost {
	uint64_t seed;
	uint32_t interval_ns[2][RR_RL_LEVELS];
	uint8_t len[2][RR_RL_LEVELS];
};

/* A batch's calls from one source: its address and their time. */
struct rr_rl_charge {
	uint8_t addr[16];
	int family;
	uint64_t ns;
};

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
/* What @svc's workers charge its calls' time to, from its port entry
 * @conf as rr_rl_port_conf() made it, into @c (all 0: nothing). */
void rr_rl_cost_conf(const struct rr_service *svc,
		     const struct rr_port_conf *conf, struct rr_rl_cost *c);
/* The source of the request in @frame (@len bytes: Ethernet, a VLAN tag
 * or none, IPv4 or IPv6) into @ch's family and address; false if none. */
bool rr_rl_source(const uint8_t *frame, uint32_t len, struct rr_rl_charge *ch);
/* Adds @n calls' times (@ch, by source) to @table (rl_cost_table) as
 * @c says, at @now (CLOCK_MONOTONIC ns): each level of each source's
 * prefixes, its entry found or the earliest of its set taken. */
void rr_rl_charge(struct rr_rl_set *table, const struct rr_rl_cost *c,
		  const struct rr_rl_charge *ch, uint32_t n, uint64_t now);
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
