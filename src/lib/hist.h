/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency histogram with bounded relative error: values below 2^(B+1) ns
 * have a bucket each, above that every power of two is split into 2^B
 * buckets, so a bucket is never wider than 1/2^B (< 0.8 %) of its values.
 * One owner thread records; another thread may read it at any time (each
 * bucket is a single aligned word, stored without a lock), which is how
 * rrload's progress line gets the p99 of the last second from two
 * snapshots. The tools' one latency histogram: rrload's and sgbase
 * client's.
 */
#ifndef RR_HIST_H
#define RR_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_MAX_SHIFT 34 /* 2^41 ns, ~36 minutes: plenty for a timeout */
#define HIST_BUCKETS ((HIST_MAX_SHIFT + 2) * HIST_SUB)

struct hist {
	uint64_t b[HIST_BUCKETS];
	uint64_t count;
	uint64_t sum;
	uint64_t max;
};

static inline unsigned int hist_index(uint64_t v)
{
	unsigned int shift;

	if (v < 2 * HIST_SUB)
		return (unsigned int)v;
	shift = 63 - __builtin_clzll(v) - HIST_SUB_BITS;
	if (shift > HIST_MAX_SHIFT)
		return HIST_BUCKETS - 1;
	return (shift + 1) * HIST_SUB + (unsigned int)(v >> shift) - HIST_SUB;
}

/* Owner only: plain loads and relaxed stores, no locked instruction. */
static inline void hist_add(struct hist *h, uint64_t v)
{
	uint64_t *b = &h->b[hist_index(v)];

	__atomic_store_n(b, *b + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->count, h->count + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->sum, h->sum + v, __ATOMIC_RELAXED);
	if (v > h->max)
		__atomic_store_n(&h->max, v, __ATOMIC_RELAXED);
}

/* Highest value that lands in bucket @i (what a percentile reports). */
uint64_t hist_bucket_top(unsigned int i);
/* dst += src, read with relaxed loads (src may be live). */
void hist_merge(struct hist *dst, const struct hist *src);
/* dst = a - b, bucket by bucket (a later snapshot minus an earlier one). */
void hist_diff(struct hist *dst, const struct hist *a, const struct hist *b);
/* Value at quantile q (0..1]; 0 for an empty histogram. */
uint64_t hist_quantile(const struct hist *h, double q);

#endif /* RR_HIST_H */
