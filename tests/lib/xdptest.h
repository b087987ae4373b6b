/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF program tests that load reqrouter's XDP programs the way
 * reqrouter does (src/daemon/xdp.c) share. Apart from testutil.c so that
 * programs linking tests/lib without the daemon need none of it.
 */
#ifndef RR_XDPTEST_H
#define RR_XDPTEST_H

#include <stdbool.h>

/* Whether this process can load and test-run them (root, a kernel with
 * what reqrouter checks for); if not, says "SKIP: why" on stdout. */
bool t_xdp_can_run(void);

#endif /* RR_XDPTEST_H */
