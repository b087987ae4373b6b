// SPDX-License-Identifier: GPL-2.0
/*
 * fanout: sends its request to every target of a group and answers with
 * what they answered, reduced: the example of a function that gathers
 * (API 4, RR_FN_GATHER; docs/DESIGN.md, "Gathers"). Opt-in: served only
 * where the config names its group.
 *
 *	[group shards]
 *	targets = 10.0.0.1-10.0.0.8:7
 *
 *	[function fanout]
 *	group = shards
 *	reduce = sum	; concat, sum, min, max, count, or, topk
 *	k = 3		; topk: how many values
 *	need = 0	; complete after this many replies; 0: all
 *	split = no	; yes: the request is a comma-separated list, the
 *			; first item sent to target 0, the next to target 1...
 *
 * The request's payload (up to 1200 bytes) goes to each target behind
 * the gather header (with split = yes, each target its own item of it,
 * and an empty payload to a target past the list's end); each reply's
 * value is its leading decimal digits (rr_gather.h). The reply is rr_gather_format()'s: "VALUE ANSWERED/ASKED"
 * (for topk the values, for concat each reply's body on a line of its
 * own and then "ANSWERED/ASKED"), and " missed I,J" where some targets
 * did not answer by the deadline (gather_deadline_us). An empty request
 * is not answered; at gather_limit outstanding gathers a request is
 * dropped (counted gather_limit).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <reqrouter/rr_function.h>

#define FANOUT_PORT 9014

struct fanout_state {
	int group;
	enum rr_reduce reduce;
	uint32_t k, need;
	uint32_t ntargets;
	bool split;
};

/* split = yes: each target's item of the request, for one call. */
static __thread struct rr_gather_payload items[RR_SG_MAX_TARGETS];

static const char *const reduce_names[RR_REDUCE_MAX_OP] = {
	[RR_REDUCE_CONCAT] = "concat", [RR_REDUCE_SUM] = "sum",
	[RR_REDUCE_MIN] = "min",       [RR_REDUCE_MAX] = "max",
	[RR_REDUCE_COUNT] = "count",   [RR_REDUCE_OR] = "or",
	[RR_REDUCE_TOPK] = "topk",
};

/* A number setting into a uint32_t field. */
static int number(const struct rr_fn_config *cfg, const struct rr_fn_setting *s,
		  uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int ret;

	ret = rr_fn_setting_uint(cfg, s, min, max, &v);
	if (!ret)
		*out = (uint32_t)v;
	return ret;
}

static int fanout_init(const struct rr_fn_config *cfg, void **state)
{
	struct fanout_state *f;
	const struct rr_fn_setting *s, *group = NULL;
	uint32_t ntargets = 0, i, r;
	int ret = 0;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->reduce = RR_REDUCE_SUM;
	f->k = 1;
	for (i = 0; i < cfg->nsettings && !ret; i++) {
		s = &cfg->settings[i];
		if (!strcmp(s->key, "group")) {
			group = s;
		} else if (!strcmp(s->key, "reduce")) {
			for (r = 0; r < RR_REDUCE_MAX_OP; r++)
				if (!strcmp(s->value, reduce_names[r]))
					break;
			if (r == RR_REDUCE_MAX_OP)
				ret = rr_fn_error(
					cfg, s,
					"reduce: want concat, sum, min, max, count, or or topk");
			f->reduce = (enum rr_reduce)r;
		} else if (!strcmp(s->key, "k")) {
			ret = number(cfg, s, 1, 16, &f->k);
		} else if (!strcmp(s->key, "need")) {
			ret = number(cfg, s, 0, RR_SG_MAX_TARGETS, &f->need);
		} else if (!strcmp(s->key, "split")) {
			ret = rr_fn_setting_bool(cfg, s, &f->split);
		} else {
			ret = rr_fn_error(
				cfg, s,
				"unknown key '%s' (fanout takes group, reduce, k, need and split)",
				s->key);
		}
	}
	if (!ret && !group)
		ret = rr_fn_error(cfg, NULL,
				  "no group: fanout needs one (group = NAME)");
	if (!ret) {
		f->group = rr_fn_group(cfg, group->value, &ntargets);
		ret = f->group < 0 ? f->group : 0;
	}
	f->ntargets = ntargets;
	if (!ret && f->need > ntargets)
		ret = rr_fn_error(cfg, NULL,
				  "need = %u: group %s has only %u target%s",
				  f->need, group->value, ntargets,
				  ntargets == 1 ? "" : "s");
	if (ret) {
		free(f);
		return ret;
	}
	*state = f;
	return 0;
}

static void fanout_fini(void *state)
{
	free(state);
}

/* The request's comma-separated items, one per target of @n: those past
 * the list's end get none. */
static const struct rr_gather_payload *split(const uint8_t *buf, size_t len,
					     uint32_t n)
{
	size_t at = 0, e;
	uint32_t i;

	for (i = 0; i < n; i++) {
		for (e = at; e < len && buf[e] != ','; e++)
			;
		items[i].data = at < len ? buf + at : NULL;
		items[i].len = at < len ? e - at : 0;
		at = e + 1;
	}
	return items;
}

static int fanout_handler(const struct rr_request *req, uint8_t *buf,
			  size_t len, size_t room)
{
	const struct fanout_state *f = req->state;
	struct rr_gather_spec g = { 0 };

	(void)room;
	if (!f || !len)
		return RR_NO_REPLY;
	g.group = f->group;
	g.payload = buf;
	g.len = len;
	g.need = f->need;
	g.reduce = f->reduce;
	g.k = f->k;
	if (f->split)
		g.payloads = split(buf, len, f->ntargets);
	return rr_gather_start(req, &g);
}

RR_FUNCTION_DEF(
	fanout, FANOUT_PORT,
	"ask every target of a group, answer with their replies reduced",
	.handler = fanout_handler, .init = fanout_init, .fini = fanout_fini,
	.flags = RR_FN_OPT_IN | RR_FN_GATHER);
