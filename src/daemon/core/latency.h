/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How long the user tier holds a request: from its batch taken off the
 * socket's RX ring to the batch's replies put on the TX ring. A worker
 * takes a batch's requests together and puts their replies on TX
 * together, so every reply of a batch waited exactly the batch's time:
 * one clock read at each end of a batch times all of them, whatever the
 * batch size. Kept per socket (struct rr_sock_stats) and written by its
 * worker alone, with relaxed stores as the other counters; metrics.c
 * sums a function's sockets into one Prometheus histogram
 * (reqrouter_request_duration_seconds).
 *
 * And how long a request waited for a worker, its queuing delay: from
 * the XDP program's stamp in front of its frame to its batch taken off
 * RX, per request (reqrouter_queue_delay_seconds), which the batch's
 * first clock read serves too.
 *
 * Built with -DRR_NO_LATENCY the hooks are empty: the baseline that
 * docs/BENCHMARKS.md compares against to price them.
 */
#ifndef RR_LATENCY_H
#define RR_LATENCY_H

#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "shared/steer.h"

/* The buckets' upper bounds in ns (Prometheus's le): 1-2-5 steps from
 * 0.5 us to 1 s (a request queued behind a slow call waits that long);
 * a last bucket takes the rest (+Inf). */
#define RR_LATENCY_LE_NS                                                    \
	500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, \
		1000000, 2000000, 5000000, 10000000, 20000000, 50000000,    \
		100000000, 200000000, 500000000, 1000000000
#define RR_LATENCY_NLE 20

struct rr_latency {
	uint64_t start_ns; /* CLOCK_MONOTONIC: when the batch was taken */
	uint64_t sum_ns;   /* every reply's time, added up */
	/* Replies by time: bucket[b] those above le b-1 up to le b, not
	 * cumulative; bucket[RR_LATENCY_NLE] those above the last le. */
	uint64_t bucket[RR_LATENCY_NLE + 1];
};

/* One writer: a load and a store, no atomic read-modify-write. */
static inline void rr_latency_add(uint64_t *ctr, uint64_t n)
{
	__atomic_store_n(ctr, *ctr + n, __ATOMIC_RELAXED);
}

/* A batch was taken off RX at @now. */
static inline void rr_latency_start(struct rr_latency *l, uint64_t now)
{
#ifndef RR_NO_LATENCY
	l->start_ns = now;
#else
	(void)l;
	(void)now;
#endif
}

/* @n replies took @ns each. */
static inline void rr_latency_count(struct rr_latency *l, uint64_t ns,
				    uint32_t n)
{
	static const uint64_t le[RR_LATENCY_NLE] = { RR_LATENCY_LE_NS };
	uint32_t b = 0;

	while (b < RR_LATENCY_NLE && ns > le[b])
		b++;
	rr_latency_add(&l->bucket[b], n);
	rr_latency_add(&l->sum_ns, ns * n);
}

/*
 * A request's queuing delay, from the XDP program's stamp in front of
 * its frame (struct rr_rx_meta, @meta) to its batch taken off RX at @now,
 * counted into @l and returned in ns; the stamp is wiped, so that the
 * frame's next use cannot read it again. A frame without one (a driver
 * without metadata room) has none: 0. A stamp from the future (a clock
 * that went backwards) is counted in @skewed and taken as 0, as is one
 * older than RR_STAMP_MAX_AGE_NS, which cannot be this request's.
 */
#define RR_STAMP_MAX_AGE_NS 60000000000ULL
static inline uint64_t rr_queue_delay(struct rr_latency *l, void *meta,
				      uint64_t now, uint64_t *skewed)
{
	struct rr_rx_meta m;

	memcpy(&m, meta, sizeof(m));
	if (m.magic != RR_RX_META_MAGIC)
		return 0;
	((struct rr_rx_meta *)meta)->magic = 0;
	if (m.arrival_ns > now) {
		rr_latency_add(skewed, 1);
		return 0;
	}
	if (now - m.arrival_ns > RR_STAMP_MAX_AGE_NS)
		return 0;
#ifndef RR_NO_LATENCY
	rr_latency_count(l, now - m.arrival_ns, 1);
#else
	(void)l;
#endif
	return now - m.arrival_ns;
}

/*
 * The @q quantile (0 < q < 1) of histogram @bucket (RR_LATENCY_NLE + 1
 * counts, not cumulative), as the upper bound of the bucket it falls in,
 * in ns: 0 for an empty histogram, UINT64_MAX above the last bound.
 */
static inline uint64_t rr_latency_quantile(const uint64_t *bucket, double q)
{
	static const uint64_t le[RR_LATENCY_NLE] = { RR_LATENCY_LE_NS };
	uint64_t total = 0, seen = 0;
	uint32_t b;

	for (b = 0; b <= RR_LATENCY_NLE; b++)
		total += bucket[b];
	if (!total)
		return 0;
	for (b = 0; b < RR_LATENCY_NLE; b++) {
		seen += bucket[b];
		if ((double)seen >= q * (double)total)
			return le[b];
	}
	return UINT64_MAX;
}

/* Its @n replies are on TX (none: nothing to time). */
static inline void rr_latency_end(struct rr_latency *l, uint32_t n)
{
#ifndef RR_NO_LATENCY
	if (n)
		rr_latency_count(l, rr_now_ns() - l->start_ns, n);
#else
	(void)l;
	(void)n;
#endif
}

#endif /* RR_LATENCY_H */
