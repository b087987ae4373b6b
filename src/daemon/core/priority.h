/* SPDX-License-Identifier: GPL-2.0 */
/* The workers' scheduling, worker_priority (priority.c). */
#ifndef RR_PRIORITY_H
#define RR_PRIORITY_H

#include <stdint.h>

#include "invoker.h"

/* worker_priority (priority.c): the limit raised before the privileges
 * go, found out after; the workers' scheduling in words, and why it is
 * the normal one although realtime was asked for (or NULL). */
void rr_priority_setup(struct rr_invoker *inv);
void rr_priority_check(struct rr_invoker *inv);
const char *rr_priority_name(const struct rr_invoker *inv);
const char *rr_priority_why_normal(const struct rr_invoker *inv);
/* The workers' scheduling as status names it (normal, realtime, auto),
 * and with auto how many workers are raised now. */
const char *rr_priority_mode(const struct rr_invoker *inv);
uint32_t rr_priority_raised(const struct rr_invoker *inv);
/* The worker, first thing: its id noted, realtime priority taken. */
void rr_priority_raise(struct rr_worker *w);
/* The supervisor, each tick: a long call loses realtime priority until it
 * returns. */
void rr_priority_watch(struct rr_invoker *inv, struct rr_worker *w,
		       uint64_t seq, uint64_t now);

#endif /* RR_PRIORITY_H */
