/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gathers (docs/DESIGN.md, "Gathers"): the merge and the scatter. A
 * reply to one of the workers' gathers is checked and merged into its
 * entry here (gathers, which the workers map), the way to its target
 * learned (sg_paths), and only what the owner must see goes on to its
 * socket (gather_reply()); at TC egress, reqrouter_scatter sends a
 * template's copies to the group's targets (sg_targets),
 * a copy each by sg_scatter_step().
 */
#ifndef RR_LIB_GATHER_H
#define RR_LIB_GATHER_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_gather.h>
#include <reqrouter/rr_xdp_packet.h>

#include "lib/capture.h"
#include "lib/common.h"
#include "lib/parse.h"
#include "lib/stats.h"
#include "lib/steer.h"
#include "shared/common.h"
#include "shared/gather.h"
#include "shared/steer.h"

/* Scatter and gather (struct rr_gather_entry): the gathers the workers
 * have outstanding, mapped into user space; sized before load, one entry
 * when no function gathers. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_gather_entry);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
} gathers SEC(".maps");

/* The groups' targets (struct rr_sg_target), written by user space at
 * start and on reload; sized before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_sg_target);
	__uint(max_entries, 1);
} sg_targets SEC(".maps");

/* The ways to the targets (struct rr_sg_path), learned from their
 * replies; sized as sg_targets. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_sg_path);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
} sg_paths SEC(".maps");

/*
 * The value a reduction reads from a reply's body: its leading ASCII
 * decimal digits (1 to RR_SG_VALUE_DIGITS). Returns 0 with *v, or -1.
 */
static __always_inline int sg_value(void *body, void *end, __u64 *v)
{
	__u8 *p = body;
	__u64 n = 0;
	int i;

	for (i = 0; i < RR_SG_VALUE_DIGITS; i++) {
		if ((void *)(p + i + 1) > end || p[i] < '0' || p[i] > '9')
			break;
		n = n * 10 + (p[i] - '0');
	}
	if (!i)
		return -1;
	*v = n;
	return 0;
}

/* Whether the datagram at @udp is a gather's message (its header). */
static __always_inline int sg_message(struct udphdr *udp, void *end)
{
	struct rr_sg_hdr *h = (void *)(udp + 1);

	return (void *)(h + 1) <= end && h->magic == bpf_htonl(RR_SG_MAGIC);
}

/* Whether the reply's source is @t, the target it says it is. */
static __always_inline int sg_from(const struct rr_sg_target *t, void *l3,
				   void *end, struct udphdr *udp, int ipv6)
{
	const __u32 *a = (const __u32 *)t->addr; /* 4-byte aligned */

	if (udp->source != t->port)
		return 0;
	if (ipv6) {
		struct ipv6hdr *ip6 = l3;
		const __u32 *s6;

		if ((void *)(ip6 + 1) > end || t->family != AF_INET6)
			return 0;
		s6 = ip6->saddr.in6_u.u6_addr32;
		return s6[0] == a[0] && s6[1] == a[1] && s6[2] == a[2] &&
		       s6[3] == a[3];
	}
	struct iphdr *ip = l3;

	return (void *)(ip + 1) <= end && t->family == AF_INET &&
	       ip->saddr == a[0];
}

static __always_inline __u64 sg_hw(const __u8 *mac)
{
	__u64 v = 0;
	int i;

	for (i = 0; i < 6; i++)
		v = v << 8 | mac[i];
	return v | RR_SG_PATH_VALID;
}

/*
 * Target @tkey's way from its sound reply (@l3 right after an untagged
 * Ethernet header), for copies built in the UMEM; written only where it
 * changed.
 */
static __always_inline void sg_learn(struct xdp_md *ctx, __u32 tkey, void *l3,
				     void *end, int ipv6)
{
	struct ethhdr *eth = (void *)(long)ctx->data;
	struct rr_sg_path *p;
	__u64 hw, own_hw;
	__u32 *own;

	if ((void *)(eth + 1) > end || l3 != (void *)(eth + 1))
		return;
	p = bpf_map_lookup_elem(&sg_paths, &tkey);
	if (!p)
		return;
	hw = sg_hw(eth->h_source);
	own_hw = sg_hw(eth->h_dest);
	own = (__u32 *)p->own_addr;
	if (ipv6) {
		struct ipv6hdr *ip6 = l3;
		__u32 *d;

		if ((void *)(ip6 + 1) > end)
			return;
		d = ip6->daddr.in6_u.u6_addr32;
		if (own[0] != d[0] || own[1] != d[1] || own[2] != d[2] ||
		    own[3] != d[3]) {
			own[0] = d[0];
			own[1] = d[1];
			own[2] = d[2];
			own[3] = d[3];
		}
	} else {
		struct iphdr *ip = l3;

		if ((void *)(ip + 1) > end)
			return;
		if (own[0] != ip->daddr)
			own[0] = ip->daddr;
	}
	if (p->ifindex != ctx->ingress_ifindex)
		p->ifindex = ctx->ingress_ifindex;
	if (p->own_hw != own_hw)
		p->own_hw = own_hw;
	if (p->hw != hw)
		p->hw = hw;
}

/* MIN or MAX of @v into @p, by compare-and-swap (a bounded number of
 * tries: only replies of one gather on other CPUs contend). */
static __always_inline void sg_minmax(__u64 *p, __u64 v, int max)
{
	__u64 old;
	int i;

	for (i = 0; i < 16; i++) {
		old = READ_ONCE_U64(*p);
		if (max ? v <= old : v >= old)
			return;
		if (__sync_val_compare_and_swap(p, old, v) == old)
			return;
	}
}

/*
 * A reply to one of the workers' gathers (RR_PORT_GATHER): the checks, in
 * the order that keeps a wrong reply from touching the entry (header,
 * entry, target sent to, source, checksum, value), then one ticket, the
 * merge, and the count that says the gather is complete. A reduction's
 * replies end here; the last one goes on to the owner's socket to wake
 * it, as does every CONCAT reply, whose body the owner collects (only on
 * the owner's queue: a socket takes frames of its own queue only). A
 * reply marked @mark (capture_mark()) has its record written with what
 * became of it.
 */
static __always_inline int gather_reply(struct xdp_md *ctx, void *l3,
					struct udphdr *udp, int ipv6,
					__u32 queue, __u32 mark)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct rr_sg_hdr *h = (void *)(udp + 1);
	struct rr_xdp_req r = {};
	struct rr_gather_entry *g, *owner;
	struct rr_sg_target *t;
	__u32 idx, target, gen, word, tkey, reduce, m, first, owner_w;
	__u64 bit, state, v = 0, old;
	int i;

	if ((void *)(h + 1) > end || h->magic != bpf_htonl(RR_SG_MAGIC))
		return rr_count_marked(ctx, mark, queue,
				       RR_XDP_GATHER_MALFORMED, XDP_DROP);
	idx = bpf_ntohl(h->gather);
	gen = bpf_ntohl(h->gen);
	target = bpf_ntohs(h->target);
	g = bpf_map_lookup_elem(&gathers, &idx);
	if (!g || target >= RR_SG_MAX_TARGETS)
		return rr_count_marked(ctx, mark, queue,
				       RR_XDP_GATHER_MALFORMED, XDP_DROP);
	/* The gather's function, not the port's. */
	capture_slot(mark, g->slot % RR_MAX_SLOTS);
	state = READ_ONCE_U64(g->state);
	if ((__u32)(state >> 32) != gen || (__u32)state >= g->need)
		return rr_count_marked(ctx, mark, queue, RR_XDP_GATHER_LATE,
				       XDP_DROP);
	word = target / 64;
	bit = 1ULL << (target % 64);
	if (!(READ_ONCE_U64(g->sent[word]) & bit))
		return rr_count_marked(ctx, mark, queue,
				       RR_XDP_GATHER_WRONG_SOURCE, XDP_DROP);
	tkey = g->group * RR_SG_MAX_TARGETS + target;
	t = bpf_map_lookup_elem(&sg_targets, &tkey);
	if (!t || !sg_from(t, l3, end, udp, ipv6))
		return rr_count_marked(ctx, mark, queue,
				       RR_XDP_GATHER_WRONG_SOURCE, XDP_DROP);
	r.l3_off = l3 - data;
	r.l4_off = (void *)udp - data;
	r.family = ipv6 ? AF_INET6 : AF_INET;
	if ((ipv6 && !udp->check) || !udp_csum_ok(ctx, &r, 0))
		return rr_count_marked(ctx, mark, queue,
				       RR_XDP_GATHER_MALFORMED, XDP_DROP);
	reduce = g->reduce;
	/* The owner, by the entry's index: worker index queue *
	 * RR_MAX_THREADS + thread owns RR_SG_PER_WORKER entries. */
	owner_w = idx / RR_SG_PER_WORKER;
	if (reduce != RR_REDUCE_CONCAT && sg_value(h + 1, end, &v))
		return rr_count_marked(ctx, mark, queue, RR_XDP_GATHER_NO_VALUE,
				       XDP_DROP);
	sg_learn(ctx, tkey, l3, end, ipv6);

	old = __sync_fetch_and_or(&g->seen[word], bit);
	if (old & bit)
		return rr_count_marked(ctx, mark, queue,
				       RR_XDP_GATHER_DUPLICATE, XDP_DROP);
	for (i = 0; i < 16; i++) {
		state = READ_ONCE_U64(g->state);
		if ((__u32)(state >> 32) != gen || (__u32)state >= g->need)
			return rr_count_marked(ctx, mark, queue,
					       RR_XDP_GATHER_LATE, XDP_DROP);
		if (__sync_val_compare_and_swap(&g->state, state, state + 1) ==
		    state)
			break;
	}
	if (i == 16)
		return rr_count_marked(ctx, mark, queue, RR_XDP_GATHER_LATE,
				       XDP_DROP);

	switch (reduce) {
	case RR_REDUCE_SUM:
		__sync_fetch_and_add(&g->value, v);
		break;
	case RR_REDUCE_COUNT:
		__sync_fetch_and_add(&g->value, 1);
		break;
	case RR_REDUCE_OR:
		__sync_fetch_and_or(&g->value, v);
		break;
	case RR_REDUCE_MIN:
	case RR_REDUCE_MAX:
		sg_minmax(&g->value, v, reduce == RR_REDUCE_MAX);
		break;
	case RR_REDUCE_TOPK:
		if (v < RR_SG_TOPK_RANGE)
			__sync_fetch_and_or(&g->topk[(v / 64) & 3],
					    1ULL << (v % 64));
		break;
	}
	__sync_fetch_and_or(&g->merged_bits[word], bit);
	m = __sync_add_and_fetch(&g->merged, 1);
	if (reduce != RR_REDUCE_CONCAT && m < g->need)
		return rr_count_marked(ctx, mark, queue, RR_XDP_GATHER_MERGED,
				       XDP_DROP);
	/* The last of a reduction wakes its worker only if it sleeps (the
	 * add above orders this read after the count, as the worker reads
	 * the count after saying it sleeps). */
	if (reduce != RR_REDUCE_CONCAT) {
		first = idx - idx % RR_SG_PER_WORKER;
		owner = bpf_map_lookup_elem(&gathers, &first);
		if (owner && !READ_ONCE_U32(owner->asleep))
			return rr_count_marked(ctx, mark, queue,
					       RR_XDP_GATHER_MERGED, XDP_DROP);
	}
	/* A concatenation's reply on another queue than its owner's, whose
	 * socket takes its own queue's frames only: to the kernel, which
	 * gives it to the owner's gather socket. */
	if (reduce == RR_REDUCE_CONCAT && owner_w / RR_MAX_THREADS != queue)
		return rr_count_marked(ctx, mark, queue,
				       RR_XDP_GATHER_OTHER_QUEUE, XDP_PASS);
	/* The owner's socket; a missing one (a worker going) or another
	 * queue's: the owner finds the gather complete at its next look. */
	if (owner_w / RR_MAX_THREADS != queue ||
	    bpf_redirect_map(&xsks_map,
			     RR_XSK_KEY(queue, owner_w % RR_MAX_THREADS,
					g->slot % RR_MAX_SLOTS),
			     XDP_DROP) != XDP_REDIRECT)
		return rr_count_marked(ctx, mark, queue, RR_XDP_GATHER_MERGED,
				       XDP_DROP);
	/* To the owner's socket, but not as a request: its record here. */
	if (mark)
		capture_verdict(ctx, RR_XDP_REDIRECT_GATHER, 0, XDP_REDIRECT);
	return rr_count(queue, RR_XDP_REDIRECT_GATHER, XDP_REDIRECT);
}

/* What reqrouter_scatter's copies are made from: the template and its
 * gather, where its headers start, and the last target sent to, which
 * the template itself goes to. */
struct sg_scatter {
	struct __sk_buff *skb;
	struct rr_gather_entry *g;
	__u32 l3_off, l4_off, ipv6, group, last;
};

/* Aims the skb at target @i of the gather: the header's target, the
 * destination address and port, the MACs, the checksums. Returns the
 * egress interface, or 0 (unsent). */
static __always_inline __u32 sg_aim(struct sg_scatter *sc, __u32 i)
{
	struct __sk_buff *skb = sc->skb;
	__u32 key = sc->group * RR_SG_MAX_TARGETS + i, ip_off = sc->l3_off;
	__u32 udp_off = sc->l4_off, csum_off = udp_off + 6, a, b, k;
	struct bpf_fib_lookup fib = {};
	struct rr_sg_target *t;
	__be16 old16, new16;
	__be32 old32;

	t = bpf_map_lookup_elem(&sg_targets, &key);
	if (!t || t->family != (sc->ipv6 ? AF_INET6 : AF_INET))
		return 0;
	if (bpf_skb_load_bytes(skb, udp_off + 8 + 12, &old16, 2))
		return 0;
	new16 = bpf_htons(i);
	bpf_l4_csum_replace(skb, csum_off, old16, new16,
			    2 | BPF_F_MARK_MANGLED_0);
	bpf_skb_store_bytes(skb, udp_off + 8 + 12, &new16, 2, 0);
	if (bpf_skb_load_bytes(skb, udp_off + 2, &old16, 2))
		return 0;
	bpf_l4_csum_replace(skb, csum_off, old16, t->port,
			    2 | BPF_F_MARK_MANGLED_0);
	bpf_skb_store_bytes(skb, udp_off + 2, &t->port, 2, 0);
	fib.l4_protocol = IPPROTO_UDP;
	fib.ifindex = skb->ifindex;
	if (!sc->ipv6) {
		if (bpf_skb_load_bytes(skb, ip_off + 16, &old32, 4))
			return 0;
		__builtin_memcpy(&a, t->addr, 4);
		bpf_l4_csum_replace(skb, csum_off, old32, a,
				    4 | BPF_F_PSEUDO_HDR |
					    BPF_F_MARK_MANGLED_0);
		bpf_l3_csum_replace(skb, ip_off + 10, old32, a, 4);
		bpf_skb_store_bytes(skb, ip_off + 16, &a, 4, 0);
		fib.family = AF_INET;
		fib.ipv4_dst = a;
		if (bpf_skb_load_bytes(skb, ip_off + 12, &fib.ipv4_src, 4))
			return 0;
	} else {
		for (k = 0; k < 4; k++) {
			if (bpf_skb_load_bytes(skb, ip_off + 24 + k * 4, &old32,
					       4))
				return 0;
			__builtin_memcpy(&b, t->addr + k * 4, 4);
			bpf_l4_csum_replace(skb, csum_off, old32, b,
					    4 | BPF_F_PSEUDO_HDR);
			bpf_skb_store_bytes(skb, ip_off + 24 + k * 4, &b, 4, 0);
			fib.ipv6_dst[k] = b;
		}
		fib.family = AF_INET6;
		if (bpf_skb_load_bytes(skb, ip_off + 8, fib.ipv6_src, 16))
			return 0;
	}
	if (bpf_fib_lookup(skb, &fib, sizeof(fib), BPF_FIB_LOOKUP_OUTPUT) !=
	    BPF_FIB_LKUP_RET_SUCCESS)
		return 0;
	bpf_skb_store_bytes(skb, 0, fib.dmac, ETH_ALEN, 0);
	bpf_skb_store_bytes(skb, ETH_ALEN, fib.smac, ETH_ALEN, 0);
	return fib.ifindex;
}

/* The highest bit set in @x (not 0). */
static __always_inline __u32 msb64(__u64 x)
{
	__u32 n = 0;

	if (x >> 32) {
		x >>= 32;
		n += 32;
	}
	if (x >> 16) {
		x >>= 16;
		n += 16;
	}
	if (x >> 8) {
		x >>= 8;
		n += 8;
	}
	if (x >> 4) {
		x >>= 4;
		n += 4;
	}
	if (x >> 2) {
		x >>= 2;
		n += 2;
	}
	return n + (__u32)(x >> 1);
}

/*
 * Target @i of the gather, if it was sent to and is before the last: a
 * copy aimed at it and cloned out, or its bit in unsent[]. The callback
 * of reqrouter_scatter's bpf_loop(), which names it there (and so keeps
 * its place in .text): unused where this header is included alone.
 */
static __attribute__((unused)) long sg_scatter_step(__u32 i, void *data)
{
	struct sg_scatter *sc = data;
	struct rr_gather_entry *g = sc->g;
	__u32 word = (i / 64) & (RR_SG_WORDS - 1), ifindex;
	__u64 bit = 1ULL << (i % 64);

	if (i >= sc->last)
		return 1;
	if (!(g->sent[word] & bit))
		return 0;
	ifindex = sg_aim(sc, i);
	if (!ifindex || bpf_clone_redirect(sc->skb, ifindex, 0))
		__sync_fetch_and_or(&g->unsent[word], bit);
	return 0;
}

#endif /* RR_LIB_GATHER_H */
