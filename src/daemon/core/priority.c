// SPDX-License-Identifier: GPL-2.0
/*
 * Workers ahead of the receive work of their CPU (worker_priority).
 *
 * A worker shares its CPU with the NAPI poll that feeds it: on veth with
 * threaded NAPI, and on a NIC once the softirq work has moved to
 * ksoftirqd. At one priority the scheduler splits the CPU between the
 * two, and under overload the receive side spends its share on frames the
 * worker never gets to: what is answered is the scheduler's lottery, the
 * receive livelock of Mogul and Ramakrishnan (1997). A worker at
 * SCHED_FIFO priority 1 runs whenever it has a frame and waits when it
 * has none, so receive work runs while the worker waits, and what cannot
 * be served is dropped before this CPU spends anything on it (at the
 * NIC's ring; on veth, in the sender's).
 *
 * A worker cannot keep its CPU without frames to answer, but a function
 * can: a call that runs past RT_CALL_MAX_NS is put back to SCHED_OTHER by
 * the supervisor, and raised again when it returns. Busy polling never
 * waits, so with it the workers keep the normal priority.
 *
 * Not the default: a worker kept busy (heavy functions near saturation,
 * a sanitizer build) leaves the CPU's other tasks only the deadline
 * server's 5 %: the main thread's reloads and deploys, ksoftirqd, anything
 * else pinned there. It is for CPUs left to the workers.
 *
 * worker_priority = auto is realtime only while it is needed: the
 * supervisor raises a worker whose requests wait longer than AUTO_WAIT_NS
 * for it (the queuing delay it publishes, struct rr_worker_load, with
 * some still waiting, or the age of a batch with more behind the
 * request in hand), and tries the normal priority again AUTO_HOLD_NS
 * later; one that has to be raised again at once (the overload goes on)
 * holds it twice as long each time, up to AUTO_HOLD_MAX_NS, so that a
 * long overload costs a tick at the normal priority every half minute.
 * At rest, or while it keeps up, a worker runs at the normal priority
 * and leaves its CPU to whatever else runs there.
 *
 * What it takes is RLIMIT_RTPRIO >= 1 or CAP_SYS_NICE in the process as
 * it runs after set-up: root raises the limit before the privileges go
 * (with CAP_SYS_RESOURCE), the unit grants it (LimitRTPRIO=1), and each
 * worker raises itself. Where neither is there, or a seccomp filter
 * refuses (a service with RestrictRealtime=yes), the workers run at the
 * normal priority, as the start-up line says.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "invoker.h"
#include "log.h"

/* The longest call at realtime priority, as the supervisor measures it
 * (within its tick: 1 ms with cells while calls are made, 100 ms with
 * threads). */
#define RT_CALL_MAX_NS (10 * 1000000ULL)
#define RT_PRIORITY 1
/* worker_priority = auto: raised while requests wait this long; held
 * from the first of these to the last; a raise within AUTO_AGAIN_NS of
 * going back doubles the hold; a line at most every AUTO_SAY_NS. */
#define AUTO_WAIT_NS 1000000ULL
#define AUTO_HOLD_NS 1000000000ULL
#define AUTO_HOLD_MAX_NS 32000000000ULL
#define AUTO_AGAIN_NS 500000000ULL
#define AUTO_SAY_NS 60000000000ULL

static int set_policy(pid_t tid, bool realtime)
{
	struct sched_param sp = { .sched_priority =
					  realtime ? RT_PRIORITY : 0 };

	/* Nothing a worker or cell forks inherits it. */
	if (sched_setscheduler(tid,
			       (realtime ? SCHED_FIFO : SCHED_OTHER) |
				       SCHED_RESET_ON_FORK,
			       &sp))
		return -errno;
	return 0;
}

static bool wanted(const struct rr_invoker *inv)
{
	return inv->cfg->worker_priority != RR_PRIORITY_NORMAL &&
	       !inv->cfg->busy_poll;
}

static bool automatic(const struct rr_invoker *inv)
{
	return inv->cfg->worker_priority == RR_PRIORITY_AUTO;
}

/* Before the privileges go: the limit raised, if this process may. A
 * refusal shows in rr_priority_check(). */
void rr_priority_setup(struct rr_invoker *inv)
{
	struct rlimit rl;

	if (!wanted(inv) || getrlimit(RLIMIT_RTPRIO, &rl) ||
	    rl.rlim_cur >= RT_PRIORITY)
		return;
	/* Above the hard limit only with CAP_SYS_RESOURCE. */
	if (rl.rlim_max < RT_PRIORITY)
		rl.rlim_max = RT_PRIORITY;
	rl.rlim_cur = RT_PRIORITY;
	setrlimit(RLIMIT_RTPRIO, &rl);
}

/*
 * After the privileges went, before the workers start: one try on the
 * main thread itself (put back at once), so that what the workers get is
 * known and said once rather than found by each of them.
 */
void rr_priority_check(struct rr_invoker *inv)
{
	struct sched_param normal = { .sched_priority = 0 };
	int ret;

	inv->live->realtime = false;
	inv->rt_refused = 0;
	if (!wanted(inv))
		return;
	ret = sched_setscheduler(0, SCHED_FIFO,
				 &(struct sched_param){ RT_PRIORITY })
		      ? -errno
		      : 0;
	if (ret) {
		inv->rt_refused = -ret;
		return;
	}
	sched_setscheduler(0, SCHED_OTHER, &normal);
	inv->live->realtime = true;
}

const char *rr_priority_name(const struct rr_invoker *inv)
{
	if (!inv->live->realtime)
		return "normal priority";
	return automatic(inv)
		       ? "normal priority, realtime (SCHED_FIFO 1) while requests wait over 1 ms"
		       : "realtime (SCHED_FIFO 1) priority, ahead of receive work";
}

const char *rr_priority_mode(const struct rr_invoker *inv)
{
	if (!inv->live->realtime)
		return "normal";
	return automatic(inv) ? "auto" : "realtime";
}

uint32_t rr_priority_raised(const struct rr_invoker *inv)
{
	uint32_t i, n = 0;

	for (i = 0; inv->workers && i < RR_NWORKERS(inv); i++)
		n += inv->workers[i].rt_raised;
	return n;
}

/* Why the workers run at normal priority when realtime was asked for, or
 * NULL. */
const char *rr_priority_why_normal(const struct rr_invoker *inv)
{
	if (inv->live->realtime ||
	    inv->cfg->worker_priority == RR_PRIORITY_NORMAL)
		return NULL;
	if (inv->cfg->busy_poll)
		return "a busy-polling worker never sleeps";
	return inv->rt_refused == EPERM
		       ? "realtime refused: RLIMIT_RTPRIO is 0 without CAP_SYS_NICE, or a seccomp filter (RestrictRealtime=) forbids it"
		       : strerror(inv->rt_refused);
}

/* In the worker, first thing: itself at realtime priority, if the main
 * thread could do it. */
void rr_priority_raise(struct rr_worker *w)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int ret;

	__atomic_store_n(&w->sys_tid, tid, __ATOMIC_RELEASE);
	if (!w->inv->live->realtime || automatic(w->inv))
		return;
	ret = set_policy(0, true);
	if (ret)
		pr_warn("worker %u/%u: cannot raise itself to realtime priority: %s\n",
			w->queue, w->thread, strerror(-ret));
}

/*
 * Whether worker @w's requests wait at @now: some handed to it and not
 * done, and either the oldest of its latest batch had waited
 * AUTO_WAIT_NS or more when the batch began, or the batch has run that
 * long with more than the request in hand behind it, as steer.c reckons
 * a stuck worker. The second is what a burst taken in one batch shows:
 * 60 calls of 5 ms read at once have the first's delay near 0, while
 * the last waits 300 ms behind the others.
 */
static bool waiting(const struct rr_worker *w, uint64_t now)
{
	const struct rr_worker_load *l = w->load;
	uint64_t backlog, busy;

	if (!l)
		return false;
	backlog = rr_backlog(__atomic_load_n(&l->sent, __ATOMIC_RELAXED),
			     __atomic_load_n(&l->done, __ATOMIC_RELAXED));
	if (!backlog)
		return false;
	if (__atomic_load_n(&l->delay_ns, __ATOMIC_RELAXED) >= AUTO_WAIT_NS)
		return true;
	busy = __atomic_load_n(&l->busy_ns, __ATOMIC_RELAXED);
	return backlog >= 2 && busy && now > busy && now - busy >= AUTO_WAIT_NS;
}

/*
 * worker_priority = auto, each tick, for worker @w (thread or cell @tid)
 * at @now: raised while its requests wait, back to the normal priority
 * once its hold is over; true while it is raised.
 */
static bool auto_watch(struct rr_worker *w, pid_t tid, uint64_t now)
{
	int ret;

	if (w->rt_raised && w->rt_tid != tid) {
		/* A new cell since: it starts at the normal priority. */
		w->rt_raised = false;
		w->rt_lowered = false;
	}
	if (w->rt_raised) {
		if (waiting(w, now))
			return true; /* raised while they wait, past its hold */
		if (now < w->rt_until_ns)
			return true;
		w->rt_raised = false;
		w->rt_back_ns = now;
		if (!w->rt_lowered)
			set_policy(tid, false);
		w->rt_lowered = false;
		return false;
	}
	if (!waiting(w, now))
		return false;
	/* Raised again right after it went back: the overload goes on. */
	if (w->rt_back_ns && now - w->rt_back_ns < AUTO_AGAIN_NS)
		w->rt_hold_ns = w->rt_hold_ns * 2 > AUTO_HOLD_MAX_NS
					? AUTO_HOLD_MAX_NS
					: w->rt_hold_ns * 2;
	else
		w->rt_hold_ns = AUTO_HOLD_NS;
	ret = set_policy(tid, true);
	if (ret) {
		if (!w->rt_said_ns || now - w->rt_said_ns >= AUTO_SAY_NS) {
			pr_warn("worker %u/%u: its requests wait, and it cannot be raised to realtime priority: %s\n",
				w->queue, w->thread, strerror(-ret));
			w->rt_said_ns = now;
		}
		return false;
	}
	w->rt_raised = true;
	w->rt_tid = tid;
	w->rt_until_ns = now + w->rt_hold_ns;
	w->rt_raises++;
	if (!w->rt_said_ns || now - w->rt_said_ns >= AUTO_SAY_NS) {
		pr_info("worker %u/%u: its requests wait over %llu us: realtime priority for %llu s at least (worker_priority = auto; %u time(s) since the last line)\n",
			w->queue, w->thread,
			(unsigned long long)(AUTO_WAIT_NS / 1000),
			(unsigned long long)(w->rt_hold_ns / 1000000000ULL),
			w->rt_raises);
		w->rt_said_ns = now;
		w->rt_raises = 0;
	}
	return true;
}

/*
 * The supervisor, each tick, for worker @w seen at call_seq @seq (odd:
 * inside a function, since w->sv.since_ns if seq == w->sv.seq): a call
 * past RT_CALL_MAX_NS gives up realtime priority until it returns; with
 * worker_priority = auto, a worker is raised and put back by auto_watch()
 * first.
 */
void rr_priority_watch(struct rr_invoker *inv, struct rr_worker *w,
		       uint64_t seq, uint64_t now)
{
	bool cells = inv->cfg->isolation == RR_ISOLATION_CELL;
	pid_t tid;
	int ret;

	if (!inv->live->realtime)
		return;
	tid = cells ? w->pid : __atomic_load_n(&w->sys_tid, __ATOMIC_ACQUIRE);
	if (tid <= 0)
		return;
	if (automatic(inv) && !auto_watch(w, tid, now))
		return;
	if (w->rt_lowered) {
		if (seq == w->rt_lowered_seq)
			return;
		w->rt_lowered = false;
		ret = set_policy(tid, true);
		if (ret)
			pr_warn("worker %u/%u: cannot raise it to realtime priority again: %s\n",
				w->queue, w->thread, strerror(-ret));
		else
			pr_info("worker %u/%u: the long call returned; realtime priority again\n",
				w->queue, w->thread);
		return;
	}
	if (!(seq & 1) || seq != w->sv.seq ||
	    now - w->sv.since_ns < RT_CALL_MAX_NS)
		return;
	/* Once per call, lowered or not. */
	w->rt_lowered = true;
	w->rt_lowered_seq = seq;
	ret = set_policy(tid, false);
	if (ret) {
		pr_warn("worker %u/%u: a call has run %llu ms at realtime priority and cannot be lowered: %s\n",
			w->queue, w->thread,
			(unsigned long long)((now - w->sv.since_ns) / 1000000),
			strerror(-ret));
		return;
	}
	pr_warn("worker %u/%u: a call has run %llu ms; normal priority until it returns, so that the CPU's other work runs\n",
		w->queue, w->thread,
		(unsigned long long)((now - w->sv.since_ns) / 1000000));
}
