// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouterctl threads N: workers per queue changed while serving. Up:
 * sockets made and mapped, workers started, the round-robin widened last.
 * Down: the round-robin narrowed and the sockets unmapped first, then each
 * retiring worker empties its rings and ends.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "invoker.h"
#include "lifecycle.h"
#include "log.h"
#include "seccomp.h"
#include "slots.h"
#include "xsk.h"

/* Every port's round-robin over @n sockets per queue. */
static int set_nsocks(struct rr_invoker *inv, uint32_t n)
{
	uint32_t slot;
	int ret;

	for (slot = 0; slot < inv->nslots; slot++) {
		inv->slots[slot].port_conf.nsocks = n;
		ret = rr_slot_sync(inv, &inv->slots[slot]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Sockets, and XSKMAP entries, for threads nthreads..n-1 of every queue;
 * those made before (and left when threads went down) are reused. */
static int more_sockets(struct rr_invoker *inv, uint32_t n, char *msg,
			size_t msglen)
{
	uint32_t q, t, slot;
	int ret;

	for (t = inv->threads_made; t < n; t++) {
		for (q = 0; q < inv->nqueues; q++)
			for (slot = 0; slot < inv->nslots; slot++) {
				ret = rr_xsk_later(inv, q, t, slot, msg,
						   msglen);
				if (ret)
					return ret;
			}
		inv->threads_made = t + 1; /* whole threads only */
	}
	for (t = inv->nthreads; t < n; t++)
		for (q = 0; q < inv->nqueues; q++)
			for (slot = 0; slot < inv->nslots; slot++) {
				ret = rr_xsk_map(inv, q, t, slot, msg, msglen);
				if (ret)
					return ret;
			}
	return 0;
}

/*
 * New states for the functions that keep one per worker (init_worker):
 * every worker that will run needs its own. Those without keep theirs,
 * as do those whose init_worker() gave none (dns without dnstap: its
 * zones are not read again for a thread more).
 */
static int renew_worker_states(struct rr_invoker *inv, char *msg, size_t msglen)
{
	struct rr_fn_instance *old[RR_MAX_SLOTS] = { 0 }, *fresh;
	char err[RR_ERRLEN];
	bool swapped = false;
	struct rr_slot *s;
	uint32_t slot;
	int ret;

	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		if (!s->inst || !rr_fn_instance_per_worker(s->inst))
			continue;
		swapped = true;
		ret = rr_slot_instance_new(inv, s, s->inst->fn, s->svc, &fresh,
					   err, sizeof(err));
		if (ret) {
			snprintf(msg, msglen, "%s", err);
			goto undo;
		}
		old[slot] = rr_swap_instance(s, fresh);
	}
	/* Nothing swapped, nothing to wait for: the running cells serve on
	 * as they are (a new cell group's function is steered to its new
	 * workers before the others are forked again). */
	if (swapped)
		rr_retire_instances(inv, old);
	return 0;
undo:
	/* Put back what was swapped; nothing ran on the new ones yet that
	 * the old ones cannot take over. */
	for (slot = 0; slot < inv->nslots; slot++)
		if (old[slot]) {
			s = &inv->slots[slot];
			fresh = s->inst;
			__atomic_store_n(&s->inst, old[slot], __ATOMIC_RELEASE);
			old[slot] = fresh;
		}
	rr_retire_instances(inv, old);
	return ret;
}

/*
 * Fewer threads: out of the rotation first, then out of the map, so that
 * nothing new reaches the retiring sockets. Programs still running with
 * the old entries finish within the grace period; then each retiring
 * worker empties its rings and ends.
 */
static int fewer(struct rr_invoker *inv, uint32_t n, char *msg, size_t msglen)
{
	struct timespec grace = { 0, 50000000L };
	uint32_t q, t, slot, was = inv->nthreads;
	struct rr_worker *w;
	int ret = set_nsocks(inv, n);

	for (t = n; !ret && t < was; t++)
		for (q = 0; q < inv->nqueues; q++)
			for (slot = 0; slot < inv->nslots; slot++)
				rr_xdp_clear_socket(&inv->xdp, q, t, slot);
	if (ret) {
		snprintf(msg, msglen, "cannot update the XDP map: %s",
			 strerror(-ret));
		return ret;
	}
	nanosleep(&grace, NULL);
	for (t = n; t < was; t++)
		for (q = 0; q < inv->nqueues; q++) {
			w = rr_worker_at(inv, q, t);
			w->retire = true;
			__atomic_store_n(&inv->live->retire[w->index], true,
					 __ATOMIC_RELEASE);
		}
	for (t = n; t < was; t++)
		for (q = 0; q < inv->nqueues; q++)
			rr_join_worker(inv, rr_worker_at(inv, q, t));
	inv->nthreads = n;
	return 0;
}

/* Workers was..n-1 of every queue started on @cpus, signals left to the
 * main thread. */
static int start_more(struct rr_invoker *inv, uint32_t was, uint32_t n,
		      const int *cpus, int ncpus)
{
	sigset_t all, old;
	uint32_t q, t;
	int ret = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (q = 0; q < inv->nqueues && !ret; q++)
		for (t = was; t < n && !ret; t++)
			ret = rr_start_worker(
				inv, q, t,
				rr_worker_cpu(inv, cpus, ncpus, q, t));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/* Workers nthreads..n-1 of every queue: sockets made and mapped, states
 * for the new workers, the workers started. */
static int start_workers(struct rr_invoker *inv, uint32_t n, char *msg,
			 size_t msglen)
{
	uint32_t was = inv->nthreads;
	int cpus[RR_MAX_CPUS], ncpus, ret;

	ret = more_sockets(inv, n, msg, msglen);
	if (ret)
		return ret;
	inv->nthreads = n;
	ret = renew_worker_states(inv, msg, msglen);
	if (ret) {
		inv->nthreads = was;
		return ret;
	}
	ncpus = rr_allowed_cpus(inv->cfg, cpus);
	if (ncpus <= 0) {
		snprintf(msg, msglen, "no CPU to run workers on");
		inv->nthreads = was;
		return -EINVAL;
	}
	ret = start_more(inv, was, n, cpus, ncpus);
	if (ret)
		snprintf(msg, msglen, "cannot start a worker: %s",
			 strerror(-ret));
	return ret;
}

/* More threads (one cell group): the new workers started, and only then
 * the round-robin widened. */
static int more(struct rr_invoker *inv, uint32_t n, char *msg, size_t msglen)
{
	uint32_t was = inv->group_threads;
	int ret;

	/* A new worker's cell group and CPU are reckoned from it. */
	inv->group_threads = n;
	ret = start_workers(inv, n, msg, msglen);
	if (ret) {
		if (inv->nthreads < n)
			inv->group_threads = was;
		return ret;
	}
	ret = set_nsocks(inv, n);
	if (ret)
		snprintf(msg, msglen, "cannot update the XDP map: %s",
			 strerror(-ret));
	return ret;
}

/*
 * Until workers @from..nthreads-1 of every queue have begun their first
 * round, 2 s at most: a new cell group's function is steered to them
 * only then, where its requests would otherwise wait in their rings
 * while the cells start, or overflow them.
 */
#define SERVING_TIMEOUT_MS 2000
static void wait_serving(struct rr_invoker *inv, uint32_t from)
{
	struct timespec ms = { 0, 1000000L };
	uint32_t q, t, tries, left;

	for (tries = 0; tries < SERVING_TIMEOUT_MS; tries++) {
		left = 0;
		for (q = 0; q < inv->nqueues; q++)
			for (t = from; t < inv->nthreads; t++)
				left += !__atomic_load_n(
					&rr_worker_at(inv, q, t)->rep->serving,
					__ATOMIC_ACQUIRE);
		if (!left)
			return;
		nanosleep(&ms, NULL);
	}
	pr_warn("cell group %u: a worker did not begin within %d ms; its function is steered to it all the same\n",
		inv->ngroups - 1, SERVING_TIMEOUT_MS);
}

int rr_invoker_add_group(struct rr_invoker *inv, char *msg, size_t msglen)
{
	int ret = rr_cell_group_room(inv, inv->ngroups + 1, msg, msglen);

	if (ret)
		return ret;
	/* Its cells load its own filter, built before they fork. */
	inv->ngroups++;
	ret = rr_seccomp_prepare(inv);
	if (ret) {
		snprintf(msg, msglen,
			 "cannot build the new cells' system call filter: %s",
			 strerror(-ret));
	} else {
		ret = start_workers(inv, inv->nthreads + inv->group_threads,
				    msg, msglen);
	}
	if (ret) {
		inv->ngroups--;
		return ret;
	}
	wait_serving(inv, inv->nthreads - inv->group_threads);
	pr_info("cell group %u: %u worker%s per queue, threads %u-%u\n",
		inv->ngroups - 1, inv->group_threads,
		inv->group_threads == 1 ? "" : "s",
		inv->nthreads - inv->group_threads, inv->nthreads - 1);
	return 0;
}

int rr_invoker_set_threads(struct rr_invoker *inv, uint32_t n, char *msg,
			   size_t msglen)
{
	uint32_t was = inv->nthreads;
	int ret;

	if (n < 1 || n > RR_MAX_THREADS) {
		snprintf(msg, msglen, "threads must be 1-%d, not %u",
			 RR_MAX_THREADS, n);
		return -EINVAL;
	}
	/* Each group's threads start at a multiple of their number. */
	if (inv->ngroups > 1) {
		snprintf(
			msg, msglen,
			"threads cannot change while functions have cells of their own (%u cell groups, own_cells): restart with -t %u",
			inv->ngroups, n);
		return -EBUSY;
	}
	if (n == was) {
		snprintf(msg, msglen, "%u thread%s per queue already", n,
			 n == 1 ? "" : "s");
		return 0;
	}
	ret = n < was ? fewer(inv, n, msg, msglen) : more(inv, n, msg, msglen);
	if (ret)
		return ret;
	inv->group_threads = n;
	snprintf(msg, msglen, "%u thread%s per queue (was %u)", n,
		 n == 1 ? "" : "s", was);
	pr_notice("%s\n", msg);
	return 0;
}
