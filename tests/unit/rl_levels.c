// SPDX-License-Identifier: GPL-2.0
/*
 * The rate limiter's levels of prefixes and what the workers charge
 * (src/daemon/features/rl.c):
 * - rr_rl_levels(): around the default /24 and /64, the levels are /32,
 *   /24, /20 and /128, /64, /56, /48, narrowest first, at 0.5, 1 and 8
 *   times (0.5, 1, 1.5 and 2 times) the configured rate, every level's
 *   burst the same time; around /32 (/128) the source is the configured
 *   prefix; around /2 no level is wider than the address allows; with
 *   rate 0 the lengths are there and no interval (a limit of cost only);
 * - rr_rl_source(): a request's source, IPv4 and IPv6, behind a VLAN
 *   tag or none; nothing from a frame too short or not IP;
 * - rr_rl_charge(): a source's levels charged in the table, a second
 *   charge added to the first, a source's entry shared by no other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "rl.h"

static void test_levels_default(void **state)
{
	struct rr_port_conf c = { .slot = 0 };

	(void)state;
	rr_rl_levels(&c, 200, 0, 24, 64);
	assert_int_equal(c.rl_burst_ns, 200ULL * 5000000);
	assert_int_equal(c.rl_len[RR_RL_V4][0], 32);
	assert_int_equal(c.rl_len[RR_RL_V4][1], 24);
	assert_int_equal(c.rl_len[RR_RL_V4][2], 20);
	assert_int_equal(c.rl_len[RR_RL_V4][3], 0);
	assert_int_equal(c.rl_interval_ns[RR_RL_V4][0], 10000000);
	assert_int_equal(c.rl_interval_ns[RR_RL_V4][1], 5000000);
	assert_int_equal(c.rl_interval_ns[RR_RL_V4][2], 625000);
	assert_int_equal(c.rl_interval_ns[RR_RL_V4][3], 0);
	assert_int_equal(c.rl_len[RR_RL_V6][0], 128);
	assert_int_equal(c.rl_len[RR_RL_V6][1], 64);
	assert_int_equal(c.rl_len[RR_RL_V6][2], 56);
	assert_int_equal(c.rl_len[RR_RL_V6][3], 48);
	assert_int_equal(c.rl_interval_ns[RR_RL_V6][0], 10000000);
	assert_int_equal(c.rl_interval_ns[RR_RL_V6][1], 5000000);
	assert_int_equal(c.rl_interval_ns[RR_RL_V6][2], 3333333);
	assert_int_equal(c.rl_interval_ns[RR_RL_V6][3], 2500000);
}

static void test_levels_other(void **state)
{
	struct rr_port_conf c = { .slot = 0 };

	(void)state;
	/* The configured prefix is the whole address: no level of half. */
	rr_rl_levels(&c, 1000, 10, 32, 128);
	assert_int_equal(c.rl_burst_ns, 10ULL * 1000000);
	assert_int_equal(c.rl_len[RR_RL_V4][0], 32);
	assert_int_equal(c.rl_interval_ns[RR_RL_V4][0], 1000000);
	assert_int_equal(c.rl_len[RR_RL_V4][1], 28);
	assert_int_equal(c.rl_len[RR_RL_V4][2], 0);
	assert_int_equal(c.rl_len[RR_RL_V6][0], 128);
	assert_int_equal(c.rl_len[RR_RL_V6][1], 120);
	assert_int_equal(c.rl_len[RR_RL_V6][2], 112);
	assert_int_equal(c.rl_len[RR_RL_V6][3], 0);
	/* Nothing wider than the address has. */
	rr_rl_levels(&c, 1000, 0, 2, 8);
	assert_int_equal(c.rl_len[RR_RL_V4][0], 32);
	assert_int_equal(c.rl_len[RR_RL_V4][1], 2);
	assert_int_equal(c.rl_len[RR_RL_V4][2], 0);
	assert_int_equal(c.rl_len[RR_RL_V6][1], 8);
	assert_int_equal(c.rl_len[RR_RL_V6][2], 0);
	/* Rate 0: the lengths, for the cost, and no limit of replies. */
	rr_rl_levels(&c, 0, 0, 24, 64);
	assert_int_equal(c.rl_len[RR_RL_V4][2], 20);
	assert_int_equal(c.rl_interval_ns[RR_RL_V4][0], 0);
	assert_int_equal(c.rl_interval_ns[RR_RL_V4][2], 0);
	assert_int_equal(c.rl_interval_ns[RR_RL_V6][3], 0);
}

static void test_source(void **state)
{
	uint8_t f[80] = { 0 };
	struct rr_rl_charge ch;

	(void)state;
	f[12] = 0x08; /* IPv4 */
	memcpy(f + 14 + 12, "\xc6\x12\x01\x02", 4);
	assert_true(rr_rl_source(f, 14 + 20, &ch));
	assert_int_equal(ch.family, AF_INET);
	assert_memory_equal(ch.addr, "\xc6\x12\x01\x02", 4);
	assert_false(rr_rl_source(f, 14 + 19, &ch));
	/* Behind a VLAN tag, IPv6. */
	memset(f, 0, sizeof(f));
	f[12] = 0x81;
	f[16] = 0x86;
	f[17] = 0xdd;
	f[18 + 8] = 0x20;
	f[18 + 9] = 0x01;
	f[18 + 23] = 7;
	assert_true(rr_rl_source(f, 18 + 40, &ch));
	assert_int_equal(ch.family, AF_INET6);
	assert_int_equal(ch.addr[0], 0x20);
	assert_int_equal(ch.addr[15], 7);
	/* ARP. */
	f[16] = 0x08;
	f[17] = 0x06;
	assert_false(rr_rl_source(f, sizeof(f), &ch));
}

/* The time of @h's entry in @t, 0 if none. */
static uint64_t entry(const struct rr_rl_set *t, uint64_t h)
{
	const struct rr_rl_set *set = &t[rr_rl_set_of(h)];
	uint32_t w;

	for (w = 0; w < RR_RL_WAYS; w++)
		if (set->way[w].tag == h)
			return set->way[w].tat;
	return 0;
}

static void test_charge(void **state)
{
	struct rr_rl_set *t = calloc(RR_RL_SETS, sizeof(*t));
	struct rr_port_conf c = { .rl_seed = 7 };
	struct rr_rl_charge ch[2] = {
		{ .addr = { 10, 1, 2, 3 }, .family = AF_INET, .ns = 1000000 },
		{ .addr = { 10, 1, 2, 4 }, .family = AF_INET, .ns = 500000 },
	};
	uint64_t now = 1000000000000ULL, a, b;
	struct rr_rl_cost cost;
	uint32_t v;

	(void)state;
	assert_non_null(t);
	/* 1000 us a second per /24: a us costs the /24 1 ms of bucket, a
	 * source 2 ms, the /20 0.125 ms. */
	rr_rl_levels(&c, 1000, 0, 24, 64);
	cost.seed = 7;
	memcpy(cost.interval_ns, c.rl_interval_ns, sizeof(cost.interval_ns));
	memcpy(cost.len, c.rl_len, sizeof(cost.len));
	rr_rl_charge(t, &cost, ch, 2, now);
	memcpy(&v, ch[0].addr, 4);
	a = entry(t, rr_rl_hash(&c, AF_INET, 32, v, 0));
	assert_int_equal(a, now + 1000ULL * 2000000);
	/* The /24: both sources' time. */
	b = entry(t, rr_rl_hash(&c, AF_INET, 24, v, 0));
	assert_int_equal(b, now + 1500ULL * 1000000);
	assert_int_equal(entry(t, rr_rl_hash(&c, AF_INET, 20, v, 0)),
			 now + 1500ULL * 125000);
	memcpy(&v, ch[1].addr, 4);
	assert_int_equal(entry(t, rr_rl_hash(&c, AF_INET, 32, v, 0)),
			 now + 500ULL * 2000000);
	/* Charged again a second later: added to what is left. */
	rr_rl_charge(t, &cost, ch, 1, now + 1000000000ULL);
	memcpy(&v, ch[0].addr, 4);
	assert_int_equal(entry(t, rr_rl_hash(&c, AF_INET, 32, v, 0)),
			 a + 1000ULL * 2000000);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels_default),
		cmocka_unit_test(test_levels_other),
		cmocka_unit_test(test_source),
		cmocka_unit_test(test_charge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
