/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the XDP program and user space agree on: map sizes, the layout of
 * map values and the program's counters. Plain fixed-width types only, so
 * both sides compile it unchanged.
 */
#ifndef RR_SHARED_H
#define RR_SHARED_H

#include <linux/types.h>

#define RR_XDP_PROG_NAME "reqrouter_xdp" /* how a stale program is known */

#define RR_MAX_QUEUES 64  /* RX queues served */
#define RR_MAX_PORTS 32	  /* functions served at once */
#define RR_MAX_THREADS 16 /* workers per queue */
#define RR_XSKMAP_SIZE (RR_MAX_QUEUES * RR_MAX_PORTS * RR_MAX_THREADS)

/* Key of the socket of worker @thread for function slot @slot on @queue. */
#define RR_XSK_KEY(queue, slot, thread) \
	(((queue)*RR_MAX_PORTS + (slot)) * RR_MAX_THREADS + (thread))

/*
 * One entry per UDP destination port (host byte order), the only lookup the
 * program needs to decide; nsocks == 0 means no function on that port.
 */
struct rr_port_conf {
	__u32 slot;   /* function slot, 0..RR_MAX_PORTS-1 */
	__u32 nsocks; /* sockets per queue for this port (= workers) */
	__u32 flags;  /* RR_PORT_* */
};

/* Only sources in the allow-lists (acl_v4/acl_v6) reach this function. */
#define RR_PORT_ALLOWLIST (1U << 0)

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
 * The program's verdicts and reasons, counted per RX queue. The X-macro
 * gives the enum here and the metric labels in user space from one list:
 * X(enum suffix, verdict label, reason label).
 */
#define RR_XDP_STATS(X)                                   \
	X(REDIRECT, "redirect", "function")               \
	X(PASS_NO_SOCKET, "pass", "no_socket")            \
	X(PASS_NO_FUNCTION, "pass", "no_function")        \
	X(PASS_NOT_IP, "pass", "not_ip")                  \
	X(PASS_NOT_UDP, "pass", "not_udp")                \
	X(PASS_FRAGMENT, "pass", "fragment")              \
	X(PASS_IPV6_EXT, "pass", "ipv6_ext_header")       \
	X(PASS_MALFORMED, "pass", "malformed")            \
	X(PASS_QUEUE_RANGE, "pass", "queue_out_of_range") \
	X(PASS_NOT_UNICAST, "pass", "not_unicast")        \
	X(PASS_OTHER_HOST, "pass", "other_host")          \
	X(DROP_NOT_ALLOWED, "drop", "source_not_allowed") \
	X(DROP_LOOP_PORT, "drop", "loop_source_port")

#define RR_XDP_STAT_ENUM(name, verdict, reason) RR_XDP_##name,
enum rr_xdp_stat { RR_XDP_STATS(RR_XDP_STAT_ENUM) RR_XDP_STAT_MAX };
#undef RR_XDP_STAT_ENUM

/* Counters are per CPU, RR_XDP_STAT_MAX per queue, one extra row for
 * queues beyond RR_MAX_QUEUES. */
#define RR_STATS_SIZE ((RR_MAX_QUEUES + 1) * RR_XDP_STAT_MAX)

#endif /* RR_SHARED_H */
