/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a function's XDP program hands back what it did not answer: its
 * second tail call, into reqrouter_verdict (rr_verdict; on an xdp_spread
 * CPU reqrouter_verdict_cpumap, rr_verdict_cpumap), whose body is
 * verdict().
 */
#ifndef RR_LIB_VERDICT_H
#define RR_LIB_VERDICT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_req.h>

#include "lib/port.h"
#include "lib/stats.h"
#include "lib/tier.h"

/* reqrouter_verdict, for a function's program to hand back a request it
 * did not answer: filled once when the program is loaded. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} rr_verdict SEC(".maps");

/* rr_verdict's twin for the functions' cpumap copies (xdp_spread): a
 * program array holds programs of one attach type. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} rr_verdict_cpumap SEC(".maps");

/*
 * Where a function's XDP program hands back a request it did not answer
 * (through rr_verdict, with its verdict in the request): only punts and
 * failures take this second tail call, never a reply.
 */
static __always_inline int verdict(struct xdp_md *ctx)
{
	const struct rr_port_conf *conf;
	struct rr_xdp_req *req;
	__u32 zero = 0, port;

	req = bpf_map_lookup_elem(&rr_req, &zero);
	if (!req)
		return XDP_PASS;
	/* The port's entry as it is now: how to steer a punt. */
	port = req->dst_port;
	conf = bpf_map_lookup_elem(&port_map, &port);
	if (!conf || !conf->nsocks || conf->slot != req->slot)
		return rr_count(req->queue, RR_XDP_PASS_NO_FUNCTION, XDP_PASS);
	return not_answered(ctx, conf, req, req->verdict);
}

#endif /* RR_LIB_VERDICT_H */
