// SPDX-License-Identifier: GPL-2.0
/*
 * The registry walks the "rr_functions" section that RR_FUNCTION() fills.
 * The bounds are weak so a build with no function at all still links and
 * simply has an empty registry.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"

extern const struct rr_function *const __start_rr_functions[]
	__attribute__((weak));
extern const struct rr_function *const __stop_rr_functions[]
	__attribute__((weak));

extern const struct rr_xdp_impl *const __start_rr_xdp_impls[]
	__attribute__((weak));
extern const struct rr_xdp_impl *const __stop_rr_xdp_impls[]
	__attribute__((weak));

const struct rr_xdp_impl *rr_registry_xdp(const char *name)
{
	const struct rr_xdp_impl *const *p;

	if (!__start_rr_xdp_impls || !__stop_rr_xdp_impls || !name)
		return NULL;
	for (p = __start_rr_xdp_impls; p < __stop_rr_xdp_impls; p++)
		if (!strcmp((*p)->name, name))
			return *p;
	return NULL;
}

size_t rr_registry_count(void)
{
	if (!__start_rr_functions || !__stop_rr_functions)
		return 0;
	return (size_t)(__stop_rr_functions - __start_rr_functions);
}

const struct rr_function *rr_registry_at(size_t i)
{
	return i < rr_registry_count() ? __start_rr_functions[i] : NULL;
}

const struct rr_function *rr_registry_find(const char *name)
{
	size_t i, n = rr_registry_count();

	for (i = 0; name && i < n; i++)
		if (!strcmp(__start_rr_functions[i]->name, name))
			return __start_rr_functions[i];
	return NULL;
}

const struct rr_function *rr_registry_by_port(uint16_t port)
{
	size_t i, n = rr_registry_count();

	for (i = 0; port && i < n; i++)
		if (__start_rr_functions[i]->port == port)
			return __start_rr_functions[i];
	return NULL;
}

static int name_ok(const char *name)
{
	if (!name || !*name)
		return 0;
	for (; *name; name++)
		if (!isalnum((unsigned char)*name) && *name != '_' &&
		    *name != '-')
			return 0;
	return 1;
}

int rr_registry_check(char *err, size_t errlen)
{
	size_t i, j, n = rr_registry_count();
	const struct rr_function *f, *g;

	if (__start_rr_xdp_impls && __stop_rr_xdp_impls) {
		const struct rr_xdp_impl *const *p;

		for (p = __start_rr_xdp_impls; p < __stop_rr_xdp_impls; p++)
			if (!rr_registry_find((*p)->name)) {
				snprintf(
					err, errlen,
					"functions/%s.bpf.c implements no registered function (RR_FUNCTION(%s, ...) is missing)",
					(*p)->name, (*p)->name);
				return -EINVAL;
			}
	}
	for (i = 0; i < n; i++) {
		f = __start_rr_functions[i];
		if (!name_ok(f->name)) {
			snprintf(err, errlen, "function #%zu has a bad name",
				 i);
			return -EINVAL;
		}
		if (f->api < 1 || f->api > RR_FUNCTION_API) {
			snprintf(
				err, errlen,
				"function '%s' was built against function API %u; this reqrouter has API %d",
				f->name, f->api, RR_FUNCTION_API);
			return -EINVAL;
		}
		if (f->id_bytes > 8 ||
		    (f->id_bytes && !(f->flags & RR_FN_PURE))) {
			snprintf(
				err, errlen,
				"function '%s': id_bytes is for pure functions, at most 8",
				f->name);
			return -EINVAL;
		}
		if (!f->handler || !f->port) {
			snprintf(
				err, errlen,
				"function '%s' needs a handler and a port 1-65535",
				f->name);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			g = __start_rr_functions[j];
			if (!strcmp(f->name, g->name)) {
				snprintf(
					err, errlen,
					"function name '%s' is registered twice",
					f->name);
				return -EINVAL;
			}
			if (f->port == g->port) {
				snprintf(
					err, errlen,
					"functions '%s' and '%s' both register port %u",
					g->name, f->name, f->port);
				return -EINVAL;
			}
		}
	}
	return 0;
}
