/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The port entry: port_map's value, one per UDP destination port, the
 * one lookup the XDP program needs to decide, and its RR_PORT_* flags,
 * which say what the function behind the port has on. Each feature's
 * fields are its settings as user space computed them (rr_slot_sync()).
 */
#ifndef RR_SHARED_PORT_H
#define RR_SHARED_PORT_H

#include <linux/types.h>

/* The in-kernel tier's limits (RR_XDP_MAX_*, RR_XDP_CLASSES) are the
 * function API's. */
#include <reqrouter/rr_xdp_req.h>

#include "shared/common.h"
#include "shared/spread.h"

/* The rate limiter's levels of prefixes per family (struct rr_port_conf's
 * rl_len, rl_interval_ns): IPv4's (/32, /24, /20 by default) and IPv6's
 * (/128, /64, /56, /48). */
#define RR_RL_LEVELS 4
#define RR_RL_V4 0
#define RR_RL_V6 1

/* served_ports (lib/port.h): a bit per port that has a function. */
#define RR_SERVED_WORDS (65536 / 64)
#define RR_SERVED_WORD(port) ((port) / 64)
#define RR_SERVED_BIT(port) (1ULL << ((port) % 64))

/*
 * One entry per UDP destination port (host byte order), the only lookup the
 * program needs to decide; nsocks == 0 means no function on that port.
 */
struct rr_port_conf {
	__u32 slot;   /* function slot, 0..RR_MAX_SLOTS-1 */
	__u32 nsocks; /* sockets per queue for this port (= workers) */
	/* Its workers in each queue are threads first_thread to
	 * first_thread + nsocks - 1: its cell group's (docs/DESIGN.md,
	 * "Cell groups"); 0 for the shared one. */
	__u32 first_thread;
	/* Its cell group: with RR_PORT_CACHE, its replies are in that
	 * group's partition of its queue's reply cache (lib/cache.h). */
	__u32 cell_group;
	__u32 flags; /* RR_PORT_* */
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
	/* With RR_PORT_RL (docs/DESIGN.md, "Rate limiting in XDP"): a
	 * source's prefixes of several lengths each have a bucket, its
	 * levels (RR_RL_V4, RR_RL_V6; rr_rl_levels()): per family, per
	 * level, narrowest first, the prefix's length and the nanoseconds
	 * between two of its replies (1e9 / its rate; 0: no more levels);
	 * the burst as time, the same for every level (burst x the
	 * configured prefix's interval: a level's burst is its rate's
	 * worth of it); every how many limited requests one gets the slip
	 * reply (0: none); and the seed of its prefixes' hashes
	 * (rr_rl_seed()). */
	__u64 rl_burst_ns;
	__u32 rl_interval_ns[2][RR_RL_LEVELS];
	__u8 rl_len[2][RR_RL_LEVELS];
	__u32 rl_slip;
	__u64 rl_seed;
	/* With RR_PORT_VALIDATE (docs/DESIGN.md, "Validated sources"): how
	 * long a source stays validated (validated_for, seconds), and the
	 * nanoseconds between two replies to one validated source (1e9 /
	 * rate_limit_validated), whose budget replaces the levels'. */
	__u32 validated_for_s;
	__u32 validated_interval_ns;
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
/* Replies rate-limited per source prefix (rl_table), before either
 * tier. */
#define RR_PORT_RL (1U << 6)
/* Its sources in rl_exempt_v4/v6 are never limited. */
#define RR_PORT_RL_EXEMPT (1U << 7)
/* A slipped request gets a DNS truncated reply (TC) built here and sent
 * with XDP_TX; without it (or RR_PORT_SLIP_WORKERS) it is dropped. */
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
/* Where XDP_TX would be lost (a veth whose peer runs no XDP program),
 * RR_PORT_SLIP_TC's slip goes to the workers instead, marked as one
 * (RR_RX_META_SLIP), and they send the same reply. */
#define RR_PORT_SLIP_WORKERS (1U << 14)
/* deadline_us (lib/deadline.h): a request is dropped here, before its
 * copy into the UMEM, while the worker it would go to is further behind
 * than the function's deadline (deadline_ns[slot]). */
#define RR_PORT_DEADLINE (1U << 15)
/* DNS Cookies (lib/cookie.h): a query with a server cookie valid for its
 * source (cookie_keys[slot]) is a validated source's (RR_PORT_VALIDATE),
 * and one with any COOKIE option skips the in-kernel tier (its reply is
 * made for the client). */
#define RR_PORT_COOKIE (1U << 16)
/* rate_limit_mode = log: a request over the limit is counted
 * (RR_FN_RL_WOULD_LIMIT) and goes on as one within it. */
#define RR_PORT_RL_LOG (1U << 17)
/* rate_limit_us: a request is limited too while one of its source's
 * prefixes has cost the function more time than its budget
 * (rl_cost_table, charged by the workers). */
#define RR_PORT_RL_COST (1U << 18)
/* A canary runs beside the function (shared/canary.h): a share of the
 * sources goes on with canary_map's entry for the port. */
#define RR_PORT_CANARY (1U << 19)
/* Validated sources (lib/validate.h): a source in validate_table, or
 * one whose server cookie is valid (then put there), is held to its own
 * budget (validated_interval_ns) instead of the prefix levels. */
#define RR_PORT_VALIDATE (1U << 20)

#endif /* RR_SHARED_PORT_H */
