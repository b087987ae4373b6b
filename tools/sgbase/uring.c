// SPDX-License-Identifier: GPL-2.0
/*
 * The io_uring engine, single-threaded as the epoll one. Each socket has
 * one multishot recvmsg armed, receiving into a ring of provided buffers
 * (a registered buffer ring) that is refilled as each completion is
 * handled, so it never runs dry the way the paper's provide-buffers
 * baseline did every 2^16 reads. A gather's scatter is one send SQE per
 * target (IORING_OP_SEND with the target's address, i.e. sendto), all
 * submitted together with the next wait: one io_uring_enter per turn of
 * the loop, which sleeps until a completion or the oldest deadline
 * (io_uring_submit_and_wait_timeout, the timeout as an argument rather
 * than a timeout SQE). A slot is reused only once every SQE that reads
 * its buffers has completed. At most UR_SEND_BUDGET target sends are out
 * at once; a gather past it waits its turn in a FIFO, so the completion
 * queue cannot overflow however many clients ask.
 *
 * The ring is set up single-issuer with deferred task work where the
 * kernel has it (6.1+): completions are then posted only when the loop
 * asks for them, without interrupting it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <liburing.h>

#include "clock.h"
#include "sgbase.h"

#define UR_SQ 4096
#define UR_CQ 32768
#define UR_BUF (SG_BUF_SIZE + 64) /* io_uring_recvmsg_out and the name */
#define UR_TBUFS 4096		  /* replies in flight before ENOBUFS */
#define UR_CBUFS 256
#define UR_CQE_BATCH 256
/* Target sends out at once: with their replies they stay well inside the
 * CQ, which must never overflow (liburing's submit then fails -EBUSY). */
#define UR_SEND_BUDGET 8192

enum { UD_RECV_T = 1, UD_RECV_C, UD_SEND_T, UD_SEND_C };
enum { BGID_T = 1, BGID_C = 2 };

struct ur_rx {
	int fd;
	uint16_t bgid;
	uint32_t nbufs;
	uint8_t *bufs;
	struct io_uring_buf_ring *br;
	size_t br_size;
	int added; /* buffers given back this turn, not yet published */
	bool armed;
	struct msghdr mh; /* the multishot's template: the name's room */
};

struct ur {
	struct io_uring ring;
	struct sg_table *t;
	struct ur_rx rx_t, rx_c;
	int cfd, tfd;
	uint64_t nobufs;
	uint32_t sends_out; /* target sends whose CQE has not come */
	/* Gathers waiting for the budget to scatter, oldest first. */
	struct sg_slot **pending;
	uint32_t pend_head, pend_len;
};

static struct io_uring_sqe *get_sqe(struct ur *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

	/* A full SQ (a 1000-target scatter or several) goes in now. */
	while (!sqe) {
		io_uring_submit(&u->ring);
		sqe = io_uring_get_sqe(&u->ring);
	}
	return sqe;
}

static int rx_setup(struct ur *u, struct ur_rx *rx, int fd, uint16_t bgid,
		    uint32_t nbufs)
{
	struct io_uring_buf_reg reg = { 0 };
	uint32_t i;
	int ret;

	rx->fd = fd;
	rx->bgid = bgid;
	rx->nbufs = nbufs;
	rx->mh.msg_namelen = sizeof(struct sockaddr_in6);
	rx->bufs = malloc((size_t)nbufs * UR_BUF);
	if (!rx->bufs)
		return -ENOMEM;
	rx->br_size = nbufs * sizeof(struct io_uring_buf);
	rx->br = mmap(NULL, rx->br_size, PROT_READ | PROT_WRITE,
		      MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	if (rx->br == MAP_FAILED) {
		rx->br = NULL;
		return -ENOMEM;
	}
	reg.ring_addr = (unsigned long)rx->br;
	reg.ring_entries = nbufs;
	reg.bgid = bgid;
	ret = io_uring_register_buf_ring(&u->ring, &reg, 0);
	if (ret)
		return ret;
	io_uring_buf_ring_init(rx->br);
	for (i = 0; i < nbufs; i++)
		io_uring_buf_ring_add(rx->br, rx->bufs + (size_t)i * UR_BUF,
				      UR_BUF, (uint16_t)i,
				      io_uring_buf_ring_mask(nbufs), (int)i);
	io_uring_buf_ring_advance(rx->br, (int)nbufs);
	return 0;
}

static void rx_free(struct ur_rx *rx)
{
	if (rx->br)
		munmap(rx->br, rx->br_size);
	free(rx->bufs);
}

static void rx_arm(struct ur *u, struct ur_rx *rx, uint64_t ud)
{
	struct io_uring_sqe *sqe = get_sqe(u);

	io_uring_prep_recvmsg_multishot(sqe, rx->fd, &rx->mh, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = rx->bgid;
	io_uring_sqe_set_data64(sqe, ud);
	rx->armed = true;
}

static void rx_recycle(struct ur_rx *rx, uint16_t bid)
{
	io_uring_buf_ring_add(rx->br, rx->bufs + (size_t)bid * UR_BUF, UR_BUF,
			      bid, io_uring_buf_ring_mask(rx->nbufs),
			      rx->added++);
}

static void rx_publish(struct ur_rx *rx)
{
	if (rx->added) {
		io_uring_buf_ring_advance(rx->br, rx->added);
		rx->added = 0;
	}
}

static void maybe_release(struct ur *u, struct sg_slot *s)
{
	if (!s->active && !s->inflight && !s->queued)
		sg_release(u->t, s);
}

static void send_reply(struct ur *u, struct sg_slot *s)
{
	struct io_uring_sqe *sqe = get_sqe(u);

	io_uring_prep_send(sqe, u->cfd, s->reply, s->reply_len, 0);
	io_uring_prep_send_set_addr(sqe, (struct sockaddr *)&s->client,
				    (uint16_t)s->client_len);
	io_uring_sqe_set_data64(sqe, (uint64_t)s->idx << 8 | UD_SEND_C);
	s->inflight++;
}

static void finish(struct ur *u, struct sg_slot *s)
{
	sg_finish(u->t, s);
	send_reply(u, s);
}

/* The scatter: header+payload per target in the slot's buffer (the SQEs
 * read it until they complete), one send SQE each. */
static void scatter(struct ur *u, struct sg_slot *s)
{
	const struct sg_targets *tg = &u->t->cfg->targets;
	size_t stride = SG_HDR_LEN + s->plen, need = stride * tg->n;
	struct io_uring_sqe *sqe;
	uint8_t *p;
	uint32_t i;

	if (s->out_cap < need) {
		p = realloc(s->out, need);
		if (!p) {
			u->t->st.send_errors += tg->n;
			return; /* it finishes at its deadline, all missed */
		}
		s->out = p;
		s->out_cap = need;
	}
	for (i = 0, p = s->out; i < tg->n; i++, p += stride) {
		sg_hdr_fill((struct rr_sg_hdr *)p, s, i);
		memcpy(p + SG_HDR_LEN, s->payload, s->plen);
		sqe = get_sqe(u);
		io_uring_prep_send(sqe, u->tfd, p, stride, 0);
		io_uring_prep_send_set_addr(sqe, (struct sockaddr *)&tg->sa[i],
					    (uint16_t)tg->salen);
		io_uring_sqe_set_data64(sqe, (uint64_t)s->idx << 8 | UD_SEND_T);
		s->inflight++;
	}
	u->sends_out += tg->n;
}

/* Scatters the waiting gathers, in order, while the budget allows. */
static void pump(struct ur *u)
{
	uint32_t n = u->t->cfg->targets.n, cap = u->t->cfg->max_gathers;
	struct sg_slot *s;

	while (u->pend_len) {
		s = u->pending[u->pend_head];
		/* One finished at its deadline while it waited sends nothing. */
		if (s->active && u->sends_out + n > UR_SEND_BUDGET)
			break;
		if (s->active)
			scatter(u, s);
		s->queued = false;
		u->pend_head = (u->pend_head + 1) % cap;
		u->pend_len--;
		maybe_release(u, s);
	}
}

static void queue_scatter(struct ur *u, struct sg_slot *s)
{
	uint32_t cap = u->t->cfg->max_gathers;

	s->queued = true;
	u->pending[(u->pend_head + u->pend_len) % cap] = s;
	u->pend_len++;
	pump(u);
}

/* A multishot completion: the datagram in its buffer, or NULL. */
static struct io_uring_recvmsg_out *rx_msg(struct ur *u, struct ur_rx *rx,
					   const struct io_uring_cqe *cqe,
					   uint16_t *bid)
{
	struct io_uring_recvmsg_out *o;

	if (!(cqe->flags & IORING_CQE_F_MORE))
		rx->armed = false;
	if (cqe->res < 0) {
		if (cqe->res == -ENOBUFS)
			u->nobufs++;
		return NULL;
	}
	if (!(cqe->flags & IORING_CQE_F_BUFFER))
		return NULL;
	*bid = (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
	o = io_uring_recvmsg_validate(rx->bufs + (size_t)*bid * UR_BUF,
				      cqe->res, &rx->mh);
	if (!o)
		rx_recycle(rx, *bid);
	return o;
}

static void on_cqe(struct ur *u, const struct io_uring_cqe *cqe, uint64_t now)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	struct ur_rx *rx = (ud & 0xff) == UD_RECV_T ? &u->rx_t : &u->rx_c;
	struct io_uring_recvmsg_out *o;
	struct sg_slot *s;
	uint16_t bid;
	size_t len;
	void *p;

	switch (ud & 0xff) {
	case UD_RECV_T:
	case UD_RECV_C:
		o = rx_msg(u, rx, cqe, &bid);
		if (!o)
			return;
		p = io_uring_recvmsg_payload(o, &rx->mh);
		len = io_uring_recvmsg_payload_length(o, cqe->res, &rx->mh);
		if (rx == &u->rx_t) {
			if (o->flags & MSG_TRUNC)
				u->t->st.truncated++;
			s = sg_reply(u->t, p, len, io_uring_recvmsg_name(o),
				     o->namelen);
			if (s)
				finish(u, s);
		} else if (o->flags & MSG_TRUNC) {
			u->t->st.requests++;
			u->t->st.refused++;
		} else {
			s = sg_start(u->t, p, len, io_uring_recvmsg_name(o),
				     o->namelen, now);
			if (s)
				queue_scatter(u, s);
		}
		rx_recycle(rx, bid);
		return;
	case UD_SEND_T:
	case UD_SEND_C:
		s = &u->t->slots[ud >> 8];
		if (cqe->res < 0)
			u->t->st.send_errors++;
		if ((ud & 0xff) == UD_SEND_T)
			u->sends_out--;
		s->inflight--;
		maybe_release(u, s);
		return;
	}
}

static int ring_setup(struct ur *u)
{
	/* The best the kernel takes, then less: deferred task work (6.1),
	 * then cooperative (5.19), then plain. */
	static const unsigned int flags[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	struct io_uring_params p;
	size_t i;
	int ret = -EINVAL;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = flags[i] | IORING_SETUP_CQSIZE |
			  IORING_SETUP_SUBMIT_ALL;
		p.cq_entries = UR_CQ;
		ret = io_uring_queue_init_params(UR_SQ, &u->ring, &p);
		if (!ret)
			return 0;
		if (ret != -EINVAL)
			break;
	}
	fprintf(stderr, "%s: io_uring_queue_init: %s\n", SG_PROG,
		strerror(-ret));
	return ret;
}

int sg_run_uring(struct sg_table *t, int cfd, int tfd)
{
	struct io_uring_cqe *cqes[UR_CQE_BATCH], *cqe;
	uint64_t now, last = rr_now_ns();
	struct __kernel_timespec ts;
	struct sg_slot *s;
	unsigned int n, i, rounds;
	struct ur *u;
	int64_t wait;
	int ret;

	u = calloc(1, sizeof(*u));
	if (u)
		u->pending = calloc(t->cfg->max_gathers, sizeof(*u->pending));
	if (!u || !u->pending) {
		free(u);
		return -ENOMEM;
	}
	u->t = t;
	u->cfd = cfd;
	u->tfd = tfd;
	ret = ring_setup(u);
	if (ret) {
		free(u->pending);
		free(u);
		return ret;
	}
	ret = rx_setup(u, &u->rx_t, tfd, BGID_T, UR_TBUFS);
	if (!ret)
		ret = rx_setup(u, &u->rx_c, cfd, BGID_C, UR_CBUFS);
	if (ret) {
		fprintf(stderr, "%s: io_uring buffer ring: %s\n", SG_PROG,
			strerror(-ret));
		goto out;
	}
	rx_arm(u, &u->rx_t, UD_RECV_T);
	rx_arm(u, &u->rx_c, UD_RECV_C);
	while (!sg_stop) {
		if (t->cfg->busy) {
			ret = io_uring_submit_and_get_events(&u->ring);
		} else {
			wait = sg_next_deadline(t, rr_now_ns());
			if (wait < 0)
				wait = 1000000000;
			ts.tv_sec = wait / 1000000000;
			ts.tv_nsec = wait % 1000000000;
			ret = io_uring_submit_and_wait_timeout(&u->ring, &cqe,
							       1, &ts, NULL);
		}
		if (ret < 0 && ret != -ETIME && ret != -EINTR &&
		    ret != -EAGAIN && ret != -EBUSY) {
			fprintf(stderr, "%s: io_uring_enter: %s\n", SG_PROG,
				strerror(-ret));
			break;
		}
		now = rr_now_ns();
		/* Bounded: a flood of completions still lets deadlines and
		 * the buffer rings have their turn. */
		for (rounds = 0; rounds < 64; rounds++) {
			n = io_uring_peek_batch_cqe(&u->ring, cqes,
						    UR_CQE_BATCH);
			if (!n)
				break;
			for (i = 0; i < n; i++)
				on_cqe(u, cqes[i], now);
			io_uring_cq_advance(&u->ring, n);
		}
		rx_publish(&u->rx_t);
		rx_publish(&u->rx_c);
		pump(u);
		now = rr_now_ns();
		while ((s = sg_expired(t, now)))
			finish(u, s);
		/* A multishot ends on ENOBUFS or an error: arm it again now
		 * that its buffers are back. */
		if (!u->rx_t.armed)
			rx_arm(u, &u->rx_t, UD_RECV_T);
		if (!u->rx_c.armed)
			rx_arm(u, &u->rx_c, UD_RECV_C);
		if (t->cfg->verbose && now - last >= 1000000000) {
			sg_stats_print(t, "uring");
			fprintf(stderr, "%s: uring: nobufs=%llu\n", SG_PROG,
				(unsigned long long)u->nobufs);
			last = now;
		}
	}
	ret = 0;
	/* The multishot receives hold the sockets: cancelled here, they let
	 * go at once, where the ring's teardown would let go later, in a
	 * kernel worker, and a coordinator started next on the same port
	 * would find it taken. */
	{
		struct io_uring_sync_cancel_reg reg = {
			.flags = IORING_ASYNC_CANCEL_ANY,
			.timeout = { .tv_sec = 1 },
		};

		io_uring_register_sync_cancel(&u->ring, &reg);
		/* With deferred task work a request is put, and its file
		 * with it, only when the loop asks for its completion. */
		io_uring_get_events(&u->ring);
		while ((n = io_uring_peek_batch_cqe(&u->ring, cqes,
						    UR_CQE_BATCH)))
			io_uring_cq_advance(&u->ring, n);
	}
	if (u->nobufs)
		fprintf(stderr,
			"%s: uring: the buffer ring ran dry %llu times\n",
			SG_PROG, (unsigned long long)u->nobufs);
out:
	io_uring_queue_exit(&u->ring);
	rx_free(&u->rx_t);
	rx_free(&u->rx_c);
	free(u->pending);
	free(u);
	return ret;
}
