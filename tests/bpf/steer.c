// SPDX-License-Identifier: GPL-2.0
/*
 * Steering (kern/lib/steer.h, rr_steer; docs/DESIGN.md, "Steering")
 * on crafted requests run through the XDP program with
 * bpf_prog_test_run_opts(), the workers' load written here into the
 * mapped worker_load. A test run has no AF_XDP socket: a request steered
 * to a worker with room falls back to XDP_PASS (pass/no_socket), one
 * steered to a worker whose backlog fills its RX ring (rx_ring_size,
 * RR_XDP_RX_RING) is dropped (drop/overload). So which worker was chosen
 * shows in which requests are dropped, some workers being full:
 * - round_robin: every other request, with one of two workers full;
 *   the cursor moves by one a request under either policy, and
 *   round_robin still alternates after least_loaded ran.
 * - least_loaded: never the full worker while another has room, every
 *   request dropped when all are full; workers beyond nsocks are not
 *   scored; a batch's age never outweighs a request of backlog.
 * - groups: least_loaded among the workers of the group mask only: a
 *   full group drops although a worker outside it is idle.
 * - The ring's edge: a backlog of 2047 is taken, 2048 is not.
 * - done ahead of sent (a worker that resynchronised) is no backlog.
 * - Without RR_PORT_LOAD nothing is judged, with either policy.
 * - A frame passed to the kernel is as it came: no metadata in front.
 * - a cell group's function (first_thread 2: its workers are threads 2
 *   and 3): its requests go to those two alone, in turn or by load; the
 *   shared group's threads 0 and 1, full or idle, change nothing.
 * - deadline_us (kern/lib/deadline.h): with RR_PORT_DEADLINE, a request
 *   for a worker with backlog whose batch's oldest request has waited
 *   longer than the deadline, its delay then and the batch's age since
 *   together, is dropped (drop/expired); one with no backlog, or within
 *   the deadline, or without the flag or a deadline, is not. Between two
 *   workers of equal backlog, least_loaded takes the one less behind.
 * Each case checks the verdicts, that xdp_stats moved by exactly those
 * (row 0: overload (or expired) drops and no_socket passes, nothing else
 * anywhere),
 * and that the program wrote no load (no redirect, no sent).
 * With --cost N it checks nothing and prints what each policy costs the
 * program per request, over N runs (tools/bench-steer).
 * Needs root; exits 77 (skip) otherwise.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "frames.h"
#include "reqrouter.skel.h"
#include "shared/common.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "shared/steer.h"
#include "testutil.h"
#include "xdp.h"
#include "xdptest.h"

#define PORT 6060
#define SLOT 4
#define SPORT 40000
#define N 64 /* requests a case, even */
#define RING RR_XDP_RX_RING
#define ROWS (RR_MAX_QUEUES + 1)
#define LOAD RR_PORT_LOAD
#define LEAST (RR_PORT_LOAD | RR_PORT_LEAST_LOADED)
#define NONE (-2) /* check()'s @alt: no pattern */
#define ANY (-1)  /* alternating, from either thread */

static struct rr_xdp x;
static int prog_fd, cursor_fd;
static struct rr_queue_load *q0; /* queue 0's page of worker_load */
static int ncases, nfailed;

struct frame {
	uint8_t buf[256];
	uint32_t len;
};
static struct frame f4, f6;

/* What N runs did: the verdicts, and which runs were dropped. */
struct result {
	uint32_t pass, drop, other, changed;
	bool dropped[N];
};

static uint64_t before[ROWS * RR_XDP_STAT_MAX], after[ROWS * RR_XDP_STAT_MAX];
/* The counter a case's drops must be in. */
static enum rr_xdp_stat drop_stat = RR_XDP_DROP_OVERLOAD;
static struct rr_queue_load load_before;

static int make_frames(void)
{
	static const uint8_t payload[24] = "which worker gets this?";
	struct frame_spec s = { .family = AF_INET6,
				.sport = SPORT,
				.dport = PORT,
				.payload = payload,
				.plen = sizeof(payload) };

	f4.len = build_request(f4.buf, sizeof(f4.buf), SPORT, PORT, payload,
			       sizeof(payload), NULL);
	f6.len = build_frame(f6.buf, sizeof(f6.buf), &s, NULL);
	return f4.len && f6.len ? 0 : -EINVAL;
}

/* Port PORT as function SLOT over @nsocks workers from thread @first
 * on (its cell group's), steered by @flags, to the workers in @mask
 * (steering = groups, counted from @first; 0: all). */
static void set_port_at(uint32_t first, uint32_t nsocks, uint32_t flags,
			uint32_t mask)
{
	struct rr_port_conf conf = { .slot = SLOT,
				     .nsocks = nsocks,
				     .first_thread = first,
				     .flags = flags,
				     .group_mask = { (uint16_t)mask } };

	if (rr_xdp_set_port(&x, PORT, &conf))
		t_fail("cannot set the port entry (nsocks %u, flags %#x)",
		       nsocks, flags);
}

static void set_port_group(uint32_t nsocks, uint32_t flags, uint32_t mask)
{
	set_port_at(0, nsocks, flags, mask);
}

static void set_port(uint32_t nsocks, uint32_t flags)
{
	set_port_group(nsocks, flags, 0);
}

static void set_cursor(uint32_t v)
{
	uint32_t key = 0 * RR_MAX_SLOTS + SLOT;

	if (bpf_map_update_elem(cursor_fd, &key, &v, 0))
		t_fail("cannot set the cursor: %s", strerror(errno));
}

static uint32_t cursor(void)
{
	uint32_t key = 0 * RR_MAX_SLOTS + SLOT, v = UINT32_MAX;

	if (bpf_map_lookup_elem(cursor_fd, &key, &v))
		t_fail("cannot read the cursor: %s", strerror(errno));
	return v;
}

/* Every worker of queue 0 idle, nothing sent or done. */
static void clear_load(void)
{
	memset(q0, 0, sizeof(*q0));
}

static void set_load(uint32_t t, uint64_t sent, uint64_t done)
{
	q0->w[t].sent = sent;
	q0->w[t].done = done;
}

static void full(uint32_t t)
{
	set_load(t, 1000 + RING, 1000);
}

/* Runs @f N times on RX queue 0; the frame must come back as it went. */
static void run(const struct frame *f, struct result *r)
{
	uint8_t out[256];
	uint32_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < N; i++) {
		struct xdp_md ctx = { .data_end = f->len, .rx_queue_index = 0 },
			      ctx_out = { 0 };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->buf,
			    .data_size_in = f->len, .data_out = out,
			    .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .ctx_out = &ctx_out,
			    .ctx_size_out = sizeof(ctx_out), .repeat = 1);

		if (bpf_prog_test_run_opts(prog_fd, &opts)) {
			t_fail("run %u: bpf_prog_test_run_opts: %s", i,
			       strerror(errno));
			r->other++;
			continue;
		}
		if (opts.retval == XDP_PASS) {
			r->pass++;
			/* Stamped metadata would come out in front of the
			 * frame, and ctx_out.data would be its length. */
			if (opts.data_size_out != f->len ||
			    memcmp(out, f->buf, f->len) || ctx_out.data ||
			    ctx_out.data_end != f->len)
				r->changed++;
		} else if (opts.retval == XDP_DROP) {
			r->drop++;
			r->dropped[i] = true;
		} else {
			r->other++;
		}
	}
}

static void snap(uint64_t *st)
{
	int ret = rr_xdp_read_stats(&x, st, ROWS);

	if (ret)
		t_fail("cannot read xdp_stats: %s", strerror(-ret));
}

/* The drops of a round-robin over two workers, one full: alternating,
 * and when the cursor started at 0, run i dropped iff i % 2 is thread
 * @first_full (ANY: the cursor started anywhere). */
static void check_alternation(const struct result *r, int first_full)
{
	uint32_t i;

	for (i = 0; i < N; i++) {
		if (first_full >= 0 &&
		    r->dropped[i] != ((i & 1) == (uint32_t)first_full)) {
			t_fail("run %u %s, out of turn", i,
			       r->dropped[i] ? "dropped" : "passed");
			return;
		}
		if (i && r->dropped[i] == r->dropped[i - 1]) {
			t_fail("runs %u and %u both %s", i - 1, i,
			       r->dropped[i] ? "dropped" : "passed");
			return;
		}
	}
}

/* After N requests from cursor 0 over @nsocks: the cursor moved by one
 * a request, whichever worker got it. */
static void check_cursor(uint32_t nsocks)
{
	uint32_t want = (N - 1) % nsocks + 1, got = cursor();

	if (got != want)
		t_fail("cursor %u after %u requests over %u workers, not %u",
		       got, N, nsocks, want);
}

/*
 * Runs case @name: N requests of @f with the load and port as set, and
 * checks that @want_drop of them were dropped as overload, the rest
 * passed unchanged for want of a socket, and that nothing else moved.
 * @alt: the drops alternate (ANY), from thread 0 or 1 with the cursor at
 * 0 (check_alternation()), or need not (NONE). @nsocks: the cursor
 * started at 0 and must have moved once a request over @nsocks workers
 * (0: not checked).
 */
static void check(const char *name, const struct frame *f, uint32_t want_drop,
		  int alt, uint32_t nsocks)
{
	struct result res, *r = &res;
	uint32_t k, stat, row;
	uint64_t d, want;
	int failed = t_failures;

	ncases++;
	t_at("%s", name);
	memcpy(&load_before, q0, sizeof(load_before));
	snap(before);
	run(f, r);
	snap(after);
	if (r->drop != want_drop || r->pass != N - want_drop || r->other)
		t_fail("%u dropped, %u passed, %u other of %u (want %u, %u, 0)",
		       r->drop, r->pass, r->other, N, want_drop, N - want_drop);
	if (r->changed)
		t_fail("%u of %u passed frames changed", r->changed, r->pass);
	for (k = 0; k < ROWS * RR_XDP_STAT_MAX; k++) {
		row = k / RR_XDP_STAT_MAX;
		stat = k % RR_XDP_STAT_MAX;
		d = after[k] - before[k];
		want = 0;
		if (row == 0 && stat == drop_stat)
			want = r->drop;
		else if (row == 0 && stat == RR_XDP_PASS_NO_SOCKET)
			want = r->pass;
		if (d != want)
			t_fail("xdp_stats row %u counter %u moved by %llu, not %llu",
			       row, stat, (unsigned long long)d,
			       (unsigned long long)want);
	}
	if (memcmp(&load_before, q0, sizeof(load_before)))
		t_fail("the program changed worker_load without a redirect");
	if (alt != NONE)
		check_alternation(r, alt);
	if (nsocks)
		check_cursor(nsocks);
	if (t_failures != failed)
		nfailed++;
	printf("%-4s %-58s %2u of %u dropped\n",
	       t_failures == failed ? "ok" : "FAIL", name, r->drop, N);
	/* What fails before the next case runs is its set-up. */
	t_at("set-up after \"%s\"", name);
}

static void round_robin(void)
{
	clear_load();
	full(0);
	set_port(2, LOAD);
	set_cursor(0);
	check("1 round_robin, 2 workers, thread 0 full", &f4, N / 2, 0, 2);

	clear_load();
	full(1);
	set_cursor(0);
	check("1 round_robin, 2 workers, thread 1 full", &f4, N / 2, 1, 2);
}

static void least_loaded(void)
{
	uint32_t t;

	clear_load();
	full(0);
	set_port(2, LEAST);
	set_cursor(0);
	check("2 least_loaded, 2 workers, thread 0 full", &f4, 0, NONE, 2);

	clear_load();
	full(1);
	set_cursor(0);
	check("2 least_loaded, 2 workers, thread 1 full", &f4, 0, NONE, 2);

	clear_load();
	full(0);
	full(1);
	check("2 least_loaded, 2 workers, both full", &f4, N, NONE, 0);

	clear_load();
	for (t = 0; t < 3; t++)
		full(t);
	set_port(4, LEAST);
	set_cursor(0);
	check("2 least_loaded, 4 workers, threads 0-2 full", &f4, 0, NONE, 4);

	/* Backlog first: a batch however old weighs less than one request
	 * (its age counts at most 2^24 - 1 us, a request 2^24). */
	clear_load();
	full(0);
	set_load(1, 1000 + RING - 1, 1000);
	q0->w[1].busy_ns = 1; /* began at boot */
	set_port(2, LEAST);
	check("2 least_loaded, 2047 and an ancient batch vs 2048", &f4, 0, NONE,
	      0);

	/* The cursor is wherever least_loaded left it (4 workers, then 2):
	 * round_robin takes turns from there. */
	clear_load();
	full(0);
	set_port(4, LEAST);
	check("2 least_loaded, 4 workers, thread 0 full", &f4, 0, NONE, 0);
	set_port(2, LOAD);
	check("2 round_robin again after least_loaded, thread 0 full", &f4,
	      N / 2, ANY, 0);
}

/* steering = groups: the least loaded of the workers in the mask only. */
static void groups(void)
{
	clear_load();
	full(1);
	set_port_group(2, LEAST, 1U << 1);
	set_cursor(0);
	check("8 groups of worker 1, worker 1 full, worker 0 idle", &f4, N,
	      NONE, 0);
	set_port_group(2, LEAST, 1U << 0);
	set_cursor(0);
	check("8 groups of worker 0, worker 1 full", &f4, 0, NONE, 0);
	clear_load();
	full(0);
	full(2);
	set_port_group(4, LEAST, 1U << 0 | 1U << 2 | 1U << 3);
	set_cursor(0);
	check("8 groups of workers 0, 2, 3, workers 0 and 2 full", &f4, 0, NONE,
	      0);
	full(3);
	check("8 groups of workers 0, 2, 3, all three full, 1 idle", &f4, N,
	      NONE, 0);
	set_port(2, LOAD);
}

static void ring_edge(void)
{
	static const struct {
		const char *name;
		uint32_t flags;
		uint64_t sent, done;
		uint32_t drop;
	} c[] = {
		{ "3 round_robin, 1 worker, backlog 2047", LOAD, 2047, 0, 0 },
		{ "3 round_robin, 1 worker, backlog 2048", LOAD, 2048, 0, N },
		{ "3 least_loaded, 1 worker, backlog 2047", LEAST, 2047, 0, 0 },
		{ "3 least_loaded, 1 worker, backlog 2048", LEAST, 2048, 0, N },
		{ "3 round_robin, backlog 2047 at 2^40", LOAD,
		  (1ULL << 40) + 2047, 1ULL << 40, 0 },
		{ "3 round_robin, backlog 2048 at 2^40", LOAD,
		  (1ULL << 40) + 2048, 1ULL << 40, N },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		clear_load();
		set_load(0, c[i].sent, c[i].done);
		set_port(1, c[i].flags);
		check(c[i].name, &f4, c[i].drop, NONE, 0);
	}
}

static void done_ahead(void)
{
	clear_load();
	set_load(0, 10, 12);
	set_port(1, LOAD);
	check("4 round_robin, done 2 ahead of sent", &f4, 0, NONE, 0);
	set_port(1, LEAST);
	check("4 least_loaded, done 2 ahead of sent", &f4, 0, NONE, 0);
	/* Read as unsigned it would be the fuller of the two. */
	full(1);
	set_port(2, LEAST);
	check("4 least_loaded, done ahead vs a full worker", &f4, 0, NONE, 0);
}

static void no_load(void)
{
	uint32_t t;

	clear_load();
	for (t = 0; t < RR_MAX_THREADS; t++)
		full(t);
	set_port(2, 0);
	check("5 round_robin without RR_PORT_LOAD, all full", &f4, 0, NONE, 0);
	set_port(2, RR_PORT_LEAST_LOADED);
	check("5 least_loaded without RR_PORT_LOAD, all full", &f4, 0, NONE, 0);
}

static void beyond_nsocks(void)
{
	uint32_t t;

	clear_load();
	full(5);
	set_port(2, LEAST);
	check("6 least_loaded, 2 workers, thread 5 full", &f4, 0, NONE, 0);

	/* The other way round: idle threads beyond nsocks are no refuge. */
	clear_load();
	for (t = 0; t < 2; t++)
		full(t);
	check("6 least_loaded, 2 workers full, threads 2-15 idle", &f4, N, NONE,
	      0);
	set_port(2, LOAD);
	check("6 round_robin, 2 workers full, threads 2-15 idle", &f4, N, NONE,
	      0);
}

static void unchanged(void)
{
	clear_load();
	full(0);
	set_port(2, LEAST);
	check("7 least_loaded, IPv6, passed frames unchanged", &f6, 0, NONE, 0);
	set_port(2, LOAD);
	set_cursor(0);
	check("7 round_robin, IPv6, passed frames unchanged", &f6, N / 2, 0, 0);
}

/* A cell group's function: its two workers are threads 2 and 3. */
static void cell_group(void)
{
	uint32_t t;

	clear_load();
	full(2);
	set_port_at(2, 2, LOAD, 0);
	set_cursor(0);
	check("9 round_robin, threads 2-3, thread 2 full", &f4, N / 2, 0, 2);

	/* The shared group's threads, however full, are not its own. */
	clear_load();
	for (t = 0; t < 2; t++)
		full(t);
	set_port_at(2, 2, LOAD, 0);
	check("9 round_robin, threads 2-3, threads 0-1 full", &f4, 0, NONE, 0);
	set_port_at(2, 2, LEAST, 0);
	check("9 least_loaded, threads 2-3, threads 0-1 full", &f4, 0, NONE, 0);

	/* Nor, idle, a refuge: its own full, every request dropped. */
	clear_load();
	full(2);
	full(3);
	check("9 least_loaded, threads 2-3 full, threads 0-1 idle", &f4, N,
	      NONE, 0);
	clear_load();
	full(2);
	check("9 least_loaded, threads 2-3, thread 2 full", &f4, 0, NONE, 0);

	/* Three workers from thread 3: the scan (bpf_loop) from there. */
	clear_load();
	full(3);
	full(5);
	set_port_at(3, 3, LEAST, 0);
	check("9 least_loaded, threads 3-5, 3 and 5 full", &f4, 0, NONE, 0);
	full(4);
	check("9 least_loaded, threads 3-5 full, the rest idle", &f4, N, NONE,
	      0);
	set_port(2, LOAD);
}

/* Worker @t of queue 0 behind: a backlog of @backlog, its batch's first
 * request @delay_ms old when taken, the batch begun @busy_ms ago (-1:
 * between batches). */
static void set_behind(uint32_t t, uint64_t backlog, uint64_t delay_ms,
		       int busy_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	set_load(t, 1000 + backlog, 1000);
	q0->w[t].delay_ns = delay_ms * 1000000;
	q0->w[t].busy_ns = busy_ms < 0 ? 0
				       : (uint64_t)ts.tv_sec * 1000000000ULL +
						 (uint64_t)ts.tv_nsec -
						 (uint64_t)busy_ms * 1000000;
}

static void deadline(void)
{
	static const struct {
		const char *name;
		uint32_t flags, deadline_ms;
		uint64_t backlog, delay_ms;
		int busy_ms;
		uint32_t drop;
	} c[] = {
		{ "8 deadline 30 ms, behind 40 ms", LOAD | RR_PORT_DEADLINE, 30,
		  5, 40, -1, N },
		{ "8 deadline 30 ms, behind 20 ms", LOAD | RR_PORT_DEADLINE, 30,
		  5, 20, -1, 0 },
		{ "8 deadline 30 ms, 20 ms + a batch 15 ms old",
		  LOAD | RR_PORT_DEADLINE, 30, 5, 20, 15, N },
		{ "8 deadline 30 ms, 10 ms + a batch 5 ms old",
		  LOAD | RR_PORT_DEADLINE, 30, 5, 10, 5, 0 },
		{ "8 deadline 30 ms, behind 40 ms, no backlog",
		  LOAD | RR_PORT_DEADLINE, 30, 0, 40, -1, 0 },
		{ "8 behind 40 ms, port without RR_PORT_DEADLINE", LOAD, 30, 5,
		  40, -1, 0 },
		{ "8 behind 40 ms, RR_PORT_DEADLINE, no deadline",
		  LOAD | RR_PORT_DEADLINE, 0, 5, 40, -1, 0 },
		{ "8 least_loaded, deadline 30 ms, behind 40 ms",
		  LEAST | RR_PORT_DEADLINE, 30, 5, 40, -1, N },
	};
	size_t i;

	drop_stat = RR_XDP_DROP_EXPIRED;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		clear_load();
		set_behind(0, c[i].backlog, c[i].delay_ms, c[i].busy_ms);
		rr_xdp_set_deadline(&x, SLOT,
				    (uint64_t)c[i].deadline_ms * 1000000);
		set_port(1, c[i].flags);
		check(c[i].name, &f4, c[i].drop, NONE, 0);
	}
	/* least_loaded by how far behind: equal backlogs, worker 0 behind
	 * by 40 ms, worker 1 not: worker 1 gets them all, none dropped. */
	clear_load();
	set_behind(0, 1, 40, -1);
	set_behind(1, 1, 0, -1);
	rr_xdp_set_deadline(&x, SLOT, 30000000);
	set_port(2, LEAST | RR_PORT_DEADLINE);
	set_cursor(0);
	check("8 least_loaded, equal backlogs, thread 0 behind 40 ms", &f4, 0,
	      NONE, 0);
	/* Two workers in turn, one behind: every other request. */
	clear_load();
	set_behind(0, 5, 40, -1);
	set_load(1, 1005, 1000);
	rr_xdp_set_deadline(&x, SLOT, 30000000);
	set_port(2, LOAD | RR_PORT_DEADLINE);
	set_cursor(0);
	check("8 round_robin, deadline 30 ms, thread 0 behind 40 ms", &f4,
	      N / 2, 0, 2);
	rr_xdp_set_deadline(&x, SLOT, 0);
	drop_stat = RR_XDP_DROP_OVERLOAD;
}

/*
 * --cost (tools/bench-steer's cost test): what each policy costs the XDP
 * program per request, every worker idle: the program's mean time over
 * @reps runs of one IPv4 request (BPF_PROG_TEST_RUN's repeat, on one
 * CPU, the kernel's clock), the redirect falling back to a pass as in
 * the checks. One line per policy: "cost NAME NS".
 */
static int cost(uint32_t reps)
{
	static const struct {
		const char *name;
		uint32_t nsocks, flags, mask;
	} c[] = {
		{ "round_robin-unloaded-t2", 2, 0, 0 },
		{ "round_robin-t2", 2, LOAD, 0 },
		{ "least_loaded-t2", 2, LEAST, 0 },
		{ "least_loaded-t16", 16, LEAST, 0 },
		{ "groups-t16-of-4", 16, LEAST, 0xf0 },
	};
	uint32_t i;

	clear_load();
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct xdp_md ctx = { .data_end = f4.len };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f4.buf,
			    .data_size_in = f4.len, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = reps);

		set_port_group(c[i].nsocks, c[i].flags, c[i].mask);
		if (bpf_prog_test_run_opts(prog_fd, &opts) ||
		    opts.retval != XDP_PASS) {
			fprintf(stderr, "%s: cannot run the program: %s\n",
				c[i].name, strerror(errno));
			return 1;
		}
		printf("cost %s %u\n", c[i].name, opts.duration);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = t_xdp_load_steering(&x);
	if (ret)
		return ret;
	ret = make_frames();
	if (ret) {
		fprintf(stderr, "cannot set the test up: %s\n", strerror(-ret));
		rr_xdp_destroy(&x);
		return 1;
	}
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	cursor_fd = bpf_map__fd(x.skel->maps.rr_cursor);
	q0 = &x.load[0];
	if (argc == 3 && !strcmp(argv[1], "--cost")) {
		ret = cost((uint32_t)strtoul(argv[2], NULL, 10));
		rr_xdp_destroy(&x);
		return ret;
	}
	round_robin();
	least_loaded();
	groups();
	ring_edge();
	done_ahead();
	no_load();
	beyond_nsocks();
	unchanged();
	cell_group();
	deadline();
	rr_xdp_destroy(&x);
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed in %d of %d cases\n",
			t_failures, nfailed, ncases);
		return 1;
	}
	printf("steering chose the workers it must in %d cases\n", ncases);
	return 0;
}
