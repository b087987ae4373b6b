// SPDX-License-Identifier: GPL-2.0
/*
 * The way back from a function's XDP program to the steering program:
 * what a handler does not answer (RR_XDP_PUNT, -EMSGSIZE, another errno, a
 * reply longer than the room) goes through rr_verdict to
 * reqrouter_verdict, which must redirect or drop it and count it exactly
 * as user space would: the verdict, the frame left untouched, and exactly
 * the expected fn_stats and xdp_stats counters moved, nothing else. An
 * answer is counted by the function's own program at the keys the
 * request carries. The function (tests/bpf/progs/verdict_fn.bpf.c) is
 * loaded the way reqrouter loads one (src/daemon/xdp.c). A punt with a
 * class (RR_XDP_PUNT_CLASS) goes to its class's group under
 * steering = groups: on SLOT_GROUPS class 0 is worker 0's, class 1
 * worker 1's, and worker 1 is full, so class 1 is dropped as overload
 * (and not counted as punted) where a plain punt passes (no socket in a
 * test run).
 *
 * Needs root and a kernel with BPF; exits 77 (skip) otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
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
#include "shared/stats.h"
#include "shared/steer.h"
#include "verdict_fn.skel.h"
#include "util.h"
#include "xdp.h"
#include "xdptest.h"

#define MTU 1500
#define SLOT 3
#define SLOT_AMP 4    /* max_amplification = 1: no room beyond the request */
#define SLOT_GROUPS 5 /* steering = groups, workers = 0 | 1, worker 1 full */

static const struct rr_xdp_impl impl = { .name = "verdict_fn",
					 .elf_bytes = verdict_fn__elf_bytes };
static struct rr_xdp x;
static int prog_fd, checks;

struct want {
	const char *payload;
	uint32_t slot;
	uint32_t verdict;
	int untouched;	/* the frame must leave as it came */
	int fn_stat[2]; /* enum rr_fn_stat that move by one, -1: none */
	int xdp_stat;	/* enum rr_xdp_stat that moves by one */
};

static const struct want cases[] = {
	{ "hello",
	  SLOT,
	  XDP_TX,
	  0,
	  { RR_FN_XDP_RX, RR_FN_XDP_TX },
	  RR_XDP_TX_FUNCTION },
	{ "Punt",
	  SLOT,
	  XDP_PASS,
	  1,
	  { RR_FN_XDP_RX, RR_FN_XDP_PUNT },
	  RR_XDP_PASS_NO_SOCKET }, /* no socket here: the fallback */
	{ "Msize",
	  SLOT,
	  XDP_DROP,
	  1,
	  { RR_FN_XDP_RX, RR_FN_XDP_DROP + RR_DROP_REPLY_TOO_BIG },
	  RR_XDP_DROP_FUNCTION },
	{ "Msize",
	  SLOT_AMP,
	  XDP_DROP,
	  1,
	  { RR_FN_XDP_RX, RR_FN_XDP_DROP + RR_DROP_AMPLIFICATION },
	  RR_XDP_DROP_FUNCTION },
	{ "Einval",
	  SLOT,
	  XDP_DROP,
	  1,
	  { RR_FN_XDP_RX, RR_FN_XDP_DROP + RR_DROP_FUNCTION_ERROR },
	  RR_XDP_DROP_FUNCTION },
	{ "Big",
	  SLOT,
	  XDP_DROP,
	  1,
	  { RR_FN_XDP_RX, RR_FN_XDP_DROP + RR_DROP_REPLY_TOO_BIG },
	  RR_XDP_DROP_FUNCTION },
	{ "Punt",
	  SLOT_GROUPS,
	  XDP_PASS,
	  1,
	  { RR_FN_XDP_RX, RR_FN_XDP_PUNT },
	  RR_XDP_PASS_NO_SOCKET }, /* class 0: worker 0, which has room */
	{ "Class",
	  SLOT_GROUPS,
	  XDP_DROP,
	  1,
	  { RR_FN_XDP_RX, -1 },
	  RR_XDP_DROP_OVERLOAD }, /* class 1: worker 1, full: not punted */
};

static int setup(void)
{
	struct rr_port_conf conf = { .nsocks = 1,
				     .flags = RR_PORT_XDP,
				     .xdp_max_payload = RR_XDP_MAX_PAYLOAD };
	char why[RR_ERRLEN];
	uint32_t s;
	int ret;

	ret = rr_xdp_load(&x, f_dst_mac, MTU);
	if (ret)
		return ret;
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	for (s = SLOT; s <= SLOT_GROUPS; s++) {
		ret = rr_xdp_load_function(&x, s, &impl, why, sizeof(why));
		if (ret) {
			fprintf(stderr, "cannot load verdict_fn: %s\n", why);
			return ret;
		}
		conf.slot = s;
		conf.max_amplification = s == SLOT_AMP;
		if (s == SLOT_GROUPS) {
			conf.nsocks = 2;
			conf.flags |= RR_PORT_LOAD | RR_PORT_LEAST_LOADED;
			conf.group_mask[0] = 1U << 0;
			conf.group_mask[1] = 1U << 1;
		}
		ret = rr_xdp_set_port(&x, 5000 + s, &conf);
		if (ret)
			return ret;
	}
	/* Worker 1 of queue 0 has a full RX ring's backlog. */
	ret = rr_xdp_map_load(&x, 1);
	if (ret)
		return ret;
	x.load[0].w[1].sent = RR_XDP_RX_RING;
	return 0;
}

static void one(const struct want *w)
{
	struct t_xdp_counts a, b;
	uint8_t frame[2048], out[2048];
	struct frame_spec spec = {
		.family = AF_INET,
		.sport = 40000,
		.dport = 5000 + w->slot,
		.payload = (const uint8_t *)w->payload,
		.plen = strlen(w->payload),
		.csum = CSUM_PARTIAL,
	};
	struct frame_layout lay;
	uint32_t len = build_frame(frame, sizeof(frame), &spec, &lay);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

	t_at("'%s' on slot %u", w->payload, w->slot);
	checks++;
	if (t_xdp_counts(&x, w->slot, &a) ||
	    bpf_prog_test_run_opts(prog_fd, &o) ||
	    t_xdp_counts(&x, w->slot, &b)) {
		t_fail("cannot run it: %s", strerror(errno));
		return;
	}
	if (o.retval != w->verdict)
		t_fail("verdict %u, want %u", o.retval, w->verdict);
	if (w->untouched && (o.data_size_out != len || memcmp(out, frame, len)))
		t_fail("the frame was changed");
	t_xdp_moved(&a, &b, w->fn_stat, w->xdp_stat);
}

int main(void)
{
	size_t i;
	int ret;

	ret = t_xdp_start(&x, setup);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		one(&cases[i]);
	rr_xdp_destroy(&x);
	printf("%d verdicts checked, %d failures\n", checks, t_failures);
	return t_failures ? 1 : 0;
}
