// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP loops (serve/tcp.c), run and supervised: each as a thread
 * (isolation = thread) or as a cell (forked by rr_cell_fork() as a
 * worker's is, keeping of the shared memory only its own report and
 * struct rr_live read-only, of the descriptors only its listeners, no
 * capability, and a system call filter that adds a TCP server's calls to
 * a cell's). The supervisor's side is the workers' too: the overrun
 * watch (rr_call_watch()), a fault charged to the function a loop died
 * in, a fresh loop started on the next tick.
 *
 * Hand-over: when the functions change (a reload's fresh instances reach
 * a cell only through a fresh fork) or the listeners do, the serving loop
 * is told to retire: it stops accepting, answers what its connections
 * have under way, closes each as it falls idle, and exits; the next loop
 * accepts from the same listeners meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cell.h"
#include "clock.h"
#include "invoker.h"
#include "log.h"
#include "seccomp.h"
#include "slots.h"
#include "tcp.h"
#include "tcp_loops.h"
#include "worker.h"

/* Stopping waits this long for a loop inside a function. */
#define JOIN_S 3

static void retire_loop(struct rr_invoker *inv, int li)
{
	struct rr_tcp_loop *l = &inv->tcp.loops[li];

	if (!l->running || l->retiring)
		return;
	l->retiring = true;
	l->retired_ns = rr_now_ns();
	__atomic_store_n(&inv->live->tcp_retire[li], true, __ATOMIC_RELEASE);
	if (inv->tcp.cur == li)
		inv->tcp.cur = -1;
}

/* ---- As a thread ---- */

struct thread_arg {
	struct rr_invoker *inv;
	uint32_t li;
	int lfd[RR_MAX_SLOTS];
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	struct rr_tcp_serve *l;
	int ret;

	l = rr_tcp_serve_new(a->inv, a->li, a->lfd, false);
	if (!l) {
		pr_warn("TCP: cannot set the loop up: %s\n", strerror(ENOMEM));
		for (ret = 0; ret < RR_MAX_SLOTS; ret++)
			if (a->lfd[ret] >= 0)
				close(a->lfd[ret]);
		free(a);
		return NULL;
	}
	free(a);
	ret = rr_worker_drop_caps();
	if (ret)
		pr_warn("TCP: cannot drop the loop's capabilities: %s\n",
			strerror(-ret));
	ret = rr_tcp_serve_setup(l);
	if (ret)
		pr_warn("TCP: cannot set the loop up: %s\n", strerror(-ret));
	else
		rr_tcp_serve_run(l);
	rr_tcp_serve_free(l);
	return NULL;
}

static int start_thread(struct rr_invoker *inv, uint32_t li)
{
	struct thread_arg *a = calloc(1, sizeof(*a));
	sigset_t all, old;
	uint32_t slot;
	int ret;

	if (!a)
		return -ENOMEM;
	a->inv = inv;
	a->li = li;
	/* Its own copies: the main thread may close its listeners (a
	 * function removed) while this loop still hands over. */
	for (slot = 0; slot < RR_MAX_SLOTS; slot++)
		a->lfd[slot] = inv->tcp.listen_fd[slot] < 0
				       ? -1
				       : fcntl(inv->tcp.listen_fd[slot],
					       F_DUPFD_CLOEXEC, 3);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&inv->tcp.loops[li].tid, NULL, thread_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		for (slot = 0; slot < RR_MAX_SLOTS; slot++)
			if (a->lfd[slot] >= 0)
				close(a->lfd[slot]);
		free(a);
		return -ret;
	}
	pthread_setname_np(inv->tcp.loops[li].tid, "rr-tcp");
	return 0;
}

/* ---- As a cell ---- */

/* The cell's loop: which one, set before the fork; its state, made in the
 * child. */
static struct tcp_cell {
	struct rr_invoker *inv;
	uint32_t li;
	struct rr_tcp_serve *serve;
} cell;

/* Keeps the listeners of this loop, closes every other socket of the
 * main thread's (see struct rr_cell). */
static bool own_listener(const void *ctx, int fd)
{
	const struct tcp_cell *c = ctx;

	return rr_tcp_serve_owns(c->serve, fd);
}

/* Everything shared but its report and struct rr_live (read-only) goes:
 * the UMEMs and their rings, the workers' reports, the queues' locks, the
 * other loop's report, the reply cache (which answers for every function
 * inside XDP, and which replies over TCP never go to). */
static int confine(void *ctx)
{
	struct tcp_cell *c = ctx;
	struct rr_invoker *inv = c->inv;
	uint32_t li;

	c->serve = rr_tcp_serve_new(inv, c->li, inv->tcp.listen_fd, true);
	if (!c->serve)
		return -ENOMEM;
	if (mmap(inv->live, RR_LIVE_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED,
		 inv->live_fd, 0) == MAP_FAILED)
		return -errno;
	rr_unmap_workers(inv, NULL);
	if (inv->xdp.cache)
		munmap(inv->xdp.cache, inv->xdp.cache_size);
	for (li = 0; li < RR_TCP_LOOPS; li++)
		if (li != c->li)
			munmap(&inv->tcp.reports[li],
			       sizeof(inv->tcp.reports[li]));
	return 0;
}

/* The rest of the cell's confinement: its loop set up, then no
 * capability and the TCP server's system call filter. */
static int confine_loop(void *ctx)
{
	struct tcp_cell *c = ctx;
	int ret;

	ret = rr_tcp_serve_setup(c->serve);
	if (ret) {
		pr_warn("TCP: cannot set the loop up: %s\n", strerror(-ret));
		return ret;
	}
	ret = rr_worker_drop_caps();
	return ret ? ret : rr_tcp_cell_seccomp(c->inv);
}

static void run_loop(void *ctx)
{
	struct tcp_cell *c = ctx;

	rr_tcp_serve_run(c->serve);
}

static int start_cell(struct rr_invoker *inv, uint32_t li)
{
	struct rr_cell c = {
		.name = "rr-tcp",
		.cpu = -1,
		.keep_memory = confine,
		.own = own_listener,
		.confine = confine_loop,
		.run = run_loop,
		.ctx = &cell,
	};
	pid_t pid;

	cell.inv = inv;
	cell.li = li;
	cell.serve = NULL;
	pid = rr_cell_fork(&c);
	if (pid < 0)
		return pid;
	inv->tcp.loops[li].pid = pid;
	return 0;
}

/* ---- The supervisor's side ---- */

static void start_loop(struct rr_invoker *inv)
{
	bool cells = inv->cfg->isolation == RR_ISOLATION_CELL;
	struct rr_tcp *t = &inv->tcp;
	struct rr_tcp_loop *l;
	uint32_t li;
	int ret;

	for (li = 0; li < RR_TCP_LOOPS && t->loops[li].running; li++)
		;
	/* Both busy: the one handing over goes first. */
	if (li == RR_TCP_LOOPS)
		return;
	l = &t->loops[li];
	memset(l, 0, sizeof(*l));
	l->rep = &t->reports[li];
	memset(l->rep, 0, sizeof(*l->rep));
	__atomic_store_n(&inv->live->tcp_retire[li], false, __ATOMIC_RELEASE);
	ret = cells ? start_cell(inv, li) : start_thread(inv, li);
	if (ret) {
		pr_warn("TCP: cannot start the loop: %s; retrying\n",
			strerror(-ret));
		t->next_start_ns = rr_now_ns() + 1000000000ULL;
		return;
	}
	l->running = true;
	t->cur = (int)li;
}

/* Loop @li has ended (@st: its cell's wait status; 0 for a thread): its
 * counts kept, a fault charged to the function it died in. */
static void loop_ended(struct rr_invoker *inv, uint32_t li, int st,
		       bool overran)
{
	struct rr_tcp *t = &inv->tcp;
	struct rr_tcp_loop *l = &t->loops[li];
	struct rr_tcp_report *r = l->rep;
	bool clean = WIFEXITED(st) && !WEXITSTATUS(st) && !overran;
	uint32_t slot, c, k;
	uint64_t *d, *s;

	for (slot = 0; slot < RR_MAX_SLOTS; slot++) {
		d = (uint64_t *)&t->done[slot];
		s = (uint64_t *)&r->stats[slot];
		for (k = 0; k < sizeof(t->done[slot]) / sizeof(uint64_t); k++)
			d[k] += rr_stat_read(&s[k]);
		for (c = 0; c < RR_FN_MAX_COUNTERS; c++)
			t->done_fn[slot][c] +=
				rr_stat_read(&r->fn_counters[slot][c]);
	}
	l->running = false;
	l->pid = 0;
	if (t->cur == (int)li)
		t->cur = -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == RR_CELL_UNCONFINED) {
		if (!t->unconfined)
			pr_warn("the TCP cell cannot be confined: TCP is not served; trying again every second\n");
		t->unconfined = true;
		t->next_start_ns = rr_now_ns() + 1000000000ULL;
		return;
	}
	t->unconfined = false;
	if (clean)
		return;
	slot = __atomic_load_n(&r->call_slot, __ATOMIC_RELAXED);
	if ((__atomic_load_n(&r->call_seq, __ATOMIC_RELAXED) & 1) &&
	    slot < inv->nslots) {
		pr_warn("function '%s' %s over TCP: the TCP cell restarts\n",
			inv->slots[slot].svc->fn->name,
			overran ? "ran past max_run_us" : "crashed");
		rr_charge_fault(inv, &inv->slots[slot], overran, rr_now_ns());
	} else {
		pr_warn("the TCP cell died outside a function: it restarts\n");
	}
	inv->cell_restarts++;
	/* Crashing at once again must not spin. */
	t->next_start_ns = rr_now_ns() + 100000000ULL;
}

bool rr_tcp_reaped(struct rr_invoker *inv, pid_t pid, int status)
{
	uint32_t li;

	for (li = 0; li < RR_TCP_LOOPS; li++)
		if (inv->tcp.loops[li].running &&
		    inv->tcp.loops[li].pid == pid) {
			loop_ended(inv, li, status, false);
			return true;
		}
	return false;
}

static void kill_cell(struct rr_invoker *inv, uint32_t li, bool overran)
{
	pid_t pid = inv->tcp.loops[li].pid;
	int st;

	kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) == pid)
		loop_ended(inv, li, st, overran);
}

/* Watches loop @li's call as a worker's (rr_call_watch()), and a retiring loop
 * that does not end. */
static bool watch(struct rr_invoker *inv, uint32_t li, uint64_t now)
{
	bool cells = inv->cfg->isolation == RR_ISOLATION_CELL;
	struct rr_tcp_loop *l = &inv->tcp.loops[li];
	uint64_t seq = __atomic_load_n(&l->rep->call_seq, __ATOMIC_ACQUIRE);
	uint32_t slot = __atomic_load_n(&l->rep->call_slot, __ATOMIC_RELAXED);
	const struct rr_service *svc;
	bool calls = (seq & 1) || seq != l->sv.seq;
	uint64_t limit;

	if (l->retiring && cells &&
	    now - l->retired_ns > (RR_TCP_RETIRE_MAX_MS + 1000) * 1000000ULL) {
		kill_cell(inv, li, false);
		return false;
	}
	if (!(seq & 1) || slot >= inv->nslots) {
		l->sv.seq = seq;
		return calls;
	}
	svc = inv->slots[slot].svc;
	limit = (uint64_t)svc->max_run_us * 1000;
	switch (rr_call_watch(&l->sv, seq, limit, cells ? l->pid : 0, now)) {
	case RR_OVERRUN_KILL:
		kill_cell(inv, li, true);
		break;
	case RR_OVERRUN_WARN:
		pr_warn("function '%s' has run past max_run_us (%u us) over TCP; a thread cannot be taken back (isolation = cell can)\n",
			svc->fn->name, svc->max_run_us);
		break;
	case RR_IN_TIME:
		break;
	}
	return calls;
}

bool rr_tcp_supervise(struct rr_invoker *inv, uint64_t now)
{
	bool cells = inv->cfg->isolation == RR_ISOLATION_CELL, calls = false;
	struct rr_tcp *t = &inv->tcp;
	bool changed = false;
	uint32_t li;

	if (!t->reports)
		return false;
	/* A reload, a deploy or a removal changed what is served: the loop
	 * serving has the old set, a fresh one takes over. */
	if (!inv->stopping && (rr_tcp_sync(inv, &changed), changed) &&
	    t->cur >= 0)
		retire_loop(inv, t->cur);
	for (li = 0; li < RR_TCP_LOOPS; li++) {
		if (!t->loops[li].running)
			continue;
		if (!cells && !pthread_tryjoin_np(t->loops[li].tid, NULL)) {
			loop_ended(inv, li, 0, false);
			continue;
		}
		calls |= watch(inv, li, now);
	}
	if (t->cur < 0 && !inv->stopping && rr_tcp_any_listener(inv) &&
	    now >= t->next_start_ns)
		start_loop(inv);
	return calls;
}

void rr_tcp_renew(struct rr_invoker *inv)
{
	if (inv->tcp.cur >= 0)
		retire_loop(inv, inv->tcp.cur);
}

bool rr_tcp_passed_epoch(struct rr_invoker *inv, uint64_t e)
{
	uint32_t li;

	for (li = 0; inv->tcp.reports && li < RR_TCP_LOOPS; li++)
		if (inv->tcp.loops[li].running &&
		    __atomic_load_n(&inv->tcp.reports[li].seen_epoch,
				    __ATOMIC_ACQUIRE) < e)
			return false;
	return true;
}

void rr_tcp_stop(struct rr_invoker *inv)
{
	bool cells = inv->cfg && inv->cfg->isolation == RR_ISOLATION_CELL;
	struct timespec ms = { 0, 1000000L }, until;
	struct rr_tcp *t = &inv->tcp;
	uint32_t li, tries;
	int st;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += JOIN_S;
	for (li = 0; t->reports && li < RR_TCP_LOOPS; li++) {
		if (!t->loops[li].running)
			continue;
		/* live->stop is set: a loop ends within a tick, unless it
		 * is inside a function. */
		if (cells) {
			for (tries = 0; tries < JOIN_S * 1000; tries++) {
				if (waitpid(t->loops[li].pid, &st, WNOHANG) ==
				    t->loops[li].pid) {
					loop_ended(inv, li, st, false);
					break;
				}
				nanosleep(&ms, NULL);
			}
			if (t->loops[li].running)
				kill_cell(inv, li, false);
		} else if (!pthread_timedjoin_np(t->loops[li].tid, NULL,
						 &until)) {
			loop_ended(inv, li, 0, false);
		} else {
			pr_warn("the TCP loop did not come back from a function within %d s\n",
				JOIN_S);
			inv->stuck = true;
			return;
		}
	}
	rr_tcp_close(inv);
}
