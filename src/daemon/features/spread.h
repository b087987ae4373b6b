/* SPDX-License-Identifier: GPL-2.0 */
/* Spreading a function's in-kernel answers over CPUs (spread.c;
 * xdp_spread). */
#ifndef RR_SPREAD_H
#define RR_SPREAD_H

#include <stdint.h>

#include "config.h"
#include "shared/port.h"
#include "shared/spread.h"

struct rr_invoker;
struct rr_slot;

/* Whether a slot's xdp_spread is in effect, and if not, why (spread.c). */
enum rr_spread_state {
	RR_SPREAD_OFF, /* none listed */
	RR_SPREAD_ON,
	RR_SPREAD_NO_XDP,     /* not answered in XDP */
	RR_SPREAD_CLASSIFIER, /* its program only classifies */
	RR_SPREAD_HELD,	      /* replies from XDP would be lost (a veth) */
	RR_SPREAD_NO_COPY,    /* no cpumap copy of its program */
	RR_SPREAD_CPU,	      /* a CPU's cpumap entry failed */
};

struct rr_spread {
	int cpus[RR_MAX_SPREAD]; /* the list as parsed */
	uint32_t n;
	enum rr_spread_state state;
	int bad_cpu; /* RR_SPREAD_CPU: which */
	/* The list the state was said for. */
	char said[RR_SPREAD_LEN];
};

/* slot @s's xdp_spread into its port entry @conf, which has its
 * in-kernel tier decided; the cpumap entries it needs made, each change
 * said. */
void rr_spread_port_conf(struct rr_invoker *inv, struct rr_slot *s,
			 struct rr_port_conf *conf);
/* slot @s spreads nothing any more (removed). */
void rr_spread_forget(struct rr_slot *s);
/* the cpumap entries of CPUs no function spreads over out. */
void rr_spread_sweep(struct rr_invoker *inv);
const char *rr_spread_state_name(enum rr_spread_state st);

#endif /* RR_SPREAD_H */
