/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rate limiting (docs/DESIGN.md, "Rate limiting in XDP"): before either
 * tier, a request over its source prefix's rate is dropped, or, every
 * rl_slip-th one, answered with a DNS truncated reply built here that
 * sends the client to TCP (slip_tc()), or by a worker where replies from
 * XDP would be lost. A GCRA bucket per source prefix of each level
 * (/32, /24, /20; /128, /64, /56, /48) and function (rl_table), shared
 * by every CPU; exempt sources in
 * rl_exempt_v4/v6, keyed as the allow-lists are (lib/guard.h).
 */
#ifndef RR_LIB_RL_H
#define RR_LIB_RL_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_packet.h>

#include "lib/cache.h"
#include "lib/common.h"
#include "lib/guard.h"
#include "lib/hh.h"
#include "lib/parse.h"
#include "lib/stats.h"
#include "lib/steer.h"
#include "lib/tier.h"
#include "shared/port.h"
#include "shared/rl.h"
#include "shared/steer.h"

/* A table of the limiter's: RR_RL_SETS sets (struct rr_rl_set) keyed by
 * rr_rl_set_of(), shared by every CPU; mappable, so that each set is a
 * cache line of page-aligned memory. */
#define RL_SETS_MAP(name)                          \
	struct {                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);  \
		__type(key, __u32);                \
		__type(value, struct rr_rl_set);   \
		__uint(max_entries, RR_RL_SETS);   \
		__uint(map_flags, BPF_F_MMAPABLE); \
	} name SEC(".maps")

/* The rate limiter's buckets, one per source prefix (of each level) and
 * function. */
RL_SETS_MAP(rl_table);

/* What the source prefixes cost their functions (rate_limit_us), laid
 * out as rl_table and keyed by the same hashes; written by the workers
 * (src/daemon/features/rl.c, rr_rl_charge()), only read here. */
RL_SETS_MAP(rl_cost_table);

/* Each CPU's count of limited requests per slot, for the slip. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_rl_cpu);
	__uint(max_entries, RR_MAX_SLOTS);
} rl_cpu SEC(".maps");

/*
 * A source's lease (docs/DESIGN.md, "Rate limiting in XDP", "Leases"):
 * tokens this CPU took from every level's bucket of the source at once,
 * for its next requests in the same clock tick, and how many requests it
 * sent in that tick (how many to take at the next judgement).
 */
struct rl_lease {
	__u64 a, b; /* the source's address words (src_words()) */
	__u64 seed; /* its function's rl_seed, ^ 1 for IPv6 */
	__u32 tick; /* the low bits of the jiffies it was taken in */
	__u16 left; /* tokens taken, not yet used */
	__u16 seen; /* the source's requests in that tick */
};

#define RL_LEASES 64	/* 2^n: a source's lease is at RL_LEASES of its hash */
#define RL_LEASE_MAX 64 /* tokens taken at once, at most */

/* Each CPU's own: its reading of the coarse clock in the current tick
 * (rl_coarse_now()) and its leases. */
struct rl_local {
	__u64 jiffies;
	__u64 ns;
	struct rl_lease lease[RL_LEASES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_local);
	__uint(max_entries, 1);
} rl_local SEC(".maps");

/*
 * The coarse clock as this CPU first read it in the current tick:
 * bpf_jiffies64() is a load the verifier puts in line, where the coarse
 * clock is a helper call (12 ns here, 0 for jiffies: tools/bench-xdp), so
 * it is read once a tick. Never ahead of the precise clock, and at most
 * two ticks behind it (one where a tick's jiffies are counted before
 * its time is).
 */
static __always_inline __u64 rl_coarse_now(void)
{
	__u64 j = bpf_jiffies64();
	struct rl_local *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&rl_local, &zero);
	if (!c)
		return bpf_ktime_get_coarse_ns();
	if (c->jiffies != j) {
		c->ns = bpf_ktime_get_coarse_ns();
		c->jiffies = j;
	}
	return c->ns;
}

/* Sources never rate-limited per function slot, for ports with
 * RR_PORT_RL_EXEMPT: the allow-lists' keys. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v4);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} rl_exempt_v4 SEC(".maps");

/* The same for IPv6 sources. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct rr_allow_v6);
	__type(value, __u8);
	__uint(max_entries, RR_MAX_ALLOW);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} rl_exempt_v6 SEC(".maps");

/*
 * Whether the source is in function @slot's rate-limit exemptions: one
 * trie lookup, paid only by ports that have some.
 */
static __always_inline int rl_exempt(void *l3, void *end, int ipv6, __u32 slot)
{
	return source_in(&rl_exempt_v4, &rl_exempt_v6, l3, end, ipv6, slot);
}

#define DNS_HDR RR_DNS_HDR
#define DNS_QR RR_DNS_QR
#define DNS_TC RR_DNS_TC
#define DNS_MAX_LABELS RR_DNS_MAX_LABELS
#define SLIP_BUF RR_SLIP_MAX /* no more than the scratch area's 512 bytes */

/*
 * The slip reply of a DNS function, as Knot's RRL sends it: the header
 * and question echoed, QR and TC set (AA, RA and the RCODE clear), every
 * count but QDCOUNT zero, nothing after the question. A client that gets
 * it asks again over TCP, which a spoofed source cannot. Only a single
 * well-formed question in a query is answered. XDP_TX; with
 * RR_PORT_SLIP_WORKERS (XDP_TX would be lost) the query is handed to a
 * worker marked as a slip, which sends the same reply
 * (src/daemon/features/rl.c, rr_rl_slip()): XDP_REDIRECT. -1 to drop.
 */
static __always_inline int slip_tc(struct xdp_md *ctx,
				   const struct rr_port_conf *conf, void *l3,
				   struct udphdr *udp, int ipv6, __u32 queue)
{
	__u32 zero = 0, len, n, pos = DNS_HDR, i;
	struct rr_xdp_req *req;
	__u8 *buf, l;
	int act;

	req = bpf_map_lookup_elem(&rr_req, &zero);
	buf = bpf_map_lookup_elem(&cache_scratch, &zero);
	if (!req || !buf)
		return -1;
	req->queue = queue;
	req->slot = conf->slot;
	req->nsocks = conf->nsocks;
	if (describe(ctx, req, conf, l3, udp, ipv6) ||
	    !udp_csum_ok(ctx, req, 0))
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
	if (conf->flags & RR_PORT_SLIP_WORKERS) {
		act = rr_steer(ctx, queue, conf->slot, steer_socks(conf, 0),
			       conf->flags | RR_STEER_SLIP);
		if (act != XDP_REDIRECT)
			return -1;
		rr_fn_count(req, RR_FN_RL_SLIPPED);
		return rr_count(queue, RR_XDP_REDIRECT_SLIP, act);
	}
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

/* The counter of rl_check()'s action @act on a limited request. */
static __always_inline enum rr_xdp_stat rl_stat(int act)
{
	if (act == XDP_TX)
		return RR_XDP_TX_SLIP;
	return act == XDP_REDIRECT ? RR_XDP_REDIRECT_SLIP
				   : RR_XDP_DROP_RATE_LIMITED;
}

/*
 * The time of the entry tagged @h in set @key of rl_table, or with @cost
 * of rl_cost_table (0: none, as good as a full bucket). In line, in
 * rl_judge(), which the verifier checks once.
 */
static __always_inline __u64 rl_time(__u32 key, __u64 h, __u32 cost)
{
	struct rr_rl_set *set;
	__u32 w;

	set = cost ? bpf_map_lookup_elem(&rl_cost_table, &key)
		   : bpf_map_lookup_elem(&rl_table, &key);
	if (!set)
		return 0;
#pragma unroll
	for (w = 0; w < RR_RL_WAYS; w++)
		if (READ_ONCE_U64(set->way[w].tag) == h)
			return READ_ONCE_U64(set->way[w].tat);
	return 0;
}

/*
 * Tokens from the bucket of the level whose hash is @h (@iv: their
 * intervals), for a request every level lets by: its entry found again
 * in its set (the same cache line rl_check() just read), or, where it
 * has none, the set's entry whose time is earliest, claimed and counted
 * as evicted if it was live (for function slot @slot on @queue). @back
 * is what a lapsed lease gives back (its tokens' intervals), to a bucket
 * still ahead of now: one that has refilled owes it nothing. @now is the
 * clock rl_check() judged by, @pnow the precise one if it read it (0:
 * not yet); a claim reads it. Returns @pnow, read or not.
 */
static __always_inline __u64 rl_take(__u64 h, __u64 iv, __u64 back, __u64 now,
				     __u64 pnow, __u32 queue_slot)
{
	__u32 key = rr_rl_set_of(h), w;
	struct rr_rl_entry *e = NULL, *victim;
	struct rr_rl_set *set;
	__u64 t, vt = ~0ULL;

	set = bpf_map_lookup_elem(&rl_table, &key);
	if (!set)
		return pnow;
	victim = &set->way[0];
#pragma unroll
	for (w = 0; w < RR_RL_WAYS; w++) {
		if (READ_ONCE_U64(set->way[w].tag) == h) {
			e = &set->way[w];
			break;
		}
		t = READ_ONCE_U64(set->way[w].tat);
		if (t < vt) {
			vt = t;
			victim = &set->way[w];
		}
	}
	if (e) {
		if (READ_ONCE_U64(e->tat) < now)
			e->tat = now + iv;
		else
			__sync_fetch_and_add(&e->tat, iv - back);
		return pnow;
	}
	if (!pnow)
		pnow = bpf_ktime_get_ns();
	if (vt > pnow)
		rr_fn_count_at(queue_slot >> 16, queue_slot & 0xffff,
			       RR_FN_RL_EVICTED);
	if (__sync_val_compare_and_swap(&victim->tat, vt, pnow + iv) == vt)
		victim->tag = h;
	return pnow;
}

/* rl_take() of level @l, if it has a limit of replies: @got tokens, @back
 * given back. */
#define RL_TAKE(l)                                                  \
	do {                                                        \
		iv = conf->rl_interval_ns[fam][l];                  \
		if (n > (l) && iv) {                                \
			pnow = rl_take(h[l], (__u64)iv * got,       \
				       (__u64)iv * back, now, pnow, \
				       queue << 16 | slot);         \
			if (pnow)                                   \
				now = pnow;                         \
		}                                                   \
	} while (0)

/*
 * The judgement of rl_check(), every level read and, if none refuses,
 * tokens taken from each: @want of them (a lease, rl_lease_use()) where
 * every level stays half full after and they are a 64th of its burst at
 * most, else one; and @back of a lapsed
 * lease given back (@ask: @want | @back << 16). A function of its own
 * (a global one, which the verifier checks once, on its own), with the
 * reads and takes in line within it. In line in reqrouter_xdp, every
 * level's ways multiplied the verifier's paths through the rest of the
 * program (past its limit); as calls per level, their returns cost 7 ns
 * each on these CPUs (SRSO's safe RET), 111 ns a request over three
 * levels, where this is one call. @conf is the port's entry, @a and @b
 * the source address's words (@b 0 for IPv4), @qs its queue << 16 | slot
 * << 1 | ipv6. Returns the tokens taken from each level, 0 when a level
 * refuses.
 */
__noinline int rl_judge(const struct rr_port_conf *conf, __u64 a, __u64 b,
			__u32 qs, __u32 ask)
{
	__u32 ipv6 = qs & 1, slot = (qs >> 1) & 0x7fff, queue = qs >> 16;
	__u32 family = ipv6 ? AF_INET6 : AF_INET,
	      fam = ipv6 ? RR_RL_V6 : RR_RL_V4;
	__u32 l, n = 0, iv, key, got, want = ask & 0xffff, back = ask >> 16;
	__u64 now, pnow = 0, t, tau, h[RR_RL_LEVELS] = {};

	if (!conf)
		return 1;
	got = want > RL_LEASE_MAX ? RL_LEASE_MAX : want ? want : 1;
	/* The coarse clock first (rl_coarse_now(): never ahead of the
	 * precise one, which costs 30 ns here): a request it finds in time
	 * is in time. */
	now = rl_coarse_now();
	/* Every level read, narrowest first: the first whose bucket
	 * refuses limits the request (a level with no interval has no
	 * limit of replies, only of cost). */
#pragma unroll
	for (l = 0; l < RR_RL_LEVELS; l++) {
		if (!conf->rl_len[fam][l])
			break;
		iv = conf->rl_interval_ns[fam][l];
		h[l] = rr_rl_hash(conf, family, conf->rl_len[fam][l], a, b);
		key = rr_rl_set_of(h[l]);
		n++;
		/* rate_limit_us: over its budget of the function's time, by
		 * the coarse clock (two ticks behind at most: it errs for the
		 * source, by 1 % of the burst). */
		if (conf->flags & RR_PORT_RL_COST &&
		    rl_time(key, h[l], 1) > now + RR_RL_COST_BURST_NS)
			return 0;
		if (!iv)
			continue;
		/* The tag first: a claim writes the time first. */
		t = rl_time(key, h[l], 0);
		tau = rr_rl_tau(conf, iv);
		/* None (0): as good as a full bucket. Late by the coarse
		 * clock: the precise one decides. */
		if (t > now + tau && !pnow)
			now = pnow = bpf_ktime_get_ns();
		if (t > now + tau)
			return 0;
		/* A lease only of a 64th of the burst at most, and only
		 * while the bucket stays half full after it: near its limit
		 * a source is judged a request at a time, and what leases
		 * hold on other CPUs is a sliver of its budget. */
		if (got > 1 && (t + (__u64)iv * got > now + tau / 2 ||
				(__u64)iv * got * 64 > tau))
			got = 1;
	}
	/* Every level has room: the tokens from each (that has a limit). */
	RL_TAKE(0);
	RL_TAKE(1);
	RL_TAKE(2);
	RL_TAKE(3);
	return got;
}

/*
 * The lease of the source whose address words are @a and @b, of the
 * function whose rl_seed is @seed (^ 1 for IPv6), on this CPU: where it
 * would be (NULL if this CPU's leases cannot be read). A slot of
 * RL_LEASES picked by a hash of the three.
 */
static __always_inline struct rl_lease *rl_lease_of(__u64 a, __u64 b,
						    __u64 seed)
{
	struct rl_local *c;
	__u32 zero = 0;
	__u64 h;

	c = bpf_map_lookup_elem(&rl_local, &zero);
	if (!c)
		return NULL;
	h = ((a ^ b) * 0x9e3779b97f4a7c15ULL) ^ seed;
	return &c->lease[(h >> 32 ^ h) & (RL_LEASES - 1)];
}

/*
 * A token of the source's lease @le, if it holds one in tick @tick: 0 if
 * the request takes one and goes on. Else what to ask rl_judge() for:
 * as many tokens as the source sent in this tick or the one before (1
 * for a source not seen), so that only a source that keeps sending gets
 * a lease, and one as long as its last tick's requests; and, << 16, the
 * tokens its lease from an earlier tick has left, to give back.
 */
static __always_inline __u32 rl_lease_use(struct rl_lease *le, __u64 a, __u64 b,
					  __u64 seed, __u32 tick)
{
	__u32 want;

	if (!le || le->a != a || le->b != b || le->seed != seed)
		return 1;
	if (le->tick == tick) {
		if (le->seen < 0xffff)
			le->seen++;
		if (le->left) {
			le->left--;
			return 0;
		}
		return le->seen;
	}
	want = le->tick == tick - 1 ? le->seen : 1;
	return (want > RL_LEASE_MAX ? RL_LEASE_MAX : want) | (__u32)le->left
								     << 16;
}

/*
 * The source's lease @le after rl_judge() let it by with @got tokens in
 * tick @tick: @got - 1 left for its next requests. A source that is not
 * the lease's takes it unless the lease's own source is sending in this
 * tick (a lease of more than one request), so that a spread of spoofed
 * sources does not evict a steady one's.
 */
static __always_inline void rl_lease_keep(struct rl_lease *le, __u64 a, __u64 b,
					  __u64 seed, __u32 tick, __u32 got)
{
	int own = le->a == a && le->b == b && le->seed == seed;

	if (own) {
		if (le->tick != tick)
			le->seen = 1;
		le->tick = tick;
		le->left = got - 1;
		return;
	}
	if (le->tick == tick && le->seen > 1)
		return;
	le->a = a;
	le->b = b;
	le->seed = seed;
	le->tick = tick;
	le->left = got - 1;
	le->seen = 1;
}

/*
 * Response rate limiting, before either tier, by every level of the
 * source's prefixes (conf->rl_len: /32, /24, /20 and /128, /64, /56, /48
 * by default): each prefix hashed with its length (rr_rl_hash()) to its
 * set of rl_table, where the entry tagged with its hash is its bucket. A
 * request goes on only if every level's bucket has a token, and then
 * takes one from each; first every level is read, narrowest first, and
 * the first that refuses limits the request, so a limited request costs
 * reads only, never a write to the shared table (and a flood of spoofed
 * sources inside a limited prefix claims no entries for them). A bucket
 * is judged by the coarse clock, and by the precise one only where the
 * coarse one finds it late, and whenever a prefix takes a new entry (a
 * flood of spoofed prefixes pays the precise clock, as before): a source
 * whose bucket was idle restarts it from a time up to two clock ticks
 * early, and may send those ticks' worth of requests more in its first
 * burst, once. Taking a token is an atomic add; a bucket found full is
 * restarted with a plain store, which may lose a concurrent token once:
 * bounded. A prefix with no entry conforms (a new bucket is full) and
 * takes the set's entry whose time is earliest: a free one if any (its
 * time past), else the one nearest to full, counted as evicted. It is
 * claimed by a compare-and-swap on its time, then tagged; a claim
 * another CPU won first is left to it, this request going unrecorded
 * there (bounded, as above). With RR_PORT_RL_LOG (a dry run) a request
 * over the limit is counted as one that would be limited and goes on,
 * taking no tokens (rl_limit()). Returns -1 to go on, or RL_OVER for a
 * request over a level's budget, which rl_limit() then limits (unless
 * its source is validated: lib/validate.h).
 */
#define RL_OVER (-3)

static __always_inline int rl_check(struct xdp_md *ctx,
				    const struct rr_port_conf *conf, void *l3,
				    int ipv6, __u32 queue)
{
	void *end = (void *)(long)ctx->data_end;
	__u32 slot = conf->slot, tick, ask, got;
	struct rl_lease *le;
	__u64 a, b, seed;

	if (conf->flags & RR_PORT_RL_EXEMPT && rl_exempt(l3, end, ipv6, slot))
		return -1;
	if (src_words(l3, end, ipv6, &a, &b))
		return -1;
	/* A source holding a lease: a token of it, and no shared line
	 * touched. rate_limit_us is judged every request. */
	seed = conf->rl_seed ^ !!ipv6;
	tick = (__u32)bpf_jiffies64();
	le = rl_lease_of(a, b, seed);
	ask = rl_lease_use(le, a, b, seed, tick);
	if (!ask)
		return -1;
	if (conf->flags & RR_PORT_RL_COST)
		ask = 1;
	got = rl_judge(conf, a, b, queue << 16 | slot << 1 | !!ipv6, ask);
	if (!got)
		return RL_OVER;
	if (le)
		rl_lease_keep(le, a, b, seed, tick, got);
	return -1;
}

/*
 * A request rl_check() found over its budget: in a dry run
 * (rate_limit_mode = log) counted, and on it goes; else every rl_slip-th
 * one slipped (slip_tc()), the rest dropped, counted. Returns -1 to go
 * on, or the action taken.
 */
static __always_inline int rl_limit(struct xdp_md *ctx,
				    const struct rr_port_conf *conf, void *l3,
				    struct udphdr *udp, int ipv6, __u32 queue)
{
	__u32 slot = conf->slot;
	struct rr_rl_cpu *rc;
	int act;

	/* A dry run (rate_limit_mode = log): counted, and on it goes; the
	 * buckets stay as a limited request leaves them, read only. */
	if (conf->flags & RR_PORT_RL_LOG) {
		rr_fn_count_at(queue, slot, RR_FN_RL_WOULD_LIMIT);
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

#endif /* RR_LIB_RL_H */
