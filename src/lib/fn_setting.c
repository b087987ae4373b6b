// SPDX-License-Identifier: GPL-2.0
/*
 * The function API's readers of a function's own settings
 * (rr_fn_setting_*() in include/reqrouter/rr_function.h), for init():
 * one way to read a number and one to read yes or no, each with one kind
 * of error line, for every function, built in or a module (reqrouter
 * exports them, -rdynamic). Built on parse.c's parsers, which read
 * reqrouter's own settings the same way; errors go out through rr_fn_error()
 * (function.c), so they name the file, the line and the function.
 */
#include <errno.h>

#include "parse.h"
#include <reqrouter/rr_function.h>

int rr_fn_setting_uint(const struct rr_fn_config *cfg,
		       const struct rr_fn_setting *s, uint64_t min,
		       uint64_t max, uint64_t *out)
{
	unsigned long long v;

	if (rr_parse_ull(s->value, 10, min, max, &v))
		return rr_fn_error(
			cfg, s,
			"%s must be a number from %llu to %llu, not '%s'",
			s->key, (unsigned long long)min,
			(unsigned long long)max, s->value ? s->value : "");
	*out = v;
	return 0;
}

int rr_fn_setting_bool(const struct rr_fn_config *cfg,
		       const struct rr_fn_setting *s, bool *out)
{
	char err[256];

	if (rr_parse_bool(s->value ? s->value : "", out, s->key, err,
			  sizeof(err)))
		return rr_fn_error(cfg, s, "%s", err);
	return 0;
}
