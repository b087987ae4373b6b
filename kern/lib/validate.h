/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Validated sources (docs/DESIGN.md, "Validated sources"): a source
 * proven to receive at its address (it completed a TCP handshake with
 * reqrouter, echoed a function's token, or, checked here, brought a DNS
 * server cookie valid for it) is in validate_table for validated_for
 * seconds. For a rate-limited function (RR_PORT_RL with RR_PORT_VALIDATE)
 * such a source, over its prefixes' levels, is held to a budget of its
 * own, rate_limit_validated replies a second (a query with a valid
 * cookie to that budget alone): a spoofed flood from its /24 cannot
 * take its share, and it can still not ask without bound. Its bucket is
 * in rl_table, tagged apart from the levels' entries (RR_VALIDATE_BITS),
 * taken as lib/rl.h takes a level's.
 */
#ifndef RR_LIB_VALIDATE_H
#define RR_LIB_VALIDATE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "lib/common.h"
#include "lib/hh.h"
#include "lib/parse.h"
#include "lib/rl.h"
#include "lib/stats.h"
#include "shared/port.h"
#include "shared/rl.h"
#include "shared/validate.h"

/* The validated sources of every function, by address (struct
 * rr_validate_set); mappable, written by user space too. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_validate_set);
	__uint(max_entries, RR_VALIDATE_SETS);
	__uint(map_flags, BPF_F_MMAPABLE);
} validate_table SEC(".maps");

/*
 * Marks the source of hash @h validated at @now in @set: its entry's time
 * refreshed, or the set's entry validated longest ago claimed (a
 * compare-and-swap on its time, then its tag, as rl_take() claims; a
 * claim lost to another CPU is left to it).
 */
static __always_inline void validate_mark(struct rr_validate_set *set,
					  struct rr_validate_entry *e, __u64 h,
					  __u64 now)
{
	struct rr_validate_entry *victim = &set->way[0];
	__u64 t, vt = ~0ULL;
	__u32 w;

	if (e) {
		e->at = now;
		return;
	}
#pragma unroll
	for (w = 0; w < RR_VALIDATE_WAYS; w++) {
		t = READ_ONCE_U64(set->way[w].at);
		if (t < vt) {
			vt = t;
			victim = &set->way[w];
		}
	}
	if (__sync_val_compare_and_swap(&victim->at, vt, now) == vt)
		victim->tag = h;
}

/*
 * What rl_check() would be for a validated source: whether the source of
 * the request whose IP header is at @l3_off (of the family qs says) to
 * the function of port entry @conf is validated, and if so whether its
 * own budget has room (then a token is taken). @qs is queue << 16 |
 * slot << 2 | a valid cookie << 1 | ipv6; a valid cookie validates the
 * source here and now. With rate_limit_us, the source itself (the
 * narrowest level) must be within its cost too. Returns
 * RR_VALIDATE_NOT (not validated: the levels judge it), RR_VALIDATE_OK
 * to go on (validated within its budget, exempt, or over it in a dry
 * run), or RR_VALIDATE_OVER for one over it; each counted here. A global
 * function, verified once on its own, as rl_judge() and cookie_check(),
 * the exemption and the counting in it too, and its answer compared with
 * constants by the caller, which so goes on with known values (in line,
 * the exemption and the counting multiplied the verifier's paths through
 * the rest of reqrouter_xdp).
 */

__noinline int validate_judge(struct xdp_md *ctx,
			      const struct rr_port_conf *conf, __u32 l3_off,
			      __u32 qs)
{
	__u32 ipv6 = qs & 1, cookie = qs >> 1 & 1, slot = (qs >> 2) & 0x3fff;
	__u32 family = ipv6 ? AF_INET6 : AF_INET, key, w, iv, queue = qs >> 16;
	void *end = (void *)(long)ctx->data_end;
	struct rr_validate_entry *e = NULL;
	struct rr_validate_set *set;
	__u64 h, now, at = 0, t, a, b;
	void *l3;

	if (!conf || l3_off > RR_XDP_MAX_L3_OFF)
		return RR_VALIDATE_NOT;
	l3 = (void *)(long)ctx->data + l3_off;
	/* An exempt source is exempt, validated or not. */
	if (conf->flags & RR_PORT_RL_EXEMPT && rl_exempt(l3, end, ipv6, slot))
		return RR_VALIDATE_OK;
	if (src_words(l3, end, ipv6, &a, &b))
		return RR_VALIDATE_NOT;
	h = rr_validate_hash(hh_seed, family, a, b);
	key = rr_validate_set_of(h);
	set = bpf_map_lookup_elem(&validate_table, &key);
	if (!set)
		return RR_VALIDATE_NOT;
#pragma unroll
	for (w = 0; w < RR_VALIDATE_WAYS; w++)
		if (READ_ONCE_U64(set->way[w].tag) == h) {
			e = &set->way[w];
			at = READ_ONCE_U64(e->at);
			break;
		}
	now = rl_coarse_now();
	if (cookie) {
		if (!e || at + RR_VALIDATE_REFRESH_NS < now)
			validate_mark(set, e, h, now);
		at = now;
	}
	if (!rr_validate_live(at, now, conf->validated_for_s))
		return RR_VALIDATE_NOT;
	/* rate_limit_us: the source's own cost, as rl_judge() reads it. */
	if (conf->flags & RR_PORT_RL_COST) {
		t = rr_rl_hash(conf, family,
			       conf->rl_len[ipv6 ? RR_RL_V6 : RR_RL_V4][0], a,
			       b);
		if (rl_time(rr_rl_set_of(t), t, 1) > now + RR_RL_COST_BURST_NS)
			goto over;
	}
	iv = conf->validated_interval_ns;
	if (iv) {
		h = rr_rl_hash(conf, family, RR_VALIDATE_BITS, a, b);
		t = rl_time(rr_rl_set_of(h), h, 0);
		/* Late by the coarse clock: the precise one decides. */
		if (t > now + rr_rl_tau(conf, iv)) {
			now = bpf_ktime_get_ns();
			if (t > now + rr_rl_tau(conf, iv))
				goto over;
		}
		rl_take(h, iv, 0, now, 0, queue << 16 | slot);
	}
	rr_fn_count_at(queue, slot, RR_FN_VALIDATED);
	return RR_VALIDATE_OK;
over:
	/* A dry run (rate_limit_mode = log): counted, and on it goes. */
	if (conf->flags & RR_PORT_RL_LOG) {
		rr_fn_count_at(queue, slot, RR_FN_RL_WOULD_LIMIT);
		return RR_VALIDATE_OK;
	}
	rr_fn_count_at(queue, slot, RR_FN_VALIDATED_LIMITED);
	return RR_VALIDATE_OVER;
}

/*
 * For a request rl_check() found over its prefixes' levels (RL_OVER), or
 * one whose server cookie, @cookie, is valid: a validated source judged
 * by its own budget (validate_judge()). Returns -1 to go on, XDP_DROP
 * for one over it, or RR_VALIDATE_GO_RL when it is not validated and
 * rl_limit() limits it.
 */
#define RR_VALIDATE_GO_RL (-2)

static __always_inline int validate_check(struct xdp_md *ctx,
					  const struct rr_port_conf *conf,
					  void *l3, int ipv6, __u32 queue,
					  int cookie)
{
	int v;

	if (!(conf->flags & RR_PORT_VALIDATE))
		return RR_VALIDATE_GO_RL;
	v = validate_judge(ctx, conf, (__u32)(l3 - (void *)(long)ctx->data),
			   queue << 16 | (conf->slot & 0x3fff) << 2 |
				   !!cookie << 1 | !!ipv6);
	if (v == RR_VALIDATE_NOT)
		return RR_VALIDATE_GO_RL;
	if (v == RR_VALIDATE_OVER)
		return rr_count(queue, RR_XDP_DROP_RATE_LIMITED, XDP_DROP);
	return -1;
}

#endif /* RR_LIB_VALIDATE_H */
