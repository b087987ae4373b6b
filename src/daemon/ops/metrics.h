/* SPDX-License-Identifier: GPL-2.0 */
/* Counters out: the Prometheus textfile and the summary printed on exit. */
#ifndef RR_METRICS_H
#define RR_METRICS_H

#include <stdio.h>

#include "expo.h"
#include "invoker.h"

/* Writes the metrics in Prometheus text format to out. */
int rr_metrics_write(struct rr_invoker *inv, FILE *out);
/* Rewrites path atomically (a temporary file renamed over it). */
int rr_metrics_write_file(struct rr_invoker *inv, const char *path);
/* The totals, one line per socket and per XDP verdict, for humans. */
void rr_metrics_summary(struct rr_invoker *inv, FILE *out);
/* The same totals as one JSON object, per function (reqrouterctl stats). */
void rr_metrics_json(struct rr_invoker *inv, FILE *out);
/* Requests that reached the XDP program for one of our ports so far,
 * whatever became of them (answered in either tier, or dropped). */
uint64_t rr_metrics_requests(struct rr_invoker *inv);

#endif /* RR_METRICS_H */
