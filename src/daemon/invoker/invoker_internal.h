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

/* slots.c */
/* Every served function's init(), before anything else is set up. */
int rr_instances_create(struct rr_invoker *inv);
/* Frees an instance and lets go of its module. NULL-safe. */
void rr_instance_release(struct rr_fn_instance *inst);
/* A new instance of @fn for slot @s, with the settings of @svc (NULL:
 * none); the one way every instance is made. */
int rr_slot_instance_new(struct rr_invoker *inv, struct rr_slot *s,
			 const struct rr_function *fn,
			 const struct rr_service *svc,
			 struct rr_fn_instance **out, char *err, size_t errlen);
/* Puts @fresh in slot @s for the workers' next batch; returns the one it
 * replaces, in use until retired. */
struct rr_fn_instance *rr_swap_instance(struct rr_slot *s,
					struct rr_fn_instance *fresh);
/* Frees the swapped-out @old[RR_MAX_SLOTS] once no worker can use them;
 * false (nothing freed) if a worker did not come back from a function. */
bool rr_retire_instances(struct rr_invoker *inv, struct rr_fn_instance **old);
/* The slot serving function @name, or -1. */
int rr_slot_of(const struct rr_invoker *inv, const char *name);
/* Slot @s answered in user space only from now on (its XDP program and
 * cache belong to code that is going). */
void rr_user_tier_only(struct rr_invoker *inv, struct rr_slot *s);
/*
 * Serves slot inv->nslots (its service set) with @inst: sockets for every
 * thread made, XSKMAP entries for the running ones, the workers' rounds
 * widened, then its port opened (a deploy's new function, a reload's
 * newly enabled one). -errno with @msg set; the instance is released if
 * the slot never came to life, and a port that cannot open stays with
 * the kernel (removed).
 */
int rr_slot_serve_new(struct rr_invoker *inv, struct rr_fn_instance *inst,
		      char *msg, size_t msglen);
/* Slot @slot's port into the XDP map: from now on its requests reach us. */
int rr_open_port(struct rr_invoker *inv, uint32_t slot);
/* Slot @s's port entry in the XDP map and the workers' quarantine flag
 * made from its state (removed, quarantined, port_conf); -errno if the
 * map cannot be written. */
int rr_slot_sync(struct rr_invoker *inv, struct rr_slot *s);

/* invoker.c */
/* The CPUs workers may be pinned to, or -errno. */
int rr_allowed_cpus(const struct rr_config *cfg, int *cpus);
/* Starts worker (q, t), a thread or a cell, pinned to @cpu. */
int rr_start_worker(struct rr_invoker *inv, uint32_t q, uint32_t t, int cpu);
/* Waits for worker @w to end, once told to stop or retire. */
void rr_join_worker(struct rr_invoker *inv, struct rr_worker *w);

#endif /* RR_INVOKER_INTERNAL_H */
