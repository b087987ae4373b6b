// SPDX-License-Identifier: GPL-2.0
/*
 * A test module for the metrics (tests/integration/metrics_families.sh):
 * an echo that registers a counter named "faults", the name of one of
 * reqrouter's own families (reqrouter_function_faults_total), and one
 * named "requests". Every request counts in "requests"; one that starts
 * with "fault" counts in "faults" too. Pure, as an echo is: with the
 * reply cache on, a repeated request is answered from the cache and
 * counted in neither.
 */
#include <string.h>

#include <reqrouter/rr_function.h>

struct tally {
	int requests;
	int faults;
};

static int tally_init(const struct rr_fn_config *cfg, void **state)
{
	static struct tally t;

	if (cfg->nsettings)
		return rr_fn_error(cfg, &cfg->settings[0], "takes no settings");
	t.requests = rr_fn_counter(cfg, "requests", "Requests echoed.");
	if (t.requests < 0)
		return t.requests;
	t.faults = rr_fn_counter(cfg, "faults",
				 "Requests that start with \"fault\".");
	if (t.faults < 0)
		return t.faults;
	*state = &t;
	return 0;
}

static int tally(const struct rr_request *req, uint8_t *buf, size_t len,
		 size_t room)
{
	const struct tally *t = req->state;

	(void)room;
	rr_fn_count(req, t->requests, 1);
	if (len >= 5 && !memcmp(buf, "fault", 5))
		rr_fn_count(req, t->faults, 1);
	return (int)len;
}

RR_FUNCTION_DEF(tally, 9013, "echo, counting (a test module)", .handler = tally,
		.init = tally_init, .flags = RR_FN_PURE);
