// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouter's XDP program: parses Ethernet, up to two VLAN tags, IPv4 or
 * IPv6 and UDP; a datagram for a port that has a function is redirected to
 * one of that port's AF_XDP sockets on the receiving queue, its worker
 * chosen by the function's steering (rr_steer).
 * Everything else, including whatever it cannot parse, goes to the kernel
 * untouched (XDP_PASS), so the host's own traffic never notices.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_packet.h>

#include "shared/cache.h"
#include "shared/common.h"
#include "shared/gather.h"
#include "shared/guard.h"
#include "shared/hh.h"
#include "shared/port.h"
#include "shared/rl.h"
#include "shared/spread.h"
#include "shared/stats.h"
#include "shared/steer.h"
#include "shared/unicast.h"

/* One load the compiler neither repeats nor tears: another CPU writes it. */
#define READ_ONCE_U64(x) (*(volatile __u64 *)&(x))
#define READ_ONCE_U32(x) (*(volatile __u32 *)&(x))

#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

/*
 * The interface's MAC, set before load: frames for another host (a
 * promiscuous interface, a bridge port) are the kernel's to drop. All
 * zeros turns the check off (the BPF tests load the program bare).
 */
const volatile __u8 if_mac[ETH_ALEN] = {};
/* The interface's MTU, set before load: the longest reply the in-kernel
 * tier may send, as user space computes it. */
const volatile __u32 if_mtu = 1500;
/* The heavy-hitter sketch's hash seed, drawn at random before load, so
 * that nobody outside can pick sources that collide. */
const volatile __u64 hh_seed = 0;
/* The sockets' RX ring size, set before load: a worker with this much
 * backlog can take no more (0: never judged so). */
const volatile __u32 rx_ring_size = 0;

struct vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

/*
 * The maps a function's XDP program shares (include/reqrouter/rr_xdp.h
 * declares the same names; reqrouter hands it these): the request, the
 * counters it bumps at the keys the request carries, and where it hands
 * back what it did not answer.
 */

/* The request being served on this CPU (a tail call passes only ctx). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_xdp_req);
	__uint(max_entries, 1);
} rr_req SEC(".maps");

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

/* The steering program's own maps. */

/* AF_XDP sockets, keyed by RR_XSK_KEY(queue, thread, slot). */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, RR_XSKMAP_SIZE);
} xsks_map SEC(".maps");

/*
 * Round-robin cursor per (queue, slot). A queue is processed by one NAPI
 * context at a time, so plain increments do not race.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, RR_MAX_QUEUES *RR_MAX_SLOTS);
} rr_cursor SEC(".maps");

/* The workers' load, one struct rr_queue_load per queue: mapped by user
 * space, where each worker keeps its own. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_queue_load);
	__uint(max_entries, RR_MAX_QUEUES);
	__uint(map_flags, BPF_F_MMAPABLE);
} worker_load SEC(".maps");

/* Function and socket count per UDP destination port (host order). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_port_conf);
	__uint(max_entries, 65536);
} port_map SEC(".maps");

/* Allowed source prefixes per function slot, for ports with
 * RR_PORT_ALLOWLIST set. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v4);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} acl_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v6);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} acl_v6 SEC(".maps");

/* The host's own destinations (its local routes), for ports with
 * RR_PORT_LOCAL_DST; user space keeps them current from netlink. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_local_v4);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_LOCAL);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} local_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_local_v6);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_LOCAL);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} local_v6 SEC(".maps");

/* The host's own addresses, direct-mapped (struct rr_local_ent). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_local_ent);
	__uint(max_entries, RR_LOCAL_TAB);
} local_tab SEC(".maps");

/* The functions' XDP programs, by slot, for ports with RR_PORT_XDP. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, RR_MAX_SLOTS);
} fn_progs SEC(".maps");

/* The same programs loaded as cpumap programs, by slot, for ports with
 * RR_PORT_SPREAD. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, RR_MAX_SLOTS);
} fn_progs_cpumap SEC(".maps");

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

/* The reply cache (struct rr_cache_entry), mapped into user space, which
 * fills it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_cache_entry);
	__uint(max_entries, RR_CACHE_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
} reply_cache SEC(".maps");

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

/* The rate limiter's buckets per slot (struct rr_rl_table), shared by
 * every CPU; mapped into user space, which may read them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_rl_table);
	__uint(max_entries, RR_MAX_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
} rl_buckets SEC(".maps");

/* Each CPU's count of limited requests per slot, for the slip. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_rl_cpu);
	__uint(max_entries, RR_MAX_SLOTS);
} rl_cpu SEC(".maps");

/* Sources never rate-limited per function slot, for ports with
 * RR_PORT_RL_EXEMPT: the allow-lists' keys. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v4);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} rl_exempt_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v6);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} rl_exempt_v6 SEC(".maps");

/* A request's and a cached reply's bytes while one is checked. */
struct cache_scratch {
	__u64 req[RR_CACHE_WORDS];
	__u64 reply[RR_CACHE_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct cache_scratch);
	__uint(max_entries, 1);
} cache_scratch SEC(".maps");

struct cursor {
	void *pos;
	void *end;
};

static __always_inline int rr_count(__u32 queue, enum rr_xdp_stat stat, int act)
{
	__u32 key = queue * RR_XDP_STAT_MAX + stat;
	__u64 *cnt = bpf_map_lookup_elem(&xdp_stats, &key);

	if (cnt)
		*cnt += 1;
	return act;
}

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

/* Worker @l's backlog (rr_backlog()), each counter read once. */
static __always_inline __u64 backlog(const struct rr_worker_load *l)
{
	return rr_backlog(READ_ONCE_U64(l->sent), READ_ONCE_U64(l->done));
}

/* Worker @t's load. t < RR_MAX_THREADS already, which the compiler
 * knows and the verifier may not: hidden from the one, masked for the
 * other. */
static __always_inline struct rr_worker_load *load_of(struct rr_queue_load *ql,
						      __u32 t)
{
	asm volatile("" : "+r"(t));
	return &ql->w[t & (RR_MAX_THREADS - 1)];
}

/* least_loaded()'s state, for its bpf_loop() callback. */
struct ll_scan {
	__u64 now, best;
	__u32 queue, nsocks, mask, start, pick;
};

/* Worker @t's score at @now: backlog first, then the age of its batch in
 * microseconds (at most 2^24 - 1: it never outweighs a request). */
static __always_inline __u64 ll_score(struct rr_queue_load *ql, __u32 t,
				      __u64 now)
{
	struct rr_worker_load *l = load_of(ql, t);
	__u64 score = backlog(l) << 24, busy, age;

	busy = READ_ONCE_U64(l->busy_ns);
	if (busy && now > busy) {
		age = (now - busy) >> 10;
		score += age < (1U << 24) ? age : (1U << 24) - 1;
	}
	return score;
}

/* Worker @i of the scan from the cursor on: scored, kept if the best. */
static long ll_step(__u32 i, void *data)
{
	struct ll_scan *c = data;
	struct rr_queue_load *ql;
	__u64 score;
	__u32 t;

	if (i >= c->nsocks)
		return 1;
	t = c->start + i;
	if (t >= c->nsocks)
		t -= c->nsocks;
	if (t >= RR_MAX_THREADS || (c->mask && !(c->mask & (1U << t))))
		return 0;
	ql = bpf_map_lookup_elem(&worker_load, &c->queue);
	if (!ql)
		return 1;
	score = ll_score(ql, t, c->now);
	if (score < c->best) {
		c->best = score;
		c->pick = t;
	}
	return 0;
}

/*
 * steering = least_loaded: of the queue's @nsocks workers (those in @mask
 * where it is not 0: steering = groups), the one with the least backlog;
 * between equals, the one whose batch began last (a long batch is
 * likelier a slow call), and between those, the first from the
 * round-robin cursor @start, so that idle workers take turns. Scores
 * backlog first, then the batch's age in microseconds (at most 2^24).
 * A mask with no worker below nsocks leaves @start. Two workers, the
 * usual case, are compared in line; more are scanned by a bpf_loop(),
 * whose callback is verified once, where an unrolled or bounded loop's
 * branches multiplied the verifier's states past its limit (and which
 * costs some 17 ns a worker).
 */
static __always_inline __u32 least_loaded(struct rr_queue_load *ql, __u32 queue,
					  __u32 nsocks, __u32 mask, __u32 start,
					  __u64 now)
{
	__u32 other = start ^ 1;
	struct ll_scan c = {
		.now = now,
		.best = ~0ULL,
		.queue = queue,
		.nsocks = nsocks,
		.mask = mask,
		.start = start,
		.pick = start,
	};

	/* One worker: nothing to choose (its ring's guard is the caller's). */
	if (nsocks < 2)
		return start;
	if (nsocks == 2 && (!mask || (mask & 3) == 3) && start < 2)
		return ll_score(ql, other, now) < ll_score(ql, start, now)
			       ? other
			       : start;
	bpf_loop(nsocks < RR_MAX_THREADS ? nsocks : RR_MAX_THREADS, ll_step, &c,
		 0);
	return c.pick < RR_MAX_THREADS ? c.pick : start;
}

/* The arrival time in front of the frame, for the worker (struct
 * rr_rx_meta). A driver without metadata room leaves it out. */
static __always_inline void stamp_arrival(struct xdp_md *ctx, __u64 now)
{
	struct rr_rx_meta *m;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return;
	m->arrival_ns = now;
	m->magic = RR_RX_META_MAGIC;
	m->pad = 0;
}

/*
 * Hands the request to one of function slot @slot's sockets on the
 * receiving queue (docs/DESIGN.md, "Steering"): the next in turn, or with
 * RR_PORT_LEAST_LOADED in @flags the least loaded worker (of those in the
 * group mask). @socks packs the function's socket count per queue (low
 * 16 bits) and its group mask (high 16): a BPF function takes five
 * arguments at most. A worker whose backlog fills its RX ring could take
 * nothing more: the frame is dropped here, before the kernel copies it
 * into the UMEM only to drop it. Returns XDP_REDIRECT, XDP_DROP
 * (overload) or XDP_PASS (no socket: a missing socket never drops
 * silently). A function of its own, verified once rather than inlined
 * into both paths that redirect (a request, a punt).
 */
__noinline int rr_steer(struct xdp_md *ctx, __u32 queue, __u32 slot,
			__u32 socks, __u32 flags)
{
	__u32 key = queue * RR_MAX_SLOTS + slot, *rr, t, turn;
	__u32 nsocks = socks & 0xffff, mask = socks >> 16;
	struct rr_queue_load *ql = NULL;
	__u64 now;
	int act;

	if (!ctx || slot >= RR_MAX_SLOTS || queue >= RR_MAX_QUEUES)
		return XDP_PASS;
	rr = bpf_map_lookup_elem(&rr_cursor, &key);
	if (!rr)
		return XDP_PASS;
	if (*rr >= nsocks || *rr >= RR_MAX_THREADS)
		*rr = 0;
	t = turn = *rr;
	*rr += 1;
	now = bpf_ktime_get_ns();
	if (flags & RR_PORT_LOAD)
		ql = bpf_map_lookup_elem(&worker_load, &queue);
	if (ql) {
		if (flags & RR_PORT_LEAST_LOADED)
			t = least_loaded(ql, queue, nsocks, mask, t, now);
		if (rx_ring_size && backlog(load_of(ql, t)) >= rx_ring_size)
			return XDP_DROP;
	}
	act = bpf_redirect_map(&xsks_map, RR_XSK_KEY(queue, t, slot), XDP_PASS);
	/* A worker without this function's socket (one the kernel refused
	 * to make) has no backlog and would win every pick: the worker in
	 * turn takes it instead, as round-robin would have (a full ring
	 * there drops it, counted by the kernel). A failed lookup leaves
	 * nothing behind, so the second one decides. */
	if (act != XDP_REDIRECT && t != turn) {
		t = turn;
		act = bpf_redirect_map(&xsks_map, RR_XSK_KEY(queue, t, slot),
				       XDP_PASS);
	}
	if (act != XDP_REDIRECT)
		return act;
	/* Only on its way to a socket: a frame the kernel gets is as it
	 * came. */
	stamp_arrival(ctx, now);
	if (ql)
		__sync_fetch_and_add(&load_of(ql, t)->sent, 1);
	return act;
}

/* rr_steer()'s @socks for a request of class @cls to the port of
 * @conf. */
static __always_inline __u32 steer_socks(const struct rr_port_conf *conf,
					 __u32 cls)
{
	return (conf->nsocks & 0xffff) |
	       (__u32)conf->group_mask[cls & (RR_XDP_CLASSES - 1)] << 16;
}

/* The counter of rr_steer()'s action @act: @redirect (a request's or a
 * punt's) for a redirect, else overload or no socket. */
static __always_inline enum rr_xdp_stat steer_stat(int act,
						   enum rr_xdp_stat redirect)
{
	if (act == XDP_REDIRECT)
		return redirect;
	return act == XDP_DROP ? RR_XDP_DROP_OVERLOAD : RR_XDP_PASS_NO_SOCKET;
}

/*
 * A request the in-kernel tier did not answer, with a handler's verdict
 * (RR_XDP_PUNT, -errno, or a reply that could not be built): a punt goes
 * on to the function's sockets, anything else is dropped and counted by
 * its reason, as user space counts it. On an xdp_spread CPU a punt is
 * dropped too (spread_punt): AF_XDP's copy-mode receive path takes no
 * lock, it counts on one producer per queue, the queue's NAPI, and a
 * cpumap thread would be a second (net/xdp/xsk.c, __xsk_rcv). Returns
 * the action.
 */
static __always_inline int not_answered(struct xdp_md *ctx,
					const struct rr_port_conf *conf,
					struct rr_xdp_req *req, int ret)
{
	int cls = RR_XDP_PUNT_CLASS_OF(ret);
	enum rr_drop why;

	if (cls >= 0 && !req->spread) {
		rr_fn_count(req, RR_FN_XDP_PUNT);
		ret = rr_steer(ctx, req->queue, conf->slot,
			       steer_socks(conf, (__u32)cls), conf->flags);
		return rr_count(req->queue,
				steer_stat(ret, RR_XDP_REDIRECT_PUNT), ret);
	}
	if (cls >= 0)
		why = RR_DROP_SPREAD_PUNT;
	else if (ret == -EMSGSIZE || ret > (int)req->room)
		why = req->amp_limited ? RR_DROP_AMPLIFICATION
				       : RR_DROP_REPLY_TOO_BIG;
	else
		why = RR_DROP_FUNCTION_ERROR;
	rr_fn_count(req, RR_FN_XDP_DROP + why);
	return rr_count(req->queue, RR_XDP_DROP_FUNCTION, XDP_DROP);
}

/*
 * A sampled request: the next skip from the pool, then its source into
 * the candidates' ring and both kinds' sketches. Only here is the source
 * read and hashed.
 */
static __always_inline void hh_sample(struct rr_hh_cpu *hc,
				      const struct rr_port_conf *conf, void *l3,
				      void *end, int ipv6)
{
	__u32 pos = hc->pos & (RR_HH_POOL - 1), slot = conf->slot, zero = 0;
	__u64 a = 0, b = 0, w0, w1, n, h[RR_HH_KINDS];
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
	if (ipv6) {
		struct ipv6hdr *ip6h = l3;

		if ((void *)(ip6h + 1) > end)
			return;
		__builtin_memcpy(&a, &ip6h->saddr.in6_u.u6_addr8[0], 8);
		__builtin_memcpy(&b, &ip6h->saddr.in6_u.u6_addr8[8], 8);
		family = AF_INET6;
	} else {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > end)
			return;
		a = iph->saddr;
		family = AF_INET;
	}
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

/* Returns the EtherType after the Ethernet header and up to two tags;
 * *stat says why the frame is not ours (a group address at either end,
 * another host's destination), or stays 0. */
static __always_inline int parse_eth(struct cursor *c, int *stat)
{
	struct ethhdr *eth = c->pos;
	struct vlan_hdr *vlan;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > c->end)
		return -1;
	proto = eth->h_proto;
	if (!rr_mac_unicast(eth->h_dest, eth->h_source))
		*stat = RR_XDP_PASS_NOT_UNICAST;
	else if ((if_mac[0] | if_mac[1] | if_mac[2] | if_mac[3] | if_mac[4] |
		  if_mac[5]) &&
		 (eth->h_dest[0] != if_mac[0] || eth->h_dest[1] != if_mac[1] ||
		  eth->h_dest[2] != if_mac[2] || eth->h_dest[3] != if_mac[3] ||
		  eth->h_dest[4] != if_mac[4] || eth->h_dest[5] != if_mac[5]))
		*stat = RR_XDP_PASS_OTHER_HOST;
	c->pos = eth + 1;
#pragma unroll
	for (i = 0; i < 2; i++) {
		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		vlan = c->pos;
		if ((void *)(vlan + 1) > c->end)
			return -1;
		proto = vlan->encap_proto;
		c->pos = vlan + 1;
	}
	return bpf_ntohs(proto);
}

/*
 * Whether the source is in function @slot's prefixes of @trie_v4 or
 * @trie_v6 (keyed by slot and address): one trie lookup. The header was
 * checked while parsing; the check is repeated because the verifier does
 * not carry it over to the saved pointer.
 */
static __always_inline int source_in(void *trie_v4, void *trie_v6, void *l3,
				     void *end, int ipv6, __u32 slot)
{
	if (ipv6) {
		struct ipv6hdr *ip6h = l3;
		struct rr_allow_v6 key = { .prefixlen = 32 + 128,
					   .slot = slot };

		if ((void *)(ip6h + 1) > end)
			return 0;
		__builtin_memcpy(key.addr, &ip6h->saddr, sizeof(key.addr));
		return bpf_map_lookup_elem(trie_v6, &key) != NULL;
	} else {
		struct iphdr *iph = l3;
		struct rr_allow_v4 key = { .prefixlen = 32 + 32, .slot = slot };

		if ((void *)(iph + 1) > end)
			return 0;
		__builtin_memcpy(key.addr, &iph->saddr, sizeof(key.addr));
		return bpf_map_lookup_elem(trie_v4, &key) != NULL;
	}
}

/* Whether the source may reach function @slot: paid only by ports that
 * have an allow-list. */
static __always_inline int source_allowed(void *l3, void *end, int ipv6,
					  __u32 slot)
{
	return source_in(&acl_v4, &acl_v6, l3, end, ipv6, slot);
}

/*
 * Whether the request's destination is one of the host's own addresses:
 * an inlined array lookup for one of them (local_tab), the tries for the
 * rest. A frame sent to our MAC for
 * another address (a router's transit traffic, an address that failed
 * over elsewhere) is the kernel's to forward or drop, never ours to
 * answer with a reply forged from that address.
 */
static __always_inline int dest_local(void *l3, void *end, int ipv6)
{
	struct rr_local_ent *e;
	__u32 slot, *d, *a;

	if (ipv6) {
		struct ipv6hdr *ip6h = l3;
		struct rr_local_v6 key = { .prefixlen = 128 };

		if ((void *)(ip6h + 1) > end)
			return 0;
		d = ip6h->daddr.in6_u.u6_addr32;
		slot = rr_local_slot(d[0] ^ d[1] ^ d[2] ^ d[3]);
		e = bpf_map_lookup_elem(&local_tab, &slot);
		if (e && e->family == AF_INET6) {
			a = (__u32 *)e->addr;
			if (a[0] == d[0] && a[1] == d[1] && a[2] == d[2] &&
			    a[3] == d[3])
				return 1;
		}
		__builtin_memcpy(key.addr, &ip6h->daddr, sizeof(key.addr));
		return bpf_map_lookup_elem(&local_v6, &key) != NULL;
	} else {
		struct iphdr *iph = l3;
		struct rr_local_v4 key = { .prefixlen = 32 };

		if ((void *)(iph + 1) > end)
			return 0;
		slot = rr_local_slot(iph->daddr);
		e = bpf_map_lookup_elem(&local_tab, &slot);
		if (e && e->family == AF_INET &&
		    *(__u32 *)e->addr == iph->daddr)
			return 1;
		__builtin_memcpy(key.addr, &iph->daddr, sizeof(key.addr));
		return bpf_map_lookup_elem(&local_v4, &key) != NULL;
	}
}

/* Returns the L4 protocol, or a negative rr_xdp_stat to pass for. */
static __always_inline int parse_ipv4(struct cursor *c, __u32 *l4_len)
{
	struct iphdr *iph = c->pos;
	__u32 hlen, tot;

	if ((void *)(iph + 1) > c->end)
		return -RR_XDP_PASS_MALFORMED;
	hlen = iph->ihl * 4;
	tot = bpf_ntohs(iph->tot_len);
	if (iph->version != 4 || hlen < sizeof(*iph) || tot < hlen ||
	    c->pos + tot > c->end)
		return -RR_XDP_PASS_MALFORMED;
	if (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET))
		return -RR_XDP_PASS_FRAGMENT;
	/* Options (record route, timestamps, source routes) ask things of
	 * the host that a reply built by swapping addresses would get wrong:
	 * the kernel's to handle. */
	if (hlen != sizeof(*iph))
		return -RR_XDP_PASS_IP_OPTIONS;
	if (!rr_ipv4_unicast((__u8 *)&iph->saddr) ||
	    !rr_ipv4_unicast((__u8 *)&iph->daddr))
		return -RR_XDP_PASS_NOT_UNICAST;
	*l4_len = tot - hlen;
	c->pos += hlen;
	return iph->protocol;
}

static __always_inline int parse_ipv6(struct cursor *c, __u32 *l4_len)
{
	struct ipv6hdr *ip6h = c->pos;
	__u32 plen;

	if ((void *)(ip6h + 1) > c->end)
		return -RR_XDP_PASS_MALFORMED;
	plen = bpf_ntohs(ip6h->payload_len);
	if (ip6h->version != 6 || (void *)(ip6h + 1) + plen > c->end)
		return -RR_XDP_PASS_MALFORMED;
	switch (ip6h->nexthdr) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_FRAGMENT:
	case IPPROTO_DSTOPTS:
	case IPPROTO_AH:
	case IPPROTO_ESP:
	case IPPROTO_MH:
		return -RR_XDP_PASS_IPV6_EXT;
	}
	if (!rr_ipv6_unicast(ip6h->saddr.in6_u.u6_addr8) ||
	    !rr_ipv6_unicast(ip6h->daddr.in6_u.u6_addr8))
		return -RR_XDP_PASS_NOT_UNICAST;
	*l4_len = plen;
	c->pos = ip6h + 1;
	return ip6h->nexthdr;
}

/*
 * Whether the request's UDP checksum is one the kernel would accept: the
 * full sum over the pseudo-header and the datagram checks out, or the
 * field holds only the pseudo-header's sum, as a local sender with
 * checksum offload (a veth peer, a container) leaves it for the device to
 * finish (the kernel trusts such a frame, CHECKSUM_PARTIAL). A zero field
 * over IPv4 means "no checksum". The same rule as user space's
 * rr_udp_csum_ok(). Only what the in-kernel tier answers pays for it: user
 * space checks what it is handed.
 */
static __always_inline int udp_csum_ok(struct xdp_md *ctx,
				       const struct rr_xdp_req *req)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 l3_off = req->l3_off, l4_off = req->l4_off, pseudo, sum;
	struct udphdr *udp;
	__u16 field, ulen;

	/* Offsets the verifier can bound (options never get here). */
	rr_opaque(l3_off);
	rr_opaque(l4_off);
	if (l3_off > RR_XDP_MAX_L3_OFF || l4_off > RR_XDP_MAX_L3_OFF + 40)
		return 0;
	udp = data + l4_off;
	if ((void *)(udp + 1) > end)
		return 0;
	field = udp->check;
	ulen = udp->len;
	if (req->family == AF_INET6) {
		struct ipv6hdr *ip6 = data + l3_off;

		if ((void *)(ip6 + 1) > end)
			return 0;
		pseudo = 0;
#pragma unroll
		for (int i = 0; i < 4; i++)
			pseudo += (__u64)ip6->saddr.in6_u.u6_addr32[i] +
				  ip6->daddr.in6_u.u6_addr32[i];
	} else {
		struct iphdr *ip = data + l3_off;

		if (!field)
			return 1;
		if ((void *)(ip + 1) > end)
			return 0;
		pseudo = (__u64)ip->saddr + ip->daddr;
	}
	pseudo += bpf_htons(IPPROTO_UDP) + ulen;
	sum = rr_xdp_csum(ctx, l4_off, bpf_ntohs(ulen));
	if (sum == (__u64)-1)
		return 0;
	return rr_fold16(sum + pseudo) == 0xffff || field == rr_fold16(pseudo);
}

/*
 * Describes the request for the in-kernel tier, as user space's rr_serve()
 * would see it, and applies its checks but the UDP checksum's (the caller
 * verifies it only for what it answers): a bad IPv4 header checksum or a
 * zero UDP checksum over IPv6 is malformed, and the request must leave
 * room for a reply of its own size under the MTU (and the amplification
 * limit, which only narrows the room). Returns 0, or -enum rr_drop.
 */
static __always_inline int describe(struct xdp_md *ctx, struct rr_xdp_req *req,
				    const struct rr_port_conf *conf, void *l3,
				    struct udphdr *udp, int ipv6)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 room, hdr, l3_off = l3 - data, l4_off = (void *)udp - data;
	__u64 cap;

	if ((void *)(udp + 1) > end)
		return -RR_DROP_MALFORMED;
	req->l3_off = l3_off;
	req->l4_off = l4_off;
	req->payload_off = l4_off + sizeof(*udp);
	req->payload_len = bpf_ntohs(udp->len) - sizeof(*udp);
	req->src_port = bpf_ntohs(udp->source);
	req->dst_port = bpf_ntohs(udp->dest);
	req->family = ipv6 ? AF_INET6 : AF_INET;
	if (ipv6 && !udp->check)
		return -RR_DROP_MALFORMED; /* RFC 8200 8.1 */
	if (!ipv6) {
		struct iphdr *ip = l3;

		if ((void *)(ip + 1) > end)
			return -RR_DROP_MALFORMED;
		if (rr_fold16(rr_xdp_csum(ctx, l3_off, ip->ihl * 4)) != 0xffff)
			return -RR_DROP_MALFORMED;
	}

	room = l3_off + if_mtu;
	if (room > l3_off + 0xffff)
		room = l3_off + 0xffff;
	room = room > req->payload_off ? room - req->payload_off : 0;
	if (req->payload_len > room)
		return -RR_DROP_REPLY_TOO_BIG;
	req->amp_limited = 0;
	if (conf->max_amplification) {
		hdr = req->payload_off - l3_off;
		cap = (__u64)conf->max_amplification *
			      (hdr + req->payload_len) -
		      hdr;
		if (cap < room) {
			room = cap;
			req->amp_limited = 1;
		}
	}
	req->room = room > 0xffff ? 0xffff : room;
	return 0;
}

/*
 * Answers a repeated request of a pure function from the reply cache.
 * The request's bytes are compared in full, not only its hash, and the
 * entry is read between two looks at its sequence count (atomic reads,
 * which order the loads between them), so an entry a worker is
 * rewriting answers nothing. Returns XDP_TX, or -1 on a miss with the
 * frame untouched.
 */
static __always_inline int cache_answer(struct xdp_md *ctx,
					struct rr_xdp_req *req,
					const struct rr_port_conf *conf)
{
	__u32 len = req->payload_len, zero = 0, key, rlen, i;
	__u32 idb = conf->cache_id_bytes, nw = (len + 7) / 8, rw;
	struct cache_scratch *sc;
	struct rr_cache_entry *e;
	__u64 h, s1, s2, diff = 0, idmask = 0, id;

	if (len > conf->cache_max_payload || len > RR_CACHE_MAX_PAYLOAD)
		return -1;
	sc = bpf_map_lookup_elem(&cache_scratch, &zero);
	if (!sc)
		return -1;
	/* Only the words the request covers are read, hashed and compared
	 * (an entry is zero beyond its request, as the last word is here). */
	if (nw)
		sc->req[(nw - 1) & (RR_CACHE_WORDS - 1)] = 0;
	if (len && bpf_xdp_load_bytes(ctx, req->payload_off, sc->req, len))
		return -1;
	/* A transaction ID is no part of the key; the reply gets this one.
	 * Words are little-endian in memory order: the first bytes are the
	 * low ones. */
	if (idb > 8 || len < idb)
		return -1;
	if (idb)
		idmask = idb == 8 ? ~0ULL : (1ULL << (8 * idb)) - 1;
	id = sc->req[0] & idmask;
	sc->req[0] &= ~idmask;
	h = rr_cache_hash(sc->req, nw, req->dst_port, len);
	key = h & (RR_CACHE_ENTRIES - 1);
	e = bpf_map_lookup_elem(&reply_cache, &key);
	if (!e)
		return -1;
	s1 = __sync_fetch_and_add(&e->seq, 0);
	if (s1 & 1 || e->hash != h || e->port != req->dst_port ||
	    e->req_len != len || e->gen != conf->cache_gen)
		return -1;
	/* The coarse clock (CLOCK_MONOTONIC, a tick behind at most) is a
	 * load where the precise one reads the TSC: an entry may answer a
	 * tick past its TTL, which is given in seconds. */
	if (e->expires_ns && bpf_ktime_get_coarse_ns() > e->expires_ns)
		return -1;
	rlen = e->reply_len;
	if (rlen > RR_CACHE_MAX_PAYLOAD || rlen > req->room || rlen < idb)
		return -1;
	rw = (rlen + 7) / 8;
#pragma unroll
	for (i = 0; i < RR_CACHE_WORDS; i++) {
		if (i >= nw && i >= rw)
			break;
		if (i < nw)
			diff |= e->req[i] ^ sc->req[i];
		if (i < rw)
			sc->reply[i] = e->reply[i];
	}
	s2 = __sync_fetch_and_add(&e->seq, 0);
	if (diff || s1 != s2)
		return -1;
	/* A hit: only now is the checksum worth checking. A bad one is
	 * user space's to drop and count. */
	if (!udp_csum_ok(ctx, req))
		return -1;
	sc->reply[0] = (sc->reply[0] & ~idmask) | id;

	/* From here the frame changes: a failure can no longer punt. */
	if (rr_xdp_resize(ctx, req, rlen))
		return -1;
	if (rlen && bpf_xdp_store_bytes(ctx, req->payload_off, sc->reply, rlen))
		return -2;
	if (rr_xdp_build_reply(ctx, req, rlen))
		return -2;
	rr_fn_count(req, RR_FN_CACHE_HIT);
	return rr_count(req->queue, RR_XDP_TX_CACHE, XDP_TX);
}

/*
 * The in-kernel tier: the reply cache for a pure function, or a tail call
 * into the function's own XDP program. Returns the action when the
 * request was dealt with here, -1 when it goes on to the AF_XDP sockets.
 * @on_spread, a constant: in reqrouter_spread, on an xdp_spread CPU,
 * where nothing goes on (and only the cpumap program array is named:
 * a program array keeps to one attach type).
 */
static __always_inline int in_kernel(struct xdp_md *ctx,
				     const struct rr_port_conf *conf, void *l3,
				     struct udphdr *udp, int ipv6, __u32 queue,
				     const int on_spread)
{
	struct rr_xdp_req *req;
	__u32 zero = 0;
	int ret;

	req = bpf_map_lookup_elem(&rr_req, &zero);
	if (!req)
		return on_spread ? XDP_DROP : -1;
	req->queue = queue;
	req->slot = conf->slot;
	req->nsocks = conf->nsocks;
	req->spread = on_spread;
	ret = describe(ctx, req, conf, l3, udp, ipv6);

	if (!on_spread && conf->flags & RR_PORT_CACHE) {
		/* User space judges what the cache cannot answer. */
		if (ret)
			return -1;
		ret = cache_answer(ctx, req, conf);
		if (ret == -2) {
			rr_fn_count(req,
				    RR_FN_XDP_DROP + RR_DROP_FUNCTION_ERROR);
			return rr_count(queue, RR_XDP_DROP_FUNCTION, XDP_DROP);
		}
		if (ret < 0)
			rr_fn_count(req, RR_FN_CACHE_MISS);
		return ret;
	}

	/* Too long for the in-kernel tier (or for what the operator lets it
	 * take): the C implementation answers. */
	if (!ret &&
	    (req->payload_len > conf->xdp_max_payload ||
	     req->payload_len > RR_XDP_MAX_PAYLOAD ||
	     (long)ctx->data_end - (long)ctx->data > RR_XDP_MAX_FRAME)) {
		rr_fn_count(req, RR_FN_XDP_RX);
		return not_answered(ctx, conf, req, RR_XDP_PUNT);
	}
	/* User space finds a bad checksum before the size: the same
	 * reason for the same request (one longer than the in-kernel tier
	 * can sum keeps its own). */
	if (ret != -RR_DROP_MALFORMED &&
	    req->payload_len <= RR_XDP_MAX_PAYLOAD && !udp_csum_ok(ctx, req))
		ret = -RR_DROP_BAD_CHECKSUM;
	if (ret) {
		rr_fn_count(req, RR_FN_XDP_RX);
		rr_fn_count(req, RR_FN_XDP_DROP - ret);
		return rr_count(queue, RR_XDP_DROP_FUNCTION, XDP_DROP);
	}
	/* Where the function's entry point counts, so that it needs no
	 * knowledge of the counters' layout. */
	req->rx_key = RR_FN_STATS_KEY(queue, conf->slot, RR_FN_XDP_RX);
	req->tx_key = RR_FN_STATS_KEY(queue, conf->slot, RR_FN_XDP_TX);
	req->tx_stat_key = queue * RR_XDP_STAT_MAX + RR_XDP_TX_FUNCTION;
	if (on_spread) {
		bpf_tail_call(ctx, &fn_progs_cpumap, conf->slot);
		/* No program in the slot: no worker to hand it to here. */
		rr_fn_count(req, RR_FN_XDP_RX);
		return not_answered(ctx, conf, req, RR_XDP_PUNT);
	}
	bpf_tail_call(ctx, &fn_progs, conf->slot);
	/* No program in the slot (being replaced): user space answers. */
	return -1;
}

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
 * receiving queue and the time in front of it (struct rr_spread_meta):
 * of the next two in turn, the one whose queue should be shorter now
 * (rr_spread_load). What the program would not take (longer than
 * xdp_max_payload or the in-kernel tier's limits) stays, for the
 * workers of this queue. Returns XDP_REDIRECT, or -1 for today's path.
 */
static __always_inline int spread(struct xdp_md *ctx,
				  const struct rr_port_conf *conf,
				  struct udphdr *udp, __u32 queue)
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
			m->queue = queue;
			m->sent_ns = now;
		}
	}
	rr_fn_count_at(queue, slot, RR_FN_XDP_SPREAD);
	return rr_count(queue, RR_XDP_REDIRECT_SPREAD, XDP_REDIRECT);
}

/*
 * Whether the source is in function @slot's rate-limit exemptions: one
 * trie lookup, paid only by ports that have some.
 */
static __always_inline int rl_exempt(void *l3, void *end, int ipv6, __u32 slot)
{
	return source_in(&rl_exempt_v4, &rl_exempt_v6, l3, end, ipv6, slot);
}

#define DNS_HDR 12
#define DNS_QR 0x80
#define DNS_TC 0x02
/* The question's name may take 255 bytes: labels of at least one. */
#define DNS_MAX_LABELS 128
#define SLIP_BUF 512 /* the scratch area's bytes (struct cache_scratch) */

/*
 * The slip reply of a DNS function, as Knot's RRL sends it: the header
 * and question echoed, QR and TC set (AA, RA and the RCODE clear), every
 * count but QDCOUNT zero, nothing after the question. A client that gets
 * it asks again over TCP, which a spoofed source cannot. Only a single
 * well-formed question in a query is answered. XDP_TX, or -1 to drop.
 */
static __always_inline int slip_tc(struct xdp_md *ctx,
				   const struct rr_port_conf *conf, void *l3,
				   struct udphdr *udp, int ipv6, __u32 queue)
{
	__u32 zero = 0, len, n, pos = DNS_HDR, i;
	struct rr_xdp_req *req;
	__u8 *buf, l;

	req = bpf_map_lookup_elem(&rr_req, &zero);
	buf = bpf_map_lookup_elem(&cache_scratch, &zero);
	if (!req || !buf)
		return -1;
	req->queue = queue;
	req->slot = conf->slot;
	req->nsocks = conf->nsocks;
	if (describe(ctx, req, conf, l3, udp, ipv6) || !udp_csum_ok(ctx, req))
		return -1;
	len = req->payload_len;
	if (len < DNS_HDR + 5)
		return -1;
	n = len > SLIP_BUF ? SLIP_BUF : len;
	if (bpf_xdp_load_bytes(ctx, req->payload_off, buf, n))
		return -1;
	if (buf[2] & DNS_QR || buf[4] || buf[5] != 1)
		return -1;
#pragma clang loop unroll(disable)
	for (i = 0; i < DNS_MAX_LABELS; i++) {
		if (pos >= n)
			return -1;
		l = buf[pos & (SLIP_BUF - 1)];
		if (!l)
			break;
		if (l & 0xc0)
			return -1;
		pos += l + 1;
	}
	if (i == DNS_MAX_LABELS)
		return -1;
	pos += 1 + 4; /* the root label, QTYPE and QCLASS */
	if (pos > n)
		return -1;
	buf[2] = (buf[2] & 0x79) | DNS_QR | DNS_TC; /* opcode and RD kept */
	buf[3] = 0;
	__builtin_memset(&buf[6], 0, 6);
	/* From here the frame changes. */
	if (bpf_xdp_store_bytes(ctx, req->payload_off, buf, DNS_HDR) ||
	    rr_xdp_build_reply(ctx, req, pos))
		return -1;
	rr_fn_count(req, RR_FN_RL_SLIPPED);
	return rr_count(queue, RR_XDP_TX_SLIP, XDP_TX);
}

/*
 * Response rate limiting, before either tier: the source's prefix
 * (rl_mask_v4/v6) hashed into one bucket per row. It conforms if any
 * row's bucket does, and then takes a token from each that has one
 * (atomic adds; a bucket idle long enough is restarted with a plain
 * store, which may lose a concurrent token once: bounded). A limited
 * request costs reads only, never a write to the shared table. Returns
 * -1 to go on, or the action taken for a limited request.
 */
static __always_inline int rl_check(struct xdp_md *ctx,
				    const struct rr_port_conf *conf, void *l3,
				    struct udphdr *udp, int ipv6, __u32 queue)
{
	__u32 slot = conf->slot, family, r, ok = 0;
	__u64 a = 0, b = 0, now, tau, t, h, *p;
	void *end = (void *)(long)ctx->data_end;
	struct rr_rl_table *tb;
	struct rr_rl_cpu *rc;
	int act;

	if (conf->flags & RR_PORT_RL_EXEMPT && rl_exempt(l3, end, ipv6, slot))
		return -1;
	tb = bpf_map_lookup_elem(&rl_buckets, &slot);
	if (!tb)
		return -1;
	if (ipv6) {
		struct ipv6hdr *ip6h = l3;

		if ((void *)(ip6h + 1) > end)
			return -1;
		__builtin_memcpy(&a, &ip6h->saddr.in6_u.u6_addr8[0], 8);
		__builtin_memcpy(&b, &ip6h->saddr.in6_u.u6_addr8[8], 8);
		family = AF_INET6;
	} else {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > end)
			return -1;
		a = iph->saddr;
		family = AF_INET;
	}
	h = rr_rl_hash(conf, hh_seed, family, a, b);
	now = bpf_ktime_get_ns();
	tau = rr_rl_tau(conf);
#pragma unroll
	for (r = 0; r < RR_RL_ROWS; r++) {
		t = READ_ONCE_U64(tb->tat[r][rr_hh_col(h, r)]);
		if (t <= now + tau)
			ok |= 1U << r;
	}
	if (ok) {
#pragma unroll
		for (r = 0; r < RR_RL_ROWS; r++) {
			if (!(ok & (1U << r)))
				continue;
			p = &tb->tat[r][rr_hh_col(h, r)];
			if (READ_ONCE_U64(*p) < now)
				*p = now + conf->rl_interval_ns;
			else
				__sync_fetch_and_add(p, conf->rl_interval_ns);
		}
		return -1;
	}

	rc = bpf_map_lookup_elem(&rl_cpu, &slot);
	if (rc && conf->rl_slip && ++rc->limited >= conf->rl_slip) {
		rc->limited = 0;
		if (conf->flags & RR_PORT_SLIP_TC) {
			act = slip_tc(ctx, conf, l3, udp, ipv6, queue);
			if (act >= 0)
				return act;
		}
	}
	rr_fn_count_at(queue, slot, RR_FN_RL_LIMITED);
	return rr_count(queue, RR_XDP_DROP_RATE_LIMITED, XDP_DROP);
}

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
 * the owner's queue: a socket takes frames of its own queue only).
 */
static __always_inline int gather_reply(struct xdp_md *ctx, void *l3,
					struct udphdr *udp, int ipv6,
					__u32 queue)
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
		return rr_count(queue, RR_XDP_GATHER_MALFORMED, XDP_DROP);
	idx = bpf_ntohl(h->gather);
	gen = bpf_ntohl(h->gen);
	target = bpf_ntohs(h->target);
	g = bpf_map_lookup_elem(&gathers, &idx);
	if (!g || target >= RR_SG_MAX_TARGETS)
		return rr_count(queue, RR_XDP_GATHER_MALFORMED, XDP_DROP);
	state = READ_ONCE_U64(g->state);
	if ((__u32)(state >> 32) != gen || (__u32)state >= g->need)
		return rr_count(queue, RR_XDP_GATHER_LATE, XDP_DROP);
	word = target / 64;
	bit = 1ULL << (target % 64);
	if (!(READ_ONCE_U64(g->sent[word]) & bit))
		return rr_count(queue, RR_XDP_GATHER_WRONG_SOURCE, XDP_DROP);
	tkey = g->group * RR_SG_MAX_TARGETS + target;
	t = bpf_map_lookup_elem(&sg_targets, &tkey);
	if (!t || !sg_from(t, l3, end, udp, ipv6))
		return rr_count(queue, RR_XDP_GATHER_WRONG_SOURCE, XDP_DROP);
	r.l3_off = l3 - data;
	r.l4_off = (void *)udp - data;
	r.family = ipv6 ? AF_INET6 : AF_INET;
	if ((ipv6 && !udp->check) || !udp_csum_ok(ctx, &r))
		return rr_count(queue, RR_XDP_GATHER_MALFORMED, XDP_DROP);
	reduce = g->reduce;
	/* The owner, by the entry's index: worker index queue *
	 * RR_MAX_THREADS + thread owns RR_SG_PER_WORKER entries. */
	owner_w = idx / RR_SG_PER_WORKER;
	if (reduce != RR_REDUCE_CONCAT && sg_value(h + 1, end, &v))
		return rr_count(queue, RR_XDP_GATHER_NO_VALUE, XDP_DROP);
	sg_learn(ctx, tkey, l3, end, ipv6);

	old = __sync_fetch_and_or(&g->seen[word], bit);
	if (old & bit)
		return rr_count(queue, RR_XDP_GATHER_DUPLICATE, XDP_DROP);
	for (i = 0; i < 16; i++) {
		state = READ_ONCE_U64(g->state);
		if ((__u32)(state >> 32) != gen || (__u32)state >= g->need)
			return rr_count(queue, RR_XDP_GATHER_LATE, XDP_DROP);
		if (__sync_val_compare_and_swap(&g->state, state, state + 1) ==
		    state)
			break;
	}
	if (i == 16)
		return rr_count(queue, RR_XDP_GATHER_LATE, XDP_DROP);

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
		return rr_count(queue, RR_XDP_GATHER_MERGED, XDP_DROP);
	/* The last of a reduction wakes its worker only if it sleeps (the
	 * add above orders this read after the count, as the worker reads
	 * the count after saying it sleeps). */
	if (reduce != RR_REDUCE_CONCAT) {
		first = idx - idx % RR_SG_PER_WORKER;
		owner = bpf_map_lookup_elem(&gathers, &first);
		if (owner && !READ_ONCE_U32(owner->asleep))
			return rr_count(queue, RR_XDP_GATHER_MERGED, XDP_DROP);
	}
	/* A concatenation's reply on another queue than its owner's, whose
	 * socket takes its own queue's frames only: to the kernel, which
	 * gives it to the owner's gather socket. */
	if (reduce == RR_REDUCE_CONCAT && owner_w / RR_MAX_THREADS != queue)
		return rr_count(queue, RR_XDP_GATHER_OTHER_QUEUE, XDP_PASS);
	/* The owner's socket; a missing one (a worker going) or another
	 * queue's: the owner finds the gather complete at its next look. */
	if (owner_w / RR_MAX_THREADS != queue ||
	    bpf_redirect_map(&xsks_map,
			     RR_XSK_KEY(queue, owner_w % RR_MAX_THREADS,
					g->slot % RR_MAX_SLOTS),
			     XDP_DROP) != XDP_REDIRECT)
		return rr_count(queue, RR_XDP_GATHER_MERGED, XDP_DROP);
	return rr_count(queue, RR_XDP_REDIRECT_GATHER, XDP_REDIRECT);
}

SEC("xdp")
int reqrouter_xdp(struct xdp_md *ctx)
{
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	__u32 queue = ctx->rx_queue_index;
	struct rr_port_conf *conf, *sconf;
	__u32 l4_len = 0, key;
	struct udphdr *udph;
	int proto, act, ipv6, not_ours = 0;
	void *l3;

	if (queue >= RR_MAX_QUEUES)
		return rr_count(RR_MAX_QUEUES, RR_XDP_PASS_QUEUE_RANGE,
				XDP_PASS);

	proto = parse_eth(&c, &not_ours);
	/* Broadcast and multicast are the kernel's: answering a group
	 * address would be a reply from it, and a reflector. */
	if (proto >= 0 && not_ours)
		return rr_count(queue, not_ours, XDP_PASS);
	l3 = c.pos;
	ipv6 = proto == ETH_P_IPV6;
	if (proto == ETH_P_IP)
		proto = parse_ipv4(&c, &l4_len);
	else if (proto == ETH_P_IPV6)
		proto = parse_ipv6(&c, &l4_len);
	else if (proto < 0)
		return rr_count(queue, RR_XDP_PASS_MALFORMED, XDP_PASS);
	else
		return rr_count(queue, RR_XDP_PASS_NOT_IP, XDP_PASS);

	if (proto < 0)
		return rr_count(queue, -proto, XDP_PASS);
	if (proto != IPPROTO_UDP)
		return rr_count(queue, RR_XDP_PASS_NOT_UDP, XDP_PASS);

	udph = c.pos;
	if ((void *)(udph + 1) > c.end)
		return rr_count(queue, RR_XDP_PASS_MALFORMED, XDP_PASS);
	/* A datagram must fit the IP payload; the kernel drops it otherwise. */
	if (bpf_ntohs(udph->len) < sizeof(*udph) ||
	    bpf_ntohs(udph->len) > l4_len)
		return rr_count(queue, RR_XDP_PASS_MALFORMED, XDP_PASS);

	key = bpf_ntohs(udph->dest);
	conf = bpf_map_lookup_elem(&port_map, &key);
	if (!conf || !conf->nsocks || conf->slot >= RR_MAX_SLOTS)
		return rr_count(queue, RR_XDP_PASS_NO_FUNCTION, XDP_PASS);
	/* Not addressed to this host: the kernel forwards or drops it. */
	if (conf->flags & RR_PORT_LOCAL_DST && !dest_local(l3, c.end, ipv6))
		return rr_count(queue, RR_XDP_PASS_NOT_LOCAL, XDP_PASS);
	/* Replies to a gather come from their targets' service ports
	 * (echo's 7 among them): they are known before the loop check. */
	if (conf->flags & RR_PORT_GATHER)
		return gather_reply(ctx, l3, udph, ipv6, queue);
	/*
	 * A reply to port 0 is meaningless, and one to a service that answers
	 * anything (echo, daytime, chargen, time, or a function of ours, here
	 * or on a peer) can bounce between two servers forever: drop them, as
	 * inetd did.
	 */
	key = bpf_ntohs(udph->source);
	if (key == 0 || key == 7 || key == 13 || key == 19 || key == 37)
		return rr_count(queue, RR_XDP_DROP_LOOP_PORT, XDP_DROP);
	sconf = bpf_map_lookup_elem(&port_map, &key);
	if (sconf && sconf->nsocks)
		return rr_count(queue, RR_XDP_DROP_LOOP_PORT, XDP_DROP);
	/*
	 * Below min_src_port are the well-known services: clients do not
	 * send from there, but a spoofed request from another server's
	 * service port makes the two answer each other for ever (the
	 * CVE-2024-2169 class), whatever ports are served here.
	 */
	if (key < conf->min_src_port)
		return rr_count(queue, RR_XDP_DROP_LOW_PORT, XDP_DROP);
	if (conf->flags & RR_PORT_QUARANTINED)
		return rr_count(queue, RR_XDP_DROP_QUARANTINED, XDP_DROP);
	/* Unwanted sources cost one lookup and go no further. */
	if (conf->flags & RR_PORT_ALLOWLIST &&
	    !source_allowed(l3, c.end, ipv6, conf->slot))
		return rr_count(queue, RR_XDP_DROP_NOT_ALLOWED, XDP_DROP);
	/* Who is calling: every request that gets this far, whichever tier
	 * answers it. */
	if (conf->flags & RR_PORT_HH)
		hh_count(conf, l3, c.end, ipv6);
	/* A flood is turned away here, before it wakes either tier. */
	if (conf->flags & RR_PORT_RL) {
		act = rl_check(ctx, conf, l3, udph, ipv6, queue);
		if (act >= 0)
			return act;
	}

	if (conf->flags & RR_PORT_SG_TARGET && sg_message(udph, c.end))
		goto workers;
	if (conf->flags & RR_PORT_SPREAD) {
		act = spread(ctx, conf, udph, queue);
		if (act >= 0)
			return act;
	}
	if (conf->flags & (RR_PORT_XDP | RR_PORT_CACHE)) {
		act = in_kernel(ctx, conf, l3, udph, ipv6, queue, 0);
		if (act >= 0)
			return act;
	}

workers:
	act = rr_steer(ctx, queue, conf->slot, steer_socks(conf, 0),
		       conf->flags);
	return rr_count(queue, steer_stat(act, RR_XDP_REDIRECT), act);
}

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
	struct udphdr *udph;
	void *l3;

	if ((void *)(m + 1) <= c.pos && m->magic == RR_SPREAD_META_MAGIC) {
		queue = m->queue;
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
	return in_kernel(ctx, conf, l3, udph, ipv6, queue, 1);
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

static long sg_scatter_step(__u32 i, void *data)
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
