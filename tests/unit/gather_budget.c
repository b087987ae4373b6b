// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of gathers' budgets (src/daemon/features/gather_budget.c),
 * on a worker's buckets driven by a clock of the test's own: a quiet
 * function sends a second's worth, or one whole group, at once and then
 * its rate; one source prefix is held to its own rate while another
 * prefix, and another address of its own /24, are not served apart from
 * it; a spread of prefixes meets the function's rate; a share of the
 * workers gets its part of the rates; 0 turns a budget off; a refusal
 * by one budget takes nothing from the other. No privileges needed.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "config.h"
#include "gather_budget.h"
#include "shared/stats.h"

#define SEC 1000000000ULL
#define T0 (100 * SEC) /* the tests' clock starts here */

static struct rr_service svc(uint32_t rate, uint32_t source_rate)
{
	struct rr_service s;

	memset(&s, 0, sizeof(s));
	s.gather_rate = rate;
	s.gather_source_rate = source_rate;
	s.rate_limit_v4_prefix = 24;
	s.rate_limit_v6_prefix = 64;
	return s;
}

static struct rr_request from(const char *addr)
{
	struct rr_request r;

	memset(&r, 0, sizeof(r));
	if (strchr(addr, ':')) {
		r.family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, addr, &r.src.v6), 1);
	} else {
		r.family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, addr, &r.src.v4), 1);
	}
	return r;
}

/* Gathers of @copies from @addr, one every @gap ns for @n of them from
 * @*now on: how many were let through. */
static uint32_t ask(struct rr_sg_budget *b, const struct rr_service *s,
		    const char *addr, uint32_t copies, uint64_t gap, uint32_t n,
		    uint32_t share, uint64_t *now)
{
	struct rr_request r = from(addr);
	uint32_t ok = 0, i;

	for (i = 0; i < n; i++, *now += gap)
		ok += !rr_sg_budget_take(b, s, 3, &r, copies, share, *now);
	return ok;
}

static struct rr_sg_budget *budget(void)
{
	struct rr_sg_budget *b = malloc(sizeof(*b));

	assert_non_null(b);
	rr_sg_budget_init(b, 0x1234567890abcdefULL);
	return b;
}

/* A function's budget alone: a second's worth at once, then its rate;
 * a gather larger than a second's worth still starts from a quiet
 * bucket; the refusal says which budget. */
static void test_function_rate(void **state)
{
	struct rr_service s = svc(1000, 0);
	struct rr_sg_budget *b = budget();
	struct rr_request r = from("192.0.2.1");
	uint64_t now = T0;

	(void)state;
	/* 1024 at once (one whole group is more than a second's 1000). */
	assert_int_equal(ask(b, &s, "192.0.2.1", 1, 0, 2000, 1, &now), 1024);
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &r, 1, 1, now),
			 RR_DROP_GATHER_RATE);
	/* Then 1000 a second: 10 s of one copy every 100 us (the first
	 * at once, when the bucket is still full). */
	assert_in_range(
		ask(b, &s, "192.0.2.1", 1, SEC / 10000, 100000, 1, &now), 9999,
		10000);
	/* Quiet for a while: a group of 1024 fits again, in one gather. */
	now += 5 * SEC;
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &r, 1024, 1, now), 0);
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &r, 1, 1, now),
			 RR_DROP_GATHER_RATE);
	free(b);
}

/* One prefix held to its own rate; another prefix served beside it; an
 * address of the same /24 (and IPv6 of the same /64) shares its budget. */
static void test_source_rate(void **state)
{
	struct rr_service s = svc(0, 1000);
	struct rr_sg_budget *b = budget();
	struct rr_request same = from("192.0.2.200"),
			  other = from("198.51.100.1"),
			  six = from("2001:db8:1:2::1"),
			  six_same = from("2001:db8:1:2:ffff::9");
	uint64_t now = T0;
	uint32_t i;

	(void)state;
	/* Groups of 254: four from a quiet prefix, then one each 254 ms. */
	assert_int_equal(ask(b, &s, "192.0.2.1", 254, 0, 10, 1, &now), 4);
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &same, 254, 1, now),
			 RR_DROP_GATHER_SOURCE_RATE);
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &other, 254, 1, now), 0);
	assert_int_equal(ask(b, &s, "192.0.2.1", 254, SEC / 100, 200, 1, &now),
			 7);
	/* IPv6: a /64 is one source. */
	for (i = 0; i < 4; i++)
		assert_int_equal(rr_sg_budget_take(b, &s, 3, &six, 254, 1, now),
				 0);
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &six_same, 254, 1, now),
			 RR_DROP_GATHER_SOURCE_RATE);
	free(b);
}

/* A spread of 64 prefixes: each within its own budget, the function's
 * is what holds them. */
static void test_spread(void **state)
{
	struct rr_service s = svc(10000, 1000);
	struct rr_sg_budget *b = budget();
	struct rr_request r;
	uint64_t now = T0;
	uint32_t ok = 0, i, why, src = 0, fn = 0;
	char addr[32];

	(void)state;
	/* 2 s of 2000 gathers of 254 a second, from 64 /24s in turn. */
	for (i = 0; i < 4000; i++, now += SEC / 2000) {
		snprintf(addr, sizeof(addr), "100.64.%u.1", i % 64);
		r = from(addr);
		why = rr_sg_budget_take(b, &s, 3, &r, 254, 1, now);
		ok += !why;
		src += why == RR_DROP_GATHER_SOURCE_RATE;
		fn += why == RR_DROP_GATHER_RATE;
	}
	/* A second's worth and 2 s of the rate: 30 000 copies, 118 groups
	 * of 254, to the rounding of one. */
	assert_in_range(ok, 117, 118);
	assert_true(fn > 0);
	assert_int_equal(src, 0);
	free(b);
}

/* Four workers share the rates: each gets a quarter, but every one of
 * them can still start a whole group from a quiet bucket. */
static void test_share(void **state)
{
	struct rr_service s = svc(4000, 0);
	struct rr_sg_budget *b = budget();
	struct rr_request r = from("192.0.2.1");
	uint64_t now = T0;

	(void)state;
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &r, 1024, 4, now), 0);
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &r, 1, 4, now),
			 RR_DROP_GATHER_RATE);
	/* 1000 a second for this worker: after 1024 ms, 1024 fit again. */
	now += 1023 * SEC / 1000;
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &r, 1024, 4, now),
			 RR_DROP_GATHER_RATE);
	now += 2 * SEC / 1000;
	assert_int_equal(rr_sg_budget_take(b, &s, 3, &r, 1024, 4, now), 0);
	free(b);
}

/* 0 turns a budget off; a refusal by the function takes nothing from
 * the source's budget, nor one by the source from the function's. */
static void test_off_and_nothing_taken(void **state)
{
	struct rr_service off = svc(0, 0), fn = svc(1024, 2048),
			  src_only = svc(0, 2048), src = svc(2048, 1024);
	struct rr_sg_budget *b = budget();
	struct rr_request r = from("192.0.2.1"), q = from("198.51.100.1"),
			  p = from("203.0.113.1");
	uint64_t now = T0;

	(void)state;
	assert_int_equal(ask(b, &off, "192.0.2.1", 1024, 0, 1000, 1, &now),
			 1000);
	/* Slot 3: the function's second 1024 are refused by the function;
	 * the source had room for them and keeps it. */
	assert_int_equal(rr_sg_budget_take(b, &fn, 3, &r, 1024, 1, now), 0);
	assert_int_equal(rr_sg_budget_take(b, &fn, 3, &r, 1024, 1, now),
			 RR_DROP_GATHER_RATE);
	assert_int_equal(rr_sg_budget_take(b, &src_only, 3, &r, 1024, 1, now),
			 0);
	assert_int_equal(rr_sg_budget_take(b, &src_only, 3, &r, 1, 1, now),
			 RR_DROP_GATHER_SOURCE_RATE);
	/* Slot 6: the source's second 1024 are refused by the source; the
	 * function had room for them and keeps it, for another prefix. */
	assert_int_equal(rr_sg_budget_take(b, &src, 6, &r, 1024, 1, now), 0);
	assert_int_equal(rr_sg_budget_take(b, &src, 6, &r, 1024, 1, now),
			 RR_DROP_GATHER_SOURCE_RATE);
	assert_int_equal(rr_sg_budget_take(b, &src, 6, &q, 1024, 1, now), 0);
	assert_int_equal(rr_sg_budget_take(b, &src, 6, &p, 1, 1, now),
			 RR_DROP_GATHER_RATE);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_rate),
		cmocka_unit_test(test_source_rate),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_share),
		cmocka_unit_test(test_off_and_nothing_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
