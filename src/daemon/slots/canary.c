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
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "expo.h"
#include "invoker.h"
#include "latency.h"
#include "log.h"
#include "module.h"
#include "registry.h"
#include "slots.h"

static void watch_start(struct rr_invoker *inv, const struct rr_slot *fs,
			const struct rr_slot *cs, uint64_t now);

/* Function @name (served, or removed: its canary can still go) and its
 * running canary, or -ENOENT with @msg set. */
static int find(struct rr_invoker *inv, const char *name, struct rr_slot **fs,
		struct rr_slot **cs, char *msg, size_t msglen)
{
	int slot = rr_slot_of(inv, name);

	if (slot < 0) {
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
 * function's until copied (rr_service_keep_settings()). */
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

void rr_canary_service_free(const struct rr_service *svc)
{
	if (!svc)
		return;
	rr_service_drop_settings((struct rr_service *)svc);
	free((void *)svc);
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
	/* Its settings its own: a reload may free the function's. */
	*copy = want;
	copy->nsettings = 0;
	rr_service_keep_settings(copy, &want, inv->cfg->config_file);
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
			rr_canary_service_free(copy);
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
	fs->canary_configured = false; /* its caller's to say */
	/* Now the function's entry sends the share its way, and the
	 * figures of both count from here (canary_rollback). */
	watch_start(inv, fs, cs, rr_now_ns());
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
	rr_service_drop_settings((struct rr_service *)cs->svc);
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

int rr_canary_configured(struct rr_invoker *inv, uint32_t slot, char *msg,
			 size_t msglen)
{
	struct rr_slot *fs = &inv->slots[slot];
	const struct rr_slot *cs = rr_slot_canary(inv, fs);
	const struct rr_module *m, *run = rr_registry_module_of(fs->svc->fn);
	const char *name = fs->svc->fn->name;
	char path[RR_CANARY_LEN], full[PATH_MAX];
	unsigned int permille;
	int ret;

	m = cs ? rr_registry_module_of(cs->svc->fn) : NULL;
	if (!fs->svc->canary[0]) {
		if (!cs || !fs->canary_configured) {
			snprintf(msg, msglen, "no canary");
			return 1;
		}
		return rr_invoker_rollback(inv, name, msg, msglen);
	}
	ret = rr_parse_canary(fs->svc->canary, path, sizeof(path), &permille,
			      msg, msglen);
	if (ret)
		return ret;
	if (!realpath(path, full)) {
		snprintf(msg, msglen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	/* Promoted: the config has yet to say so. */
	if (!cs && run && !strcmp(run->path, full)) {
		snprintf(
			msg, msglen,
			"%s is the running version of '%s' (promoted): no canary; the key can go",
			full, name);
		return 1;
	}
	if (cs && m && !strcmp(m->path, full)) {
		if (permille == fs->canary_permille) {
			snprintf(msg, msglen, "as it is");
			return 1;
		}
		/* The same key: the sources it had keep it, more join. */
		fs->canary_permille = permille;
		ret = rr_slot_sync(inv, (struct rr_slot *)cs);
		snprintf(msg, msglen,
			 "the canary of '%s' has %.1f%% of the sources now",
			 name, permille / 10.0);
		return ret;
	}
	if (cs) {
		ret = rr_invoker_rollback(inv, name, msg, msglen);
		if (ret)
			return ret;
	}
	ret = rr_invoker_canary(inv, full, permille, msg, msglen);
	fs->canary_configured = !ret;
	return ret;
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

/*
 * Automatic rollback (canary_rollback): once a second, each canary's
 * figures over its window against its function's, from their counters'
 * growth since the window began. A rate must pass the running version's
 * by canary_margin percent and half a percentage point, the p99 by the
 * margin and 100 us, so that one unlucky request among few is no
 * verdict; and the canary must have had 20 requests (the window grows
 * until it has).
 */
#define WATCH_MIN_REQUESTS 20
#define WATCH_RATE_SLACK 0.005
#define WATCH_P99_SLACK_NS 100000ULL
/* What rolled a canary back: the bit of RR_CANARY_* it is. */
#define RR_CANARY_WHY 3

/* A slot's counters summed over its sockets, and its faults. */
struct figures {
	uint64_t requests, errors, faults;
	uint64_t lat[RR_LATENCY_NLE + 1];
};

/* By function slot: its canary's window and what rolled canaries back. */
static struct watch {
	uint64_t since_ns; /* the window's start; 0: none yet */
	struct figures run, can;
	uint64_t rollbacks[RR_CANARY_WHY];
} watches[RR_MAX_SLOTS];

static const char *const why_names[RR_CANARY_WHY] = { "faults", "errors",
						      "p99" };

static void figures_of(struct rr_invoker *inv, uint32_t slot, struct figures *f)
{
	const struct rr_sock_stats *st;
	uint32_t q, t, b;

	memset(f, 0, sizeof(*f));
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < inv->threads_made; t++) {
			st = rr_sock_at(inv, q, t, slot)->stats;
			f->requests += rr_stat_read(&st->rx);
			f->errors += rr_stat_read(
				&st->drops[RR_DROP_FUNCTION_ERROR]);
			for (b = 0; b <= RR_LATENCY_NLE; b++)
				f->lat[b] +=
					rr_stat_read(&st->latency.bucket[b]);
		}
	f->faults = inv->slots[slot].faults.crashes +
		    inv->slots[slot].faults.timeouts;
}

/* @now - @was, into @now. */
static void since(struct figures *now, const struct figures *was)
{
	uint32_t b;

	now->requests -= was->requests;
	now->errors -= was->errors;
	now->faults -= was->faults;
	for (b = 0; b <= RR_LATENCY_NLE; b++)
		now->lat[b] -= was->lat[b];
}

/* @n of @of; a crash may take its request uncounted with it. */
static double rate(uint64_t n, uint64_t of)
{
	of = of > n ? of : n;
	return of ? (double)n / (double)of : 0;
}

/* Whether @n of @can_of passes @m of @run_of by factor @factor and the
 * slack, said in @said as @what. */
static bool rate_worse(uint64_t n, uint64_t can_of, uint64_t m, uint64_t run_of,
		       double factor, const char *what, char *said, size_t len)
{
	double c = rate(n, can_of), r = rate(m, run_of);

	snprintf(said, len, "%s a request %.2f %% against %.2f %%", what,
		 100 * c, 100 * r);
	return c > r * factor + WATCH_RATE_SLACK;
}

/* Which figure of @can (over its window) passes @run's by @margin
 * percent, with its figures in words in @said; RR_CANARY_WHY if none. */
static int worse(const struct figures *can, const struct figures *run,
		 uint32_t mask, uint32_t margin, char *said, size_t len)
{
	double m = 1 + margin / 100.0;
	uint64_t cp, rp;

	if (mask & RR_CANARY_FAULTS &&
	    rate_worse(can->faults, can->requests, run->faults, run->requests,
		       m, "faults", said, len))
		return 0;
	if (mask & RR_CANARY_ERRORS &&
	    rate_worse(can->errors, can->requests, run->errors, run->requests,
		       m, "errors", said, len))
		return 1;
	cp = rr_latency_quantile(can->lat, 0.99);
	rp = rr_latency_quantile(run->lat, 0.99);
	if (mask & RR_CANARY_P99 && rp && rp != UINT64_MAX &&
	    (double)cp > (double)rp * m + (double)WATCH_P99_SLACK_NS) {
		snprintf(said, len, "p99 service time %.0f us against %.0f us",
			 cp == UINT64_MAX ? INFINITY : cp / 1000.0,
			 rp / 1000.0);
		return 2;
	}
	return RR_CANARY_WHY;
}

/* Function slot @fs's canary @cs's window starts @now. */
static void watch_start(struct rr_invoker *inv, const struct rr_slot *fs,
			const struct rr_slot *cs, uint64_t now)
{
	struct watch *w = &watches[fs - inv->slots];

	w->since_ns = now;
	figures_of(inv, (uint32_t)(fs - inv->slots), &w->run);
	figures_of(inv, (uint32_t)(cs - inv->slots), &w->can);
}

/* Function slot @fs's canary @cs: rolled back if its window says so. */
static void watch_one(struct rr_invoker *inv, struct rr_slot *fs,
		      struct rr_slot *cs, uint64_t now)
{
	struct watch *w = &watches[fs - inv->slots];
	const struct rr_service *svc = fs->svc;
	struct figures run, can;
	char said[160], msg[RR_ERRLEN * 2], err[RR_ERRLEN];
	uint32_t mask;
	double secs;
	int why;

	if (!w->since_ns) {
		watch_start(inv, fs, cs, now);
		return;
	}
	figures_of(inv, (uint32_t)(fs - inv->slots), &run);
	figures_of(inv, (uint32_t)(cs - inv->slots), &can);
	if (rr_parse_canary_rollback(svc->canary_rollback, &mask, err,
				     sizeof(err)) ||
	    !mask || now - w->since_ns < svc->canary_window * 1000000000ULL)
		return;
	since(&run, &w->run);
	since(&can, &w->can);
	/* A canary its faults quarantined gets no more requests: its
	 * window is enough as it is. */
	if (can.requests < WATCH_MIN_REQUESTS && !cs->quarantined)
		return;
	secs = (double)(now - w->since_ns) / 1e9;
	w->since_ns = 0; /* the next window starts at the next call */
	why = worse(&can, &run, mask, svc->canary_margin, said, sizeof(said));
	if (why == RR_CANARY_WHY)
		return;
	w->rollbacks[why]++;
	pr_warn("canary of '%s' (%s): %s of the running version over %.0f s (%" PRIu64
		" requests against %" PRIu64
		"), past canary_margin %u %%: rolling it back (canary_rollback)\n",
		svc->fn->name, cs->canary_version, said, secs, can.requests,
		run.requests, svc->canary_margin);
	rr_invoker_rollback(inv, svc->fn->name, msg, sizeof(msg));
}

void rr_canary_watch(struct rr_invoker *inv, uint64_t now)
{
	struct rr_slot *fs, *cs;
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++) {
		fs = &inv->slots[slot];
		cs = (struct rr_slot *)rr_slot_canary(inv, fs);
		if (cs)
			watch_one(inv, fs, cs, now);
		else
			watches[slot].since_ns = 0;
	}
}

void rr_canary_write_metrics(const struct rr_invoker *inv, FILE *out)
{
	uint32_t slot, k;

	rr_metric_family(
		out, "reqrouter_canary_rollbacks_total", "counter",
		"Canaries rolled back by canary_rollback, by the figure that passed the running version's (faults, errors, p99).");
	for (slot = 0; slot < inv->nslots; slot++) {
		if (inv->slots[slot].canary_of)
			continue;
		for (k = 0; k < RR_CANARY_WHY; k++) {
			fprintf(out, "reqrouter_canary_rollbacks_total{");
			rr_metric_fn_labels(out, &inv->slots[slot]);
			fprintf(out, ",reason=\"%s\"} %" PRIu64 "\n",
				why_names[k], watches[slot].rollbacks[k]);
		}
	}
}

void rr_canary_start_configured(struct rr_invoker *inv)
{
	char msg[RR_ERRLEN * 2];
	uint32_t slot, n = inv->nslots;

	for (slot = 0; slot < n; slot++)
		if (!inv->slots[slot].canary_of &&
		    inv->slots[slot].svc->canary[0] &&
		    rr_canary_configured(inv, slot, msg, sizeof(msg)) < 0)
			pr_warn("[function %s] canary: %s\n",
				inv->slots[slot].svc->fn->name, msg);
}
