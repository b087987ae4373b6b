// SPDX-License-Identifier: GPL-2.0
/* Histogram arithmetic: everything but the hot-path add (see hist.h). */
#include <math.h>

#include "hist.h"

uint64_t hist_bucket_top(unsigned int i)
{
	unsigned int shift;

	if (i < 2 * HIST_SUB)
		return i;
	shift = i / HIST_SUB - 1;
	return ((uint64_t)(i - shift * HIST_SUB + 1) << shift) - 1;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	uint64_t m;
	unsigned int i;

	for (i = 0; i < HIST_BUCKETS; i++)
		dst->b[i] += __atomic_load_n(&src->b[i], __ATOMIC_RELAXED);
	dst->count += __atomic_load_n(&src->count, __ATOMIC_RELAXED);
	dst->sum += __atomic_load_n(&src->sum, __ATOMIC_RELAXED);
	m = __atomic_load_n(&src->max, __ATOMIC_RELAXED);
	if (m > dst->max)
		dst->max = m;
}

void hist_diff(struct hist *dst, const struct hist *a, const struct hist *b)
{
	unsigned int i;

	dst->max = 0;
	for (i = 0; i < HIST_BUCKETS; i++) {
		dst->b[i] = a->b[i] - b->b[i];
		if (dst->b[i])
			dst->max = hist_bucket_top(i);
	}
	dst->count = a->count - b->count;
	dst->sum = a->sum - b->sum;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t total = 0, want, seen = 0;
	unsigned int i;

	for (i = 0; i < HIST_BUCKETS; i++)
		total += h->b[i];
	if (!total)
		return 0;
	want = (uint64_t)ceil(q * (double)total);
	if (want < 1)
		want = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want)
			break;
	}
	if (i >= HIST_BUCKETS)
		i = HIST_BUCKETS - 1;
	/* The exact maximum is known; never report above it. */
	return h->max && hist_bucket_top(i) > h->max ? h->max
						     : hist_bucket_top(i);
}
