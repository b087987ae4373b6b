/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Containing faulty functions: workers as cells (processes), the main
 * thread's supervision of them, max_run_us and quarantine. See cell.c.
 */
#ifndef RR_CELL_H
#define RR_CELL_H

#include "invoker.h"
#include "watch.h"

/* The main thread's way to a queue's lock: false if it was not had
 * within ~1 ms (a holder that will not let go); never waits longer. */
bool rr_umem_trylock(struct rr_umem *u);
/* Forks the cell that runs worker @w (its fields set); -errno if not. */
int rr_cell_start(struct rr_worker *w);
/*
 * Every tick of the main thread: cells that ended are reaped, their frames
 * put back, their function charged and a new cell forked; a call past its
 * max_run_us is killed (cells) or reported once (threads).
 */
void rr_invoker_supervise(struct rr_invoker *inv);
/* Replaces every running cell with a fresh fork of the main thread, each
 * at the end of a round; false if one did not end within 5 s. */
bool rr_cells_renew(struct rr_invoker *inv);
/* inv->quiesce: every serving loop past epoch @e (threads: each one's
 * next round; cells: a fresh fork each), or false after ~5 s. */
bool rr_cells_quiesce(struct rr_invoker *inv, uint64_t e);
/* Waits for cell @w to end (it was told to stop or retire). */
void rr_cell_join(struct rr_invoker *inv, struct rr_worker *w);

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

/* Forks cell @c: its pid, or -errno. The child never returns. */
pid_t rr_cell_fork(const struct rr_cell *c);

/* Unmaps every worker's and queue's shared memory; 0 or -errno. */
int rr_unmap_workers(struct rr_invoker *inv);

#endif /* RR_CELL_H */
