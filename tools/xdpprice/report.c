// SPDX-License-Identifier: GPL-2.0
/*
 * xdpprice's output: per frame, one row per configuration (ns per run,
 * the difference from the in-kernel tier's defaults, that difference as
 * a share of the defaults' whole, what the step buys), then each
 * program's size and verifier statistics; or all of it as one JSON
 * document (--json) for scripts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>

#include "xdpprice.h"

/* The row every delta is taken against. */
#define DEFAULTS "defaults"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

double price_median(const uint32_t *v, uint32_t n)
{
	uint32_t s[PRICE_MAX_BATCHES];

	if (!n || n > PRICE_MAX_BATCHES)
		return 0;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_u32);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + (double)s[n / 2]) / 2;
}

int price_defaults_row(void)
{
	unsigned int i;

	for (i = 0; i < price_nrows; i++)
		if (!strcmp(price_rows[i].id, DEFAULTS))
			return (int)i;
	return -1;
}

/* Frame @f's figures for row @row: the median of its batches (raw), and
 * with the harness's median taken off (net). */
static void figures(const struct price_opts *o, const struct price_result *r,
		    unsigned int f, unsigned int row, double *raw, double *net)
{
	double h = price_median(r->harness[f].ns, o->batches);

	*raw = price_median(r->cells[f][row].ns, o->batches);
	*net = *raw - h;
}

/* Helper @k's price: its median less the harness's on its frame. */
static double helper_ns(const struct price_opts *o,
			const struct price_result *r, unsigned int k)
{
	return price_median(r->helpers[k].ns, o->batches) -
	       price_median(r->harness[r->helpers_frame].ns, o->batches);
}

void price_report_text(const struct price_opts *o, const struct price_result *r)
{
	int d = price_defaults_row();
	double raw, net, base, dnet;
	unsigned int f, row, i;

	if (o->batches == 1)
		printf("xdpprice: ns per request through BPF_PROG_TEST_RUN, one batch of %u runs,\n",
		       o->repeat);
	else
		printf("xdpprice: ns per request through BPF_PROG_TEST_RUN, the median of %u batches of %u runs,\n",
		       o->batches, o->repeat);
	printf("the harness's own cost subtracted; ");
	if (o->cpu >= 0)
		printf("on CPU %d.\n", o->cpu);
	else
		printf("not pinned (--cpu pins it).\n");
	printf("delta: against the in-kernel defaults; share: delta in %% of the defaults' ns\n"
	       "(a step switched off shows its price as a negative delta).\n");
	for (f = 0; f < price_nframes; f++) {
		if (!(o->frames & 1U << f))
			continue;
		figures(o, r, f, (unsigned int)d, &raw, &base);
		printf("\n%s (harness %.1f ns)\n", price_frames[f].label,
		       price_median(r->harness[f].ns, o->batches));
		printf("  %-34s %-12s %7s %7s %7s  %s\n", "configuration",
		       "verdict", "ns", "delta", "share", "what the step buys");
		for (row = 0; row < price_nrows; row++) {
			const struct price_row *p = &price_rows[row];
			const struct price_cell *c = &r->cells[f][row];

			if (!(o->rows & 1U << row))
				continue;
			if (c->na) {
				printf("  %-34s %-12s %7s %7s %7s  n/a: %s\n",
				       p->label, "", "-", "-", "-", c->why_na);
				continue;
			}
			figures(o, r, f, row, &raw, &net);
			dnet = net - base;
			printf("  %-34s %-12s %7.1f %+7.1f %+6.1f%%  %s\n",
			       p->label, price_verdict_name(p->verdict), net,
			       dnet, base > 0 ? 100 * dnet / base : 0, p->buys);
		}
	}
	printf("\nfor scale, one helper call (net of the harness, %s):",
	       price_frames[r->helpers_frame].id);
	for (i = 0; i < PRICE_NHELPERS; i++)
		printf("%s %s %.1f ns", i ? "," : "", price_helpers[i],
		       helper_ns(o, r, i));
	printf("\n");
	printf("\nprograms (xlated insns, JITed bytes, verified insns; the verifier's time,\n"
	       "states peak/total and stack from a second load at log level 4)\n");
	printf("  %-36s %6s %6s %8s %9s %11s %-14s %s\n", "object/program",
	       "xlated", "jited", "verified", "time", "states", "stack",
	       "role");
	for (i = 0; i < r->nprogs; i++) {
		const struct price_prog *p = &r->progs[i];
		char name[96], states[32] = "-", t[24] = "-";

		snprintf(name, sizeof(name), "%s/%s", p->object, p->name);
		if (p->have_log) {
			snprintf(states, sizeof(states), "%u/%u",
				 p->peak_states, p->total_states);
			snprintf(t, sizeof(t), "%llu us",
				 (unsigned long long)p->time_us);
		}
		printf("  %-36s %6u %6u %8u %9s %11s %-14s %s\n", name,
		       p->xlated_insns, p->jited_bytes, p->verified_insns, t,
		       states, p->have_log ? p->stack_depth : "-", p->role);
	}
}

/* @s as a JSON string: the labels hold nothing to escape but quotes
 * and backslashes, which are escaped anyway. */
static void jstr(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char)*s >= 0x20)
			putchar(*s);
	}
	putchar('"');
}

static void json_rows(const struct price_opts *o, const struct price_result *r,
		      unsigned int f, bool *first)
{
	int d = price_defaults_row();
	double raw, net, base, dnet;
	unsigned int row, k;

	figures(o, r, f, (unsigned int)d, &raw, &base);
	for (row = 0; row < price_nrows; row++) {
		const struct price_row *p = &price_rows[row];
		const struct price_cell *c = &r->cells[f][row];

		if (!(o->rows & 1U << row))
			continue;
		printf("%s\n    {\"frame\": ", *first ? "" : ",");
		*first = false;
		jstr(price_frames[f].id);
		printf(", \"id\": ");
		jstr(p->id);
		printf(", \"label\": ");
		jstr(p->label);
		printf(", \"buys\": ");
		jstr(p->buys);
		if (c->na) {
			printf(", \"na\": ");
			jstr(c->why_na);
			printf("}");
			continue;
		}
		figures(o, r, f, row, &raw, &net);
		dnet = net - base;
		printf(", \"verdict\": ");
		jstr(price_verdict_name(p->verdict));
		printf(", \"ns\": %.2f, \"raw_ns\": %.2f, \"delta_ns\": %.2f, \"share\": %.4f, \"batches_ns\": [",
		       net, raw, dnet, base > 0 ? dnet / base : 0);
		for (k = 0; k < o->batches; k++)
			printf("%s%u", k ? ", " : "", c->ns[k]);
		printf("]}");
	}
}

void price_report_json(const struct price_opts *o, const struct price_result *r)
{
	bool first = true;
	unsigned int f, i, k;

	printf("{\"tool\": \"xdpprice\", \"repeat\": %u, \"batches\": %u, \"cpu\": %d,\n",
	       o->repeat, o->batches, o->cpu);
	printf(" \"harness_ns\": {");
	for (f = 0, k = 0; f < price_nframes; f++) {
		if (!(o->frames & 1U << f))
			continue;
		printf("%s", k++ ? ", " : "");
		jstr(price_frames[f].id);
		printf(": %.2f", price_median(r->harness[f].ns, o->batches));
	}
	printf("},\n \"helpers_ns\": {");
	for (k = 0; k < PRICE_NHELPERS; k++) {
		printf("%s", k ? ", " : "");
		jstr(price_helpers[k]);
		printf(": %.2f", helper_ns(o, r, k));
	}
	printf("},\n \"rows\": [");
	for (f = 0; f < price_nframes; f++)
		if (o->frames & 1U << f)
			json_rows(o, r, f, &first);
	printf("\n ],\n \"programs\": [");
	for (i = 0; i < r->nprogs; i++) {
		const struct price_prog *p = &r->progs[i];

		printf("%s\n    {\"object\": ", i ? "," : "");
		jstr(p->object);
		printf(", \"name\": ");
		jstr(p->name);
		printf(", \"role\": ");
		jstr(p->role);
		printf(", \"xlated_insns\": %u, \"jited_bytes\": %u, \"verified_insns\": %u",
		       p->xlated_insns, p->jited_bytes, p->verified_insns);
		if (p->have_log) {
			printf(", \"verifier\": {\"time_us\": %llu, \"processed_insns\": %u, \"max_states_per_insn\": %u, \"total_states\": %u, \"peak_states\": %u, \"stack_depth\": ",
			       (unsigned long long)p->time_us, p->processed,
			       p->max_states_per_insn, p->total_states,
			       p->peak_states);
			jstr(p->stack_depth);
			printf("}");
		}
		printf("}");
	}
	printf("\n ]\n}\n");
}
