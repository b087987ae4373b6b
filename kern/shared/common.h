/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every part sizes its tables by, the XDP program and user space
 * alike: RX queues, function slots, workers per queue; and the name a
 * stale XDP program is known by.
 *
 * kern/shared/ holds what kern/ and src/ agree on, one header per feature,
 * named as the feature's XDP header in kern/lib/ (docs/DESIGN.md, "kern/
 * layout"): map sizes, the layout of map values and the program's
 * counters. Plain fixed-width types only, so both sides compile them
 * unchanged. None of it is the function API: a function's XDP program sees
 * the counters only through the keys the steering program puts in its
 * request (include/reqrouter/rr_xdp.h).
 */
#ifndef RR_SHARED_COMMON_H
#define RR_SHARED_COMMON_H

#define RR_XDP_PROG_NAME "reqrouter_xdp" /* how a stale program is known */

#define RR_MAX_QUEUES 64  /* RX queues served */
#define RR_MAX_SLOTS 32	  /* functions served at once */
#define RR_MAX_THREADS 16 /* workers per queue */

#endif /* RR_SHARED_COMMON_H */
