/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Heavy hitters (docs/DESIGN.md, "Who is calling: heavy hitters in
 * XDP"): the sketch's layout, each CPU's sampling state, and the hash the
 * XDP program and the top-k (src/daemon/features/hh.c) compute alike.
 */
#ifndef RR_SHARED_HH_H
#define RR_SHARED_HH_H

#include <linux/types.h>

/*
 * Heavy hitters (docs/DESIGN.md, "Who is calling"): per function, a count
 * sketch of sampled requests keyed by source address and by source prefix,
 * and a ring of the latest sampled sources for user space to enumerate
 * them by (src/daemon/features/hh.c). Requests to skip between two samples are
 * drawn from a pool of Exp(1) variables that user space keeps refilled.
 */
#define RR_HH_ROWS 4	    /* rows, each its own 16 bits of the hash */
#define RR_HH_WIDTH_BITS 12 /* counters per row: 2^12 */
#define RR_HH_WIDTH (1U << RR_HH_WIDTH_BITS)
#define RR_HH_CANDS 256	     /* the ring of sampled sources, 2^n */
#define RR_HH_POOL 16384     /* the pool of Exp(1) variables, 2^n */
#define RR_HH_POOL_ONE 65536 /* a pool value of 1.0 (16.16 fixed point) */
#define RR_HH_V4_PREFIX 24   /* the prefix kind's lengths */
#define RR_HH_V6_PREFIX 64

/* What a sketch is keyed by. */
enum rr_hh_kind { RR_HH_SOURCE, RR_HH_PREFIX, RR_HH_KINDS };

/* A sampled request's source (AF_INET: addr[0..3]). */
struct rr_hh_cand {
	__u32 family;
	__u8 addr[16];
};

/*
 * One function's sketches, one entry of hh_sketch per slot, shared by
 * every CPU (atomic adds: only sampled requests write here) and mapped
 * into user space. count[][r][] holds sampled requests, +1 or -1 by the
 * key's sign in row r; @samples counts sampled requests and is the
 * ring's write position.
 */
struct rr_hh_sketch {
	__u64 samples;
	struct rr_hh_cand cand[RR_HH_CANDS];
	__s32 count[RR_HH_KINDS][RR_HH_ROWS][RR_HH_WIDTH];
};

/* Each CPU's sampling state per slot: the one lookup every request of a
 * function with RR_PORT_HH costs. */
struct rr_hh_cpu {
	__u32 skip; /* requests still to skip before the next sample */
	__u32 pos;  /* the next variable of the pool */
};

/* The pool's variables: -ln(U), U uniform in (0, 1], 16.16 fixed point. */
struct rr_hh_pool {
	__u32 exp[RR_HH_POOL];
};

/* Requests to skip after a sample: floor(E / -ln(1 - p)), geometric
 * with parameter p (P(skip >= k) = (1 - p)^k). */
static __inline __u32 rr_hh_skip(__u32 exp, __u32 scale)
{
	return (__u32)(((__u64)exp * scale) >> 32);
}

/*
 * The sketch's hash: fasthash64's round and finaliser (Zilong Tan's
 * construction: no rotations, which BPF lacks), seeded at start. A
 * source is two words: its prefix (the /24 or /64, the host bits zero)
 * and the rest; the prefix kind's hash is taken after the first, the
 * source's after both, so both cost three multiplications more than one.
 */
#define RR_HH_M 0x880355f21e6d1965ULL

static __inline __u64 rr_hh_mix(__u64 h)
{
	h ^= h >> 23;
	h *= 0x2127599bf4325c37ULL;
	h ^= h >> 47;
	return h;
}

static __inline __u64 rr_hh_round(__u64 h, __u64 v)
{
	h ^= rr_hh_mix(v);
	h *= RR_HH_M;
	return h;
}

/*
 * An address (4 or 16 bytes, as it lies in a packet) as the XDP program
 * reads a source (src_words()): an IPv4 one in @a (@b 0), an IPv6 one's
 * halves in @a and @b. User space hashes an address from these, as XDP
 * does (rr_hh_words(), rr_rl_hash(), rr_validate_hash()).
 */
static __inline void rr_addr_words(__u32 family, const void *addr, __u64 *a,
				   __u64 *b)
{
	__u32 v4;

	*a = 0;
	*b = 0;
	if (family == 2 /* AF_INET */) {
		__builtin_memcpy(&v4, addr, 4);
		*a = v4;
	} else {
		__builtin_memcpy(a, addr, 8);
		__builtin_memcpy(b, (const __u8 *)addr + 8, 8);
	}
}

/* The two words of a source as the XDP program reads them: @a is its
 * IPv4 address as it lies in memory, or its IPv6 address's first and
 * second halves in @a and @b. */
static __inline void rr_hh_words(__u32 family, __u64 a, __u64 b, __u64 *w0,
				 __u64 *w1)
{
	if (family == 2 /* AF_INET */) {
		/* Its first three bytes in memory, whatever the byte order. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		*w0 = a & 0xffffffULL;
#else
		*w0 = a & 0xffffff00ULL;
#endif
		*w1 = a & 0xffffffffULL;
	} else {
		*w0 = a;
		*w1 = b;
	}
}

/* Both kinds' hashes of a source's words. */
static __inline void rr_hh_hash(__u64 seed, __u32 family, __u64 w0, __u64 w1,
				__u64 h[RR_HH_KINDS])
{
	__u64 x = seed ^ ((__u64)family * RR_HH_M);

	x = rr_hh_round(x, w0);
	h[RR_HH_PREFIX] = rr_hh_mix(x);
	x = rr_hh_round(x, w1);
	h[RR_HH_SOURCE] = rr_hh_mix(x);
}

/* Row @r's counter and sign of hash @h: bits 16r..16r+11 and 16r+15. */
static __inline __u32 rr_hh_col(__u64 h, __u32 r)
{
	return (__u32)(h >> (16 * r)) & (RR_HH_WIDTH - 1);
}

static __inline int rr_hh_sign(__u64 h, __u32 r)
{
	return (h >> (16 * r + 15)) & 1 ? -1 : 1;
}

#endif /* RR_SHARED_HH_H */
