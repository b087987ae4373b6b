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

#include "cell.h"
#include "invoker_internal.h"
#include "log.h"
#include "module.h"
#include "registry.h"

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
	char err[RR_ERRLEN];
	uint32_t p;

	if (cfg->nservices ==
	    sizeof(cfg->services) / sizeof(cfg->services[0])) {
		snprintf(msg, msglen, "no room for another function");
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
	for (p = 0; p < inv->nslots; p++)
		if (inv->served[p]->port == t->port) {
			snprintf(msg, msglen, "port %u is '%s''s", t->port,
				 inv->served[p]->fn->name);
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
	for (p = 0; p < svc->nsettings; p++)
		svc->settings[p].file = cfg->config_file;
out:
	rr_config_destroy(tmp);
	return svc;
}

/* Sockets (for every thread made), XSKMAP entries (for the running ones),
 * workers told, then the port: slot inv->nslots comes to life. */
static int add_slot(struct rr_invoker *inv, struct rr_service *svc,
		    struct rr_fn_instance *inst, char *msg, size_t msglen)
{
	uint32_t p = inv->nslots, q, t;
	struct rr_sock *s;
	int ret;

	inv->served[p] = svc; /* its counters were registered by init */
	rr_swap_instance(inv, p, inst); /* replaces nothing: a new slot */
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < inv->threads_made; t++) {
			s = rr_sock_at(inv, q, t, p);
			memset(&s->stats, 0, sizeof(s->stats));
			ret = rr_xsk_later(inv, q, t, p, msg, msglen);
			if (ret)
				return ret;
			if (t < inv->nthreads) {
				ret = rr_xsk_map(inv, q, t, p, msg, msglen);
				if (ret)
					return ret;
			}
		}
	inv->nslots = p + 1;
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < RR_MAX_THREADS; t++)
			__atomic_store_n(&rr_worker_at(inv, q, t)->nsocks,
					 inv->nslots, __ATOMIC_RELEASE);
	ret = rr_open_port(inv, p);
	if (ret)
		snprintf(msg, msglen, "cannot open port %u: %s", svc->port,
			 strerror(-ret));
	return ret;
}

int rr_invoker_deploy(struct rr_invoker *inv, const char *path, char *msg,
		      size_t msglen)
{
	struct rr_fn_instance *fresh[RR_MAX_SLOTS] = { 0 };
	struct rr_fn_instance *old[RR_MAX_SLOTS] = { 0 };
	struct rr_fn_instance *added[RR_MAX_SLOTS] = { 0 };
	struct rr_service *addsvc[RR_MAX_SLOTS] = { 0 };
	struct rr_config *cfg = (struct rr_config *)inv->cfg;
	bool active[RR_MAX_QUEUES * RR_MAX_THREADS];
	struct rr_registry_snapshot *snap = NULL;
	uint32_t p, n = 0, nnew = 0, nserv = cfg->nservices, k;
	struct rr_service *svc;
	struct rr_module *m;
	char err[RR_ERRLEN];
	size_t j;
	int ret, slot;

	ret = rr_registry_open_module(path, &m, msg, msglen);
	if (ret)
		return ret;
	rr_active_workers(inv, active);
	/* New functions are read from the config with the module in the
	 * registry; until all is known to work, that can be undone. */
	for (j = 0; j < m->nfns; j++)
		nnew += rr_slot_of(inv, m->fns[j]->name) < 0;
	if (nnew) {
		if (inv->nslots + nnew > RR_MAX_SLOTS) {
			snprintf(msg, msglen, "%s: more than %d functions",
				 path, RR_MAX_SLOTS);
			ret = -E2BIG;
			goto undo;
		}
		snap = rr_registry_save();
		if (!snap) {
			ret = -ENOMEM;
			snprintf(msg, msglen, "out of memory");
			goto undo;
		}
		rr_registry_adopt(m);
	}
	/* Every function first, so a failure changes nothing. */
	for (j = 0, k = 0; j < m->nfns; j++) {
		slot = rr_slot_of(inv, m->fns[j]->name);
		if (slot < 0) {
			svc = new_service(inv, m->fns[j], err, sizeof(err));
			if (!svc) {
				snprintf(msg, msglen, "%s: %s", path, err);
				ret = -EINVAL;
				goto undo;
			}
			addsvc[k] = svc;
			ret = rr_fn_instance_new_for(
				m->fns[j], svc->port, svc->settings,
				svc->nsettings, RR_WORKER_SLOTS(inv), active,
				&inv->fn_ctrs[inv->nslots + k], &added[k], err,
				sizeof(err));
			k++;
		} else {
			svc = (struct rr_service *)inv->served[slot];
			ret = rr_fn_instance_new_for(
				m->fns[j], svc->port, svc->settings,
				svc->nsettings, RR_WORKER_SLOTS(inv), active,
				&inv->fn_ctrs[slot], &fresh[slot], err,
				sizeof(err));
		}
		if (ret) {
			snprintf(msg, msglen, "%s: %s", path, err);
			goto undo;
		}
	}
	if (snap)
		free(snap); /* kept: the module is in for good */
	else
		rr_registry_adopt(m);
	snap = NULL;
	for (p = 0; p < inv->nslots; p++) {
		if (!fresh[p])
			continue;
		rr_user_tier_only(inv, p);
		old[p] = rr_swap_instance(inv, p, fresh[p]);
		/* The main thread's view; workers read the instance. */
		svc = (struct rr_service *)inv->served[p];
		svc->fn = fresh[p]->fn;
		if (inv->removed[p]) {
			inv->removed[p] = false;
			rr_xdp_set_port(&inv->xdp, svc->port,
					&inv->port_conf[p]);
		}
		n++;
	}
	for (k = 0; k < nnew; k++) {
		ret = add_slot(inv, addsvc[k], added[k], msg, msglen);
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
	for (p = 0; p < inv->nslots; p++)
		if (old[p])
			rr_unquarantine_slot(inv, p);
	snprintf(msg, msglen, "deployed %s: %u function%s replaced, %u added",
		 path, n, n == 1 ? "" : "s", nnew);
	pr_info("%s\n", msg);
	return 0;
undo:
	for (p = 0; p < RR_MAX_SLOTS; p++) {
		rr_fn_instance_free(fresh[p]);
		rr_fn_instance_free(added[p]);
	}
	/* Services appended for new functions go again. */
	while (cfg->nservices > nserv) {
		svc = &cfg->services[--cfg->nservices];
		for (j = 0; j < svc->nsettings; j++) {
			free((char *)svc->settings[j].key);
			free((char *)svc->settings[j].value);
		}
		svc->nsettings = 0;
	}
	if (snap)
		rr_registry_restore(snap);
	rr_module_close(m);
	pr_warn("deploy: %s\n", msg);
	return ret;
}
