// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the heavy hitters' user-space half (src/daemon/features/hh.c),
 * on sketches filled here as the XDP program fills them (the hash and
 * the layout are kern/shared/hh.h's, shared with it): keys and their
 * text, the skip factor, the pool's mean, exact counts read back, two
 * heavy keys that share columns told apart, the ring read and what it
 * lost, decay and rates, and the error bound. No privileges needed; the
 * program itself is tests/bpf/hh_sketch.c's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "config.h"
#include "hh.h"

#define SEED 0x1234567890abcdefULL

static struct rr_hh_cand v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	struct rr_hh_cand k = { .family = AF_INET, .addr = { a, b, c, d } };

	return k;
}

/* @n samples of @c into @sk, as hh_sample() adds them. */
static void add(struct rr_hh_sketch *sk, const struct rr_hh_cand *c, uint32_t n)
{
	__u64 a = 0, b = 0, w0, w1, h[RR_HH_KINDS];
	uint32_t k, r, i;

	if (c->family == AF_INET) {
		uint32_t x;

		memcpy(&x, c->addr, 4);
		a = x;
	} else {
		memcpy(&a, c->addr, 8);
		memcpy(&b, c->addr + 8, 8);
	}
	rr_hh_words(c->family, a, b, &w0, &w1);
	rr_hh_hash(SEED, c->family, w0, w1, h);
	for (i = 0; i < n; i++) {
		sk->cand[sk->samples++ & (RR_HH_CANDS - 1)] = *c;
		for (k = 0; k < RR_HH_KINDS; k++)
			for (r = 0; r < RR_HH_ROWS; r++)
				sk->count[k][r][rr_hh_col(h[k], r)] +=
					rr_hh_sign(h[k], r);
	}
}

static double est(const struct rr_hh_fn *f, const struct rr_hh_cand *c,
		  enum rr_hh_kind kind)
{
	struct rr_hh_key key;

	rr_hh_key_of(c, kind, &key);
	return rr_hh_estimate(f, kind, &key, SEED);
}

static void test_keys(void **state)
{
	struct rr_hh_cand c = v4(192, 0, 2, 77), s6 = { .family = AF_INET6 };
	struct rr_hh_key key;
	char buf[64];

	rr_hh_key_of(&c, RR_HH_SOURCE, &key);
	rr_hh_key_str(&key, RR_HH_SOURCE, buf, sizeof(buf));
	assert_string_equal(buf, "192.0.2.77");
	rr_hh_key_of(&c, RR_HH_PREFIX, &key);
	rr_hh_key_str(&key, RR_HH_PREFIX, buf, sizeof(buf));
	assert_string_equal(buf, "192.0.2.0/24");
	memcpy(s6.addr,
	       (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0, 0, 0, 0, 0,
			    0, 0, 9 },
	       16);
	rr_hh_key_of(&s6, RR_HH_PREFIX, &key);
	rr_hh_key_str(&key, RR_HH_PREFIX, buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8:1:2::/64");
	rr_hh_key_of(&s6, RR_HH_SOURCE, &key);
	rr_hh_key_str(&key, RR_HH_SOURCE, buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8:1:2::9");
}

/* The skip is geometric with parameter 1/N: its mean over Exp(1)
 * variables is (1 - p) / p, and 1 in 1 never skips. */
static void test_scale(void **state)
{
	uint32_t n[] = { 2, 100, 1000, RR_MAX_HH_SAMPLE }, i, j;
	struct rr_hh_pool *pool = malloc(sizeof(*pool));
	double sum, p;

	assert_non_null(pool);
	assert_int_equal(rr_hh_scale(1), 0);
	assert_int_equal(rr_hh_skip(10 * RR_HH_POOL_ONE, 0), 0);
	assert_int_equal(rr_hh_fill_pool(pool), 0);
	for (sum = 0, j = 0; j < RR_HH_POOL; j++) {
		assert_true(pool->exp[j] <= 23 * RR_HH_POOL_ONE);
		sum += pool->exp[j];
	}
	/* Scaled to a mean of 1, to the rounding. */
	assert_true(fabs(sum / RR_HH_POOL / RR_HH_POOL_ONE - 1) < 1e-4);
	for (i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		p = 1.0 / n[i];
		for (sum = 0, j = 0; j < RR_HH_POOL; j++)
			sum += rr_hh_skip(pool->exp[j], rr_hh_scale(n[i]));
		/* The floor costs at most 0.5, the pool's rounding less. */
		assert_true(fabs(sum / RR_HH_POOL - (1 - p) / p) <
			    0.5 + 1e-3 * n[i]);
	}
	free(pool);
}

/* Every request sampled: the counts come back exactly, each kind; the
 * top lists them heaviest first. */
static void test_exact(void **state)
{
	struct rr_hh_sketch *sk = calloc(1, sizeof(*sk));
	struct rr_hh_cand a = v4(192, 0, 2, 1), b = v4(192, 0, 2, 2),
			  c = v4(198, 51, 100, 3);
	struct rr_hh_entry top[RR_HH_TOPK];
	struct rr_hh_fn *f;

	assert_non_null(sk);
	f = rr_hh_fn_new(sk);
	assert_non_null(f);
	add(sk, &a, 120);
	add(sk, &b, 80);
	add(sk, &c, 50);
	rr_hh_collect(f, sk, SEED);
	assert_int_equal(f->lost, 0);
	rr_hh_interval(f, sk, 1, 1, 0);
	assert_true(fabs(est(f, &a, RR_HH_SOURCE) - 120) < 1e-6);
	assert_true(fabs(est(f, &b, RR_HH_SOURCE) - 80) < 1e-6);
	assert_true(fabs(est(f, &a, RR_HH_PREFIX) - 200) < 1e-6);
	assert_true(fabs(est(f, &c, RR_HH_PREFIX) - 50) < 1e-6);
	assert_int_equal(rr_hh_top(f, RR_HH_SOURCE, top, RR_HH_TOPK), 3);
	assert_true(top[0].count == 120 && top[1].count == 80 &&
		    top[2].count == 50);
	assert_int_equal(rr_hh_top(f, RR_HH_PREFIX, top, RR_HH_TOPK), 2);
	assert_true(fabs(top[0].count - 200) < 1e-6);
	assert_true(fabs(f->total - 250) < 1e-6);
	/* Nothing but the keys followed: no noise left to bound. */
	assert_true(rr_hh_bound(f, RR_HH_SOURCE) < 1e-6);
	/* 1 in 10: the same samples stand for ten times the requests. */
	add(sk, &a, 12);
	rr_hh_interval(f, sk, 10, 1, 0);
	assert_true(fabs(est(f, &a, RR_HH_SOURCE) - 240) < 1e-6);
	free(f);
	free(sk);
}

/* A ring read too late loses what was overwritten, and says how much;
 * a sketch followed from now on does not count what came before. */
static void test_ring(void **state)
{
	struct rr_hh_sketch *sk = calloc(1, sizeof(*sk));
	struct rr_hh_cand a = v4(203, 0, 113, 5), b = v4(203, 0, 113, 6);
	struct rr_hh_fn *f;

	assert_non_null(sk);
	add(sk, &b, 1000);
	f = rr_hh_fn_new(sk);
	assert_non_null(f);
	add(sk, &a, RR_HH_CANDS + 100);
	rr_hh_collect(f, sk, SEED);
	assert_int_equal(f->lost, 100);
	assert_int_equal(f->ntrack[RR_HH_SOURCE], 1);
	rr_hh_interval(f, sk, 1, 1, 0);
	assert_true(fabs(est(f, &a, RR_HH_SOURCE) - (RR_HH_CANDS + 100)) <
		    1e-6);
	assert_true(fabs(est(f, &b, RR_HH_SOURCE)) < 1e-6);
	free(f);
	free(sk);
}

/* Decay: a steady rate reads as itself from the first interval on; a
 * source that stops fades by e^(-t / tau). */
static void test_decay(void **state)
{
	struct rr_hh_sketch *sk = calloc(1, sizeof(*sk));
	struct rr_hh_cand a = v4(192, 0, 2, 1), b = v4(192, 0, 2, 2);
	struct rr_hh_fn *f;
	int s;

	assert_non_null(sk);
	f = rr_hh_fn_new(sk);
	assert_non_null(f);
	for (s = 0; s < 5; s++) {
		add(sk, &a, 30); /* 3000 requests/s at 1 in 100 */
		add(sk, &b, 10);
		rr_hh_collect(f, sk, SEED);
		rr_hh_interval(f, sk, 100, 1, RR_HH_TAU_S);
		assert_true(fabs(est(f, &a, RR_HH_SOURCE) / f->time - 3000) <
			    1e-3);
		assert_true(fabs(f->total / f->time - 4000) < 1e-3);
	}
	for (s = 0; s < 10; s++) {
		add(sk, &b, 10);
		rr_hh_collect(f, sk, SEED);
		rr_hh_interval(f, sk, 100, 1, RR_HH_TAU_S);
	}
	/* 10 s later: e^-1 of what it was, over a time that kept going. */
	assert_true(est(f, &a, RR_HH_SOURCE) / f->time < 3000 * 0.37);
	assert_true(fabs(est(f, &b, RR_HH_SOURCE) / f->time - 1000) < 1e-3);
	/* Once its decayed count is under a sampled request's worth, a
	 * source that stopped is no longer listed (it never reaches 0). */
	for (s = 0; s < 120; s++) {
		add(sk, &b, 10);
		rr_hh_collect(f, sk, SEED);
		rr_hh_interval(f, sk, 100, 1, RR_HH_TAU_S);
	}
	{
		struct rr_hh_entry top[RR_HH_TOPK];
		size_t i, n = rr_hh_top(f, RR_HH_SOURCE, top, RR_HH_TOPK);

		assert_true(est(f, &a, RR_HH_SOURCE) > 0);
		assert_int_equal(n, 1);
		for (i = 0; i < n; i++)
			assert_true(top[i].count >= 100);
	}
	free(f);
	free(sk);
}

/* Two heavy keys forced into the same columns in two rows, alike in
 * sign: the median alone puts half of each on the other; heeding the
 * keys followed, both come back exact. */
static void test_peel(void **state)
{
	struct rr_hh_sketch *sk = calloc(1, sizeof(*sk));
	struct rr_hh_cand a = v4(10, 0, 0, 1), b;
	struct rr_hh_key ka, kb;
	__u64 w0, w1, h[RR_HH_KINDS], ha, hb;
	struct rr_hh_fn *f;
	uint32_t x, y;

	assert_non_null(sk);
	f = rr_hh_fn_new(sk);
	assert_non_null(f);
	memcpy(&x, a.addr, 4);
	rr_hh_words(AF_INET, x, 0, &w0, &w1);
	rr_hh_hash(SEED, AF_INET, w0, w1, h);
	ha = h[RR_HH_SOURCE];
	/* One address in about 2^25 does: a second or so of hashing. */
	for (y = 1; y; y++) {
		if (y == x)
			continue;
		rr_hh_words(AF_INET, y, 0, &w0, &w1);
		rr_hh_hash(SEED, AF_INET, w0, w1, h);
		hb = h[RR_HH_SOURCE];
		if (rr_hh_col(hb, 0) == rr_hh_col(ha, 0) &&
		    rr_hh_col(hb, 1) == rr_hh_col(ha, 1) &&
		    rr_hh_col(hb, 2) != rr_hh_col(ha, 2) &&
		    rr_hh_col(hb, 3) != rr_hh_col(ha, 3) &&
		    rr_hh_sign(hb, 0) * rr_hh_sign(ha, 0) ==
			    rr_hh_sign(hb, 1) * rr_hh_sign(ha, 1))
			break;
	}
	assert_true(y != 0);
	b.family = AF_INET;
	memset(b.addr, 0, sizeof(b.addr));
	memcpy(b.addr, &y, 4);
	add(sk, &a, 100);
	add(sk, &b, 60);
	rr_hh_collect(f, sk, SEED);
	rr_hh_interval(f, sk, 1, 1, 0);
	rr_hh_key_of(&a, RR_HH_SOURCE, &ka);
	rr_hh_key_of(&b, RR_HH_SOURCE, &kb);
	assert_true(fabs(rr_hh_estimate(f, RR_HH_SOURCE, &ka, SEED) - 100) <
		    1e-6);
	assert_true(fabs(rr_hh_estimate(f, RR_HH_SOURCE, &kb, SEED) - 60) <
		    1e-6);
	assert_int_equal(f->ntrack[RR_HH_SOURCE], 2);
	assert_true(f->track[RR_HH_SOURCE][0].count == 100 &&
		    f->track[RR_HH_SOURCE][1].count == 60);
	free(f);
	free(sk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),  cmocka_unit_test(test_scale),
		cmocka_unit_test(test_exact), cmocka_unit_test(test_ring),
		cmocka_unit_test(test_decay), cmocka_unit_test(test_peel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
