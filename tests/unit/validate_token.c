// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of a function's tokens (src/lib/token.c; docs/FUNCTIONS.md,
 * "Tokens: proving a source"): a token made for a source and echoed from
 * it is valid, validates it (the hook) and is counted; one echoed from
 * another address or port, tampered with in any byte, expired or ahead
 * of now, of a wrong length, version or reserved bytes is rejected with
 * its own result, counted, and validates nothing. And validate_table as
 * user space marks it (src/daemon/features/validate.c): a marked address
 * is held for validated_for, a neighbour is not, a full set gives up the
 * entry validated longest ago.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <cmocka.h>

#include <reqrouter/rr_function.h>

#include "token.h"
#include "validate.h"

static uint64_t counts[RR_TOKEN_RESULTS];
static int marked;
static uint8_t marked_addr[16];

static void hook(int family, const void *addr)
{
	marked++;
	memcpy(marked_addr, addr, family == AF_INET ? 4 : 16);
}

static int setup(void **state)
{
	struct rr_token_env env = { .k0 = 0x0706050403020100ULL,
				    .k1 = 0x0f0e0d0c0b0a0908ULL,
				    .counts = counts,
				    .validated = hook };

	(void)state;
	memset(counts, 0, sizeof(counts));
	marked = 0;
	rr_token_setup(&env);
	return 0;
}

static void request(struct rr_request *r, int family, const char *src)
{
	memset(r, 0, sizeof(*r));
	r->family = family;
	r->dst_port = 4433;
	r->src_port = 50000;
	inet_pton(family, src,
		  family == AF_INET ? (void *)&r->src.v4 : (void *)&r->src.v6);
}

static void test_round_trip(void **state)
{
	struct rr_request r;
	uint8_t t[RR_TOKEN_LEN + 4];

	(void)state;
	request(&r, AF_INET, "192.0.2.7");
	assert_int_equal(rr_token_make(&r, t, sizeof(t)), RR_TOKEN_LEN);
	assert_int_equal(rr_token_check(&r, t, RR_TOKEN_LEN), 0);
	assert_int_equal(marked, 1);
	assert_memory_equal(marked_addr, &r.src.v4, 4);
	assert_int_equal(counts[RR_TOKEN_VALID], 1);

	request(&r, AF_INET6, "2001:db8::7");
	assert_int_equal(rr_token_make(&r, t, sizeof(t)), RR_TOKEN_LEN);
	assert_int_equal(rr_token_check(&r, t, RR_TOKEN_LEN), 0);
	assert_int_equal(marked, 2);
	assert_memory_equal(marked_addr, &r.src.v6, 16);
	/* Too little room: nothing written. */
	assert_int_equal(rr_token_make(&r, t, RR_TOKEN_LEN - 1), -ENOSPC);
}

static void test_wrong_source(void **state)
{
	struct rr_request r, other;
	uint8_t t[RR_TOKEN_LEN];

	(void)state;
	request(&r, AF_INET, "192.0.2.7");
	rr_token_make(&r, t, sizeof(t));
	request(&other, AF_INET, "192.0.2.8");
	assert_int_equal(rr_token_check(&other, t, sizeof(t)), -EACCES);
	/* Another function's port, the same address. */
	other = r;
	other.dst_port = 4434;
	assert_int_equal(rr_token_check(&other, t, sizeof(t)), -EACCES);
	/* The IPv4 address as an IPv6 source. */
	request(&other, AF_INET6, "::ffff:192.0.2.7");
	assert_int_equal(rr_token_check(&other, t, sizeof(t)), -EACCES);
	assert_int_equal(marked, 0);
	assert_int_equal(counts[RR_TOKEN_FORGED], 3);
}

static void test_tampered(void **state)
{
	struct rr_request r;
	uint8_t t[RR_TOKEN_LEN], bad[RR_TOKEN_LEN];
	int i, want;

	(void)state;
	request(&r, AF_INET6, "2001:db8::1");
	rr_token_make(&r, t, sizeof(t));
	for (i = 0; i < RR_TOKEN_LEN; i++) {
		memcpy(bad, t, sizeof(t));
		bad[i] ^= 0x01;
		/* Version and reserved bytes: not a token at all. */
		want = i < 4 ? -EINVAL : -EACCES;
		assert_int_equal(rr_token_check(&r, bad, sizeof(bad)), want);
	}
	assert_int_equal(marked, 0);
	assert_int_equal(counts[RR_TOKEN_MALFORMED], 4);
	assert_int_equal(counts[RR_TOKEN_FORGED], RR_TOKEN_LEN - 4);
}

static void test_malformed(void **state)
{
	struct rr_request r;
	uint8_t t[64] = { 0 };

	(void)state;
	request(&r, AF_INET, "192.0.2.9");
	rr_token_make(&r, t, sizeof(t));
	assert_int_equal(rr_token_check(&r, t, RR_TOKEN_LEN - 1), -EINVAL);
	assert_int_equal(rr_token_check(&r, t, RR_TOKEN_LEN + 1), -EINVAL);
	assert_int_equal(rr_token_check(&r, t, 0), -EINVAL);
	assert_int_equal(rr_token_check(&r, NULL, RR_TOKEN_LEN), -EINVAL);
	assert_int_equal(rr_token_check(NULL, t, RR_TOKEN_LEN), -EINVAL);
	memset(t, 0xff, sizeof(t));
	assert_int_equal(rr_token_check(&r, t, RR_TOKEN_LEN), -EINVAL);
	assert_int_equal(marked, 0);
	assert_int_equal(counts[RR_TOKEN_MALFORMED], 5);
}

static void test_expired(void **state)
{
	struct rr_request r;
	uint8_t t[RR_TOKEN_LEN];
	uint32_t now = (uint32_t)time(NULL);

	(void)state;
	request(&r, AF_INET, "192.0.2.10");
	rr_token_at(AF_INET, &r.src.v4, r.dst_port, t, now - RR_TOKEN_LIFE_S);
	assert_int_equal(rr_token_judge(AF_INET, &r.src.v4, r.dst_port, t,
					sizeof(t), now),
			 RR_TOKEN_VALID);
	rr_token_at(AF_INET, &r.src.v4, r.dst_port, t,
		    now - RR_TOKEN_LIFE_S - 2);
	assert_int_equal(rr_token_check(&r, t, sizeof(t)), -ETIMEDOUT);
	rr_token_at(AF_INET, &r.src.v4, r.dst_port, t, now + 60);
	assert_int_equal(rr_token_check(&r, t, sizeof(t)), -ETIMEDOUT);
	assert_int_equal(marked, 0);
	assert_int_equal(counts[RR_TOKEN_EXPIRED], 2);
}

static void test_table(void **state)
{
	struct rr_validate_set *t = calloc(RR_VALIDATE_SETS, sizeof(*t));
	const uint64_t s = 1000000000ULL, seed = 42;
	uint8_t a[4] = { 192, 0, 2, 1 }, b[4] = { 192, 0, 2, 2 }, c[4];
	uint32_t i, n = 0, wa, set;

	(void)state;
	assert_non_null(t);
	memcpy(&wa, a, 4); /* as src_words() reads it */
	set = rr_validate_set_of(rr_validate_hash(seed, AF_INET, wa, 0));
	rr_validate_mark(t, seed, AF_INET, a, 100 * s);
	assert_true(rr_validate_held(t, seed, AF_INET, a, 60, 150 * s));
	assert_false(rr_validate_held(t, seed, AF_INET, a, 60, 161 * s));
	assert_false(rr_validate_held(t, seed, AF_INET, b, 60, 150 * s));
	/* Marked again: held from then. */
	rr_validate_mark(t, seed, AF_INET, a, 200 * s);
	assert_true(rr_validate_held(t, seed, AF_INET, a, 60, 250 * s));
	/* Five more addresses in a's set: a, validated longest ago, goes. */
	for (i = 0; n < RR_VALIDATE_WAYS && i < 100000000; i++) {
		memcpy(c, &i, 4);
		if (i == wa || rr_validate_set_of(rr_validate_hash(
				       seed, AF_INET, i, 0)) != set)
			continue;
		rr_validate_mark(t, seed, AF_INET, c, (201 + n) * s);
		n++;
	}
	assert_int_equal(n, RR_VALIDATE_WAYS);
	assert_false(rr_validate_held(t, seed, AF_INET, a, 3600, 210 * s));
	assert_true(rr_validate_held(t, seed, AF_INET, c, 3600, 210 * s));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_round_trip, setup),
		cmocka_unit_test_setup(test_wrong_source, setup),
		cmocka_unit_test_setup(test_tampered, setup),
		cmocka_unit_test_setup(test_malformed, setup),
		cmocka_unit_test_setup(test_expired, setup),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests_name("validate_token", tests, NULL, NULL);
}
