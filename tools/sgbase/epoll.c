// SPDX-License-Identifier: GPL-2.0
/*
 * The epoll engine: the paper's "plain epoll loop", made as good as a
 * socket loop gets without io_uring. Two non-blocking sockets (clients,
 * targets) in one level-triggered epoll set; epoll_pwait2 sleeps until the
 * oldest deadline. A gather's scatter is one sendmmsg for all its targets
 * (iovecs: the target's header, then the shared payload), replies come in
 * recvmmsg batches, and the replies to clients finished in one turn go out
 * in one sendmmsg. Batching is the fair choice: the paper's baseline sent
 * with one system call per target, which any real coordinator would not.
 *
 * A full send buffer (EAGAIN) leaves the rest of the gather in a FIFO,
 * sent on EPOLLOUT; later gathers queue behind it, so no gather waits on
 * another's replies and the loop never blocks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>

#include "clock.h"
#include "sgbase.h"

#define EP_BATCH 64
/* Rounds of recvmmsg per wake-up before the clients get their turn. */
#define EP_RX_BUDGET 16

struct ep {
	struct sg_table *t;
	int cfd, tfd, epfd;
	bool want_out;
	/* Receive, either socket, one batch at a time. */
	struct mmsghdr rmsg[EP_BATCH];
	struct iovec riov[EP_BATCH];
	struct sockaddr_storage raddr[EP_BATCH];
	uint8_t rbuf[EP_BATCH][SG_BUF_SIZE];
	/* The scatter: one message per target, built once; a gather only
	 * writes its number and gen into the headers and its payload into
	 * the second iovec. */
	struct mmsghdr smsg[RR_SG_MAX_TARGETS];
	struct iovec siov[RR_SG_MAX_TARGETS][2];
	struct rr_sg_hdr hdr[RR_SG_MAX_TARGETS];
	/* Gathers with targets not sent yet, oldest first. */
	struct sg_slot **sendq;
	uint32_t sq_head, sq_len;
	/* Finished gathers whose client replies go out at the turn's end. */
	struct sg_slot *done[EP_BATCH];
	struct mmsghdr cmsg[EP_BATCH];
	struct iovec ciov[EP_BATCH];
	uint32_t ndone;
};

static void ep_init(struct ep *e, struct sg_table *t, int cfd, int tfd)
{
	const struct sg_targets *tg = &t->cfg->targets;
	uint32_t i;

	e->t = t;
	e->cfd = cfd;
	e->tfd = tfd;
	for (i = 0; i < EP_BATCH; i++) {
		e->riov[i].iov_base = e->rbuf[i];
		e->rmsg[i].msg_hdr.msg_iov = &e->riov[i];
		e->rmsg[i].msg_hdr.msg_iovlen = 1;
		e->rmsg[i].msg_hdr.msg_name = &e->raddr[i];
		e->cmsg[i].msg_hdr.msg_iov = &e->ciov[i];
		e->cmsg[i].msg_hdr.msg_iovlen = 1;
	}
	for (i = 0; i < tg->n; i++) {
		e->hdr[i].magic = htonl(RR_SG_MAGIC);
		e->hdr[i].target = htons((uint16_t)i);
		e->siov[i][0].iov_base = &e->hdr[i];
		e->siov[i][0].iov_len = SG_HDR_LEN;
		e->smsg[i].msg_hdr.msg_iov = e->siov[i];
		e->smsg[i].msg_hdr.msg_iovlen = 2;
		e->smsg[i].msg_hdr.msg_name = &tg->sa[i];
		e->smsg[i].msg_hdr.msg_namelen = tg->salen;
	}
}

static void set_out(struct ep *e, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0),
				  .data.fd = e->tfd };

	if (on == e->want_out)
		return;
	e->want_out = on;
	epoll_ctl(e->epfd, EPOLL_CTL_MOD, e->tfd, &ev);
}

/* Sends what is left of @s's scatter; false if the socket is full. */
static bool send_rest(struct ep *e, struct sg_slot *s)
{
	uint32_t n = e->t->cfg->targets.n, i;
	int r;

	for (i = s->next_send; i < n; i++) {
		e->hdr[i].gather = htonl(s->idx);
		e->hdr[i].gen = htonl(s->gen);
		e->siov[i][1].iov_base = s->payload;
		e->siov[i][1].iov_len = s->plen;
	}
	while (s->next_send < n) {
		r = sendmmsg(e->tfd, e->smsg + s->next_send, n - s->next_send,
			     0);
		if (r > 0) {
			s->next_send += (uint32_t)r;
			continue;
		}
		if (!r || errno == EAGAIN || errno == ENOBUFS)
			return false;
		if (errno == EINTR)
			continue;
		/* That target's message failed (no route, say): it will
		 * miss; the others still go. */
		e->t->st.send_errors++;
		s->next_send++;
	}
	return true;
}

/* Done with @s once its client's reply is out and it is off the queue. */
static void maybe_release(struct ep *e, struct sg_slot *s)
{
	if (!s->active && !s->queued && !s->reply_len)
		sg_release(e->t, s);
}

/* Sends the queue's scatters in order until the socket is full. */
static void pump(struct ep *e)
{
	uint32_t cap = e->t->cfg->max_gathers;
	struct sg_slot *s;

	while (e->sq_len) {
		s = e->sendq[e->sq_head];
		/* A gather finished at its deadline sends no more. */
		if (s->active && !send_rest(e, s))
			break;
		s->queued = false;
		e->sq_head = (e->sq_head + 1) % cap;
		e->sq_len--;
		maybe_release(e, s);
	}
	set_out(e, e->sq_len > 0);
}

static void flush_done(struct ep *e)
{
	uint32_t k = 0, i;
	int r;

	for (i = 0; i < e->ndone; i++) {
		struct sg_slot *s = e->done[i];

		e->ciov[i].iov_base = s->reply;
		e->ciov[i].iov_len = s->reply_len;
		e->cmsg[i].msg_hdr.msg_name = &s->client;
		e->cmsg[i].msg_hdr.msg_namelen = s->client_len;
	}
	while (k < e->ndone) {
		r = sendmmsg(e->cfd, e->cmsg + k, e->ndone - k, 0);
		if (r > 0) {
			k += (uint32_t)r;
			continue;
		}
		if (errno == EINTR)
			continue;
		/* A client's reply that cannot go now is lost: the client
		 * times out, as it would on a lost datagram. */
		e->t->st.send_errors++;
		k++;
	}
	for (i = 0; i < e->ndone; i++) {
		e->done[i]->reply_len = 0;
		maybe_release(e, e->done[i]);
	}
	e->ndone = 0;
}

static void finish(struct ep *e, struct sg_slot *s)
{
	sg_finish(e->t, s);
	e->done[e->ndone++] = s;
	if (e->ndone == EP_BATCH)
		flush_done(e);
}

static int recv_batch(struct ep *e, int fd)
{
	int i, n;

	for (i = 0; i < EP_BATCH; i++) {
		e->riov[i].iov_len = SG_BUF_SIZE;
		e->rmsg[i].msg_hdr.msg_namelen = sizeof(e->raddr[i]);
		e->rmsg[i].msg_hdr.msg_flags = 0;
	}
	n = recvmmsg(fd, e->rmsg, EP_BATCH, MSG_DONTWAIT, NULL);
	return n < 0 ? 0 : n;
}

static void take_replies(struct ep *e)
{
	struct mmsghdr *m;
	struct sg_slot *s;
	int r, i, n;

	for (r = 0; r < EP_RX_BUDGET; r++) {
		n = recv_batch(e, e->tfd);
		for (i = 0; i < n; i++) {
			m = &e->rmsg[i];
			if (m->msg_hdr.msg_flags & MSG_TRUNC)
				e->t->st.truncated++;
			s = sg_reply(e->t, e->rbuf[i], m->msg_len,
				     (struct sockaddr *)&e->raddr[i],
				     m->msg_hdr.msg_namelen);
			if (s)
				finish(e, s);
		}
		if (n < EP_BATCH)
			break;
	}
}

static void take_requests(struct ep *e, uint64_t now)
{
	uint32_t cap = e->t->cfg->max_gathers;
	struct mmsghdr *m;
	struct sg_slot *s;
	int i, n;

	n = recv_batch(e, e->cfd);
	for (i = 0; i < n; i++) {
		m = &e->rmsg[i];
		if (m->msg_hdr.msg_flags & MSG_TRUNC) {
			e->t->st.requests++;
			e->t->st.refused++;
			continue;
		}
		s = sg_start(e->t, e->rbuf[i], m->msg_len,
			     (struct sockaddr *)&e->raddr[i],
			     m->msg_hdr.msg_namelen, now);
		if (!s)
			continue;
		s->queued = true;
		e->sendq[(e->sq_head + e->sq_len) % cap] = s;
		e->sq_len++;
	}
	if (n)
		pump(e);
}

int sg_run_epoll(struct sg_table *t, int cfd, int tfd)
{
	struct epoll_event ev, evs[4];
	uint64_t now, last = rr_now_ns();
	struct sg_slot *s;
	struct timespec ts;
	struct ep *e;
	int64_t wait;
	int n, i, ret = 0;
	bool tin, tout, cin;

	e = calloc(1, sizeof(*e));
	if (e)
		e->sendq = calloc(t->cfg->max_gathers, sizeof(*e->sendq));
	if (!e || !e->sendq) {
		free(e);
		fprintf(stderr, "%s: out of memory\n", SG_PROG);
		return -ENOMEM;
	}
	ep_init(e, t, cfd, tfd);
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e->epfd < 0) {
		ret = -errno;
		goto out;
	}
	ev.events = EPOLLIN;
	ev.data.fd = cfd;
	epoll_ctl(e->epfd, EPOLL_CTL_ADD, cfd, &ev);
	ev.data.fd = tfd;
	epoll_ctl(e->epfd, EPOLL_CTL_ADD, tfd, &ev);
	while (!sg_stop) {
		wait = t->cfg->busy ? 0 : sg_next_deadline(t, rr_now_ns());
		/* Without a deadline to wait for, wake now and then anyway:
		 * the verbose line, and nothing else, needs it. */
		if (wait < 0)
			wait = 1000000000;
		ts.tv_sec = wait / 1000000000;
		ts.tv_nsec = wait % 1000000000;
		n = epoll_pwait2(e->epfd, evs, 4, &ts, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			fprintf(stderr, "%s: epoll_pwait2: %s\n", SG_PROG,
				strerror(errno));
			break;
		}
		tin = tout = cin = false;
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == tfd) {
				tin |= !!(evs[i].events & (EPOLLIN | EPOLLERR));
				tout |= !!(evs[i].events & EPOLLOUT);
			} else {
				cin = true;
			}
		}
		/* Replies first: they finish gathers and free slots. */
		if (tin || t->cfg->busy)
			take_replies(e);
		if (tout)
			pump(e);
		now = rr_now_ns();
		if (cin || t->cfg->busy)
			take_requests(e, now);
		while ((s = sg_expired(t, now)))
			finish(e, s);
		if (e->ndone)
			flush_done(e);
		if (t->cfg->verbose && now - last >= 1000000000) {
			sg_stats_print(t, "epoll");
			last = now;
		}
	}
out:
	if (e->epfd >= 0)
		close(e->epfd);
	free(e->sendq);
	free(e);
	return ret;
}
