// SPDX-License-Identifier: GPL-2.0
/*
 * The reqrouter side of the function API's lifecycle: rr_fn_error(),
 * rr_fn_counter() and rr_fn_shared_alloc() for init(), the rr_fn_lock
 * calls for what is shared, and instances (init + init_worker, undone in
 * reverse, the shared memory last).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "config.h"
#include "function.h"
#include "log.h"

/* What an init() call writes back through cfg->env. */
struct rr_fn_env {
	char *err;
	size_t errlen;
	int said; /* rr_fn_error() was called */
	struct rr_fn_counters *ctrs;
	struct rr_fn_instance *inst;  /* keeps the shared memory */
	const struct rr_config *conf; /* its groups (rr_fn_group()) */
	const struct rr_function *fn;
};

int rr_fn_error(const struct rr_fn_config *cfg, const struct rr_fn_setting *s,
		const char *fmt, ...)
{
	struct rr_fn_env *env = cfg->env;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!env || env->said)
		return -EINVAL; /* the first reason is the one reported */
	if (s)
		snprintf(env->err, env->errlen, "%s:%u: function %s: %s",
			 s->file, s->line, cfg->name, msg);
	else
		snprintf(env->err, env->errlen, "function %s: %s", cfg->name,
			 msg);
	env->said = 1;
	return -EINVAL;
}

void rr_fn_log(const char *name, bool warn, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rr_log(warn ? RR_LOG_WARN : RR_LOG_NOTICE, "function %s: %s\n", name,
	       msg);
}

static int counter_name_ok(const char *name)
{
	size_t n = 0;

	for (; name && *name; name++, n++)
		if (!((*name >= 'a' && *name <= 'z') ||
		      (*name >= '0' && *name <= '9') || *name == '_'))
			return 0;
	return n > 0 && n < RR_FN_COUNTER_NAME;
}

int rr_fn_counter(const struct rr_fn_config *cfg, const char *name,
		  const char *help)
{
	struct rr_fn_counters *c = cfg->env ? cfg->env->ctrs : NULL;
	uint32_t i;

	if (!counter_name_ok(name)) {
		rr_fn_error(
			cfg, NULL,
			"counter name '%s' must be 1-%d characters of a-z, 0-9 and _",
			name ? name : "(null)", RR_FN_COUNTER_NAME - 1);
		return -EINVAL;
	}
	if (!c) /* a caller that keeps no counts: any index will do */
		return 0;
	for (i = 0; i < c->n; i++)
		if (!strcmp(c->name[i], name))
			return (int)i;
	if (c->n == RR_FN_MAX_COUNTERS) {
		rr_fn_error(cfg, NULL, "more than %d counters",
			    RR_FN_MAX_COUNTERS);
		return -ENOSPC;
	}
	snprintf(c->name[c->n], RR_FN_COUNTER_NAME, "%s", name);
	snprintf(c->help[c->n], RR_FN_COUNTER_HELP, "%s",
		 help && *help ? help : name);
	return (int)c->n++;
}

int rr_fn_tap(const struct rr_fn_config *cfg, uint32_t sample, rr_tap_t tap,
	      void *arg)
{
	struct rr_fn_instance *inst = cfg->env ? cfg->env->inst : NULL;

	if (!inst)
		return rr_fn_error(cfg, NULL, "a tap is for init() alone");
	if (!tap)
		return rr_fn_error(cfg, NULL, "a tap needs a function to call");
	inst->tap = tap;
	inst->tap_arg = arg;
	inst->tap_sample = sample ? sample : 1;
	return 0;
}

/*
 * Shared memory is mapped in the process that runs init(), before any
 * cell is forked, so every cell inherits the same pages at the same
 * address; nothing of it is marked MADV_DONTFORK.
 */
void *rr_fn_shared_alloc(const struct rr_fn_config *cfg, size_t size)
{
	struct rr_fn_instance *inst = cfg->env ? cfg->env->inst : NULL;
	struct rr_fn_shared *more;
	void *p;

	if (!inst) {
		rr_fn_error(cfg, NULL, "shared memory is for init() alone");
		errno = EINVAL;
		return NULL;
	}
	if (!size) {
		rr_fn_error(cfg, NULL, "shared memory of 0 bytes asked for");
		errno = EINVAL;
		return NULL;
	}
	more = realloc(inst->shared, (inst->nshared + 1) * sizeof(*more));
	if (!more) {
		rr_fn_error(cfg, NULL, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	inst->shared = more;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED) {
		int e = errno;

		rr_fn_error(cfg, NULL,
			    "cannot map %zu bytes of shared memory: %s", size,
			    strerror(e));
		errno = e;
		return NULL;
	}
	more[inst->nshared].addr = p;
	more[inst->nshared].len = size;
	inst->nshared++;
	return p;
}

/* Out of line, so that the API header needs no feature macro: a module
 * built with -std=c11 sees no PTHREAD_MUTEX_ROBUST. */
int rr_fn_lock_init(rr_fn_lock_t *l)
{
	pthread_mutexattr_t attr;
	int ret;

	ret = pthread_mutexattr_init(&attr);
	if (ret)
		return -ret;
	ret = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	if (!ret)
		ret = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	if (!ret)
		ret = pthread_mutex_init(&l->mutex, &attr);
	pthread_mutexattr_destroy(&attr);
	return -ret;
}

int rr_fn_lock(rr_fn_lock_t *l)
{
	int ret = pthread_mutex_lock(&l->mutex);

	if (ret == EOWNERDEAD) {
		/* The dead holder's changes are the caller's to judge. */
		pthread_mutex_consistent(&l->mutex);
		return RR_FN_LOCK_RECOVERED;
	}
	return -ret;
}

void rr_fn_unlock(rr_fn_lock_t *l)
{
	pthread_mutex_unlock(&l->mutex);
}

/* After fini(), or after a failed init(): nobody uses it any more. */
static void unmap_shared(struct rr_fn_instance *inst)
{
	while (inst->nshared > 0) {
		inst->nshared--;
		munmap(inst->shared[inst->nshared].addr,
		       inst->shared[inst->nshared].len);
	}
	free(inst->shared);
	inst->shared = NULL;
}

void rr_fn_instance_free(struct rr_fn_instance *inst)
{
	uint32_t i;

	if (!inst)
		return;
	if (inst->worker_state && inst->live && inst->fn->fini_worker)
		for (i = inst->nworkers; i-- > 0;)
			if (inst->live[i])
				inst->fn->fini_worker(inst->state,
						      inst->worker_state[i]);
	if (inst->fn->init && inst->fn->fini)
		inst->fn->fini(inst->state);
	unmap_shared(inst);
	free(inst->worker_state);
	free(inst->live);
	free(inst);
}

bool rr_fn_instance_per_worker(const struct rr_fn_instance *inst)
{
	uint32_t i;

	for (i = 0; inst->fn->init_worker && i < inst->nworkers; i++)
		if (inst->worker_state[i])
			return true;
	return false;
}

int rr_fn_instance_new(const struct rr_function *fn, uint16_t port,
		       const struct rr_fn_setting *settings, size_t nsettings,
		       uint32_t nworkers, struct rr_fn_counters *ctrs,
		       struct rr_fn_instance **out, char *err, size_t errlen)
{
	return rr_fn_instance_new_for(fn, port, settings, nsettings, nworkers,
				      NULL, ctrs, NULL, out, err, errlen);
}

int rr_fn_instance_new_for(const struct rr_function *fn, uint16_t port,
			   const struct rr_fn_setting *settings,
			   size_t nsettings, uint32_t nworkers,
			   const bool *active, struct rr_fn_counters *ctrs,
			   const struct rr_config *conf,
			   struct rr_fn_instance **out, char *err,
			   size_t errlen)
{
	struct rr_fn_env env = { err, errlen, 0, ctrs, NULL, conf, fn };
	struct rr_fn_config cfg = {
		.name = fn->name,
		.port = port,
		.settings = settings,
		.nsettings = nsettings,
		.workers = nworkers,
		.env = &env,
	};
	struct rr_fn_instance *inst;
	uint32_t i;
	int ret;

	*out = NULL;
	cfg.workers = 0;
	for (i = 0; i < nworkers; i++)
		cfg.workers += !active || active[i];
	inst = calloc(1, sizeof(*inst));
	if (!inst) {
		snprintf(err, errlen, "function %s: out of memory", fn->name);
		return -ENOMEM;
	}
	inst->fn = fn;
	env.inst = inst;
	if (fn->init) {
		ret = fn->init(&cfg, &inst->state);
		env.inst = NULL; /* for init() alone */
		if (ret) {
			if (!env.said)
				snprintf(err, errlen,
					 "function %s: init failed: %s",
					 fn->name,
					 strerror(ret < 0 ? -ret : ret));
			unmap_shared(inst);
			free(inst);
			return ret < 0 ? ret : -EINVAL;
		}
	}
	inst->worker_state = calloc(nworkers ? nworkers : 1, sizeof(void *));
	inst->live = calloc(nworkers ? nworkers : 1, 1);
	if (!inst->worker_state || !inst->live) {
		snprintf(err, errlen, "function %s: out of memory", fn->name);
		rr_fn_instance_free(inst);
		return -ENOMEM;
	}
	if (!fn->init_worker) {
		inst->nworkers = nworkers;
		*out = inst;
		return 0;
	}
	inst->nworkers = nworkers;
	for (i = 0; i < nworkers; i++) {
		if (active && !active[i])
			continue;
		ret = fn->init_worker(inst->state, i, &inst->worker_state[i]);
		if (ret) {
			snprintf(err, errlen,
				 "function %s: init_worker(%u) failed: %s",
				 fn->name, i, strerror(ret < 0 ? -ret : ret));
			rr_fn_instance_free(inst); /* undoes those made */
			return ret < 0 ? ret : -EINVAL;
		}
		inst->live[i] = 1;
	}
	inst->nworkers = nworkers;
	*out = inst;
	return 0;
}

int rr_fn_group(const struct rr_fn_config *cfg, const char *name,
		uint32_t *ntargets)
{
	const struct rr_fn_env *env = cfg->env;
	int g;

	if (!env || !env->fn || !(env->fn->flags & RR_FN_GATHER))
		return rr_fn_error(
			cfg, NULL,
			"group '%s': only a function flagged RR_FN_GATHER may gather",
			name);
	g = env->conf ? rr_config_group(env->conf, name) : -1;
	if (g < 0)
		return rr_fn_error(cfg, NULL, "no [group %s] in the config",
				   name);
	if (ntargets)
		*ntargets = env->conf->groups[g].ntargets;
	return g;
}

static __thread uint64_t scratch_counters[RR_FN_MAX_COUNTERS];

void rr_fn_request_bind(struct rr_request *req,
			const struct rr_fn_instance *inst, uint32_t worker,
			uint64_t *counters)
{
	req->state = inst ? inst->state : NULL;
	req->worker_state = inst && worker < inst->nworkers
				    ? inst->worker_state[worker]
				    : NULL;
	req->counters = counters ? counters : scratch_counters;
}

int rr_fn_instance_from_file(const struct rr_function *fn, uint16_t port,
			     const char *config_file, uint32_t nworkers,
			     struct rr_fn_instance **out, char *err,
			     size_t errlen)
{
	struct rr_service *svc;
	struct rr_config *cfg;
	int ret;

	*out = NULL;
	if (!fn->init || !config_file)
		return rr_fn_instance_new(fn, port, NULL, 0, nworkers, NULL,
					  out, err, errlen);
	cfg = rr_config_read(config_file, err, errlen);
	if (!cfg)
		return -EINVAL;
	svc = rr_config_service_of(cfg, fn);
	/* A tool that checks replies (rrload) makes the cookies the server
	 * with this cookie_secret makes. */
	if (svc && svc->cookie_secret[0] && fn->flags & RR_FN_DNS_COOKIES) {
		if (rr_cookie_secret_read(svc->cookie_secret,
					  svc->cookie.current, err, errlen)) {
			rr_config_destroy(cfg);
			return -EINVAL;
		}
		svc->cookie_ready = true;
	}
	ret = rr_fn_instance_new_for(fn, port, svc ? svc->settings : NULL,
				     svc ? svc->nsettings : 0, nworkers, NULL,
				     NULL, cfg, out, err, errlen);
	rr_config_destroy(cfg);
	return ret;
}

int rr_fn_cookie_secrets(const struct rr_fn_config *cfg,
			 struct rr_fn_cookie_secrets *out)
{
	const struct rr_fn_env *env = cfg->env;
	const struct rr_service *svc;

	svc = env && env->conf && env->fn
		      ? rr_config_service_of(env->conf, env->fn)
		      : NULL;
	if (!svc || !svc->cookie_ready)
		return -ENOENT;
	*out = svc->cookie;
	return 0;
}
