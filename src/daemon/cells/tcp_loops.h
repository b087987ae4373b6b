/* SPDX-License-Identifier: GPL-2.0 */
/* The TCP loops run and supervised, as threads or cells (tcp_loops.c). */
#ifndef RR_TCP_LOOPS_H
#define RR_TCP_LOOPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct rr_invoker;

/* The main thread's tick: follows the served functions with the
 * listeners, starts the loop if there is none, watches its calls against
 * max_run_us, joins loops that ended. True if a loop made calls since
 * the last tick (the supervisor then looks again soon). */
bool rr_tcp_supervise(struct rr_invoker *inv, uint64_t now);
/* A child the supervisor reaped: true if it was a loop's cell. */
bool rr_tcp_reaped(struct rr_invoker *inv, pid_t pid, int status);
/* The functions' instances changed: a cell loop hands over to a fresh
 * fork (a thread loop picks them up by itself). */
void rr_tcp_renew(struct rr_invoker *inv);
/* Whether every running loop has passed epoch @e (threads). */
bool rr_tcp_passed_epoch(struct rr_invoker *inv, uint64_t e);
/* Stops the loops and closes the listeners. */
void rr_tcp_stop(struct rr_invoker *inv);

#endif /* RR_TCP_LOOPS_H */
