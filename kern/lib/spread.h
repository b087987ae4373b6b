/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_spread (docs/DESIGN.md, "Spreading XDP work over CPUs"): a
 * function's requests handed to the CPUs it lists (spread_cpus, a cpumap),
 * of the next two in turn the one whose queue should be shorter now
 * (spread_load); reqrouter_spread runs the function's XDP program there.
 */
#ifndef RR_LIB_SPREAD_H
#define RR_LIB_SPREAD_H

#include <linux/bpf.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_req.h>

#include "lib/capture.h"
#include "lib/common.h"
#include "lib/stats.h"
#include "shared/port.h"
#include "shared/spread.h"

/* xdp_spread's CPUs, by CPU number, each entry's thread running
 * reqrouter_spread; sized to the possible CPUs before load. */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
	__uint(max_entries, 1);
} spread_cpus SEC(".maps");

/* Each xdp_spread CPU's last wait (struct rr_spread_load), by CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_spread_load);
	__uint(max_entries, RR_MAX_SPREAD_CPUS);
} spread_load SEC(".maps");

/* Which of a function's spread_cpu[] is next, per receiving CPU, by
 * slot. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, RR_MAX_SLOTS);
} spread_turn SEC(".maps");

/* What is left now of spread CPU @cpu's last wait (rr_spread_load). */
static __always_inline __u64 spread_wait(__u32 cpu, __u64 now)
{
	struct rr_spread_load *l = bpf_map_lookup_elem(&spread_load, &cpu);
	__u64 age;

	if (!l)
		return ~0ULL;
	age = now - l->at_ns;
	return l->wait_ns > age ? l->wait_ns - age : 0;
}

/*
 * xdp_spread: the request to one of the function's spread CPUs (through
 * spread_cpus), where reqrouter_spread runs its XDP program, with the
 * receiving queue, the time and its @mark (capture_mark()) in front of
 * it (struct rr_spread_meta): of the next two in turn, the one whose
 * queue should be shorter now (rr_spread_load). What the program would
 * not take (longer than xdp_max_payload or the in-kernel tier's limits)
 * stays, for the workers of this queue. A marked request's records are
 * written on the CPU it goes to; without room for the metadata, its
 * verdict here. Returns XDP_REDIRECT, or -1 for today's path.
 */
static __always_inline int spread(struct xdp_md *ctx,
				  const struct rr_port_conf *conf,
				  struct udphdr *udp, __u32 queue, __u32 mark)
{
	__u32 len = bpf_ntohs(udp->len) - sizeof(*udp), n = conf->spread_n;
	__u32 slot = conf->slot, *turn, i, j, cpu, other;
	struct rr_spread_meta *m;
	__u64 now;

	if (!n || n > RR_MAX_SPREAD || len > conf->xdp_max_payload ||
	    len > RR_XDP_MAX_PAYLOAD ||
	    (long)ctx->data_end - (long)ctx->data > RR_XDP_MAX_FRAME)
		return -1;
	turn = bpf_map_lookup_elem(&spread_turn, &slot);
	if (!turn)
		return -1;
	i = *turn < n ? *turn : 0;
	j = i + 1 < n ? i + 1 : 0;
	*turn = j;
	now = bpf_ktime_get_ns();
	cpu = conf->spread_cpu[i & (RR_MAX_SPREAD - 1)];
	if (n > 1) {
		other = conf->spread_cpu[j & (RR_MAX_SPREAD - 1)];
		if (spread_wait(other, now) < spread_wait(cpu, now))
			cpu = other;
	}
	if (bpf_redirect_map(&spread_cpus, cpu, 0) != XDP_REDIRECT)
		return -1;
	/* Without room for it the counters take the CPU's queue. */
	if (!bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m))) {
		m = (void *)(long)ctx->data_meta;
		if ((void *)(m + 1) <= (void *)(long)ctx->data) {
			m->magic = RR_SPREAD_META_MAGIC;
			m->queue = (__u16)queue;
			m->mark = (__u16)mark;
			m->sent_ns = now;
			mark = 0;
		}
	}
	if (mark)
		capture_verdict(ctx, RR_XDP_REDIRECT_SPREAD, 0, XDP_REDIRECT);
	rr_fn_count_at(queue, slot, RR_FN_XDP_SPREAD);
	return rr_count(queue, RR_XDP_REDIRECT_SPREAD, XDP_REDIRECT);
}

#endif /* RR_LIB_SPREAD_H */
