// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/config program (config.c): the value parsers
 * the file and the flags share (src/lib/config_values.c, src/lib/parse.c):
 * allow-lists, CPU lists, numbers and booleans.
 */
#include <errno.h>
#include <limits.h>
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
#include "options.h"
#include "parse.h"
#include "registry.h"
#include "config_test.h"
#include "testutil.h"

static void test_parse_cidrs(void **state)
{
	static const uint8_t host[4] = { 192, 0, 2, 7 };
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xaa };
	struct rr_cidr c[RR_MAX_ALLOW_PER_FN + 1];
	char many[RR_MAX_ALLOW_PER_FN * 16 + 32];
	uint32_t n = 0, i;

	(void)state;
	/* commas and blanks both separate */
	assert_int_equal(rr_parse_cidrs("192.0.2.7,2001:db8:aa00::/40 ::1\t"
					"0.0.0.0/0, ::/0",
					c, RR_MAX_ALLOW_PER_FN, &n, err,
					sizeof(err)),
			 0);
	assert_int_equal(n, 5);
	assert_int_equal(c[0].family, AF_INET);
	assert_int_equal(c[0].len, 32); /* a bare address is one host */
	assert_memory_equal(c[0].addr, host, 4);
	assert_int_equal(c[1].family, AF_INET6);
	assert_int_equal(c[1].len, 40);
	assert_memory_equal(c[1].addr, v6, 16);
	assert_int_equal(c[2].family, AF_INET6);
	assert_int_equal(c[2].len, 128);
	assert_int_equal(c[2].addr[15], 1);
	assert_int_equal(c[3].family, AF_INET);
	assert_int_equal(c[3].len, 0);
	assert_int_equal(c[4].family, AF_INET6);
	assert_int_equal(c[4].len, 0);

	n = 99;
	assert_int_equal(
		rr_parse_cidrs("10.0.0.1/24", c, 8, &n, err, sizeof(err)),
		-EINVAL);
	check_err("host bits");
	assert_int_equal(
		rr_parse_cidrs("2001:db8::1/64", c, 8, &n, err, sizeof(err)),
		-EINVAL);
	check_err("host bits");
	assert_int_equal(
		rr_parse_cidrs("10.0.0.0/33", c, 8, &n, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(rr_parse_cidrs("::/129", c, 8, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(
		rr_parse_cidrs("10.0.0.0/", c, 8, &n, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(rr_parse_cidrs("10.0.0/8", c, 8, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(
		rr_parse_cidrs("10.0.0.256", c, 8, &n, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(
		rr_parse_cidrs("example.com", c, 8, &n, err, sizeof(err)),
		-EINVAL);
	check_err("example.com");
	assert_int_equal(rr_parse_cidrs("", c, 8, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cidrs(" , ", c, 8, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(n, 99);

	/* a second list is appended to the first */
	n = 0;
	assert_int_equal(
		rr_parse_cidrs("10.0.0.0/8", c, 8, &n, err, sizeof(err)), 0);
	assert_int_equal(rr_parse_cidrs("fd00::/8, 192.0.2.0/24", c, 8, &n, err,
					sizeof(err)),
			 0);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].addr[0], 10);
	assert_int_equal(c[2].addr[0], 192);

	/* RR_MAX_ALLOW_PER_FN prefixes fit, one more does not */
	n = 0;
	many[0] = '\0';
	for (i = 0; i < RR_MAX_ALLOW_PER_FN; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 "%s10.0.%u.0/24", i ? "," : "", i);
	assert_int_equal(rr_parse_cidrs(many, c, RR_MAX_ALLOW_PER_FN, &n, err,
					sizeof(err)),
			 0);
	assert_int_equal(n, RR_MAX_ALLOW_PER_FN);
	assert_int_equal(c[RR_MAX_ALLOW_PER_FN - 1].addr[2],
			 RR_MAX_ALLOW_PER_FN - 1);
	strcat(many, ",10.1.0.0/16");
	n = 0;
	assert_int_equal(rr_parse_cidrs(many, c, RR_MAX_ALLOW_PER_FN, &n, err,
					sizeof(err)),
			 -EINVAL);
	/* a full list takes no more */
	n = RR_MAX_ALLOW_PER_FN;
	assert_int_equal(rr_parse_cidrs("10.2.0.0/16", c, RR_MAX_ALLOW_PER_FN,
					&n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(n, RR_MAX_ALLOW_PER_FN);
}

/* A function's `workers` (steering = groups): a mask of threads per
 * class, the groups separated by '|'. */
static void test_parse_workers(void **state)
{
	uint32_t m[RR_XDP_CLASSES] = { 77, 77, 77, 77 };

	(void)state;
	assert_int_equal(rr_parse_workers("", m, err, sizeof(err)), 0);
	assert_int_equal(m[0] | m[1] | m[2] | m[3], 0); /* every thread */
	assert_int_equal(rr_parse_workers("1", m, err, sizeof(err)), 0);
	assert_int_equal(m[0], 0x2);
	assert_int_equal(m[1], 0);
	assert_int_equal(rr_parse_workers("0-1,3", m, err, sizeof(err)), 0);
	assert_int_equal(m[0], 0xb);
	assert_int_equal(rr_parse_workers("2,2", m, err, sizeof(err)), 0);
	assert_int_equal(m[0], 0x4);
	assert_int_equal(rr_parse_workers("0-15", m, err, sizeof(err)), 0);
	assert_int_equal(m[0], 0xffff);
	/* a group per class, blanks allowed */
	assert_int_equal(rr_parse_workers("0 | 1-3", m, err, sizeof(err)), 0);
	assert_int_equal(m[0], 0x1);
	assert_int_equal(m[1], 0xe);
	assert_int_equal(m[2], 0);
	assert_int_equal(rr_parse_workers("0|1|2|3", m, err, sizeof(err)), 0);
	assert_int_equal(m[3], 0x8);
	assert_int_equal(rr_parse_workers(" 0 , 2 - 3 ", m, err, sizeof(err)),
			 0);
	assert_int_equal(m[0], 0xd);

	assert_int_equal(rr_parse_workers("0|1|2|3|4", m, err, sizeof(err)),
			 -EINVAL);
	check_err("more than 4 groups");
	assert_int_equal(rr_parse_workers("0||1", m, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_workers("0|", m, err, sizeof(err)), -EINVAL);
	assert_int_equal(rr_parse_workers("16", m, err, sizeof(err)), -EINVAL);
	assert_int_equal(rr_parse_workers("3-1", m, err, sizeof(err)), -EINVAL);
	assert_int_equal(rr_parse_workers(",", m, err, sizeof(err)), -EINVAL);
	assert_int_equal(rr_parse_workers("x", m, err, sizeof(err)), -EINVAL);
	assert_int_equal(rr_check_workers("0-1", err, sizeof(err)), 0);
	assert_int_equal(rr_check_workers("1-", err, sizeof(err)), -EINVAL);
}

static void test_parse_cpus(void **state)
{
	int cpus[RR_MAX_CPUS];
	uint32_t n = 0, i;

	(void)state;
	assert_int_equal(rr_parse_cpus("0", cpus, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(rr_parse_cpus("0-3,6", cpus, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 5);
	assert_int_equal(cpus[3], 3);
	assert_int_equal(cpus[4], 6);
	/* the order given is the order workers are pinned in */
	assert_int_equal(rr_parse_cpus("5,2,9-10", cpus, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, 4);
	assert_int_equal(cpus[0], 5);
	assert_int_equal(cpus[1], 2);
	assert_int_equal(cpus[2], 9);
	assert_int_equal(cpus[3], 10);
	assert_int_equal(rr_parse_cpus("4-4", cpus, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cpus[0], 4);
	assert_int_equal(rr_parse_cpus("0-1023", cpus, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, RR_MAX_CPUS);
	for (i = 0; i < n; i++)
		assert_int_equal(cpus[i], (int)i);

	n = 77;
	assert_int_equal(rr_parse_cpus("3-1", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(n, 77); /* untouched on error */
	assert_int_equal(rr_parse_cpus("1024", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cpus("0-1024", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cpus("2,2", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	check_err("twice");
	assert_int_equal(rr_parse_cpus("0-3,2", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cpus("", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cpus(",", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cpus("1-", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cpus("-1", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cpus("1-2-3", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cpus("a", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_cpus("0x1", cpus, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(n, 77);
}

static void test_parse_values(void **state)
{
	uint16_t ports[RR_MAX_SLOTS];
	char many[256];
	uint32_t v = 0, n = 0, i;
	unsigned long long ull = 0;
	bool b = false;
	enum rr_xdp_mode mode = RR_MODE_AUTO;
	enum rr_tx_csum csum = RR_TX_CSUM_AUTO;

	(void)state;
	/* the one number parser: a base, an end check, a range */
	assert_int_equal(rr_parse_ull("0x10", 0, 0, 100, &ull), 0);
	assert_int_equal(ull, 16);
	assert_int_equal(rr_parse_ull("0x10", 10, 0, 100, &ull), -EINVAL);
	assert_int_equal(rr_parse_ull("101", 0, 0, 100, &ull), -ERANGE);
	assert_int_equal(
		rr_parse_ull("18446744073709551616", 10, 0, ULLONG_MAX, &ull),
		-ERANGE);
	assert_int_equal(rr_parse_ull(" 1", 10, 0, 9, &ull), -EINVAL);
	assert_int_equal(rr_errf(err, sizeof(err), "%s:%d: %s", "f", 3, "x"),
			 -EINVAL);
	assert_string_equal(err, "f:3: x");
	assert_int_equal(rr_parse_u32("007", 1, 10, &v, "x", err, sizeof(err)),
			 0);
	assert_int_equal(v, 7);
	assert_int_equal(rr_parse_u32("4294967295", 0, UINT32_MAX, &v, "x", err,
				      sizeof(err)),
			 0);
	assert_int_equal(v, UINT32_MAX);
	v = 5;
	assert_int_equal(rr_parse_u32("4294967296", 0, UINT32_MAX, &v, "x", err,
				      sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_u32("+3", 0, 10, &v, "x", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_u32("-3", 0, 10, &v, "x", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_u32("3 ", 0, 10, &v, "x", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_u32("", 0, 10, &v, "x", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(
		rr_parse_u32("11", 0, 10, &v, "the knob", err, sizeof(err)),
		-EINVAL);
	check_err("the knob");
	check_err("0 to 10");
	assert_int_equal(v, 5);

	assert_int_equal(rr_parse_bool("YES", &b, "x", err, sizeof(err)), 0);
	assert_true(b);
	assert_int_equal(rr_parse_bool("off", &b, "x", err, sizeof(err)), 0);
	assert_false(b);
	assert_int_equal(rr_parse_bool("true", &b, "x", err, sizeof(err)), 0);
	assert_true(b);
	assert_int_equal(rr_parse_bool("0", &b, "x", err, sizeof(err)), 0);
	assert_false(b);
	assert_int_equal(rr_parse_bool("1", &b, "x", err, sizeof(err)), 0);
	assert_true(b);
	assert_int_equal(rr_parse_bool("no", &b, "x", err, sizeof(err)), 0);
	assert_false(b);
	assert_int_equal(rr_parse_bool("y", &b, "x", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_bool("", &b, "x", err, sizeof(err)), -EINVAL);

	assert_int_equal(rr_parse_mode("native", &mode, err, sizeof(err)), 0);
	assert_int_equal(mode, RR_MODE_NATIVE);
	assert_int_equal(rr_parse_mode("skb", &mode, err, sizeof(err)), 0);
	assert_int_equal(mode, RR_MODE_SKB);
	assert_int_equal(rr_parse_mode("auto", &mode, err, sizeof(err)), 0);
	assert_int_equal(mode, RR_MODE_AUTO);
	assert_int_equal(rr_parse_mode("xdp", &mode, err, sizeof(err)),
			 -EINVAL);

	assert_int_equal(rr_parse_tx_csum("offload", &csum, err, sizeof(err)),
			 0);
	assert_int_equal(csum, RR_TX_CSUM_OFFLOAD);
	assert_int_equal(rr_parse_tx_csum("soft", &csum, err, sizeof(err)), 0);
	assert_int_equal(csum, RR_TX_CSUM_SOFT);
	assert_int_equal(rr_parse_tx_csum("auto", &csum, err, sizeof(err)), 0);
	assert_int_equal(csum, RR_TX_CSUM_AUTO);
	assert_int_equal(rr_parse_tx_csum("Soft", &csum, err, sizeof(err)),
			 -EINVAL);
	check_err("auto, soft or offload");
	assert_int_equal(csum, RR_TX_CSUM_AUTO);

	assert_int_equal(rr_parse_ports("1,65535,1232", ports, RR_MAX_SLOTS, &n,
					err, sizeof(err)),
			 0);
	assert_int_equal(n, 3);
	assert_int_equal(ports[0], 1);
	assert_int_equal(ports[1], 65535);
	assert_int_equal(ports[2], 1232);
	/* RR_MAX_SLOTS ports are fine, one more is not */
	many[0] = '\0';
	for (i = 1; i <= RR_MAX_SLOTS; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 "%s%u", i > 1 ? "," : "", 1000 + i);
	assert_int_equal(
		rr_parse_ports(many, ports, RR_MAX_SLOTS, &n, err, sizeof(err)),
		0);
	assert_int_equal(n, RR_MAX_SLOTS);
	strcat(many, ",2000");
	assert_int_equal(
		rr_parse_ports(many, ports, RR_MAX_SLOTS, &n, err, sizeof(err)),
		-EINVAL);
	check_err("32");
}

static bool vlan_on(const struct rr_vlans *v, uint32_t id)
{
	return v->ids[id / 64] & (1ULL << (id % 64));
}

/* vlans: host, any, or IDs and ranges with host or not. */
static void test_parse_vlans(void **state)
{
	struct rr_vlans v;

	assert_int_equal(rr_parse_vlans("host", &v, "vlans", err, sizeof(err)),
			 0);
	assert_false(v.any);
	assert_false(v.no_host);
	assert_false(vlan_on(&v, 100));
	assert_int_equal(rr_parse_vlans("any", &v, "vlans", err, sizeof(err)),
			 0);
	assert_true(v.any);
	assert_int_equal(rr_parse_vlans("100, 200-202,4094", &v, "vlans", err,
					sizeof(err)),
			 0);
	assert_true(v.no_host);
	assert_true(vlan_on(&v, 100) && vlan_on(&v, 200) && vlan_on(&v, 201) &&
		    vlan_on(&v, 202) && vlan_on(&v, 4094));
	assert_false(vlan_on(&v, 199) || vlan_on(&v, 203) || vlan_on(&v, 0));
	assert_int_equal(
		rr_parse_vlans("host,7", &v, "vlans", err, sizeof(err)), 0);
	assert_false(v.no_host);
	assert_true(vlan_on(&v, 7));
	/* Out of range, backwards, any with others, nothing. */
	assert_int_equal(rr_parse_vlans("0", &v, "vlans", err, sizeof(err)),
			 -EINVAL);
	check_err("VLAN ID");
	assert_int_equal(rr_parse_vlans("4095", &v, "vlans", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(
		rr_parse_vlans("300-200", &v, "vlans", err, sizeof(err)),
		-EINVAL);
	assert_int_equal(
		rr_parse_vlans("any,100", &v, "vlans", err, sizeof(err)),
		-EINVAL);
	check_err("any answers every tag");
	assert_int_equal(rr_parse_vlans(",", &v, "vlans", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rr_parse_vlans("", &v, "vlans", err, sizeof(err)),
			 -EINVAL);
}

/* A canary's share (deploy --canary, the `canary` key), the key's PATH
 * PERCENT, and canary_rollback's words. */
static void test_parse_canary(void **state)
{
	static const char *const bad[] = { "0",	 "0.9", "99.1", "100",
					   "",	 "5.",	".5",	"5.55",
					   "5%", "-5",	"1e1",	"050a" };
	unsigned int permille;
	char path[64];
	uint32_t mask;
	size_t i;

	(void)state;
	assert_int_equal(
		rr_parse_canary_share("5", &permille, err, sizeof(err)), 0);
	assert_int_equal(permille, 50);
	assert_int_equal(
		rr_parse_canary_share("12.5", &permille, err, sizeof(err)), 0);
	assert_int_equal(permille, 125);
	assert_int_equal(
		rr_parse_canary_share("1", &permille, err, sizeof(err)), 0);
	assert_int_equal(permille, 10);
	assert_int_equal(
		rr_parse_canary_share("99.0", &permille, err, sizeof(err)), 0);
	assert_int_equal(permille, 990);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rr_parse_canary_share(bad[i], &permille, err,
					  sizeof(err)) != -EINVAL)
			fail_msg("share '%s' taken", bad[i]);
	check_err("1 to 99");

	assert_int_equal(rr_parse_canary("/a b/c.so 7.5", path, sizeof(path),
					 &permille, err, sizeof(err)),
			 0);
	assert_string_equal(path, "/a b/c.so");
	assert_int_equal(permille, 75);
	assert_int_equal(rr_check_canary("c.so 5", err, sizeof(err)), -EINVAL);
	check_err("absolute path");
	assert_int_equal(rr_check_canary("/c.so", err, sizeof(err)), -EINVAL);
	assert_int_equal(rr_check_canary("/c.so 0", err, sizeof(err)), -EINVAL);

	assert_int_equal(rr_parse_canary_rollback("", &mask, err, sizeof(err)),
			 0);
	assert_int_equal(mask,
			 RR_CANARY_FAULTS | RR_CANARY_ERRORS | RR_CANARY_P99);
	assert_int_equal(
		rr_parse_canary_rollback("none", &mask, err, sizeof(err)), 0);
	assert_int_equal(mask, 0);
	assert_int_equal(rr_parse_canary_rollback("p99, errors", &mask, err,
						  sizeof(err)),
			 0);
	assert_int_equal(mask, RR_CANARY_P99 | RR_CANARY_ERRORS);
	assert_int_equal(
		rr_check_canary_rollback("faults,latency", err, sizeof(err)),
		-EINVAL);
	check_err("not 'latency'");
}

/* The functions linked in are found by name and by port. */
/* Tiers and the reply cache: defaults, file keys, the flags that
 * override them, and one-line errors. */

int run_value_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_cidrs),
		cmocka_unit_test(test_parse_cpus),
		cmocka_unit_test(test_parse_workers),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_parse_vlans),
		cmocka_unit_test(test_parse_canary),
	};

	return cmocka_run_group_tests_name("values", tests, NULL, NULL);
}
