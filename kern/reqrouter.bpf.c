// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouter's XDP program: parses Ethernet, up to two VLAN tags, IPv4 or
 * IPv6 and UDP; a datagram for a port that has a function is redirected to
 * one of that port's AF_XDP sockets on the receiving queue, its worker
 * chosen by the function's steering (rr_steer).
 * Everything else, including whatever it cannot parse, goes to the kernel
 * untouched (XDP_PASS), so the host's own traffic never notices.
 *
 * Here are the five programs, each with its steps in order: reqrouter_xdp
 * on the interface; reqrouter_verdict and reqrouter_verdict_cpumap, where
 * a function's XDP program hands back what it did not answer;
 * reqrouter_spread on an xdp_spread CPU; reqrouter_scatter at TC egress,
 * for gathers. Each feature's maps and code are its header in kern/lib/,
 * what user space shares with it its header in kern/shared/
 * (docs/DESIGN.md, "kern/ layout").
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* The features, about in the order a request meets them. */
#include "lib/parse.h"
#include "lib/stats.h"
#include "lib/port.h"
#include "lib/capture.h"
#include "lib/guard.h"
#include "lib/hh.h"
#include "lib/cookie.h"
#include "lib/rl.h"
#include "lib/validate.h"
#include "lib/canary.h"
#include "lib/gather.h"
#include "lib/spread.h"
#include "lib/tier.h"
#include "lib/steer.h"
#include "lib/verdict.h"
#include "shared/common.h"
#include "shared/cookie.h"
#include "shared/gather.h"
#include "shared/link.h"
#include "shared/port.h"
#include "shared/spread.h"
#include "shared/stats.h"

SEC("xdp")
int reqrouter_xdp(struct xdp_md *ctx)
{
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	__u32 queue = ctx->rx_queue_index;
	struct rr_port_conf *conf;
	__u32 l4_len = 0, key, mark = 0, stat;
	struct udphdr *udph;
	int proto, act, ipv6, not_ours = 0, cookie = RR_COOKIE_NONE;
	void *l3;

	if (queue >= RR_MAX_QUEUES)
		return rr_count(RR_MAX_QUEUES, RR_XDP_PASS_QUEUE_RANGE,
				XDP_PASS);

	proto = parse_eth(&c, &not_ours);
	/* Broadcast and multicast are the kernel's: answering a group
	 * address would be a reply from it, and a reflector. */
	if (proto >= 0 && not_ours) {
		stat = not_ours;
		goto pass;
	}
	l3 = c.pos;
	ipv6 = proto == ETH_P_IPV6;
	if (proto == ETH_P_IP)
		proto = parse_ipv4(&c, &l4_len);
	else if (proto == ETH_P_IPV6)
		proto = parse_ipv6(&c, &l4_len);
	else
		proto = proto < 0 ? -RR_XDP_PASS_MALFORMED
				  : -RR_XDP_PASS_NOT_IP;

	stat = -proto;
	if (proto < 0)
		goto pass;
	stat = RR_XDP_PASS_NOT_UDP;
	if (proto != IPPROTO_UDP)
		goto pass;

	udph = c.pos;
	stat = RR_XDP_PASS_MALFORMED;
	if ((void *)(udph + 1) > c.end)
		goto pass;
	/* A datagram must fit the IP payload; the kernel drops it otherwise. */
	if (bpf_ntohs(udph->len) < sizeof(*udph) ||
	    bpf_ntohs(udph->len) > l4_len)
		goto pass;

	key = bpf_ntohs(udph->dest);
	/* The host's own datagrams pass on a word of the bitmap, without
	 * touching port_map's 8 MB. */
	stat = RR_XDP_PASS_NO_FUNCTION;
	if (!port_served(key))
		goto pass;
	conf = bpf_map_lookup_elem(&port_map, &key);
	if (!conf || !conf->nsocks || conf->slot >= RR_MAX_SLOTS)
		goto pass;
	/* Captured or traced (lib/capture.h): a load and a branch while
	 * nobody listens. */
	if (capture_on)
		mark = capture_mark(ctx, queue, conf->slot,
				    (__u32)(l3 - (void *)(long)ctx->data) |
					    (__u32)ipv6 << 16,
				    key);
	/* Not addressed to this host: the kernel forwards or drops it. */
	stat = RR_XDP_PASS_NOT_LOCAL;
	if (conf->flags & RR_PORT_LOCAL_DST && !dest_local(l3, c.end, ipv6))
		goto pass;
	/* Longer than a UMEM frame holds: no worker could take it (an MTU
	 * above what reqrouter serves; the start-up lines say so). */
	stat = RR_XDP_DROP_FRAME_TOO_BIG;
	if (c.end - (void *)(long)ctx->data > RR_FRAME_DATA_MAX)
		goto drop;
	/* Replies to a gather come from their targets' service ports
	 * (echo's 7 among them): they are known before the loop check. */
	if (conf->flags & RR_PORT_GATHER)
		return gather_reply(ctx, l3, udph, ipv6, queue, mark);
	/* Source ports a reply could bounce back from. */
	key = bpf_ntohs(udph->source);
	stat = RR_XDP_DROP_LOOP_PORT;
	if (loop_port(key))
		goto drop;
	stat = RR_XDP_DROP_LOW_PORT;
	if (low_port(conf, key))
		goto drop;
	stat = RR_XDP_DROP_QUARANTINED;
	if (conf->flags & RR_PORT_QUARANTINED)
		goto drop;
	/* Unwanted sources cost one lookup and go no further. */
	stat = RR_XDP_DROP_NOT_ALLOWED;
	if (conf->flags & RR_PORT_ALLOWLIST &&
	    !source_allowed(l3, c.end, ipv6, conf->slot))
		goto drop;
	/* Who is calling: every request that gets this far, whichever tier
	 * answers it. */
	if (conf->flags & RR_PORT_HH)
		hh_count(conf, l3, c.end, ipv6);
	/* A DNS query with a server cookie valid for its source comes from
	 * there (docs/DESIGN.md, "DNS Cookies in XDP"). */
	if (conf->flags & RR_PORT_COOKIE) {
		cookie = cookie_check(
			ctx, (__u32)(l3 - (void *)(long)ctx->data), conf->slot,
			ipv6,
			!!(conf->flags & (RR_PORT_VALIDATE | RR_PORT_CACHE)));
		if (cookie >= RR_COOKIE_VALID)
			rr_fn_count_at(queue, conf->slot, RR_FN_COOKIE_VALID);
	}
	/* A flood is turned away here, before it wakes either tier. A
	 * source over its prefixes' budgets that is validated (lib/
	 * validate.h) meets a budget of its own instead; one whose server
	 * cookie is valid proves it here and now, and meets only that. The
	 * common request, within its prefixes' budgets, pays nothing for
	 * validation. */
	if (conf->flags & RR_PORT_RL) {
		act = cookie >= RR_COOKIE_VALID &&
				      conf->flags & RR_PORT_VALIDATE
			      ? RL_OVER
			      : rl_check(ctx, conf, l3, ipv6, queue);
		if (act == RL_OVER)
			act = validate_check(ctx, conf, l3, ipv6, queue,
					     cookie >= RR_COOKIE_VALID);
		if (act == RR_VALIDATE_GO_RL)
			act = rl_limit(ctx, conf, l3, udph, ipv6, queue);
		/* A slip handed to a worker is not marked there: its
		 * verdict is all the capture has of it. */
		if (act >= 0 && mark)
			capture_verdict(ctx, rl_stat(act), 0, act);
		if (act >= 0)
			return act;
	}
	/* A canary's share of sources: its entry from here on. */
	if (conf->flags & RR_PORT_CANARY)
		conf = canary_pick(conf, bpf_ntohs(udph->dest), l3, c.end,
				   ipv6);
	/* Its reply is made for its client: a cached one answers it only
	 * where it echoes the client's valid cookie, which the cache puts
	 * in (RR_CACHE_COOKIE), on this CPU. */
	if (cookie != RR_COOKIE_NONE &&
	    conf->flags & (RR_PORT_XDP | RR_PORT_CACHE) &&
	    (cookie != RR_COOKIE_ECHO || !(conf->flags & RR_PORT_CACHE) ||
	     conf->flags & RR_PORT_SPREAD)) {
		rr_fn_count_at(queue, conf->slot, RR_FN_COOKIE_BYPASS);
		goto workers;
	}

	if (conf->flags & RR_PORT_SG_TARGET && sg_message(udph, c.end))
		goto workers;
	if (conf->flags & RR_PORT_SPREAD) {
		/* Answered on another CPU, its mark with it. */
		act = spread(ctx, conf, udph, queue, mark);
		if (act >= 0)
			return act;
	}
	if (conf->flags & (RR_PORT_XDP | RR_PORT_CACHE)) {
		act = in_kernel(ctx, conf, l3, udph, ipv6, queue, mark,
				cookie == RR_COOKIE_ECHO, 0);
		if (act >= 0)
			return act;
	}

workers:
	act = rr_steer(ctx, queue, conf->slot, steer_socks(conf, 0),
		       conf->flags | (mark & RR_MARK_WORKERS)
					     << RR_STEER_MARK_SHIFT);
	return rr_count_marked(ctx, mark, queue,
			       steer_stat(act, RR_XDP_REDIRECT),
			       steer_act(act));

	/* The early ends share their counting: one copy of it, out of the
	 * straight line a request to a function runs (no mark before the
	 * port's entry is found, so the host's traffic is never marked). */
drop:
	return rr_count_marked(ctx, mark, queue, stat, XDP_DROP);
pass:
	return rr_count_marked(ctx, mark, queue, stat, XDP_PASS);
}

SEC("xdp")
int reqrouter_verdict(struct xdp_md *ctx)
{
	return verdict(ctx);
}

/* reqrouter_verdict for the functions' cpumap copies (rr_verdict_cpumap). */
SEC("xdp/cpumap")
int reqrouter_verdict_cpumap(struct xdp_md *ctx)
{
	return verdict(ctx);
}

/*
 * xdp_spread's other half: runs in the cpumap thread of a CPU a
 * function's requests are spread over (spread()), on a frame the
 * receiving CPU has checked and not changed: only the parsing is done
 * again, for the offsets, and the port looked up again (a reload may
 * have changed it meanwhile). The function's XDP program answers with a
 * redirect to the receiving device; everything else ends here, counted.
 */
SEC("xdp/cpumap")
int reqrouter_spread(struct xdp_md *ctx)
{
	struct rr_spread_meta *m = (void *)(long)ctx->data_meta;
	__u32 queue = ctx->rx_queue_index, l4_len = 0, key;
	__u32 cpu = bpf_get_smp_processor_id();
	struct rr_spread_load *l;
	__u64 now;
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	const struct rr_port_conf *conf;
	int proto, ipv6, not_ours = 0;
	__u32 mark = 0;
	struct udphdr *udph;
	void *l3;

	if ((void *)(m + 1) <= c.pos && m->magic == RR_SPREAD_META_MAGIC) {
		queue = m->queue;
		mark = m->mark;
		/* This CPU's wait, for the receiving side's choice. */
		l = bpf_map_lookup_elem(&spread_load, &cpu);
		now = bpf_ktime_get_ns();
		if (l && now > m->sent_ns) {
			l->wait_ns = now - m->sent_ns;
			l->at_ns = now;
		}
	}
	if (queue >= RR_MAX_QUEUES)
		queue = 0;
	proto = parse_eth(&c, &not_ours);
	l3 = c.pos;
	ipv6 = proto == ETH_P_IPV6;
	if (proto == ETH_P_IP)
		proto = parse_ipv4(&c, &l4_len);
	else if (ipv6)
		proto = parse_ipv6(&c, &l4_len);
	else
		proto = -1;
	udph = c.pos;
	if (proto != IPPROTO_UDP || not_ours || (void *)(udph + 1) > c.end)
		return rr_count(queue, RR_XDP_PASS_MALFORMED, XDP_PASS);
	key = bpf_ntohs(udph->dest);
	conf = bpf_map_lookup_elem(&port_map, &key);
	if (!conf || !conf->nsocks || conf->slot >= RR_MAX_SLOTS)
		return rr_count(queue, RR_XDP_PASS_NO_FUNCTION, XDP_PASS);
	/* Marked on the receiving CPU: its records begun again here, on
	 * this CPU's scratch. */
	if (mark)
		mark = capture_begin(ctx, queue, conf->slot, mark);
	return in_kernel(ctx, conf, l3, udph, ipv6, queue, mark, 0, 1);
}

/*
 * The scatter, at TC egress: a worker sends one template of a gather
 * through a UDP socket of its own (its gather port, RR_PORT_GATHER),
 * marked RR_SG_TARGET_TEMPLATE, and this program sends a copy to each
 * target the entry says (sent[]), each aimed by the kernel's FIB and
 * neighbour table: the copies never go through the stack again. A
 * target whose next hop has no neighbour entry yet (or whose copy the
 * device refused) is left in unsent[] for the worker to send through its
 * socket, which resolves it. The template itself becomes the last copy.
 * Everything else leaves as it came.
 */
SEC("tc")
int reqrouter_scatter(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct cursor c = { .pos = data, .end = end };
	struct sg_scatter sc = { .skb = skb };
	struct rr_gather_entry *g;
	struct rr_port_conf *conf;
	struct rr_sg_hdr *h;
	struct udphdr *udp;
	__u32 l4_len = 0, key, word, ifindex, i;
	int proto, not_ours = 0;
	__u64 bit;

	proto = parse_eth(&c, &not_ours);
	sc.l3_off = c.pos - data;
	sc.ipv6 = proto == ETH_P_IPV6;
	if (proto == ETH_P_IP)
		proto = parse_ipv4(&c, &l4_len);
	else if (proto == ETH_P_IPV6)
		proto = parse_ipv6(&c, &l4_len);
	else
		return TC_ACT_OK;
	udp = c.pos;
	if (proto != IPPROTO_UDP || (void *)(udp + 1) > end)
		return TC_ACT_OK;
	key = bpf_ntohs(udp->source);
	conf = bpf_map_lookup_elem(&port_map, &key);
	if (!conf || !(conf->flags & RR_PORT_GATHER))
		return TC_ACT_OK;
	h = (void *)(udp + 1);
	if ((void *)(h + 1) > end || h->magic != bpf_htonl(RR_SG_MAGIC) ||
	    h->target != bpf_htons(RR_SG_TARGET_TEMPLATE))
		return TC_ACT_OK;
	key = bpf_ntohl(h->gather);
	g = bpf_map_lookup_elem(&gathers, &key);
	if (!g || (__u32)(READ_ONCE_U64(g->state) >> 32) != bpf_ntohl(h->gen))
		return TC_ACT_SHOT;
	sc.l4_off = (void *)udp - data;
	sc.g = g;
	sc.group = g->group;
	/* The last target sent to: the template itself goes there. */
	sc.last = RR_SG_MAX_TARGETS;
	for (i = RR_SG_WORDS; i > 0; i--) {
		bit = g->sent[i - 1];
		if (bit) {
			sc.last = (i - 1) * 64 + msb64(bit);
			break;
		}
	}
	if (sc.last >= RR_SG_MAX_TARGETS) {
		__sync_fetch_and_or(&g->scattered, 1);
		return TC_ACT_SHOT;
	}
	bpf_loop(sc.last, sg_scatter_step, &sc, 0);
	word = (sc.last / 64) & (RR_SG_WORDS - 1);
	bit = 1ULL << (sc.last % 64);
	ifindex = sg_aim(&sc, sc.last);
	__sync_fetch_and_or(&g->scattered, 1);
	if (!ifindex) {
		__sync_fetch_and_or(&g->unsent[word], bit);
		return TC_ACT_SHOT;
	}
	return bpf_redirect(ifindex, 0);
}

char _license[] SEC("license") = "GPL";
