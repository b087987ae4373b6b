/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Steering (docs/DESIGN.md, "Steering"): the AF_XDP sockets' keys, each
 * worker's load, which the program steers by and the worker keeps, and the
 * arrival stamp the program puts in front of a frame it redirects.
 */
#ifndef RR_SHARED_STEER_H
#define RR_SHARED_STEER_H

#include <linux/types.h>

#include "shared/common.h"

#define RR_XSKMAP_SIZE (RR_MAX_QUEUES * RR_MAX_SLOTS * RR_MAX_THREADS)

/*
 * Key of the socket of worker @thread of @queue for function slot @slot:
 * (queue, thread, slot), the order of every per-socket table.
 */
#define RR_XSK_KEY(queue, thread, slot) \
	(((queue)*RR_MAX_THREADS + (thread)) * RR_MAX_SLOTS + (slot))

/*
 * A worker's load as the steering program sees it (docs/DESIGN.md,
 * "Steering"). The program counts the requests it hands the worker
 * (sent); the worker counts those it is done with (done), and every
 * round sets done to sent less what its RX rings still hold, so that
 * frames the kernel dropped after the redirect do not count for ever.
 * sent - done is the worker's backlog, the batch in its hands
 * included (done moves a batch at a time). busy_ns: CLOCK_MONOTONIC
 * when its current batch began, 0 between batches. Two cache lines: one
 * the program writes, one the worker does.
 */
struct rr_worker_load {
	__u64 sent;
	__u64 pad0[7];
	__u64 done;
	__u64 busy_ns;
	/* The queuing delay of the first request of its latest batch, the
	 * oldest it held then, in ns: how far behind it is (deadline_us,
	 * lib/deadline.h). */
	__u64 delay_ns;
	__u64 pad1[5];
};

/*
 * A worker's backlog from its counters as read: the requests handed to
 * it that it is not done with. They are written on different CPUs, so a
 * look may catch done ahead of sent for a moment: nothing, then. Capped
 * at 2^30, far past any ring, so that a score (backlog << 24) cannot wrap
 * whatever a cell wrote. The XDP program and the supervisor (steer.c)
 * reckon alike.
 */
static __inline __u64 rr_backlog(__u64 sent, __u64 done)
{
	__s64 b = (__s64)(sent - done);

	if (b <= 0)
		return 0;
	return b < (1LL << 30) ? (__u64)b : 1ULL << 30;
}

/* worker_load's value: a queue's workers, by thread, one page a queue, so
 * that a cell maps only its own queue's (src/daemon/cells/supervise.c). */
struct rr_queue_load {
	struct rr_worker_load w[RR_MAX_THREADS];
	__u8 pad[4096 - RR_MAX_THREADS * sizeof(struct rr_worker_load)];
};

/*
 * What the program puts in front of a frame it redirects (XDP metadata,
 * which the kernel copies into the UMEM with the frame): when it arrived,
 * for the worker to measure the request's queuing delay, and what the
 * worker is to do with it. magic tells a stamp from whatever the headroom
 * held before; the worker clears it, and the flags.
 */
struct rr_rx_meta {
	__u64 arrival_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 magic;
	__u32 flags; /* RR_RX_META_* */
};

#define RR_RX_META_MAGIC 0x72727374U
/* A rate-limited request to slip (RR_PORT_SLIP_WORKERS): the worker
 * answers with the function's slip reply, never calls the function. */
#define RR_RX_META_SLIP (1U << 0)
/* Marked for a capture, a trace (RR_MARK_* << 1, shared/capture.h): the
 * worker writes its records (src/daemon/ops/capture.c). */
#define RR_RX_META_CAPTURE (1U << 1)
#define RR_RX_META_TRACE (1U << 2)
#define RR_RX_META_MARK_SHIFT 1

/* rr_steer()'s @flags beside the port's: the request is a slip, to be
 * marked so, or dropped where it cannot be. */
#define RR_STEER_SLIP (1U << 31)
/* rr_steer()'s @flags: the request's mark (RR_MARK_*), from this bit
 * on, for its metadata. */
#define RR_STEER_MARK_SHIFT 29
/* rr_steer()'s result for a request dropped past its deadline: not an
 * XDP action, so that it is counted as such (steer_stat()). */
#define RR_STEER_EXPIRED 0x100

#endif /* RR_SHARED_STEER_H */
