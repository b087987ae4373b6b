/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP for the functions that ask for it (RR_FN_TCP, or tcp = yes): the
 * same handler serves each length-framed message of a connection, through
 * the kernel's TCP on the function's port, out of the AF_XDP workers' way.
 * One event loop serves every such function: a thread of reqrouter, or
 * with isolation = cell a process confined as a cell is (its memory, its
 * descriptors, its system calls), supervised the same way. See tcp.c.
 */
#ifndef RR_TCP_H
#define RR_TCP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <reqrouter/rr_function.h>

#include "config.h"
#include "watch.h"

/* The loop serving now, and one handing over to it (after a reload, or
 * when the functions served over TCP change). */
#define RR_TCP_LOOPS 2

/* By function, written by the loop alone (relaxed stores). */
struct rr_tcp_stats {
	uint64_t requests; /* messages taken whole */
	uint64_t replies;  /* framed and queued to the client */
	uint64_t no_reply; /* RR_NO_REPLY */
	uint64_t errors;   /* the handler failed (-errno) */
	uint64_t accepted; /* connections */
	/* Connections closed at once: over tcp_max_connections with every
	 * one open busy, over tcp_max_per_source, outside the allow-list,
	 * quarantined. */
	uint64_t refused_full;
	uint64_t refused_source;
	uint64_t refused_allow;
	uint64_t refused_quarantined;
	/* Connections closed by us: idle past tcp_idle_timeout, a message or
	 * a reply not done within tcp_io_timeout, a message the framing
	 * refuses (length 0). */
	uint64_t idle_timeouts;
	uint64_t io_timeouts;
	uint64_t bad_frames;
	/* Sharing the pool (a closed connection counts where it was):
	 * refused, its prefix at tcp_max_per_prefix with every one of its
	 * connections busy; closed, idle longest, for a newcomer to a full
	 * pool, or to its own prefix at tcp_max_per_prefix; closed, idle
	 * past the time-out a pool past half full shrank, not yet past
	 * tcp_idle_timeout. */
	uint64_t refused_prefix;
	uint64_t evicted_full;
	uint64_t evicted_prefix;
	uint64_t idle_shrunk;
};

/*
 * What a loop tells the supervisor: shared with a loop's cell, one page
 * each, checked before use like a worker's report.
 */
struct rr_tcp_report {
	uint64_t call_seq;   /* odd while inside a function */
	uint32_t call_slot;  /* the function it is in */
	uint32_t open;	     /* connections open now */
	uint64_t seen_epoch; /* as a worker's: no older instance held */
	struct rr_tcp_stats stats[RR_MAX_SLOTS];
	uint64_t fn_counters[RR_MAX_SLOTS][RR_FN_MAX_COUNTERS];
} __attribute__((aligned(4096)));

/* A loop, as the main thread keeps it. */
struct rr_tcp_loop {
	struct rr_tcp_report *rep;
	pthread_t tid;
	pid_t pid;
	bool running;  /* started, not yet joined or reaped */
	bool retiring; /* told to hand over: no accepting, then exit */
	uint64_t retired_ns;
	/* The supervisor's overrun watch, as for a worker. */
	struct rr_call_watch sv;
};

struct rr_tcp {
	int listen_fd[RR_MAX_SLOTS]; /* by slot; -1: not served over TCP */
	/* By slot: the service no listener could be opened for. */
	const struct rr_service *failed[RR_MAX_SLOTS];
	struct rr_tcp_report *reports; /* [RR_TCP_LOOPS], shared */
	struct rr_tcp_loop loops[RR_TCP_LOOPS];
	int cur;		/* the loop serving, or -1 */
	uint64_t next_start_ns; /* after a crash: not before */
	bool unconfined;	/* its cell could not confine itself: said */
	/* What loops that ended had counted, so that totals never fall. */
	struct rr_tcp_stats done[RR_MAX_SLOTS];
	uint64_t done_fn[RR_MAX_SLOTS][RR_FN_MAX_COUNTERS];
};

struct rr_invoker;

/* The worker index the loop's function states are kept under: one past
 * the AF_XDP workers' (function instances hold RR_NWORKERS(inv) + 1). */
#define RR_TCP_WORKER(inv) RR_NWORKERS(inv)

/* Before anything can fail: no listener, no loop. */
void rr_tcp_init(struct rr_invoker *inv);

/*
 * Opens or closes listeners so that exactly the served functions with tcp
 * set have one, bound to the interface, on their port, IPv6 and IPv4.
 * Called at set-up (still privileged) and after a reload or a deploy;
 * *@changed set if a listener came or went (the serving loop then hands
 * over to a fresh one). 0, or -errno with the reason logged (at set-up
 * that stops reqrouter; later the function stays UDP only).
 */
int rr_tcp_sync(struct rr_invoker *inv, bool *changed);
/* Closes the listeners and unmaps the loops' reports (stopped). */
void rr_tcp_close(struct rr_invoker *inv);

/* A retiring loop exits after this long at the latest. */
#define RR_TCP_RETIRE_MAX_MS 5000

/*
 * A loop's own state, for whoever runs it (cells/tcp_loops.c, as a
 * thread or a cell): made for loop @li with its listeners @lfd (by slot,
 * -1 for none; the loop closes them), set up (-errno), run until told to
 * stop or retire, freed. rr_tcp_serve_owns(): whether @fd is one of its
 * listeners.
 */
struct rr_tcp_serve;
struct rr_tcp_serve *rr_tcp_serve_new(struct rr_invoker *inv, uint32_t li,
				      const int *lfd, bool cell);
int rr_tcp_serve_setup(struct rr_tcp_serve *l);
void rr_tcp_serve_run(struct rr_tcp_serve *l);
void rr_tcp_serve_free(struct rr_tcp_serve *l);
bool rr_tcp_serve_owns(const struct rr_tcp_serve *l, int fd);
/* Whether any function is served over TCP now. */
bool rr_tcp_any_listener(const struct rr_invoker *inv);

/* The loops' counters for function @slot, ended loops included. */
void rr_tcp_stats_sum(struct rr_invoker *inv, uint32_t slot,
		      struct rr_tcp_stats *sum);
uint64_t rr_tcp_fn_counter(struct rr_invoker *inv, uint32_t slot, uint32_t c);
uint32_t rr_tcp_open(struct rr_invoker *inv);

/* For metrics.c: the TCP samples of family @name (requests and replies,
 * transport="tcp"), and the TCP loop's own families. */
void rr_tcp_write_metric(struct rr_invoker *inv, FILE *out, const char *name);
void rr_tcp_write_metrics(struct rr_invoker *inv, FILE *out);
/* For metrics_json.c: function @slot's "tcp" member, if it has TCP. */
void rr_tcp_json(struct rr_invoker *inv, uint32_t slot, FILE *out);

#endif /* RR_TCP_H */
