// SPDX-License-Identifier: GPL-2.0
/*
 * Linked into every function module (build/functions/NAME.so): the one
 * symbol reqrouter looks up after dlopen(). The section bounds are hidden,
 * so they are the module's own, not the ones of the program loading it.
 */
#include <stddef.h>

#include "module.h"

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
