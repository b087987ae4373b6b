// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the function API's setting readers, what a function's
 * init() gets from its section. rr_fn_setting_uint(): decimal digits
 * alone are read, from min to max inclusive, up to the whole of
 * uint64_t; anything else (empty, a sign, a blank, a unit, hex, an
 * exponent, too large for 64 bits, outside the range) is refused with
 * -EINVAL, the output left as it was, and one line that names the file,
 * the line, the function, the key, the range and the value. A second bad
 * setting does not replace the first one's line. rr_fn_setting_bool():
 * the words reqrouter takes for its own yes/no keys, in any case; any
 * other refused in one line the same way.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "function.h"
#include "function_test.h"
#include "util.h"

#define UNTOUCHED 0x5eed

/* What the test function's init() reads each of its settings with. */
static uint64_t lo, hi;
/* What it read: one value per setting. */
static uint64_t got[4];
static int rets[4];

static int reader_init(const struct rr_fn_config *cfg, void **state)
{
	size_t i;
	int ret = 0;

	(void)state;
	for (i = 0; i < cfg->nsettings && i < ARRAY_SIZE(got); i++) {
		got[i] = UNTOUCHED;
		rets[i] = rr_fn_setting_uint(cfg, &cfg->settings[i], lo, hi,
					     &got[i]);
		if (rets[i] && !ret)
			ret = rets[i];
	}
	return ret;
}

static int reader_handler(const struct rr_request *req, uint8_t *buf,
			  size_t len, size_t room)
{
	(void)req;
	(void)buf;
	(void)room;
	return (int)len;
}

/* Not registered: the instance is made from the struct itself. */
static const struct rr_function reader = {
	.name = "rrtest_reader",
	.description = "test: reads numbers",
	.handler = reader_handler,
	.port = 40010,
	.api = RR_FUNCTION_API,
	.init = reader_init,
};

static char err[RR_ERRLEN];

/* The yes/no reader's test function: every setting is a bool. */
static bool flags[4];

static int yesno_init(const struct rr_fn_config *cfg, void **state)
{
	size_t i;
	int ret = 0;

	(void)state;
	for (i = 0; i < cfg->nsettings && i < ARRAY_SIZE(flags) && !ret; i++)
		ret = rr_fn_setting_bool(cfg, &cfg->settings[i], &flags[i]);
	return ret;
}

static const struct rr_function yesno = {
	.name = "rrtest_yesno",
	.description = "test: reads yes and no",
	.handler = reader_handler,
	.port = 40011,
	.api = RR_FUNCTION_API,
	.init = yesno_init,
};

/* init() of yesno with "on = VALUE" at test.conf:3, flags[0] at @was
 * before; returns what the instance made of it. */
static int read_bool(const char *value, bool was)
{
	struct rr_fn_setting s = { "on", value, "test.conf", 3 };
	struct rr_fn_instance *inst = NULL;
	int ret;

	flags[0] = was;
	err[0] = '\0';
	ret = rr_fn_instance_new(&yesno, yesno.port, &s, 1, 1, NULL, &inst, err,
				 sizeof(err));
	rr_fn_instance_free(inst);
	return ret;
}

/* Runs init() with @n settings "n = VALUE" at lines 7, 8, ... of
 * test.conf, reading each in @min..@max; returns what the instance
 * made of it. */
static int read_values(const char *const *values, size_t n, uint64_t min,
		       uint64_t max)
{
	struct rr_fn_setting s[ARRAY_SIZE(got)];
	struct rr_fn_instance *inst = NULL;
	size_t i;
	int ret;

	assert_true(n <= ARRAY_SIZE(s));
	for (i = 0; i < n; i++)
		s[i] = (struct rr_fn_setting){ "n", values[i], "test.conf",
					       (unsigned int)(7 + i) };
	lo = min;
	hi = max;
	err[0] = '\0';
	ret = rr_fn_instance_new(&reader, reader.port, s, n, 1, NULL, &inst,
				 err, sizeof(err));
	rr_fn_instance_free(inst);
	return ret;
}

static uint64_t read_one(const char *value, uint64_t min, uint64_t max)
{
	const char *v[] = { value };

	if (read_values(v, 1, min, max))
		fail_msg("n = '%s' in %llu..%llu refused: %s", value,
			 (unsigned long long)min, (unsigned long long)max, err);
	assert_int_equal(rets[0], 0);
	return got[0];
}

static void test_valid(void **state)
{
	(void)state;
	assert_int_equal(read_one("0", 0, 10), 0);
	assert_int_equal(read_one("7", 0, 10), 7);
	assert_int_equal(read_one("007", 0, 10), 7); /* leading zeros */
	assert_int_equal(read_one("1", 1, 16), 1);   /* the bounds count */
	assert_int_equal(read_one("16", 1, 16), 16);
	assert_int_equal(read_one("100000", 0, 100000), 100000);
	assert_int_equal(read_one("4294967296", 0, UINT64_MAX), 4294967296ULL);
	assert_true(read_one("18446744073709551615", 0, UINT64_MAX) ==
		    UINT64_MAX);
	assert_int_equal(read_one("5", 5, 5), 5);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"-1",
		"+1",
		"-0",
		" 1",
		"1 ",
		"abc",
		"1e3",
		"10us",
		"4k",
		"0x10",
		"1.5",
		"11",
		"0",
		"99999999999999999999",
		"18446744073709551616",
	};
	char want[160];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *v[] = { bad[i] };

		if (read_values(v, 1, 1, 10) != -EINVAL)
			fail_msg("n = '%s' taken in 1..10", bad[i]);
		assert_int_equal(rets[0], -EINVAL);
		/* The default stays where the function keeps it. */
		assert_int_equal(got[0], UNTOUCHED);
		snprintf(
			want, sizeof(want),
			"test.conf:7: function rrtest_reader: n must be a number from 1 to 10, not '%s'",
			bad[i]);
		if (strcmp(err, want))
			fail_msg("n = '%s': error \"%s\", not \"%s\"", bad[i],
				 err, want);
	}
}

/* Every setting is read; the first refusal is the one said. */
static void test_first_error(void **state)
{
	const char *v[] = { "3", "x", "12", "4" };

	(void)state;
	assert_int_equal(read_values(v, 4, 0, 10), -EINVAL);
	assert_int_equal(got[0], 3);
	assert_int_equal(rets[1], -EINVAL);
	assert_int_equal(rets[2], -EINVAL);
	assert_int_equal(got[3], 4);
	assert_string_equal(
		err,
		"test.conf:8: function rrtest_reader: n must be a number from 0 to 10, not 'x'");
	assert_null(strchr(err, '\n'));
}

/* The whole of uint64_t is a range like any other. */
static void test_full_range(void **state)
{
	const char *v[] = { "18446744073709551616" };

	(void)state;
	assert_int_equal(read_values(v, 1, 0, UINT64_MAX), -EINVAL);
	assert_string_equal(
		err,
		"test.conf:7: function rrtest_reader: n must be a number from 0 to 18446744073709551615, not '18446744073709551616'");
}

static void test_bool(void **state)
{
	static const char *const yes[] = { "yes", "YES", "true", "On", "1" };
	static const char *const no[] = { "no", "No", "false", "OFF", "0" };
	static const char *const bad[] = {
		"", "y", "n", "2", "yes ", "enabled"
	};
	char want[128];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		assert_int_equal(read_bool(yes[i], false), 0);
		if (!flags[0])
			fail_msg("on = '%s' read as no", yes[i]);
	}
	for (i = 0; i < ARRAY_SIZE(no); i++) {
		assert_int_equal(read_bool(no[i], true), 0);
		if (flags[0])
			fail_msg("on = '%s' read as yes", no[i]);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (read_bool(bad[i], true) != -EINVAL)
			fail_msg("on = '%s' taken", bad[i]);
		assert_true(flags[0]); /* untouched */
		snprintf(
			want, sizeof(want),
			"test.conf:3: function rrtest_yesno: on must be yes or no, not '%s'",
			bad[i]);
		if (strcmp(err, want))
			fail_msg("on = '%s': error \"%s\", not \"%s\"", bad[i],
				 err, want);
	}
}

int run_settings_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_first_error),
		cmocka_unit_test(test_full_range),
		cmocka_unit_test(test_bool),
	};

	return cmocka_run_group_tests_name("settings", tests, NULL, NULL);
}
