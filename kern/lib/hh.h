/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Heavy hitters (docs/DESIGN.md, "Who is calling: heavy hitters in
 * XDP"): every request past the guards is counted down on its CPU, and
 * one in heavy_hitters_sample, on average, sampled into its function's
 * sketches and ring of sources (kern/shared/hh.h), which
 * src/daemon/features/hh.c reads.
 */
#ifndef RR_LIB_HH_H
#define RR_LIB_HH_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_packet.h>

#include "lib/common.h"
#include "lib/parse.h"
#include "shared/hh.h"
#include "shared/port.h"

/* The heavy-hitter sketch's hash seed, drawn at random before load, so
 * that nobody outside can pick sources that collide. */
const volatile __u64 hh_seed = 0;

/* Each CPU's heavy-hitter sampling state per slot (struct rr_hh_cpu). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_hh_cpu);
	__uint(max_entries, RR_MAX_SLOTS);
} hh_cpu SEC(".maps");

/* The pre-drawn Exp(1) variables, refilled by user space, which maps it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_hh_pool);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
} hh_pool SEC(".maps");

/* The heavy-hitter sketches per slot (struct rr_hh_sketch), mapped into
 * user space, which reads them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_hh_sketch);
	__uint(max_entries, RR_MAX_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
} hh_sketch SEC(".maps");

/*
 * A sampled request: the next skip from the pool, then its source into
 * the candidates' ring and both kinds' sketches. Only here is the source
 * read and hashed. A call of its own (one request in heavy_hitters_sample
 * pays its return), so that its code stays out of the straight line
 * every other request runs.
 */
static __noinline void hh_sample(struct rr_hh_cpu *hc,
				 const struct rr_port_conf *conf, void *l3,
				 void *end, int ipv6)
{
	__u32 pos = hc->pos & (RR_HH_POOL - 1), slot = conf->slot, zero = 0;
	__u64 a, b, w0, w1, n, h[RR_HH_KINDS];
	struct rr_hh_cand *cand;
	struct rr_hh_sketch *sk;
	struct rr_hh_pool *pool;
	__u32 family, k, r;

	pool = bpf_map_lookup_elem(&hh_pool, &zero);
	hc->pos = pos + 1;
	hc->skip = pool ? rr_hh_skip(pool->exp[pos], conf->hh_scale) : 0;
	sk = bpf_map_lookup_elem(&hh_sketch, &slot);
	if (!sk)
		return;
	if (src_words(l3, end, ipv6, &a, &b))
		return;
	family = ipv6 ? AF_INET6 : AF_INET;
	n = __sync_fetch_and_add(&sk->samples, 1);
	cand = &sk->cand[n & (RR_HH_CANDS - 1)];
	cand->family = family;
	__builtin_memcpy(&cand->addr[0], &a, 8);
	__builtin_memcpy(&cand->addr[8], &b, 8);
	rr_hh_words(family, a, b, &w0, &w1);
	rr_hh_hash(hh_seed, family, w0, w1, h);
#pragma unroll
	for (k = 0; k < RR_HH_KINDS; k++)
#pragma unroll
		for (r = 0; r < RR_HH_ROWS; r++)
			__sync_fetch_and_add(
				&sk->count[k][r][rr_hh_col(h[k], r)],
				rr_hh_sign(h[k], r));
}

/*
 * Every request of a function whose heavy hitters are on: one per-CPU
 * lookup and a countdown; one in heavy_hitters_sample, on average, goes
 * on to hh_sample().
 */
static __always_inline void hh_count(const struct rr_port_conf *conf, void *l3,
				     void *end, int ipv6)
{
	__u32 slot = conf->slot;
	struct rr_hh_cpu *hc = bpf_map_lookup_elem(&hh_cpu, &slot);

	if (!hc)
		return;
	if (hc->skip) {
		hc->skip--;
		return;
	}
	hh_sample(hc, conf, l3, end, ipv6);
}

#endif /* RR_LIB_HH_H */
