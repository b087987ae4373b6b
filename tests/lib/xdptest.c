// SPDX-License-Identifier: GPL-2.0
/* The BPF program tests' shared checks and set-up (xdptest.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "config.h"
#include "testutil.h"
#include "xdp.h"
#include "xdptest.h"

bool t_xdp_can_run(void)
{
	char why[RR_ERRLEN];

	if (geteuid()) {
		printf("SKIP: needs root (BPF)\n");
		return false;
	}
	if (rr_xdp_check_kernel(why, sizeof(why))) {
		printf("SKIP: %s\n", why);
		return false;
	}
	return true;
}

int t_xdp_start(struct rr_xdp *x, int (*setup)(void))
{
	int ret;

	if (!t_xdp_can_run())
		return 77;
	ret = setup();
	if (ret) {
		fprintf(stderr, "FAIL cannot load the programs: %s\n",
			strerror(-ret));
		rr_xdp_destroy(x);
		return 1;
	}
	return 0;
}

int t_xdp_load(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu)
{
	int ret;

	if (geteuid()) {
		printf("SKIP: loading the XDP program needs root\n");
		return 77;
	}
	libbpf_set_print(NULL);
	ret = rr_xdp_load(x, mac, mtu);
	if (ret) {
		printf("SKIP: cannot load the XDP program: %s\n",
		       strerror(-ret));
		return 77;
	}
	return 0;
}

int t_xdp_run1(int prog_fd, const uint8_t *in, uint32_t len)
{
	uint8_t out[4096];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_size_in = len,
		    .data_out = out, .data_size_out = sizeof(out));

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	return (int)opts.retval;
}

int t_xdp_load_steering(struct rr_xdp *x)
{
	static const uint8_t no_mac[6];
	int ret = t_xdp_load(x, no_mac, 1500);

	if (ret)
		return ret;
	ret = rr_xdp_map_load(x, 1);
	if (ret) {
		fprintf(stderr, "cannot map the workers' load: %s\n",
			strerror(-ret));
		rr_xdp_destroy(x);
		return 1;
	}
	return 0;
}

int t_xdp_counts(struct rr_xdp *x, uint32_t slot, struct t_xdp_counts *c)
{
	if (rr_xdp_read_fn_stats(x, 0, slot, c->fn) ||
	    rr_xdp_read_stats(x, c->xdp, 1))
		return -1;
	return 0;
}

void t_xdp_moved(const struct t_xdp_counts *a, const struct t_xdp_counts *b,
		 const int fn[2], int xdp_stat)
{
	uint64_t want;
	int k;

	for (k = 0; k < RR_FN_STAT_MAX; k++) {
		want = a->fn[k] + (k == fn[0] || k == fn[1]);
		if (b->fn[k] != want)
			t_fail("fn_stats[%d] moved by %lu", k,
			       (unsigned long)(b->fn[k] - a->fn[k]));
	}
	for (k = 0; k < RR_XDP_STAT_MAX; k++) {
		want = a->xdp[k] + (k == xdp_stat);
		if (b->xdp[k] != want)
			t_fail("xdp_stats[%d] moved by %lu", k,
			       (unsigned long)(b->xdp[k] - a->xdp[k]));
	}
}
