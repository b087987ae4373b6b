/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Containing faulty functions: workers as cells (processes), the main
 * thread's supervision of them, max_run_us and quarantine. See cell.c.
 */
#ifndef RR_CELL_H
#define RR_CELL_H

#include "invoker.h"

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

/* For other cells (tcp.c): what a cell may keep, and how it is watched. */

/* A freshly forked cell's first step: signals left to the main thread,
 * none blocked, death with the main thread (gone already: exits). */
void rr_cell_begin(pid_t parent);

/* Closes the main thread's descriptors a cell has no use for (BPF,
 * netlink, memfds, sysfs, sockets); @own says which sockets stay. */
void rr_close_unused(bool (*own)(const void *ctx, int fd), const void *ctx);

/* Unmaps every worker's and queue's shared memory; 0 or -errno. */
int rr_unmap_workers(struct rr_invoker *inv);

/* The CPU time cell @pid has used, in ns; 0 if it cannot be read. */
uint64_t rr_cell_cpu_ns(pid_t pid);

/* Whether cell @pid's call, seen since @since_ns (its CPU time then
 * @since_cpu_ns), has run out of @limit ns of max_run_us. */
bool rr_cell_ran_out(pid_t pid, uint64_t since_ns, uint64_t since_cpu_ns,
		     uint64_t limit, uint64_t now);

#endif /* RR_CELL_H */
