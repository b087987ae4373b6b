// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouterctl deploy: a function module's functions replace the served
 * ones of the same names (new instances, swapped between batches), or are
 * added in new slots (settings read from the config again, sockets made on
 * every queue, the workers' rounds widened, the port opened last).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gather.h"
#include "invoker.h"
#include "log.h"
#include "module.h"
#include "registry.h"
#include "slots.h"
#include "util.h"

/*
 * A deployed function with no slot yet: its service, as the config file
 * (read again, the module now registered) describes it, with the command
 * line's --tier and --no-cache applied. Appended to the config reqrouter
 * runs with; returns it, or NULL with @msg set.
 */
static struct rr_service *new_service(struct rr_invoker *inv,
				      const struct rr_function *fn, char *msg,
				      size_t msglen)
{
	struct rr_config *cfg = (struct rr_config *)inv->cfg, *tmp;
	struct rr_service *svc = NULL, *t;
	const struct rr_worker *owner;
	char err[RR_ERRLEN];
	uint32_t slot, i;

	if (cfg->nservices == ARRAY_SIZE(cfg->services)) {
		snprintf(msg, msglen, "no room for another function");
		return NULL;
	}
	/* The gathers' map, sockets and scatter are made at start, only
	 * where a function gathers. */
	if (fn->flags & RR_FN_GATHER && !inv->xdp.gathers) {
		snprintf(
			msg, msglen,
			"function '%s' gathers, and none did at start: it needs a restart",
			fn->name);
		return NULL;
	}
	tmp = rr_config_read(cfg->config_file, err, sizeof(err));
	if (!tmp) {
		snprintf(msg, msglen, "%s", err);
		return NULL;
	}
	t = rr_config_service_of(tmp, fn);
	if (!t || !t->enabled ||
	    ((fn->flags & RR_FN_OPT_IN) && !t->configured)) {
		snprintf(
			msg, msglen,
			"function '%s' is off in the config (or needs its [function %s] section)",
			fn->name, fn->name);
		goto out;
	}
	for (slot = 0; slot < inv->nslots; slot++)
		if (inv->slots[slot].svc->port == t->port) {
			snprintf(msg, msglen, "port %u is '%s''s", t->port,
				 inv->slots[slot].svc->fn->name);
			goto out;
		}
	owner = rr_gather_port_owner(inv, t->port);
	if (owner) {
		snprintf(
			msg, msglen,
			"port %u is worker %u/%u's gather port, an ephemeral one (a port outside net.ipv4.ip_local_port_range is never taken)",
			t->port, owner->queue, owner->thread);
		goto out;
	}
	if (cfg->no_cache)
		t->cache = false;
	if (cfg->tier_set)
		t->tier = cfg->tier;
	svc = &cfg->services[cfg->nservices++];
	*svc = *t;
	t->nsettings = 0; /* the strings are svc's now */
	/* Their file name pointed into tmp, which goes: the same file. */
	for (i = 0; i < svc->nsettings; i++)
		svc->settings[i].file = cfg->config_file;
out:
	rr_config_destroy(tmp);
	return svc;
}

/* What a deploy prepares before it changes anything, and undoes if a step
 * fails. */
struct deploy {
	const char *path;
	struct rr_module *m;
	/* By slot: the new instance replacing the served one. */
	struct rr_fn_instance *fresh[RR_MAX_SLOTS];
	/* The k-th function new to us: its instance (its service is in
	 * slot nslots + k already, not yet served). */
	struct rr_fn_instance *added[RR_MAX_SLOTS];
	uint32_t nnew;
	uint32_t nserv; /* cfg->nservices before the deploy */
	struct rr_registry_snapshot *snap;
};

/* An instance of @fn, the module's function, in d->fresh (it replaces a
 * served one) or d->added[*k] (it is new; *k counts those). */
static int prepare_one(struct rr_invoker *inv, struct deploy *d,
		       const struct rr_function *fn, uint32_t *k, char *err,
		       size_t errlen)
{
	int slot = rr_slot_of(inv, fn->name);
	struct rr_fn_instance **into;
	struct rr_slot *s;

	if (slot < 0) {
		s = &inv->slots[inv->nslots + *k];
		s->svc = new_service(inv, fn, err, errlen);
		if (!s->svc)
			return -EINVAL;
		into = &d->added[*k];
		(*k)++;
	} else {
		s = &inv->slots[slot];
		into = &d->fresh[slot];
		if (rr_slot_canary(inv, s)) {
			snprintf(
				err, errlen,
				"'%s' has a canary running: promote or roll it back first",
				fn->name);
			return -EBUSY;
		}
	}
	return rr_slot_instance_new(inv, s, fn, s->svc, into, err, errlen);
}

/* A function replaced by @fn moves to cells of its own where it wants
 * them and the shared ones served it: module code never runs beside the
 * functions that share cells (docs/DESIGN.md, "Cell groups"). */
static bool moves_for(const struct rr_invoker *inv, uint32_t slot,
		      const struct rr_function *fn)
{
	const struct rr_slot *s = &inv->slots[slot];

	return !s->cell_group && rr_slot_wants_own_cells(inv, s->svc, fn);
}

static bool moves(const struct rr_invoker *inv, const struct deploy *d,
		  uint32_t slot)
{
	return d->fresh[slot] && moves_for(inv, slot, d->fresh[slot]->fn);
}

/* The cell groups the deploy must add: one per new or moving function
 * with own_cells = yes (those with auto make do with the room left). */
static uint32_t groups_wanted(const struct rr_invoker *inv,
			      const struct deploy *d)
{
	const struct rr_service *svc;
	uint32_t slot, k, n = 0;

	for (slot = 0; slot < inv->nslots; slot++)
		n += moves(inv, d, slot) &&
		     inv->slots[slot].svc->own_cells == RR_OWN_CELLS_YES;
	for (k = 0; k < d->nnew; k++) {
		svc = inv->slots[inv->nslots + k].svc;
		n += svc->own_cells == RR_OWN_CELLS_YES &&
		     rr_slot_wants_own_cells(inv, svc, d->added[k]->fn);
	}
	return n;
}

/* Every function of the module gets its instance (and a new one its
 * service) first, so that a failure changes nothing. */
static int prepare(struct rr_invoker *inv, struct deploy *d, char *msg,
		   size_t msglen)
{
	char err[RR_ERRLEN];
	uint32_t k = 0;
	size_t j;
	int ret;

	/* New functions are read from the config with the module in the
	 * registry; until all is known to work, that can be undone. */
	for (j = 0; j < d->m->nfns; j++)
		d->nnew += rr_slot_of(inv, d->m->fns[j]->name) < 0;
	if (d->nnew) {
		if (inv->nslots + d->nnew > RR_MAX_SLOTS) {
			snprintf(msg, msglen, "%s: more than %d functions",
				 d->path, RR_MAX_SLOTS);
			return -E2BIG;
		}
		d->snap = rr_registry_save();
		if (!d->snap) {
			snprintf(msg, msglen, "out of memory");
			return -ENOMEM;
		}
		rr_registry_adopt(d->m);
	}
	for (j = 0; j < d->m->nfns; j++) {
		ret = prepare_one(inv, d, d->m->fns[j], &k, err, sizeof(err));
		if (ret) {
			snprintf(msg, msglen, "%s: %s", d->path, err);
			return ret;
		}
	}
	/* Room in every queue for the cell groups it brings. */
	ret = rr_cell_group_room(inv, inv->ngroups + groups_wanted(inv, d), err,
				 sizeof(err));
	if (ret)
		snprintf(msg, msglen, "%s: %s", d->path, err);
	return ret;
}

static void undo(struct rr_invoker *inv, struct deploy *d)
{
	struct rr_config *cfg = (struct rr_config *)inv->cfg;
	uint32_t slot;

	for (slot = 0; slot < RR_MAX_SLOTS; slot++) {
		rr_fn_instance_free(d->fresh[slot]);
		rr_fn_instance_free(d->added[slot]);
	}
	/* The slots prepared for new functions serve nothing. */
	for (slot = inv->nslots; slot < RR_MAX_SLOTS; slot++)
		inv->slots[slot].svc = NULL;
	/* Services appended for new functions go again. */
	while (cfg->nservices > d->nserv)
		rr_service_drop_settings(&cfg->services[--cfg->nservices]);
	if (d->snap)
		rr_registry_restore(d->snap);
	rr_module_close(d->m);
}

/* A function's idle canary slot (its last canary ended) names the
 * function's record, as rolled back (canary.c, end_canary()): the new
 * one's, since the old goes with its module. */
static void idle_canary_follows(struct rr_invoker *inv, const struct rr_slot *s)
{
	uint32_t self = (uint32_t)(s - inv->slots) + 1, slot;
	struct rr_slot *c;

	for (slot = 0; slot < inv->nslots; slot++) {
		c = &inv->slots[slot];
		if (c->canary_of == self && c->removed && c->svc)
			((struct rr_service *)c->svc)->fn = s->svc->fn;
	}
}

struct rr_fn_instance *rr_slot_replace(struct rr_invoker *inv, uint32_t slot,
				       struct rr_fn_instance *fresh)
{
	struct rr_slot *s = &inv->slots[slot];
	struct rr_fn_instance *old;
	char err[RR_ERRLEN];
	bool move;

	move = moves_for(inv, slot, fresh->fn) && inv->add_group &&
	       rr_slot_new_group(inv, s->svc, fresh->fn, inv->ngroups, err,
				 sizeof(err)) > 0;
	rr_user_tier_only(inv, s);
	/* Its new group's workers are forked knowing it is theirs; the
	 * shared cells, forked again once the old instance is retired,
	 * drop what was queued for it there. */
	if (move)
		s->cell_group = inv->ngroups;
	old = rr_swap_instance(s, fresh);
	/* The main thread's view; workers read the instance. */
	((struct rr_service *)s->svc)->fn = fresh->fn;
	idle_canary_follows(inv, s);
	if (move && inv->add_group(inv, err, sizeof(err))) {
		pr_warn("deploy: '%s' stays in the shared cells: %s\n",
			s->svc->fn->name, err);
		s->cell_group = 0;
	}
	if (s->removed || move) {
		s->removed = false;
		rr_slot_sync(inv, s);
	}
	return old;
}

/* The served functions the module replaces move to their new instances
 * (returned in @old until retired); a removed one's port comes back.
 * Returns how many were replaced. */
static uint32_t replace(struct rr_invoker *inv, struct deploy *d,
			struct rr_fn_instance **old)
{
	uint32_t slot, n = 0;

	for (slot = 0; slot < inv->nslots; slot++) {
		if (!d->fresh[slot])
			continue;
		old[slot] = rr_slot_replace(inv, slot, d->fresh[slot]);
		n++;
	}
	return n;
}

int rr_invoker_deploy(struct rr_invoker *inv, const char *path, char *msg,
		      size_t msglen)
{
	struct deploy d = { .path = path, .nserv = inv->cfg->nservices };
	struct rr_fn_instance *old[RR_MAX_SLOTS] = { 0 };
	uint32_t slot, n, k;
	int ret;

	ret = rr_registry_open_module(path, &d.m, msg, msglen);
	if (ret)
		return ret;
	ret = prepare(inv, &d, msg, msglen);
	if (ret) {
		undo(inv, &d);
		pr_warn("deploy: %s\n", msg);
		return ret;
	}
	if (d.snap)
		free(d.snap); /* kept: the module is in for good */
	else
		rr_registry_adopt(d.m);
	n = replace(inv, &d, old);
	for (k = 0; k < d.nnew; k++) {
		ret = rr_slot_serve_new(inv, d.added[k], msg, msglen);
		if (ret) {
			pr_warn("deploy: %s\n", msg);
			return ret;
		}
	}
	if (!rr_retire_instances(inv, old)) {
		snprintf(
			msg, msglen,
			"deployed %s, but a worker has not come back from a function for 5 s: the old code stays loaded",
			path);
		pr_warn("%s\n", msg);
		return 0;
	}
	/* New code deserves a new chance, once no cell runs the old. */
	for (slot = 0; slot < inv->nslots; slot++)
		if (old[slot])
			rr_unquarantine_slot(inv, &inv->slots[slot]);
	snprintf(msg, msglen, "deployed %s: %u function%s replaced, %u added",
		 path, n, n == 1 ? "" : "s", d.nnew);
	pr_notice("%s\n", msg);
	return 0;
}
