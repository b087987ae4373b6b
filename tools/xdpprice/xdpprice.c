// SPDX-License-Identifier: GPL-2.0
/*
 * xdpprice: the price list of reqrouter's XDP program (issue 48), what
 * each step costs a request, through BPF_PROG_TEST_RUN, and what each
 * program weighs (xdpprice.h says how). tools/bench-xdp runs it; make
 * bench-xdp runs that. Needs root; exits 77 where it cannot run.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opttable.h"
#include "parse.h"
#include "toolargs.h"
#include "xdpprice.h"

enum {
	OPT_BATCHES = 256,
	OPT_CPU,
	OPT_JSON,
	OPT_NO_VERIFIER,
	OPT_FRAMES,
	OPT_ROWS
};

static const struct rr_opt opts[] = {
	{ "repeat", 'r', "N",
	  "runs per batch, BPF_PROG_TEST_RUN's repeat (default 1000000)" },
	{ "batches", OPT_BATCHES, "N",
	  "batches per configuration, the median counts (default 5)" },
	{ "cpu", OPT_CPU, "CPU", "run pinned to this CPU (default: unpinned)" },
	{ "frames", OPT_FRAMES, "LIST",
	  "requests to price, of ipv4-64,ipv4-800,ipv6-64 (default all)" },
	{ "rows", OPT_ROWS, "LIST",
	  "configurations to price, by their --json ids (default all; the\n"
	  "defaults, which the deltas are taken against, always)" },
	{ "json", OPT_JSON, NULL, "one JSON document instead of the tables" },
	{ "no-verifier", OPT_NO_VERIFIER, NULL,
	  "skip the second load that reads the verifier's statistics" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ NULL, 0, NULL, NULL },
};

#define SYNOPSIS                                                            \
	"xdpprice [--repeat N] [--batches N] [--cpu CPU] [--frames LIST]\n" \
	"                [--rows LIST] [--json] [--no-verifier]"
#define ABOUT                                                                        \
	"What each step of reqrouter's XDP program costs a request: the program\n"   \
	"loaded and configured as a default install has it, then each guard or\n"    \
	"feature switched off (or on) in turn, against the bare XDP_TX reflector;\n" \
	"ns per run through BPF_PROG_TEST_RUN with repeat. Then each program's\n"    \
	"instructions and the verifier's statistics. Needs root."

/* The ids in @arg, comma-separated, as bits of the @n entries of @ids
 * (each @stride bytes apart, an id first). */
static int parse_ids(const char *arg, const void *ids, size_t stride,
		     unsigned int n, uint32_t *out)
{
	char buf[512], *tok, *save = NULL;
	unsigned int i;

	/* strtok_r() would pass over an empty entry: refused. */
	if (strlen(arg) >= sizeof(buf) || !*arg || arg[0] == ',' ||
	    arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
		return -EINVAL;
	strcpy(buf, arg);
	*out = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n; i++)
			if (!strcmp(tok,
				    *(const char *const *)((const char *)ids +
							   i * stride)))
				break;
		if (i == n)
			return -EINVAL;
		*out |= 1U << i;
	}
	return *out ? 0 : -EINVAL;
}

static int apply(int key, const char *arg, void *ctx)
{
	struct price_opts *o = ctx;
	unsigned long v;

	switch (key) {
	case 'r':
		if (rr_parse_ulong(arg, 1, 1000000000, &v))
			return rr_opt_fail(
				"xdpprice",
				"--repeat needs 1-1000000000, not '%s'", arg);
		o->repeat = (uint32_t)v;
		break;
	case OPT_BATCHES:
		if (rr_parse_ulong(arg, 1, PRICE_MAX_BATCHES, &v))
			return rr_opt_fail("xdpprice",
					   "--batches needs 1-%d, not '%s'",
					   PRICE_MAX_BATCHES, arg);
		o->batches = (uint32_t)v;
		break;
	case OPT_CPU:
		if (rr_parse_ulong(arg, 0, CPU_SETSIZE - 1, &v))
			return rr_opt_fail("xdpprice",
					   "--cpu needs a CPU number, not '%s'",
					   arg);
		o->cpu = (int)v;
		break;
	case OPT_FRAMES:
		if (parse_ids(arg, price_frames, sizeof(price_frames[0]),
			      price_nframes, &o->frames))
			return rr_opt_fail(
				"xdpprice",
				"--frames takes ipv4-64, ipv4-800 and ipv6-64, comma-separated, not '%s'",
				arg);
		break;
	case OPT_ROWS:
		if (parse_ids(arg, price_rows, sizeof(price_rows[0]),
			      price_nrows, &o->rows))
			return rr_opt_fail(
				"xdpprice",
				"--rows takes the ids --json prints (reflector, defaults, bare, ...), comma-separated, not '%s'",
				arg);
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_NO_VERIFIER:
		o->verifier = false;
		break;
	}
	return 0;
}

/* Pins this thread to @cpu: every run on one CPU, its per-CPU state
 * (the heavy hitters' countdown) and its caches the same throughout. */
static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "xdpprice: cannot run on CPU %d: %s\n", cpu,
			strerror(errno));
		return -errno;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct rr_opt_prog prog = { "xdpprice", SYNOPSIS, ABOUT,
						 opts };
	struct price_opts o = {
		.repeat = 1000000,
		.batches = 5,
		.cpu = -1,
		.verifier = true,
		.frames = (1U << price_nframes) - 1,
		.rows = (1U << price_nrows) - 1,
	};
	struct price_bench *b = NULL;
	struct price_result *r;
	int ret, defaults;

	ret = rr_opt_parse(&prog, argc, argv, apply, &o);
	if (ret)
		return ret;
	if (optind < argc)
		return rr_opt_fail("xdpprice", "no operands, not '%s'",
				   argv[optind]);
	/* The deltas are taken against the defaults: always priced. */
	defaults = price_defaults_row();
	if (defaults >= 0)
		o.rows |= 1U << defaults;
	if (o.cpu >= 0 && pin(o.cpu))
		return 1;
	r = calloc(1, sizeof(*r));
	if (!r)
		return 1;
	ret = price_setup(&b, &o, r);
	if (!ret)
		ret = price_measure(b, &o, r);
	price_teardown(b);
	if (!ret) {
		if (o.json)
			price_report_json(&o, r);
		else
			price_report_text(&o, r);
	}
	free(r);
	return ret;
}
