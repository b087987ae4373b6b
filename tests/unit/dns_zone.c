// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/dns program (dns.c): zone files and settings,
 * what the function refuses and the sentence it says why in, several
 * zones at once, a config file, and a caller without state.
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

/* What knotd makes of a zone file, and DNAME. */
static void test_zone_rules(void **state)
{
	static const struct exchange xs[] = {
		/* An RRSIG answers with its original TTL field. */
		{ { "sig.t", 46, 1, 0 },
		  { 0, AA, 1, 0, 0 },
		  {
			  { "sig.t.", 46, 3600, NULL },
		  } },
		/* An RRset's TTL is its last record's; a record twice is once. */
		{ { "ttl.t", 1, 1, 0 },
		  { 0, AA, 2, 0, 0 },
		  {
			  { "ttl.t.", 1, 20, "192.0.2.3" },
			  { "ttl.t.", 1, 20, "192.0.2.4" },
		  } },
		{ { "dup.t", 1, 1, 0 }, { 0, AA, 1, 0, 0 }, {} },
		/* What is outside the zone is left out of it. */
		{ { "out.of.zone", 1, 1, 0 }, { 5, 0, 0, 0, 0 }, {} },
		/* DNAME: the DNAME, a CNAME made for the name, then its target. */
		{ { "X.dn.t", 1, 1, 0 },
		  { 0, AA, 3, 0, 0 },
		  {
			  { "dn.t.", 39, 100, NULL },
			  { "X.dn.t.", 5, 100, "x.target.t." },
			  { "x.target.t.", 1, 100, "192.0.2.7" },
		  } },
		{ { "y.dn.t", 1, 1, 0 }, { 3, AA, 2, 1, 0 }, {} },
	};
	char *zone = t_write_file(
		"/tmp/rr-test-dns",
		"$ORIGIN t.\n$TTL 100\n@ SOA ns admin 1 2 3 4 50\n@ NS ns\n"
		"ns A 192.0.2.1\nsig A 192.0.2.2\n"
		"sig RRSIG A 8 2 3600 20300101000000 20200101000000 1 t. AAAA\n"
		"ttl 10 A 192.0.2.3\nttl 20 A 192.0.2.4\n"
		"dup A 192.0.2.5\ndup A 192.0.2.5\nOut.Of.Zone. A 192.0.2.9\n"
		"dn DNAME target\ntarget A 192.0.2.6\nx.target A 192.0.2.7\n");
	const char *kv[] = { "zone", zone };

	(void)state;
	if (load(kv, 1))
		fail_msg("refused: %s", err);
	check_exchanges(xs, ARRAY_SIZE(xs));
	unlink(zone);
	load_example();
}

static void check_init_error(const char *const *kv, size_t n, const char *what)
{
	if (load(kv, n) != -EINVAL)
		fail_msg("accepted, or not with -EINVAL: '%s'", err);
	if (!strstr(err, what))
		fail_msg("error \"%s\" does not mention \"%s\"", err, what);
	if (strchr(err, '\n'))
		fail_msg("error \"%s\" is more than one line", err);
	if (!strstr(err, "function dns"))
		fail_msg("error \"%s\" does not name the function", err);
}

static void test_init_errors(void **state)
{
	static const struct exchange xs[] = {
		{ { "a.rel.example", 1, 1, 0 }, { 3, AA, 0, 1, 0 }, {} },
	};
	char *bad = t_write_file("/tmp/rr-test-dns",
				 "$ORIGIN t.\n@ SOA a. b. 1 2 3 4 5\n"
				 "@ NS a.\nwww A 192.0.2.300\n");
	char *nosoa = t_write_file("/tmp/rr-test-dns",
				   "$ORIGIN t.\nwww A 192.0.2.1\n");
	char *cname = t_write_file("/tmp/rr-test-dns",
				   "$ORIGIN t.\n@ SOA a. b. 1 2 3 4 5\n"
				   "@ NS a.\nx CNAME y\nx A 192.0.2.1\n");
	char *relative = t_write_file("/tmp/rr-test-dns",
				      "@ SOA a b 1 2 3 4 5\n@ NS a\n");
	char *chaos = t_write_file("/tmp/rr-test-dns",
				   "$ORIGIN t.\n@ SOA a. b. 1 2 3 4 5\n"
				   "x CH TXT \"hi\"\n");
	char *twice = t_write_file("/tmp/rr-test-dns",
				   "$ORIGIN t.\n@ SOA a. b. 1 2 3 4 5\n"
				   "@ SOA a. b. 9 2 3 4 5\n@ NS a.\n");
	char where[600];
	struct reply r;
	struct q q;

	(void)state;
	{
		const char *kv[] = { "zone", ZONE, "colour", "red" };

		check_init_error(
			kv, 2,
			"test.conf:11: function dns: unknown key 'colour'");
	}
	{
		const char *kv[] = { "zone", "/nonexistent/x.zone" };

		check_init_error(kv, 1, "test.conf:10:");
		check_init_error(kv, 1,
				 "cannot read zone file /nonexistent/x.zone");
	}
	{
		const char *kv[] = { "zone", bad };

		/* The zone file's own line, and libzscanner's reason. */
		snprintf(where, sizeof(where), "%s:4: ", bad);
		check_init_error(kv, 1, where);
		check_init_error(kv, 1, "IPv4");
	}
	{
		const char *kv[] = { "zone", nosoa };

		check_init_error(kv, 1,
				 "no SOA record to take its origin from");
	}
	{
		const char *kv[] = { "zone", where };

		snprintf(where, sizeof(where), "t %s", nosoa);
		check_init_error(kv, 1, "has no SOA record for t.");
	}
	{
		const char *kv[] = { "zone", cname };

		snprintf(where, sizeof(where),
			 "%s:4: another record beside CNAME at x.t.", cname);
		check_init_error(kv, 1, where);
	}
	{
		/* Relative names need the origin in the setting... */
		const char *kv[] = { "zone", relative };

		check_init_error(kv, 1, "ORIGIN");
	}
	{
		const char *kv[] = { "zone", where };

		snprintf(where, sizeof(where), "rel.example %s", relative);
		assert_int_equal(load(kv, 1), 0);
		check_exchanges(xs, ARRAY_SIZE(xs));
	}
	{
		/* libzscanner reads class IN only. */
		const char *kv[] = { "zone", chaos };

		snprintf(where, sizeof(where), "%s:3: unsupported record type",
			 chaos);
		check_init_error(kv, 1, where);
	}
	{
		/* A second SOA is ignored, as knotd ignores it. */
		const char *kv[] = { "zone", twice };

		assert_int_equal(load(kv, 1), 0);
		query(&q, "t", 6, 1, 0);
		ask(&q, &r);
		check_rr(&r.rr[0], "t.", 6, 3600, "a. b. 1 5");
	}
	{
		/* One value "ORIGIN FILE": the literals are joined on
		 * purpose (the parentheses tell clang so). */
		const char *kv[] = { "zone", ZONE, "zone",
				     ("example.com. " ZONE) };

		check_init_error(
			kv, 2,
			"test.conf:11: function dns: zone example.com. is given twice");
	}
	{
		const char *kv[] = { "zone", "a b c" };

		check_init_error(kv, 1, "zone takes [ORIGIN] FILE");
	}
	{
		const char *kv[] = { "zone", ZONE, "udp_max_payload", "100" };

		check_init_error(
			kv, 2,
			"function dns: udp_max_payload must be a number from 512 to 4096, not '100'");
	}
	check_init_error(NULL, 0, "needs at least one 'zone = [ORIGIN] FILE'");
	unlink(bad);
	unlink(nosoa);
	unlink(cname);
	unlink(relative);
	unlink(chaos);
	unlink(twice);
	load_example();
}

/* From a config file, as reqrouter reads it: reqrouter's own keys stay
 * with it, the others reach init() with their lines. */
static void test_config_file(void **state)
{
	static struct rr_config cfg; /* large: not on the stack */
	const struct rr_service *svc = NULL;
	char *path = t_write_file(
		"/tmp/rr-test-dns",
		"[function dns]\nport = 5353\nmax_amplification = 0\n"
		"zone = example.com " ZONE "\nudp_max_payload = 4096\n");
	struct reply r;
	struct q q;
	uint32_t i;

	(void)state;
	assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
	if (rr_config_load(&cfg, path, err, sizeof(err)))
		fail_msg("config refused: %s", err);
	for (i = 0; i < cfg.nservices; i++)
		if (cfg.services[i].fn == fn)
			svc = &cfg.services[i];
	assert_non_null(svc);
	assert_true(svc->enabled); /* opt-in: the section turns it on */
	assert_int_equal(svc->port, 5353);
	assert_int_equal(svc->max_amplification, 0);
	assert_int_equal(svc->nsettings, 2);
	assert_string_equal(svc->settings[0].key, "zone");
	assert_int_equal(svc->settings[1].line, 5);
	rr_fn_instance_free(inst);
	assert_int_equal(rr_fn_instance_new(fn, svc->port, svc->settings,
					    svc->nsettings, 2, &ctrs, &inst,
					    err, sizeof(err)),
			 0);
	query(&q, "huge.example.com", 16, 1, 0);
	add_opt(&q, 4096, 0, 0, NULL, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 1);
	rr_config_free(&cfg);
	unlink(path);
	load_example();
}

/* Without its state (a caller that ran no init), nothing is answered
 * and nothing is touched. */
static void test_no_state(void **state)
{
	struct rr_request req = { 0 };
	uint8_t buf[64] = { 0 };
	uint64_t c[RR_FN_MAX_COUNTERS] = { 0 };

	(void)state;
	req.counters = c;
	assert_int_equal(fn->handler(&req, buf, sizeof(buf), sizeof(buf)),
			 RR_NO_REPLY);
}

int run_zone_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zone_rules),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_no_state),
	};

	return cmocka_run_group_tests_name("zones", tests, setup, teardown);
}
