/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Option tables: one table per program yields its getopt string, its long
 * options and its --help text, so a flag cannot be documented and missing
 * (or the reverse). Used by reqrouter and by every tool.
 */
#ifndef RR_OPTTABLE_H
#define RR_OPTTABLE_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

struct rr_opt {
	const char *name; /* long name */
	int key; /* short letter, or a value >= 256 for long-only options */
	const char *arg;  /* metavariable, NULL for a switch */
	const char *help; /* NULL: an internal option --help leaves out */
};

/*
 * The --version entry every program's table carries: a key above any
 * program's own long-only keys, and one output line, "PROG VERSION", which
 * is also what help2man reads for the man pages.
 */
#define RR_OPT_VERSION 0x7fff
#define RR_OPT_VERSION_ENTRY                                                 \
	{                                                                    \
		"version", RR_OPT_VERSION, NULL, "show the version and exit" \
	}

/* The entry for -h, --help, last before the terminator in every table. */
#define RR_OPT_HELP_ENTRY                                    \
	{                                                    \
		"help", 'h', NULL, "show this help and exit" \
	}

/* Prints "PROG VERSION" on stdout. */
void rr_opt_version(const char *prog);

/* Room rr_opt_build() needs for a table of n options. */
#define RR_OPT_SHORT_LEN(n) (3 * (n) + 2)

/*
 * Fills @shortopts (RR_OPT_SHORT_LEN(n) bytes; it starts with ':' so a
 * missing value is reported apart) and @longopts (n + 1 entries) from
 * @t, a table that ends with a zero entry.
 */
void rr_opt_build(const struct rr_opt *t, char *shortopts,
		  struct option *longopts);

/* "Usage: SYNOPSIS", ABOUT, then one aligned line per option. */
void rr_opt_usage(FILE *f, const char *synopsis, const char *about,
		  const struct rr_opt *t);

/* The one sentence for what getopt_long() refused (it returned @key, '?'
 * or ':'); reads optopt and optind. */
void rr_opt_error(int key, char *const argv[], char *err, size_t errlen);

/* The same, as the one line a tool prints: "PROG: sentence (see --help)". */
void rr_opt_complain(const char *prog, int key, char *const argv[]);

/*
 * What a tool does with a key its own switch does not handle: -h prints
 * the help (SYNOPSIS, ABOUT, table @t) and --version the version, each
 * then exiting 0; anything else is complained about and 2, the usage
 * exit code, is returned.
 */
int rr_opt_other(const char *prog, int key, char *const argv[],
		 const char *synopsis, const char *about,
		 const struct rr_opt *t);

/* A program's command line: its name, the help's synopsis and text, and
 * its option table. */
struct rr_opt_prog {
	const char *name;
	const char *synopsis;
	const char *about;
	const struct rr_opt *opts;
};

/*
 * getopt_long() over @p's table, handing each option the table names to
 * @apply(key, argument or NULL, @ctx), which returns 0 or the exit code
 * after saying why; -h, --version and mistakes go to rr_opt_other().
 * Returns 0 with optind at the first operand, or the exit code.
 */
int rr_opt_parse(const struct rr_opt_prog *p, int argc, char **argv,
		 int (*apply)(int key, const char *arg, void *ctx), void *ctx);

/*
 * rr_opt_parse() for a tool that works on one interface, which @apply
 * stores in *@ifname (-i), and takes no operands: the interface's index,
 * or 0 after saying why (a usage error, no -i, a stray argument, no such
 * interface).
 */
int rr_opt_parse_iface(const struct rr_opt_prog *p, int argc, char **argv,
		       int (*apply)(int key, const char *arg, void *ctx),
		       void *ctx, const char *const *ifname);

#endif /* RR_OPTTABLE_H */
