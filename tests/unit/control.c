// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the table of control commands (src/lib/ctlcmd.c), which
 * the daemon dispatches on and reqrouterctl prints its help from: every
 * row is complete and can be found by its name only, its arguments'
 * metavariables match their count (optional ones in brackets), and the
 * socket path rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctlcmd.h"

/* Words in @s, NULL being none. */
static unsigned int words(const char *s)
{
	unsigned int n = 0;

	for (; s && *s; s++)
		if (*s != ' ' && (s[1] == ' ' || !s[1]))
			n++;
	return n;
}

/* A row a person can use: a name the completion picks up (lower case
 * letters), one line of help, as many metavariables as arguments. */
static void test_rows_complete(void **state)
{
	int i, j;

	for (i = 0; i < RR_CTL_NCMDS; i++) {
		const struct rr_ctlcmd *c = &rr_ctlcmds[i];

		assert_non_null(c->name);
		assert_int_equal(strspn(c->name, "abcdefghijklmnopqrstuvwxyz"),
				 strlen(c->name));
		assert_non_null(c->help);
		assert_true(*c->help);
		assert_null(strchr(c->help, '\n'));
		assert_int_equal(words(c->args), c->nargs);
		assert_true(!c->from_options || c->nargs);
		/* Optional arguments are shown as such. */
		assert_true(!c->optional ||
			    (c->nargs && c->args[0] == '[' &&
			     c->args[strlen(c->args) - 1] == ']'));
		assert_int_equal(rr_ctlcmd_id(c), i);
		for (j = 0; j < i; j++)
			assert_string_not_equal(rr_ctlcmds[j].name, c->name);
	}
}

/* The daemon looks up the first word of a request line: only a whole
 * name matches. */
static void test_find(void **state)
{
	const char *line = "deploy /x/y.so";

	assert_ptr_equal(rr_ctlcmd_find("status", 6),
			 &rr_ctlcmds[RR_CTL_STATUS]);
	assert_ptr_equal(rr_ctlcmd_find(line, strcspn(line, " ")),
			 &rr_ctlcmds[RR_CTL_DEPLOY]);
	assert_null(rr_ctlcmd_find("stat", 4));
	assert_null(rr_ctlcmd_find("statusx", 7));
	assert_null(rr_ctlcmd_find("", 0));
	/* The first 6 bytes of "statusx" are a name. */
	assert_ptr_equal(rr_ctlcmd_find("statusx", 6),
			 &rr_ctlcmds[RR_CTL_STATUS]);
}

/* reqrouterctl gives drain's two numbers from its options; the other
 * commands with arguments take one word from the command line. */
static void test_user_args(void **state)
{
	assert_int_equal(rr_ctlcmd_user_args(&rr_ctlcmds[RR_CTL_DRAIN]), 0);
	assert_int_equal(rr_ctlcmds[RR_CTL_DRAIN].nargs, 2);
	assert_int_equal(rr_ctlcmd_user_args(&rr_ctlcmds[RR_CTL_DEPLOY]), 1);
	assert_int_equal(rr_ctlcmd_user_args(&rr_ctlcmds[RR_CTL_HEALTH]), 0);
	/* top takes a function's name, or none for every function. */
	assert_int_equal(rr_ctlcmd_user_args(&rr_ctlcmds[RR_CTL_TOP]), 1);
	assert_true(rr_ctlcmds[RR_CTL_TOP].optional);
	assert_false(rr_ctlcmds[RR_CTL_DEPLOY].optional);
}

static void test_default_path(void **state)
{
	char path[64];

	rr_control_default_path("eth0", path, sizeof(path));
	assert_string_equal(path, "/run/reqrouter/eth0.sock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_complete),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_user_args),
		cmocka_unit_test(test_default_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
