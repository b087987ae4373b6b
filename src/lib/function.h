/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A function's life with state (API 2): its counters, and an instance =
 * one init() and its per-worker states. The invoker swaps instances on a
 * reload; the tools make one to run a function the way reqrouter does.
 */
#ifndef RR_FUNCTION_LIFE_H
#define RR_FUNCTION_LIFE_H

#include <stdbool.h>
#include <stdint.h>

#include <reqrouter/rr_function.h>

struct rr_config;

#define RR_FN_COUNTER_NAME 48
#define RR_FN_COUNTER_HELP 160

/* The counters a function registered: names outlive instances, so a
 * reload that registers the same names keeps counting in the same places. */
struct rr_fn_counters {
	uint32_t n;
	char name[RR_FN_MAX_COUNTERS][RR_FN_COUNTER_NAME];
	char help[RR_FN_MAX_COUNTERS][RR_FN_COUNTER_HELP];
};

/* One mapping init() got from rr_fn_shared_alloc(). */
struct rr_fn_shared {
	void *addr;
	size_t len;
};

struct rr_fn_instance {
	const struct rr_function *fn;
	void *state;
	void **worker_state; /* [nworkers] */
	uint8_t *live;	     /* [nworkers]: init_worker() ran for it */
	uint32_t nworkers;
	/* Unmapped after fini(). */
	struct rr_fn_shared *shared; /* [nshared] */
	uint32_t nshared;
	/* Its tap (rr_fn_tap()): the in-kernel tier's answers, one in
	 * tap_sample (0: none), handed to tap(tap_arg, ...). */
	rr_tap_t tap;
	void *tap_arg;
	uint32_t tap_sample;
};

/*
 * Runs fn's init() with @settings and init_worker() for @nworkers
 * workers (a function without them gets an instance with NULL states).
 * @ctrs (may be NULL: counters then registered nowhere) collects its
 * counters. Returns 0, or -errno with one line in @err that names the
 * function; whatever init made is freed again.
 */
int rr_fn_instance_new(const struct rr_function *fn, uint16_t port,
		       const struct rr_fn_setting *settings, size_t nsettings,
		       uint32_t nworkers, struct rr_fn_counters *ctrs,
		       struct rr_fn_instance **out, char *err, size_t errlen);

/*
 * The same for worker indices 0..nworkers-1 of which only those with
 * @active[i] set run (NULL: all): init_worker() runs for those alone, and
 * cfg->workers counts them; and with @conf (may be NULL), the config
 * whose groups rr_fn_group() finds.
 */
int rr_fn_instance_new_for(const struct rr_function *fn, uint16_t port,
			   const struct rr_fn_setting *settings,
			   size_t nsettings, uint32_t nworkers,
			   const bool *active, struct rr_fn_counters *ctrs,
			   const struct rr_config *conf,
			   struct rr_fn_instance **out, char *err,
			   size_t errlen);

/*
 * What rr_gather_start() calls: the worker's (src/daemon/features/gather.c), put
 * in a request that may wait for a gather (rr_request.gather).
 */
struct rr_gather_ctx {
	/* NULL: the request cannot start a gather. */
	int (*start)(struct rr_gather_ctx *ctx, const struct rr_request *req,
		     const struct rr_gather_spec *g);
	/* gather_target: a payload that starts with a gather's header is
	 * a message of another's gather (rr_serve_keep()). */
	bool target;
	/* Why start() refused the request's gather, an enum rr_drop (the
	 * function's gather_limit, its budgets): its drop is counted as
	 * such; 0 when it did not. */
	uint32_t refused;
	/* The request started its gather: the gather keeps its frame and
	 * answers it, whatever the handler returns, and it starts no
	 * second one. */
	bool started;
};

/* fini_worker() for every worker, fini(), the shared memory unmapped,
 * free. NULL-safe. The caller
 * guarantees that no worker is inside the handler with it. */
void rr_fn_instance_free(struct rr_fn_instance *inst);

/* Whether @inst's init_worker() gave any worker a state: one that gave
 * none (dns without dnstap) keeps no state per worker, and new workers
 * may share the instance with a NULL one. */
bool rr_fn_instance_per_worker(const struct rr_fn_instance *inst);

/* Points @req at @inst's state for @worker, and at @counters (NULL: a
 * per-thread scratch array, for callers that do not keep counts). */
void rr_fn_request_bind(struct rr_request *req,
			const struct rr_fn_instance *inst, uint32_t worker,
			uint64_t *counters);

/*
 * For the tools, which run functions to answer (sockserver) or to check
 * answers (rrload): an instance of @fn made as reqrouter makes it, with
 * the settings of its [function NAME] section in @config_file (NULL: no
 * settings). A function without init() needs no file.
 */
int rr_fn_instance_from_file(const struct rr_function *fn, uint16_t port,
			     const char *config_file, uint32_t nworkers,
			     struct rr_fn_instance **out, char *err,
			     size_t errlen);

#endif /* RR_FUNCTION_LIFE_H */
