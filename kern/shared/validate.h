/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Validated sources (docs/DESIGN.md, "Validated sources"): the table of
 * source addresses proven to receive at their address (a TCP handshake
 * with reqrouter, a valid DNS server cookie, a function's token echoed)
 * and when, which the XDP program reads (kern/lib/validate.h) and the
 * daemon, its cells and its TCP loop write (src/daemon/features/validate.c),
 * and the hash they find a source by alike.
 */
#ifndef RR_SHARED_VALIDATE_H
#define RR_SHARED_VALIDATE_H

#include <linux/types.h>

#include "shared/hh.h"

/*
 * validate_table: RR_VALIDATE_SETS sets of RR_VALIDATE_WAYS entries, an
 * address's entry in the set its hash picks (the low bits), found by the
 * whole hash, as the rate limiter's rl_table: a mappable array, so that
 * a cell or the TCP loop writes it without a system call (a BPF LRU hash
 * needs bpf() and takes a lock per new entry). A source validated anew
 * takes its set's entry validated longest ago. 2^17 addresses, 2 MB.
 */
#define RR_VALIDATE_WAYS 4
#define RR_VALIDATE_SETS_BITS 15
#define RR_VALIDATE_SETS (1U << RR_VALIDATE_SETS_BITS)

struct rr_validate_entry {
	__u64 tag; /* the address's hash, rr_validate_hash() */
	__u64 at;  /* CLOCK_MONOTONIC ns it was last validated; 0: free */
};

/* One value of the table: a cache line. */
struct rr_validate_set {
	struct rr_validate_entry way[RR_VALIDATE_WAYS];
};

/* The table's seed: the sketch's (hh_seed) under a constant of its own,
 * the same for every function: what is proven is the address's. */
#define RR_VALIDATE_SEED_XOR 0x2545f4914f6cdd1dULL

/* A valid cookie refreshes its source's time at most this often, so a
 * validated client's queries do not write the shared line each. */
#define RR_VALIDATE_REFRESH_NS 1000000000ULL

/* The validated budget's bucket is kept in rl_table under the function's
 * rl_seed, hashed as a prefix of this "length", which no level has, so
 * it is never a level's entry (rr_rl_hash()). */
#define RR_VALIDATE_BITS 255

/* validate_judge()'s answers. */
#define RR_VALIDATE_NOT 0  /* not validated: the prefix levels judge */
#define RR_VALIDATE_OK 1   /* validated, within its budget */
#define RR_VALIDATE_OVER 2 /* validated, over its budget */

/*
 * The hash of a source in validate_table: @a its IPv4 address as it lies
 * in memory (read as a u32), or its IPv6 address's halves in @a and @b,
 * as src_words() reads them, under the program's @seed (hh_seed). Its low
 * RR_VALIDATE_SETS_BITS pick the set, all 64 tag the entry.
 */
static __inline __u64 rr_validate_hash(__u64 seed, __u32 family, __u64 a,
				       __u64 b)
{
	__u64 h[RR_HH_KINDS];

	rr_hh_hash(seed ^ RR_VALIDATE_SEED_XOR, family,
		   family == 2 /* AF_INET */ ? a & 0xffffffffULL : a,
		   family == 2 ? 0 : b, h);
	return h[RR_HH_SOURCE];
}

/* The set of hash @h. */
static __inline __u32 rr_validate_set_of(__u64 h)
{
	return (__u32)h & (RR_VALIDATE_SETS - 1);
}

/* Whether an entry validated at @at is still validated at @now for a
 * function whose validation lasts @for_s seconds (at may be a little
 * ahead of now: user space writes the precise clock, XDP reads the
 * coarse one). */
static __inline int rr_validate_live(__u64 at, __u64 now, __u32 for_s)
{
	if (!at)
		return 0;
	return at >= now || now - at < (__u64)for_s * 1000000000ULL;
}

#endif /* RR_SHARED_VALIDATE_H */
