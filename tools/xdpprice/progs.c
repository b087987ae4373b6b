// SPDX-License-Identifier: GPL-2.0
/*
 * What each loaded program weighs, so that the next feature shows what
 * it adds: its size as the kernel holds it (struct bpf_prog_info:
 * xlated instructions, JITed bytes, the instructions the verifier
 * processed), and the verifier's own statistics line (log level 4,
 * BPF_LOG_STATS: time, states, stack). The kernel gives that line only
 * while it loads, and reqrouter loads without asking for it, so each
 * object is loaded a second time for it alone, shaped as the first (the
 * same read-only data and map sizes, hence the same verification), and
 * closed again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "xdpprice.h"

/* Room for the statistics lines: level 4 writes nothing else. */
#define LOG_SIZE 4096

/* What a program is for, by name, as the table says it. */
static const char *role_of(const char *name, bool cpumap)
{
	static const struct {
		const char *name, *role;
	} roles[] = {
		{ "reqrouter_xdp", "on the interface: every frame" },
		{ "reqrouter_verdict",
		  "tail call: a function's punt or failure" },
		{ "reqrouter_verdict_cpumap",
		  "tail call: the same, xdp_spread" },
		{ "reqrouter_spread", "cpumap: xdp_spread's other half" },
		{ "reqrouter_scatter", "TC egress: gathers" },
		{ "reflect", "the reference" },
		{ "pass", "the reflector's peer program" },
		{ "price_harness", "xdpprice's harness (subtracted)" },
		{ "price_nop", "xdpprice's baseline target" },
		{ "price_ktime", "xdpprice: a clock read, for scale" },
		{ "price_coarse", "xdpprice: a coarse clock read, for scale" },
		{ "price_jiffies", "xdpprice: a jiffies read, for scale" },
	};
	size_t i;

	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (!strcmp(name, roles[i].name))
			return roles[i].role;
	if (!strncmp(name, "rr_fn_", 6))
		return cpumap ? "tail call: the function, xdp_spread"
			      : "tail call: the function answers";
	return "";
}

static void info_of(int fd, struct price_prog *p)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	p->xlated_insns = info.xlated_prog_len / sizeof(struct bpf_insn);
	p->jited_bytes = info.jited_prog_len;
	p->verified_insns = info.verified_insns;
}

/*
 * The verifier's statistics as kernel/bpf/verifier.c prints them:
 * "verification time T usec", "stack depth A+B...", "processed N insns
 * (limit L) max_states_per_insn M total_states S peak_states P mark_read
 * R". Whatever is missing stays 0.
 */
static void parse_log(const char *log, struct price_prog *p)
{
	unsigned long long t;
	const char *s;

	s = strstr(log, "verification time ");
	if (s && sscanf(s, "verification time %llu usec", &t) == 1) {
		p->time_us = t;
		p->have_log = true;
	}
	s = strstr(log, "stack depth ");
	if (s)
		sscanf(s, "stack depth %47s", p->stack_depth);
	s = strstr(log, "processed ");
	if (s)
		sscanf(s,
		       "processed %u insns (limit %*u) max_states_per_insn %u total_states %u peak_states %u",
		       &p->processed, &p->max_states_per_insn, &p->total_states,
		       &p->peak_states);
}

/*
 * @elf loaded again, shaped as @loaded, each program with a log buffer
 * at level 4; the statistics go into the programs of @first.. @n, by
 * name. Best effort: a copy the kernel refuses leaves them unread.
 */
static void verifier_stats(struct bpf_object *loaded, const void *elf,
			   size_t size, bool cpumap, struct price_prog *first,
			   unsigned int n)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts,
		    .object_name = bpf_object__name(loaded));
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_map *m, *lm;
	const void *data;
	unsigned int i;
	char *logs;
	size_t dsize;

	logs = calloc(PRICE_MAX_PROGS, LOG_SIZE);
	obj = logs ? bpf_object__open_mem(elf, size, &opts) : NULL;
	if (!obj) {
		free(logs);
		return;
	}
	bpf_object__for_each_map(m, obj)
	{
		lm = bpf_object__find_map_by_name(loaded, bpf_map__name(m));
		if (!lm)
			continue;
		bpf_map__set_max_entries(m, bpf_map__max_entries(lm));
		if (!bpf_map__is_internal(m))
			continue;
		data = bpf_map__initial_value(lm, &dsize);
		if (data)
			bpf_map__set_initial_value(m, data, dsize);
	}
	i = 0;
	bpf_object__for_each_program(prog, obj)
	{
		if (i == PRICE_MAX_PROGS)
			break;
		bpf_program__set_log_buf(prog, logs + (size_t)i * LOG_SIZE,
					 LOG_SIZE);
		bpf_program__set_log_level(prog, 4 /* BPF_LOG_STATS */);
		if (cpumap)
			bpf_program__set_expected_attach_type(prog,
							      BPF_XDP_CPUMAP);
		i++;
	}
	if (!bpf_object__load(obj)) {
		i = 0;
		bpf_object__for_each_program(prog, obj)
		{
			unsigned int k;

			if (i == PRICE_MAX_PROGS)
				break;
			for (k = 0; k < n; k++)
				if (!strcmp(first[k].name,
					    bpf_program__name(prog)))
					parse_log(logs + (size_t)i * LOG_SIZE,
						  &first[k]);
			i++;
		}
	}
	bpf_object__close(obj);
	free(logs);
}

int price_progs_add(struct price_result *r, const char *object,
		    struct bpf_object *obj, const void *elf, size_t elf_size,
		    bool cpumap, bool verifier)
{
	unsigned int first = r->nprogs;
	struct bpf_program *prog;
	struct price_prog *p;

	if (!obj)
		return -EINVAL;
	bpf_object__for_each_program(prog, obj)
	{
		if (r->nprogs == PRICE_MAX_PROGS)
			return -ENOSPC;
		p = &r->progs[r->nprogs++];
		memset(p, 0, sizeof(*p));
		snprintf(p->object, sizeof(p->object), "%s", object);
		snprintf(p->name, sizeof(p->name), "%s",
			 bpf_program__name(prog));
		p->role = role_of(p->name, cpumap);
		info_of(bpf_program__fd(prog), p);
	}
	if (verifier)
		verifier_stats(obj, elf, elf_size, cpumap, &r->progs[first],
			       r->nprogs - first);
	return 0;
}
