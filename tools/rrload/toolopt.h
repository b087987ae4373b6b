/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Option tables for the tools (rrload, sockserver, reflector): one table
 * yields the getopt string, the long options and the --help text, so a
 * flag cannot be documented and forgotten (or the reverse). Header-only
 * because each tools/NAME/ directory links as its own program.
 */
#ifndef RR_TOOLOPT_H
#define RR_TOOLOPT_H

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct toolopt {
	const char *name; /* long name */
	int key; /* short letter, or a value >= 256 for long-only options */
	const char *arg; /* metavariable, or NULL for a flag */
	const char *help;
};

#define TOOLOPT_MAX 48

/* Fills @shortopts (room for 3 chars per option) and @longopts (room for
 * n + 1 entries) from the table, which ends with a zero entry. */
static inline void toolopt_build(const struct toolopt *t, char *shortopts,
				 struct option *longopts)
{
	int n = 0;

	*shortopts++ = ':'; /* report a missing argument apart */
	for (; t->name; t++, n++) {
		longopts[n] = (struct option){ t->name,
					       t->arg ? required_argument
						      : no_argument,
					       NULL, t->key };
		if (t->key < 256) {
			*shortopts++ = (char)t->key;
			if (t->arg)
				*shortopts++ = ':';
		}
	}
	*shortopts = '\0';
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
}

static inline void toolopt_usage(FILE *f, const char *synopsis,
				 const char *about, const struct toolopt *t)
{
	char left[64];

	fprintf(f, "Usage: %s\n%s\n\nOptions:\n", synopsis, about);
	for (; t->name; t++) {
		if (t->key < 256)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", t->key,
				 t->name, t->arg ? " " : "",
				 t->arg ? t->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", t->name,
				 t->arg ? " " : "", t->arg ? t->arg : "");
		fprintf(f, "  %-26s %s\n", left, t->help);
	}
}

/* The one line a user sees for a flag getopt refused. */
static inline void toolopt_bad(const char *prog, int c, int optopt_,
			       char *const argv[], int optind_)
{
	const char *word = argv[optind_ - 1];

	if (c == ':')
		fprintf(stderr,
			"%s: option %s needs an argument (see --help)\n", prog,
			word);
	else if (optopt_ && optopt_ < 256)
		fprintf(stderr, "%s: unknown option -%c (see --help)\n", prog,
			optopt_);
	else
		fprintf(stderr, "%s: unknown option %s (see --help)\n", prog,
			word);
}

/* strtoul with an end check and a range; -EINVAL or -ERANGE on failure. */
static inline int toolopt_ulong(const char *s, unsigned long min,
				unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/*
 * A comma-separated list of numbers and ranges ("0,2-3") into @out (at
 * most @max entries, each <= @vmax); returns the count or -errno.
 */
static inline int toolopt_list(const char *s, unsigned long vmax,
			       unsigned long *out, int max)
{
	char buf[256], *tok, *save, *dash;
	unsigned long a, b;
	int n = 0;

	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (toolopt_ulong(tok, 0, vmax, &a))
			return -EINVAL;
		b = a;
		if (dash && toolopt_ulong(dash + 1, a, vmax, &b))
			return -EINVAL;
		for (; a <= b; a++) {
			if (n == max)
				return -E2BIG;
			out[n++] = a;
		}
	}
	return n ? n : -EINVAL;
}

#endif /* RR_TOOLOPT_H */
