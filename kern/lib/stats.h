/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The program's counters: per RX queue its verdicts and their reasons
 * (xdp_stats), per (queue, function slot) what the in-kernel tier did
 * (fn_stats); per CPU, laid out by kern/shared/stats.h, summed by user
 * space. A function's XDP program bumps them too, at the keys its request
 * carries: the names are its ABI (include/reqrouter/rr_xdp.h).
 */
#ifndef RR_LIB_STATS_H
#define RR_LIB_STATS_H

#include <reqrouter/rr_xdp_req.h>

#include "lib/common.h"
#include "shared/stats.h"

/* Packets per (queue, enum rr_xdp_stat), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, RR_STATS_SIZE);
} xdp_stats SEC(".maps");

/* The in-kernel tier's counters per (queue, slot, enum rr_fn_stat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, RR_FN_STATS_SIZE);
} fn_stats SEC(".maps");

/* Counts @stat on @queue and returns @act: a verdict is counted where it
 * is returned. */
static __always_inline int rr_count(__u32 queue, enum rr_xdp_stat stat, int act)
{
	__u32 key = queue * RR_XDP_STAT_MAX + stat;
	__u64 *cnt = bpf_map_lookup_elem(&xdp_stats, &key);

	if (cnt)
		*cnt += 1;
	return act;
}

/* Counts @stat of function slot @slot on @queue (enum rr_fn_stat, or
 * RR_FN_XDP_DROP + enum rr_drop). */
static __always_inline void rr_fn_count_at(__u32 queue, __u32 slot, __u32 stat)
{
	__u32 key = RR_FN_STATS_KEY(queue, slot, stat);
	__u64 *cnt = bpf_map_lookup_elem(&fn_stats, &key);

	if (cnt)
		*cnt += 1;
}

static __always_inline void rr_fn_count(const struct rr_xdp_req *req,
					__u32 stat)
{
	rr_fn_count_at(req->queue, req->slot, stat);
}

#endif /* RR_LIB_STATS_H */
