// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the settings: the command line (rr_options_parse), the INI
 * file (rr_config_load), how the two combine (flags win), the value
 * parsers they share, and the registry of functions the settings refer
 * to. A mistake must come back as an error with one line that names what
 * was wrong (the option, the value, the file and line), never as a
 * silently different configuration. config_file.c tests the file,
 * config_values.c the value parsers, config_settings.c that
 * every key and its flag agree.
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
#include "options.h"
#include "registry.h"
#include "config_test.h"
#include "shared/cache.h"
#include "testutil.h"

/* The [reqrouter] settings the flags and the file share, as they stand. */
static void check_main(const char *ifname, uint32_t queues, uint32_t threads,
		       uint32_t batch, enum rr_xdp_mode mode, bool busy_poll)
{
	assert_string_equal(cfg.ifname, ifname);
	assert_int_equal(cfg.queues, queues);
	assert_int_equal(cfg.threads, threads);
	assert_int_equal(cfg.batch, batch);
	assert_int_equal(cfg.mode, mode);
	assert_int_equal(cfg.busy_poll, busy_poll);
}

static void test_defaults(void **state)
{
	(void)state;
	assert_int_equal(PARSE("-i", "eth0"), RR_OPTS_RUN);
	check_main("eth0", 0, 1, 64, RR_MODE_AUTO, false);
	assert_int_equal(cfg.tx_csum, RR_TX_CSUM_AUTO);
	assert_int_equal(cfg.ncpus, 0);
	assert_string_equal(cfg.metrics_file, "");
	assert_false(cfg.list);
	assert_int_equal(cfg.verbose, 0);
	/* every registered function, on its own port, served */
	assert_int_equal(cfg.nservices, rr_registry_count());
	assert_int_equal(service("reverse")->port, 1232);
	assert_true(service("reverse")->enabled);
	assert_int_equal(service("echo")->port, 7);
	assert_true(service("echo")->enabled);
	/* a function's defaults, now rows of the settings table: the values
	 * reqrouter has always had */
	assert_int_equal(service("reverse")->max_amplification, 3);
	/* but a function that sizes its replies to the client's offer
	 * (RR_FN_CLIENT_SIZED) has no other bound by default */
	assert_true(service("dns")->fn->flags & RR_FN_CLIENT_SIZED);
	assert_int_equal(service("dns")->max_amplification, 0);
	assert_int_equal(service("reverse")->tier, RR_TIER_AUTO);
	assert_true(service("reverse")->cache); /* pure */
	assert_false(service("kv")->cache);	/* not pure */
	assert_false(service("kv")->enabled);	/* opt-in, no section */
	assert_int_equal(service("reverse")->cache_ttl, 60);
	assert_int_equal(service("reverse")->cache_max_payload,
			 RR_CACHE_MAX_PAYLOAD);
	assert_int_equal(service("reverse")->xdp_max_payload,
			 RR_XDP_MAX_PAYLOAD);
	assert_int_equal(service("reverse")->max_run_us, 10000);
	assert_int_equal(service("reverse")->quarantine_faults, 5);
	assert_int_equal(service("reverse")->quarantine_window, 10);
	assert_false(service("reverse")->quarantine_pass);
	assert_int_equal(service("reverse")->nallow, 0);
}

static void test_each_flag(void **state)
{
	(void)state;
	assert_int_equal(PARSE("-i", "veth1", "-q", "4", "-t", "16", "-b",
			       "256", "-B", "-N", "--cpus", "0-2,5",
			       "--metrics-file", "/tmp/m.prom", "-v", "-v"),
			 RR_OPTS_RUN);
	check_main("veth1", 4, 16, 256, RR_MODE_NATIVE, true);
	assert_int_equal(cfg.ncpus, 4);
	assert_int_equal(cfg.cpus[0], 0);
	assert_int_equal(cfg.cpus[2], 2);
	assert_int_equal(cfg.cpus[3], 5);
	assert_string_equal(cfg.metrics_file, "/tmp/m.prom");
	assert_int_equal(cfg.verbose, 2);

	/* the long forms, both spellings of a value */
	assert_int_equal(PARSE("--interface", "eth2", "--queues=64",
			       "--threads", "1", "--batch=1", "--skb",
			       "--busy-poll", "--cpus=7", "--verbose"),
			 RR_OPTS_RUN);
	check_main("eth2", 64, 1, 1, RR_MODE_SKB, true);
	assert_int_equal(cfg.ncpus, 1);
	assert_int_equal(cfg.cpus[0], 7);
	assert_int_equal(cfg.verbose, 1);

	assert_int_equal(PARSE("-i", "eth0", "-S"), RR_OPTS_RUN);
	assert_int_equal(cfg.mode, RR_MODE_SKB);

	assert_int_equal(PARSE("-i", "eth0", "--tx-csum", "soft"), RR_OPTS_RUN);
	assert_int_equal(cfg.tx_csum, RR_TX_CSUM_SOFT);
	assert_int_equal(PARSE("-i", "eth0", "--tx-csum=offload"), RR_OPTS_RUN);
	assert_int_equal(cfg.tx_csum, RR_TX_CSUM_OFFLOAD);
}

/* -p serves only the functions on the ports listed. */
static void test_ports_flag(void **state)
{
	(void)state;
	assert_int_equal(PARSE("-i", "eth0", "-p", "1232"), RR_OPTS_RUN);
	assert_true(service("reverse")->enabled);
	assert_false(service("echo")->enabled);

	assert_int_equal(PARSE("-i", "eth0", "--ports", "7"), RR_OPTS_RUN);
	assert_false(service("reverse")->enabled);
	assert_true(service("echo")->enabled);

	assert_int_equal(PARSE("-i", "eth0", "-p", "7,1232"), RR_OPTS_RUN);
	assert_true(service("reverse")->enabled);
	assert_true(service("echo")->enabled);

	if (!rr_registry_by_port(5555)) {
		EXPECT_ERROR("5555", "-i", "eth0", "-p", "5555");
		EXPECT_ERROR("5555", "-i", "eth0", "-p", "1232,5555");
	}
}

static void test_list_and_help(void **state)
{
	(void)state;
	/* --list needs no interface */
	assert_int_equal(PARSE("--list"), RR_OPTS_RUN);
	assert_true(cfg.list);
	assert_int_equal(PARSE("-h"), RR_OPTS_EXIT);
	/* --help wins over mistakes in the rest */
	assert_int_equal(PARSE("--help", "-q", "0"), RR_OPTS_EXIT);
}

static void test_bad_flags(void **state)
{
	(void)state;
	EXPECT_ERROR("'0'", "-i", "eth0", "-q", "0");
	EXPECT_ERROR("-q", "-i", "eth0", "-q", "0");
	EXPECT_ERROR("'abc'", "-i", "eth0", "-q", "abc");
	EXPECT_ERROR("'65'", "-i", "eth0", "-q", "65");
	EXPECT_ERROR("'-1'", "-i", "eth0", "-q", "-1");
	EXPECT_ERROR("'4x'", "-i", "eth0", "-q", "4x");
	EXPECT_ERROR("-t", "-i", "eth0", "-t", "99");
	EXPECT_ERROR("'0'", "-i", "eth0", "-t", "0");
	EXPECT_ERROR("'99999999999999999999'", "-i", "eth0", "-t",
		     "99999999999999999999");
	EXPECT_ERROR("-b", "-i", "eth0", "-b", "0");
	EXPECT_ERROR("'300'", "-i", "eth0", "-b", "300");
	EXPECT_ERROR("'257'", "-i", "eth0", "--batch", "257");
	EXPECT_ERROR("CPU", "-i", "eth0", "--cpus", "3-1");
	EXPECT_ERROR("CPU", "-i", "eth0", "--cpus", "1024");
	EXPECT_ERROR("twice", "-i", "eth0", "--cpus", "1,0-2");
	EXPECT_ERROR("CPU", "-i", "eth0", "--cpus", "x");
	EXPECT_ERROR("CPU", "-i", "eth0", "--cpus", "");
	EXPECT_ERROR("port", "-i", "eth0", "-p", "0");
	EXPECT_ERROR("'70000'", "-i", "eth0", "-p", "70000");
	EXPECT_ERROR("twice", "-i", "eth0", "-p", "7,7");
	EXPECT_ERROR("'x'", "-i", "eth0", "-p", "7,x");
	EXPECT_ERROR("port", "-i", "eth0", "-p", "");
	EXPECT_ERROR("-x", "-i", "eth0", "-x");
	EXPECT_ERROR("--bogus", "-i", "eth0", "--bogus");
	EXPECT_ERROR("--bogus", "-i", "eth0", "--bogus=1");
	EXPECT_ERROR("needs a value", "-i", "eth0", "-q");
	EXPECT_ERROR("-q", "-i", "eth0", "-q");
	EXPECT_ERROR("needs a value", "-i", "eth0", "--threads");
	EXPECT_ERROR("--threads", "-i", "eth0", "--threads");
	EXPECT_ERROR("needs a value", "-i");
	EXPECT_ERROR("unknown option", "-i", "eth0", "-Z");
	EXPECT_ERROR("-N and -S", "-i", "eth0", "-N", "-S");
	EXPECT_ERROR("-N and -S", "-S", "-i", "eth0", "--native");
	EXPECT_ERROR("-i", "-q", "2");
	EXPECT_ERROR("interface", "-t", "2");
	EXPECT_ERROR("interface name", "-i", "");
	EXPECT_ERROR("interface name", "-i", "a/b");
	EXPECT_ERROR("interface name", "-i", "abcdefghijklmnopq");
	EXPECT_ERROR("'eth1'", "-i", "eth0", "eth1");
	EXPECT_ERROR("metrics", "-i", "eth0", "--metrics-file", "");
}

/* Error paths leave no half-applied state behind for the next call. */
static void test_repeatable(void **state)
{
	(void)state;
	EXPECT_ERROR("-t", "-i", "eth0", "-t", "99");
	assert_int_equal(PARSE("-i", "eth0"), RR_OPTS_RUN);
	assert_int_equal(cfg.threads, 1);
	assert_int_equal(PARSE("-i", "eth0", "-t", "3"), RR_OPTS_RUN);
	assert_int_equal(cfg.threads, 3);
	assert_int_equal(PARSE("-i", "eth0"), RR_OPTS_RUN);
	assert_int_equal(cfg.threads, 1);
}

static void test_port_clash(void **state)
{
	char *path = t_write_file("/tmp/rr-test-conf",
				  "[function echo]\nport = 1232\n");

	(void)state;
	EXPECT_ERROR("1232", "-i", "eth0", "-c", path);
	check_err("echo");
	check_err("reverse");
	unlink(path);

	path = t_write_file("/tmp/rr-test-conf",
			    "[function reverse]\nport = 7\n");
	EXPECT_ERROR("port 7", "-i", "eth0", "-c", path);
	unlink(path);

	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\nport = 1232\nenabled = no\n");
	assert_int_equal(PARSE("-i", "eth0", "-c", path), RR_OPTS_RUN);
	assert_true(service("reverse")->enabled);
	assert_false(service("echo")->enabled);
	unlink(path);

	/* swapping two ports is fine */
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\nport = 1232\n"
			    "[function reverse]\nport = 7\n");
	assert_int_equal(PARSE("-i", "eth0", "-c", path), RR_OPTS_RUN);
	assert_int_equal(service("echo")->port, 1232);
	assert_int_equal(service("reverse")->port, 7);
	unlink(path);
}

static void test_nothing_to_serve(void **state)
{
	char *path = t_write_file("/tmp/rr-test-conf",
				  "[function echo]\nenabled = off\n"
				  "[function reverse]\nenabled = false\n");

	(void)state;
	if (rr_registry_count() == 2)
		EXPECT_ERROR("no function", "-i", "eth0", "-c", path);
	unlink(path);
}

static void test_example_config(void **state)
{
	const char *path = "configs/reqrouter.conf";

	(void)state;
	if (access(path, R_OK)) {
		/* run from elsewhere than the top of the tree */
		print_message("%s not found from here: not checked\n", path);
		return;
	}
	assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
	if (rr_config_load(&cfg, path, err, sizeof(err)))
		fail_msg("the example config does not load: %s", err);
}

/* Abuse limits: who may call a function and how much larger its reply
 * may be, and the user to run as. */
static void test_abuse_limits(void **state)
{
	static const uint8_t net4[4] = { 198, 18, 0, 0 };
	static const uint8_t net6[16] = { 0xfd, 0, 0x72, 0x72 };
	char *path;
	uint32_t i;

	(void)state;
	/* defaults: no allow-list, replies up to 3 times the request, or
	 * as large as the client offers for a function that sizes them
	 * itself (dns) */
	assert_int_equal(PARSE("-i", "eth0"), RR_OPTS_RUN);
	for (i = 0; i < cfg.nservices; i++) {
		const struct rr_service *svc = &cfg.services[i];

		assert_int_equal(svc->max_amplification,
				 svc->fn->flags & RR_FN_CLIENT_SIZED ? 0 : 3);
		assert_int_equal(svc->nallow, 0);
	}
	assert_string_equal(cfg.user, "");

	path = t_write_file("/tmp/rr-test-conf",
			    "[reqrouter]\n"
			    "user = nobody\n"
			    "[function reverse]\n"
			    "allow = 198.18.0.0/15, fd00:7272::/64\n"
			    "max_amplification = 0\n"
			    "[function echo]\n"
			    "max_amplification = 1000\n"
			    "[function dns]\n"
			    "max_amplification = 5\n");
	assert_int_equal(PARSE("-i", "eth0", "-c", path), RR_OPTS_RUN);
	assert_string_equal(cfg.user, "nobody");
	assert_int_equal(service("reverse")->max_amplification, 0);
	assert_int_equal(service("echo")->max_amplification, 1000);
	assert_int_equal(service("dns")->max_amplification, 5); /* as set */
	assert_int_equal(service("echo")->nallow, 0);
	assert_int_equal(service("reverse")->nallow, 2);
	assert_int_equal(service("reverse")->allow[0].family, AF_INET);
	assert_int_equal(service("reverse")->allow[0].len, 15);
	assert_memory_equal(service("reverse")->allow[0].addr, net4, 4);
	assert_int_equal(service("reverse")->allow[1].family, AF_INET6);
	assert_int_equal(service("reverse")->allow[1].len, 64);
	assert_memory_equal(service("reverse")->allow[1].addr, net6, 16);
	/* --user wins over the file */
	assert_int_equal(PARSE("-i", "eth0", "-c", path, "--user", "daemon"),
			 RR_OPTS_RUN);
	assert_string_equal(cfg.user, "daemon");
	unlink(path);

	EXPECT_ERROR("user", "-i", "eth0", "--user", "");
}

/* TCP: off but for functions flagged RR_FN_TCP, on with tcp = yes; the
 * [reqrouter] limits. A function's syscalls lines add up. */
static void test_tcp_and_syscalls(void **state)
{
	char *path;

	(void)state;
	assert_int_equal(PARSE("-i", "eth0"), RR_OPTS_RUN);
	assert_false(service("reverse")->tcp);
	assert_int_equal(cfg.tcp_max_connections, RR_DEFAULT_TCP_CONNECTIONS);
	assert_int_equal(cfg.tcp_max_per_source, RR_DEFAULT_TCP_PER_SOURCE);
	assert_int_equal(cfg.tcp_max_per_prefix, RR_DEFAULT_TCP_PER_PREFIX);
	assert_int_equal(cfg.tcp_v4_prefix, 24);
	assert_int_equal(cfg.tcp_v6_prefix, 56);
	assert_int_equal(cfg.tcp_idle_timeout_ms, RR_DEFAULT_TCP_IDLE_MS);
	assert_int_equal(cfg.tcp_idle_timeout_full_ms,
			 RR_DEFAULT_TCP_IDLE_FULL_MS);
	assert_int_equal(cfg.tcp_io_timeout_ms, RR_DEFAULT_TCP_IO_MS);
	assert_string_equal(service("reverse")->syscalls, "");

	path = t_write_file("/tmp/rr-test-conf", "[reqrouter]\n"
						 "tcp_max_connections = 10\n"
						 "tcp_max_per_source = 2\n"
						 "tcp_max_per_prefix = 4\n"
						 "tcp_v4_prefix = 16\n"
						 "tcp_v6_prefix = 64\n"
						 "tcp_idle_timeout = 500\n"
						 "tcp_idle_timeout_full = 50\n"
						 "tcp_io_timeout = 100\n"
						 "[function reverse]\n"
						 "tcp = yes\n"
						 "syscalls = openat\n"
						 "syscalls = read close\n");
	assert_int_equal(PARSE("-i", "eth0", "-c", path), RR_OPTS_RUN);
	assert_true(service("reverse")->tcp);
	assert_false(service("echo")->tcp);
	assert_int_equal(cfg.tcp_max_connections, 10);
	assert_int_equal(cfg.tcp_max_per_source, 2);
	assert_int_equal(cfg.tcp_max_per_prefix, 4);
	assert_int_equal(cfg.tcp_v4_prefix, 16);
	assert_int_equal(cfg.tcp_v6_prefix, 64);
	assert_int_equal(cfg.tcp_idle_timeout_ms, 500);
	assert_int_equal(cfg.tcp_idle_timeout_full_ms, 50);
	assert_int_equal(cfg.tcp_io_timeout_ms, 100);
	assert_string_equal(service("reverse")->syscalls, "openat read close");
	unlink(path);

	path = t_write_file("/tmp/rr-test-conf", "[reqrouter]\n"
						 "tcp_io_timeout = 5\n");
	assert_int_not_equal(PARSE("-i", "eth0", "-c", path), RR_OPTS_RUN);
	check_err("tcp_io_timeout");
	unlink(path);

	path = t_write_file("/tmp/rr-test-conf", "[reqrouter]\n"
						 "tcp_v4_prefix = 33\n");
	assert_int_not_equal(PARSE("-i", "eth0", "-c", path), RR_OPTS_RUN);
	check_err("tcp_v4_prefix");
	unlink(path);
}

static void test_tiers(void **state)
{
	char *path;
	uint32_t i;

	(void)state;
	assert_int_equal(PARSE("-i", "eth0"), RR_OPTS_RUN);
	for (i = 0; i < cfg.nservices; i++) {
		const struct rr_service *svc = &cfg.services[i];

		assert_int_equal(svc->tier, RR_TIER_AUTO);
		assert_int_equal(svc->cache, !!(svc->fn->flags & RR_FN_PURE));
		assert_int_equal(svc->cache_ttl, RR_DEFAULT_CACHE_TTL);
		assert_int_equal(svc->cache_max_payload, RR_CACHE_MAX_PAYLOAD);
		assert_int_equal(svc->xdp_max_payload, RR_XDP_MAX_PAYLOAD);
	}
	/* the bundled functions are pure and have XDP implementations */
	assert_true(service("reverse")->fn->flags & RR_FN_PURE);
	assert_true(service("echo")->fn->flags & RR_FN_PURE);
	assert_non_null(rr_registry_xdp("reverse"));
	assert_non_null(rr_registry_xdp("echo"));
	assert_null(rr_registry_xdp("nosuch"));

	path = t_write_file("/tmp/rr-test-conf", "[function reverse]\n"
						 "tier = user\n"
						 "cache = no\n"
						 "cache_ttl = 0\n"
						 "cache_max_payload = 64\n"
						 "xdp_max_payload = 100\n"
						 "[function echo]\n"
						 "tier = xdp\n");
	assert_int_equal(PARSE("-i", "eth0", "-c", path), RR_OPTS_RUN);
	assert_int_equal(service("reverse")->tier, RR_TIER_USER);
	assert_false(service("reverse")->cache);
	assert_int_equal(service("reverse")->cache_ttl, 0);
	assert_int_equal(service("reverse")->cache_max_payload, 64);
	assert_int_equal(service("reverse")->xdp_max_payload, 100);
	assert_int_equal(service("echo")->tier, RR_TIER_XDP);
	assert_true(service("echo")->cache);
	/* --tier and --no-cache win over every function's own setting */
	assert_int_equal(
		PARSE("-i", "eth0", "-c", path, "--tier", "user", "--no-cache"),
		RR_OPTS_RUN);
	assert_int_equal(service("echo")->tier, RR_TIER_USER);
	assert_false(service("echo")->cache);
	unlink(path);

	EXPECT_ERROR("tier must be auto, xdp or user", "-i", "eth0", "--tier",
		     "fast");
}

static void test_registry(void **state)
{
	const struct rr_function *rev, *echo, *f;
	size_t i, n = rr_registry_count();

	(void)state;
	assert_int_equal(rr_registry_check(err, sizeof(err)), 0);
	assert_true(n >= 2);
	rev = rr_registry_find("reverse");
	echo = rr_registry_find("echo");
	assert_non_null(rev);
	assert_non_null(echo);
	assert_int_equal(rev->port, 1232);
	assert_int_equal(echo->port, 7);
	assert_ptr_equal(rr_registry_by_port(1232), rev);
	assert_ptr_equal(rr_registry_by_port(7), echo);
	assert_null(rr_registry_find("nosuch"));
	assert_null(rr_registry_find("Reverse"));
	assert_null(rr_registry_find(""));
	assert_null(rr_registry_find(NULL));
	assert_null(rr_registry_by_port(0));
	assert_null(rr_registry_at(n));
	for (i = 0; i < n; i++) {
		f = rr_registry_at(i);
		assert_non_null(f);
		assert_non_null(f->handler);
		assert_non_null(f->description);
		assert_ptr_equal(rr_registry_find(f->name), f);
		assert_ptr_equal(rr_registry_by_port(f->port), f);
	}

	/* the bundled functions do what they are registered for */
	{
		uint8_t buf[8] = "abcde";
		struct rr_request req = { .family = AF_INET };

		assert_int_equal(rev->handler(&req, buf, 5, sizeof(buf)), 5);
		assert_memory_equal(buf, "edcba", 5);
		assert_int_equal(echo->handler(&req, buf, 5, sizeof(buf)), 5);
		assert_memory_equal(buf, "edcba", 5);
		assert_int_equal(rev->handler(&req, buf, 0, sizeof(buf)), 0);
		assert_int_equal(rev->handler(&req, buf, 4, sizeof(buf)), 4);
		assert_memory_equal(buf, "bcde", 4);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_each_flag),
		cmocka_unit_test(test_ports_flag),
		cmocka_unit_test(test_list_and_help),
		cmocka_unit_test(test_bad_flags),
		cmocka_unit_test(test_repeatable),
		cmocka_unit_test(test_port_clash),
		cmocka_unit_test(test_nothing_to_serve),
		cmocka_unit_test(test_example_config),
		cmocka_unit_test(test_abuse_limits),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_tiers),
		cmocka_unit_test(test_tcp_and_syscalls),
	};

	return cmocka_run_group_tests_name("flags", tests, NULL, NULL) |
	       run_file_tests() | run_value_tests() | run_settings_tests();
}
