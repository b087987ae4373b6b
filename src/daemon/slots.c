// SPDX-License-Identifier: GPL-2.0
/*
 * The functions the invoker serves, one slot each: where each is answered
 * (tier), its port opened in the XDP map, its instances (state) created,
 * swapped and retired once no worker can use them, and what changes them
 * while serving: reload and remove. Deploy is in deploy.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cell.h"
#include "invoker_internal.h"
#include "log.h"
#include "module.h"
#include "registry.h"
#include "seccomp.h"

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
static void active_workers(const struct rr_invoker *inv, bool *active)
{
	uint32_t q, t;

	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < RR_MAX_THREADS; t++)
			active[q * RR_MAX_THREADS + t] = t < inv->nthreads;
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

/* Until every running worker has started a round in epoch @e, or ~5 s;
 * false if one has not (it is stuck inside a function). */
static bool wait_workers(struct rr_invoker *inv, uint64_t e)
{
	struct timespec ms = { 0, 1000000L };
	uint32_t i, n = RR_NWORKERS(inv), tries;

	/* A cell's copies of the functions are its own: only fresh cells
	 * see the new ones. */
	if (inv->cfg->isolation == RR_ISOLATION_CELL) {
		/* A deployed function may bring system calls of its own;
		 * on failure (logged) the fresh cells keep the old filter. */
		rr_seccomp_prepare(inv);
		return rr_cells_renew(inv);
	}
	for (tries = 0; tries < 5000; tries++) {
		for (i = 0; i < n; i++)
			if (__atomic_load_n(&inv->workers[i].started,
					    __ATOMIC_ACQUIRE) &&
			    __atomic_load_n(&inv->workers[i].rep->seen_epoch,
					    __ATOMIC_ACQUIRE) < e)
				break;
		if (i == n)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
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

/*
 * Frees the swapped-out @old[RR_MAX_SLOTS] (NULL entries skipped) once
 * every worker has passed a quiescent point after the swaps. False if one
 * has not come back from a function: nothing is freed then, since leaking
 * state is better than freeing it under a worker. The entries are freed,
 * not cleared: a caller may still read which slots changed.
 */
bool rr_retire_instances(struct rr_invoker *inv, struct rr_fn_instance **old)
{
	uint32_t slot;

	if (!wait_workers(inv,
			  __atomic_add_fetch(&inv->epoch, 1, __ATOMIC_SEQ_CST)))
		return false;
	for (slot = 0; slot < RR_MAX_SLOTS; slot++)
		rr_instance_release(old[slot]);
	return true;
}

int rr_invoker_reload(struct rr_invoker *inv, const struct rr_config *next,
		      char *msg, size_t msglen)
{
	struct rr_fn_instance *old[RR_MAX_SLOTS] = { 0 }, *fresh;
	uint32_t failed = 0, swapped = 0, slot;
	char err[RR_ERRLEN];
	struct rr_slot *s;
	int ret;

	/* A reload is also how a quarantined function is given another
	 * chance without the control socket. */
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		if (s->quarantined) {
			rr_unquarantine_slot(inv, s);
			pr_info("reload: function '%s' is out of quarantine\n",
				s->svc->fn->name);
		}
	}
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		if (!s->svc->fn->init)
			continue;
		ret = rr_slot_instance_new(
			inv, s, s->svc->fn,
			rr_config_service_of(next, s->svc->fn), &fresh, err,
			sizeof(err));
		if (ret) {
			pr_warn("reload: %s; the old state keeps serving\n",
				err);
			if (!failed++)
				snprintf(msg, msglen,
					 "%s; the old state keeps serving",
					 err);
			continue;
		}
		old[slot] = rr_swap_instance(s, fresh);
		swapped++;
	}
	if (!failed)
		snprintf(msg, msglen, "%u function%s re-initialised", swapped,
			 swapped == 1 ? "" : "s");
	if (!swapped)
		return (int)failed;
	if (!rr_retire_instances(inv, old)) {
		pr_warn("reload: a worker has not come back from a function for 5 s; the old state is kept in memory\n");
		return (int)failed + 1;
	}
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		/* Cached replies of the old state must no longer answer;
		 * workers now insert only new-state replies. */
		if (!old[slot] || !s->cached)
			continue;
		__atomic_add_fetch(&s->cache_gen, 1, __ATOMIC_RELAXED);
		s->port_conf.cache_gen = s->cache_gen;
		if (rr_slot_sync(inv, s))
			pr_warn("reload: cannot renew the reply cache of '%s'\n",
				s->svc->fn->name);
	}
	pr_info("reload: %u function%s re-initialised%s\n", swapped,
		swapped == 1 ? "" : "s", failed ? ", some failed" : "");
	return (int)failed;
}

int rr_slot_of(const struct rr_invoker *inv, const char *name)
{
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++)
		if (!strcmp(inv->slots[slot].svc->fn->name, name))
			return (int)slot;
	return -1;
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
	return (s->tier_xdp || s->cached) &&
	       (inv->xdp_tx_ok || s->svc->tier == RR_TIER_XDP);
}

int rr_slot_sync(struct rr_invoker *inv, struct rr_slot *s)
{
	struct rr_port_conf conf = s->port_conf;

	__atomic_store_n(&inv->live->quarantined[s - inv->slots],
			 s->quarantined, __ATOMIC_RELAXED);
	__atomic_store_n(&inv->live->cache_gen[s - inv->slots], s->cache_gen,
			 __ATOMIC_RELAXED);
	if (s->removed || (s->quarantined && s->svc->quarantine_pass))
		return rr_xdp_del_port(&inv->xdp, s->svc->port);
	if (s->quarantined)
		conf.flags |= RR_PORT_QUARANTINED;
	/* Replies from XDP that would be lost: the workers answer. */
	if (!rr_slot_in_kernel(inv, s))
		conf.flags &= ~(RR_PORT_XDP | RR_PORT_CACHE);
	return rr_xdp_set_port(&inv->xdp, s->svc->port, &conf);
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
	bool active[RR_MAX_WORKERS];

	active_workers(inv, active);
	return rr_fn_instance_new_for(
		fn, s->svc->port, svc ? svc->settings : NULL,
		svc ? svc->nsettings : 0, RR_NWORKERS(inv), active, &s->fn_ctrs,
		out, err, errlen);
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
	pr_info("%s\n", msg);
	return 0;
}

/* Slot @slot's port into the XDP map: from now on its requests reach us. */
int rr_open_port(struct rr_invoker *inv, uint32_t slot)
{
	struct rr_slot *s = &inv->slots[slot];
	const struct rr_service *svc = s->svc;
	struct rr_port_conf conf = {
		.slot = slot,
		.nsocks = inv->nthreads,
		.flags = (svc->nallow ? RR_PORT_ALLOWLIST : 0) |
			 (inv->cfg->answer_for == RR_ANSWER_LOCAL
				  ? RR_PORT_LOCAL_DST
				  : 0),
		.max_amplification = svc->max_amplification,
		.min_src_port = svc->min_source_port,
		.cache_max_payload = svc->cache_max_payload,
		.xdp_max_payload = svc->xdp_max_payload,
	};
	uint32_t i;
	bool held;
	int ret;

	for (i = 0; i < svc->nallow; i++) {
		ret = rr_xdp_allow(&inv->xdp, slot, &svc->allow[i]);
		if (ret)
			return ret;
	}
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
		s->tier_xdp ? "in XDP first (tier xdp)"
			    : "in user space (tier user)",
		s->cached ? ", replies cached in XDP" : "",
		held && (s->tier_xdp || s->cached)
			? ", once the veth peer takes XDP frames (user space until then)"
			: "");
	return 0;
}
