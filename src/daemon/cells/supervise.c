// SPDX-License-Identifier: GPL-2.0
/*
 * The workers' cells (isolation = cell) and their supervision. A worker's
 * cell keeps, of what is shared, only what its worker uses: its queue's
 * UMEM area, fill and completion rings and lock, its own sockets' rings,
 * its report (struct rr_worker_report), and struct rr_live read-only
 * (forked by rr_cell_fork(), cell.c).
 *
 * The main thread supervises the cells every tick: a cell that died is
 * reaped, the frames it held are put back where they belong (its batch
 * mark, struct rr_batch_mark, says where each one is), the function it was
 * in is charged with a fault, and a new cell takes its place. A cell whose
 * call has run past the function's max_run_us is stopped, checked to be
 * still in that call, and killed: the same path then. A function with
 * quarantine_faults faults in quarantine_window seconds is quarantined: its
 * port drops (or passes) its requests in XDP and the cells drop what was
 * queued, until reqrouterctl unquarantine, a reload or a deploy of it
 * (slots/quarantine.c). The TCP loops are supervised alike
 * (tcp_loops.c), from the same tick.
 *
 * Threads (isolation = thread) get the overrun check only, as a warning:
 * a thread stuck in a function cannot be taken back.
 *
 * The supervisor trusts nothing a cell can write: it acts on its own
 * state (pids, socket tables, ring views), and what it reads from a
 * report or a queue's lock page is checked before use. It never waits for
 * a queue's lock (rr_umem_trylock), and takes back one that stays held.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_xdp.h>

#include "cell.h"
#include "clock.h"
#include "frame.h"
#include "gather.h"
#include "invoker.h"
#include "log.h"
#include "priority.h"
#include "slots.h"
#include "supervise.h"
#include "tcp_loops.h"
#include "util.h"
#include "worker.h"

#define RENEW_TIMEOUT_MS 5000
#define JOIN_TIMEOUT_MS 3000

/* Whether @fd is one of worker @w's sockets. */
static bool own_socket(const void *ctx, int fd)
{
	const struct rr_worker *w = ctx;
	uint32_t i;

	for (i = 0; i < w->nsocks; i++)
		if (w->socks[i].fd == fd)
			return true;
	return false;
}

/*
 * What the cell of worker @w keeps of the shared memory: its queue's, its
 * own sockets' rings and its own report, writable; struct rr_live,
 * read-only and for good. Everything else shared goes, so no function it
 * runs can reach another queue's frames, another worker's rings or
 * report. Returns 0 or -errno.
 */
static int confine_memory(void *ctx)
{
	struct rr_worker *w = ctx;
	struct rr_invoker *inv = w->inv;
	int ret;

	if (mmap(inv->live, RR_LIVE_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED,
		 inv->live_fd, 0) == MAP_FAILED)
		return -errno;
	ret = rr_unmap_workers(inv, w);
	if (ret)
		return ret;
	if (inv->tcp.reports)
		munmap(inv->tcp.reports,
		       sizeof(*inv->tcp.reports) * RR_TCP_LOOPS);
	return 0;
}

/* A worker's cell: what it keeps of the shared memory is confine_memory()'s
 * choice, of the descriptors its sockets (and its gathers'). */
static int confine_gathers(void *ctx)
{
	return rr_gathers_confine(ctx);
}

static void run_worker(void *ctx)
{
	rr_worker_run_cell(ctx);
}

int rr_cell_start(struct rr_worker *w)
{
	struct rr_cell c = {
		.cpu = w->cpu,
		.keep_memory = confine_memory,
		.own = own_socket,
		.confine = confine_gathers,
		.run = run_worker,
		.ctx = w,
	};
	pid_t pid;
	int ret;

	__atomic_store_n(&w->inv->live->restart[w->index], false,
			 __ATOMIC_RELEASE);
	w->call_seq = 0;
	w->sv.seq = 0;
	w->rt_lowered = false; /* the new cell raises itself */
	w->rep->call_seq = 0;
	w->rep->batch.sock = RR_NO_BATCH;
	snprintf(c.name, sizeof(c.name), "rr-cell %u/%u", w->queue, w->thread);
	pid = rr_cell_fork(&c);
	if (pid < 0) {
		ret = pid;
		/* Retried every tick: said once. */
		if (!w->fork_failed)
			pr_warn("cannot fork a cell for queue %u thread %u: %s; retrying\n",
				w->queue, w->thread, strerror(-ret));
		w->fork_failed = true;
		return ret;
	}
	if (w->fork_failed)
		pr_info("the cell for queue %u thread %u is forked at last\n",
			w->queue, w->thread);
	w->fork_failed = false;
	w->pid = pid;
	__atomic_store_n(&w->started, true, __ATOMIC_RELEASE);
	return 0;
}

/* A frame address a cell reported: the start of one of the UMEM's frames. */
static bool frame_ok(const struct rr_umem *u, uint64_t frame)
{
	return frame < u->size && frame == rr_frame_of(frame);
}

/*
 * Frames of dead cell @w (in w->recycle) to the fill ring, from the main
 * thread. Without the lock they stay in the list, and the next cell, a
 * copy of @w, returns them at the end of its first round.
 */
static void refill(struct rr_worker *w)
{
	struct rr_umem *u = w->umem;
	uint32_t idx, i, n = w->nrecycle;

	if (!n || !rr_umem_trylock(u))
		return;
	/* The fill ring holds every frame of the UMEM: this cannot fail. */
	if (xsk_ring_prod__reserve(&u->fill, n, &idx) == n) {
		for (i = 0; i < n; i++)
			*xsk_ring_prod__fill_addr(&u->fill, idx++) =
				w->recycle[i];
		xsk_ring_prod__submit(&u->fill, n);
		w->nrecycle = 0;
		w->frames_held = 0;
	}
	rr_umem_unlock(u);
}

/*
 * A cell died holding its queue's lock, in recycle_frames() or
 * rr_stock_take(). It copies the first completions to its stock (as many
 * as the lock page's divert says) and the rest to the fill ring, releases
 * them, counts the stock, then submits the fill ring's with its recycle
 * list: if the fill ring's producer moved, all of that was done; if only
 * the completion ring's consumer moved, the stock's are counted here if
 * they were not, and the fill ring's wait in its next entries and are
 * submitted here; otherwise nothing it did counts. Its recycle list is returned
 * later unless it was submitted. The indices at the lock are in the lock
 * page, which the cell can write: no more than a ring holds is taken
 * from them, and every frame checked.
 */
static void recover_lock(struct rr_worker *w)
{
	struct rr_queue_shared *sh = w->umem->sh;
	struct rr_umem *u = w->umem;
	uint32_t fill_prod, moved, released, diverted, before, idx, i, n = 0;
	uint64_t frame;
	const char *step = "undone";

	if (__atomic_load_n(&sh->owner, __ATOMIC_ACQUIRE) != w->index + 1)
		return;
	fill_prod = sh->fill_prod;
	moved = *u->fill.producer - fill_prod;
	released = *u->comp.consumer - sh->comp_cons;
	diverted = sh->divert;
	before = sh->stock_before;
	rr_umem_locked(u, RR_LOCK_MAIN);
	/* Completions it released went to its stock first: counted there
	 * unless it counted them itself (take_stock() returns them). */
	if (released && released <= u->comp.size && diverted) {
		if (diverted > released)
			diverted = released;
		if (w->rep->nstock == before &&
		    before + diverted <= RR_SG_STOCK)
			w->rep->nstock = before + diverted;
		released -= diverted;
		step = "completed";
	}
	if (moved && moved <= u->fill.size) {
		w->nrecycle = 0;
		step = "completed";
	} else if (!moved && released && released <= u->comp.size &&
		   xsk_ring_prod__reserve(&u->fill, released, &idx) ==
			   released) {
		for (i = 0; i < released; i++) {
			frame = *xsk_ring_prod__fill_addr(&u->fill, idx + i);
			if (frame_ok(u, frame))
				*xsk_ring_prod__fill_addr(&u->fill, idx + n++) =
					frame;
		}
		u->fill.cached_prod -= released - n;
		xsk_ring_prod__submit(&u->fill, n);
		step = "completed here";
	}
	pr_warn("a cell died holding queue %u's ring lock; its step was %s\n",
		w->queue, step);
	rr_umem_unlock(u);
}

/*
 * Every RR_WATCH_MS, and every LOCK_RELOOK_MS while one is missed: a
 * queue lock the main thread could not take within RR_TRYLOCK_NS
 * LOCK_LOOKS looks in a row is held by no one who will let go: a
 * stopped or dying cell, or one whose function wrote over it. A cell
 * named as its holder is killed (its death is then put right as any); a
 * worker thread named, only preempted, is waited for (a thread cannot
 * be taken back, and its lock must not be); a holder that is no worker
 * of the queue (a lock written over) has the lock taken back. Workers
 * spinning on it go on. Returns whether a lock is being missed.
 */
#define LOCK_LOOKS 3
#define LOCK_RELOOK_MS 20
static bool watch_locks(struct rr_invoker *inv, uint64_t now)
{
	bool missing = false, worker;
	struct rr_worker *w;
	struct rr_umem *u;
	uint32_t q, owner;
	uint64_t ms;

	for (q = 0; q < inv->nqueues; q++) {
		u = &inv->umems[q];
		if (rr_umem_trylock(u)) {
			rr_umem_unlock(u);
			u->lock_misses = 0;
			continue;
		}
		if (!u->lock_misses++)
			u->lock_missed_ns = now;
		if (u->lock_misses < LOCK_LOOKS) {
			missing = true;
			continue;
		}
		u->lock_misses = 0;
		ms = (now - u->lock_missed_ns) / 1000000 +
		     RR_TRYLOCK_NS / 1000000;
		owner = __atomic_load_n(&u->sh->owner, __ATOMIC_ACQUIRE);
		w = owner && owner <= RR_NWORKERS(inv)
			    ? &inv->workers[owner - 1]
			    : NULL;
		worker = w && w->inv && w->queue == q &&
			 __atomic_load_n(&w->started, __ATOMIC_ACQUIRE);
		if (worker && inv->cfg->isolation == RR_ISOLATION_CELL &&
		    w->pid > 0) {
			pr_warn("the cell of queue %u, thread %u has held the queue's ring lock for %llu ms: killed\n",
				w->queue, w->thread, (unsigned long long)ms);
			kill(w->pid, SIGKILL);
			continue;
		}
		if (worker)
			continue;
		pr_warn("queue %u's ring lock has been held for %llu ms by no worker (its holder reads %u): taken back\n",
			q, (unsigned long long)ms, owner);
		__atomic_store_n(&u->sh->owner, 0, __ATOMIC_RELEASE);
		pthread_spin_unlock(&u->sh->lock);
	}
	return missing;
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

/* A reply a cell reported: within one frame of its UMEM. */
static bool reply_ok(const struct rr_umem *u, const struct xdp_desc *d)
{
	uint64_t frame = rr_frame_of(d->addr);

	return frame_ok(u, frame) && d->len <= RR_FRAME_SIZE &&
	       d->addr - frame + d->len <= RR_FRAME_SIZE;
}

/*
 * Dead cell @w's report, checked and copied into the supervisor's state
 * of it: its recycle list (frames of its UMEM only) into w->recycle, and
 * its batch mark into @m, which keeps RR_NO_BATCH unless it adds up (a
 * socket the worker has, counts within the batch, replies within frames
 * of its UMEM, copied into w->tx). What does not add up is said once and
 * left where it is.
 */
static void take_report(struct rr_invoker *inv, struct rr_worker *w,
			struct rr_batch_mark *m)
{
	const struct rr_worker_report *r = w->rep;
	uint32_t n = r->nrecycle, i, bad = 0;
	uint64_t frame;

	*m = r->batch;
	w->nrecycle = 0;
	if (n > RR_MAX_RECYCLE) {
		bad++;
		n = 0;
	}
	for (i = 0; i < n; i++) {
		frame = r->recycle[i];
		if (frame_ok(w->umem, frame))
			w->recycle[w->nrecycle++] = frame;
		else
			bad++;
	}
	if (m->sock != RR_NO_BATCH &&
	    (m->sock >= w->nsocks || !m->n || m->n > inv->cfg->batch ||
	     m->ntx > m->n || m->recycle_start > n || m->kept > m->n ||
	     m->ntx + (n - m->recycle_start) + m->kept > m->n || bad)) {
		m->sock = RR_NO_BATCH;
		bad++;
	}
	for (i = 0; m->sock != RR_NO_BATCH && i < m->ntx; i++) {
		w->tx[i] = r->tx[i];
		if (!reply_ok(w->umem, &w->tx[i])) {
			m->sock = RR_NO_BATCH;
			bad++;
		}
	}
	if (bad)
		pr_warn("the report of the cell of queue %u, thread %u did not add up (written over?): the frames it names that cannot be are left out\n",
			w->queue, w->thread);
}

/* Whether @frame is among the first @n of @list. */
static bool listed(const uint64_t *list, uint32_t n, uint64_t frame)
{
	uint32_t j;

	for (j = 0; j < n && list[j] != frame; j++)
		;
	return j < n;
}

/* Frame @frame a dead cell named, onto w->recycle: if it is one of the
 * UMEM's (frame 0 is) and not there already. */
static void keep_frame(struct rr_worker *w, uint64_t frame)
{
	if (frame_ok(w->umem, frame) &&
	    !listed(w->recycle, w->nrecycle, frame) &&
	    w->nrecycle < RR_MAX_RECYCLE)
		w->recycle[w->nrecycle++] = frame;
}

/*
 * The frames dead cell @w's outstanding gathers kept (its report's
 * gather_frames), into w->recycle: each of the UMEM, and once (a cell
 * killed in the middle of starting a gather lists the frame of the
 * request finish_batch() dropped, too). The entries are closed by the
 * next cell (rr_gathers_reset()).
 */
static void take_gathers(struct rr_worker *w)
{
	struct rr_worker_report *r = w->rep;
	uint64_t frame;
	uint32_t i;

	for (i = 0; i < RR_SG_PER_WORKER; i++) {
		frame = r->gather_frames[i];
		r->gather_frames[i] = 0;
		if (frame)
			keep_frame(w, rr_frame_of(frame));
	}
}

/*
 * The frames ended cell @w kept for gathers' copies (its report's stock):
 * with @keep, left there for the next cell, those that are frames of the
 * UMEM and nowhere else it named; otherwise into w->recycle as
 * take_gathers() does. Returns how many stay.
 */
static uint32_t take_stock(struct rr_worker *w, bool keep)
{
	struct rr_worker_report *r = w->rep;
	uint32_t i, n = r->nstock, kept = 0;
	uint64_t frame;

	if (n > RR_SG_STOCK)
		n = RR_SG_STOCK;
	for (i = 0; i < n; i++) {
		frame = r->stock[i];
		if (!keep) {
			keep_frame(w, frame);
			continue;
		}
		if (frame_ok(w->umem, frame) &&
		    !listed(w->recycle, w->nrecycle, frame) &&
		    !listed(r->stock, kept, frame))
			r->stock[kept++] = frame;
	}
	r->nstock = kept;
	return kept;
}

/*
 * The batch @m a dead cell was in. Requests before the one it was serving
 * were answered or dropped (w->tx, w->recycle): the answers are sent. The
 * one it was serving is dropped as @why. Those after it stay on the RX
 * ring for the next cell. Returns the slot whose request died, or -1.
 */
static int finish_batch(struct rr_worker *w, const struct rr_batch_mark *m,
			enum rr_drop why)
{
	struct rr_sock *s;
	uint32_t done, ntx, sent, left;
	uint64_t frame;
	int slot = -1;

	if (m->sock == RR_NO_BATCH)
		return -1;
	s = &w->socks[m->sock];
	ntx = m->ntx;
	if (*s->rx.consumer == m->rx_cons) {
		/* Still on RX: what was accounted for is done. */
		done = ntx + (w->nrecycle - m->recycle_start) + m->kept;
		sent = send_made(w, s, ntx);
		left = done;
		if (done < m->n) {
			frame = rr_frame_of(xsk_ring_cons__rx_desc(
						    &s->rx, m->rx_cons + done)
						    ->addr);
			/* Room for it: the report named RR_MAX_RECYCLE at
			 * most (take_report()), and there is one more. */
			if (frame_ok(w->umem, frame) &&
			    w->nrecycle < RR_RECYCLE_ROOM)
				w->recycle[w->nrecycle++] = frame;
			rr_stat_add(&s->stats->drops[why], 1);
			slot = (int)s->slot;
			left = done + 1;
		}
		__atomic_store_n(s->rx.consumer, m->rx_cons + left,
				 __ATOMIC_RELEASE);
		s->rx.cached_cons = m->rx_cons + left;
		rr_stat_add(&s->stats->rx, left);
	} else {
		/* Off RX, maybe not yet on TX. */
		sent = *s->tx.producer == m->tx_prod ? send_made(w, s, ntx)
						     : ntx;
		rr_stat_add(&s->stats->rx, m->n);
	}
	rr_stat_add(&s->stats->tx, sent);
	return slot;
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
	bool in_call = w->rep->call_seq & 1, fault, keep;
	bool clean = WIFEXITED(st) && !WEXITSTATUS(st);
	enum rr_drop why = overran ? RR_DROP_TIMEOUT : RR_DROP_CRASH;
	struct rr_worker_report *r = w->rep;
	const struct rr_service *svc;
	struct rr_batch_mark mark;
	char how[32];
	uint32_t i, stock;
	int slot;

	w->pid = 0;
	__atomic_store_n(&w->started, false, __ATOMIC_RELEASE);
	take_report(inv, w, &mark);
	recover_lock(w);
	slot = finish_batch(w, &mark, why);
	take_gathers(w);
	/* A cell that comes next takes over the stock. */
	stock = take_stock(w, !inv->stopping && !w->retire);
	refill(w);
	/* What could not go back yet goes with the next cell, which
	 * returns it at the end of its first round. */
	for (i = 0; i < w->nrecycle; i++)
		r->recycle[i] = w->recycle[i];
	r->nrecycle = w->nrecycle;
	w->frames_held = w->nrecycle + stock;
	__atomic_store_n(&r->frames_held, w->frames_held, __ATOMIC_RELAXED);
	r->batch.sock = RR_NO_BATCH;
	w->call_seq = 0;
	r->call_seq = 0;

	if (WIFEXITED(st) && WEXITSTATUS(st) == RR_CELL_UNCONFINED) {
		/* The next fork would fail alike: said once, tried again
		 * each second (refork()), serving nothing meanwhile. */
		if (!w->unconfined)
			pr_warn("the cell of queue %u, thread %u cannot be confined (its memory or its system call filter): it serves nothing; trying again every second\n",
				w->queue, w->thread);
		w->unconfined = true;
		w->next_fork_ns = rr_now_ns() + 1000000000ULL;
		return;
	}
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
		rr_charge_fault(inv, &inv->slots[slot], overran, rr_now_ns());
	} else if (fault) {
		pr_warn("the cell of queue %u, thread %u died outside a function (%s): it restarts\n",
			w->queue, w->thread, ending(st, how, sizeof(how)));
	}
	keep = !inv->stopping && !w->retire;
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
	if (__atomic_load_n(&w->rep->call_seq, __ATOMIC_ACQUIRE) != seq) {
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
		else
			rr_tcp_reaped(inv, pid, st);
	}
}

/* A cell that could not be forked again (fork() failed) is retried every
 * tick: until then its queue's share of requests waits on its rings. */
static void refork(struct rr_invoker *inv)
{
	struct rr_worker *w;
	uint32_t q, t;

	if (inv->stopping)
		return;
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < inv->nthreads; t++) {
			w = rr_worker_at(inv, q, t);
			if (w->inv && !w->started && !w->retire &&
			    rr_now_ns() >= w->next_fork_ns)
				rr_cell_start(w);
		}
}

void rr_invoker_supervise(struct rr_invoker *inv)
{
	bool cells = inv->cfg->isolation == RR_ISOLATION_CELL;
	uint64_t now, seq, limit;
	const struct rr_service *svc;
	bool in_calls = false, tcp_calls;
	struct rr_worker *w;
	uint32_t i, si;

	if (!inv->workers)
		return;
	if (cells) {
		reap(inv);
		refork(inv);
	}
	now = rr_now_ns();
	tcp_calls = rr_tcp_supervise(inv, now);
	rr_quarantine_expire(inv, now);
	if (now / 1000000 >= inv->next_lock_look_ms)
		inv->next_lock_look_ms =
			now / 1000000 +
			(watch_locks(inv, now) ? LOCK_RELOOK_MS : RR_WATCH_MS);
	for (i = 0; i < RR_NWORKERS(inv); i++) {
		w = &inv->workers[i];
		if (!__atomic_load_n(&w->started, __ATOMIC_ACQUIRE))
			continue;
		seq = __atomic_load_n(&w->rep->call_seq, __ATOMIC_ACQUIRE);
		in_calls |= seq != w->sv_last_seq || (seq & 1);
		w->sv_last_seq = seq;
		rr_priority_watch(inv, w, seq, now);
		if (!(seq & 1))
			continue;
		si = __atomic_load_n(&w->rep->batch.sock, __ATOMIC_ACQUIRE);
		svc = si < w->nsocks ? inv->slots[w->socks[si].slot].svc : NULL;
		limit = svc ? (uint64_t)svc->max_run_us * 1000 : 0;
		switch (rr_call_watch(&w->sv, seq, limit, cells ? w->pid : 0,
				      now)) {
		case RR_OVERRUN_KILL:
			overrun(inv, w, seq);
			break;
		case RR_OVERRUN_WARN:
			pr_warn("function '%s' has run past max_run_us (%u us) on queue %u, thread %u; a thread cannot be taken back (isolation = cell can)\n",
				svc->fn->name, svc->max_run_us, w->queue,
				w->thread);
			break;
		case RR_IN_TIME:
			break;
		}
	}
	inv->in_calls = in_calls || tcp_calls;
}

bool rr_cells_renew(struct rr_invoker *inv)
{
	pid_t old[RR_MAX_WORKERS];
	struct timespec ms = { 0, 1000000L };
	uint32_t i, n = RR_NWORKERS(inv), tries, left;

	for (i = 0; i < n; i++) {
		old[i] = inv->workers[i].started ? inv->workers[i].pid : 0;
		if (old[i])
			__atomic_store_n(&inv->live->restart[i], true,
					 __ATOMIC_RELEASE);
	}
	/* The TCP loop's cell hands over to a fresh one by itself. */
	rr_tcp_renew(inv);
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

bool rr_cells_quiesce(struct rr_invoker *inv, uint64_t e)
{
	struct timespec ms = { 0, 1000000L };
	uint32_t i, n = RR_NWORKERS(inv), tries;

	/* A cell's copies of the functions are its own: only fresh cells
	 * see the new ones. */
	if (inv->cfg->isolation == RR_ISOLATION_CELL)
		return rr_cells_renew(inv);
	for (tries = 0; tries < 5000; tries++) {
		for (i = 0; i < n; i++)
			if (__atomic_load_n(&inv->workers[i].started,
					    __ATOMIC_ACQUIRE) &&
			    __atomic_load_n(&inv->workers[i].rep->seen_epoch,
					    __ATOMIC_ACQUIRE) < e)
				break;
		if (i == n && rr_tcp_passed_epoch(inv, e))
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
