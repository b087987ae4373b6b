// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel reflector: runs reverse (port 1232) or echo (port 7) on a
 * UDP request inside XDP and answers with XDP_TX. No copy to user space,
 * no socket, no skb: the ceiling of what any server on this path can do,
 * so the benchmark shows how far reqrouter and the socket servers are
 * from it.
 *
 * The reversal and the reply are reqrouter's own in-kernel code
 * (include/reqrouter/rr_xdp_packet.h: the bswap loop, the swap and the full
 * checksum),
 * so the reflector differs from reqrouter's XDP tier only by what
 * reqrouter adds around it: steering, checks, the tail call, counters.
 *
 * A second program, "pass", does nothing but XDP_PASS: a veth only takes
 * XDP_TX frames from its peer when an XDP program runs on it, so the
 * client side of the test bed loads this one.
 */
#include <reqrouter/rr_xdp_packet.h>

/* Ports served; load-time knobs, so the reflector can stand in for a
 * function moved to another port. */
const volatile __u16 port_reverse = 1232;
const volatile __u16 port_echo = 7;

enum { STAT_REFLECTED, STAT_PASSED, STAT_MAX };

/* Per-CPU counters: requests answered, packets left to the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline int count(__u32 idx, int verdict)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
	return verdict;
}

SEC("xdp")
int reflect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct rr_xdp_req req = { .l3_off = sizeof(struct ethhdr) };
	struct ethhdr *eth = data;
	struct udphdr *udp;
	struct ipv6hdr *ip6;
	struct iphdr *ip4;
	__u32 ulen;
	__u16 dport;

	if ((void *)(eth + 1) > end)
		return count(STAT_PASSED, XDP_PASS);
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip4 = (void *)(eth + 1);
		if ((void *)(ip4 + 1) > end || ip4->ihl != 5 ||
		    ip4->protocol != IPPROTO_UDP ||
		    (ip4->frag_off & bpf_htons(0x3fff)))
			return count(STAT_PASSED, XDP_PASS);
		udp = (void *)(ip4 + 1);
		req.family = AF_INET;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return count(STAT_PASSED, XDP_PASS);
		udp = (void *)(ip6 + 1);
		req.family = AF_INET6;
	} else {
		return count(STAT_PASSED, XDP_PASS);
	}
	if ((void *)(udp + 1) > end)
		return count(STAT_PASSED, XDP_PASS);
	dport = bpf_ntohs(udp->dest);
	if (dport != port_reverse && dport != port_echo)
		return count(STAT_PASSED, XDP_PASS);
	ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(*udp) || ulen > RR_XDP_MAX_PAYLOAD + sizeof(*udp) ||
	    (void *)udp + ulen > end)
		return count(STAT_PASSED, XDP_PASS);
	req.l4_off = (void *)udp - data;
	req.payload_off = req.l4_off + sizeof(*udp);
	req.payload_len = ulen - sizeof(*udp);
	req.room = req.payload_len;

	if (dport == port_reverse &&
	    rr_xdp_reverse(ctx, req.payload_off, req.payload_len) < 0)
		return count(STAT_PASSED, XDP_DROP);
	if (rr_xdp_build_reply(ctx, &req, req.payload_len))
		return count(STAT_PASSED, XDP_DROP);
	return count(STAT_REFLECTED, XDP_TX);
}

SEC("xdp")
int pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
