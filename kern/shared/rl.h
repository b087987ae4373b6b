/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rate limiting (docs/DESIGN.md, "Rate limiting in XDP"): the buckets,
 * each CPU's count for the slip, and the hash and tolerance the XDP
 * program and reqrouterctl top reckon with alike.
 */
#ifndef RR_SHARED_RL_H
#define RR_SHARED_RL_H

#include <linux/types.h>

#include "shared/hh.h"
#include "shared/port.h"

/*
 * Response rate limiting (docs/DESIGN.md, "Rate limiting in XDP"): per
 * function, RR_RL_ROWS rows of RR_RL_WIDTH buckets, a source prefix's
 * bucket in row r picked by the seeded prefix hash's 16r..16r+11 bits.
 * A bucket is a GCRA "theoretical arrival time" (CLOCK_MONOTONIC ns): a
 * request conforms while it is at most (burst - 1) intervals ahead of
 * now. A request is limited only when every row's bucket refuses it.
 */
#define RR_RL_ROWS 3
#define RR_RL_WIDTH_BITS 12
#define RR_RL_WIDTH (1U << RR_RL_WIDTH_BITS)

struct rr_rl_table {
	__u64 tat[RR_RL_ROWS][RR_RL_WIDTH];
};

/* Each CPU's count of limited requests per slot: every rl_slip-th slips. */
struct rr_rl_cpu {
	__u32 limited;
	__u32 pad;
};

/* The limiter's hash of a source prefix: the sketch's hash over the
 * masked address words, under a seed of its own. */
#define RR_RL_SEED_XOR 0x5851f42d4c957f2dULL

/*
 * A source's hash in the limiter of the function @conf describes, whose
 * bits pick its bucket in each row (rr_hh_col()): @a its IPv4 address as
 * it lies in memory, or its IPv6 address's halves in @a and @b, masked to
 * the function's prefix and hashed under @seed. rl_check() and
 * reqrouterctl top reckon with this one.
 */
static __inline __u64 rr_rl_hash(const struct rr_port_conf *conf, __u64 seed,
				 __u32 family, __u64 a, __u64 b)
{
	__u64 h[RR_HH_KINDS];

	if (family == 2 /* AF_INET */)
		rr_hh_hash(seed ^ RR_RL_SEED_XOR, family, a & conf->rl_mask_v4,
			   0, h);
	else
		rr_hh_hash(seed ^ RR_RL_SEED_XOR, family,
			   a & conf->rl_mask_v6[0], b & conf->rl_mask_v6[1], h);
	return h[RR_HH_SOURCE];
}

/* How far ahead of now a bucket may be and still let a request by: the
 * burst's intervals after the first. */
static __inline __u64 rr_rl_tau(const struct rr_port_conf *conf)
{
	return (__u64)(conf->rl_burst ? conf->rl_burst - 1 : 0) *
	       conf->rl_interval_ns;
}

#endif /* RR_SHARED_RL_H */
