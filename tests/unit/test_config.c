// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the settings: the command line (rr_options_parse), the INI
 * file (rr_config_load), how the two combine (flags win), the value
 * parsers they share, and the registry of functions the settings refer
 * to. A mistake must come back as an error with one line that names what
 * was wrong (the option, the value, the file and line), never as a
 * silently different configuration.
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
#include "testutil.h"

#define MAX_ARGS 32

static struct rr_config cfg; /* large: not on the stack */
static char err[RR_ERRLEN];

/* Parses a NULL-terminated argument list after "reqrouter". */
static int parse_args(const char *first, ...)
{
	char *argv[MAX_ARGS + 2];
	const char *a;
	va_list ap;
	int argc = 0;

	argv[argc++] = (char *)"reqrouter";
	va_start(ap, first);
	for (a = first; a && argc <= MAX_ARGS; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	err[0] = '\0';
	return rr_options_parse(argc, argv, &cfg, err, sizeof(err));
}

#define PARSE(...) parse_args(__VA_ARGS__, (const char *)NULL)

/* The error is one line that says @what. */
static void check_err(const char *what)
{
	if (!strstr(err, what))
		fail_msg("error \"%s\" does not mention \"%s\"", err, what);
	if (strchr(err, '\n'))
		fail_msg("error \"%s\" is more than one line", err);
}

#define EXPECT_ERROR(what, ...)                                            \
	do {                                                               \
		int r_ = PARSE(__VA_ARGS__);                               \
		if (r_ != -EINVAL)                                         \
			fail_msg("%s: returned %d, expected -EINVAL (%s)", \
				 #__VA_ARGS__, r_, err);                   \
		check_err(what);                                           \
	} while (0)

static struct rr_service *service(const char *name)
{
	struct rr_service *svc = rr_config_service_named(&cfg, name);

	if (!svc)
		fail_msg("no service '%s'", name);
	return svc;
}

static void test_defaults(void **state)
{
	(void)state;
	assert_int_equal(PARSE("-i", "eth0"), RR_OPTS_RUN);
	assert_string_equal(cfg.ifname, "eth0");
	assert_int_equal(cfg.queues, 0);
	assert_int_equal(cfg.threads, 1);
	assert_int_equal(cfg.batch, 64);
	assert_int_equal(cfg.mode, RR_MODE_AUTO);
	assert_false(cfg.busy_poll);
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
}

static void test_each_flag(void **state)
{
	(void)state;
	assert_int_equal(PARSE("-i", "veth1", "-q", "4", "-t", "16", "-b",
			       "256", "-B", "-N", "--cpus", "0-2,5",
			       "--metrics-file", "/tmp/m.prom", "-v", "-v"),
			 RR_OPTS_RUN);
	assert_string_equal(cfg.ifname, "veth1");
	assert_int_equal(cfg.queues, 4);
	assert_int_equal(cfg.threads, 16);
	assert_int_equal(cfg.batch, 256);
	assert_true(cfg.busy_poll);
	assert_int_equal(cfg.mode, RR_MODE_NATIVE);
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
	assert_string_equal(cfg.ifname, "eth2");
	assert_int_equal(cfg.queues, 64);
	assert_int_equal(cfg.threads, 1);
	assert_int_equal(cfg.batch, 1);
	assert_int_equal(cfg.mode, RR_MODE_SKB);
	assert_true(cfg.busy_poll);
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
	/* the first mistake is the one reported */
	{ "[reqrouter]\nthreads = 2\nbatch = 0\nqueues = 0\n", 3, "batch" },
};

static void test_bad_config_files(void **state)
{
	char want[128], *path;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < sizeof(bad_confs) / sizeof(bad_confs[0]); i++) {
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
	/* defaults: no allow-list, replies up to 3 times the request */
	assert_int_equal(PARSE("-i", "eth0"), RR_OPTS_RUN);
	for (i = 0; i < cfg.nservices; i++) {
		assert_int_equal(cfg.services[i].max_amplification, 3);
		assert_int_equal(cfg.services[i].nallow, 0);
	}
	assert_string_equal(cfg.user, "");

	path = t_write_file("/tmp/rr-test-conf",
			    "[reqrouter]\n"
			    "user = nobody\n"
			    "[function reverse]\n"
			    "allow = 198.18.0.0/15, fd00:7272::/64\n"
			    "max_amplification = 0\n"
			    "[function echo]\n"
			    "max_amplification = 1000\n");
	assert_int_equal(PARSE("-i", "eth0", "-c", path), RR_OPTS_RUN);
	assert_string_equal(cfg.user, "nobody");
	assert_int_equal(service("reverse")->max_amplification, 0);
	assert_int_equal(service("echo")->max_amplification, 1000);
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
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\nmax_amplification = 1001\n");
	EXPECT_ERROR(":2:", "-i", "eth0", "-c", path);
	check_err("max_amplification");
	unlink(path);
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\nmax_amplification = -1\n");
	EXPECT_ERROR("max_amplification", "-i", "eth0", "-c", path);
	unlink(path);
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\n\nallow = 10.0.0.1/8\n");
	EXPECT_ERROR(":3:", "-i", "eth0", "-c", path);
	check_err("10.0.0.1/8");
	unlink(path);
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\nallow = localhost\n");
	EXPECT_ERROR("localhost", "-i", "eth0", "-c", path);
	unlink(path);
}

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
	uint16_t ports[RR_MAX_PORTS];
	char many[256];
	uint32_t v = 0, n = 0, i;
	bool b = false;
	enum rr_xdp_mode mode = RR_MODE_AUTO;
	enum rr_tx_csum csum = RR_TX_CSUM_AUTO;

	(void)state;
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

	assert_int_equal(rr_parse_ports("1,65535,1232", ports, RR_MAX_PORTS, &n,
					err, sizeof(err)),
			 0);
	assert_int_equal(n, 3);
	assert_int_equal(ports[0], 1);
	assert_int_equal(ports[1], 65535);
	assert_int_equal(ports[2], 1232);
	/* RR_MAX_PORTS ports are fine, one more is not */
	many[0] = '\0';
	for (i = 1; i <= RR_MAX_PORTS; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 "%s%u", i > 1 ? "," : "", 1000 + i);
	assert_int_equal(
		rr_parse_ports(many, ports, RR_MAX_PORTS, &n, err, sizeof(err)),
		0);
	assert_int_equal(n, RR_MAX_PORTS);
	strcat(many, ",2000");
	assert_int_equal(
		rr_parse_ports(many, ports, RR_MAX_PORTS, &n, err, sizeof(err)),
		-EINVAL);
	check_err("32");
}

/* The functions linked in are found by name and by port. */
/* Tiers and the reply cache: defaults, file keys, the flags that
 * override them, and one-line errors. */
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
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\ntier = kernel\n");
	EXPECT_ERROR(":2:", "-i", "eth0", "-c", path);
	check_err("'kernel'");
	unlink(path);
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\ncache_max_payload = 257\n");
	EXPECT_ERROR("cache_max_payload", "-i", "eth0", "-c", path);
	unlink(path);
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\ncache_max_payload = 0\n");
	EXPECT_ERROR("cache_max_payload", "-i", "eth0", "-c", path);
	unlink(path);
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\ncache_ttl = 86401\n");
	EXPECT_ERROR("cache_ttl", "-i", "eth0", "-c", path);
	unlink(path);
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\nxdp_max_payload = 100000\n");
	EXPECT_ERROR("xdp_max_payload", "-i", "eth0", "-c", path);
	unlink(path);
	path = t_write_file("/tmp/rr-test-conf",
			    "[function echo]\ncache = maybe\n");
	EXPECT_ERROR("cache", "-i", "eth0", "-c", path);
	unlink(path);
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
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_flags_override_file),
		cmocka_unit_test(test_bad_config_files),
		cmocka_unit_test(test_missing_config_file),
		cmocka_unit_test(test_port_clash),
		cmocka_unit_test(test_nothing_to_serve),
		cmocka_unit_test(test_example_config),
		cmocka_unit_test(test_abuse_limits),
		cmocka_unit_test(test_parse_cidrs),
		cmocka_unit_test(test_parse_cpus),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_tiers),
		cmocka_unit_test(test_config_directory),
		cmocka_unit_test(test_long_allow_list),
		cmocka_unit_test(test_allow_continuation_lines),
		cmocka_unit_test(test_long_cpu_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
