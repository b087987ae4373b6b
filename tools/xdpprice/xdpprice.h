/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdpprice: what each step of reqrouter's XDP program costs a request
 * (issue 48's price list). The program is loaded as reqrouter loads it
 * (tests/lib/xdptest.c, src/daemon/core/xdp.c) and configured as a
 * default install configures it, then run through BPF_PROG_TEST_RUN with
 * repeat under one configuration after another, each a guard or feature
 * switched off (or on) from the defaults; the bare XDP_TX reflector
 * (tools/reflector) is the reference. bench.c sets up and measures,
 * progs.c reads each program's size and verifier statistics, report.c
 * prints the table and its JSON form.
 */
#ifndef XDPPRICE_H
#define XDPPRICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a configuration changes from the defaults of its tier. */
enum price_knob {
	K_REFLECTOR = 1U << 0, /* tools/reflector's program, not reqrouter's */
	K_USER = 1U << 1,      /* reverse answered in user space (tier user) */
	K_NO_FUNCTION = 1U << 2, /* the request to a port with no function */
	K_NO_LOCAL = 1U << 3,	 /* answer_for = any */
	K_LOCAL_TRIE = 1U << 4,	 /* local_tab empty: the tries answer */
	K_NO_MAC = 1U << 5, /* link_mac 0: no check of the destination MAC */
	K_NO_MIN_SRC = 1U << 6, /* min_source_port = 0 */
	K_NO_HH = 1U << 7,	/* heavy_hitters = no */
	K_NO_RL = 1U << 8,	/* rate_limit = 0 */
	K_RL_BUSY = 1U << 9,	/* the source's bucket ahead of now */
	K_CSUM_ZERO = 1U << 10, /* an IPv4 request without a UDP checksum */
	K_NO_AMP = 1U << 11,	/* max_amplification = 0 */
	K_ALLOW = 1U << 12,	/* an allow-list, the source in it */
	K_NO_CACHE = 1U << 13,	/* cache = no */
	K_CACHE_HIT = 1U << 14, /* the reply cache holds the answer */
	K_SPREAD = 1U << 15, /* a new source every run (PRICE_SPREAD_SOURCES) */
	K_COOKIE = 1U << 16, /* a DNS query with a forged server cookie */
	K_NO_VALIDATE = 1U << 17, /* validated_for = 0 */
};

/* One configuration: what it changes and what every run must do. */
struct price_row {
	const char *id;	   /* for --json and scripts */
	const char *label; /* for the table */
	uint32_t knobs;	   /* enum price_knob */
	uint32_t verdict;  /* XDP_* every run must return */
	int stat;	   /* the xdp_stats counter every run moves; -1: none */
	const char *buys;  /* what the step buys, one line */
};

extern const struct price_row price_rows[];
extern const unsigned int price_nrows;
/* The index of the defaults' row in price_rows[], whose figures every
 * delta is taken against; -1 if there is none. */
int price_defaults_row(void);

/* A request frame: its family and payload length. */
struct price_frame {
	const char *id;
	const char *label;
	int family;
	uint32_t plen;
};

extern const struct price_frame price_frames[];
extern const unsigned int price_nframes;

/* What the command line asks for. */
struct price_opts {
	uint32_t repeat;  /* runs per batch (BPF_PROG_TEST_RUN's repeat) */
	uint32_t batches; /* batches per configuration; the median counts */
	int cpu;	  /* pinned there; -1: where it runs */
	bool json;
	bool verifier;	 /* reload each object once for the verifier's stats */
	uint32_t frames; /* bit i: price_frames[i] */
	uint32_t rows;	 /* bit i: price_rows[i] (the defaults always) */
};

#define PRICE_MAX_BATCHES 101
#define PRICE_MAX_FRAMES 4 /* price_frames[] */
#define PRICE_MAX_ROWS 24  /* price_rows[]; bits of price_opts.rows */

/* One measured (frame, configuration): ns per run of each batch, the
 * harness's included. */
struct price_cell {
	bool na; /* the configuration makes no sense for this frame */
	const char *why_na;
	uint32_t ns[PRICE_MAX_BATCHES];
};

/* Each program loaded: its size and what the verifier said. */
struct price_prog {
	char object[32];
	char name[48];
	const char *role;
	uint32_t xlated_insns, jited_bytes, verified_insns;
	bool have_log; /* the verifier's statistics below were read */
	uint64_t time_us;
	uint32_t processed, max_states_per_insn, total_states, peak_states;
	char stack_depth[48];
};

#define PRICE_MAX_PROGS 24

/* Helper calls priced for scale (the harness's targets price_ktime,
 * price_coarse), on the first frame measured. */
enum { PRICE_KTIME, PRICE_COARSE, PRICE_JIFFIES, PRICE_NHELPERS };
extern const char *const price_helpers[PRICE_NHELPERS];

/* Everything measured: cells[frame][row], the harness alone per frame,
 * the helpers. */
struct price_result {
	struct price_cell cells[PRICE_MAX_FRAMES][PRICE_MAX_ROWS];
	struct price_cell harness[PRICE_MAX_FRAMES];
	struct price_cell helpers[PRICE_NHELPERS];
	unsigned int helpers_frame;
	struct price_prog progs[PRICE_MAX_PROGS];
	unsigned int nprogs;
};

struct price_bench;

/* Sets up a private network namespace, loads the programs and configures
 * them: 0, 77 (cannot run here, said on stdout) or 1 (said on stderr). */
int price_setup(struct price_bench **out, const struct price_opts *o,
		struct price_result *r);
/* Every batch of every (frame, configuration), interleaved: 0, or 1
 * after saying which run did not do what it must. */
int price_measure(struct price_bench *b, const struct price_opts *o,
		  struct price_result *r);
void price_teardown(struct price_bench *b); /* NULL-safe */
/* An XDP action's name (XDP_TX, ...), "?" past them. */
const char *price_verdict_name(uint32_t v);

/* progs.c: each program of @obj (loaded from @elf, as a cpumap program
 * if @cpumap) into @r->progs, with @verifier the verifier's statistics
 * from a second load. 0 or -errno (no room left). */
struct bpf_object;
int price_progs_add(struct price_result *r, const char *object,
		    struct bpf_object *obj, const void *elf, size_t elf_size,
		    bool cpumap, bool verifier);

/* report.c */
double price_median(const uint32_t *v, uint32_t n);
void price_report_text(const struct price_opts *o,
		       const struct price_result *r);
void price_report_json(const struct price_opts *o,
		       const struct price_result *r);

#endif /* XDPPRICE_H */
