/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cells: serving loops in processes of their own, forked and confined one
 * way (cell.c), and the overrun watch (watch.h). Their supervision is
 * supervise.h's (workers) and tcp_loops.h's (TCP loops).
 */
#ifndef RR_CELL_H
#define RR_CELL_H

#include <stdbool.h>
#include <sys/types.h>

#include "invoker.h"
#include "watch.h"

/*
 * A serving loop to run in a process of its own, a worker's or a TCP
 * loop's alike. In the child, in this order: @keep_memory unmaps what the
 * cell must not reach of the shared memory; every descriptor of the main
 * thread's it has no use for is closed (BPF, netlink, memfds, sysfs,
 * other sockets; @own says which sockets stay); no core dump; named
 * @name, pinned to @cpu (-1: not); @confine does the rest of its
 * confinement and set-up; then @run serves until the cell is told to end.
 * A step that fails ends the cell with RR_CELL_UNCONFINED.
 */
struct rr_cell {
	char name[16];
	int cpu;
	int (*keep_memory)(void *ctx);
	bool (*own)(const void *ctx, int fd);
	int (*confine)(void *ctx); /* may be NULL */
	void (*run)(void *ctx);
	void *ctx;
};

/*
 * The identity cells take when reqrouter runs as root: uid @uid and gid
 * @gid, no supplementary groups, set before the cell runs anything of a
 * function's (0: they keep the process's, under --user already another).
 * With @rtprio a cell may still raise itself to SCHED_FIFO 1
 * (worker_priority = realtime) without the capability.
 */
void rr_cell_identity(uid_t uid, gid_t gid, bool rtprio);

/* Forks cell @c: its pid, or -errno. The child never returns. */
pid_t rr_cell_fork(const struct rr_cell *c);

/* Unmaps every worker's and queue's shared memory but worker @keep's
 * (NULL: all): the sockets' rings, the other queues' UMEMs, rings and
 * locks, the reports; 0 or -errno. */
int rr_unmap_workers(struct rr_invoker *inv, const struct rr_worker *keep);

#endif /* RR_CELL_H */
