/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The slots (docs/DESIGN.md, "Words"): the functions served, their
 * instances, their port entries in the XDP program, and their changes
 * while serving (slots.c: open, reload, remove; deploy.c). They sit on
 * the core and the features; what must happen above them when they
 * change (cells renewed) they are told through callbacks.
 */
#ifndef RR_SLOTS_H
#define RR_SLOTS_H

#include "invoker.h"

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
/* Until every serving loop has passed a quiescent point after the swaps
 * made so far; false if one has not come back from a function.
 * *@filter: what rebuilding the cells' system call filter returned. */
bool rr_slots_quiesce(struct rr_invoker *inv, int *filter);
/* Which worker indexes run: thread < nthreads on every served queue. */
void rr_active_workers(const struct rr_invoker *inv, bool *active);
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

/* quarantine.c */
/* One more fault (a crash, or with @timeout an overrun) of the function
 * in @s; quarantines it at its limit. */
void rr_charge_fault(struct rr_invoker *inv, struct rr_slot *s, bool timeout,
		     uint64_t now);
/* Quarantines that have lasted their quarantine_expire seconds lift. */
void rr_quarantine_expire(struct rr_invoker *inv, uint64_t now);
/* reqrouterctl unquarantine NAME. */
int rr_invoker_unquarantine(struct rr_invoker *inv, const char *name, char *msg,
			    size_t msglen);
/* Lifts slot @s's quarantine, if it has one. */
void rr_unquarantine_slot(struct rr_invoker *inv, struct rr_slot *s);

#endif /* RR_SLOTS_H */
