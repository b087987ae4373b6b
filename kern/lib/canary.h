/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Canaries (docs/DESIGN.md, "Canaries"): for a port whose entry has
 * RR_PORT_CANARY, a keyed hash of the source address sends a share of
 * the sources on with the canary's own port entry, so that the rest of
 * the path (the in-kernel tier, steering to its sockets) is the canary's.
 */
#ifndef RR_LIB_CANARY_H
#define RR_LIB_CANARY_H

#include "lib/common.h"
#include "lib/parse.h"
#include "shared/canary.h"
#include "shared/hh.h"
#include "shared/port.h"

/* By UDP destination port: the canary beside the function it serves. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct rr_canary);
	__uint(max_entries, RR_MAX_SLOTS);
} canary_map SEC(".maps");

/* The entry the request to @port goes on with: the canary's for its
 * share of sources, else @conf. */
static __always_inline struct rr_port_conf *
canary_pick(struct rr_port_conf *conf, __u32 port, void *l3, void *end,
	    int ipv6)
{
	struct rr_canary *c = bpf_map_lookup_elem(&canary_map, &port);
	__u64 a, b, h;

	if (!c || src_words(l3, end, ipv6, &a, &b))
		return conf;
	h = rr_hh_mix(rr_hh_round(rr_hh_round(c->seed, a), b));
	return (h & (RR_CANARY_SHARE_ONE - 1)) < c->share ? &c->conf : conf;
}

#endif /* RR_LIB_CANARY_H */
