/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A worker's frames: where each UMEM frame in its hands goes (back to the
 * fill ring at the end of the round, onto a TX ring, into the stock that
 * gathers build their copies in), each step recorded in the worker's
 * report first so that a cell killed in between leaves an account that
 * adds up (the supervisor's recovery, cells/supervise.c, reads it). The
 * worker's round (serve/worker.c) and the gathers (features/gather.c)
 * both move frames through here.
 */
#ifndef RR_FRAME_H
#define RR_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include <xdp/xsk.h>

#include "invoker.h"

/* Replies on @s's TX ring the kernel has not taken yet. */
static inline uint32_t rr_tx_pending(struct rr_sock *s)
{
	return RR_TX_SIZE - xsk_prod_nb_free(&s->tx, RR_TX_SIZE);
}

/*
 * The worker's own lists and counts, each also copied into its report for
 * the supervisor (struct rr_worker_report): the entry before the count, so
 * that a cell killed in between leaves a report that adds up.
 */
static inline void rr_recycle(struct rr_worker *w, uint64_t frame)
{
	w->rep->recycle[w->nrecycle] = frame;
	w->recycle[w->nrecycle++] = frame;
	__atomic_store_n(&w->rep->nrecycle, w->nrecycle, __ATOMIC_RELEASE);
}

static inline void rr_recycled(struct rr_worker *w)
{
	w->nrecycle = 0;
	__atomic_store_n(&w->rep->nrecycle, 0, __ATOMIC_RELEASE);
}

static inline void rr_frames_held(struct rr_worker *w, int64_t n)
{
	w->frames_held += (uint64_t)n;
	__atomic_store_n(&w->rep->frames_held, w->frames_held,
			 __ATOMIC_RELAXED);
}

static inline void rr_stocked(struct rr_worker *w, uint32_t n)
{
	w->nstock += n;
	__atomic_store_n(&w->rep->nstock, w->nstock, __ATOMIC_RELEASE);
}

/* Kicks @s's TX ring (sendto); backpressure is not an error. */
void rr_kick_tx(struct rr_sock *s);
/* Tops the stock up from the first completions peeked at @idx (at most
 * @ncomp), under the queue's lock; returns how many (see above). */
uint32_t rr_divert(struct rr_worker *w, uint32_t idx, uint32_t ncomp);
/*
 * Puts replies w->tx[0..n-1] on socket @s's TX ring, or if it has no room
 * (it always has: a batch takes no more than TX can hold) back on the
 * recycle list. Returns how many went out.
 */
uint32_t rr_tx_put(struct rr_worker *w, struct rr_sock *s, uint32_t n);
/* One reply, frame @addr of @len bytes, onto @s's TX ring (the caller
 * kicks it); returns 1, or 0 (it was recycled: no room). */
uint32_t rr_tx_one(struct rr_worker *w, struct rr_sock *s, uint64_t addr,
		   uint32_t len);
/* A frame of @w's stock for a copy (gather_scatter = umem) into *@frame,
 * topped up from the completions when it ran out; false if none. */
bool rr_stock_take(struct rr_worker *w, uint64_t *frame);
/* @n copies, descriptors @d built in frames of the stock, onto @s's TX
 * ring and kicked; those with no room there go back to the stock.
 * Returns how many went out. */
uint32_t rr_tx_copies(struct rr_worker *w, struct rr_sock *s,
		      const struct xdp_desc *d, uint32_t n);

/*
 * Where a queue's UMEM frames are. At rest they add up to RR_NUM_FRAMES
 * and all are on the fill ring; under load a frame the kernel moved but
 * has not yet said it consumed can show in two places (see
 * rr_invoker_frames), and "kernel" is what is left, never negative.
 */
struct rr_frames {
	uint32_t fill;	     /* on the fill ring, waiting for a packet */
	uint32_t rx;	     /* received, on the sockets' RX rings */
	uint32_t worker;     /* in a worker's hands */
	uint32_t stock;	     /* kept by a worker for its gathers' copies */
	uint32_t tx;	     /* on the sockets' TX rings */
	uint32_t completion; /* sent, on the completion ring */
	uint32_t kernel;     /* between rings inside the kernel */
};

void rr_invoker_frames(struct rr_invoker *inv, uint32_t queue,
		       struct rr_frames *f);

/* The main thread's way to a queue's lock: false if it was not had
 * within RR_TRYLOCK_NS (a holder that will not let go); never waits
 * longer. A holder keeps it for a few hundred nanoseconds, so ~1 ms
 * without it means it is not coming back soon (a dead or stopped cell,
 * or a lock a function wrote over). */
#define RR_TRYLOCK_NS 1000000ULL
bool rr_umem_trylock(struct rr_umem *u);

#endif /* RR_FRAME_H */
