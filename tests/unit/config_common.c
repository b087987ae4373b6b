// SPDX-License-Identifier: GPL-2.0
/*
 * What the parts of the settings' tests share (config_test.h): the
 * config they parse into, its error line, and the lookups they use.
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

#define MAX_ARGS 32

struct rr_config cfg; /* large: not on the stack */
char err[RR_ERRLEN];

/* Parses a NULL-terminated argument list after "reqrouter". */
int parse_args(const char *first, ...)
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

/* The error is one line that says @what. */
void check_err(const char *what)
{
	if (!strstr(err, what))
		fail_msg("error \"%s\" does not mention \"%s\"", err, what);
	if (strchr(err, '\n'))
		fail_msg("error \"%s\" is more than one line", err);
}

struct rr_service *service(const char *name)
{
	struct rr_service *svc = rr_config_service_named(&cfg, name);

	if (!svc)
		fail_msg("no service '%s'", name);
	return svc;
}
