// SPDX-License-Identifier: GPL-2.0
/*
 * Two functions on one default port (a file dropped into functions/
 * beside a built-in one, as this test's own `clash7` beside echo): the
 * registry takes both, --list-style parsing lists both, and reqrouter
 * refuses to serve them together in one line naming both, until the
 * config moves one (port = N) or turns it off (enabled = no).
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
#include <reqrouter/rr_function.h>

static int clash7_handler(const struct rr_request *req, uint8_t *buf,
			  size_t len, size_t room)
{
	(void)req;
	(void)buf;
	(void)room;
	return (int)len;
}

RR_FUNCTION(clash7, 7, "a second function on echo's port", clash7_handler);

static struct rr_config cfg; /* large: not on the stack */
static char err[RR_ERRLEN];

/* reqrouter -i eth0 [-c @conf], into cfg. */
static int parse(const char *conf)
{
	char *argv[] = { "reqrouter", "-i", "eth0", "-c", (char *)conf, NULL };

	err[0] = 0;
	return rr_options_parse(conf ? 5 : 3, argv, &cfg, err, sizeof(err));
}

/* A config file holding @text; its path in @path. */
static void conf_file(char *path, size_t len, const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/rr-port-clash-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_registry_takes_both(void **state)
{
	(void)state;
	assert_int_equal(rr_registry_check(err, sizeof(err)), 0);
	assert_non_null(rr_registry_find("echo"));
	assert_non_null(rr_registry_find("clash7"));
}

static void test_refused_together(void **state)
{
	(void)state;
	assert_int_equal(parse(NULL), -EINVAL);
	if (!strstr(err, "'echo'") || !strstr(err, "'clash7'") ||
	    !strstr(err, "are both on port 7"))
		fail_msg("error \"%s\" does not name both on port 7", err);
	assert_null(strchr(err, '\n'));
}

static void test_moved_or_off(void **state)
{
	char path[64];

	(void)state;
	conf_file(path, sizeof(path), "[function clash7]\nport = 9007\n");
	assert_int_equal(parse(path), RR_OPTS_RUN);
	assert_int_equal(rr_config_service_named(&cfg, "clash7")->port, 9007);
	unlink(path);
	conf_file(path, sizeof(path), "[function clash7]\nenabled = no\n");
	assert_int_equal(parse(path), RR_OPTS_RUN);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_takes_both),
		cmocka_unit_test(test_refused_together),
		cmocka_unit_test(test_moved_or_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
