// SPDX-License-Identifier: GPL-2.0
/*
 * Cells (isolation = cell): each worker runs in a process of its own,
 * forked by the main thread once everything is set up. The UMEM area, the
 * rings (libxdp maps them MAP_SHARED), the sockets and the queues', workers'
 * and sockets' state are shared with it; its copy of everything else is
 * frozen at the fork, so a change of functions (reload, deploy, threads)
 * replaces every cell with a fresh fork.
 *
 * The main thread supervises the cells every tick: a cell that died is
 * reaped, the frames it held are put back where they belong (its batch
 * mark, struct rr_batch_mark, says where each one is), the function it was
 * in is charged with a fault, and a new cell takes its place. A cell whose
 * call has run past the function's max_run_us is stopped, checked to be
 * still in that call, and killed: the same path then. A function with
 * quarantine_faults faults in quarantine_window seconds is quarantined: its
 * port drops (or passes) its requests in XDP and the cells drop what was
 * queued, until reqrouterctl unquarantine, a reload or a deploy of it.
 *
 * Threads (isolation = thread) get the overrun check only, as a warning:
 * a thread stuck in a function cannot be taken back.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cell.h"
#include "clock.h"
#include "invoker_internal.h"
#include "log.h"

#define RENEW_TIMEOUT_MS 5000
#define JOIN_TIMEOUT_MS 3000

/*
 * A cell must not hold the main thread's connections open: a control
 * client waits for the end of its answer, an HTTP client for its
 * connection's. Every stream socket goes (the AF_XDP sockets are raw);
 * a function's own connections could not be shared by several cells
 * anyway.
 */
static void close_streams(void)
{
	socklen_t len;
	struct dirent *e;
	int fd, type;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((e = readdir(d))) {
		fd = atoi(e->d_name);
		len = sizeof(type);
		if (fd > 2 && fd != dirfd(d) &&
		    !getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) &&
		    (type == SOCK_STREAM || type == SOCK_SEQPACKET))
			close(fd);
	}
	closedir(d);
}

static void cell_main(struct rr_worker *w, pid_t parent)
{
	struct rlimit nocore = { 0, 0 };
	struct sigaction ign = { .sa_handler = SIG_IGN };
	char name[16];
	cpu_set_t set;
	sigset_t none;

	/* The main thread stops cells through the shared stop flag; a
	 * terminal's ^C or a service manager's SIGTERM to the group is the
	 * main thread's to handle. A dead main thread takes the cells along. */
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGTERM, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	close_streams();
	/* A crash dump of the shared UMEM would slow the restart. */
	setrlimit(RLIMIT_CORE, &nocore);
	snprintf(name, sizeof(name), "rr-cell %u/%u", w->queue, w->thread);
	prctl(PR_SET_NAME, name);
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	rr_worker_run_cell(w);
	_exit(0);
}

int rr_cell_start(struct rr_worker *w)
{
	pid_t parent = getpid(), pid;
	int ret;

	w->restart = false;
	w->call_seq = 0;
	w->sv_seq = 0;
	w->batch.sock = RR_NO_BATCH;
	/* Nothing buffered may be written twice. */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		/* Retried every tick: said once. */
		if (!w->fork_failed)
			pr_warn("cannot fork a cell for queue %u thread %u: %s; retrying\n",
				w->queue, w->thread, strerror(-ret));
		w->fork_failed = true;
		return ret;
	}
	if (!pid)
		cell_main(w, parent);
	if (w->fork_failed)
		pr_info("the cell for queue %u thread %u is forked at last\n",
			w->queue, w->thread);
	w->fork_failed = false;
	w->pid = pid;
	__atomic_store_n(&w->started, true, __ATOMIC_RELEASE);
	return 0;
}

/* Frames to the fill ring, from the main thread. */
static void refill(struct rr_umem *u, const uint64_t *addrs, uint32_t n)
{
	uint32_t idx, i;

	if (!n)
		return;
	rr_umem_lock(u, RR_LOCK_MAIN);
	/* The fill ring holds every frame of the UMEM: this cannot fail. */
	if (xsk_ring_prod__reserve(&u->fill, n, &idx) == n) {
		for (i = 0; i < n; i++)
			*xsk_ring_prod__fill_addr(&u->fill, idx++) = addrs[i];
		xsk_ring_prod__submit(&u->fill, n);
	}
	rr_umem_unlock(u);
}

/*
 * A cell died holding its queue's lock, in recycle_frames(): if the fill
 * ring's producer moved, the frames got there and the completions it read
 * are released; otherwise its reservations are undone and its recycle list
 * stays to be returned.
 */
static void recover_lock(struct rr_worker *w)
{
	struct rr_umem *u = w->umem;
	bool filled;

	if (__atomic_load_n(&u->lock_owner, __ATOMIC_ACQUIRE) != w->index + 1)
		return;
	filled = *u->fill.producer != u->fill_prod;
	if (filled) {
		w->nrecycle = 0;
		__atomic_store_n(u->comp.consumer, u->comp.cached_cons,
				 __ATOMIC_RELEASE);
	} else {
		u->fill.cached_prod = *u->fill.producer;
		u->comp.cached_cons = *u->comp.consumer;
	}
	pr_warn("a cell died holding queue %u's ring lock; its step was %s\n",
		w->queue, filled ? "completed" : "undone");
	rr_umem_unlock(u);
}

/* Replies made before the cell died, onto its socket's TX ring (undoing
 * a reservation it may have made), and the kernel kicked. */
static uint32_t send_made(struct rr_worker *w, struct rr_sock *s, uint32_t n)
{
	s->tx.cached_prod = *s->tx.producer;
	n = rr_tx_put(w, s, n);
	if (n)
		sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	return n;
}

/*
 * The batch a dead cell was in. Requests before the one it was serving
 * were answered or dropped (w->tx, w->recycle): the answers are sent. The
 * one it was serving is dropped as @why. Those after it stay on the RX
 * ring for the next cell. Returns the slot whose request died, or -1.
 */
static int finish_batch(struct rr_worker *w, enum rr_drop why)
{
	struct rr_batch_mark *m = &w->batch;
	struct rr_sock *s;
	uint32_t done, ntx, sent, left;
	int slot = -1;

	if (m->sock == RR_NO_BATCH)
		return -1;
	s = &w->socks[m->sock];
	ntx = m->ntx;
	if (*s->rx.consumer == m->rx_cons) {
		/* Still on RX: what was accounted for is done. */
		done = ntx + (w->nrecycle - m->recycle_start);
		sent = send_made(w, s, ntx);
		left = done;
		if (done < m->n) {
			w->recycle[w->nrecycle++] =
				rr_frame_of(xsk_ring_cons__rx_desc(
						    &s->rx, m->rx_cons + done)
						    ->addr);
			rr_stat_add(&s->stats.drops[why], 1);
			slot = (int)s->slot;
			left = done + 1;
		}
		__atomic_store_n(s->rx.consumer, m->rx_cons + left,
				 __ATOMIC_RELEASE);
		s->rx.cached_cons = m->rx_cons + left;
		rr_stat_add(&s->stats.rx, left);
	} else {
		/* Off RX, maybe not yet on TX. */
		sent = *s->tx.producer == m->tx_prod ? send_made(w, s, ntx)
						     : ntx;
		rr_stat_add(&s->stats.rx, m->n);
	}
	rr_stat_add(&s->stats.tx, sent);
	m->sock = RR_NO_BATCH;
	return slot;
}

static void quarantine(struct rr_invoker *inv, struct rr_slot *s)
{
	const struct rr_service *svc = s->svc;
	int ret;

	char when[64] = "";

	s->quarantined = true;
	s->faults.quarantined_ns = rr_now_ns();
	ret = rr_slot_sync(inv, s);
	if (svc->quarantine_expire)
		snprintf(when, sizeof(when), " in %u s (quarantine_expire), or",
			 svc->quarantine_expire);
	pr_warn("function '%s' quarantined after %u fault%s in %u s: port %u %s its requests (it comes back%s with reqrouterctl unquarantine %s)%s\n",
		svc->fn->name, svc->quarantine_faults,
		svc->quarantine_faults == 1 ? "" : "s", svc->quarantine_window,
		svc->port,
		svc->quarantine_pass ? "passes to the kernel" : "drops", when,
		svc->fn->name, ret ? "; the XDP map could not be updated" : "");
}

/* Quarantines that have lasted their quarantine_expire seconds lift. */
static void expire_quarantines(struct rr_invoker *inv, uint64_t now)
{
	struct rr_slot *s;
	uint32_t exp;

	for (s = inv->slots; s < inv->slots + inv->nslots; s++) {
		exp = s->svc->quarantine_expire;
		if (!s->quarantined || !exp ||
		    now - s->faults.quarantined_ns < exp * 1000000000ULL)
			continue;
		rr_unquarantine_slot(inv, s);
		pr_info("function '%s' is out of quarantine after %u s (quarantine_expire)%s\n",
			s->svc->fn->name, exp,
			s->removed ? ", but stays removed" : "");
	}
}

/* One more fault of the function in @s; quarantines it at the limit. */
static void charge_fault(struct rr_invoker *inv, struct rr_slot *s,
			 bool timeout, uint64_t now)
{
	const struct rr_service *svc = s->svc;
	struct rr_faults *f = &s->faults;
	uint32_t n = svc->quarantine_faults;

	if (timeout)
		f->timeouts++;
	else
		f->crashes++;
	if (!n || s->quarantined)
		return;
	f->at_ns[f->next % n] = now;
	f->next++;
	/* The ring entry written next holds the fault n faults ago. */
	if (f->next >= n &&
	    now - f->at_ns[f->next % n] <=
		    (uint64_t)svc->quarantine_window * 1000000000ULL)
		quarantine(inv, s);
}

/* How a cell ended, for the log: the signal's name, or the exit status. */
static const char *ending(int st, char *buf, size_t len)
{
	if (WIFSIGNALED(st))
		return strsignal(WTERMSIG(st));
	snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
	return buf;
}

static struct rr_worker *worker_of(struct rr_invoker *inv, pid_t pid)
{
	uint32_t i;

	for (i = 0; i < RR_NWORKERS(inv); i++)
		if (inv->workers[i].pid == pid)
			return &inv->workers[i];
	return NULL;
}

/*
 * Cell @w has ended with wait status @st (@overran: killed by us for
 * max_run_us). Puts its frames back, charges its function, and forks a
 * new cell unless it was meant to end.
 */
static void cell_ended(struct rr_invoker *inv, struct rr_worker *w, int st,
		       bool overran)
{
	bool in_call = w->call_seq & 1, fault, keep;
	bool clean = WIFEXITED(st) && !WEXITSTATUS(st);
	enum rr_drop why = overran ? RR_DROP_TIMEOUT : RR_DROP_CRASH;
	const struct rr_service *svc;
	char how[32];
	int slot;

	w->pid = 0;
	__atomic_store_n(&w->started, false, __ATOMIC_RELEASE);
	recover_lock(w);
	slot = finish_batch(w, why);
	refill(w->umem, w->recycle, w->nrecycle);
	w->nrecycle = 0;
	w->call_seq = 0;
	__atomic_store_n(&w->frames_held, 0, __ATOMIC_RELAXED);

	fault = overran || !clean;
	if (fault && slot >= 0 && in_call) {
		svc = inv->slots[slot].svc;
		if (overran)
			pr_warn("function '%s' ran past max_run_us (%u us) on queue %u, thread %u: its cell was killed and restarts\n",
				svc->fn->name, svc->max_run_us, w->queue,
				w->thread);
		else
			pr_warn("function '%s' crashed (%s) on queue %u, thread %u: its cell restarts\n",
				svc->fn->name, ending(st, how, sizeof(how)),
				w->queue, w->thread);
		charge_fault(inv, &inv->slots[slot], overran, rr_now_ns());
	} else if (fault) {
		pr_warn("the cell of queue %u, thread %u died outside a function (%s): it restarts\n",
			w->queue, w->thread, ending(st, how, sizeof(how)));
	}
	keep = !__atomic_load_n(&inv->live->stop, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&w->retire, __ATOMIC_ACQUIRE);
	if (fault)
		inv->cell_restarts++;
	if (keep)
		rr_cell_start(w);
}

/*
 * Stops the cell, and if it is still in the call the supervisor saw
 * overrun, kills it; otherwise lets it go on.
 */
static void overrun(struct rr_invoker *inv, struct rr_worker *w, uint64_t seq)
{
	pid_t pid = w->pid;
	int st;

	if (kill(pid, SIGSTOP))
		return;
	if (waitpid(pid, &st, WUNTRACED) != pid)
		return;
	if (!WIFSTOPPED(st)) {
		cell_ended(inv, w, st, false);
		return;
	}
	if (__atomic_load_n(&w->call_seq, __ATOMIC_ACQUIRE) != seq) {
		kill(pid, SIGCONT);
		return;
	}
	kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) == pid)
		cell_ended(inv, w, st, true);
}

/* Reaps the cells that ended since the last tick. */
static void reap(struct rr_invoker *inv)
{
	struct rr_worker *w;
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		w = worker_of(inv, pid);
		if (w)
			cell_ended(inv, w, st, false);
	}
}

/* A cell that could not be forked again (fork() failed) is retried every
 * tick: until then its queue's share of requests waits on its rings. */
static void refork(struct rr_invoker *inv)
{
	struct rr_worker *w;
	uint32_t q, t;

	if (__atomic_load_n(&inv->live->stop, __ATOMIC_RELAXED))
		return;
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < inv->nthreads; t++) {
			w = rr_worker_at(inv, q, t);
			if (w->inv && !w->started && !w->retire)
				rr_cell_start(w);
		}
}

void rr_invoker_supervise(struct rr_invoker *inv)
{
	bool cells = inv->cfg->isolation == RR_ISOLATION_CELL;
	uint64_t now, seq, limit;
	const struct rr_service *svc;
	struct rr_worker *w;
	uint32_t i, si;

	if (!inv->workers)
		return;
	if (cells) {
		reap(inv);
		refork(inv);
	}
	now = rr_now_ns();
	expire_quarantines(inv, now);
	for (i = 0; i < RR_NWORKERS(inv); i++) {
		w = &inv->workers[i];
		if (!__atomic_load_n(&w->started, __ATOMIC_ACQUIRE))
			continue;
		seq = __atomic_load_n(&w->call_seq, __ATOMIC_ACQUIRE);
		if (!(seq & 1))
			continue;
		if (seq != w->sv_seq) {
			w->sv_seq = seq;
			w->sv_since_ns = now;
			w->sv_warned = false;
			continue;
		}
		si = __atomic_load_n(&w->batch.sock, __ATOMIC_ACQUIRE);
		if (si == RR_NO_BATCH)
			continue;
		svc = inv->slots[w->socks[si].slot].svc;
		limit = (uint64_t)svc->max_run_us * 1000;
		if (!limit || now - w->sv_since_ns < limit)
			continue;
		if (cells) {
			overrun(inv, w, seq);
		} else if (!w->sv_warned) {
			w->sv_warned = true;
			pr_warn("function '%s' has run past max_run_us (%u us) on queue %u, thread %u; a thread cannot be taken back (isolation = cell can)\n",
				svc->fn->name, svc->max_run_us, w->queue,
				w->thread);
		}
	}
}

bool rr_cells_renew(struct rr_invoker *inv)
{
	pid_t old[RR_MAX_WORKERS];
	struct timespec ms = { 0, 1000000L };
	uint32_t i, n = RR_NWORKERS(inv), tries, left;

	for (i = 0; i < n; i++) {
		old[i] = inv->workers[i].started ? inv->workers[i].pid : 0;
		if (old[i])
			__atomic_store_n(&inv->workers[i].restart, true,
					 __ATOMIC_RELEASE);
	}
	for (tries = 0; tries < RENEW_TIMEOUT_MS; tries++) {
		rr_invoker_supervise(inv);
		for (i = 0, left = 0; i < n; i++)
			left += old[i] && inv->workers[i].pid == old[i];
		if (!left)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

void rr_cell_join(struct rr_invoker *inv, struct rr_worker *w)
{
	struct timespec ms = { 0, 1000000L };
	pid_t pid = w->pid;
	uint32_t tries;
	int st;

	if (!pid)
		return;
	for (tries = 0; tries < JOIN_TIMEOUT_MS; tries++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			cell_ended(inv, w, st, false);
			return;
		}
		nanosleep(&ms, NULL);
	}
	/* Still in a function, with no time limit to have ended it. */
	pr_warn("the cell of queue %u, thread %u did not end within %d s: killed\n",
		w->queue, w->thread, JOIN_TIMEOUT_MS / 1000);
	kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) == pid)
		cell_ended(inv, w, st, false);
}

int rr_invoker_unquarantine(struct rr_invoker *inv, const char *name, char *msg,
			    size_t msglen)
{
	int slot = rr_slot_of(inv, name);
	struct rr_slot *s;

	if (slot < 0) {
		snprintf(msg, msglen, "no function '%s' is served", name);
		return -ENOENT;
	}
	s = &inv->slots[slot];
	if (!s->quarantined) {
		snprintf(msg, msglen, "function '%s' is not quarantined", name);
		return -EALREADY;
	}
	rr_unquarantine_slot(inv, s);
	if (s->removed)
		snprintf(
			msg, msglen,
			"function '%s' is out of quarantine, but removed: port %u stays with the kernel (reqrouterctl deploy brings it back)",
			name, s->svc->port);
	else
		snprintf(msg, msglen, "function '%s' serves again on port %u",
			 name, s->svc->port);
	pr_info("%s\n", msg);
	return 0;
}

void rr_unquarantine_slot(struct rr_invoker *inv, struct rr_slot *s)
{
	if (!s->quarantined)
		return;
	s->quarantined = false;
	s->faults.next = 0;
	rr_slot_sync(inv, s);
}
