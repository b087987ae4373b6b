/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of the fuzz_xdp program share (fuzz_xdp.c says what it
 * checks): the port tables both instances are configured with
 * (fuzz_xdp.c), the frames and their mutations (fuzz_xdp_frames.c), the
 * steering instance's counters and verdicts (fuzz_xdp_steer.c) and the
 * tier instance compared with user space (fuzz_xdp_tier.c).
 */
#ifndef RR_FUZZ_XDP_H
#define RR_FUZZ_XDP_H

#include <stddef.h>
#include <stdint.h>

#include "reqrouter.skel.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "xdp.h"

#define MAX_FRAME 3500 /* a test run takes one page minus head/tailroom */
#define MAX_REPORTS 5
#define FULL_SUM_EVERY 65536
#define MTU 1500     /* both instances' if_mtu */
#define ROOM 4096    /* a UMEM frame: the buffer user space serves in */
#define BATCH_MAX 64 /* counters read in one system call: a row of xdp_stats */

#define ALLOW RR_PORT_ALLOWLIST
#define SLOT_ACL 5   /* an allow-list port's slot */
#define SLOT_OPEN 30 /* a slot every source may call, and no port uses */

/* What the tier instance does with a port's requests. */
enum tier_kind {
	TIER_USER,  /* user space only: steered to the sockets */
	TIER_XDP,   /* the function's XDP program answers */
	TIER_EMPTY, /* RR_PORT_XDP, no program in the slot (being replaced) */
	TIER_CACHE, /* served in user space, repeats from the reply cache */
};

struct port {
	uint16_t port;
	struct rr_port_conf conf;
	int has_function;
	const char *fn; /* tier instance: the function, as registered */
	enum tier_kind kind;
};

struct port_table {
	const struct port *p;
	size_t n;
};

/* Allow-list entries; the frame builder's sources are 10.0.0.1, fd00::1. */
struct allow {
	int family;
	uint32_t slot;
	uint32_t len; /* prefix length of the address */
	uint8_t addr[16];
};

/* The host's own destinations, for ports with RR_PORT_LOCAL_DST: the
 * builder's destinations (10.0.0.2, its fd00::/64 one) and a /24. */
struct local {
	int family;
	uint32_t len; /* prefix length */
	uint8_t addr[16];
};

/* fuzz_xdp.c: the two instances' ports, the allow-lists, the local
 * routes. */
extern const struct port_table steer_table, tier_table;
extern const struct allow allows[];
extern const size_t nallows;
extern const struct local locals[];
extern const size_t nlocals;

/* fuzz_xdp_frames.c */
void fuzz_seed(uint64_t seed);
uint32_t below(uint32_t n);
uint16_t get16(const uint8_t *f, uint32_t len, uint32_t off);
/* A random frame: valid, mutated, or noise. Returns its length. */
uint32_t make_frame(uint8_t *f);
/*
 * The frame as it goes to the tier instance: mostly with the checksums
 * rr_parse() checks put right, so mutations reach the functions, then
 * sometimes one checksum spoilt the ways senders spoil them, or trailing
 * padding. Returns the new length.
 */
uint32_t tier_variant(uint8_t *f, uint32_t len);

/* fuzz_xdp_steer.c */
struct stats {
	int fd;
	int ncpus;
	uint64_t *percpu;	      /* BATCH_MAX counters' per-CPU values */
	uint64_t seen[RR_STATS_SIZE]; /* counter values already accounted */
};

struct delta {
	uint64_t total;	  /* every counter of the row */
	uint64_t steered; /* redirect + no_socket: sent towards a socket */
	uint64_t dropped; /* counters whose verdict is "drop" */
	int stat;	  /* the last counter that moved, or -1 */
};

enum expect { EXPECT_PASS, EXPECT_STEER, EXPECT_DROP };

extern const char *const stat_labels[RR_XDP_STAT_MAX];
extern const char *const stat_verdicts[RR_XDP_STAT_MAX];
int configure(struct reqrouter *skel, const struct port_table *t);
/*
 * What the program should do with table @t's ports: steer what user space
 * would serve (rr_parse() accepts it, the port has a function) unless its
 * port answers only the host's own destinations and it is for another
 * (passed), or it comes from a loop port or one below the port's
 * min_src_port, or the port's allow-list leaves the source out (each
 * dropped); pass everything else. *port is the frame's entry in @t when
 * it is steered.
 */
enum expect expect_verdict(const struct port_table *t, const uint8_t *frame,
			   uint32_t len, uint32_t queue, int loop_rule,
			   const struct port **port);
int full_sum(struct stats *st, uint64_t *sum);
/*
 * Whether the program drops requests from ports that could make two
 * servers answer each other forever: it does if it has the counter.
 */
int has_loop_rule(void);
void hexdump(const uint8_t *f, uint32_t len);
/* One line of what the frames turned out to be, to show the mix is good. */
void print_mix(const char *who, const struct stats *st);
/*
 * Sums @n (<= BATCH_MAX) consecutive per-CPU counters of map @fd from key
 * @first, in one system call: an array's batch starts after in_batch.
 */
int read_range(int fd, const struct stats *st, uint32_t first, uint32_t n,
	       uint64_t *sums);
/* Adds up what the counters of one queue row gained since last read. */
int row_delta(struct stats *st, uint32_t row, struct delta *dl);
int stat_read(struct stats *st, uint32_t key, uint64_t *sum);

/* fuzz_xdp_tier.c */
/* The tier instance and what went through it. */
struct tier {
	struct rr_xdp x;
	int prog_fd;
	int fn_fd;
	struct stats st;		    /* its xdp_stats */
	uint64_t fn_seen[RR_FN_STATS_SIZE]; /* fn_stats already accounted */
	uint64_t runs;			    /* test runs, re-runs included */
	/* Replies the functions' programs counted in fn_stats alone, which
	 * rr_xdp_read_stats() adds to the queues' tx:function. */
	uint64_t fn_tx;
	uint64_t frames, steered, tx, hits, punts, inserts;
	uint64_t at_mtu;	     /* answers whose IP packet fills the MTU */
	uint64_t drops[RR_DROP_MAX]; /* agreed drops, by reason */
	uint64_t fails;
};

/*
 * One frame through the tier instance and, when it is steered to a
 * function, through rr_serve() on a copy; a cached port's miss that user
 * space answers is cached as a worker would, and the frame run again.
 */
void tier_check(struct tier *t, uint64_t no, const uint8_t *f, uint32_t len,
		uint32_t queue, struct xdp_md *ctx, int loop_rule);
/* No fn_stats counter moved that a frame did not account for (one for
 * another slot or queue than the request's, say). */
int tier_fn_leftovers(struct tier *t);
int tier_load(struct tier *t, int ncpus);

#endif /* RR_FUZZ_XDP_H */
