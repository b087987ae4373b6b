// SPDX-License-Identifier: GPL-2.0
/*
 * Value parsing shared by src/lib/config.c (file and flags), src/daemon/ops/options.c,
 * the control socket, reqrouterctl and the tools: one number parser, one
 * boolean parser, one for a word of a list (an enum) and one way to write
 * an error sentence.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse.h"
#include "util.h"

int rr_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int rr_parse_ull(const char *s, int base, unsigned long long min,
		 unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int rr_parse_ulong(const char *s, unsigned long min, unsigned long max,
		   unsigned long *out)
{
	unsigned long long v;
	int ret;

	ret = rr_parse_ull(s, 10, min, max, &v);
	if (!ret)
		*out = (unsigned long)v;
	return ret;
}

int rr_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out,
		 const char *what, char *err, size_t errlen)
{
	unsigned long v;

	if (rr_parse_ulong(s, min, max, &v))
		return rr_errf(err, errlen,
			       "%s must be a number from %u to %u, not '%s'",
			       what, min, max, s ? s : "");
	*out = (uint32_t)v;
	return 0;
}

int rr_parse_bool(const char *s, bool *out, const char *what, char *err,
		  size_t errlen)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
			*out = !strcasecmp(s, yes[i]);
			return 0;
		}
	}
	return rr_errf(err, errlen, "%s must be yes or no, not '%s'", what, s);
}

void rr_enum_names(const char *const *names, char *buf, size_t len)
{
	size_t i, n, at = 0;

	for (n = 0; names[n]; n++)
		;
	buf[0] = '\0';
	for (i = 0; i < n && at < len; i++) {
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       !i	   ? ""
				       : i < n - 1 ? ", "
						   : " or ",
				       names[i]);
	}
}

int rr_parse_enum(const char *const *names, const char *val, const char *what,
		  char *err, size_t errlen)
{
	char list[128];
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(val, names[i]))
			return i;
	rr_enum_names(names, list, sizeof(list));
	return rr_errf(err, errlen, "%s must be %s, not '%s'", what, list, val);
}
