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

/*
 * Where function @slot is answered: its XDP program when it has one and
 * the tier allows (auto falls back to user space with a warning if the
 * kernel refuses the program; xdp stops the start-up), and for a pure
 * function served in user space, the reply cache.
 */
static int choose_tier(struct rr_invoker *inv, uint32_t slot,
		       struct rr_port_conf *conf)
{
	const struct rr_service *svc = inv->served[slot];
	const struct rr_xdp_impl *impl = rr_registry_xdp(svc->fn->name);
	char why[RR_ERRLEN];
	int ret;

	if (impl && svc->tier != RR_TIER_USER) {
		ret = rr_xdp_load_function(&inv->xdp, slot, impl, why,
					   sizeof(why));
		if (!ret) {
			inv->tier_xdp[slot] = true;
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
		inv->cache_gen[slot] += 1;
		conf->cache_gen = inv->cache_gen[slot];
		conf->cache_id_bytes = svc->fn->id_bytes;
		inv->cached[slot] = true;
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

/* Which worker slots run: thread < nthreads on every served queue. */
void rr_active_workers(const struct rr_invoker *inv, bool *active)
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
	bool active[RR_MAX_QUEUES * RR_MAX_THREADS];
	char err[RR_ERRLEN];
	uint32_t p;
	int ret;

	rr_active_workers(inv, active);
	for (p = 0; p < inv->nslots; p++) {
		const struct rr_service *svc = inv->served[p];

		ret = rr_fn_instance_new_for(
			svc->fn, svc->port, svc->settings, svc->nsettings,
			RR_WORKER_SLOTS(inv), active, &inv->fn_ctrs[p],
			&inv->inst[p], err, sizeof(err));
		if (ret) {
			pr_warn("%s\n", err);
			return ret;
		}
		hold_module(inv->inst[p]);
	}
	return 0;
}

/* Until every running worker has started a round in epoch @e, or ~5 s;
 * false if one has not (it is stuck inside a function). */
static bool wait_workers(struct rr_invoker *inv, uint64_t e)
{
	struct timespec ms = { 0, 1000000L };
	uint32_t i, n = RR_WORKER_SLOTS(inv), tries;

	/* A cell's copies of the functions are its own: only fresh cells
	 * see the new ones. */
	if (inv->cfg->isolation == RR_ISOLATION_CELL)
		return rr_cells_renew(inv);
	for (tries = 0; tries < 5000; tries++) {
		for (i = 0; i < n; i++)
			if (__atomic_load_n(&inv->workers[i].started,
					    __ATOMIC_ACQUIRE) &&
			    __atomic_load_n(&inv->workers[i].seen_epoch,
					    __ATOMIC_ACQUIRE) < e)
				break;
		if (i == n)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

/* Puts @fresh in slot @p for the workers' next batch (its module held);
 * returns the instance it replaces, still in use until retired. */
struct rr_fn_instance *rr_swap_instance(struct rr_invoker *inv, uint32_t p,
					struct rr_fn_instance *fresh)
{
	struct rr_fn_instance *old = inv->inst[p];

	hold_module(fresh);
	__atomic_store_n(&inv->inst[p], fresh, __ATOMIC_RELEASE);
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
	uint32_t p;

	if (!wait_workers(inv,
			  __atomic_add_fetch(&inv->epoch, 1, __ATOMIC_SEQ_CST)))
		return false;
	for (p = 0; p < RR_MAX_SLOTS; p++)
		rr_instance_release(old[p]);
	return true;
}

int rr_invoker_reload(struct rr_invoker *inv, const struct rr_config *next,
		      char *msg, size_t msglen)
{
	struct rr_fn_instance *old[RR_MAX_SLOTS] = { 0 }, *fresh;
	bool active[RR_MAX_QUEUES * RR_MAX_THREADS];
	uint32_t failed = 0, swapped = 0, p;
	const struct rr_service *svc;
	char err[RR_ERRLEN];
	int ret;

	/* A reload is also how a quarantined function is given another
	 * chance without the control socket. */
	for (p = 0; p < inv->nslots; p++)
		if (inv->faults[p].quarantined) {
			rr_unquarantine_slot(inv, p);
			pr_info("reload: function '%s' is out of quarantine\n",
				inv->served[p]->fn->name);
		}
	rr_active_workers(inv, active);
	for (p = 0; p < inv->nslots; p++) {
		if (!inv->served[p]->fn->init)
			continue;
		svc = rr_config_service_of(next, inv->served[p]->fn);
		ret = rr_fn_instance_new_for(
			inv->served[p]->fn, inv->served[p]->port,
			svc ? svc->settings : NULL, svc ? svc->nsettings : 0,
			RR_WORKER_SLOTS(inv), active, &inv->fn_ctrs[p], &fresh,
			err, sizeof(err));
		if (ret) {
			pr_warn("reload: %s; the old state keeps serving\n",
				err);
			if (!failed++)
				snprintf(msg, msglen,
					 "%s; the old state keeps serving",
					 err);
			continue;
		}
		old[p] = rr_swap_instance(inv, p, fresh);
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
	for (p = 0; p < inv->nslots; p++) {
		if (!old[p])
			continue;
		/* Cached replies of the old state must no longer answer;
		 * workers now insert only new-state replies. */
		if (inv->cached[p]) {
			__atomic_add_fetch(&inv->cache_gen[p], 1,
					   __ATOMIC_RELAXED);
			inv->port_conf[p].cache_gen = inv->cache_gen[p];
			if (rr_xdp_set_port(&inv->xdp, inv->served[p]->port,
					    &inv->port_conf[p]))
				pr_warn("reload: cannot renew the reply cache of '%s'\n",
					inv->served[p]->fn->name);
		}
	}
	pr_info("reload: %u function%s re-initialised%s\n", swapped,
		swapped == 1 ? "" : "s", failed ? ", some failed" : "");
	return (int)failed;
}

int rr_slot_of(const struct rr_invoker *inv, const char *name)
{
	uint32_t p;

	for (p = 0; p < inv->nslots; p++)
		if (!strcmp(inv->served[p]->fn->name, name))
			return (int)p;
	return -1;
}

/* Slot @p is answered only by its sockets from now on: a function that
 * came in by deploy has no XDP program here, and the replies cached for
 * the old code must not answer. */
void rr_user_tier_only(struct rr_invoker *inv, uint32_t p)
{
	struct rr_port_conf conf = inv->port_conf[p];

	if (!inv->tier_xdp[p] && !inv->cached[p])
		return;
	conf.flags &= ~(RR_PORT_XDP | RR_PORT_CACHE);
	if (!inv->removed[p] &&
	    rr_xdp_set_port(&inv->xdp, inv->served[p]->port, &conf))
		return;
	inv->port_conf[p] = conf;
	inv->tier_xdp[p] = false;
	inv->cached[p] = false;
}

int rr_invoker_remove(struct rr_invoker *inv, const char *name, char *msg,
		      size_t msglen)
{
	int p = rr_slot_of(inv, name);

	if (p < 0 || inv->removed[p]) {
		snprintf(msg, msglen, "no function '%s' is served", name);
		return -ENOENT;
	}
	/* Its port first: new requests go to the kernel, never into a
	 * socket nobody answers; what is queued already still gets its
	 * reply from the code that is there. */
	if (rr_xdp_del_port(&inv->xdp, inv->served[p]->port)) {
		snprintf(msg, msglen, "cannot take port %u out",
			 inv->served[p]->port);
		return -EIO;
	}
	inv->removed[p] = true;
	rr_user_tier_only(inv, p);
	snprintf(
		msg, msglen,
		"removed '%s': port %u goes to the kernel (reqrouterctl deploy brings it back)",
		name, inv->served[p]->port);
	pr_info("%s\n", msg);
	return 0;
}

/* Slot @p's port into the XDP map: from now on its requests reach us. */
int rr_open_port(struct rr_invoker *inv, uint32_t p)
{
	const struct rr_service *svc = inv->served[p];
	struct rr_port_conf conf = {
		.slot = p,
		.nsocks = inv->nthreads,
		.flags = svc->nallow ? RR_PORT_ALLOWLIST : 0,
		.max_amplification = svc->max_amplification,
		.cache_max_payload = svc->cache_max_payload,
		.xdp_max_payload = svc->xdp_max_payload,
	};
	uint32_t i;
	int ret;

	for (i = 0; i < svc->nallow; i++) {
		ret = rr_xdp_allow(&inv->xdp, p, &svc->allow[i]);
		if (ret)
			return ret;
	}
	ret = choose_tier(inv, p, &conf);
	if (ret)
		return ret;
	ret = rr_xdp_set_port(&inv->xdp, svc->port, &conf);
	if (ret)
		return ret;
	inv->port_conf[p] = conf;
	pr_info("serving '%s' on UDP port %u%s, %s%s\n", svc->fn->name,
		svc->port,
		svc->nallow ? " to the sources in its allow-list" : "",
		inv->tier_xdp[p] ? "in XDP first (tier xdp)"
				 : "in user space (tier user)",
		inv->cached[p] ? ", replies cached in XDP" : "");
	return 0;
}
