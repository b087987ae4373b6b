// SPDX-License-Identifier: GPL-2.0
/*
 * The functions the invoker serves, one slot each: where each is answered
 * (tier), its port opened in the XDP map, its instances (state) created,
 * swapped and retired once no worker can use them, and removed. What
 * changes them while serving is reload.c's and deploy.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "guard.h"
#include "clock.h"
#include "gather.h"
#include "invoker.h"
#include "log.h"
#include "module.h"
#include "registry.h"
#include "reqrouter.skel.h" /* the allow-lists' maps: disallow() */
#include "seccomp.h"
#include "settings.h"
#include "cookie.h"
#include "hh.h"
#include "rl.h"
#include "slots.h"
#include "util.h"
#include "validate.h"
#include "xsk.h"

/*
 * Where function @slot is answered: its XDP program when it has one and
 * the tier allows (auto falls back to user space with a warning if the
 * kernel refuses the program; xdp stops the start-up), and for a pure
 * function served in user space, the reply cache.
 */
static int choose_tier(struct rr_invoker *inv, uint32_t slot,
		       struct rr_port_conf *conf)
{
	struct rr_slot *s = &inv->slots[slot];
	const struct rr_service *svc = s->svc;
	const struct rr_xdp_impl *impl = rr_registry_xdp(svc->fn->name);
	char why[RR_ERRLEN];
	int ret;

	if (impl && svc->tier != RR_TIER_USER) {
		ret = rr_xdp_load_function(&inv->xdp, slot, impl, why,
					   sizeof(why));
		if (!ret) {
			s->tier_xdp = true;
			conf->flags |= RR_PORT_XDP;
			return 0;
		}
		if (svc->tier == RR_TIER_XDP) {
			pr_warn("cannot load the XDP implementation of '%s': %s\n",
				svc->fn->name, why);
			return ret;
		}
		pr_warn("the XDP implementation of '%s' is not used (%s); its C implementation answers\n",
			svc->fn->name, why);
	}
	/* A cell group that came after load (a deploy) has no partition. */
	if (svc->cache && svc->fn->flags & RR_FN_PURE &&
	    s->cell_group >= inv->xdp.cache_groups) {
		pr_notice(
			"'%s' is served uncached: its cells of their own came after start, and the reply cache has no part for them until a restart\n",
			svc->fn->name);
		return 0;
	}
	if (svc->cache && svc->fn->flags & RR_FN_PURE) {
		ret = rr_xdp_map_cache(&inv->xdp);
		if (ret) {
			pr_warn("cannot map the reply cache: %s; '%s' is served uncached\n",
				strerror(-ret), svc->fn->name);
			return 0;
		}
		/* Entries of an earlier configuration never match. */
		s->cache_gen += 1;
		conf->cache_gen = s->cache_gen;
		conf->cache_id_bytes = svc->fn->id_bytes;
		s->cached = true;
		conf->flags |= RR_PORT_CACHE;
	}
	return 0;
}

/* A module stays loaded while an instance of one of its functions lives. */
static void hold_module(const struct rr_fn_instance *inst)
{
	struct rr_module *m = rr_registry_module_of(inst->fn);

	if (m)
		m->users++;
}

void rr_instance_release(struct rr_fn_instance *inst)
{
	struct rr_module *m;

	if (!inst)
		return;
	m = rr_registry_module_of(inst->fn);
	rr_fn_instance_free(inst);
	if (m) {
		m->users--;
		rr_registry_release(m);
	}
}

/* Which worker indexes run: thread < nthreads on every served queue. */
void rr_active_workers(const struct rr_invoker *inv, bool *active)
{
	uint32_t q, t;

	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < RR_MAX_THREADS; t++)
			active[q * RR_MAX_THREADS + t] = t < inv->nthreads;
}

bool rr_slot_wants_own_cells(const struct rr_invoker *inv,
			     const struct rr_service *svc,
			     const struct rr_function *fn)
{
	if (inv->cfg->isolation != RR_ISOLATION_CELL)
		return false;
	switch (svc->own_cells) {
	case RR_OWN_CELLS_YES:
		return true;
	case RR_OWN_CELLS_NO:
		return false;
	default:
		return rr_registry_module_of(fn) ||
		       svc->syscalls[strspn(svc->syscalls, " \t")];
	}
}

int rr_cell_group_room(const struct rr_invoker *inv, uint32_t ngroups,
		       char *err, size_t errlen)
{
	if (ngroups * inv->group_threads <= RR_MAX_THREADS)
		return 0;
	snprintf(
		err, errlen,
		"%u cell groups (the shared one and %u functions with cells of their own, own_cells) of %u thread%s each need %u workers per queue, more than %d: use fewer threads (-t) or own_cells = no for some",
		ngroups, ngroups - 1, inv->group_threads,
		inv->group_threads == 1 ? "" : "s",
		ngroups * inv->group_threads, RR_MAX_THREADS);
	return -E2BIG;
}

int rr_slot_new_group(const struct rr_invoker *inv,
		      const struct rr_service *svc,
		      const struct rr_function *fn, uint32_t ngroups, char *err,
		      size_t errlen)
{
	if (!rr_slot_wants_own_cells(inv, svc, fn))
		return 0;
	if (!rr_cell_group_room(inv, ngroups + 1, err, errlen))
		return 1;
	if (svc->own_cells == RR_OWN_CELLS_YES)
		return -E2BIG;
	pr_warn("'%s' shares the built-in functions' cells: no room for cells of its own (own_cells = auto), %u cell groups of %u thread%s fill a queue's %d\n",
		fn->name, ngroups, inv->group_threads,
		inv->group_threads == 1 ? "" : "s", RR_MAX_THREADS);
	return 0;
}

int rr_slots_assign_groups(struct rr_invoker *inv)
{
	char err[RR_ERRLEN];
	struct rr_slot *s;
	uint32_t slot;
	int ret;

	/* Threads share one process: nothing to give a function its own. */
	for (slot = 0;
	     slot < inv->nslots && inv->cfg->isolation != RR_ISOLATION_CELL;
	     slot++)
		if (inv->slots[slot].svc->own_cells == RR_OWN_CELLS_YES)
			pr_warn("'%s': own_cells = yes has no effect with isolation = thread: every function runs in the one process\n",
				inv->slots[slot].svc->fn->name);
	/* own_cells = yes first: auto makes do with the room they leave. */
	inv->ngroups = 1;
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		s->cell_group = 0;
		if (s->svc->own_cells == RR_OWN_CELLS_YES &&
		    rr_slot_wants_own_cells(inv, s->svc, s->svc->fn))
			s->cell_group = inv->ngroups++;
	}
	ret = rr_cell_group_room(inv, inv->ngroups, err, sizeof(err));
	if (ret) {
		pr_warn("%s\n", err);
		return ret;
	}
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		if (s->svc->own_cells != RR_OWN_CELLS_YES &&
		    rr_slot_new_group(inv, s->svc, s->svc->fn, inv->ngroups,
				      err, sizeof(err)) > 0)
			s->cell_group = inv->ngroups++;
	}
	inv->nthreads = inv->group_threads * inv->ngroups;
	return 0;
}

/* Every served function's init(), before anything else is set up: a
 * function that cannot start stops reqrouter with its one line. */
int rr_instances_create(struct rr_invoker *inv)
{
	char err[RR_ERRLEN];
	struct rr_slot *s;
	uint32_t slot;
	int ret;

	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		ret = rr_slot_instance_new(inv, s, s->svc->fn, s->svc, &s->inst,
					   err, sizeof(err));
		if (ret) {
			pr_warn("%s\n", err);
			return ret;
		}
		hold_module(s->inst);
	}
	return 0;
}

/* Until every serving loop has passed a quiescent point after epoch @e,
 * or ~5 s; false if one has not (it is stuck inside a function).
 * *@filter: what rebuilding the cells' system call filter returned (0
 * with threads). */
static bool wait_workers(struct rr_invoker *inv, uint64_t e, int *filter)
{
	*filter = 0;
	/* A deployed function may bring system calls of its own; on
	 * failure (logged) the fresh cells keep the old filter. */
	if (inv->cfg->isolation == RR_ISOLATION_CELL)
		*filter = rr_seccomp_prepare(inv);
	/* Nothing serves before set-up is done. */
	return !inv->quiesce || inv->quiesce(inv, e);
}

/* Puts @fresh in slot @s for the workers' next batch (its module held);
 * returns the instance it replaces, still in use until retired. */
struct rr_fn_instance *rr_swap_instance(struct rr_slot *s,
					struct rr_fn_instance *fresh)
{
	struct rr_fn_instance *old = s->inst;

	hold_module(fresh);
	__atomic_store_n(&s->inst, fresh, __ATOMIC_RELEASE);
	return old;
}

bool rr_slots_quiesce(struct rr_invoker *inv, int *filter)
{
	return wait_workers(
		inv, __atomic_add_fetch(&inv->epoch, 1, __ATOMIC_SEQ_CST),
		filter);
}

/*
 * Frees the swapped-out @old[RR_MAX_SLOTS] (NULL entries skipped) once
 * every worker has passed a quiescent point after the swaps. False if one
 * has not come back from a function: nothing is freed then, since leaking
 * state is better than freeing it under a worker. The entries are freed,
 * not cleared: a caller may still read which slots changed.
 */
static bool retire(struct rr_invoker *inv, struct rr_fn_instance **old,
		   int *filter)
{
	uint32_t slot;

	if (!rr_slots_quiesce(inv, filter))
		return false;
	for (slot = 0; slot < RR_MAX_SLOTS; slot++)
		rr_instance_release(old[slot]);
	return true;
}

bool rr_retire_instances(struct rr_invoker *inv, struct rr_fn_instance **old)
{
	int filter;

	return retire(inv, old, &filter);
}

int rr_slot_of(const struct rr_invoker *inv, const char *name)
{
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++)
		if (!inv->slots[slot].canary_of &&
		    !strcmp(inv->slots[slot].svc->fn->name, name))
			return (int)slot;
	return -1;
}

const struct rr_slot *rr_slot_canary(const struct rr_invoker *inv,
				     const struct rr_slot *s)
{
	const struct rr_slot *c;

	if (!s->canary || s->canary > inv->nslots)
		return NULL;
	c = &inv->slots[s->canary - 1];
	return c->removed ? NULL : c;
}

const struct rr_slot *rr_canary_any(const struct rr_invoker *inv)
{
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++)
		if (rr_slot_canary(inv, &inv->slots[slot]))
			return &inv->slots[slot];
	return NULL;
}

/*
 * Canary slot @s's entry (kern/lib/canary.h), made from @conf: its own
 * sockets and steering from the pick on; what comes before the pick
 * (the guards, heavy hitters, rate limits) is the function's, and what a
 * canary does not have (an XDP program, the cache, spreading) is left
 * out. None while it is removed or quarantined: its share of sources
 * goes to the function then.
 */
static int canary_put(struct rr_invoker *inv, const struct rr_slot *s,
		      const struct rr_port_conf *conf)
{
	const struct rr_slot *fs = &inv->slots[s->canary_of - 1];
	struct rr_canary c = {
		.seed = fs->canary_seed,
		.share = fs->canary_permille * RR_CANARY_SHARE_ONE / 1000,
		.conf = *conf,
	};

	if (s->removed || s->quarantined)
		return rr_xdp_del_canary(&inv->xdp, s->svc->port);
	c.conf.flags &= ~(RR_PORT_XDP | RR_PORT_CACHE | RR_PORT_SPREAD |
			  RR_PORT_HH | RR_PORT_RL | RR_PORT_CANARY);
	return rr_xdp_set_canary(&inv->xdp, s->svc->port, &c);
}

/*
 * The one place a slot's state reaches the XDP map and the workers: its
 * port entry from port_conf, with RR_PORT_QUARANTINED added while it is
 * quarantined, the in-kernel tier and cache taken out while replies from
 * XDP would be lost (rr_slot_in_kernel), or no entry (its requests pass
 * to the kernel) while it is
 * removed or quarantined with quarantine_pass; and the workers' copy of
 * the quarantine (struct rr_live), which they read every batch because a
 * cell cannot see the slot itself. The copy is written first: a
 * quarantine starts dropping what is queued at once.
 */
bool rr_slot_in_kernel(const struct rr_invoker *inv, const struct rr_slot *s)
{
	/* A program that only classifies sends nothing from XDP. */
	bool no_tx = s->tier_xdp && !s->cached &&
		     s->svc->fn->flags & RR_FN_XDP_CLASSIFIER;

	return (s->tier_xdp || s->cached) &&
	       (inv->xdp_tx_ok || no_tx || s->svc->tier == RR_TIER_XDP);
}

int rr_slot_sync(struct rr_invoker *inv, struct rr_slot *s)
{
	struct rr_port_conf conf = s->port_conf;
	uint32_t k;
	int ret;

	rr_steer_parse(s);
	/* A canary's slot that serves no more: what XDP sent it before
	 * it knew goes back unanswered, never into code being unloaded. */
	__atomic_store_n(&inv->live->quarantined[s - inv->slots],
			 s->quarantined || (s->canary_of && s->removed),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&inv->live->cache_gen[s - inv->slots], s->cache_gen,
			 __ATOMIC_RELAXED);
	if (s->canary_of && (s->removed || s->quarantined))
		return canary_put(inv, s, &conf);
	if (s->removed || (s->quarantined && s->svc->quarantine_pass)) {
		memset(&inv->live->rl_cost[s - inv->slots], 0,
		       sizeof(inv->live->rl_cost[0]));
		ret = rr_xdp_del_port(&inv->xdp, s->svc->port);
		if (s->removed) {
			rr_spread_forget(s);
			rr_spread_sweep(inv);
		}
		return ret;
	}
	if (s->quarantined)
		conf.flags |= RR_PORT_QUARANTINED;
	/* Its cell group's workers, and its part of the reply cache. */
	conf.first_thread = rr_first_thread(inv, s);
	conf.cell_group = s->cell_group;
	/* Replies from XDP that would be lost: the workers answer. */
	if (!rr_slot_in_kernel(inv, s))
		conf.flags &= ~(RR_PORT_XDP | RR_PORT_CACHE);
	/* Where its XDP program runs; the cpumap entries made first. */
	rr_spread_port_conf(inv, s, &conf);
	/* How to pick a worker: by load only where the workers keep it. */
	conf.flags &= ~(RR_PORT_LOAD | RR_PORT_LEAST_LOADED);
	memset(conf.group_mask, 0, sizeof(conf.group_mask));
	/* deadline_us: the value first, then the flag that has it read. */
	conf.flags &= ~RR_PORT_DEADLINE;
	rr_xdp_set_deadline(&inv->xdp, (uint32_t)(s - inv->slots),
			    (uint64_t)s->svc->deadline_us * 1000);
	rr_xdp_set_trace(&inv->xdp, (uint32_t)(s - inv->slots),
			 s->svc->trace_sample);
	if (inv->xdp.load) {
		conf.flags |= RR_PORT_LOAD;
		if (s->svc->deadline_us)
			conf.flags |= RR_PORT_DEADLINE;
		if (s->svc->steering != RR_STEER_ROUND_ROBIN)
			conf.flags |= RR_PORT_LEAST_LOADED;
		for (k = 0; k < RR_XDP_CLASSES; k++)
			conf.group_mask[k] =
				(uint16_t)rr_steer_group_mask(inv, s, k);
	}
	/* gather_target: a gather's message is the workers', who take its
	 * header off before the handler. */
	conf.flags &= ~RR_PORT_SG_TARGET;
	if (s->svc->gather_target)
		conf.flags |= RR_PORT_SG_TARGET;
	/* Who is calling: heavy_hitters and its rate, as they are now. */
	rr_hh_port_conf(inv, s->svc, &conf);
	rr_rl_port_conf(inv, s->svc, &conf);
	rr_validate_port_conf(s->svc, &conf);
	rr_cookie_port_conf(inv, (uint32_t)(s - inv->slots), s->svc, &conf);
	/* What its workers charge, before the flag that has XDP read it. */
	rr_rl_cost_conf(s->svc, &conf, &inv->live->rl_cost[s - inv->slots]);
	conf.flags &= ~RR_PORT_CANARY;
	if (rr_slot_canary(inv, s) && s->canary_permille)
		conf.flags |= RR_PORT_CANARY;
	if (s->canary_of)
		ret = canary_put(inv, s, &conf);
	else
		ret = rr_xdp_set_port(&inv->xdp, s->svc->port, &conf);
	rr_spread_sweep(inv);
	return ret;
}

/*
 * A new instance of @fn for slot @s: made for its port, with the settings
 * of @svc (NULL: none), a state for every worker index that runs now, and
 * its counters registered in s->fn_ctrs.
 */
int rr_slot_instance_new(struct rr_invoker *inv, struct rr_slot *s,
			 const struct rr_function *fn,
			 const struct rr_service *svc,
			 struct rr_fn_instance **out, char *err, size_t errlen)
{
	bool active[RR_MAX_WORKERS + 1];

	rr_active_workers(inv, active);
	/* The TCP loop's state, one past the workers'. */
	active[RR_TCP_WORKER(inv)] = svc && svc->tcp;
	return rr_fn_instance_new_for(
		fn, s->svc->port, svc ? svc->settings : NULL,
		svc ? svc->nsettings : 0, RR_NWORKERS(inv) + 1, active,
		&s->fn_ctrs, inv->cfg, out, err, errlen);
}

/* Slot @s is answered only by its sockets from now on: a function that
 * came in by deploy has no XDP program here, and the replies cached for
 * the old code must not answer. */
void rr_user_tier_only(struct rr_invoker *inv, struct rr_slot *s)
{
	struct rr_port_conf was = s->port_conf;

	if (!s->tier_xdp && !s->cached)
		return;
	s->port_conf.flags &= ~(RR_PORT_XDP | RR_PORT_CACHE);
	if (rr_slot_sync(inv, s)) {
		s->port_conf = was;
		return;
	}
	s->tier_xdp = false;
	s->cached = false;
}

int rr_invoker_remove(struct rr_invoker *inv, const char *name, char *msg,
		      size_t msglen)
{
	int slot = rr_slot_of(inv, name);
	struct rr_slot *s;

	if (slot < 0 || inv->slots[slot].removed) {
		snprintf(msg, msglen, "no function '%s' is served", name);
		return -ENOENT;
	}
	s = &inv->slots[slot];
	/* Its port first: new requests go to the kernel, never into a
	 * socket nobody answers; what is queued already still gets its
	 * reply from the code that is there. */
	s->removed = true;
	if (rr_slot_sync(inv, s)) {
		s->removed = false;
		snprintf(msg, msglen, "cannot take port %u out", s->svc->port);
		return -EIO;
	}
	rr_user_tier_only(inv, s);
	snprintf(
		msg, msglen,
		"removed '%s': port %u goes to the kernel (reqrouterctl deploy brings it back)",
		name, s->svc->port);
	pr_notice("%s\n", msg);
	return 0;
}

void rr_slot_port_settings(const struct rr_service *svc,
			   struct rr_port_conf *conf)
{
	conf->max_amplification = svc->max_amplification;
	conf->min_src_port = svc->min_source_port;
	conf->cache_max_payload = svc->cache_max_payload;
	conf->xdp_max_payload = svc->xdp_max_payload;
	if (svc->nallow)
		conf->flags |= RR_PORT_ALLOWLIST;
	else
		conf->flags &= ~RR_PORT_ALLOWLIST;
}

/* Slot @slot's port into the XDP map: from now on its requests reach us. */
int rr_open_port(struct rr_invoker *inv, uint32_t slot)
{
	struct rr_slot *s = &inv->slots[slot];
	const struct rr_service *svc = s->svc;
	struct rr_port_conf conf = {
		.slot = slot,
		.nsocks = inv->group_threads,
		.flags = inv->cfg->answer_for == RR_ANSWER_LOCAL
				 ? RR_PORT_LOCAL_DST
				 : 0,
	};
	uint32_t i;
	bool held;
	int ret;

	rr_slot_port_settings(svc, &conf);

	for (i = 0; i < svc->nallow; i++) {
		ret = rr_xdp_allow(&inv->xdp, slot, &svc->allow[i]);
		if (ret)
			return ret;
	}
	ret = rr_rl_open(inv, slot, svc);
	if (ret)
		return ret;
	ret = choose_tier(inv, slot, &conf);
	if (ret)
		return ret;
	s->port_conf = conf;
	ret = rr_slot_sync(inv, s);
	if (ret)
		return ret;
	held = !rr_slot_in_kernel(inv, s);
	pr_info("serving '%s' on UDP port %u%s, %s%s%s\n", svc->fn->name,
		svc->port,
		svc->nallow ? " to the sources in its allow-list" : "",
		!s->tier_xdp ? "in user space (tier user)"
		: svc->fn->flags & RR_FN_XDP_CLASSIFIER
			? "in user space, classified in XDP (tier xdp)"
			: "in XDP first (tier xdp)",
		s->cached ? ", replies cached in XDP" : "",
		held && (s->tier_xdp || s->cached)
			? ", once the veth peer takes XDP frames (user space until then)"
			: "");
	rr_rl_say(svc);
	rr_validate_say(svc);
	if (svc->deadline_us)
		pr_info("'%s': a request older than %u us when a worker reaches it is dropped, counted as expired (deadline_us)\n",
			svc->fn->name, svc->deadline_us);
	rr_allow_notice(svc, inv->cfg->config_file);
	rr_port_taken_notice(svc, inv->cfg->ifname);
	rr_gather_open_notice(inv->cfg, svc);
	return 0;
}

/*
 * Reload: the config a restart would run with (rr_reload(), control.c)
 * against the one running. What a reload applies while serving is the
 * keys marked live in the settings tables (src/lib/settings.c) and the
 * functions' own settings (a new init() each); every other key needs a
 * restart, and the reload says so, one line per key. A live
 * [function NAME] key lives in the function's XDP port entry or
 * allow-list, or in its service, which the workers read every batch (a
 * cell in its own copy, which the reload renews) and the supervisor
 * every tick; `enabled` serves the function or takes its port out. The
 * reload paragraph of docs/OPERATIONS.md names the same keys.
 */

int rr_slot_serve_new(struct rr_invoker *inv, struct rr_fn_instance *inst,
		      char *msg, size_t msglen)
{
	uint32_t slot = inv->nslots, q, t;
	struct rr_slot *s = &inv->slots[slot];
	int ret = inv->add_group ? rr_slot_new_group(inv, s->svc, inst->fn,
						     inv->ngroups, msg, msglen)
				 : 0;
	bool own = ret > 0;

	/* Cells of its own: a group more, if a queue has room for it. */
	if (ret < 0) {
		rr_instance_release(inst);
		s->svc = NULL;
		return ret;
	}
	ret = 0;
	s->cell_group = own ? inv->ngroups : 0;
	rr_swap_instance(s, inst); /* replaces nothing: a new slot */
	for (q = 0; q < inv->nqueues && !ret; q++)
		for (t = 0; t < inv->threads_made && !ret; t++) {
			memset(rr_sock_at(inv, q, t, slot)->stats, 0,
			       sizeof(struct rr_sock_stats));
			ret = rr_xsk_later(inv, q, t, slot, msg, msglen);
			if (!ret && t < inv->nthreads)
				ret = rr_xsk_map(inv, q, t, slot, msg, msglen);
		}
	if (ret) {
		s->inst = NULL;
		rr_instance_release(inst);
		s->svc = NULL;
		return ret;
	}
	inv->nslots = slot + 1;
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < RR_MAX_THREADS; t++)
			__atomic_store_n(&rr_worker_at(inv, q, t)->nsocks,
					 inv->nslots, __ATOMIC_RELEASE);
	/* Its workers, with a socket for every slot, before its port. */
	ret = own ? inv->add_group(inv, msg, msglen) : 0;
	if (ret) {
		s->removed = true;
		rr_slot_sync(inv, s);
		return ret;
	}
	ret = rr_open_port(inv, slot);
	if (ret) {
		snprintf(msg, msglen, "cannot open port %u: %s", s->svc->port,
			 strerror(-ret));
		/* In the rounds, but its port with the kernel. */
		s->removed = true;
		rr_slot_sync(inv, s);
	}
	return ret;
}
