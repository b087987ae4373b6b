/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The main thread's supervision of the serving loops: the workers' cells
 * forked, reaped, recovered and renewed, every loop's calls watched
 * against max_run_us (supervise.c; the TCP loops' side is tcp_loops.c).
 */
#ifndef RR_SUPERVISE_H
#define RR_SUPERVISE_H

#include "invoker.h"

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

#endif /* RR_SUPERVISE_H */
