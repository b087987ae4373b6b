/* SPDX-License-Identifier: GPL-2.0 */
/* The worker's round (worker.c), as a thread or in a cell. */
#ifndef RR_WORKER_H
#define RR_WORKER_H

#include "invoker.h"

/* Drops every capability of the calling thread (the workers'). */
int rr_worker_drop_caps(void);
/* Empties the calling thread's bounding set, as far as it may (without
 * CAP_SETPCAP it keeps it). */
void rr_worker_drop_bounding(void);
/* A worker thread's start routine. */
void *rr_worker_run(void *arg);
/* A cell's exit status when it cannot be confined (its memory, its system
 * calls): it serves nothing. */
#define RR_CELL_UNCONFINED 3
/* A cell's: serves until told to stop, restart or retire, then returns
 * (the cell exits). */
void rr_worker_run_cell(struct rr_worker *w);

#endif /* RR_WORKER_H */
