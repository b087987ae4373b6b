/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deadlines (docs/DESIGN.md, "Deadlines"): a function with deadline_us
 * has its requests dropped here while the worker one would go to is
 * further behind than that. A request it took would wait at least as
 * long as the oldest of the worker's latest batch did, and be dropped
 * by the worker as expired (or answered after its client gave up); here
 * it costs no copy into the UMEM, which is where the receiving CPU goes
 * under overload. The worker publishes how far behind it is in its load
 * (struct rr_worker_load, delay_ns) at every batch; a worker with no
 * backlog is behind by nothing, whatever it published last.
 */
#ifndef RR_LIB_DEADLINE_H
#define RR_LIB_DEADLINE_H

#include "lib/common.h"
#include "shared/common.h"
#include "shared/steer.h"

/* By function slot: its deadline_us in ns, 0 for none. Written by user
 * space beside the port entry's RR_PORT_DEADLINE (rr_xdp_set_deadline());
 * read only for a port with that flag. */
volatile __u64 deadline_ns[RR_MAX_SLOTS] SEC(".data") = {};

/*
 * Whether worker load @l, with backlog @backlog, is further behind at
 * @now than function slot @slot's deadline: the oldest request of its
 * batch has been waiting longer, the delay it had when the batch was
 * taken (delay_ns) and the batch's age since (busy_ns) together.
 */
static __always_inline int deadline_behind(const struct rr_worker_load *l,
					   __u64 backlog, __u32 slot, __u64 now)
{
	__u64 limit, busy, behind;

	/* slot < RR_MAX_SLOTS already, which the compiler knows and the
	 * verifier may not: hidden from the one, masked for the other. */
	asm volatile("" : "+r"(slot));
	limit = deadline_ns[slot & (RR_MAX_SLOTS - 1)];
	if (!limit || !backlog)
		return 0;
	behind = READ_ONCE_U64(l->delay_ns);
	busy = READ_ONCE_U64(l->busy_ns);
	if (busy && now > busy)
		behind += now - busy;
	return behind > limit;
}

#endif /* RR_LIB_DEADLINE_H */
