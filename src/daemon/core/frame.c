// SPDX-License-Identifier: GPL-2.0
/*
 * A worker's frames onto its TX rings and into its stock, the queue's
 * lock as the main thread takes it, and where a queue's frames are
 * (frame.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "frame.h"

/* Copy-mode sendto() transmits at most 32 frames and says EAGAIN if more
 * are waiting. */
#define KICK_TRIES (RR_MAX_BATCH / 32 + 1)

void rr_kick_tx(struct rr_sock *s)
{
	int i;

	for (i = 0; i < KICK_TRIES; i++) {
		if (sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			return;
		if (errno != EAGAIN)
			break;
	}
	/* Backpressure or a link going down: retried on the next round. */
	if (errno == EAGAIN || errno == EBUSY || errno == ENOBUFS ||
	    errno == ENETDOWN)
		return;
	rr_stat_add(&s->stats->kick_errors, 1);
}

/*
 * The main thread's way to a queue's lock: a holder keeps it for a few
 * hundred nanoseconds, so ~1 ms without it means it is not coming back
 * soon (a dead or stopped cell, or a lock a function wrote over), and the
 * main thread goes on without it rather than wait.
 */
bool rr_umem_trylock(struct rr_umem *u)
{
	uint64_t until = rr_now_ns() + RR_TRYLOCK_NS;

	do {
		if (!pthread_spin_trylock(&u->sh->lock)) {
			rr_umem_locked(u, RR_LOCK_MAIN);
			return true;
		}
	} while (rr_now_ns() < until);
	return false;
}

/*
 * Entries on a ring: the producer's count less the consumer's. Under load
 * the picture is a moment's: the kernel publishes how far it consumed a
 * ring lazily, so a frame it took from the fill ring can already be on an
 * RX ring. At rest it is exact. Never more than the ring holds, whatever
 * a cell wrote into its indices.
 */
static uint32_t ring_used(const uint32_t *producer, const uint32_t *consumer,
			  uint32_t size)
{
	uint32_t n = __atomic_load_n(producer, __ATOMIC_ACQUIRE) -
		     __atomic_load_n(consumer, __ATOMIC_ACQUIRE);

	return n > size ? size : n;
}

/*
 * The stock of frames for gathers' copies: its entries in the report
 * before its count, as recycle[]'s. Topped up under the queue's lock
 * from the first completions peeked at @idx (at most @ncomp): rr_divert()
 * lists them past the count and says how many in the lock page, the
 * caller releases the completions, then rr_stocked() counts them. A cell
 * that dies between the two is put right by recover_lock() (cells/supervise.c).
 */
uint32_t rr_divert(struct rr_worker *w, uint32_t idx, uint32_t ncomp)
{
	struct rr_umem *u = w->umem;
	uint32_t n = w->stock_want - w->nstock, i;
	uint64_t frame;

	if (w->nstock >= w->stock_want || !ncomp)
		return 0;
	if (n > ncomp)
		n = ncomp;
	for (i = 0; i < n; i++) {
		frame = rr_frame_of(
			*xsk_ring_cons__comp_addr(&u->comp, idx + i));
		w->stock[w->nstock + i] = frame;
		w->rep->stock[w->nstock + i] = frame;
	}
	u->sh->stock_before = w->nstock;
	__atomic_store_n(&u->sh->divert, n, __ATOMIC_RELEASE);
	return n;
}

bool rr_stock_take(struct rr_worker *w, uint64_t *frame)
{
	struct rr_umem *u = w->umem;
	uint32_t idx = 0, n;

	if (!w->nstock && w->stock_want) {
		rr_umem_lock(u, w->index + 1);
		n = xsk_ring_cons__peek(&u->comp, w->stock_want, &idx);
		n = rr_divert(w, idx, n);
		if (n) {
			xsk_ring_cons__release(&u->comp, n);
			rr_stocked(w, n);
			rr_frames_held(w, n);
		}
		rr_umem_unlock(u);
		if (n)
			__atomic_sub_fetch(&u->sh->tx_outstanding, n,
					   __ATOMIC_RELAXED);
	}
	if (!w->nstock)
		return false;
	/* Off the count first: a frame lost by a cell killed here is
	 * better than one sent and kept both. */
	w->nstock--;
	__atomic_store_n(&w->rep->nstock, w->nstock, __ATOMIC_RELEASE);
	*frame = w->stock[w->nstock];
	return true;
}

uint32_t rr_tx_copies(struct rr_worker *w, struct rr_sock *s,
		      const struct xdp_desc *d, uint32_t n)
{
	uint32_t idx, i, room = xsk_prod_nb_free(&s->tx, n);

	if (room > n)
		room = n;
	for (i = room; i < n; i++) {
		w->stock[w->nstock] = rr_frame_of(d[i].addr);
		w->rep->stock[w->nstock] = w->stock[w->nstock];
		rr_stocked(w, 1);
	}
	if (!room || xsk_ring_prod__reserve(&s->tx, room, &idx) != room)
		return 0;
	for (i = 0; i < room; i++)
		*xsk_ring_prod__tx_desc(&s->tx, idx + i) = d[i];
	rr_frames_held(w, -(int64_t)room);
	xsk_ring_prod__submit(&s->tx, room);
	__atomic_add_fetch(&w->umem->sh->tx_outstanding, room,
			   __ATOMIC_RELAXED);
	rr_kick_tx(s);
	return room;
}

uint32_t rr_tx_put(struct rr_worker *w, struct rr_sock *s, uint32_t n)
{
	uint32_t idx, i;

	if (!n)
		return 0;
	/* n <= free TX entries, so this cannot fail; if it ever did, the
	 * frames go back to the fill ring rather than astray. */
	if (xsk_ring_prod__reserve(&s->tx, n, &idx) != n) {
		/* Off the mark first: a frame lost by a cell killed here is
		 * better than one sent and recycled both. */
		w->rep->batch.ntx = 0;
		for (i = 0; i < n; i++)
			rr_recycle(w, rr_frame_of(w->tx[i].addr));
		rr_stat_add(&s->stats->tx_ring_full, 1);
		return 0;
	}
	for (i = 0; i < n; i++)
		*xsk_ring_prod__tx_desc(&s->tx, idx + i) = w->tx[i];
	rr_frames_held(w, -(int64_t)n);
	xsk_ring_prod__submit(&s->tx, n);
	__atomic_add_fetch(&w->umem->sh->tx_outstanding, n, __ATOMIC_RELAXED);
	return n;
}

uint32_t rr_tx_one(struct rr_worker *w, struct rr_sock *s, uint64_t addr,
		   uint32_t len)
{
	w->tx[0].addr = addr;
	w->tx[0].len = len;
	w->tx[0].options = 0;
	if (!rr_tx_put(w, s, 1))
		return 0;
	rr_stat_add(&s->stats->tx, 1);
	return 1;
}

void rr_invoker_frames(struct rr_invoker *inv, uint32_t queue,
		       struct rr_frames *f)
{
	struct rr_umem *u = &inv->umems[queue];
	uint32_t t, slot, known, stock;
	uint64_t held;
	struct rr_sock *s;
	bool locked;

	memset(f, 0, sizeof(*f));
	/* Workers move frames from completion to fill under this lock;
	 * without it (held for long: see rr_umem_trylock) the picture is
	 * a moment's. */
	locked = rr_umem_trylock(u);
	f->fill = ring_used(u->fill.producer, u->fill.consumer, u->fill.size);
	f->completion =
		ring_used(u->comp.producer, u->comp.consumer, u->comp.size);
	if (locked)
		rr_umem_unlock(u);
	for (t = 0; t < inv->threads_made; t++) {
		held = rr_stat_read(
			&rr_worker_at(inv, queue, t)->rep->frames_held);
		if (held > RR_NUM_FRAMES)
			held = RR_NUM_FRAMES;
		/* The stock is part of what it holds. */
		stock = __atomic_load_n(
			&rr_worker_at(inv, queue, t)->rep->nstock,
			__ATOMIC_RELAXED);
		if (stock > held)
			stock = (uint32_t)held;
		f->stock += stock;
		f->worker += (uint32_t)held - stock;
		for (slot = 0; slot < inv->nslots; slot++) {
			s = rr_sock_at(inv, queue, t, slot);
			f->rx += ring_used(s->rx.producer, s->rx.consumer,
					   s->rx.size);
			f->tx += ring_used(s->tx.producer, s->tx.consumer,
					   s->tx.size);
		}
	}
	known = f->fill + f->rx + f->worker + f->stock + f->tx + f->completion;
	f->kernel = known < RR_NUM_FRAMES ? RR_NUM_FRAMES - known : 0;
}
