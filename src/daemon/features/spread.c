// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_spread (docs/DESIGN.md, "Spreading XDP work"): a function whose XDP
 * program costs more than the receiving CPU can give has its requests
 * handed, in turn, to the CPUs its `xdp_spread` lists, through the
 * program's cpumap (spread_cpus), whose thread on each of them runs the
 * function's program (its cpumap copy, loaded beside it: xdp.c) and sends
 * the reply out of the receiving device with a redirect. The receiving
 * CPU keeps the parsing, the guards, the allow-list, heavy hitters and the
 * rate limit, and the requests the program would not take.
 *
 * Here: whether a slot's list is in effect, written into its port entry
 * (rr_slot_sync()), a cpumap entry (and its kernel thread) for every CPU
 * some function spreads over and for no other, and each change said in
 * one line. A list is in effect only where the function answers in XDP:
 * its program is loaded as a cpumap program too, it is no mere
 * classifier, and the in-kernel tier is on (a veth whose peer takes no
 * XDP frames loses a redirected reply as it loses XDP_TX).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "invoker.h"
#include "log.h"

/* spread_load is keyed by CPU, the numbers a list may hold. */
_Static_assert(RR_MAX_SPREAD_CPUS == RR_MAX_CPUS, "spread_load's size");

static const char *state_text(enum rr_spread_state st)
{
	switch (st) {
	case RR_SPREAD_OFF:
	case RR_SPREAD_ON:
		break;
	case RR_SPREAD_NO_XDP:
		return "the function is not answered in XDP here (no XDP program, tier = user, or a cached reply)";
	case RR_SPREAD_CLASSIFIER:
		return "its XDP program only classifies requests for the workers";
	case RR_SPREAD_HELD:
		return "replies from XDP would be lost until the veth peer takes XDP frames";
	case RR_SPREAD_NO_COPY:
		return "the kernel refused its XDP program as a cpumap program (-v says why)";
	case RR_SPREAD_CPU:
		return "a CPU's cpumap entry could not be made";
	}
	return "";
}

const char *rr_spread_state_name(enum rr_spread_state st)
{
	static const char *const names[] = {
		[RR_SPREAD_OFF] = "off",
		[RR_SPREAD_ON] = "on",
		[RR_SPREAD_NO_XDP] = "no_xdp",
		[RR_SPREAD_CLASSIFIER] = "classifier",
		[RR_SPREAD_HELD] = "held",
		[RR_SPREAD_NO_COPY] = "no_copy",
		[RR_SPREAD_CPU] = "cpu_failed",
	};

	return st < sizeof(names) / sizeof(names[0]) ? names[st] : "?";
}

/* Slot @s's state, given the port entry @conf rr_slot_sync() made so far;
 * with RR_SPREAD_ON every listed CPU has its cpumap entry. */
static enum rr_spread_state judge(struct rr_invoker *inv, struct rr_slot *s,
				  const struct rr_port_conf *conf, int *err,
				  int *bad_cpu)
{
	struct rr_spread *sp = &s->spread;
	uint32_t slot = (uint32_t)(s - inv->slots), i;
	char why[RR_ERRLEN];
	int ret;

	/* Checked when the config was read: a failure here spreads none. */
	if (!s->svc->xdp_spread[0] ||
	    rr_parse_spread(s->svc->xdp_spread, sp->cpus, &sp->n, why,
			    sizeof(why)))
		return RR_SPREAD_OFF;
	if (!s->tier_xdp || s->cached)
		return RR_SPREAD_NO_XDP;
	if (s->svc->fn->flags & RR_FN_XDP_CLASSIFIER)
		return RR_SPREAD_CLASSIFIER;
	if (!(conf->flags & RR_PORT_XDP))
		return RR_SPREAD_HELD;
	if (slot >= RR_MAX_SLOTS || !inv->xdp.fn_objs_cpumap[slot])
		return RR_SPREAD_NO_COPY;
	for (i = 0; i < sp->n; i++) {
		ret = rr_xdp_spread_cpu(&inv->xdp, (uint32_t)sp->cpus[i], true);
		if (ret) {
			*err = ret;
			*bad_cpu = sp->cpus[i];
			return RR_SPREAD_CPU;
		}
	}
	return RR_SPREAD_ON;
}

void rr_spread_port_conf(struct rr_invoker *inv, struct rr_slot *s,
			 struct rr_port_conf *conf)
{
	struct rr_spread *sp = &s->spread;
	const char *name = s->svc->fn->name;
	int err = 0, bad_cpu = -1;
	enum rr_spread_state st;
	uint32_t i;

	conf->flags &= ~RR_PORT_SPREAD;
	conf->spread_n = 0;
	memset(conf->spread_cpu, 0, sizeof(conf->spread_cpu));
	st = judge(inv, s, conf, &err, &bad_cpu);
	if (st == RR_SPREAD_ON) {
		conf->flags |= RR_PORT_SPREAD;
		conf->spread_n = (uint16_t)sp->n;
		for (i = 0; i < sp->n; i++)
			conf->spread_cpu[i] = (uint16_t)sp->cpus[i];
	}
	if (st == sp->state && bad_cpu == sp->bad_cpu &&
	    !strcmp(sp->said, s->svc->xdp_spread))
		return;
	if (st == RR_SPREAD_ON)
		pr_info("'%s': its XDP program runs on CPUs %s (xdp_spread)\n",
			name, s->svc->xdp_spread);
	else if (st == RR_SPREAD_CPU)
		pr_warn("'%s': xdp_spread = %s: CPU %d: %s%s; its requests stay on the CPU that receives them\n",
			name, s->svc->xdp_spread, bad_cpu, strerror(-err),
			err == -ENODEV ? " (no such CPU)" : "");
	else if (st != RR_SPREAD_OFF)
		pr_warn("'%s': xdp_spread = %s waits: %s; its requests stay on the CPU that receives them\n",
			name, s->svc->xdp_spread, state_text(st));
	else if (sp->state == RR_SPREAD_ON)
		pr_info("'%s': xdp_spread off: its XDP program runs on the CPU that receives its requests\n",
			name);
	sp->state = st;
	sp->bad_cpu = bad_cpu;
	snprintf(sp->said, sizeof(sp->said), "%s", s->svc->xdp_spread);
}

void rr_spread_forget(struct rr_slot *s)
{
	s->spread.state = RR_SPREAD_OFF;
	s->spread.said[0] = '\0';
}

void rr_spread_sweep(struct rr_invoker *inv)
{
	bool used[RR_MAX_CPUS] = { false };
	const struct rr_spread *sp;
	uint32_t slot, i, cpu;
	int ret;

	for (slot = 0; slot < inv->nslots; slot++) {
		sp = &inv->slots[slot].spread;
		if (sp->state != RR_SPREAD_ON)
			continue;
		for (i = 0; i < sp->n; i++)
			if (sp->cpus[i] >= 0 && sp->cpus[i] < RR_MAX_CPUS)
				used[sp->cpus[i]] = true;
	}
	for (cpu = 0; cpu < inv->xdp.spread_ncpus; cpu++) {
		if (!inv->xdp.spread_on[cpu] || used[cpu])
			continue;
		ret = rr_xdp_spread_cpu(&inv->xdp, cpu, false);
		if (ret)
			pr_warn("cannot take CPU %u out of xdp_spread's cpumap: %s\n",
				cpu, strerror(-ret));
	}
}
