/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function modules: functions built as shared objects
 * (build/functions/NAME.so, from the same functions/NAME.c) and loaded at
 * start (--functions-dir) or while serving (reqrouterctl deploy). A module
 * of a function reqrouter already has replaces it.
 */
#ifndef RR_MODULE_H
#define RR_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include <reqrouter/rr_function.h>
/* What a module exports: RR_MODULE_SYMBOL, rr_module_list_t. */
#include <reqrouter/rr_module.h>

#define RR_MAX_MODULES 64

struct rr_module {
	void *handle; /* dlopen()'s */
	/* The private copy dlopen() mapped, loaded by its name
	 * /proc/self/fd/N: open while loaded, so that no two loaded copies
	 * share a name, which dlopen() would take for the same object.
	 * 0: none (the registry's table of modules starts zeroed). */
	int copy_fd;
	char path[256];
	const struct rr_function *const *fns;
	size_t nfns;
	unsigned int users; /* instances of its functions alive */
	/* What its functions' metrics say it is: its RR_MODULE_VERSION,
	 * or "so-" and a hash of its file. */
	char version[48];
};

/*
 * dlopen()s @path and checks it: its API and at least one function (the
 * registry then checks each as it checks compiled-in ones:
 * rr_registry_open_module()). Returns 0, or -errno with one line in @err;
 * nothing stays loaded on failure.
 */
int rr_module_open(struct rr_module *m, const char *path, char *err,
		   size_t errlen);
/* dlclose(); the caller makes sure no function of it can run. */
void rr_module_close(struct rr_module *m);

/* What rr_module_dir_each() calls with each module's path: 0, or -errno
 * with one line in @err, which ends the walk. */
typedef int (*rr_module_path_fn)(const char *path, void *arg, char *err,
				 size_t errlen);

/* Calls @fn with every DIR/ *.so, in name order; stops at the first
 * failure (-errno, one line in @err). */
int rr_module_dir_each(const char *dir, rr_module_path_fn fn, void *arg,
		       char *err, size_t errlen);

/* Loads every DIR/ *.so into the registry, in name order; stops at the
 * first failure (-errno, one line in @err). The registry's (registry.c),
 * declared here for its callers. */
int rr_modules_load_dir(const char *dir, char *err, size_t errlen);

#endif /* RR_MODULE_H */
