// SPDX-License-Identifier: GPL-2.0
/*
 * steering = groups (docs/DESIGN.md, "Steering"): a function's requests go
 * to the least loaded of its own workers, the threads its `workers` list
 * names in every queue, so that a slow function's calls do not hold up a
 * quick one's requests (the paper's core separation; its classes are
 * functions here). With group_delay_us the group is dynamic, as the
 * paper's: when the function's requests waited longer than that for a
 * worker (their mean queuing delay, reqrouter_queue_delay_seconds, over
 * the last look, or how long those queued behind a batch that has not
 * ended have waited so far) the group takes one more of the queue's
 * workers, those
 * in no other function's group first; after a second's looks below half
 * of it, it gives the last one back, never below its list. The decision
 * is here, in user space; the XDP program reads the group from the
 * port's entry (struct rr_port_conf.group_mask), written by the slots'
 * rr_slot_sync(), which the tick is given: the slots sit on the features
 * and call them, never the other way.
 *
 * The queuing delays come from the workers' reports and their load
 * (struct rr_worker_load), which a cell can write: a lying cell can make its function's group grow or shrink
 * within the queue's threads, which moves requests among workers and
 * nothing else.
 */
#include <string.h>

#include "invoker.h"
#include "log.h"

#define LOOK_NS 100000000ULL /* how often a group is judged */
#define CALM_LOOKS 10	     /* below half the threshold this often: shrink */

/* A function's threads in every queue now, counted from its cell
 * group's first (rr_first_thread()), as masks are. */
static uint32_t threads_mask(const struct rr_invoker *inv)
{
	return inv->group_threads >= 32 ? ~0U : (1U << inv->group_threads) - 1;
}

void rr_steer_parse(struct rr_slot *s)
{
	char err[RR_ERRLEN];

	/* Checked when the config was read: a failure here lists none. */
	if (rr_parse_workers(s->svc->workers, s->group.listed, err,
			     sizeof(err)))
		memset(s->group.listed, 0, sizeof(s->group.listed));
}

/* Slot @s's `workers` group of class @cls as listed, every thread that
 * exists or not; 0 if none is listed. */
static uint32_t listed_raw(const struct rr_slot *s, uint32_t cls)
{
	return cls < RR_XDP_CLASSES ? s->group.listed[cls] : 0;
}

/* Slot @s's listed threads of class @cls (all of them without a list, or
 * when none of those listed runs). */
static uint32_t listed(const struct rr_invoker *inv, const struct rr_slot *s,
		       uint32_t cls)
{
	uint32_t all = threads_mask(inv), m = listed_raw(s, cls) & all;

	return m ? m : all;
}

/*
 * A group whose list names no thread that runs (workers = 3 with -t 2,
 * or after reqrouterctl threads) is served by every thread: said once,
 * and again after it was right in between.
 */
static void check_list(const struct rr_invoker *inv, struct rr_slot *s)
{
	bool none = false;
	uint32_t raw, k;

	for (k = 0; k < RR_XDP_CLASSES; k++) {
		raw = listed_raw(s, k);
		none |= raw && !(raw & threads_mask(inv));
	}

	if (none && !s->group.said_none)
		pr_warn("[function %s] workers = %s names no thread of the %u each queue has: every thread serves it\n",
			s->svc->fn->name, s->svc->workers, inv->group_threads);
	s->group.said_none = none;
}

uint32_t rr_steer_group_mask(const struct rr_invoker *inv,
			     const struct rr_slot *s, uint32_t cls)
{
	if (s->svc->steering != RR_STEER_GROUPS || cls >= RR_XDP_CLASSES)
		return 0;
	if (cls)
		return listed_raw(s, cls) ? listed(inv, s, cls) : 0;
	return (listed(inv, s, 0) | s->group.grown) & threads_mask(inv);
}

/* Slot @slot's queuing delay so far, over all its sockets. */
static void delay_sums(const struct rr_invoker *inv, uint32_t slot,
		       uint64_t *sum_ns, uint64_t *count)
{
	const struct rr_latency *l;
	uint32_t q, t, b;

	*sum_ns = 0;
	*count = 0;
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < inv->threads_made; t++) {
			l = &rr_sock_at((struct rr_invoker *)inv, q, t, slot)
				     ->stats->queue_delay;
			*sum_ns += rr_stat_read(&l->sum_ns);
			for (b = 0; b <= RR_LATENCY_NLE; b++)
				*count += rr_stat_read(&l->bucket[b]);
		}
}

/*
 * How long requests have been waiting behind a batch that has not ended,
 * in us: the oldest batch of a worker of slot @s's @have (in any queue,
 * counted from its cell group's first thread) that has
 * more requests than the one in its hands. The mean queuing delay counts
 * a request only once it is taken, which a worker stuck in a call does
 * not do: this sees it while it happens.
 */
static uint64_t stuck_us(const struct rr_invoker *inv, const struct rr_slot *s,
			 uint32_t have, uint64_t now)
{
	uint32_t q, t, first = rr_first_thread(inv, s);
	const struct rr_worker_load *l;
	uint64_t most = 0, busy, backlog;

	if (!inv->xdp.load)
		return 0;
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0;
		     t < inv->group_threads && first + t < RR_MAX_THREADS;
		     t++) {
			if (!(have & (1U << t)))
				continue;
			l = &inv->xdp.load[q].w[first + t];
			backlog = rr_backlog(
				__atomic_load_n(&l->sent, __ATOMIC_RELAXED),
				__atomic_load_n(&l->done, __ATOMIC_RELAXED));
			busy = __atomic_load_n(&l->busy_ns, __ATOMIC_RELAXED);
			if (backlog >= 2 && busy && now > busy &&
			    (now - busy) / 1000 > most)
				most = (now - busy) / 1000;
		}
	return most;
}

/* The thread slot @s's group should grow into: none of another group's
 * list first, then any; -1 if every thread is in it. */
static int next_thread(const struct rr_invoker *inv, const struct rr_slot *s,
		       uint32_t have)
{
	uint32_t others = 0, free, slot;
	const struct rr_slot *o;

	for (slot = 0; slot < inv->nslots; slot++) {
		o = &inv->slots[slot];
		if (o != s && !o->removed &&
		    o->svc->steering == RR_STEER_GROUPS)
			others |= listed(inv, o, 0);
	}
	free = threads_mask(inv) & ~have;
	if (!free)
		return -1;
	if (free & ~others)
		free &= ~others;
	return __builtin_ctz(free);
}

/* @m as a list of threads, "0,2", into @buf. */
static const char *thread_list(uint32_t m, char *buf, size_t len)
{
	size_t n = 0;
	uint32_t t;

	buf[0] = '\0';
	for (t = 0; t < 32 && n < len; t++)
		if (m & (1U << t))
			n += (size_t)snprintf(buf + n, len - n, "%s%u",
					      n ? "," : "", t);
	return buf;
}

/*
 * One look at slot @s, at @now: grow, shrink or keep; true if its group
 * changed. Judged by the larger of the mean queuing delay of the requests
 * taken since the last look and how long any is waiting now.
 */
static bool judge(struct rr_invoker *inv, struct rr_slot *s, uint32_t slot,
		  uint64_t now)
{
	uint64_t sum, count, mean_us, limit = s->svc->group_delay_us, live;
	uint32_t have = rr_steer_group_mask(inv, s, 0),
		 base = listed(inv, s, 0);
	struct rr_group *g = &s->group;
	char list[RR_WORKERS_LEN * 2];
	int t;

	delay_sums(inv, slot, &sum, &count);
	/* The first look only starts the window; counters that went back
	 * (a cell's report, a thread's new sockets) start it again. */
	if (!g->primed || count < g->count || sum < g->sum_ns) {
		g->sum_ns = sum;
		g->count = count;
		g->primed = true;
		return false;
	}
	/* No request waited at all: as calm as it gets. */
	mean_us = count == g->count
			  ? 0
			  : (sum - g->sum_ns) / (count - g->count) / 1000;
	g->sum_ns = sum;
	g->count = count;
	live = stuck_us(inv, s, have, now);
	if (live > mean_us)
		mean_us = live;
	if (mean_us > limit) {
		g->calm = 0;
		t = next_thread(inv, s, have);
		if (t < 0)
			return false;
		g->grown |= 1U << t;
		pr_notice(
			"[function %s] group grows to workers %s: its requests waited %llu us for one, over group_delay_us %llu\n",
			s->svc->fn->name,
			thread_list(have | 1U << t, list, sizeof(list)),
			(unsigned long long)mean_us, (unsigned long long)limit);
		return true;
	}
	if (mean_us * 2 >= limit || !(g->grown & ~base)) {
		g->calm = 0;
		return false;
	}
	if (++g->calm < CALM_LOOKS)
		return false;
	g->calm = 0;
	/* The last one taken goes first. */
	g->grown &= ~(1U << (31 - __builtin_clz(g->grown & ~base)));
	pr_notice(
		"[function %s] group shrinks to workers %s: its requests waited %llu us for one, under half of group_delay_us %llu\n",
		s->svc->fn->name,
		thread_list(rr_steer_group_mask(inv, s, 0), list, sizeof(list)),
		(unsigned long long)mean_us, (unsigned long long)limit);
	return true;
}

/* Slot @s back to its list (a reload switched growth off), written to
 * the XDP program unless it is gone. */
static void ungrow(struct rr_invoker *inv, struct rr_slot *s,
		   rr_slot_sync_fn sync)
{
	s->group.primed = false;
	if (!s->group.grown)
		return;
	s->group.grown = 0;
	if (!s->removed)
		sync(inv, s);
}

void rr_steer_tick(struct rr_invoker *inv, rr_slot_sync_fn sync)
{
	uint64_t now = rr_now_ns();
	struct rr_slot *s;
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		if (s->removed || s->svc->steering != RR_STEER_GROUPS) {
			ungrow(inv, s, sync);
			continue;
		}
		if (now < s->group.next_ns)
			continue;
		s->group.next_ns = now + LOOK_NS;
		check_list(inv, s);
		if (!s->svc->group_delay_us) {
			ungrow(inv, s, sync);
			continue;
		}
		if (judge(inv, s, slot, now) && sync(inv, s))
			pr_warn("[function %s] cannot write its worker group to the XDP program\n",
				s->svc->fn->name);
	}
}
