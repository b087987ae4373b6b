// SPDX-License-Identifier: GPL-2.0
/*
 * The canary's pick in XDP (kern/lib/canary.h; docs/DESIGN.md,
 * "Canaries") on crafted requests from 512 source addresses, run through
 * the program with bpf_prog_test_run_opts(). The running version's
 * workers are threads 0-1 of the queue, the canary's (its own cell group)
 * threads 2-3, and those are full: a request the pick sends to the canary
 * is dropped (drop/overload), one it leaves with the running version
 * falls back to a pass (no AF_XDP socket in a test run). So:
 * - share 50 %: about half the sources go to the canary (200-312 of
 *   512), each source the same way every time, IPv4 and IPv6;
 * - share 10 %: about a tenth (25-80), and every one of them among the
 *   50 % ones of the same key (a larger share keeps its sources);
 * - a new key: another half;
 * - share 0, no entry for the port, or the entry without RR_PORT_CANARY
 *   in the port's: every source stays with the running version;
 * - share 100 %: every source goes to the canary.
 * Needs root; exits 77 (skip) otherwise.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/socket.h>

#include "frames.h"
#include "reqrouter.skel.h"
#include "shared/canary.h"
#include "shared/common.h"
#include "shared/port.h"
#include "shared/steer.h"
#include "testutil.h"
#include "xdp.h"
#include "xdptest.h"

#define PORT 6161
#define SLOT 3	      /* the running version's */
#define CANARY_SLOT 5 /* the canary's */
#define NSRC 512
#define RING RR_XDP_RX_RING

static struct rr_xdp x;
static int prog_fd;
static struct rr_queue_load *q0; /* queue 0's page of worker_load */

/* The verdict on a request from source @i (IPv6 with @v6): true if the
 * canary's full workers dropped it. */
static bool to_canary(uint32_t i, bool v6)
{
	uint8_t buf[256], out[256], saddr[16] = { 0 };
	struct frame_spec s = { .family = v6 ? AF_INET6 : AF_INET,
				.sport = 40000,
				.dport = PORT,
				.saddr = saddr,
				.plen = 16 };
	struct xdp_md ctx = { .rx_queue_index = 0 };
	uint32_t len;

	if (v6) {
		saddr[0] = 0x20;
		saddr[1] = 0x01;
		saddr[2] = 0x0d;
		saddr[3] = 0xb8;
		saddr[14] = (uint8_t)(i >> 8);
		saddr[15] = (uint8_t)i;
	} else {
		saddr[0] = 10;
		saddr[1] = 7;
		saddr[2] = (uint8_t)(i / 250);
		saddr[3] = (uint8_t)(1 + i % 250);
	}
	len = build_frame(buf, sizeof(buf), &s, NULL);
	ctx.data_end = len;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf,
		    .data_size_in = len, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	if (!len || bpf_prog_test_run_opts(prog_fd, &opts)) {
		t_fail("source %u: cannot run the program: %s", i,
		       strerror(errno));
		return false;
	}
	if (opts.retval != XDP_DROP && opts.retval != XDP_PASS)
		t_fail("source %u: verdict %u, not a drop or a pass", i,
		       opts.retval);
	return opts.retval == XDP_DROP;
}

/* The port's entry (RR_PORT_CANARY with @flagged), and the canary's with
 * @share and @seed (none with @entry false). */
static void set_canary(bool flagged, bool entry, uint32_t share, uint64_t seed)
{
	struct rr_port_conf conf = { .slot = SLOT,
				     .nsocks = 2,
				     .first_thread = 0,
				     .flags = RR_PORT_LOAD |
					      (flagged ? RR_PORT_CANARY : 0) };
	struct rr_canary c = { .seed = seed,
			       .share = share,
			       .conf = { .slot = CANARY_SLOT,
					 .nsocks = 2,
					 .first_thread = 2,
					 .flags = RR_PORT_LOAD } };

	if (entry ? rr_xdp_set_canary(&x, PORT, &c)
		  : rr_xdp_del_canary(&x, PORT))
		t_fail("cannot write the canary's entry");
	if (rr_xdp_set_port(&x, PORT, &conf))
		t_fail("cannot write the port's entry");
}

/* How many of the sources go to the canary (into @side), checking that
 * each goes the same way a second time. */
static uint32_t count(const char *what, bool v6, bool side[NSRC])
{
	uint32_t i, n = 0;
	bool a, b;

	for (i = 0; i < NSRC; i++) {
		a = to_canary(i, v6);
		b = to_canary(i, v6);
		if (a != b)
			t_fail("%s: source %u went both ways", what, i);
		side[i] = a;
		n += a;
	}
	printf("  %s: %u of %d sources to the canary\n", what, n, NSRC);
	return n;
}

static void expect(const char *what, uint32_t n, uint32_t lo, uint32_t hi)
{
	if (n < lo || n > hi)
		t_fail("%s: %u of %d sources to the canary, not %u-%u", what, n,
		       NSRC, lo, hi);
}

int main(void)
{
	static bool half[NSRC], tenth[NSRC], other[NSRC];
	uint32_t i, n;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = t_xdp_load_steering(&x);
	if (ret)
		return ret;
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	q0 = &x.load[0];
	memset(q0, 0, sizeof(*q0));
	/* The canary's workers full: what goes there is dropped. */
	for (i = 2; i < 4; i++) {
		q0->w[i].sent = 1000 + RING;
		q0->w[i].done = 1000;
	}

	set_canary(true, true, RR_CANARY_SHARE_ONE / 2, 0x1234);
	expect("50 %, IPv4", count("50 %, IPv4", false, half), 200, 312);
	expect("50 %, IPv6", count("50 %, IPv6", true, other), 200, 312);
	set_canary(true, true, RR_CANARY_SHARE_ONE / 10, 0x1234);
	expect("10 %, IPv4", count("10 %, IPv4", false, tenth), 25, 80);
	for (i = 0; i < NSRC; i++)
		if (tenth[i] && !half[i])
			t_fail("source %u: on the canary at 10 %% but not at 50 %%",
			       i);
	set_canary(true, true, RR_CANARY_SHARE_ONE / 2, 0x5678);
	count("50 %, another key", false, other);
	for (i = 0, n = 0; i < NSRC; i++)
		n += other[i] != half[i];
	printf("  another key: %u sources changed sides\n", n);
	expect("another key: sources that changed sides", n, 200, 312);
	set_canary(true, true, 0, 0x1234);
	expect("share 0", count("share 0", false, other), 0, 0);
	set_canary(true, false, 0, 0);
	expect("no canary entry", count("no canary entry", false, other), 0, 0);
	set_canary(false, true, RR_CANARY_SHARE_ONE, 0x1234);
	expect("the entry, the port without the flag",
	       count("the entry, the port without the flag", false, other), 0,
	       0);
	set_canary(true, true, RR_CANARY_SHARE_ONE, 0x1234);
	expect("100 %", count("100 %", false, other), NSRC, NSRC);
	rr_xdp_destroy(&x);
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("the canary got its share of the sources, each always the same way\n");
	return 0;
}
