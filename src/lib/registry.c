// SPDX-License-Identifier: GPL-2.0
/*
 * The registry walks the "rr_functions" section that RR_FUNCTION() fills.
 * The bounds are weak so a build with no function at all still links and
 * simply has an empty registry.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "registry.h"
#include "version.h"

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
	/* A module replaced the function: the built-in XDP program would
	 * answer for code that is no longer there. */
	if (rr_registry_module_of(rr_registry_find(name)))
		return NULL;
	for (p = __start_rr_xdp_impls; p < __stop_rr_xdp_impls; p++)
		if (!strcmp((*p)->name, name))
			return *p;
	return NULL;
}

/*
 * The functions served: the compiled-in ones (the "rr_functions" section),
 * where a module's function of the same name replaces its entry, then the
 * modules' new ones. Main thread only.
 */
static struct {
	const struct rr_function *fn;
	struct rr_module *mod; /* NULL: compiled in */
} view[RR_MAX_FUNCTIONS];
static size_t nview;
static bool built;
static struct rr_module modules[RR_MAX_MODULES];

static void build(void)
{
	const struct rr_function *const *p;

	if (built)
		return;
	built = true;
	if (!__start_rr_functions || !__stop_rr_functions)
		return;
	for (p = __start_rr_functions;
	     p < __stop_rr_functions && nview < RR_MAX_FUNCTIONS; p++)
		view[nview++].fn = *p;
}

size_t rr_registry_count(void)
{
	build();
	return nview;
}

const struct rr_function *rr_registry_at(size_t i)
{
	return i < rr_registry_count() ? view[i].fn : NULL;
}

const struct rr_function *rr_registry_find(const char *name)
{
	size_t i, n = rr_registry_count();

	for (i = 0; name && i < n; i++)
		if (!strcmp(view[i].fn->name, name))
			return view[i].fn;
	return NULL;
}

const struct rr_function *rr_registry_by_port(uint16_t port)
{
	size_t i, n = rr_registry_count();

	for (i = 0; port && i < n; i++)
		if (view[i].fn->port == port)
			return view[i].fn;
	return NULL;
}

struct rr_module *rr_registry_module_of(const struct rr_function *fn)
{
	size_t i, n = rr_registry_count();

	for (i = 0; i < n; i++)
		if (view[i].fn == fn)
			return view[i].mod;
	for (i = 0; i < RR_MAX_MODULES; i++) {
		size_t j;

		for (j = 0; modules[i].handle && j < modules[i].nfns; j++)
			if (modules[i].fns[j] == fn)
				return &modules[i];
	}
	return NULL;
}

const char *rr_registry_version(const struct rr_function *fn)
{
	const struct rr_module *m = rr_registry_module_of(fn);

	return m ? m->version : RR_VERSION;
}

int rr_registry_open_module(const char *path, struct rr_module **out, char *err,
			    size_t errlen)
{
	struct rr_module *m = NULL;
	size_t i, j, k, n;
	int ret;

	build();
	for (i = 0; i < RR_MAX_MODULES && !m; i++)
		if (!modules[i].handle)
			m = &modules[i];
	if (!m) {
		snprintf(err, errlen, "more than %d modules loaded",
			 RR_MAX_MODULES);
		return -E2BIG;
	}
	ret = rr_module_open(m, path, err, errlen);
	if (ret)
		return ret;
	/* Each function as a compiled-in one is checked, then against what
	 * the registry has. */
	for (j = 0; j < m->nfns; j++)
		if (rr_registry_check_one(m->fns[j], err, errlen))
			goto fail;
	n = nview;
	for (j = 0; j < m->nfns; j++) {
		const struct rr_function *f = m->fns[j];

		for (k = 0; k < j; k++)
			if (!strcmp(m->fns[k]->name, f->name))
				goto dup;
		for (i = 0; i < nview; i++)
			if (strcmp(view[i].fn->name, f->name) &&
			    view[i].fn->port == f->port) {
				snprintf(
					err, errlen,
					"module %s: function '%s' wants port %u, which '%s' has",
					path, f->name, f->port,
					view[i].fn->name);
				goto fail;
			}
		if (!rr_registry_find(f->name) && ++n > RR_MAX_FUNCTIONS) {
			snprintf(err, errlen, "more than %d functions",
				 RR_MAX_FUNCTIONS);
			goto fail;
		}
	}
	*out = m;
	return 0;
dup:
	snprintf(err, errlen, "module %s registers '%s' twice", path,
		 m->fns[j]->name);
fail:
	rr_module_close(m);
	return -EINVAL;
}

void rr_registry_adopt(struct rr_module *m)
{
	size_t i, j;

	for (j = 0; j < m->nfns; j++) {
		for (i = 0; i < nview; i++)
			if (!strcmp(view[i].fn->name, m->fns[j]->name))
				break;
		if (i == nview)
			nview++;
		view[i].fn = m->fns[j];
		view[i].mod = m;
	}
}

int rr_registry_load_module(const char *path, struct rr_module **out, char *err,
			    size_t errlen)
{
	struct rr_module *m;
	int ret;

	ret = rr_registry_open_module(path, &m, err, errlen);
	if (ret)
		return ret;
	rr_registry_adopt(m);
	if (out)
		*out = m;
	return 0;
}

static int load_path(const char *path, void *arg, char *err, size_t errlen)
{
	(void)arg;
	return rr_registry_load_module(path, NULL, err, errlen);
}

int rr_modules_load_dir(const char *dir, char *err, size_t errlen)
{
	return rr_module_dir_each(dir, load_path, NULL, err, errlen);
}

struct rr_registry_snapshot {
	size_t n;
	__typeof__(view) view;
};

struct rr_registry_snapshot *rr_registry_save(void)
{
	struct rr_registry_snapshot *s = malloc(sizeof(*s));

	build();
	if (s) {
		s->n = nview;
		memcpy(s->view, view, sizeof(view));
	}
	return s;
}

void rr_registry_restore(struct rr_registry_snapshot *s)
{
	nview = s->n;
	memcpy(view, s->view, sizeof(view));
	free(s);
}

void rr_registry_release(struct rr_module *m)
{
	size_t i;

	if (!m || m->users)
		return;
	for (i = 0; i < nview; i++)
		if (view[i].mod == m)
			return; /* still what the registry serves */
	rr_module_close(m);
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

int rr_registry_check_one(const struct rr_function *f, char *err, size_t errlen)
{
	if (!name_ok(f->name)) {
		snprintf(err, errlen, "a function has a bad name");
		return -EINVAL;
	}
	if (f->api < 1 || f->api > RR_FUNCTION_API) {
		snprintf(
			err, errlen,
			"function '%s' was built against function API %u; this reqrouter has API %d",
			f->name, f->api, RR_FUNCTION_API);
		return -EINVAL;
	}
	if (f->id_bytes > 8 || (f->id_bytes && !(f->flags & RR_FN_PURE))) {
		snprintf(
			err, errlen,
			"function '%s': id_bytes is for pure functions, at most 8",
			f->name);
		return -EINVAL;
	}
	if (!f->handler || !f->port) {
		snprintf(err, errlen,
			 "function '%s' needs a handler and a port 1-65535",
			 f->name);
		return -EINVAL;
	}
	return 0;
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
		f = view[i].fn;
		if (rr_registry_check_one(f, err, errlen))
			return -EINVAL;
		for (j = 0; j < i; j++) {
			g = view[j].fn;
			if (!strcmp(f->name, g->name)) {
				snprintf(
					err, errlen,
					"function name '%s' is registered twice",
					f->name);
				return -EINVAL;
			}
		}
	}
	return 0;
}
