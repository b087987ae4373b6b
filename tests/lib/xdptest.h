/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF program tests that load reqrouter's XDP programs the way
 * reqrouter does (src/daemon/xdp.c) share. Apart from testutil.c so that
 * programs linking tests/lib without the daemon need none of it.
 */
#ifndef RR_XDPTEST_H
#define RR_XDPTEST_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/stats.h"

/* Whether this process can load and test-run them (root, a kernel with
 * what reqrouter checks for); if not, says "SKIP: why" on stdout. */
bool t_xdp_can_run(void);

struct rr_xdp;

/* A test's start: t_xdp_can_run(), then @setup(), which loads into @x.
 * 0 to go on; else the exit code: 77 (skip, said), or 1 after "FAIL
 * cannot load the programs: why" with @x destroyed. */
int t_xdp_start(struct rr_xdp *x, int (*setup)(void));

/* Loads reqrouter's XDP program into @x as reqrouter does (rr_xdp_load(),
 * for @mac and @mtu), libbpf's messages silenced: 0, or 77 (skip) after
 * saying "SKIP: why" on stdout (not root, or the kernel refused it). */
int t_xdp_load(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu);

/* t_xdp_load() with no MAC and an MTU of 1500, and the workers' load
 * mapped (x->load: rr_xdp_map_load()), for a test of steering: 0, or
 * the exit code, 77 (skip, said) or 1 (said, @x destroyed). */
int t_xdp_load_steering(struct rr_xdp *x);

/* The counters a test run on queue 0 may move: xdp_stats' row, and
 * fn_stats of one function slot there. */
struct t_xdp_counts {
	uint64_t fn[RR_FN_STAT_MAX];
	uint64_t xdp[RR_XDP_STAT_MAX];
};

/* One run of program @prog_fd on the @len bytes of frame @in (a copy:
 * @in is left as it was): its verdict, or -errno. */
int t_xdp_run1(int prog_fd, const uint8_t *in, uint32_t len);

/* Reads them for @slot: 0, or -1 with errno. */
int t_xdp_counts(struct rr_xdp *x, uint32_t slot, struct t_xdp_counts *c);

/* t_fail()s each counter that did not move as said from @a to @b: by one
 * for fn_stats @fn[0] and @fn[1] (-1: none) and xdp_stats @xdp_stat, by
 * nothing for every other. */
void t_xdp_moved(const struct t_xdp_counts *a, const struct t_xdp_counts *b,
		 const int fn[2], int xdp_stat);

#endif /* RR_XDPTEST_H */
