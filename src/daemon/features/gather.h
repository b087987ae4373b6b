/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gathers, the worker's side (docs/DESIGN.md, "Gathers"): a function's
 * handler starts one with rr_gather_start(), the worker sends a copy
 * to each target (gather.c says the three ways), keeps the request's
 * frame, and answers it once the XDP program has merged enough replies
 * or the deadline passed.
 */
#ifndef RR_GATHER_DAEMON_H
#define RR_GATHER_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <linux/if_xdp.h>

#include "function.h"
#include "gather_budget.h"
#include "seccomp.h"
#include "shared/common.h"
#include "shared/gather.h"

struct rr_invoker;
struct rr_worker;

/* The longest payload a gather sends. */
#define RR_SG_MAX_PAYLOAD 1200

/* One gather of a worker, in its own memory (a cell's copy is its own). */
struct rr_gather_slot {
	bool busy;
	bool unsent;   /* targets the scatter program could not send to */
	uint32_t gen;  /* of the entry's current use */
	uint32_t slot; /* the function's */
	const struct rr_function *fn; /* that started it */
	uint64_t addr;		      /* the request's frame (descriptor) */
	uint32_t len;
	uint32_t mark; /* the request's RR_MARK_CAPTURE: its reply captured */
	uint32_t asked;
	uint32_t k;
	enum rr_reduce reduce;
	uint64_t deadline_ns;
	uint32_t cookie_len;
	uint8_t cookie[RR_SG_COOKIE_MAX];
	/* Its message (header and payload), for the targets the scatter
	 * program could not send it to. */
	uint32_t msg_len;
	uint8_t msg[sizeof(struct rr_sg_hdr) + RR_SG_MAX_PAYLOAD];
	/* CONCAT: the replies taken off RX so far (the XDP program's count
	 * runs ahead of them), those kept, and their bodies. */
	uint32_t parts;
	uint64_t got[RR_SG_WORDS];
	uint32_t concat_len;
	uint8_t concat[RR_SG_CONCAT_ROOM];
};

/* Generations a getrandom() draws at once. */
#define RR_SG_GENS 64

/* Replies a recvmmsg() reads at once, and the room for each. */
#define RR_SG_RECV_BATCH 16
#define RR_SG_RECV_LEN 2048

/* Copies a sendmmsg() sends at once (gather_scatter = socket). */
#define RR_SG_SEND_BATCH 64

/* Scratch for them: each copy its own header and address. */
struct rr_sg_send {
	struct rr_sg_hdr hdr[RR_SG_SEND_BATCH];
	struct sockaddr_in6 sa[RR_SG_SEND_BATCH];
	struct iovec iov[RR_SG_SEND_BATCH][2];
	struct mmsghdr mmsg[RR_SG_SEND_BATCH];
};

/* A worker's gathers: made by the main thread before the worker starts. */
struct rr_gathers {
	struct rr_gather_ctx ctx; /* first: rr_gather_start() gets this */
	struct rr_worker *w;
	int fd;		/* its gather socket (IPv6, dual-stack) */
	uint16_t port;	/* its port, host order */
	uint32_t first; /* its entries' first index in the gathers map */
	struct rr_gather_entry *entries; /* [RR_SG_PER_WORKER], mapped */
	uint32_t outstanding;
	uint32_t concats; /* of them, CONCAT */
	uint32_t per_slot[RR_MAX_SLOTS];
	/* The request being served, for start(): its frame and socket,
	 * and what it is marked for (RR_MARK_CAPTURE: its copies and its
	 * reply are captured too). */
	uint64_t cur_addr;
	uint32_t cur_len;
	uint32_t cur_slot;
	uint32_t cur_mark;
	struct rr_sg_send send;
	/* gather_scatter = umem: copies built in the stock's frames, not
	 * yet on the TX ring. */
	uint32_t ncopies;
	struct xdp_desc copies[RR_SG_SEND_BATCH];
	/* Replies read from the gather socket (a concatenation's, from
	 * other queues). */
	struct sockaddr_in6 from[RR_SG_RECV_BATCH];
	struct iovec riov[RR_SG_RECV_BATCH];
	struct mmsghdr rmsg[RR_SG_RECV_BATCH];
	uint8_t rbuf[RR_SG_RECV_BATCH][RR_SG_RECV_LEN];
	/* By group, the targets that missed the last gather that timed out
	 * asking them: their learned way may be stale (a target replaced, a
	 * new router), so their copies go through the stack, which resolves
	 * the neighbour again, until they answer. */
	__u64 stale[RR_SG_MAX_GROUPS][RR_SG_WORDS];
	/* Its share of the functions' gather_rate and gather_source_rate
	 * (gather_budget.h). */
	struct rr_sg_budget budget;
	/* Generations drawn ahead from getrandom(), used from the end: a
	 * reply is merged only under its gather's (kern/lib/gather.h), so a
	 * forged one must guess 32 random bits, not the last one plus one.
	 * Empty in the main thread's copy, so no two cells of a worker
	 * draw the same. */
	uint32_t ngens;
	uint32_t gens[RR_SG_GENS];
	struct rr_gather_slot g[RR_SG_PER_WORKER];
};

/*
 * If @svc's function gathers and has no allow-list, says so as a
 * warning: what a request from anyone, spoofed or not, makes it send,
 * and what bounds it. For the start's log and --check; whether it did.
 */
bool rr_gather_open_notice(const struct rr_config *cfg,
			   const struct rr_service *svc);

/* Whether any function served gathers (RR_FN_GATHER). */
bool rr_gather_needed(const struct rr_invoker *inv);

/* The groups' targets into the XDP program's map, and the scatter
 * program onto the egress; 0 or -errno, said. */
/* The frames each worker starts its stock with (rr_xsk_create_all()):
 * none unless a function gathers with gather_scatter = umem. */
uint32_t rr_gather_stock_seed(const struct rr_invoker *inv);
int rr_gather_setup(struct rr_invoker *inv);
void rr_gather_teardown(struct rr_invoker *inv);
/* Every worker's gathers freed, their sockets closed: once no worker
 * runs. */
void rr_gathers_free(struct rr_invoker *inv);

/* The worker whose gather port is @port, or NULL. */
const struct rr_worker *rr_gather_port_owner(const struct rr_invoker *inv,
					     uint16_t port);

/* Worker @w's gathers (its socket, its port's entry), made once; 0 or
 * -errno, said. */
int rr_gathers_new(struct rr_worker *w);

/* In a cell of worker @w: the other workers' gather sockets closed and
 * their entries unmapped; its own socket moved to RR_SG_CELL_FD. 0 or
 * -errno. */
int rr_gathers_confine(struct rr_worker *w);

/* At a worker's start: its entries closed to whatever a worker before
 * it (a dead cell) left outstanding. */
void rr_gathers_reset(struct rr_worker *w);

/*
 * In serve_batch(): whether the frame @data (@len) is a reply to one of
 * @w's gathers (its gather port); if so it has been taken in (a CONCAT
 * reply's body) and the caller recycles the frame.
 */
bool rr_gathers_frame(struct rr_worker *w, const uint8_t *data, uint32_t len);

/* The gather socket while a concatenation is outstanding (its replies
 * that come in on other queues arrive there), else -1. */
int rr_gathers_fd(const struct rr_worker *w);

/* Once a round: completes the gathers whose replies are in or whose
 * deadline passed (their replies onto TX), and sends what the scatter
 * program could not. Returns the replies sent. */
uint32_t rr_gathers_poll(struct rr_worker *w);

/* Says in @w's report that its gather @i holds the request at @addr
 * (0: none; a request's data is never at its frame's start), for the
 * supervisor to take its frame back if the cell dies. */
void rr_gather_held(struct rr_worker *w, uint32_t i, uint64_t addr);

/* How long a cell that makes way (a reload renews it) waits for its
 * outstanding gathers before it answers them with what came. */
#define RR_SG_DRAIN_NS 1000000000ULL

/* Completes every outstanding gather of @w now, with what came (a cell
 * that makes way); returns the replies sent. */
uint32_t rr_gathers_end(struct rr_worker *w);

/*
 * Before poll(): says @w sleeps, so that the reply that completes one of
 * its gathers wakes it; false (awake again) if one completed meanwhile,
 * for the caller to go round instead. rr_gathers_awake() after poll().
 */
bool rr_gathers_sleep(struct rr_worker *w);
void rr_gathers_awake(struct rr_worker *w);

/* How long poll() may sleep, in ms, with gathers outstanding: to the
 * nearest deadline; @max when none is. */
int rr_gathers_timeout(const struct rr_worker *w, int max);

#endif /* RR_GATHER_DAEMON_H */
