/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The overrun watch: the supervisor's view of one serving loop's calls,
 * a worker's or a TCP loop's alike, against the max_run_us of the
 * function it is in. The loop counts its calls in a report it shares
 * (call_seq: odd while inside a function); the supervisor, every tick,
 * notes when it first saw the call it is in and, once that call has run
 * out of its time, has a cell killed or a thread's overrun said once (a
 * thread cannot be taken back). See cell.c.
 */
#ifndef RR_WATCH_H
#define RR_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct rr_call_watch {
	uint64_t seq;	       /* the call_seq seen last */
	uint64_t since_ns;     /* CLOCK_MONOTONIC: when seq was first seen */
	uint64_t since_cpu_ns; /* the cell's CPU time then; 0 for a thread */
	bool warned;	       /* a thread's overrun of this call said */
};

enum rr_overrun {
	RR_IN_TIME,	 /* no call, or one within its time */
	RR_OVERRUN_KILL, /* a cell's call ran out: kill the cell */
	RR_OVERRUN_WARN, /* a thread's call ran out: say it, once */
};

/*
 * One tick's look at a loop seen at call_seq @seq, inside a function
 * whose max_run_us is @limit_ns (0: none, or not known). @pid is its
 * cell, 0 for a thread. A call has run out when it has used @limit_ns of
 * CPU since it was first seen, or been in it ten times as long (at least
 * 100 ms) whatever it used (a function asleep); a cell that waited for a
 * CPU is not charged for the wait.
 */
enum rr_overrun rr_call_watch(struct rr_call_watch *cw, uint64_t seq,
			      uint64_t limit_ns, pid_t pid, uint64_t now);

/* The CPU time cell @pid has used, in ns; 0 if it cannot be read. */
uint64_t rr_cell_cpu_ns(pid_t pid);

#endif /* RR_WATCH_H */
