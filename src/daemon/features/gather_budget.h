/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gathers' budgets (docs/DESIGN.md, "Gathers"): a gathering function
 * sends a copy of a request to every target it asks, up to
 * RR_SG_MAX_TARGETS of them, so one request is up to a thousand
 * packets. gather_rate bounds the copies a second a function sends,
 * gather_source_rate those the requests of one source prefix cause.
 * Each worker keeps its buckets in its own memory (a cell's copy is its
 * own, and a cell writes nobody else's) for its even share of the
 * rates, so that all of them together never send more than the rates.
 */
#ifndef RR_GATHER_BUDGET_H
#define RR_GATHER_BUDGET_H

#include <stdint.h>

#include "config.h"
#include "function.h"
#include "shared/common.h"

/* The source prefixes' buckets: rows of buckets, each row picked by its
 * own bits of a keyed hash of (slot, prefix). */
#define RR_SG_SRC_ROWS 2
#define RR_SG_SRC_WIDTH_BITS 10
#define RR_SG_SRC_WIDTH (1U << RR_SG_SRC_WIDTH_BITS)

/*
 * A worker's buckets, GCRA as the XDP rate limiter's (docs/DESIGN.md,
 * "Rate limiting in XDP"): each holds the time (CLOCK_MONOTONIC ns) at
 * which it is empty again; a gather of n copies fits while that time,
 * n copies on, is at most a burst ahead of now. The burst is a
 * second's worth, or one gather to the largest group a function may
 * ask (RR_SG_MAX_TARGETS), whichever is more: every gather can start
 * from a quiet bucket. All zero: every bucket full.
 */
struct rr_sg_budget {
	uint64_t seed; /* keys the source hash: nobody outside aims at a row */
	uint64_t fn[RR_MAX_SLOTS];
	uint64_t src[RR_SG_SRC_ROWS][RR_SG_SRC_WIDTH];
};

/* @b's buckets full, its source hash keyed by @seed. */
void rr_sg_budget_init(struct rr_sg_budget *b, uint64_t seed);

/*
 * Whether a gather of @copies for the function of @svc in slot @slot,
 * asked by @req's source, fits this worker's share of the budgets (the
 * rates over @share workers) at @now: 0, and the copies are taken from
 * the function's bucket and its source prefix's; else the enum rr_drop
 * of the budget it would pass (RR_DROP_GATHER_SOURCE_RATE first), and
 * nothing is taken. A source prefix is refused only when every row's
 * bucket it falls in is short, so another prefix that shares one of
 * them with a flood is not.
 */
uint32_t rr_sg_budget_take(struct rr_sg_budget *b, const struct rr_service *svc,
			   uint32_t slot, const struct rr_request *req,
			   uint32_t copies, uint32_t share, uint64_t now);

#endif /* RR_GATHER_BUDGET_H */
