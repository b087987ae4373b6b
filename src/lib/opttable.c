// SPDX-License-Identifier: GPL-2.0
/* Option tables: getopt strings, long options and --help from one table. */
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "opttable.h"
#include "version.h"

#define HELP_COLUMN 26

void rr_opt_build(const struct rr_opt *t, char *shortopts,
		  struct option *longopts)
{
	int n = 0;

	*shortopts++ = ':';
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

void rr_opt_usage(FILE *f, const char *synopsis, const char *about,
		  const struct rr_opt *t)
{
	char left[64];

	fprintf(f, "Usage: %s\n%s\n\nOptions:\n", synopsis, about);
	for (; t->name; t++) {
		if (!t->help)
			continue;
		if (t->key < 256)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", t->key,
				 t->name, t->arg ? " " : "",
				 t->arg ? t->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", t->name,
				 t->arg ? " " : "", t->arg ? t->arg : "");
		/* A long left column gets the help on a line of its own. */
		if (strlen(left) > HELP_COLUMN)
			fprintf(f, "  %s\n  %-*s  %s\n", left, HELP_COLUMN, "",
				t->help);
		else
			fprintf(f, "  %-*s  %s\n", HELP_COLUMN, left, t->help);
	}
}

void rr_opt_error(int key, char *const argv[], char *err, size_t errlen)
{
	const char *word = optind > 0 ? argv[optind - 1] : "?";

	if (key == ':')
		snprintf(err, errlen, "option '%s' needs a value", word);
	else if (optopt && optopt < 256)
		snprintf(err, errlen, "unknown option '-%c'", optopt);
	else
		snprintf(err, errlen, "unknown option '%s'", word);
}

void rr_opt_complain(const char *prog, int key, char *const argv[])
{
	char err[160];

	rr_opt_error(key, argv, err, sizeof(err));
	fprintf(stderr, "%s: %s (see --help)\n", prog, err);
}

void rr_opt_version(const char *prog)
{
	printf("%s %s\n", prog, RR_VERSION);
}

int rr_opt_other(const char *prog, int key, char *const argv[],
		 const char *synopsis, const char *about,
		 const struct rr_opt *t)
{
	if (key == 'h') {
		rr_opt_usage(stdout, synopsis, about, t);
		exit(0);
	}
	if (key == RR_OPT_VERSION) {
		rr_opt_version(prog);
		exit(0);
	}
	rr_opt_complain(prog, key, argv);
	return 2;
}

int rr_opt_parse(const struct rr_opt_prog *p, int argc, char **argv,
		 int (*apply)(int key, const char *arg, void *ctx), void *ctx)
{
	const struct rr_opt *t;
	size_t n = 1; /* the terminator */
	int key, ret;

	for (t = p->opts; t->name; t++)
		n++;
	{
		char shortopts[RR_OPT_SHORT_LEN(n)];
		struct option longopts[n];

		rr_opt_build(p->opts, shortopts, longopts);
		opterr = 0;
		while ((key = getopt_long(argc, argv, shortopts, longopts,
					  NULL)) != -1) {
			if (key == 'h' || key == RR_OPT_VERSION || key == '?' ||
			    key == ':')
				return rr_opt_other(p->name, key, argv,
						    p->synopsis, p->about,
						    p->opts);
			ret = apply(key, optarg, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int rr_opt_parse_iface(const struct rr_opt_prog *p, int argc, char **argv,
		       int (*apply)(int key, const char *arg, void *ctx),
		       void *ctx, const char *const *ifname)
{
	int ifindex;

	if (rr_opt_parse(p, argc, argv, apply, ctx))
		return 0;
	if (optind < argc || !*ifname) {
		fprintf(stderr, "%s: %s\n", p->name,
			*ifname ? "unexpected argument"
				: "-i IFACE is required (see --help)");
		return 0;
	}
	ifindex = (int)if_nametoindex(*ifname);
	if (!ifindex)
		fprintf(stderr, "%s: no interface '%s'\n", p->name, *ifname);
	return ifindex;
}
