// SPDX-License-Identifier: GPL-2.0
/*
 * Canaries (docs/DESIGN.md, "Canaries"): reqrouterctl deploy --canary
 * runs a module's function beside the served one of its name, in a slot
 * of its own (its sockets, its cells, its counters), for a share of the
 * sources the XDP program picks by a keyed hash of the source address
 * (kern/lib/canary.h); promote makes it the function, as a deploy would,
 * and rollback sends its sources back. The canary's slot stays, removed,
 * for the function's next canary.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "invoker.h"
#include "log.h"
#include "module.h"
#include "registry.h"
#include "slots.h"

/* The served function @name and its running canary, or -ENOENT with
 * @msg set. */
static int find(struct rr_invoker *inv, const char *name, struct rr_slot **fs,
		struct rr_slot **cs, char *msg, size_t msglen)
{
	int slot = rr_slot_of(inv, name);

	if (slot < 0 || inv->slots[slot].removed) {
		snprintf(msg, msglen, "no function '%s' is served", name);
		return -ENOENT;
	}
	*fs = &inv->slots[slot];
	*cs = (struct rr_slot *)rr_slot_canary(inv, *fs);
	if (!*cs) {
		snprintf(msg, msglen, "'%s' has no canary running", name);
		return -ENOENT;
	}
	return 0;
}

/* What a canary of @fn beside function slot @fs cannot be: -EINVAL with
 * @msg set, else 0. */
static int refuse(const struct rr_invoker *inv, const struct rr_slot *fs,
		  const struct rr_function *fn, const char *path, char *msg,
		  size_t msglen)
{
	const struct rr_slot *cs = rr_slot_canary(inv, fs);
	const struct rr_module *m =
		cs ? rr_registry_module_of(cs->svc->fn) : NULL;

	if (cs) {
		snprintf(
			msg, msglen,
			"%s: '%s' has a canary running already (%s, %.1f%%): promote or roll it back first",
			path, fn->name, m ? m->path : "built in",
			fs->canary_permille / 10.0);
		return -EBUSY;
	}
	/* A gather's targets and budgets are the function's: one version
	 * at a time. */
	if ((fn->flags | fs->svc->fn->flags) & RR_FN_GATHER) {
		snprintf(msg, msglen,
			 "'%s' gathers: a function that gathers has no canary",
			 fn->name);
		return -EINVAL;
	}
	return 0;
}

/* Function slot @fs's removed canary slot, for its next canary, or NULL. */
static struct rr_slot *idle_slot(struct rr_invoker *inv,
				 const struct rr_slot *fs)
{
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++)
		if (inv->slots[slot].canary_of ==
		    (uint32_t)(fs - inv->slots) + 1)
			return &inv->slots[slot];
	return NULL;
}

/* The canary's service: the function's, but what belongs to the port as
 * a whole (TCP, heavy hitters, rate limits, spreading, the cache and the
 * in-kernel tier) stays the function's. Its settings' strings are the
 * function's, borrowed: a reload waits until the canary ends. */
static void canary_service(struct rr_service *c, const struct rr_service *svc,
			   const struct rr_function *fn)
{
	*c = *svc;
	c->fn = fn;
	c->tcp = false;
	c->heavy_hitters = false;
	c->rate_limit = 0;
	c->xdp_spread[0] = '\0';
	c->cache = false;
	c->tier = RR_TIER_USER;
}

/* A new key for the sources' hash: no client can choose its side. */
static uint64_t new_seed(void)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = rr_now_ns() * 0x9e3779b97f4a7c15ULL;
	return seed;
}

/* @inst served in the function's removed canary slot @cs again, once
 * every cell has it. */
static int reuse(struct rr_invoker *inv, struct rr_slot *cs,
		 struct rr_fn_instance *inst)
{
	int filter;

	rr_swap_instance(cs, inst); /* the slot's was retired: none */
	if (!rr_slots_quiesce(inv, &filter))
		return -ETIMEDOUT;
	memset(&cs->faults, 0, sizeof(cs->faults));
	cs->quarantined = false;
	cs->removed = false;
	return rr_slot_sync(inv, cs);
}

int rr_invoker_canary(struct rr_invoker *inv, const char *path,
		      uint32_t permille, char *msg, size_t msglen)
{
	struct rr_service *copy, want;
	const struct rr_function *fn;
	struct rr_fn_instance *inst;
	struct rr_slot *fs, *cs;
	char err[RR_ERRLEN];
	struct rr_module *m;
	int slot, ret, filter;
	bool fresh_slot;

	ret = rr_registry_open_module(path, &m, msg, msglen);
	if (ret)
		return ret;
	ret = -EINVAL;
	if (m->nfns != 1) {
		snprintf(msg, msglen,
			 "%s: a canary is one function, and it has %zu", path,
			 m->nfns);
		goto fail;
	}
	fn = m->fns[0];
	slot = rr_slot_of(inv, fn->name);
	if (slot < 0 || inv->slots[slot].removed) {
		snprintf(
			msg, msglen,
			"%s: no function '%s' is served: a canary runs beside the running version (reqrouterctl deploy serves it)",
			path, fn->name);
		ret = -ENOENT;
		goto fail;
	}
	fs = &inv->slots[slot];
	ret = refuse(inv, fs, fn, path, msg, msglen);
	if (ret)
		goto fail;
	cs = idle_slot(inv, fs);
	fresh_slot = !cs;
	if (fresh_slot && inv->nslots == RR_MAX_SLOTS) {
		snprintf(msg, msglen, "%s: more than %d functions", path,
			 RR_MAX_SLOTS);
		ret = -E2BIG;
		goto fail;
	}
	copy = fresh_slot ? calloc(1, sizeof(*copy))
			  : (struct rr_service *)cs->svc;
	if (!copy) {
		snprintf(msg, msglen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	if (fresh_slot) {
		cs = &inv->slots[inv->nslots];
		canary_service(copy, fs->svc, fs->svc->fn);
		cs->svc = copy;
	}
	/* Nothing of the slot changes until its instance is made. */
	canary_service(&want, fs->svc, fn);
	ret = rr_slot_instance_new(inv, cs, fn, &want, &inst, err, sizeof(err));
	if (ret) {
		snprintf(msg, msglen, "%s: %s", path, err);
		if (fresh_slot) {
			cs->svc = NULL;
			free(copy);
		}
		goto fail;
	}
	*copy = want;
	cs->canary_of = (uint32_t)slot + 1;
	snprintf(cs->canary_version, sizeof(cs->canary_version), "%s",
		 rr_registry_version(fn));
	/* Its share and key first: its entry is written with them. */
	fs->canary_permille = permille;
	fs->canary_seed = new_seed();
	if (fresh_slot) {
		ret = rr_slot_serve_new(inv, inst, err, sizeof(err));
		if (ret && !cs->svc) { /* the instance is released */
			snprintf(msg, msglen, "%s: %s", path, err);
			free(copy);
			cs->canary_of = 0;
			fs->canary_permille = 0;
			goto fail;
		}
		/* Cells forked before it was served learn of it. */
		if (!ret && !rr_slots_quiesce(inv, &filter))
			ret = -ETIMEDOUT;
	} else {
		ret = reuse(inv, cs, inst);
	}
	if (ret) {
		fs->canary_permille = 0;
		snprintf(
			msg, msglen,
			"%s: its slot cannot serve (%s); the running version keeps every source",
			path, strerror(-ret));
		pr_warn("canary: %s\n", msg);
		return ret;
	}
	/* Now the function's entry sends the share its way. */
	fs->canary = (uint32_t)(cs - inv->slots) + 1;
	ret = rr_slot_sync(inv, fs);
	if (ret) {
		fs->canary = 0;
		snprintf(msg, msglen, "cannot write port %u's entry",
			 fs->svc->port);
		return ret;
	}
	snprintf(
		msg, msglen,
		"canary of '%s' from %s: %.1f%% of the sources (reqrouterctl promote or rollback %s)",
		fn->name, path, permille / 10.0, fn->name);
	pr_notice("%s\n", msg);
	return 0;
fail:
	pr_warn("canary: %s\n", msg);
	rr_module_close(m);
	return ret;
}

/*
 * Function slot @fs's canary @cs serves no more once its queued requests
 * are answered: the function's entry without it first, every worker past
 * a round, then its entry out, its slot removed and its instance retired.
 * False if a worker did not come back from a function: the instance
 * stays then.
 */
static bool end_canary(struct rr_invoker *inv, struct rr_slot *fs,
		       struct rr_slot *cs)
{
	struct rr_fn_instance *old[RR_MAX_SLOTS] = { 0 };
	int filter;

	fs->canary = 0;
	rr_slot_sync(inv, fs);
	rr_slots_quiesce(inv, &filter);
	cs->removed = true;
	rr_slot_sync(inv, cs);
	old[cs - inv->slots] = cs->inst;
	__atomic_store_n(&cs->inst, NULL, __ATOMIC_RELEASE);
	/* What the main thread reads of an idle slot must outlive the
	 * canary's code. */
	((struct rr_service *)cs->svc)->fn = fs->svc->fn;
	((struct rr_service *)cs->svc)->nsettings = 0; /* borrowed */
	fs->canary_permille = 0;
	return rr_retire_instances(inv, old);
}

/* Logs @msg, with what stays loaded unless @retired. */
static void said(bool retired, char *msg, size_t msglen)
{
	size_t n = strlen(msg);

	if (retired) {
		pr_notice("%s\n", msg);
		return;
	}
	snprintf(
		msg + n, msglen - n,
		" (a worker has not come back from a function for 5 s: the old code stays loaded)");
	pr_warn("%s\n", msg);
}

int rr_invoker_rollback(struct rr_invoker *inv, const char *name, char *msg,
			size_t msglen)
{
	struct rr_slot *fs, *cs;
	int ret = find(inv, name, &fs, &cs, msg, msglen);
	bool retired;

	if (ret)
		return ret;
	retired = end_canary(inv, fs, cs);
	snprintf(
		msg, msglen,
		"rolled back the canary of '%s': the running version has every source",
		name);
	said(retired, msg, msglen);
	return 0;
}

int rr_invoker_promote(struct rr_invoker *inv, const char *name, char *msg,
		       size_t msglen)
{
	struct rr_fn_instance *old[RR_MAX_SLOTS] = { 0 }, *fresh;
	const struct rr_function *fn;
	struct rr_slot *fs, *cs;
	char err[RR_ERRLEN];
	struct rr_module *m;
	uint32_t slot;
	bool retired;
	int ret = find(inv, name, &fs, &cs, msg, msglen);

	if (ret)
		return ret;
	slot = (uint32_t)(fs - inv->slots);
	fn = cs->inst->fn;
	m = rr_registry_module_of(fn);
	ret = rr_slot_instance_new(inv, fs, fn, fs->svc, &fresh, err,
				   sizeof(err));
	if (ret) {
		snprintf(msg, msglen, "cannot promote '%s': %s", name, err);
		pr_warn("%s\n", msg);
		return ret;
	}
	/* The registry serves the new version from now on; the old one's
	 * module goes with its last instance. */
	if (m)
		rr_registry_adopt(m);
	/* The function's own sources move to the new version, and only
	 * once every cell has it do the canary's. */
	old[slot] = rr_slot_replace(inv, slot, fresh);
	retired = rr_retire_instances(inv, old);
	retired = end_canary(inv, fs, cs) && retired;
	rr_unquarantine_slot(inv, fs);
	snprintf(msg, msglen,
		 "promoted the canary of '%s': every source gets %s now", name,
		 m ? m->path : "it");
	said(retired, msg, msglen);
	return 0;
}
