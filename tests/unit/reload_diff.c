// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of what a reload compares (rr_config_diff() and
 * rr_service_diff(), src/lib/config.c): the keys whose values differ
 * between the config that runs and the one a restart would run, each
 * once, by its row of the settings tables. Equal values are no change,
 * whatever the bytes a struct's padding holds; lists differ by their
 * contents, not their room; flags alone (--tier, --no-cache, -p) are the
 * command line's, which a reload keeps, so they are never a change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "settings.h"

#define MAX_ROWS 64

struct pair {
	struct rr_config *a, *b;
};

static int setup(void **state)
{
	static struct pair p;
	char err[RR_ERRLEN];

	p.a = rr_config_read(NULL, err, sizeof(err));
	p.b = rr_config_read(NULL, err, sizeof(err));
	*state = &p;
	return p.a && p.b ? 0 : -1;
}

static int teardown(void **state)
{
	struct pair *p = *state;

	rr_config_destroy(p->a);
	rr_config_destroy(p->b);
	return 0;
}

/* The keys rr_config_diff() names, space-separated. */
static const char *main_diff(const struct pair *p)
{
	static char keys[512];
	const struct rr_setting *rows[MAX_ROWS];
	size_t i, n, at = 0;

	assert_true(rr_nsettings <= MAX_ROWS);
	n = rr_config_diff(p->a, p->b, rows);
	keys[0] = '\0';
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(keys + at, sizeof(keys) - at, "%s%s",
				       i ? " " : "", rows[i]->key);
	return keys;
}

/* The keys rr_service_diff() names for function @name. */
static const char *fn_diff(const struct pair *p, const char *name)
{
	static char keys[512];
	const struct rr_setting *rows[MAX_ROWS];
	size_t i, n, at = 0;

	assert_true(rr_fn_nsettings <= MAX_ROWS);
	n = rr_service_diff(rr_config_service_named(p->a, name),
			    rr_config_service_named(p->b, name), rows);
	keys[0] = '\0';
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(keys + at, sizeof(keys) - at, "%s%s",
				       i ? " " : "", rows[i]->key);
	return keys;
}

static void test_same(void **state)
{
	struct pair *p = *state;

	assert_string_equal(main_diff(p), "");
	assert_string_equal(fn_diff(p, "echo"), "");
	assert_string_equal(fn_diff(p, "kv"), "");
}

/* Each kind of [reqrouter] value: a number, a string, a list. */
static void test_main_keys(void **state)
{
	struct pair *p = *state;

	p->b->batch = 32;
	strcpy(p->b->metrics_file, "/run/m.prom");
	p->b->cpus[0] = 3;
	p->b->ncpus = 1;
	assert_string_equal(main_diff(p), "batch cpus metrics_file");
	/* A list's room past its count is no value. */
	p->b->batch = p->a->batch;
	strcpy(p->a->metrics_file, "/run/m.prom");
	p->a->cpus[1] = 7;
	p->a->cpus[0] = 3;
	p->a->ncpus = 1;
	assert_string_equal(main_diff(p), "");
}

/* --tier, --no-cache and -p have no key: never a change. */
static void test_flags_alone(void **state)
{
	struct pair *p = *state;

	p->b->tier_set = true;
	p->b->tier = RR_TIER_USER;
	p->b->no_cache = true;
	p->b->only_ports[0] = 7;
	p->b->n_only_ports = 1;
	p->b->verbose = 2;
	assert_string_equal(main_diff(p), "");
}

static void test_function_keys(void **state)
{
	struct pair *p = *state;
	struct rr_service *b = rr_config_service_named(p->b, "echo");

	b->enabled = false;
	b->port = 8;
	b->max_amplification = 1;
	strcpy(b->syscalls, "openat");
	assert_string_equal(fn_diff(p, "echo"),
			    "port enabled max_amplification syscalls");
	assert_string_equal(fn_diff(p, "reverse"), "");
}

/* Allow-lists: by their prefixes, in order; padding is no value. */
static void test_allow(void **state)
{
	struct pair *p = *state;
	struct rr_service *a = rr_config_service_named(p->a, "echo");
	struct rr_service *b = rr_config_service_named(p->b, "echo");
	char err[RR_ERRLEN];

	memset(a->allow, 0xa5, sizeof(a->allow));
	assert_int_equal(rr_parse_cidrs("198.51.100.0/24, 2001:db8::/32",
					a->allow, RR_MAX_ALLOW_PER_FN,
					&a->nallow, err, sizeof(err)),
			 0);
	assert_string_equal(fn_diff(p, "echo"), "allow");
	assert_int_equal(rr_parse_cidrs("198.51.100.0/24, 2001:db8::/32",
					b->allow, RR_MAX_ALLOW_PER_FN,
					&b->nallow, err, sizeof(err)),
			 0);
	assert_string_equal(fn_diff(p, "echo"), "");
	b->nallow = 0;
	assert_int_equal(rr_parse_cidrs("198.51.100.0/25, 2001:db8::/32",
					b->allow, RR_MAX_ALLOW_PER_FN,
					&b->nallow, err, sizeof(err)),
			 0);
	assert_string_equal(fn_diff(p, "echo"), "allow");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same, setup, teardown),
		cmocka_unit_test_setup_teardown(test_main_keys, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_flags_alone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_function_keys, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_allow, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
