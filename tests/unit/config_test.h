/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the tests/unit/config program share: a configuration
 * parsed as reqrouter parses its command line, and the checks on the one
 * line an error must be.
 */
#ifndef RR_UNIT_CONFIG_TEST_H
#define RR_UNIT_CONFIG_TEST_H

#include "config.h"

extern struct rr_config cfg;
extern char err[RR_ERRLEN];

/* Parses a NULL-terminated argument list after "reqrouter" into cfg. */
int parse_args(const char *first, ...);
#define PARSE(...) parse_args(__VA_ARGS__, (const char *)NULL)

/* The error is one line that says @what. */
void check_err(const char *what);

#define EXPECT_ERROR(what, ...)                                            \
	do {                                                               \
		int r_ = PARSE(__VA_ARGS__);                               \
		if (r_ != -EINVAL)                                         \
			fail_msg("%s: returned %d, expected -EINVAL (%s)", \
				 #__VA_ARGS__, r_, err);                   \
		check_err(what);                                           \
	} while (0)

/* The service of function @name in cfg; fails the test if none. */
struct rr_service *service(const char *name);

/* The other parts' tests; each returns the number that failed. */
int run_file_tests(void);     /* config_file.c */
int run_value_tests(void);    /* config_values.c */
int run_settings_tests(void); /* config_settings.c */

#endif /* RR_UNIT_CONFIG_TEST_H */
