// SPDX-License-Identifier: GPL-2.0
/*
 * The response rate limiter (kern/lib/rl.h, rl_check) on crafted
 * requests run through the XDP program with bpf_prog_test_run_opts(): a
 * request that goes on is passed (the port has no socket), a limited one
 * dropped, a slipped one sent back (XDP_TX) as DNS's truncated reply.
 * - Burst: a quiet prefix gets rate_limit_burst requests through at
 *   once (two of its sources, each at most half of it), then nothing;
 *   another /24 is not affected.
 * - Rate: offered faster than rate_limit for a while, a prefix gets
 *   burst + rate x time through, within 5 %.
 * - Slip: with slip 3 every third limited request gets the slip reply:
 *   QR and TC set, the question echoed, every count but QDCOUNT zero,
 *   nothing after the question; without RR_PORT_SLIP_TC none does.
 * - Slip on a bare veth (RR_PORT_SLIP_WORKERS): no reply from XDP, where
 *   it would be lost; every third limited request is steered to the
 *   workers instead (with no socket here, dropped, never passed to the
 *   kernel: each shows as a move of the round-robin cursor).
 * - Exempt prefixes are never limited, their neighbours are.
 * - IPv6 is keyed by /64: two sources of one /64 share a bucket, those
 *   of a /64 in another /56 do not (their /48 has room for both).
 * - rate_limit off: nothing is limited.
 * - Several prefix lengths: a /32 flood inside a /24 takes half its
 *   budget, a quiet neighbour gets the rest; a flood spoofed across a
 *   /20, every /24 under its limit, is held to the /20's (8 /24s').
 * - Cost (rate_limit_us): a source charged past a second's budget is
 *   limited, one under it is not, nor one charged by another function.
 * - A dry run (rate_limit_mode = log): a flood goes by in full, counted
 *   as what the limiter would limit and seen held; without it, limited.
 * - A spoofed spread (issue 42): while requests from ever new random
 *   /24s come as fast as the test can send them, far more than the
 *   limiter's old 4096 buckets a row took at this rate, a client at half
 *   its rate is never limited, and neither is any of the spread's /24s.
 * - A full set: a flooding prefix keeps its entry while newcomers to its
 *   set take the others, earliest first, each counted as evicted, and it
 *   stays limited.
 * Needs root; exits 77 (skip) otherwise.
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>

#include "config.h"
#include "frames.h"
#include "shared/rl.h"
#include "reqrouter.skel.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "testutil.h"
#include "rl.h"
#include "xdp.h"
#include "xdptest.h"

#define SKIP 77
#define PORT 5353
#define SLOT 3
#define SPORT 40000

static struct rr_xdp x;
static int prog_fd;
/* The port's workers a queue (the round-robin cursor goes round them). */
static uint32_t nsocks = 1;

/* A DNS query for example.com. IN A, ID 0x1234, RD, with an OPT record
 * after the question (which the slip reply must not carry). */
static const uint8_t query[] =
	"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01" /* header */
	"\x07"
	"example"
	"\x03"
	"com"
	"\x00\x00\x01\x00\x01"				/* example.com. A IN */
	"\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00"; /* OPT */
#define QUESTION_END (12 + 13 + 4)

struct frame {
	uint8_t buf[256];
	uint32_t len;
	struct frame_layout lay;
};

static void make(struct frame *f, int family, const uint8_t *saddr)
{
	struct frame_spec s = { .family = family,
				.sport = SPORT,
				.dport = PORT,
				.saddr = saddr,
				.payload = query,
				.plen = sizeof(query) - 1 };

	f->len = build_frame(f->buf, sizeof(f->buf), &s, &f->lay);
}

/* Runs @f @n times (a fresh copy each, so a slip reply never feeds the
 * next); counts the verdicts in @pass, @drop, @tx (any may be NULL), and
 * keeps the last reply in @reply. */
static int run(const struct frame *f, uint32_t n, uint32_t *pass,
	       uint32_t *drop, uint32_t *tx, struct frame *reply)
{
	uint8_t out[256];
	uint32_t i;

	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->buf,
			    .data_size_in = f->len, .data_out = out,
			    .data_size_out = sizeof(out));

		if (bpf_prog_test_run_opts(prog_fd, &opts))
			return -errno;
		if (opts.retval == XDP_PASS && pass)
			(*pass)++;
		else if (opts.retval == XDP_DROP && drop)
			(*drop)++;
		else if (opts.retval == XDP_TX) {
			if (tx)
				(*tx)++;
			if (reply) {
				memcpy(reply->buf, out, opts.data_size_out);
				reply->len = opts.data_size_out;
			}
		}
	}
	return 0;
}

/* Port PORT as function SLOT limited to @rate (0: off) with @burst and
 * @slip per /24 and /64 (the default levels around them: a source at
 * half, the wider prefixes more); @flags added. */
static void set_port(uint32_t rate, uint32_t burst, uint32_t slip,
		     uint32_t flags)
{
	struct rr_port_conf conf = {
		.slot = SLOT, .nsocks = nsocks, .flags = flags, .rl_slip = slip
	};

	if (rate) {
		conf.flags |= RR_PORT_RL;
		rr_rl_levels(&conf, rate, burst, 24, 64);
	}
	if (rr_xdp_set_port(&x, PORT, &conf))
		t_fail("cannot set the port entry");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void burst_and_rate(void)
{
	const uint8_t a[4] = { 192, 0, 2, 1 }, b[4] = { 192, 0, 2, 200 },
		      c[4] = { 198, 51, 100, 1 }, c2[4] = { 198, 51, 100, 2 },
		      d[4] = { 100, 100, 101, 1 }, d2[4] = { 100, 100, 101, 2 };
	uint32_t pass = 0, drop = 0, sent = 0;
	struct frame fa, fb, fc, fc2, fd, fd2;
	uint64_t t0, t;
	double want;

	make(&fa, AF_INET, a);
	make(&fb, AF_INET, b);
	make(&fc, AF_INET, c);
	make(&fc2, AF_INET, c2);
	make(&fd, AF_INET, d);
	make(&fd2, AF_INET, d2);

	/* Each source of a /24 may take half of its /24's: two sources
	 * take it all. */
	t_at("burst 20 at 10/s");
	set_port(10, 20, 0, 0);
	run(&fa, 15, &pass, &drop, NULL, NULL);
	run(&fb, 15, &pass, &drop, NULL, NULL);
	if (pass != 20 || drop != 10)
		t_fail("%u passed, %u dropped of 30 from one /24 (want 20, 10)",
		       pass, drop);
	pass = drop = 0;
	run(&fc, 10, &pass, &drop, NULL, NULL);
	run(&fc2, 10, &pass, &drop, NULL, NULL);
	if (pass != 20)
		t_fail("another /24: %u of 20 passed", pass);

	t_at("2000/s, burst 50, offered for 0.5 s");
	set_port(2000, 50, 0, 0);
	pass = drop = 0;
	t0 = now_ns();
	do {
		run(&fd, 20, &pass, &drop, NULL, NULL);
		run(&fd2, 20, &pass, &drop, NULL, NULL);
		sent += 40;
		t = now_ns();
	} while (t - t0 < 500000000ULL);
	want = 2000.0 * (double)(t - t0) / 1e9;
	if (pass < want * 0.95 || pass > (want + 50) * 1.05)
		t_fail("%u of %u passed in %.3f s (want %.0f-%.0f)", pass, sent,
		       (double)(t - t0) / 1e9, want, want + 50);
	if (sent < pass * 2)
		t_fail("only %u offered: not faster than the rate", sent);
}

/*
 * Leases (issue 48): a source sending fast takes its tokens several at a
 * time into a lease of this CPU's, for the rest of the clock tick. Its
 * /32 holds 500 tokens here (1000/s per /24, a second's burst). It sends
 * 100 in a tick, whose leases took more than that; the lease lapses (a
 * few ticks' sleep), and the next judgement gives what it had left back:
 * its burst comes out whole, 500 and what it refilled meanwhile, not 500
 * less the lapsed tokens; and never more than the bucket holds.
 */
static void leases(void)
{
	const uint8_t a[4] = { 192, 0, 7, 1 };
	uint32_t pass = 0, drop = 0;
	uint64_t t0, t;
	struct frame fa;
	double refill;

	make(&fa, AF_INET, a);
	t_at("a lapsed lease given back, 1000/s per /24, burst 1000");
	set_port(1000, 1000, 0, 0);
	t0 = now_ns();
	run(&fa, 100, &pass, &drop, NULL, NULL);
	usleep(20000);
	run(&fa, 600, &pass, &drop, NULL, NULL);
	t = now_ns();
	/* The /32's 500 a second, over the run. */
	refill = 500.0 * (double)(t - t0) / 1e9;
	if (pass < 500 || pass > 500 + refill + 2)
		t_fail("%u of 700 passed in %.3f s (want 500-%.0f)", pass,
		       (double)(t - t0) / 1e9, 500 + refill + 2);
}

/* The round-robin cursor of function SLOT on queue 0: it moves once
 * each time the program steers one of its requests to a worker, round
 * the port's nsocks. */
static uint32_t cursor(void)
{
	uint32_t key = 0 * RR_MAX_SLOTS + SLOT, v = 0;

	bpf_map__lookup_elem(x.skel->maps.rr_cursor, &key, sizeof(key), &v,
			     sizeof(v), 0);
	return v;
}

static void slip(void)
{
	const uint8_t a[4] = { 203, 0, 113, 5 }, b[4] = { 203, 0, 114, 5 },
		      c[4] = { 203, 0, 115, 5 };
	uint32_t pass = 0, drop = 0, tx = 0, was;
	struct frame fa, fb, fc, reply = { .len = 0 };
	uint64_t st[RR_FN_STAT_MAX], xs0[RR_XDP_STAT_MAX], xs1[RR_XDP_STAT_MAX];
	const uint8_t *p;

	make(&fa, AF_INET, a);
	make(&fb, AF_INET, b);
	make(&fc, AF_INET, c);
	t_at("slip 3, DNS's TC reply");
	set_port(1, 1, 3, RR_PORT_SLIP_TC);
	run(&fa, 31, &pass, &drop, &tx, &reply);
	if (pass != 1 || tx != 10 || drop != 20)
		t_fail("%u passed, %u slipped, %u dropped of 31 (want 1, 10, 20)",
		       pass, tx, drop);
	if (reply.len != fa.lay.payload_off + QUESTION_END) {
		t_fail("a slip reply of %u bytes, not %u", reply.len,
		       fa.lay.payload_off + QUESTION_END);
	} else {
		p = reply.buf + fa.lay.payload_off;
		if (p[0] != 0x12 || p[1] != 0x34 || p[2] != 0x83 || p[3] ||
		    f_get16(p + 4) != 1 || f_get16(p + 6) || f_get16(p + 8) ||
		    f_get16(p + 10))
			t_fail("the slip header: %02x%02x %02x%02x qd %u an %u ns %u ar %u",
			       p[0], p[1], p[2], p[3], f_get16(p + 4),
			       f_get16(p + 6), f_get16(p + 8), f_get16(p + 10));
		if (memcmp(p + 12, query + 12, QUESTION_END - 12))
			t_fail("the question is not echoed");
		if (f_get16(reply.buf + fa.lay.l4_off) != PORT ||
		    f_get16(reply.buf + fa.lay.l4_off + 2) != SPORT)
			t_fail("the reply's ports are not swapped");
		if (ref_udp_check(reply.buf, AF_INET, fa.lay.l3_off,
				  fa.lay.l4_off, 8 + QUESTION_END))
			t_fail("the reply's UDP checksum is wrong");
	}
	if (rr_xdp_read_fn_stats(&x, 0, SLOT, st))
		t_fail("cannot read the counters");
	else if (st[RR_FN_RL_SLIPPED] < 10 || st[RR_FN_RL_LIMITED] < 20)
		t_fail("counted %lu slipped, %lu limited",
		       (unsigned long)st[RR_FN_RL_SLIPPED],
		       (unsigned long)st[RR_FN_RL_LIMITED]);

	t_at("slip 3 on a bare veth: the workers slip");
	nsocks = RR_MAX_THREADS;
	set_port(1, 1, 3, RR_PORT_SLIP_TC | RR_PORT_SLIP_WORKERS);
	pass = drop = tx = 0;
	was = cursor();
	if (rr_xdp_read_stats(&x, xs0, 1))
		t_fail("cannot read xdp_stats");
	run(&fc, 31, &pass, &drop, &tx, NULL);
	if (pass != 1 || tx || drop != 30)
		t_fail("%u passed, %u sent back, %u dropped of 31 (want 1, 0, 30)",
		       pass, tx, drop);
	if ((cursor() + RR_MAX_THREADS - was) % RR_MAX_THREADS != 11)
		t_fail("steered %u times, modulo %u (want 11: the one that went by, 10 slips)",
		       (cursor() + RR_MAX_THREADS - was) % RR_MAX_THREADS,
		       RR_MAX_THREADS);
	nsocks = 1;
	if (rr_xdp_read_stats(&x, xs1, 1))
		t_fail("cannot read xdp_stats");
	else if (xs1[RR_XDP_DROP_RATE_LIMITED] -
				 xs0[RR_XDP_DROP_RATE_LIMITED] !=
			 30 ||
		 xs1[RR_XDP_TX_SLIP] != xs0[RR_XDP_TX_SLIP] ||
		 xs1[RR_XDP_REDIRECT_SLIP] != xs0[RR_XDP_REDIRECT_SLIP])
		t_fail("xdp_stats: rate_limited +%lu, tx/slip +%lu, redirect/slip +%lu (want 30, 0, 0: no socket)",
		       (unsigned long)(xs1[RR_XDP_DROP_RATE_LIMITED] -
				       xs0[RR_XDP_DROP_RATE_LIMITED]),
		       (unsigned long)(xs1[RR_XDP_TX_SLIP] -
				       xs0[RR_XDP_TX_SLIP]),
		       (unsigned long)(xs1[RR_XDP_REDIRECT_SLIP] -
				       xs0[RR_XDP_REDIRECT_SLIP]));

	t_at("slip 3 without a slip reply");
	set_port(1, 1, 3, 0);
	pass = drop = tx = 0;
	run(&fb, 31, &pass, &drop, &tx, NULL);
	if (pass != 1 || tx || drop != 30)
		t_fail("%u passed, %u slipped, %u dropped of 31 (want 1, 0, 30)",
		       pass, tx, drop);
}

static void exempt(void)
{
	const uint8_t a[4] = { 100, 64, 0, 77 }, b[4] = { 100, 64, 0, 78 },
		      b2[4] = { 100, 64, 0, 79 }, b3[4] = { 100, 64, 0, 80 };
	struct rr_cidr c = { .family = AF_INET,
			     .addr = { 100, 64, 0, 77 },
			     .len = 32 };
	uint32_t pass = 0, npass = 0;
	struct frame fa, fb, fb2, fb3;

	make(&fa, AF_INET, a);
	make(&fb, AF_INET, b);
	make(&fb2, AF_INET, b2);
	make(&fb3, AF_INET, b3);
	t_at("100.64.0.77/32 exempt, its /24 flooded");
	if (rr_rl_exempt(&x, SLOT, &c, true))
		t_fail("cannot add the exemption");
	set_port(1, 5, 0, RR_PORT_RL_EXEMPT);
	run(&fa, 50, &pass, NULL, NULL, NULL);
	run(&fb, 34, &npass, NULL, NULL, NULL);
	run(&fb2, 33, &npass, NULL, NULL, NULL);
	run(&fb3, 33, &npass, NULL, NULL, NULL);
	run(&fa, 50, &pass, NULL, NULL, NULL);
	if (pass != 100)
		t_fail("the exempt source: %u of 100 passed", pass);
	if (npass != 5)
		t_fail("its neighbours: %u of 100 passed (want the burst, 5)",
		       npass);
	rr_rl_exempt(&x, SLOT, &c, false);
}

static void ipv6(void)
{
	uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 7 }, b[16], c[16],
		c2[16];
	uint32_t pass = 0, drop = 0;
	struct frame fa, fb, fc, fc2;

	a[15] = 1;
	memcpy(b, a, 16);
	b[15] = 2;
	b[8] = 0x80; /* same /64 */
	memcpy(c, a, 16);
	c[6] = 1; /* a /64 of another /56 of the same /48 */
	c[7] = 8;
	memcpy(c2, c, 16);
	c2[15] = 2;
	make(&fa, AF_INET6, a);
	make(&fb, AF_INET6, b);
	make(&fc, AF_INET6, c);
	make(&fc2, AF_INET6, c2);
	/* Each source at most half its /64's burst (5), the /56 1.5 times
	 * it, the /48 twice (20: both /64s' bursts). */
	t_at("IPv6 by /64");
	set_port(1, 10, 0, 0);
	run(&fa, 6, &pass, &drop, NULL, NULL);
	run(&fb, 6, &pass, &drop, NULL, NULL);
	if (pass != 10 || drop != 2)
		t_fail("one /64: %u passed, %u dropped of 12 (want 10, 2)",
		       pass, drop);
	pass = drop = 0;
	run(&fc, 5, &pass, &drop, NULL, NULL);
	run(&fc2, 5, &pass, &drop, NULL, NULL);
	if (pass != 10)
		t_fail("another /64: %u of 10 passed", pass);

	t_at("rate_limit off");
	set_port(0, 0, 0, 0);
	pass = 0;
	run(&fa, 50, &pass, NULL, NULL, NULL);
	if (pass != 50)
		t_fail("%u of 50 passed with the limiter off", pass);
}

/*
 * A dry run (rate_limit_mode = log, RR_PORT_RL_LOG): a flood over the
 * limit goes by, every request, each over it counted as one the limiter
 * would limit (RR_FN_RL_WOULD_LIMIT), none as limited, and its prefix is
 * seen held as in earnest (reqrouterctl top's look); the same flood from
 * another /24 without the flag is limited.
 */
static void dry_run(void)
{
	const uint8_t a[4] = { 192, 0, 4, 77 }, b[4] = { 203, 0, 119, 77 };
	struct rr_port_conf conf = { .slot = SLOT };
	uint64_t st0[RR_FN_STAT_MAX], st1[RR_FN_STAT_MAX];
	uint32_t pass = 0, drop = 0;
	struct frame fa, fb;

	make(&fa, AF_INET, a);
	make(&fb, AF_INET, b);
	rr_rl_levels(&conf, 10, 10, 24, 64);
	/* One source: half the /24's burst, 5. */
	t_at("rate_limit_mode = log: a flood of 100 at 10/s, burst 10");
	set_port(10, 10, 0, RR_PORT_RL_LOG);
	if (rr_xdp_read_fn_stats(&x, 0, SLOT, st0))
		t_fail("cannot read the counters");
	run(&fa, 100, &pass, &drop, NULL, NULL);
	if (pass != 100 || drop)
		t_fail("%u passed, %u dropped of 100 (want 100, 0)", pass,
		       drop);
	if (rr_xdp_read_fn_stats(&x, 0, SLOT, st1))
		t_fail("cannot read the counters");
	else if (st1[RR_FN_RL_WOULD_LIMIT] - st0[RR_FN_RL_WOULD_LIMIT] != 95 ||
		 st1[RR_FN_RL_LIMITED] != st0[RR_FN_RL_LIMITED])
		t_fail("counted %lu that it would limit, %lu limited (want 95, 0)",
		       (unsigned long)(st1[RR_FN_RL_WOULD_LIMIT] -
				       st0[RR_FN_RL_WOULD_LIMIT]),
		       (unsigned long)(st1[RR_FN_RL_LIMITED] -
				       st0[RR_FN_RL_LIMITED]));
	if (!rr_rl_held(&x, &conf, AF_INET, a, 32, now_ns()))
		t_fail("reqrouterctl top's look (rr_rl_held) does not see it held");

	t_at("rate_limit_mode = drop: the same flood");
	set_port(10, 10, 0, 0);
	pass = drop = 0;
	run(&fb, 100, &pass, &drop, NULL, NULL);
	if (pass != 5 || drop != 95)
		t_fail("%u passed, %u dropped of 100 (want 5, 95)", pass, drop);
}

/*
 * Several prefix lengths at once (issue 44), as Knot 3.4's limiter keeps
 * them: a source floods inside a /24 whose other source is quiet, and
 * takes only its own half of the /24's budget, so the neighbour is
 * answered; then a flood spoofed across a whole /20, each /24 of it and
 * each source under its own limit, is held to the /20's budget, eight
 * times a /24's, while a /24 of the next /20 goes by.
 */
static void levels(void)
{
	const uint8_t a[4] = { 192, 0, 5, 1 }, b[4] = { 192, 0, 5, 2 },
		      c[4] = { 172, 16, 16, 1 };
	uint32_t pass = 0, drop = 0, i, j;
	struct frame fa, fb, fc, fs;
	uint8_t s[4] = { 172, 16, 0, 0 };

	make(&fa, AF_INET, a);
	make(&fb, AF_INET, b);
	make(&fc, AF_INET, c);
	t_at("a /32 flood inside a /24 at 100/s, burst 100, a quiet neighbour");
	set_port(100, 100, 0, 0);
	run(&fa, 1000, &pass, &drop, NULL, NULL);
	if (pass < 50 || pass > 52)
		t_fail("the flooding source: %u of 1000 passed (want its half of the burst, 50)",
		       pass);
	pass = 0;
	run(&fb, 40, &pass, NULL, NULL, NULL);
	if (pass != 40)
		t_fail("its quiet neighbour: %u of 40 passed", pass);

	t_at("a flood spoofed across 172.16.0.0/20 at 10/s per /24, burst 10");
	set_port(10, 10, 0, 0);
	pass = drop = 0;
	/* 8 sources in each of its 16 /24s, one request each, the /24s in
	 * turn: every source and every /24 within its burst. */
	for (j = 0; j < 8; j++)
		for (i = 0; i < 16; i++) {
			s[2] = (uint8_t)i;
			s[3] = (uint8_t)(1 + j);
			make(&fs, AF_INET, s);
			run(&fs, 1, &pass, &drop, NULL, NULL);
		}
	if (pass < 80 || pass > 81)
		t_fail("%u of 128 passed (want the /20's burst, 80)", pass);
	pass = 0;
	run(&fc, 5, &pass, NULL, NULL, NULL);
	if (pass != 5)
		t_fail("a /24 of the next /20: %u of 5 passed", pass);
}

/*
 * rate_limit_us (RR_PORT_RL_COST): 1000 us a second per /24, a source
 * half of it, each bucket a second's budget. A source charged 0.8 ms
 * (rr_rl_charge(), as a worker charges its calls) is 1.6 s ahead (its
 * /24 0.8 s): limited, and seen held; its neighbour, charged 0.05 ms,
 * is not (the /24 is under its budget); one of another /20, charged
 * nothing, goes by; and one charged 2 ms for another function (another
 * seed) is not limited for this one.
 */
static void cost(void)
{
	struct rr_port_conf conf = { .slot = SLOT, .flags = RR_PORT_RL_COST };
	struct rr_rl_charge ch[3] = {
		{ .addr = { 10, 200, 0, 1 }, .family = AF_INET, .ns = 800000 },
		{ .addr = { 10, 200, 0, 2 }, .family = AF_INET, .ns = 50000 },
		{ .addr = { 10, 220, 0, 1 }, .family = AF_INET, .ns = 2000000 },
	};
	const uint8_t c[4] = { 10, 210, 0, 1 };
	uint32_t pass = 0, drop = 0;
	struct frame f[3], fc;
	struct rr_rl_cost rc;
	int i;

	t_at("rate_limit_us 1000: a source charged 0.8 ms, its neighbour 0.05");
	if (rr_xdp_map_rl_cost(&x)) {
		t_fail("cannot map rl_cost_table");
		return;
	}
	rr_rl_levels(&conf, 1000, 0, 24, 64);
	rc.seed = 0;
	memcpy(rc.interval_ns, conf.rl_interval_ns, sizeof(rc.interval_ns));
	memcpy(rc.len, conf.rl_len, sizeof(rc.len));
	rr_rl_charge(x.rl_cost, &rc, ch, 2, now_ns());
	rc.seed = 1; /* another function's */
	rr_rl_charge(x.rl_cost, &rc, &ch[2], 1, now_ns());
	for (i = 0; i < 3; i++)
		make(&f[i], AF_INET, ch[i].addr);
	make(&fc, AF_INET, c);
	set_port(1000, 1000, 0, RR_PORT_RL_COST);
	run(&f[0], 5, &pass, &drop, NULL, NULL);
	if (pass || drop != 5)
		t_fail("charged 0.8 ms: %u passed, %u dropped of 5 (want 0, 5)",
		       pass, drop);
	if (!rr_rl_held(&x, &conf, AF_INET, ch[0].addr, 32, now_ns()))
		t_fail("reqrouterctl top's look (rr_rl_held) does not see it held");
	pass = 0;
	run(&f[1], 5, &pass, NULL, NULL, NULL);
	if (pass != 5)
		t_fail("its neighbour, 0.05 ms: %u of 5 passed, want 5", pass);
	pass = 0;
	run(&fc, 5, &pass, NULL, NULL, NULL);
	if (pass != 5)
		t_fail("another /20, charged nothing: %u of 5 passed", pass);
	pass = 0;
	run(&f[2], 5, &pass, NULL, NULL, NULL);
	if (pass != 5)
		t_fail("charged 2 ms by another function: %u of 5 passed",
		       pass);
}

/* xorshift32: the spread's sources, the same every run. */
static uint32_t next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/*
 * A client's /24 at 5 requests a second, half its limit of 10, for 2 s,
 * and between two of its requests a spread from random /24s of 11.0.0.0
 * to 99.255.255.0 (none the cases before flooded), each new source in a
 * frame of its own, as fast as runs go
 * (some 200 k to 1 M a second: 50 to 250 a second on each of 4096
 * buckets, where the old table limited every prefix whose three buckets
 * were all past 10). Both must go by: the client's every request, and
 * the spread's (a /24 comes back rarely, within its burst).
 */
static void spread(void)
{
	const uint8_t c[4] = { 198, 51, 102, 9 };
	uint32_t cpass = 0, csent = 0, fpass = 0, fsent = 0, seed = 42;
	uint8_t src[4] = { 10, 0, 0, 1 };
	uint64_t t0, next, t;
	struct frame fc, ff;
	uint32_t r;

	make(&fc, AF_INET, c);
	t_at("a spoofed spread from random /24s, a client at half its rate");
	set_port(10, 10, 0, 0);
	t0 = now_ns();
	next = t0;
	do {
		t = now_ns();
		if (t >= next) {
			run(&fc, 1, &cpass, NULL, NULL, NULL);
			csent++;
			next += 200000000ULL;
		}
		r = next_rand(&seed);
		src[0] = (uint8_t)(11 + (r >> 24) % 89);
		src[1] = (uint8_t)r;
		src[2] = (uint8_t)(r >> 8);
		make(&ff, AF_INET, src);
		run(&ff, 1, &fpass, NULL, NULL, NULL);
		fsent++;
	} while (t - t0 < 2000000000ULL);
	printf("  spread: %u requests from random /24s in %.2f s, %u passed; client: %u of %u passed\n",
	       fsent, (double)(t - t0) / 1e9, fpass, cpass, csent);
	if (cpass != csent)
		t_fail("the client got %u of %u through", cpass, csent);
	if (fpass != fsent)
		t_fail("the spread got %u of %u through: a /24 limited for others' requests",
		       fpass, fsent);
	if (fsent < 100000)
		t_fail("only %u spread requests sent in 2 s", fsent);
}

/* An IPv4 address's first three bytes from @i, in 10.0.0.0/8 or above. */
static void addr_of(uint32_t i, uint8_t a[4])
{
	a[0] = (uint8_t)(10 + (i >> 16));
	a[1] = (uint8_t)(i >> 8);
	a[2] = (uint8_t)i;
	a[3] = 1;
}

/* Its /24's set in rl_table under the port entry set_port() writes
 * (seed 0). */
static uint32_t set_of(const uint8_t a[4])
{
	struct rr_port_conf conf = { .rl_seed = 0 };
	uint32_t v;

	memcpy(&v, a, 4);
	return rr_rl_set_of(rr_rl_hash(&conf, AF_INET, 24, v, 0));
}

/*
 * A set overflowed: a prefix floods at 1/s with a burst of 2 (its
 * bucket two seconds ahead), then six newcomers of its set come once
 * each (a second ahead each). The first three take the free entries,
 * the next three the earliest of the taken ones: the newcomers', never
 * the flood's, which stays limited, and is seen held by reqrouterctl
 * top's look (rr_rl_held()).
 * The spread's entries before it are let lapse first (a fifth of a
 * second ahead at most: a source's, at half the rate).
 */
static void full_set(void)
{
	struct rr_port_conf conf = { .slot = SLOT };
	uint32_t pass = 0, drop = 0, i, n = 0, set;
	uint64_t st[RR_FN_STAT_MAX], was;
	uint8_t a[4], a2[4], b[4];
	struct frame fa, fa2, fb;

	rr_rl_levels(&conf, 1, 2, 24, 64);
	addr_of(0x77000, a);
	memcpy(a2, a, 4);
	a2[3] = 2;
	set = set_of(a);
	make(&fa, AF_INET, a);
	make(&fa2, AF_INET, a2);
	t_at("a full set: six newcomers beside a flooding prefix");
	usleep(400000);
	set_port(1, 2, 0, 0);
	if (rr_xdp_read_fn_stats(&x, 0, SLOT, st))
		t_fail("cannot read the counters");
	was = st[RR_FN_RL_EVICTED];
	/* Two sources of it, each half its burst. */
	run(&fa, 5, &pass, &drop, NULL, NULL);
	run(&fa2, 5, &pass, &drop, NULL, NULL);
	if (pass != 2 || drop != 8)
		t_fail("the flood: %u passed, %u dropped of 10 (want 2, 8)",
		       pass, drop);
	pass = drop = 0;
	for (i = 0x77001; n < 6 && i < 0x77001 + (1U << 22); i++) {
		addr_of(i, b);
		if (set_of(b) != set)
			continue;
		make(&fb, AF_INET, b);
		run(&fb, 1, &pass, &drop, NULL, NULL);
		n++;
	}
	if (n != 6 || pass != 6)
		t_fail("%u of %u newcomers to the set passed (want 6 of 6)",
		       pass, n);
	if (rr_xdp_read_fn_stats(&x, 0, SLOT, st))
		t_fail("cannot read the counters");
	else if (st[RR_FN_RL_EVICTED] - was != 3)
		t_fail("%lu live entries evicted (want 3)",
		       (unsigned long)(st[RR_FN_RL_EVICTED] - was));
	pass = drop = 0;
	run(&fa, 5, &pass, &drop, NULL, NULL);
	if (pass || drop != 5)
		t_fail("the flood after them: %u passed, %u dropped of 5 (want 0, 5)",
		       pass, drop);
	if (!rr_rl_held(&x, &conf, AF_INET, a, 24, now_ns()))
		t_fail("reqrouterctl top's look (rr_rl_held) does not see it held");
}

/* As hh_sketch.c: runs are cheap only with the program attached in
 * driver mode, here to a veth of a private network namespace. */
static int dispatch_once(char *why, size_t len)
{
	int ifindex, ret;

	if (unshare(CLONE_NEWNET)) {
		snprintf(why, len, "unshare(CLONE_NEWNET): %s",
			 strerror(errno));
		return -errno;
	}
	ret = system("ip link add rrrl0 type veth peer name rrrl1");
	ifindex = (int)if_nametoindex("rrrl0");
	if (ret || !ifindex) {
		snprintf(why, len, "cannot make a veth pair");
		return -ENODEV;
	}
	ret = bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE, NULL);
	if (ret)
		snprintf(why, len, "cannot attach in driver mode: %s",
			 strerror(-ret));
	return ret;
}

int main(void)
{
	static const uint8_t no_mac[6];
	cpu_set_t one;
	char why[160];
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = t_xdp_load(&x, no_mac, 1500);
	if (ret)
		return ret;
	/* The slip's count is per CPU. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	ret = dispatch_once(why, sizeof(why));
	if (ret) {
		printf("SKIP: %s\n", why);
		rr_xdp_destroy(&x);
		return SKIP;
	}
	burst_and_rate();
	slip();
	exempt();
	ipv6();
	dry_run();
	levels();
	leases();
	cost();
	spread();
	full_set();
	rr_xdp_destroy(&x);
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("the rate limiter limited what it must\n");
	return 0;
}
