// SPDX-License-Identifier: GPL-2.0
/*
 * Function modules (see module.h): dlopen(), the API check, and the
 * directory loaded at start.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "registry.h"

int rr_module_open(struct rr_module *m, const char *path, char *err,
		   size_t errlen)
{
	rr_module_list_t list;
	uint32_t api = 0;
	size_t i;

	memset(m, 0, sizeof(*m));
	if (strlen(path) >= sizeof(m->path)) {
		snprintf(err, errlen, "module path too long: %s", path);
		return -ENAMETOOLONG;
	}
	/* RTLD_LOCAL: two versions of one module must not see each other's
	 * symbols; RTLD_NOW: a missing symbol is an error now, not a crash
	 * on the first request. */
	m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!m->handle) {
		snprintf(err, errlen, "cannot load module %s: %s", path,
			 dlerror());
		return -ENOEXEC;
	}
	list = (rr_module_list_t)dlsym(m->handle, RR_MODULE_SYMBOL);
	if (!list) {
		snprintf(err, errlen,
			 "%s is not a reqrouter function module (no %s)", path,
			 RR_MODULE_SYMBOL);
		goto fail;
	}
	m->fns = list(&m->nfns, &api);
	if (api != RR_FUNCTION_API) {
		snprintf(
			err, errlen,
			"module %s was built against function API %u; this reqrouter has API %d: rebuild it",
			path, api, RR_FUNCTION_API);
		goto fail;
	}
	if (!m->nfns) {
		snprintf(err, errlen, "module %s registers no function", path);
		goto fail;
	}
	for (i = 0; i < m->nfns; i++)
		if (rr_registry_check_one(m->fns[i], err, errlen))
			goto fail;
	strcpy(m->path, path);
	return 0;
fail:
	dlclose(m->handle);
	m->handle = NULL;
	return -EINVAL;
}

void rr_module_close(struct rr_module *m)
{
	if (m->handle)
		dlclose(m->handle);
	m->handle = NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rr_modules_load_dir(const char *dir, char *err, size_t errlen)
{
	char *names[RR_MAX_MODULES], path[PATH_MAX];
	size_t n = 0, i, len;
	struct dirent *e;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot read functions directory %s: %s",
			 dir, strerror(errno));
		return -errno;
	}
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".so"))
			continue;
		if (n == RR_MAX_MODULES) {
			snprintf(err, errlen, "more than %d modules in %s",
				 RR_MAX_MODULES, dir);
			ret = -E2BIG;
			break;
		}
		names[n] = strdup(e->d_name);
		if (!names[n]) {
			ret = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	/* In name order, so what replaces what does not depend on readdir. */
	qsort(names, n, sizeof(names[0]), by_name);
	for (i = 0; !ret && i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ret = rr_registry_load_module(path, NULL, err, errlen);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	return ret;
}
