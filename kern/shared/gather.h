/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gathers (docs/DESIGN.md, "Gathers"): the entries the XDP program merges
 * replies into, the groups' targets and the ways to them. The wire format
 * and the reductions are the function API's (include/reqrouter/rr_gather.h).
 */
#ifndef RR_SHARED_GATHER_H
#define RR_SHARED_GATHER_H

#include <linux/types.h>

/* The gather primitive's wire format and reductions. */
#include <reqrouter/rr_gather.h>

/*
 * Scatter and gather (docs/DESIGN.md, "Gathers"). One entry of the
 * gathers map per gather a worker may have outstanding: worker index w
 * owns entries w * RR_SG_PER_WORKER and on, so that no two writers share
 * one, and a cell maps only its own (the map is mmapped). The entry
 * number and its generation travel in every message (struct rr_sg_hdr);
 * a reply is merged by the XDP program on whatever CPU it arrives.
 *
 * state is the generation (high 32 bits) and the tickets taken (low): a
 * reply takes a ticket with one compare-and-swap on both, so a reply to
 * an older use of the entry never counts in the new one, and no more
 * than need replies are merged. The owner closes a gather by adding
 * RR_SG_CLOSED to the tickets, which turns every later reply away, and
 * then waits until merged equals the tickets that had been taken: from
 * then on nothing changes the entry under it.
 */
#define RR_SG_PER_WORKER 64
#define RR_SG_WORDS (RR_SG_MAX_TARGETS / 64)
#define RR_SG_MAX_GROUPS 16
#define RR_SG_CLOSED (1U << 30)
#define RR_SG_TARGET_TEMPLATE 0xffff /* rr_sg_hdr.target of a template */

struct rr_gather_entry {
	__u64 state;
	__u32 merged; /* replies merged (or handed over, CONCAT) */
	__u32 need;   /* replies that complete it */
	__u32 reduce; /* enum rr_reduce */
	__u32 group;  /* whose targets (sg_targets) */
	__u32 pad0;
	/* The function's slot: its reply goes to the socket of the owner
	 * (the worker whose entries these are, known by the entry's index,
	 * never by what a cell wrote) for that slot. */
	__u32 slot;
	__u64 value;			   /* SUM, MIN, MAX, COUNT, OR */
	__u64 topk[RR_SG_TOPK_RANGE / 64]; /* TOPK: the values seen */
	/* Set by the scatter program once it sent the copies. */
	__u32 scattered;
	/* In a worker's first entry only: the worker sleeps in poll(), and
	 * only then does the reply that completes a reduction go on to
	 * wake it; awake, it sees the count at its next round. */
	__u32 asleep;
	__u32 pad[12];		 /* the bitmaps start a cache line */
	__u64 sent[RR_SG_WORDS]; /* the targets it was sent to */
	__u64 seen[RR_SG_WORDS]; /* a reply came: a second is a duplicate */
	__u64 merged_bits[RR_SG_WORDS]; /* ... and is in the result */
	__u64 unsent[RR_SG_WORDS];	/* no copy made: the user sends these */
};

/* A group's target, in sg_targets at group * RR_SG_MAX_TARGETS + index. */
struct rr_sg_target {
	__u32 family; /* 0: none, AF_INET (addr[0..3]) or AF_INET6 */
	__be16 port;
	__u16 pad;
	__u8 addr[16];
};

/*
 * The way to a group's target, in sg_paths at the same index as its
 * struct rr_sg_target: learned by the XDP program from the target's last
 * sound reply (its checks all passed, no VLAN tag), read by the workers
 * that build the copies in the UMEM (gather_scatter = umem). Zero until
 * then, and again whenever the group's targets are written.
 * Each field is rewritten only when it changed: a worker that reads one
 * mid-change sends a copy astray once, which counts as a missed target.
 */
#define RR_SG_PATH_VALID (1ULL << 63)
struct rr_sg_path {
	__u64 hw;	   /* the target's (or its router's) MAC | VALID */
	__u64 own_hw;	   /* the MAC it answered to */
	__u8 own_addr[16]; /* the address it answered to (IPv4: [0..3]) */
	__u32 ifindex;	   /* where the reply came in */
	__u32 pad;
};

#endif /* RR_SHARED_GATHER_H */
