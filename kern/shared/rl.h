/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rate limiting (docs/DESIGN.md, "Rate limiting in XDP"): the table of
 * prefixes, each CPU's count for the slip, and the hash and tolerance the
 * XDP program and reqrouterctl top reckon with alike.
 */
#ifndef RR_SHARED_RL_H
#define RR_SHARED_RL_H

#include <linux/types.h>

#include "shared/hh.h"
#include "shared/port.h"

/*
 * Response rate limiting (docs/DESIGN.md, "Rate limiting in XDP"): one
 * table of the source prefixes being limited, of every function, shared
 * by every CPU: RR_RL_SETS sets of RR_RL_WAYS entries, a prefix's entry in
 * the set its hash picks (the low bits) and found by the whole hash. An
 * entry is a GCRA bucket, its "theoretical arrival time" (CLOCK_MONOTONIC
 * ns): a request conforms while it is at most (burst - 1) intervals ahead
 * of now. One whose time is past is as good as none (a full bucket), so
 * a new prefix takes such an entry, or else the set's entry nearest to
 * full: no prefix shares a bucket with another, and what a full set
 * forgets is the least a prefix had used. 2^18 prefixes, 4 MB: a prefix
 * holds its entry about (its requests x interval), so a spoofed spread of
 * R requests a second holds R / rate_limit of them.
 */
#define RR_RL_WAYS 4
#define RR_RL_SETS_BITS 16
#define RR_RL_SETS (1U << RR_RL_SETS_BITS)
#define RR_RL_PREFIXES (RR_RL_SETS * RR_RL_WAYS)

struct rr_rl_entry {
	__u64 tag; /* the prefix's hash, rr_rl_hash() */
	__u64 tat; /* when the bucket is full again; past: free */
};

/* One value of the table: a cache line. */
struct rr_rl_set {
	struct rr_rl_entry way[RR_RL_WAYS];
};

/*
 * rate_limit_us (docs/DESIGN.md, "Rate limiting in XDP", "Cost"): the
 * time a source's prefixes cost a function, in rl_cost_table, laid out
 * as rl_table and keyed by the same hashes (rr_rl_hash()). An entry is a
 * GCRA bucket of function time: the workers add each call's time, scaled
 * to the level's budget (an interval per microsecond: 1e9 /
 * (rate_limit_us x the level's share), rr_rl_levels()), and the XDP
 * program limits the source while a level's time is more than
 * RR_RL_COST_BURST_NS ahead of now: a quiet prefix may spend a second's
 * budget at once.
 */
#define RR_RL_COST_BURST_NS 1000000000ULL

/* Each CPU's count of limited requests per slot: every rl_slip-th slips. */
struct rr_rl_cpu {
	__u32 limited;
	__u32 pad;
};

/* The limiter's seeds: the sketch's seed under a constant of its own,
 * mixed with a function's slot and generation (rr_rl_seed()). */
#define RR_RL_SEED_XOR 0x5851f42d4c957f2dULL

/*
 * The seed of the prefixes' hashes of function @slot in its generation
 * @gen, from the program's @seed: each function's prefixes are its own,
 * and a new generation (new limits, a new function in the slot) starts
 * every bucket of the function full. User space computes it into the
 * port entry (rl_seed).
 */
static __inline __u64 rr_rl_seed(__u64 seed, __u32 slot, __u32 gen)
{
	return rr_hh_round(seed ^ RR_RL_SEED_XOR, (__u64)gen << 32 | slot);
}

/* The first @bits bits of a 64-bit word of an address as it lies in
 * memory (read as a u64), as a mask of that word. */
static __inline __u64 rr_rl_mask64(__u32 bits)
{
	__u64 m = bits >= 64 ? ~0ULL : bits ? ~0ULL << (64 - bits) : 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap64(m);
#else
	return m;
#endif
}

/*
 * A source's hash in the limiter of the function @conf describes, at the
 * level of a @bits-long prefix: @a its IPv4 address as it lies in memory
 * (read as a u32), or its IPv6 address's halves in @a and @b, masked to
 * the prefix and hashed with its length under the function's rl_seed, so
 * that a /24 and the /20 around it are two buckets. Its low
 * RR_RL_SETS_BITS pick the set, all 64 tag the entry. rl_check() and
 * reqrouterctl top reckon with this one.
 */
static __inline __u64 rr_rl_hash(const struct rr_port_conf *conf, __u32 family,
				 __u32 bits, __u64 a, __u64 b)
{
	__u64 h[RR_HH_KINDS], m;

	if (family == 2 /* AF_INET */) {
		m = rr_rl_mask64(bits);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
		m >>= 32;
#endif
		rr_hh_hash(conf->rl_seed, family | bits << 8,
			   a & m & 0xffffffffULL, 0, h);
	} else {
		rr_hh_hash(conf->rl_seed, family | bits << 8,
			   a & rr_rl_mask64(bits),
			   b & rr_rl_mask64(bits > 64 ? bits - 64 : 0), h);
	}
	return h[RR_HH_SOURCE];
}

/* The set of hash @h. */
static __inline __u32 rr_rl_set_of(__u64 h)
{
	return (__u32)h & (RR_RL_SETS - 1);
}

/*
 * DNS's slip reply (RR_FN_SLIP_TC), built from the query alike by the
 * XDP program (slip_tc()) and, where its replies would be lost, by a
 * worker (rr_rl_slip()): the header and the question, found in the
 * query's first RR_SLIP_MAX bytes and RR_DNS_MAX_LABELS labels.
 */
#define RR_DNS_HDR 12
#define RR_DNS_QR 0x80
#define RR_DNS_TC 0x02
/* The question's name may take 255 bytes: labels of at least one. */
#define RR_DNS_MAX_LABELS 128
#define RR_SLIP_MAX 512 /* 2^n: the XDP program masks offsets with it */

/* How far ahead of now a bucket of a level whose interval is
 * @interval_ns may be and still let a request by: the burst's time but
 * the one interval the request takes. */
static __inline __u64 rr_rl_tau(const struct rr_port_conf *conf,
				__u32 interval_ns)
{
	return conf->rl_burst_ns > interval_ns ? conf->rl_burst_ns - interval_ns
					       : 0;
}

#endif /* RR_SHARED_RL_H */
