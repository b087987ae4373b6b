/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_spread (docs/DESIGN.md, "Spreading XDP work over CPUs"): how many
 * CPUs a function may list, what a frame handed to one of them carries in
 * front of it, and each such CPU's wait, which the receiving side reads to
 * choose between two.
 */
#ifndef RR_SHARED_SPREAD_H
#define RR_SHARED_SPREAD_H

#include <linux/types.h>

#define RR_MAX_SPREAD 16	/* CPUs a function's xdp_spread lists */
#define RR_MAX_SPREAD_CPUS 1024 /* the highest CPU number + 1 it may list */

/* What a frame handed to an xdp_spread CPU carries in front of it: the
 * queue it arrived on, which a cpumap does not keep, for the counters;
 * when it was handed over, for the CPU's wait (struct rr_spread_load);
 * and what it is marked for (RR_MARK_*, shared/capture.h), for that CPU
 * to write its records, the reply's among them. */
struct rr_spread_meta {
	__u32 magic;
	__u16 queue;
	__u16 mark;
	__u64 sent_ns;
};

/*
 * How long the last frame an xdp_spread CPU took had waited in its
 * cpumap queue, and when it took it: the receiving side estimates the
 * wait there now as what is left of it (the queue then drains in about
 * that long), and of two CPUs hands the frame to the one with less. A CPU
 * that shares its time with something else (the client, on the bed)
 * takes less work, not its turn. Written only by the cpumap program on
 * that CPU; a cache line each.
 */
struct rr_spread_load {
	__u64 wait_ns;
	__u64 at_ns;
	__u64 pad[6];
};

#define RR_SPREAD_META_MAGIC 0x72727370U

#endif /* RR_SHARED_SPREAD_H */
