/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers every C test tier shares (tests/lib/, linked into each
 * test program): temporary files for configuration tests, and failure
 * reports for the test programs that do not use cmocka (the BPF tests
 * count failures and go on; the fuzzers abort at the first).
 */
#ifndef RR_TESTUTIL_H
#define RR_TESTUTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * A new temporary file holding @text, its name starting with @prefix
 * ("/tmp/rr-test-conf" gives /tmp/rr-test-conf.XXXXXX); the caller
 * unlinks it. The name lives until eight more files are made. Aborts if
 * the file cannot be written: nothing else in the test would mean much.
 */
char *t_write_file(const char *prefix, const char *text);

/*
 * For a function flagged RR_FN_OPT_IN: 0 if it is off in a config with no
 * file, and on with the config file @conf (its section's text), on @port,
 * with @nsettings keys of its own; 1 otherwise (tests/lib/optin.c).
 */
int t_check_opt_in(const char *name, uint16_t port, const char *conf,
		   uint32_t nsettings);

/* Failures counted by t_fail(), and where the test is (t_at()). */
extern int t_failures;
extern char t_where[160];

/* Says "FAIL <where>: <message>" on stderr and counts it. */
void t_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Names what the following checks are about, for t_fail(). */
void t_at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A fuzzer's assertion: the program's name, the place, the message, and
 * abort() so that libFuzzer keeps the input. */
#define fz_fail(...)                                                          \
	do {                                                                  \
		fprintf(stderr, "%s: %s:%d: ", program_invocation_short_name, \
			__FILE__, __LINE__);                                  \
		fprintf(stderr, __VA_ARGS__);                                 \
		fputc('\n', stderr);                                          \
		abort();                                                      \
	} while (0)

#define fz_check(cond, ...)                   \
	do {                                  \
		if (!(cond))                  \
			fz_fail(__VA_ARGS__); \
	} while (0)

/* Runs the shell command made of @fmt; its status, and on a failure one
 * line on stderr naming the command. */
int t_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* RR_TESTUTIL_H */
