// SPDX-License-Identifier: GPL-2.0
/*
 * Gathers' budgets (gather_budget.h): before a gather sends a copy,
 * features/gather.c's start() asks here whether its copies fit the
 * function's gather_rate and its source prefix's gather_source_rate,
 * this worker's share of each. A refused request is dropped and counted
 * by the budget it would have passed, so a flood of requests, spoofed
 * or not, costs the targets no more than the rates.
 */
#include <string.h>

#include <sys/socket.h>

#include "gather_budget.h"
#include "rl.h"
#include "shared/stats.h"

#define NSEC 1000000000ULL

void rr_sg_budget_init(struct rr_sg_budget *b, uint64_t seed)
{
	memset(b, 0, sizeof(*b));
	b->seed = seed;
}

/*
 * Whether @copies more fit a bucket empty again at @tat, for @rate
 * copies a second over @share workers: its time with them taken in
 * *next. In 64 bits: copies, share and RR_SG_MAX_TARGETS are below 2^20
 * each, so their products with a second in ns stay below 2^60.
 */
static int fits(uint64_t tat, uint64_t now, uint32_t rate, uint32_t share,
		uint32_t copies, uint64_t *next)
{
	uint64_t cost = (uint64_t)copies * NSEC * share / rate;
	uint64_t burst = (uint64_t)RR_SG_MAX_TARGETS * NSEC * share / rate;
	uint64_t t = tat > now ? tat : now;

	if (burst < NSEC)
		burst = NSEC;
	if (t - now + cost > burst)
		return 0;
	*next = t + cost;
	return 1;
}

/* A 64-bit finaliser (MurmurHash3's): every input bit moves every
 * output bit. */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* @req's source, masked to the function's rate-limit prefix, hashed
 * with the slot under the worker's seed. */
static uint64_t source_hash(const struct rr_sg_budget *b,
			    const struct rr_service *svc, uint32_t slot,
			    const struct rr_request *req)
{
	uint8_t a[16] = { 0 }, mask[16];
	uint64_t w0, w1;
	uint32_t i;

	if (req->family == AF_INET6) {
		memcpy(a, &req->src.v6, 16);
		rr_rl_mask(svc->rate_limit_v6_prefix, mask, sizeof(mask));
	} else {
		memcpy(a, &req->src.v4, 4);
		rr_rl_mask(svc->rate_limit_v4_prefix, mask, sizeof(mask));
	}
	for (i = 0; i < 16; i++)
		a[i] &= mask[i];
	memcpy(&w0, a, 8);
	memcpy(&w1, a + 8, 8);
	return mix(mix(mix(b->seed ^
			   ((uint64_t)slot << 8 | (uint8_t)req->family)) ^
		       w0) ^
		   w1);
}

uint32_t rr_sg_budget_take(struct rr_sg_budget *b, const struct rr_service *svc,
			   uint32_t slot, const struct rr_request *req,
			   uint32_t copies, uint32_t share, uint64_t now)
{
	uint64_t next[RR_SG_SRC_ROWS], fn_next = 0, h = 0;
	uint32_t col[RR_SG_SRC_ROWS], r;
	int room[RR_SG_SRC_ROWS], any = 0;

	if (!share)
		share = 1;
	slot %= RR_MAX_SLOTS;
	if (svc->gather_source_rate) {
		h = source_hash(b, svc, slot, req);
		for (r = 0; r < RR_SG_SRC_ROWS; r++) {
			col[r] = (uint32_t)(h >> (16 * r)) &
				 (RR_SG_SRC_WIDTH - 1);
			room[r] = fits(b->src[r][col[r]], now,
				       svc->gather_source_rate, share, copies,
				       &next[r]);
			any |= room[r];
		}
		if (!any)
			return RR_DROP_GATHER_SOURCE_RATE;
	}
	if (svc->gather_rate &&
	    !fits(b->fn[slot], now, svc->gather_rate, share, copies, &fn_next))
		return RR_DROP_GATHER_RATE;
	if (svc->gather_rate)
		b->fn[slot] = fn_next;
	for (r = 0; svc->gather_source_rate && r < RR_SG_SRC_ROWS; r++)
		if (room[r])
			b->src[r][col[r]] = next[r];
	return 0;
}
