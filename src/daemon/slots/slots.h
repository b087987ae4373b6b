/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The slots (docs/DESIGN.md, "Words"): the functions served, their
 * instances, their port entries in the XDP program, and their changes
 * while serving (slots.c: open, remove; reload.c; deploy.c; quarantine.c). They sit on
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
/* Whether function @fn served with @svc gets a cell group of its own
 * (own_cells; auto: from a module, or with syscalls); never with
 * isolation = thread. */
bool rr_slot_wants_own_cells(const struct rr_invoker *inv,
			     const struct rr_service *svc,
			     const struct rr_function *fn);
/* 0 if @ngroups cell groups of group_threads workers fit in a queue,
 * else -E2BIG with the line that says so in @err. */
int rr_cell_group_room(const struct rr_invoker *inv, uint32_t ngroups,
		       char *err, size_t errlen);
/* Whether function @fn served with @svc gets a new cell group, @ngroups
 * existing: 1; 0 if it wants none, or wants one by own_cells = auto and
 * a queue has no room for it (said: it shares the built-in functions'
 * cells); -E2BIG with @err set if own_cells = yes asks for one and a
 * queue has no room. */
int rr_slot_new_group(const struct rr_invoker *inv,
		      const struct rr_service *svc,
		      const struct rr_function *fn, uint32_t ngroups, char *err,
		      size_t errlen);
/* At set-up: each slot's cell group (own_cells = yes first, then auto
 * while a queue has room), inv->ngroups, and nthreads from
 * group_threads; -E2BIG (said) if those with own_cells = yes do not fit
 * in a queue. */
int rr_slots_assign_groups(struct rr_invoker *inv);
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
/* The part of a port entry @svc's settings give (its limits and whether
 * it has an allow-list), as a port opens and as a reload changes them. */
void rr_slot_port_settings(const struct rr_service *svc,
			   struct rr_port_conf *conf);
/* Slot @s's port entry in the XDP map and the workers' quarantine flag
 * made from its state (removed, quarantined, port_conf); -errno if the
 * map cannot be written. */
int rr_slot_sync(struct rr_invoker *inv, struct rr_slot *s);

/* Whether slot @s is answered in XDP now (its program, or its cache). */
bool rr_slot_in_kernel(const struct rr_invoker *inv, const struct rr_slot *s);

/* reload.c */
/*
 * Starts applying @next (the config a restart would run with) while
 * serving: every changed key a reload can apply (reload.c lists them) is
 * applied, functions enabled or disabled are served or removed, and
 * init() of every served function that has one runs again into new
 * state, which the workers move to between batches (the old state is
 * freed once none can use it; a function whose init fails keeps it).
 * Every other changed key is refused as needing a restart.
 *
 * The new states are made on a thread of the reload's own, while the
 * main loop goes on serving; rr_invoker_reload_poll() applies the rest
 * on the main thread once they are made. The reload takes @next (and
 * frees it) when it returns 0; -EBUSY while another one is under way,
 * or -errno if the thread cannot be started, @next then the caller's.
 */
int rr_invoker_reload_start(struct rr_invoker *inv, struct rr_config *next);
/*
 * Every tick while inv->reload is set: -EINPROGRESS while the new states
 * are being made; then, once, the reload is applied: returns how many
 * keys were refused or failed, @msg a summary line, then one line per
 * key. The states swapped out are then freed off the main thread too:
 * -EINPROGRESS again until inv->reload is NULL, the reload over.
 */
int rr_invoker_reload_poll(struct rr_invoker *inv, char *msg, size_t msglen);
/* Waits for a reload's thread and drops what it made, nothing applied
 * (stopping). Does nothing without one. */
void rr_invoker_reload_cancel(struct rr_invoker *inv);

/* deploy.c */
/*
 * Loads the function module at @path and has its functions replace the
 * served ones of the same names while serving: each gets a new instance,
 * the workers move to it between batches, and the old code is unloaded
 * once none can be in it. A function not served yet is added: its
 * service read from the config file again, its sockets made and taken
 * into the workers' rounds, then its port opened. Returns 0 or -errno;
 * @msg says what happened.
 */
int rr_invoker_deploy(struct rr_invoker *inv, const char *path, char *msg,
		      size_t msglen);
/* Puts @fresh in served slot @slot, as a deploy replaces a function:
 * its XDP program and cache out, to cells of its own where it wants
 * them, a removed port back. Returns the instance replaced, in use
 * until retired. */
struct rr_fn_instance *rr_slot_replace(struct rr_invoker *inv, uint32_t slot,
				       struct rr_fn_instance *fresh);
/* Takes function @name's port out of the XDP program (its packets go to
 * the kernel); a later deploy of it puts it back. */
int rr_invoker_remove(struct rr_invoker *inv, const char *name, char *msg,
		      size_t msglen);

/* canary.c (docs/DESIGN.md, "Canaries") */
/* Runs the one function of module @path beside the served function of
 * its name, for @permille of the sources (10-990); 0 or -errno, @msg
 * says what happened, and on failure nothing changed. */
int rr_invoker_canary(struct rr_invoker *inv, const char *path,
		      uint32_t permille, char *msg, size_t msglen);
/* Function @name's canary serves all of its sources, the version it
 * replaces retired as a deploy retires one. */
int rr_invoker_promote(struct rr_invoker *inv, const char *name, char *msg,
		       size_t msglen);
/* Function @name's canary stops: its sources go back to the function,
 * then its code is unloaded. */
int rr_invoker_rollback(struct rr_invoker *inv, const char *name, char *msg,
			size_t msglen);
/* Once a second: every canary's figures over its window against its
 * function's; one past them by the margin (canary_rollback) is rolled
 * back, said at warning, counted. */
void rr_canary_watch(struct rr_invoker *inv, uint64_t now);
/* reqrouter_canary_rollbacks_total. */
void rr_canary_write_metrics(const struct rr_invoker *inv, FILE *out);
/* Frees a canary slot's own service. NULL-safe. */
void rr_canary_service_free(const struct rr_service *svc);
/* Function slot @slot's canary as its `canary` key says: started,
 * its share changed, replaced, or (one the config started, the key
 * gone) rolled back. 0 done, 1 nothing to do, -errno failed; @msg says
 * what. */
int rr_canary_configured(struct rr_invoker *inv, uint32_t slot, char *msg,
			 size_t msglen);
/* At start: every function's `canary`, said in the log. */
void rr_canary_start_configured(struct rr_invoker *inv);
/* The first served function with a canary running, or NULL. */
const struct rr_slot *rr_canary_any(const struct rr_invoker *inv);
/* The canary running beside function slot @s, or NULL (none, or @s is a
 * canary's). */
const struct rr_slot *rr_slot_canary(const struct rr_invoker *inv,
				     const struct rr_slot *s);

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
