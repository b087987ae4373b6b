/* SPDX-License-Identifier: GPL-2.0 */
/* Steering (steer.c; docs/DESIGN.md, "Steering"): a function's worker
 * group, grown and shrunk by its queuing delay. */
#ifndef RR_STEER_H
#define RR_STEER_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/port.h"

struct rr_invoker;
struct rr_slot;

/*
 * A function's worker group under steering = groups, as it is now: the
 * threads its `workers` list names and those it grew into (steer.c), and
 * what the growth is judged by, its queuing delay since the last look.
 */
struct rr_group {
	/* The function's `workers`, parsed by class (0: none listed) when
	 * rr_slot_sync() last ran, which every change of it is followed by. */
	uint32_t listed[RR_XDP_CLASSES];
	uint32_t grown;	  /* threads added to the listed ones */
	uint64_t sum_ns;  /* its sockets' queuing delay, summed... */
	uint64_t count;	  /* ... over this many requests, at next_ns */
	uint64_t next_ns; /* CLOCK_MONOTONIC: the next look */
	uint32_t calm;	  /* looks in a row below half the threshold */
	bool primed;	  /* sum_ns and count are a window's start */
	bool said_none;	  /* that its list names no running thread */
};

/* Writes slot @s's port entry from its state (slots.c, rr_slot_sync()):
 * what a feature below the slots is given to call when it changed one. */
typedef int (*rr_slot_sync_fn)(struct rr_invoker *inv, struct rr_slot *s);
/* steering = groups' growth and shrinking, by their queuing
 * delay; called every tick of the main loop, it looks every 100 ms, and
 * has a changed group written with @sync. */
void rr_steer_tick(struct rr_invoker *inv, rr_slot_sync_fn sync);
/* slot @s's `workers` into s->group.listed (rr_slot_sync()). */
void rr_steer_parse(struct rr_slot *s);
/* slot @s's worker group of class @cls (RR_XDP_PUNT_CLASS) as
 * the XDP program reads it (0: every worker; always 0 but under
 * steering = groups, and for a class the function's list leaves out). */
uint32_t rr_steer_group_mask(const struct rr_invoker *inv,
			     const struct rr_slot *s, uint32_t cls);

#endif /* RR_STEER_H */
