// SPDX-License-Identifier: GPL-2.0
/*
 * What the parts of the dns function's tests share (dns_test.h): the
 * function, its instance loaded from a zone, its counters, set-up and
 * tear-down.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "function.h"
#include "packet.h"
#include "registry.h"
#include "dns_test.h"
#include "testutil.h"
#include "util.h"

const struct rr_function *fn;
struct rr_fn_instance *inst;
struct rr_fn_counters ctrs;
uint64_t counters[RR_FN_MAX_COUNTERS];
char err[512];

/* ---- set-up ---- */

int load(const char *const *kv, size_t n)
{
	struct rr_fn_setting s[8];
	size_t i;

	rr_fn_instance_free(inst);
	inst = NULL;
	for (i = 0; i < n; i++) {
		s[i].key = kv[2 * i];
		s[i].value = kv[2 * i + 1];
		s[i].file = "test.conf";
		s[i].line = (unsigned int)(10 + i);
	}
	memset(&ctrs, 0, sizeof(ctrs));
	memset(counters, 0, sizeof(counters));
	err[0] = '\0';
	return rr_fn_instance_new(fn, 53, s, n, 1, &ctrs, &inst, err,
				  sizeof(err));
}

void load_example(void)
{
	const char *kv[] = { "zone", ZONE };

	if (load(kv, 1))
		fail_msg("example zone refused: %s", err);
}

uint64_t counter(const char *name)
{
	uint32_t i;

	for (i = 0; i < ctrs.n; i++)
		if (!strcmp(ctrs.name[i], name))
			return counters[i];
	fail_msg("no counter %s", name);
	return 0;
}

int setup(void **state)
{
	(void)state;
	fn = rr_registry_find("dns");
	assert_non_null(fn);
	assert_true(fn->flags & RR_FN_OPT_IN);
	assert_int_equal(fn->port, 53);
	load_example();
	return 0;
}

int teardown(void **state)
{
	(void)state;
	rr_fn_instance_free(inst);
	inst = NULL;
	return 0;
}
