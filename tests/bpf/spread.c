// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_spread's receiving side (kern/lib/spread.h, spread()) through
 * BPF_PROG_TEST_RUN: which listed CPU a request goes to, and what stays.
 * echo is loaded the way reqrouter loads a function (its cpumap copy
 * too, which must load), port 7 spreads over CPUs 0 and 1, and only CPU
 * 1 has a cpumap entry: a request handed to CPU 1 comes back
 * XDP_REDIRECT, one for CPU 0 cannot be redirected and takes today's
 * path, echo's program on this CPU (XDP_TX). So the verdict says which
 * CPU was chosen:
 *  - of the two, the one whose queue should be shorter now (the wait
 *    its cpumap program recorded, less the time since), either way;
 *  - a recorded wait that has had time to drain counts as none;
 *  - a request over xdp_max_payload stays (punted to the workers: no
 *    socket here, so XDP_PASS), and so does every request while the
 *    only CPU listed has no entry;
 * with exactly the counters each path moves. Cannot test the cpumap
 * program itself: the kernel does not test-run cpumap programs.
 *
 * Needs root, a kernel with BPF and two possible CPUs; exits 77 (skip)
 * otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "frames.h"
#include "testutil.h"
#include "config.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "shared/port.h"
#include "shared/spread.h"
#include "shared/stats.h"
#include "util.h"
#include "xdp.h"
#include "xdptest.h"

#define SKIP 77
#define MTU 1500
#define SLOT 0
#define PORT 7
#define LONG_AGO 10000000000ULL /* 10 s, in ns */

static struct rr_xdp x;
static int prog_fd, checks;

struct want {
	const char *what;
	uint16_t ncpus;	     /* listed: CPUs 0 and 1, or 0 alone */
	uint64_t wait_ns[2]; /* recorded for CPUs 0 and 1 */
	uint64_t age_ns[2];  /* that long ago */
	uint32_t plen;	     /* payload bytes */
	uint32_t verdict;    /* XDP_REDIRECT: to CPU 1 */
	int xdp_stat;	     /* enum rr_xdp_stat that moves by one */
	int fn_stat[2];	     /* enum rr_fn_stat that move by one, -1 none */
};

static const struct want cases[] = {
	{ "CPU 0 busy for 10 s: CPU 1",
	  2,
	  { LONG_AGO, 0 },
	  { 0, 0 },
	  32,
	  XDP_REDIRECT,
	  RR_XDP_REDIRECT_SPREAD,
	  { RR_FN_XDP_SPREAD, -1 } },
	{ "CPU 1 busy for 10 s: CPU 0, which has no entry: here",
	  2,
	  { 0, LONG_AGO },
	  { 0, 0 },
	  32,
	  XDP_TX,
	  RR_XDP_TX_FUNCTION,
	  { RR_FN_XDP_RX, RR_FN_XDP_TX } },
	{ "CPU 1's 10 s drained 20 s ago, CPU 0's 10 s now: CPU 1",
	  2,
	  { LONG_AGO, LONG_AGO },
	  { 0, 2 * LONG_AGO },
	  32,
	  XDP_REDIRECT,
	  RR_XDP_REDIRECT_SPREAD,
	  { RR_FN_XDP_SPREAD, -1 } },
	{ "over xdp_max_payload: stays, for the workers",
	  2,
	  { LONG_AGO, 0 },
	  { 0, 0 },
	  200,
	  XDP_PASS,
	  RR_XDP_PASS_NO_SOCKET,
	  { RR_FN_XDP_RX, RR_FN_XDP_PUNT } },
	{ "CPU 0 alone, no entry: here",
	  1,
	  { LONG_AGO, 0 },
	  { 0, 0 },
	  32,
	  XDP_TX,
	  RR_XDP_TX_FUNCTION,
	  { RR_FN_XDP_RX, RR_FN_XDP_TX } },
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int set_port(uint16_t ncpus)
{
	struct rr_port_conf conf = {
		.slot = SLOT,
		.nsocks = 1,
		.flags = RR_PORT_XDP | RR_PORT_SPREAD,
		.xdp_max_payload = 100,
		.spread_n = ncpus,
		.spread_cpu = { 0, 1 },
	};

	return rr_xdp_set_port(&x, PORT, &conf);
}

static int setup(void)
{
	char why[RR_ERRLEN];
	int ret;

	ret = rr_xdp_load(&x, f_dst_mac, MTU);
	if (ret)
		return ret;
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	ret = rr_xdp_load_function(&x, SLOT, rr_registry_xdp("echo"), why,
				   sizeof(why));
	if (ret) {
		fprintf(stderr, "cannot load echo: %s\n", why);
		return ret;
	}
	t_at("set-up");
	checks++;
	if (!x.fn_objs_cpumap[SLOT])
		t_fail("echo's cpumap copy did not load (reqrouter -v says why)");
	return rr_xdp_spread_cpu(&x, 1, true);
}

static void one(const struct want *w)
{
	struct t_xdp_counts a, b;
	uint8_t frame[2048], out[2048], payload[256];
	struct frame_spec spec = {
		.family = AF_INET,
		.sport = 40000,
		.dport = PORT,
		.payload = payload,
		.plen = w->plen,
		.csum = CSUM_VALID,
	};
	struct rr_spread_load l = { 0 };
	struct frame_layout lay;
	uint32_t len, cpu;
	uint64_t now = now_ns();

	memset(payload, 'p', sizeof(payload));
	len = build_frame(frame, sizeof(frame), &spec, &lay);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

	t_at("%s", w->what);
	checks++;
	for (cpu = 0; cpu < 2; cpu++) {
		l.wait_ns = w->wait_ns[cpu];
		l.at_ns = now - w->age_ns[cpu];
		if (bpf_map__update_elem(x.skel->maps.spread_load, &cpu,
					 sizeof(cpu), &l, sizeof(l), 0)) {
			t_fail("cannot set CPU %u's wait", cpu);
			return;
		}
	}
	if (set_port(w->ncpus) || t_xdp_counts(&x, SLOT, &a) ||
	    bpf_prog_test_run_opts(prog_fd, &o) || t_xdp_counts(&x, SLOT, &b)) {
		t_fail("cannot run it: %s", strerror(errno));
		return;
	}
	if (o.retval != w->verdict)
		t_fail("verdict %u, want %u", o.retval, w->verdict);
	t_xdp_moved(&a, &b, w->fn_stat, w->xdp_stat);
}

int main(void)
{
	size_t i;
	int ret;

	if (libbpf_num_possible_cpus() < 2) {
		printf("SKIP: one possible CPU: nothing to spread over\n");
		return SKIP;
	}
	ret = t_xdp_start(&x, setup);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		one(&cases[i]);
	rr_xdp_destroy(&x);
	printf("xdp_spread chose as it must in %d cases, %d failures\n", checks,
	       t_failures);
	return t_failures ? 1 : 0;
}
