// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the work function: a request "N" and a tag gets "N NS"
 * and the tag back, NS the nanoseconds it spun, never below N * 1000 and
 * as long as the call took; a request over max_us is refused and one that
 * names no number is no request, each counted and unanswered; max_us is
 * checked (0..100000, default 1000); a reply that cannot fit is
 * -EMSGSIZE, found before the spin where it can be; the function is off
 * until configured. The reply is read here by hand from the format
 * documented in functions/work.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "function.h"
#include "options.h"
#include "registry.h"
#include "testutil.h"
#include "util.h"

/* Counter order, as work.c registers them. */
enum { C_REFUSED, C_INVALID, C_BUSY_US, C_N };

struct fixture {
	const struct rr_function *fn;
	struct rr_fn_counters ctrs;
	struct rr_fn_instance *inst;
	uint64_t counters[RR_FN_MAX_COUNTERS];
	struct rr_request req;
	char err[RR_ERRLEN];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A new instance of work with settings "max_us = @max" (NULL: none);
 * returns what rr_fn_instance_new() did. */
static int load(struct fixture *f, const char *max)
{
	struct rr_fn_setting s = { "max_us", max, "test.conf", 7 };

	rr_fn_instance_free(f->inst);
	f->inst = NULL;
	memset(&f->ctrs, 0, sizeof(f->ctrs));
	memset(f->counters, 0, sizeof(f->counters));
	f->err[0] = '\0';
	if (rr_fn_instance_new(f->fn, f->fn->port, max ? &s : NULL, max ? 1 : 0,
			       1, &f->ctrs, &f->inst, f->err, sizeof(f->err)))
		return -EINVAL;
	rr_fn_request_bind(&f->req, f->inst, 0, f->counters);
	return 0;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->fn = rr_registry_find("work");
	assert_non_null(f->fn);
	f->req.family = AF_INET;
	assert_int_equal(load(f, NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rr_fn_instance_free(f->inst);
	free(f);
	return 0;
}

/* Sends @text in a buffer of @room bytes; returns the handler's result,
 * the reply in @out (NUL-terminated) and how long the call took. */
static int ask(struct fixture *f, const char *text, size_t room, char *out,
	       uint64_t *took)
{
	static uint8_t buf[2048];
	size_t len = strlen(text);
	uint64_t t0;
	int ret;

	assert_true(room < sizeof(buf) && len <= room);
	memcpy(buf, text, len);
	t0 = now_ns();
	ret = f->fn->handler(&f->req, buf, len, room);
	if (took)
		*took = now_ns() - t0;
	if (out && ret >= 0) {
		memcpy(out, buf, (size_t)ret);
		out[ret] = '\0';
	}
	return ret;
}

/* The reply to @text must be "@us NS@tag" with NS >= @us * 1000 and no
 * more than the call took; returns NS. */
static uint64_t expect_reply(struct fixture *f, const char *text,
			     unsigned long us, const char *tag)
{
	char out[2048], want[64];
	unsigned long long ns;
	uint64_t took;
	int ret, n = 0;

	ret = ask(f, text, 1472, out, &took);
	if (ret < 0)
		fail_msg("'%s': no reply (%d)", text, ret);
	snprintf(want, sizeof(want), "%lu ", us);
	if (strncmp(out, want, strlen(want)))
		fail_msg("'%s': reply '%s' does not start with '%s'", text, out,
			 want);
	if (sscanf(out + strlen(want), "%llu%n", &ns, &n) != 1 || !n)
		fail_msg("'%s': reply '%s' has no time spent", text, out);
	assert_string_equal(out + strlen(want) + n, tag);
	assert_int_equal(ret, strlen(out));
	if (ns < us * 1000ull || ns > took)
		fail_msg(
			"'%s': spent %llu ns, asked %lu us, the call took %llu ns",
			text, ns, us, (unsigned long long)took);
	return ns;
}

static void test_registered(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->fn->port, 9010);
	assert_true(f->fn->flags & RR_FN_OPT_IN);
	assert_false(f->fn->flags & RR_FN_PURE);
	assert_int_equal(f->ctrs.n, C_N);
	assert_string_equal(f->ctrs.name[C_REFUSED], "work_refused");
	assert_string_equal(f->ctrs.name[C_INVALID], "work_invalid");
	assert_string_equal(f->ctrs.name[C_BUSY_US], "work_busy_us");
}

/* "N" then the tag: "N NS" then the tag, whatever the tag holds. */
static void test_reply(void **state)
{
	struct fixture *f = *state;

	expect_reply(f, "60", 60, "");
	expect_reply(f, "60 abc", 60, " abc");
	expect_reply(f, "0060\n", 60, "\n"); /* leading zeros dropped */
	expect_reply(f, "6x", 6, "x");
	expect_reply(f, "0", 0, "");
	expect_reply(f, "1000 the bound itself", 1000, " the bound itself");
	/* A tag that starts with digits after a non-digit is the tag's. */
	expect_reply(f, "5 123 456", 5, " 123 456");
	/* 60 + 60 + 60 + 6 + 0 + 1000 + 5 us at least. */
	assert_true(f->counters[C_BUSY_US] >= 1191);
	assert_int_equal(f->counters[C_REFUSED] + f->counters[C_INVALID], 0);
}

/* A spin is a busy loop on the clock: the call takes the time asked for
 * (and so never returns early from a sleep cut short). */
static void test_spin(void **state)
{
	struct fixture *f = *state;
	uint64_t took;
	char out[64];

	assert_true(ask(f, "500", 64, out, &took) > 0);
	assert_true(took >= 500000);
	assert_true(ask(f, "0", 64, out, &took) > 0);
	assert_true(took < 500000);
}

/* Over max_us: refused, counted, nothing spun. */
static void test_bound(void **state)
{
	struct fixture *f = *state;
	uint64_t took;
	char out[64];

	/* The default, 1000. */
	assert_int_equal(ask(f, "1001", 64, out, &took), RR_NO_REPLY);
	assert_int_equal(ask(f, "999999999 x", 64, out, NULL), RR_NO_REPLY);
	assert_int_equal(f->counters[C_REFUSED], 2);
	assert_true(took < 1000000);

	assert_int_equal(load(f, "100"), 0);
	expect_reply(f, "100", 100, "");
	assert_int_equal(ask(f, "101", 64, out, NULL), RR_NO_REPLY);
	assert_int_equal(f->counters[C_REFUSED], 1);

	assert_int_equal(load(f, "0"), 0);
	expect_reply(f, "0 t", 0, " t");
	assert_int_equal(ask(f, "1 t", 64, out, NULL), RR_NO_REPLY);
	assert_int_equal(f->counters[C_REFUSED], 1);

	assert_int_equal(load(f, "100000"), 0);
	expect_reply(f, "20000", 20000, "");
	assert_int_equal(ask(f, "100001", 64, out, NULL), RR_NO_REPLY);
	assert_int_equal(f->counters[C_REFUSED], 1);
	assert_int_equal(f->counters[C_INVALID], 0);
}

/* No number first, or more digits than 9: no request. */
static void test_invalid(void **state)
{
	static const char *const bad[] = {
		"",    "abc",	     " 60",	   "-5", "+5",
		"x60", "1234567890", "0000000060", "\n",
	};
	struct fixture *f = *state;
	char out[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (ask(f, bad[i], 64, out, NULL) != RR_NO_REPLY)
			fail_msg("'%s' was answered: '%s'", bad[i], out);
	assert_int_equal(f->counters[C_INVALID], ARRAY_SIZE(bad));
	assert_int_equal(f->counters[C_REFUSED], 0);
	/* Nine digits are a number. */
	expect_reply(f, "000000060", 60, "");
	assert_int_equal(f->counters[C_INVALID], ARRAY_SIZE(bad));
}

/* The reply is longer than the request: without room, -EMSGSIZE, found
 * before the spin (the time spent is never below the time asked for). */
static void test_room(void **state)
{
	struct fixture *f = *state;
	uint64_t took;
	char out[64];

	assert_int_equal(load(f, "100000"), 0);
	assert_int_equal(ask(f, "50000", 5, out, &took), -EMSGSIZE);
	assert_true(took < 50000000ull);
	/* "5 5000" at least: 6 bytes. */
	assert_int_equal(ask(f, "5", 5, out, NULL), -EMSGSIZE);
	assert_true(ask(f, "5", 32, out, NULL) >= 6);
	assert_int_equal(f->counters[C_REFUSED] + f->counters[C_INVALID], 0);
}

/* Without init (the tools' bare calls): the default bound, no counters. */
static void test_no_state(void **state)
{
	const struct rr_function *fn = ((struct fixture *)*state)->fn;
	struct rr_request req = { .family = AF_INET };
	uint8_t buf[64] = "7 tag";

	rr_fn_request_bind(&req, NULL, 0, NULL);
	assert_true(fn->handler(&req, buf, 5, sizeof(buf)) > 5);
	assert_memory_equal(buf, "7 ", 2);
	memcpy(buf, "1001", 4);
	assert_int_equal(fn->handler(&req, buf, 4, sizeof(buf)), RR_NO_REPLY);
	assert_int_equal(fn->handler(&req, buf, 0, sizeof(buf)), RR_NO_REPLY);
}

/* max_us: a number in 0..100000; any other key is refused. One line
 * that names file, line and function. */
static void test_settings(void **state)
{
	static const char *const bad[] = {
		"100001", "-1", "abc", "", "10us", "1e3", "99999999999999999999"
	};
	struct fixture *f = *state;
	struct rr_fn_setting s = { "max_ms", "5", "test.conf", 3 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (!load(f, bad[i]))
			fail_msg("max_us = '%s' taken", bad[i]);
		if (!strstr(f->err,
			    "test.conf:7: function work: max_us must be a number from 0 to 100000"))
			fail_msg("max_us = '%s': error \"%s\"", bad[i], f->err);
		assert_null(strchr(f->err, '\n'));
	}
	assert_int_equal(rr_fn_instance_new(f->fn, 9010, &s, 1, 1, NULL,
					    &f->inst, f->err, sizeof(f->err)),
			 -EINVAL);
	f->inst = NULL;
	if (!strstr(f->err, "test.conf:3: function work: unknown key 'max_ms'"))
		fail_msg("unknown key: error \"%s\"", f->err);
}

/* Off until configured: a function that burns CPU on request. */
static void test_config(void **state)
{
	(void)state;
	assert_int_equal(
		t_check_opt_in("work", 9010,
			       "[function work]\nenabled = yes\nmax_us = 200\n",
			       1),
		0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_registered, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_room, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
