// SPDX-License-Identifier: GPL-2.0
/*
 * The test bed's client end: a veth takes XDP_TX frames from its peer
 * only while an XDP program runs on it (measured: GRO alone is not
 * enough), so without this the in-kernel tier's replies never arrive. It
 * passes everything on, as a real wire would deliver it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int peer_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
