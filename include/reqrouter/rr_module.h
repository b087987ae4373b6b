/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A function module: functions built as a shared object that reqrouter
 * loads at start (--functions-dir) or while serving (reqrouterctl
 * deploy). A module carries its functions (RR_FUNCTION in its .c files)
 * and one entry point, the only symbol reqrouter looks up after dlopen().
 * Exactly one .c file of a module defines the entry point:
 *
 *	#define RR_MODULE_ENTRY
 *	#include <reqrouter/rr_module.h>
 *
 * and the module is linked with -fPIC -shared -fvisibility=hidden
 * -Wl,-Bsymbolic, so that it exports the entry point alone and its own
 * symbols bind to its own definitions, not to same-named ones in
 * reqrouter (a newer dns.so must use its own tables).
 */
#ifndef RR_MODULE_H_PUBLIC
#define RR_MODULE_H_PUBLIC

#include <stddef.h>
#include <stdint.h>

#include "rr_function.h"

#define RR_MODULE_SYMBOL "rr_module_functions"
/* The version a module may declare, for the `version` label of its
 * functions' metrics (docs/OPERATIONS.md, "Metrics"): up to 40 of
 * A-Z a-z 0-9 . _ + - ~, e.g. RR_MODULE_VERSION("1.4.2"); in one .c file
 * of the module. Without it, reqrouter names the module by a hash of
 * its file ("so-" and 12 hex digits). */
#define RR_MODULE_VERSION_SYMBOL "rr_module_version"
#define RR_MODULE_VERSION(v)                   \
	__attribute__((visibility("default"))) \
	const char rr_module_version[] = v

/* What the entry point returns: the module's functions, their number in
 * *n, and in *api the RR_FUNCTION_API it was built against, which
 * reqrouter checks before it looks at anything else. */
typedef const struct rr_function *const *(*rr_module_list_t)(size_t *n,
							     uint32_t *api);
const struct rr_function *const *rr_module_functions(size_t *n, uint32_t *api);

#endif /* RR_MODULE_H_PUBLIC */

/* The entry point, outside the include guard: a file may have included
 * this header before it asked for the definition. The section bounds are
 * hidden, so they are the module's own, not the ones of the program
 * loading it. */
#if defined(RR_MODULE_ENTRY) && !defined(RR_MODULE_ENTRY_DEFINED)
#define RR_MODULE_ENTRY_DEFINED

extern const struct rr_function *const __start_rr_functions[]
	__attribute__((weak, visibility("hidden")));
extern const struct rr_function *const __stop_rr_functions[]
	__attribute__((weak, visibility("hidden")));

__attribute__((visibility("default"))) const struct rr_function *const *
rr_module_functions(size_t *n, uint32_t *api)
{
	*api = RR_FUNCTION_API;
	if (!__start_rr_functions || !__stop_rr_functions) {
		*n = 0;
		return NULL;
	}
	*n = (size_t)(__stop_rr_functions - __start_rr_functions);
	return __start_rr_functions;
}
#endif /* RR_MODULE_ENTRY */
