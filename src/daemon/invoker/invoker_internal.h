/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the invoker's own files share and nobody else calls: invoker.c (set
 * up, start, stop, tear down), xsk.c (UMEMs and sockets), busypoll.c,
 * slots.c (the functions served, their instances, reload, remove),
 * deploy.c, threads.c and steer.c. The public interface is invoker.h.
 */
#ifndef RR_INVOKER_INTERNAL_H
#define RR_INVOKER_INTERNAL_H

#include "invoker.h"
#include "slots.h"

/* xsk.c */
/* Every queue's UMEM and every (queue, thread, slot) socket of set-up,
 * mapped in the XSKMAP; then the replies' checksum choice. */
int rr_xsk_create_all(struct rr_invoker *inv);
/* Socket (q, t, slot) made while serving, on the queue's UMEM. */
int rr_xsk_later(struct rr_invoker *inv, uint32_t q, uint32_t t, uint32_t slot,
		 char *msg, size_t msglen);
/* Socket (q, t, slot) into the XSKMAP: the XDP program may pick it now. */
int rr_xsk_map(struct rr_invoker *inv, uint32_t q, uint32_t t, uint32_t slot,
	       char *msg, size_t msglen);

/* busypoll.c */
void rr_busy_poll_setup(struct rr_invoker *inv);
int rr_busy_poll_sock(int fd, bool on, uint32_t budget);
/* The interface's NAPI knobs back to what they were. */
void rr_busy_poll_restore(struct rr_invoker *inv);

/* priority.c */
/* The supervisor, each tick: a long call loses realtime priority until it
 * returns. */
void rr_priority_watch(struct rr_invoker *inv, struct rr_worker *w,
		       uint64_t seq, uint64_t now);

/* invoker.c */
/* The CPUs workers may be pinned to, or -errno. */
int rr_allowed_cpus(const struct rr_config *cfg, int *cpus);
/* Starts worker (q, t), a thread or a cell, pinned to @cpu. */
int rr_start_worker(struct rr_invoker *inv, uint32_t q, uint32_t t, int cpu);
/* Waits for worker @w to end, once told to stop or retire. */
void rr_join_worker(struct rr_invoker *inv, struct rr_worker *w);

#endif /* RR_INVOKER_INTERNAL_H */
