/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the XDP program and user space agree on: map sizes, the layout of
 * map values and the program's counters. Plain fixed-width types only, so
 * both sides compile it unchanged. None of it is the function API: a
 * function's XDP program sees the counters only through the keys the
 * steering program puts in its request (include/reqrouter/rr_xdp.h).
 */
#ifndef RR_SHARED_H
#define RR_SHARED_H

#include <linux/types.h>

/* The in-kernel tier's limits (RR_XDP_MAX_*) are the function API's. */
#include <reqrouter/rr_xdp_req.h>
/* The gather primitive's wire format and reductions. */
#include <reqrouter/rr_gather.h>

#define RR_XDP_PROG_NAME "reqrouter_xdp" /* how a stale program is known */

#define RR_MAX_QUEUES 64	/* RX queues served */
#define RR_MAX_SLOTS 32		/* functions served at once */
#define RR_MAX_THREADS 16	/* workers per queue */
#define RR_MAX_SPREAD 16	/* CPUs a function's xdp_spread lists */
#define RR_MAX_SPREAD_CPUS 1024 /* the highest CPU number + 1 it may list */
#define RR_XSKMAP_SIZE (RR_MAX_QUEUES * RR_MAX_SLOTS * RR_MAX_THREADS)

/*
 * Key of the socket of worker @thread of @queue for function slot @slot:
 * (queue, thread, slot), the order of every per-socket table.
 */
#define RR_XSK_KEY(queue, thread, slot) \
	(((queue)*RR_MAX_THREADS + (thread)) * RR_MAX_SLOTS + (slot))

/*
 * One entry per UDP destination port (host byte order), the only lookup the
 * program needs to decide; nsocks == 0 means no function on that port.
 */
struct rr_port_conf {
	__u32 slot;   /* function slot, 0..RR_MAX_SLOTS-1 */
	__u32 nsocks; /* sockets per queue for this port (= workers) */
	__u32 flags;  /* RR_PORT_* */
	/* A reply's IP packet may be at most this many times the request's;
	 * 0: no limit. The XDP tier and the cache apply it as user space does. */
	__u32 max_amplification;
	/* Cached replies written under another generation are stale: bumped
	 * whenever the function's settings change. */
	__u32 cache_gen;
	__u32 cache_max_payload; /* cache requests up to this many bytes */
	/* Leading payload bytes the cache ignores in a request and copies
	 * into the reply (rr_function.id_bytes), 0-8. */
	__u32 cache_id_bytes;
	__u32 xdp_max_payload; /* longer requests skip the XDP program */
	/* Requests from lower source ports (the well-known services, which
	 * may answer a reply and loop) are dropped; 0: only the classic loop
	 * ports (0, 7, 13, 19, 37) and the ports served here are. */
	__u32 min_src_port;
	/* With RR_PORT_HH: 2^16 / -ln(1 - p) for sampling probability p,
	 * the factor that turns a pre-drawn Exp(1) variable into the
	 * number of requests to skip (rr_hh_skip()); 0 samples them all. */
	__u32 hh_scale;
	/* With RR_PORT_RL (docs/DESIGN.md, "Rate limiting"): replies per
	 * second per source prefix as the nanoseconds between two
	 * (1e9 / rate_limit), the burst a quiet prefix may send at once,
	 * every how many limited requests one gets the slip reply (0:
	 * none), and the prefix masks in memory order (the IPv6 one as
	 * two words: the first and second half of the address). */
	__u32 rl_interval_ns;
	__u32 rl_burst;
	__u32 rl_slip;
	__u32 rl_mask_v4;
	__u64 rl_mask_v6[2];
	/* steering = groups: by class (RR_XDP_PUNT_CLASS; a request no
	 * program classified is class 0), the threads of each queue its
	 * requests may go to, one bit each (RR_MAX_THREADS of them), the
	 * least loaded of them chosen; 0: every thread. */
	__u16 group_mask[RR_XDP_CLASSES];
	/* With RR_PORT_SPREAD (xdp_spread): the CPUs its requests are
	 * handed to in turn, through spread_cpus, where its XDP program
	 * runs them. */
	__u16 spread_n;
	__u16 spread_cpu[RR_MAX_SPREAD];
};

/* Only sources in the allow-lists (acl_v4/acl_v6) reach this function. */
#define RR_PORT_ALLOWLIST (1U << 0)
/* The function's XDP program (fn_progs[slot]) sees requests first. */
#define RR_PORT_XDP (1U << 1)
/* A pure function served in user space: repeated requests are answered
 * from the reply cache. */
#define RR_PORT_CACHE (1U << 2)
/* Quarantined (quarantine_action = drop): its requests are dropped here. */
#define RR_PORT_QUARANTINED (1U << 3)
/* Answered only for the host's own destinations (local_v4/local_v6);
 * without it, for any destination the frame carries (answer_for = any). */
#define RR_PORT_LOCAL_DST (1U << 4)
/* Sampled into the function's heavy-hitter sketch (hh_cpu, hh_sketch). */
#define RR_PORT_HH (1U << 5)
/* Replies rate-limited per source prefix (rl_buckets), before either
 * tier. */
#define RR_PORT_RL (1U << 6)
/* Its sources in rl_exempt_v4/v6 are never limited. */
#define RR_PORT_RL_EXEMPT (1U << 7)
/* A slipped request gets a DNS truncated reply (TC) built here and sent
 * with XDP_TX; without it, or when XDP_TX would be lost, it is dropped. */
#define RR_PORT_SLIP_TC (1U << 8)
/* steering = least_loaded: the worker of the receiving queue with the
 * least backlog gets the request (struct rr_queue_load), not the next in
 * turn. */
#define RR_PORT_LEAST_LOADED (1U << 9)
/* The workers keep their struct rr_worker_load: the program may steer by
 * it, and drops what no worker has room for. Without it (user space could
 * not map worker_load) the backlog means nothing and is not read. */
#define RR_PORT_LOAD (1U << 10)
/* xdp_spread: with RR_PORT_XDP, its requests run on the CPUs of
 * spread_cpu[] (a cpumap), not on the CPU that received them; set only
 * where the replies can leave from there (rr_slot_in_kernel). */
#define RR_PORT_SPREAD (1U << 11)
/* Not a function's port: a worker's gather port, where the replies of
 * the gathers it started come (struct rr_gather_entry). Nothing else
 * sent there is for anyone: dropped, counted. */
#define RR_PORT_GATHER (1U << 12)
/* gather_target: a message of another's gather (it starts with struct
 * rr_sg_hdr) skips the in-kernel tier, which would take the header for
 * the request. */
#define RR_PORT_SG_TARGET (1U << 13)

/*
 * A worker's load as the steering program sees it (docs/DESIGN.md,
 * "Steering"). The program counts the requests it hands the worker
 * (sent); the worker counts those it is done with (done), and every
 * round sets done to sent less what its RX rings still hold, so that
 * frames the kernel dropped after the redirect do not count for ever.
 * sent - done is the worker's backlog, the batch in its hands
 * included (done moves a batch at a time). busy_ns: CLOCK_MONOTONIC when its current batch began, 0
 * between batches. Two cache lines: one the program writes, one the
 * worker does.
 */
struct rr_worker_load {
	__u64 sent;
	__u64 pad0[7];
	__u64 done;
	__u64 busy_ns;
	__u64 pad1[6];
};

/*
 * A worker's backlog from its counters as read: the requests handed to
 * it that it is not done with. They are written on different CPUs, so a
 * look may catch done ahead of sent for a moment: nothing, then. Capped
 * at 2^30, far past any ring, so that a score (backlog << 24) cannot wrap
 * whatever a cell wrote. The XDP program and the supervisor (steer.c)
 * reckon alike.
 */
static __inline __u64 rr_backlog(__u64 sent, __u64 done)
{
	__s64 b = (__s64)(sent - done);

	if (b <= 0)
		return 0;
	return b < (1LL << 30) ? (__u64)b : 1ULL << 30;
}

/* worker_load's value: a queue's workers, by thread, one page a queue, so
 * that a cell maps only its own queue's (src/daemon/cell.c). */
struct rr_queue_load {
	struct rr_worker_load w[RR_MAX_THREADS];
	__u8 pad[4096 - RR_MAX_THREADS * sizeof(struct rr_worker_load)];
};

/*
 * What the program puts in front of a frame it redirects (XDP metadata,
 * which the kernel copies into the UMEM with the frame): when it arrived,
 * for the worker to measure the request's queuing delay. magic tells a
 * stamp from whatever the headroom held before; the worker clears it.
 */
struct rr_rx_meta {
	__u64 arrival_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 magic;
	__u32 pad;
};

#define RR_RX_META_MAGIC 0x72727374U

/* What a frame handed to an xdp_spread CPU carries in front of it: the
 * queue it arrived on, which a cpumap does not keep, for the counters,
 * and when it was handed over, for the CPU's wait (struct
 * rr_spread_load). */
struct rr_spread_meta {
	__u32 magic;
	__u32 queue;
	__u64 sent_ns;
};

/*
 * How long the last frame an xdp_spread CPU took had waited in its
 * cpumap queue, and when it took it: the receiving side estimates the
 * wait there now as what is left of it (the queue then drains in about
 * that long), and of two CPUs hands the frame to the one with less. A CPU
 * that shares its time with something else (the client, on the bed)
 * takes less work, not its turn. Written only by the cpumap program on
 * that CPU; a cache line each.
 */
struct rr_spread_load {
	__u64 wait_ns;
	__u64 at_ns;
	__u64 pad[6];
};

#define RR_SPREAD_META_MAGIC 0x72727370U

/*
 * Scatter and gather (docs/DESIGN.md, "Gathers"). One entry of the
 * gathers map per gather a worker may have outstanding: worker index w
 * owns entries w * RR_SG_PER_WORKER and on, so that no two writers share
 * one, and a cell maps only its own (the map is mmapped). The entry
 * number and its generation travel in every message (struct rr_sg_hdr);
 * a reply is merged by the XDP program on whatever CPU it arrives.
 *
 * state is the generation (high 32 bits) and the tickets taken (low): a
 * reply takes a ticket with one compare-and-swap on both, so a reply to
 * an older use of the entry never counts in the new one, and no more
 * than need replies are merged. The owner closes a gather by adding
 * RR_SG_CLOSED to the tickets, which turns every later reply away, and
 * then waits until merged equals the tickets that had been taken: from
 * then on nothing changes the entry under it.
 */
#define RR_SG_PER_WORKER 64
#define RR_SG_WORDS (RR_SG_MAX_TARGETS / 64)
#define RR_SG_MAX_GROUPS 16
#define RR_SG_CLOSED (1U << 30)
#define RR_SG_TARGET_TEMPLATE 0xffff /* rr_sg_hdr.target of a template */

struct rr_gather_entry {
	__u64 state;
	__u32 merged; /* replies merged (or handed over, CONCAT) */
	__u32 need;   /* replies that complete it */
	__u32 reduce; /* enum rr_reduce */
	__u32 group;  /* whose targets (sg_targets) */
	__u32 pad0;
	/* The function's slot: its reply goes to the socket of the owner
	 * (the worker whose entries these are, known by the entry's index,
	 * never by what a cell wrote) for that slot. */
	__u32 slot;
	__u64 value;			   /* SUM, MIN, MAX, COUNT, OR */
	__u64 topk[RR_SG_TOPK_RANGE / 64]; /* TOPK: the values seen */
	/* Set by the scatter program once it sent the copies. */
	__u32 scattered;
	/* In a worker's first entry only: the worker sleeps in poll(), and
	 * only then does the reply that completes a reduction go on to
	 * wake it; awake, it sees the count at its next round. */
	__u32 asleep;
	__u32 pad[12];		 /* the bitmaps start a cache line */
	__u64 sent[RR_SG_WORDS]; /* the targets it was sent to */
	__u64 seen[RR_SG_WORDS]; /* a reply came: a second is a duplicate */
	__u64 merged_bits[RR_SG_WORDS]; /* ... and is in the result */
	__u64 unsent[RR_SG_WORDS];	/* no copy made: the user sends these */
};

/* A group's target, in sg_targets at group * RR_SG_MAX_TARGETS + index. */
struct rr_sg_target {
	__u32 family; /* 0: none, AF_INET (addr[0..3]) or AF_INET6 */
	__be16 port;
	__u16 pad;
	__u8 addr[16];
};

/*
 * The way to a group's target, in sg_paths at the same index as its
 * struct rr_sg_target: learned by the XDP program from the target's last
 * sound reply (its checks all passed, no VLAN tag), read by the workers
 * that build the copies in the UMEM (gather_scatter = umem). Zero until
 * then, and again whenever the group's targets are written.
 * Each field is rewritten only when it changed: a worker that reads one
 * mid-change sends a copy astray once, which counts as a missed target.
 */
#define RR_SG_PATH_VALID (1ULL << 63)
struct rr_sg_path {
	__u64 hw;	   /* the target's (or its router's) MAC | VALID */
	__u64 own_hw;	   /* the MAC it answered to */
	__u8 own_addr[16]; /* the address it answered to (IPv4: [0..3]) */
	__u32 ifindex;	   /* where the reply came in */
	__u32 pad;
};

/*
 * Why a request got no reply, the same in both tiers: X(enum suffix, label).
 * User space counts them per socket, the XDP tier per (queue, function).
 */
#define RR_DROPS(X)                                                            \
	X(MALFORMED, "malformed")                                              \
	X(NOT_UNICAST, "not_unicast")                                          \
	X(FUNCTION_ERROR, "function_error")                                    \
	X(REPLY_TOO_BIG, "reply_too_big")                                      \
	X(AMPLIFICATION, "amplification")                                      \
	X(NO_REPLY, "no_reply")		/* the function chose not to answer */ \
	X(CRASH, "crash")		/* its call crashed the cell */        \
	X(TIMEOUT, "timeout")		/* its call overran max_run_us */      \
	X(QUARANTINED, "quarantined")	/* queued when quarantined */          \
	X(BAD_CHECKSUM, "bad_checksum") /* the kernel would drop it too */     \
	X(SPREAD_PUNT, "spread_punt")	/* punted on an xdp_spread CPU */      \
	X(GATHER_LIMIT, "gather_limit") /* its gathers at gather_limit */      \
	X(GATHER_LOST, "gather_lost")	/* its gather's function went away */

#define RR_DROP_ENUM(name, label) RR_DROP_##name,
enum rr_drop { RR_DROP_NONE, RR_DROPS(RR_DROP_ENUM) RR_DROP_MAX };
#undef RR_DROP_ENUM

/*
 * What the in-kernel tier did with a function's requests, per (queue,
 * function slot), per CPU: the XDP program's answers and punts, the reply
 * cache's hits and misses, and one drop counter per enum rr_drop.
 */
#define RR_FN_STATS(X)                                                \
	X(XDP_RX, "xdp_rx")	    /* given to the XDP program */    \
	X(XDP_TX, "xdp_tx")	    /* answered by it (XDP_TX) */     \
	X(XDP_PUNT, "xdp_punt")	    /* handed on to user space */     \
	X(CACHE_HIT, "cache_hit")   /* answered from the cache */     \
	X(CACHE_MISS, "cache_miss") /* looked up, not answerable */   \
	X(RL_LIMITED, "rl_limited") /* over rate_limit, dropped */    \
	X(RL_SLIPPED, "rl_slipped") /* over it, got the slip reply */ \
	X(XDP_SPREAD, "xdp_spread") /* handed to an xdp_spread CPU */ \
	X(XDP_DROP, "xdp_drop")	    /* first of RR_DROP_MAX drop counters */

#define RR_FN_STAT_ENUM(name, label) RR_FN_##name,
enum rr_fn_stat { RR_FN_STATS(RR_FN_STAT_ENUM) };
#undef RR_FN_STAT_ENUM
#define RR_FN_STAT_MAX (RR_FN_XDP_DROP + RR_DROP_MAX)
#define RR_FN_STATS_KEY(queue, slot, stat) \
	(((queue)*RR_MAX_SLOTS + (slot)) * RR_FN_STAT_MAX + (stat))
#define RR_FN_STATS_SIZE (RR_MAX_QUEUES * RR_MAX_SLOTS * RR_FN_STAT_MAX)

/*
 * The reply cache: a direct-mapped table in an mmapable array that user
 * space fills (AF_XDP replies bypass TC egress, so no BPF program sees
 * them) and the XDP program reads. An entry answers a request only if
 * port, generation, length and every request byte match, and it has not
 * expired. @seq is a sequence lock: odd while a worker rewrites the entry,
 * so a reader that sees it change in between answers nothing.
 */
#define RR_CACHE_MAX_PAYLOAD 256 /* request and reply bytes per entry */
#define RR_CACHE_WORDS (RR_CACHE_MAX_PAYLOAD / 8)
#define RR_CACHE_ENTRIES 8192 /* a power of two */

struct rr_cache_entry {
	__u64 seq;
	__u64 hash;
	__u64 expires_ns; /* CLOCK_MONOTONIC; 0: never (XDP reads the coarse one) */
	__u32 gen;
	__u16 port;
	__u16 req_len;
	__u16 reply_len;
	__u16 pad[3];
	__u64 req[RR_CACHE_WORDS]; /* zero beyond req_len */
	__u64 reply[RR_CACHE_WORDS];
};

/*
 * The entry's hash over the zero-padded request words; the same code runs
 * in the XDP program and in user space. @nwords covers the request.
 */
static __inline __u64 rr_cache_hash(const __u64 *w, __u32 nwords, __u32 port,
				    __u32 len)
{
	__u64 h = 0x9e3779b97f4a7c15ULL ^ ((__u64)port << 32 | len);
	__u32 i;

	for (i = 0; i < RR_CACHE_WORDS; i++) {
		if (i >= nwords)
			break;
		h ^= w[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	return h;
}

/*
 * Heavy hitters (docs/DESIGN.md, "Who is calling"): per function, a count
 * sketch of sampled requests keyed by source address and by source prefix,
 * and a ring of the latest sampled sources for user space to enumerate
 * them by (src/daemon/topk.c). Requests to skip between two samples are
 * drawn from a pool of Exp(1) variables that user space keeps refilled.
 */
#define RR_HH_ROWS 4	    /* rows, each its own 16 bits of the hash */
#define RR_HH_WIDTH_BITS 12 /* counters per row: 2^12 */
#define RR_HH_WIDTH (1U << RR_HH_WIDTH_BITS)
#define RR_HH_CANDS 256	     /* the ring of sampled sources, 2^n */
#define RR_HH_POOL 16384     /* the pool of Exp(1) variables, 2^n */
#define RR_HH_POOL_ONE 65536 /* a pool value of 1.0 (16.16 fixed point) */
#define RR_HH_V4_PREFIX 24   /* the prefix kind's lengths */
#define RR_HH_V6_PREFIX 64

/* What a sketch is keyed by. */
enum rr_hh_kind { RR_HH_SOURCE, RR_HH_PREFIX, RR_HH_KINDS };

/* A sampled request's source (AF_INET: addr[0..3]). */
struct rr_hh_cand {
	__u32 family;
	__u8 addr[16];
};

/*
 * One function's sketches, one entry of hh_sketch per slot, shared by
 * every CPU (atomic adds: only sampled requests write here) and mapped
 * into user space. count[][r][] holds sampled requests, +1 or -1 by the
 * key's sign in row r; @samples counts sampled requests and is the
 * ring's write position.
 */
struct rr_hh_sketch {
	__u64 samples;
	struct rr_hh_cand cand[RR_HH_CANDS];
	__s32 count[RR_HH_KINDS][RR_HH_ROWS][RR_HH_WIDTH];
};

/* Each CPU's sampling state per slot: the one lookup every request of a
 * function with RR_PORT_HH costs. */
struct rr_hh_cpu {
	__u32 skip; /* requests still to skip before the next sample */
	__u32 pos;  /* the next variable of the pool */
};

/* The pool's variables: -ln(U), U uniform in (0, 1], 16.16 fixed point. */
struct rr_hh_pool {
	__u32 exp[RR_HH_POOL];
};

/* Requests to skip after a sample: floor(E / -ln(1 - p)), geometric
 * with parameter p (P(skip >= k) = (1 - p)^k). */
static __inline __u32 rr_hh_skip(__u32 exp, __u32 scale)
{
	return (__u32)(((__u64)exp * scale) >> 32);
}

/*
 * The sketch's hash: fasthash64's round and finaliser (Zilong Tan's
 * construction: no rotations, which BPF lacks), seeded at start. A
 * source is two words: its prefix (the /24 or /64, the host bits zero)
 * and the rest; the prefix kind's hash is taken after the first, the
 * source's after both, so both cost three multiplications more than one.
 */
#define RR_HH_M 0x880355f21e6d1965ULL

static __inline __u64 rr_hh_mix(__u64 h)
{
	h ^= h >> 23;
	h *= 0x2127599bf4325c37ULL;
	h ^= h >> 47;
	return h;
}

static __inline __u64 rr_hh_round(__u64 h, __u64 v)
{
	h ^= rr_hh_mix(v);
	h *= RR_HH_M;
	return h;
}

/* The two words of a source as the XDP program reads them: @a is its
 * IPv4 address as it lies in memory, or its IPv6 address's first and
 * second halves in @a and @b. */
static __inline void rr_hh_words(__u32 family, __u64 a, __u64 b, __u64 *w0,
				 __u64 *w1)
{
	if (family == 2 /* AF_INET */) {
		/* Its first three bytes in memory, whatever the byte order. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		*w0 = a & 0xffffffULL;
#else
		*w0 = a & 0xffffff00ULL;
#endif
		*w1 = a & 0xffffffffULL;
	} else {
		*w0 = a;
		*w1 = b;
	}
}

/* Both kinds' hashes of a source's words. */
static __inline void rr_hh_hash(__u64 seed, __u32 family, __u64 w0, __u64 w1,
				__u64 h[RR_HH_KINDS])
{
	__u64 x = seed ^ ((__u64)family * RR_HH_M);

	x = rr_hh_round(x, w0);
	h[RR_HH_PREFIX] = rr_hh_mix(x);
	x = rr_hh_round(x, w1);
	h[RR_HH_SOURCE] = rr_hh_mix(x);
}

/* Row @r's counter and sign of hash @h: bits 16r..16r+11 and 16r+15. */
static __inline __u32 rr_hh_col(__u64 h, __u32 r)
{
	return (__u32)(h >> (16 * r)) & (RR_HH_WIDTH - 1);
}

static __inline int rr_hh_sign(__u64 h, __u32 r)
{
	return (h >> (16 * r + 15)) & 1 ? -1 : 1;
}

/*
 * Response rate limiting (docs/DESIGN.md, "Rate limiting in XDP"): per
 * function, RR_RL_ROWS rows of RR_RL_WIDTH buckets, a source prefix's
 * bucket in row r picked by the seeded prefix hash's 16r..16r+11 bits.
 * A bucket is a GCRA "theoretical arrival time" (CLOCK_MONOTONIC ns): a
 * request conforms while it is at most (burst - 1) intervals ahead of
 * now. A request is limited only when every row's bucket refuses it.
 */
#define RR_RL_ROWS 3
#define RR_RL_WIDTH_BITS 12
#define RR_RL_WIDTH (1U << RR_RL_WIDTH_BITS)

struct rr_rl_table {
	__u64 tat[RR_RL_ROWS][RR_RL_WIDTH];
};

/* Each CPU's count of limited requests per slot: every rl_slip-th slips. */
struct rr_rl_cpu {
	__u32 limited;
	__u32 pad;
};

/* The limiter's hash of a source prefix: the sketch's hash over the
 * masked address words, under a seed of its own. */
#define RR_RL_SEED_XOR 0x5851f42d4c957f2dULL

/*
 * A source's hash in the limiter of the function @conf describes, whose
 * bits pick its bucket in each row (rr_hh_col()): @a its IPv4 address as
 * it lies in memory, or its IPv6 address's halves in @a and @b, masked to
 * the function's prefix and hashed under @seed. rl_check() and
 * reqrouterctl top reckon with this one.
 */
static __inline __u64 rr_rl_hash(const struct rr_port_conf *conf, __u64 seed,
				 __u32 family, __u64 a, __u64 b)
{
	__u64 h[RR_HH_KINDS];

	if (family == 2 /* AF_INET */)
		rr_hh_hash(seed ^ RR_RL_SEED_XOR, family, a & conf->rl_mask_v4,
			   0, h);
	else
		rr_hh_hash(seed ^ RR_RL_SEED_XOR, family,
			   a & conf->rl_mask_v6[0], b & conf->rl_mask_v6[1], h);
	return h[RR_HH_SOURCE];
}

/* How far ahead of now a bucket may be and still let a request by: the
 * burst's intervals after the first. */
static __inline __u64 rr_rl_tau(const struct rr_port_conf *conf)
{
	return (__u64)(conf->rl_burst ? conf->rl_burst - 1 : 0) *
	       conf->rl_interval_ns;
}

#define RR_MAX_ALLOW 1024 /* allow-list entries per address family */

/*
 * Allow-list keys: the function slot then the source address, so one LPM
 * trie serves every function. prefixlen counts the slot's 32 bits too.
 */
struct rr_allow_v4 {
	__u32 prefixlen;
	__u32 slot;
	__u8 addr[4];
};

struct rr_allow_v6 {
	__u32 prefixlen;
	__u32 slot;
	__u8 addr[16];
};

/*
 * The host's own destinations, for the destination check: the kernel's
 * local routes (every address on any interface, lo's VIPs, "local"
 * prefixes such as AnyIP ranges), kept current from netlink by user space
 * (src/daemon/netlink.c). A request for anything else goes to the kernel.
 * prefixlen counts address bits only.
 */
#define RR_MAX_LOCAL 4096 /* local routes per address family */

struct rr_local_v4 {
	__u32 prefixlen;
	__u8 addr[4];
};

struct rr_local_v6 {
	__u32 prefixlen;
	__u8 addr[16];
};

/*
 * In front of the tries, a direct-mapped table of the host's own
 * addresses (its local /32 and /128 routes), one per slot: the usual
 * request, for an address of ours, is then an array lookup the verifier
 * inlines, where a trie lookup costs ~25 ns. A miss, or an address whose
 * slot another one took, asks the tries, which hold the truth. User space
 * adds to the tries before the table, and clears a slot before the trie
 * loses its address, so the table never says more than the tries.
 */
#define RR_LOCAL_TAB_BITS 8
#define RR_LOCAL_TAB (1U << RR_LOCAL_TAB_BITS)

struct rr_local_ent {
	__u32 family; /* 0: empty, AF_INET (addr[0..3]) or AF_INET6 */
	__u8 addr[16];
};

/* The slot of an address folded to 32 bits (an IPv4 address as it lies in
 * memory; an IPv6 address's four words XORed). */
static __inline __u32 rr_local_slot(__u32 folded)
{
	return (folded * 0x9e3779b1U) >> (32 - RR_LOCAL_TAB_BITS);
}

/*
 * The program's verdicts and reasons, counted per RX queue. The X-macro
 * gives the enum here and the metric labels in user space from one list:
 * X(enum suffix, verdict label, reason label).
 */
#define RR_XDP_STATS(X)                                       \
	X(REDIRECT, "redirect", "function")                   \
	X(PASS_NO_SOCKET, "pass", "no_socket")                \
	X(PASS_NO_FUNCTION, "pass", "no_function")            \
	X(PASS_NOT_IP, "pass", "not_ip")                      \
	X(PASS_NOT_UDP, "pass", "not_udp")                    \
	X(PASS_FRAGMENT, "pass", "fragment")                  \
	X(PASS_IPV6_EXT, "pass", "ipv6_ext_header")           \
	X(PASS_MALFORMED, "pass", "malformed")                \
	X(PASS_QUEUE_RANGE, "pass", "queue_out_of_range")     \
	X(PASS_NOT_UNICAST, "pass", "not_unicast")            \
	X(PASS_OTHER_HOST, "pass", "other_host")              \
	X(PASS_NOT_LOCAL, "pass", "not_local")                \
	X(PASS_IP_OPTIONS, "pass", "ip_options")              \
	X(DROP_NOT_ALLOWED, "drop", "source_not_allowed")     \
	X(DROP_LOOP_PORT, "drop", "loop_source_port")         \
	X(DROP_LOW_PORT, "drop", "low_source_port")           \
	X(DROP_QUARANTINED, "drop", "quarantined")            \
	X(TX_FUNCTION, "tx", "function")                      \
	X(TX_CACHE, "tx", "cache")                            \
	X(REDIRECT_PUNT, "redirect", "punted")                \
	X(DROP_FUNCTION, "drop", "function")                  \
	X(DROP_RATE_LIMITED, "drop", "rate_limited")          \
	X(TX_SLIP, "tx", "slip")                              \
	X(DROP_OVERLOAD, "drop", "overload")                  \
	X(REDIRECT_SPREAD, "redirect", "spread")              \
	X(GATHER_MERGED, "gather", "merged")                  \
	X(REDIRECT_GATHER, "redirect", "gather")              \
	X(GATHER_LATE, "drop", "gather_late")                 \
	X(GATHER_DUPLICATE, "drop", "gather_duplicate")       \
	X(GATHER_WRONG_SOURCE, "drop", "gather_wrong_source") \
	X(GATHER_MALFORMED, "drop", "gather_malformed")       \
	X(GATHER_NO_VALUE, "drop", "gather_no_value")         \
	X(GATHER_OTHER_QUEUE, "pass", "gather_other_queue")

#define RR_XDP_STAT_ENUM(name, verdict, reason) RR_XDP_##name,
enum rr_xdp_stat { RR_XDP_STATS(RR_XDP_STAT_ENUM) RR_XDP_STAT_MAX };
#undef RR_XDP_STAT_ENUM

/* Counters are per CPU, RR_XDP_STAT_MAX per queue, one extra row for
 * queues beyond RR_MAX_QUEUES. */
#define RR_STATS_SIZE ((RR_MAX_QUEUES + 1) * RR_XDP_STAT_MAX)

#endif /* RR_SHARED_H */
