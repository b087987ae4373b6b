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

/* Whether this process can load and test-run them (root, a kernel with
 * what reqrouter checks for); if not, says "SKIP: why" on stdout. */
bool t_xdp_can_run(void);

struct rr_xdp;

/* Loads reqrouter's XDP program into @x as reqrouter does (rr_xdp_load(),
 * for @mac and @mtu), libbpf's messages silenced: 0, or 77 (skip) after
 * saying "SKIP: why" on stdout (not root, or the kernel refused it). */
int t_xdp_load(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu);

#endif /* RR_XDPTEST_H */
