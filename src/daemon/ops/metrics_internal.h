/* SPDX-License-Identifier: GPL-2.0 */
/* What metrics.c shares with metrics_json.c. */
#ifndef RR_METRICS_INTERNAL_H
#define RR_METRICS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

/* The XDP program's counters (RR_XDP_STATS): verdict and reason labels. */
extern const char *const rr_xdp_verdict[];
extern const char *const rr_xdp_reason[];

/* Where the in-kernel counters of (queue q, slot) start in what
 * rr_read_fn_stats() returns. */
size_t rr_fn_row(const struct rr_invoker *inv, uint32_t q, uint32_t slot);
/* The in-kernel counters of every served (queue, slot), read once; free()
 * it. NULL if they cannot be read. */
uint64_t *rr_read_fn_stats(struct rr_invoker *inv);
/* Function counter @c of the function in @slot, summed over the workers. */
uint64_t rr_fn_counter_sum(struct rr_invoker *inv, uint32_t slot, uint32_t c);

#endif /* RR_METRICS_INTERNAL_H */
