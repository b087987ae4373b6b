/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The XDP program's counters, and the reasons a request got no reply
 * that both tiers count: each X-macro list gives an enum here and the
 * metric labels in user space, and the keys say where a counter lives in
 * xdp_stats and fn_stats.
 */
#ifndef RR_SHARED_STATS_H
#define RR_SHARED_STATS_H

#include "shared/common.h"

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
	X(GATHER_LOST, "gather_lost")	/* its gather's function went away */  \
	X(GATHER_RATE, "gather_rate")	/* copies past the gather_rate */      \
	X(GATHER_SOURCE_RATE, "gather_source_rate") /* past its source's */    \
	X(EXPIRED, "expired") /* older than deadline_us: never called */       \
	X(MOVED, "moved") /* queued as its function moved to its own cells */

#define RR_DROP_ENUM(name, label) RR_DROP_##name,
enum rr_drop { RR_DROP_NONE, RR_DROPS(RR_DROP_ENUM) RR_DROP_MAX };
#undef RR_DROP_ENUM

/*
 * What the in-kernel tier did with a function's requests, per (queue,
 * function slot), per CPU: the XDP program's answers and punts, the reply
 * cache's hits and misses, and one drop counter per enum rr_drop.
 */
#define RR_FN_STATS(X)                                                        \
	X(XDP_RX, "xdp_rx")		    /* given to the XDP program */    \
	X(XDP_TX, "xdp_tx")		    /* answered by it (XDP_TX) */     \
	X(XDP_PUNT, "xdp_punt")		    /* handed on to user space */     \
	X(CACHE_HIT, "cache_hit")	    /* answered from the cache */     \
	X(CACHE_MISS, "cache_miss")	    /* looked up, not answerable */   \
	X(RL_LIMITED, "rl_limited")	    /* over rate_limit, dropped */    \
	X(RL_SLIPPED, "rl_slipped")	    /* over it, got the slip reply */ \
	X(XDP_SPREAD, "xdp_spread")	    /* handed to an xdp_spread CPU */ \
	X(RL_EVICTED, "rl_evicted")	    /* a live prefix forgotten */     \
	X(COOKIE_VALID, "cookie_valid")	    /* valid cookie: validated */     \
	X(COOKIE_BYPASS, "cookie_bypass")   /* a cookie: past the cache */    \
	X(RL_WOULD_LIMIT, "rl_would_limit") /* over it, let by (log) */       \
	X(VALIDATED, "validated")	    /* validated, in its budget */    \
	X(VALIDATED_LIMITED, "validated_limited") /* over it, dropped */      \
	X(XDP_DROP, "xdp_drop") /* first of RR_DROP_MAX drop counters */

#define RR_FN_STAT_ENUM(name, label) RR_FN_##name,
enum rr_fn_stat { RR_FN_STATS(RR_FN_STAT_ENUM) };
#undef RR_FN_STAT_ENUM
#define RR_FN_STAT_MAX (RR_FN_XDP_DROP + RR_DROP_MAX)
#define RR_FN_STATS_KEY(queue, slot, stat) \
	(((queue)*RR_MAX_SLOTS + (slot)) * RR_FN_STAT_MAX + (stat))
#define RR_FN_STATS_SIZE (RR_MAX_QUEUES * RR_MAX_SLOTS * RR_FN_STAT_MAX)

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
	X(GATHER_OTHER_QUEUE, "pass", "gather_other_queue")   \
	X(DROP_FRAME_TOO_BIG, "drop", "frame_too_big")        \
	X(PASS_VLAN, "pass", "vlan_not_ours")                 \
	X(REDIRECT_SLIP, "redirect", "slip")                  \
	X(DROP_EXPIRED, "drop", "expired")

#define RR_XDP_STAT_ENUM(name, verdict, reason) RR_XDP_##name,
enum rr_xdp_stat { RR_XDP_STATS(RR_XDP_STAT_ENUM) RR_XDP_STAT_MAX };
#undef RR_XDP_STAT_ENUM

/* Counters are per CPU, RR_XDP_STAT_MAX per queue, one extra row for
 * queues beyond RR_MAX_QUEUES. */
#define RR_STATS_SIZE ((RR_MAX_QUEUES + 1) * RR_XDP_STAT_MAX)

#endif /* RR_SHARED_STATS_H */
