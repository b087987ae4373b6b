// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/config program (config.c): the INI file. What
 * it sets, how flags override it, and every mistake in it reported as
 * FILE:LINE and the word that is wrong, through rr_config_load() and the
 * command line alike.
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
#include "testutil.h"
#include "util.h"

static const char full_conf[] = "; a comment\n"
				"[reqrouter]\n"
				"interface = veth7\n"
				"queues = 2\n"
				"threads = 4\n"
				"batch = 32\n"
				"cpus = 0-1,3\n"
				"mode = skb\n"
				"busy_poll = yes\n"
				"tx_csum = soft\n"
				"metrics_file = /tmp/rr.prom\n"
				"\n"
				"[function reverse]\n"
				"port = 9000\n"
				"\n"
				"[function echo]\n"
				"enabled = no\n";

static void test_config_file(void **state)
{
	char *path = t_write_file("/tmp/rr-test-conf", full_conf);

	(void)state;
	assert_int_equal(PARSE("-c", path), RR_OPTS_RUN);
	assert_string_equal(cfg.ifname, "veth7");
	assert_int_equal(cfg.queues, 2);
	assert_int_equal(cfg.threads, 4);
	assert_int_equal(cfg.batch, 32);
	assert_int_equal(cfg.ncpus, 3);
	assert_int_equal(cfg.cpus[2], 3);
	assert_int_equal(cfg.mode, RR_MODE_SKB);
	assert_true(cfg.busy_poll);
	assert_int_equal(cfg.tx_csum, RR_TX_CSUM_SOFT);
	assert_string_equal(cfg.metrics_file, "/tmp/rr.prom");
	assert_int_equal(service("reverse")->port, 9000);
	assert_true(service("reverse")->enabled);
	assert_false(service("echo")->enabled);

	/* -p names the port the file moved the function to */
	assert_int_equal(PARSE("-c", path, "-p", "9000"), RR_OPTS_RUN);
	assert_true(service("reverse")->enabled);
	if (!rr_registry_by_port(1232) ||
	    !strcmp(rr_registry_by_port(1232)->name, "reverse"))
		EXPECT_ERROR("1232", "-c", path, "-p", "1232");
	unlink(path);
}

/* Flags win over the file, wherever they are on the command line. */
static void test_flags_override_file(void **state)
{
	char *path = t_write_file("/tmp/rr-test-conf", full_conf);

	(void)state;
	assert_int_equal(PARSE("-c", path, "-i", "eth1", "-t", "2", "-N", "-b",
			       "16", "--cpus", "1", "--metrics-file", "/tmp/o"),
			 RR_OPTS_RUN);
	assert_string_equal(cfg.ifname, "eth1");
	assert_int_equal(cfg.threads, 2);
	assert_int_equal(cfg.mode, RR_MODE_NATIVE);
	assert_int_equal(cfg.batch, 16);
	assert_int_equal(cfg.ncpus, 1);
	assert_int_equal(cfg.cpus[0], 1);
	assert_string_equal(cfg.metrics_file, "/tmp/o");
	/* what no flag set still comes from the file */
	assert_int_equal(cfg.queues, 2);
	assert_int_equal(cfg.tx_csum, RR_TX_CSUM_SOFT);
	assert_true(cfg.busy_poll);
	assert_int_equal(service("reverse")->port, 9000);

	assert_int_equal(PARSE("-t", "2", "-q", "1", "-c", path), RR_OPTS_RUN);
	assert_int_equal(cfg.threads, 2);
	assert_int_equal(cfg.queues, 1);
	assert_string_equal(cfg.ifname, "veth7");

	/* -N in the file is overridden by -S on the line */
	unlink(path);
	path = t_write_file("/tmp/rr-test-conf",
			    "[reqrouter]\ninterface = x\nmode = native\n");
	assert_int_equal(PARSE("-c", path, "-S"), RR_OPTS_RUN);
	assert_int_equal(cfg.mode, RR_MODE_SKB);
	unlink(path);
}

struct bad_conf {
	const char *text;
	int line;
	const char *what;
};

static const struct bad_conf bad_confs[] = {
	{ "[reqrouter]\ninterface = eth0\ncolour = red\n", 3, "colour" },
	{ "[reqrouter]\n\n[nonsense]\nthreads = 2\n", 4, "nonsense" },
	{ "threads = 2\n", 1, "section" },
	{ "[function nosuch]\nport = 1\n", 2, "nosuch" },
	{ "[function reverse]\nport = 0\n", 2, "port" },
	{ "[function reverse]\nport = 65536\n", 2, "65536" },
	{ "[function reverse]\nport = 12a\n", 2, "12a" },
	{ "[function reverse]\nenabled = maybe\n", 2, "maybe" },
	{ "[function reverse]\nweight = 3\n", 2, "weight" },
	{ "[reqrouter]\nthreads = lots\n", 2, "lots" },
	{ "[reqrouter]\nthreads = 17\n", 2, "threads" },
	{ "[reqrouter]\nqueues = 0\n", 2, "queues" },
	{ "[reqrouter]\nqueues = 65\n", 2, "queues" },
	{ "[reqrouter]\nbatch = 0\n", 2, "batch" },
	{ "[reqrouter]\nbatch = 300\n", 2, "batch" },
	{ "[reqrouter]\ncpus = 4-2\n", 2, "CPU" },
	{ "[reqrouter]\nmode = turbo\n", 2, "turbo" },
	{ "[reqrouter]\nbusy_poll = often\n", 2, "often" },
	{ "[reqrouter]\ntx_csum = hardware\n", 2, "hardware" },
	{ "[reqrouter]\ninterface = a/b\n", 2, "a/b" },
	{ "[reqrouter]\nthis line is not a setting\n", 2, "" },
	/* tiers and the reply cache */
	{ "[function echo]\ntier = kernel\n", 2, "'kernel'" },
	{ "[function echo]\ncache_max_payload = 257\n", 2,
	  "cache_max_payload" },
	{ "[function echo]\ncache_max_payload = 0\n", 2, "cache_max_payload" },
	{ "[function echo]\ncache_ttl = 86401\n", 2, "cache_ttl" },
	{ "[function echo]\nxdp_max_payload = 100000\n", 2, "xdp_max_payload" },
	{ "[function echo]\ncache = maybe\n", 2, "cache" },
	/* abuse limits */
	{ "[function echo]\nmax_amplification = 1001\n", 2,
	  "max_amplification" },
	{ "[function echo]\nmax_amplification = -1\n", 2, "max_amplification" },
	{ "[function echo]\n\nallow = 10.0.0.1/8\n", 3, "10.0.0.1/8" },
	{ "[function echo]\nallow = localhost\n", 2, "localhost" },
	/* the first mistake is the one reported */
	{ "[reqrouter]\nthreads = 2\nbatch = 0\nqueues = 0\n", 3, "batch" },
};

static void test_bad_config_files(void **state)
{
	char want[128], *path;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_confs); i++) {
		path = t_write_file("/tmp/rr-test-conf", bad_confs[i].text);
		assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
		err[0] = '\0';
		ret = rr_config_load(&cfg, path, err, sizeof(err));
		if (ret != -EINVAL)
			fail_msg("config #%zu: returned %d (%s)", i, ret, err);
		snprintf(want, sizeof(want), "%s:%d:", path, bad_confs[i].line);
		check_err(want);
		check_err(bad_confs[i].what);

		/* and through the command line, the same sentence */
		EXPECT_ERROR(want, "-i", "eth0", "-c", path);
		unlink(path);
	}
}

static void test_missing_config_file(void **state)
{
	const char *path = "/nonexistent/rr.conf";

	(void)state;
	assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
	assert_int_equal(rr_config_load(&cfg, path, err, sizeof(err)), -ENOENT);
	check_err(path);
	assert_true(PARSE("-i", "eth0", "-c", path) < 0);
	check_err(path);
}

/* A directory is not a config file (fopen() would open it, and inih would
 * read nothing and report success). */
static void test_config_directory(void **state)
{
	char dir[] = "/tmp/rr-test-dir.XXXXXX";
	int ret;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
	err[0] = '\0';
	ret = rr_config_load(&cfg, dir, err, sizeof(err));
	rmdir(dir);
	if (ret >= 0)
		fail_msg("the directory %s was accepted as a config file", dir);
	check_err(dir);
}

/*
 * An allow-list may hold 64 prefixes (RR_MAX_ALLOW_PER_FN), but libinih
 * reads lines of at most 198 characters. A longer line is refused with an
 * error that names the line and says how to split it; the same prefixes
 * over several 'allow =' lines all count.
 */
static void test_long_allow_list(void **state)
{
	char text[4096], *path;
	uint32_t i;
	int ret;

	(void)state;
	/* 40 prefixes on one line, 548 bytes */
	strcpy(text, "[function reverse]\nallow = ");
	for (i = 0; i < 40; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%s10.0.%u.0/24", i ? ", " : "", i);
	strcat(text, "\n");
	path = t_write_file("/tmp/rr-test-conf", text);
	ret = PARSE("-i", "eth0", "-c", path);
	unlink(path);
	assert_int_equal(ret, -EINVAL);
	check_err(":2:");
	check_err("split");

	/* the same 40, eight to a line */
	strcpy(text, "[function reverse]\n");
	for (i = 0; i < 40; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%s10.0.%u.0/24%s", i % 8 ? ", " : "allow = ", i,
			 i % 8 == 7 ? "\n" : "");
	path = t_write_file("/tmp/rr-test-conf", text);
	ret = PARSE("-i", "eth0", "-c", path);
	unlink(path);
	assert_int_equal(ret, RR_OPTS_RUN);
	assert_int_equal(service("reverse")->nallow, 40);
	assert_int_equal(service("reverse")->allow[39].addr[2], 39);
}

static void test_allow_continuation_lines(void **state)
{
	char *path;
	int ret;

	(void)state;
	path = t_write_file("/tmp/rr-test-conf",
			    "[function reverse]\n"
			    "allow = 10.0.0.0/24, 10.0.1.0/24\n"
			    "        192.0.2.0/24\n"
			    "        fd00::/64\n");
	ret = PARSE("-i", "eth0", "-c", path);
	unlink(path);
	assert_int_equal(ret, RR_OPTS_RUN);
	if (service("reverse")->nallow != 4)
		fail_msg(
			"an allow-list over 3 lines keeps %u of its 4 prefixes",
			service("reverse")->nallow);
}

/* Up to RR_MAX_CPUS CPUs may be listed, however long the list gets:
 * every other CPU of a 256-CPU machine is 456 bytes. */
static void test_long_cpu_list(void **state)
{
	char list[1024];
	int cpus[RR_MAX_CPUS];
	uint32_t n = 0, i;

	(void)state;
	list[0] = '\0';
	for (i = 0; i < 256; i += 2)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%u", i ? "," : "", i);
	if (rr_parse_cpus(list, cpus, &n, err, sizeof(err)))
		fail_msg(
			"a valid list of 128 CPUs (%zu bytes) is refused: %.60s",
			strlen(list), err);
	assert_int_equal(n, 128);
	assert_int_equal(cpus[127], 254);
}

/* Two functions on one port is refused, unless one of them is off. */

int run_file_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_flags_override_file),
		cmocka_unit_test(test_bad_config_files),
		cmocka_unit_test(test_missing_config_file),
		cmocka_unit_test(test_config_directory),
		cmocka_unit_test(test_long_allow_list),
		cmocka_unit_test(test_allow_continuation_lines),
		cmocka_unit_test(test_long_cpu_list),
	};

	return cmocka_run_group_tests_name("file", tests, NULL, NULL);
}
