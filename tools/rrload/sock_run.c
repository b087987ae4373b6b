// SPDX-License-Identifier: GPL-2.0
/*
 * The socket engine's thread (sock.c sets it up): sends on a schedule
 * (open loop) or keeps a window full (closed loop), receives, matches
 * and verifies replies against the ring of requests out, and gives up
 * requests that time out.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "clock.h"
#include "registry.h"
#include "sock.h"

static unsigned int pick_len(const struct rl_config *cfg, struct rl_bufs *b)
{
	if (cfg->len_min == cfg->len_max)
		return cfg->len_min;
	return cfg->len_min + (unsigned int)(xorshift(&b->rnd) %
					     (cfg->len_max - cfg->len_min + 1));
}

/* --mix: a class, by weight. */
static unsigned int pick_class(const struct rl_config *cfg, struct rl_bufs *b)
{
	uint64_t r;
	unsigned int i;

	if (cfg->nmix == 1)
		return 0;
	r = xorshift(&b->rnd) % cfg->mix_weights;
	for (i = 0; i + 1 < cfg->nmix; i++) {
		if (r < cfg->mix[i].weight)
			break;
		r -= cfg->mix[i].weight;
	}
	return i;
}

/*
 * --mix: request @seq of @c for the work function in @buf, "N", then the
 * tag (a space, the connection id and sequence, the pattern up to -l's
 * size), whose hash and length @s keeps: the reply carries it back after
 * the microseconds and the time spent.
 */
static unsigned int make_mix_request(const struct rl_config *cfg,
				     struct rl_bufs *b, struct rl_conn *c,
				     uint64_t seq, uint8_t *buf,
				     struct rl_sent *s)
{
	unsigned int cls = pick_class(cfg, b), len = pick_len(cfg, b), n;
	char num[16];

	n = (unsigned int)snprintf(num, sizeof(num), "%u", cfg->mix[cls].us);
	if (len < n + 1 + HDR_LEN)
		len = n + 1 + HDR_LEN; /* args.c made -l at least that */
	memcpy(buf, num, n);
	buf[n] = ' ';
	memcpy(buf + n + 1, &c->id, 4);
	memcpy(buf + n + 5, &seq, 8);
	memcpy(buf + n + 1 + HDR_LEN,
	       rl_pattern + ((seq * 64 + c->id * 8) & (PATTERN_LEN - 1)),
	       len - n - 1 - HDR_LEN);
	s->len = len - n;
	s->hash = rl_hash(buf + n, s->len);
	s->cls = (uint16_t)cls;
	return len;
}

/* Builds request @seq of @c in @buf and records what to expect in @s. */
static unsigned int make_request(const struct rl_config *cfg, struct rl_bufs *b,
				 struct rl_conn *c, uint64_t seq, uint8_t *buf,
				 struct rl_sent *s)
{
	unsigned int len;
	uint8_t hdr[HDR_LEN];
	int r;

	if (cfg->nmix)
		return make_mix_request(cfg, b, c, seq, buf, s);
	if (cfg->npayloads) {
		/* Given requests, in turn, the connections out of step. */
		const struct rl_payload *p =
			&cfg->payloads[(seq + c->id) % cfg->npayloads];

		len = p->len;
		memcpy(buf, p->data, len);
	} else {
		len = pick_len(cfg, b);
		memcpy(buf,
		       rl_pattern +
			       ((seq * 64 + c->id * 8) & (PATTERN_LEN - 1)),
		       len);
		memcpy(hdr, &c->id, 4);
		memcpy(hdr + 4, &seq, 8);
		memcpy(buf, hdr, len < HDR_LEN ? len : HDR_LEN);
	}

	memcpy(b->scratch, buf, len);
	r = c->fn->handler(&c->req, b->scratch, len,
			   len > b->room ? len : b->room);
	if (r < 0) {
		/* The server will drop it; it can only time out. */
		s->len = UINT32_MAX;
		s->hash = 0;
	} else {
		s->len = (uint32_t)r;
		s->hash = rl_hash(b->scratch, (size_t)r);
	}
	return len;
}

static uint64_t ring_room(const struct rl_conn *c)
{
	return c->mask + 1 - (c->head - c->tail);
}

/*
 * Sends @n (<= SEND_BATCH) requests on @c; open loop passes when the first
 * was due (@t0) and the interval, closed loop passes @step 0 and now.
 * Whatever the kernel does not take, or the ring has no room for, counts
 * as a send error. Returns @n: they are used up either way.
 */
static unsigned int send_batch(struct rl_thread *th, struct rl_bufs *b,
			       struct rl_conn *c, unsigned int n, uint64_t t0,
			       double step)
{
	const struct rl_config *cfg = th->cfg;
	uint64_t room = ring_room(c);
	unsigned int i, want = n;
	struct rl_sent *s;
	int r;

	if (n > room)
		n = (unsigned int)room;
	for (i = 0; i < n; i++) {
		s = &c->ring[(c->head + i) & c->mask];
		b->siov[i].iov_base = b->sbuf + (size_t)i * cfg->len_max;
		b->siov[i].iov_len = make_request(cfg, b, c, c->head + i,
						  b->siov[i].iov_base, s);
		s->t_ns = t0 + (uint64_t)(step * i);
		s->state = SENT_OUT;
	}
	r = n ? sendmmsg(c->fd, b->smsg, n, MSG_DONTWAIT) : 0;
	if (r < 0)
		r = 0;
	for (i = 0; th->mix && i < (unsigned int)r; i++)
		rl_inc(&th->mix[c->ring[(c->head + i) & c->mask].cls].sent, 1);
	for (i = (unsigned int)r; i < n; i++)
		c->ring[(c->head + i) & c->mask].state = SENT_FREE;
	c->head += (unsigned int)r;
	c->out += (unsigned int)r;
	rl_inc(&th->c.sent, (unsigned int)r);
	if (want > (unsigned int)r)
		rl_inc(&th->c.send_errors, want - (unsigned int)r);
	return want;
}

static void advance_tail(struct rl_conn *c)
{
	while (c->tail < c->head &&
	       c->ring[c->tail & c->mask].state != SENT_OUT)
		c->tail++;
}

/* @s got its reply at @now; --mix: one that said the server spun
 * @server_ns. */
static void answer(struct rl_thread *th, struct rl_conn *c, struct rl_sent *s,
		   uint64_t now, uint64_t server_ns)
{
	uint64_t lat = now > s->t_ns ? now - s->t_ns : 0;
	struct rl_class_stats *m;

	s->state = SENT_DONE;
	c->out--;
	rl_inc(&th->c.answered, 1);
	hist_add(&th->hist, lat);
	if (th->mix) {
		m = &th->mix[s->cls];
		rl_inc(&m->answered, 1);
		rl_inc(&m->server_ns, server_ns);
		hist_add(&m->hist, lat);
	}
	advance_tail(c);
}

/* A wrong reply, charged to @s (done with it), or to the oldest request
 * out when it matches none: the server answered something, and waiting
 * for its timeout would stall a closed loop. */
static void wrong(struct rl_thread *th, struct rl_conn *c, struct rl_sent *s)
{
	rl_inc(&th->c.wrong, 1);
	if (!s && c->tail < c->head)
		s = &c->ring[c->tail & c->mask];
	if (s) {
		s->state = SENT_DONE;
		c->out--;
		advance_tail(c);
	}
}

/*
 * --mix: a work function's reply, "US NS" then the tag. Returns the
 * tag's offset, or 0 if it is no such reply.
 */
static uint32_t parse_mix_reply(const uint8_t *buf, uint32_t len, uint64_t *us,
				uint64_t *ns)
{
	uint32_t i = 0, start;

	*us = 0;
	*ns = 0;
	while (i < len && i < 9 && buf[i] >= '0' && buf[i] <= '9')
		*us = *us * 10 + (uint64_t)(buf[i++] - '0');
	if (!i || i >= len || buf[i++] != ' ')
		return 0;
	start = i;
	while (i < len && i - start < 19 && buf[i] >= '0' && buf[i] <= '9')
		*ns = *ns * 10 + (uint64_t)(buf[i++] - '0');
	return i > start ? i : 0;
}

static void on_reply(struct rl_thread *th, struct rl_conn *c,
		     const uint8_t *buf, uint32_t len, uint64_t now)
{
	uint64_t h, seq, lo, us = 0, ns = 0;
	struct rl_sent *s, *alt = NULL;
	uint32_t tag;

	if (th->mix) {
		tag = parse_mix_reply(buf, len, &us, &ns);
		if (!tag) {
			wrong(th, c, NULL);
			return;
		}
		buf += tag;
		len -= tag;
	}
	h = rl_hash(buf, len);
	s = NULL;
	if (c->tail < c->head) {
		s = &c->ring[c->tail & c->mask];
		if (s->hash != h || s->len != len)
			s = NULL;
	}
	lo = c->head > c->mask + 1 ? c->head - c->mask - 1 : 0;
	for (seq = lo; !s && seq < c->head; seq++) {
		s = &c->ring[seq & c->mask];
		if (s->hash == h && s->len == len && s->state == SENT_OUT)
			break;
		if (s->hash == h && s->len == len && s->state != SENT_FREE &&
		    !alt)
			alt = s;
		s = NULL;
	}
	if (s) {
		/* --mix: its class's microseconds, and spun at least that. */
		if (th->mix &&
		    (us != th->cfg->mix[s->cls].us || ns < us * 1000))
			wrong(th, c, s);
		else
			answer(th, c, s, now, ns);
		return;
	}
	if (!alt) {
		wrong(th, c, NULL);
	} else if (alt->state == SENT_EXPIRED) {
		alt->state = SENT_LATE;
		rl_inc(&th->c.late, 1);
	} else {
		rl_inc(&th->c.duplicates, 1);
	}
}

static unsigned int recv_conn(struct rl_thread *th, struct rl_bufs *b,
			      struct rl_conn *c)
{
	unsigned int total = 0;
	uint64_t now;
	int r, i;

	do {
		r = recvmmsg(c->fd, b->rmsg, RECV_BATCH, MSG_DONTWAIT, NULL);
		if (r <= 0) {
			/* An ICMP port unreachable surfaces here once. */
			if (r < 0 && errno == ECONNREFUSED)
				rl_inc(&th->c.refused, 1);
			break;
		}
		now = rr_now_ns();
		for (i = 0; i < r; i++) {
			if (b->rmsg[i].msg_hdr.msg_flags & MSG_TRUNC)
				rl_inc(&th->c.wrong, 1);
			else
				on_reply(th, c, b->rbuf + (size_t)i * b->rsize,
					 b->rmsg[i].msg_len, now);
			b->rmsg[i].msg_hdr.msg_flags = 0;
		}
		total += (unsigned int)r;
	} while (r == RECV_BATCH && total < 4 * RECV_BATCH);
	return total;
}

/* Remembers when a request that is given up went out, for --lost. Past
 * what memory allows, the rest go uncounted there (never in timeouts). */
static void note_lost(struct rl_thread *th, uint64_t t_ns)
{
	size_t cap = th->lost_cap ? th->lost_cap * 2 : 1024;
	uint64_t *n;

	if (th->nlost == th->lost_cap) {
		n = realloc(th->lost, sizeof(*n) * cap);
		if (!n)
			return;
		th->lost = n;
		th->lost_cap = cap;
	}
	th->lost[th->nlost++] = t_ns;
}

static void expire(struct rl_thread *th, struct rl_conn *c, uint64_t now)
{
	struct rl_sent *s;

	while (c->tail < c->head) {
		s = &c->ring[c->tail & c->mask];
		if (s->state == SENT_OUT) {
			if (now - s->t_ns < th->cfg->timeout_ns &&
			    now >= s->t_ns)
				break;
			s->state = SENT_EXPIRED;
			c->out--;
			rl_inc(&th->c.timeouts, 1);
			if (th->mix)
				rl_inc(&th->mix[s->cls].timeouts, 1);
			if (th->cfg->lost_file)
				note_lost(th, s->t_ns);
		}
		c->tail++;
	}
}

static unsigned int recv_ready(struct rl_thread *th, struct rl_bufs *b, int ep,
			       uint64_t wait_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(wait_ns / 1000000000ull),
			       .tv_nsec = (long)(wait_ns % 1000000000ull) };
	struct epoll_event ev[EPOLL_EVENTS];
	unsigned int got = 0;
	int n, i;

	n = epoll_pwait2(ep, ev, EPOLL_EVENTS, &ts, NULL);
	for (i = 0; i < n; i++)
		got += recv_conn(th, b, ev[i].data.ptr);
	return got;
}

/* Where one thread's run stands: the send phase and its open-loop
 * schedule, the drain after it, and when timeouts are next looked for. */
struct run {
	uint64_t start, end_send, drain_end, next_expire;
	uint64_t sched;	 /* open loop: requests scheduled so far */
	uint64_t budget; /* requests still to send */
	double step;	 /* open loop: ns between requests; 0: closed */
	unsigned int rr; /* open loop: next socket */
	bool sending;
	int ep; /* epoll instance, -1 when busy-polling */
};

/* Open loop: sends what fell due by @now, in batches round the sockets. */
static unsigned int send_due(struct rl_thread *th, struct rl_bufs *b,
			     struct run *r, uint64_t now)
{
	uint64_t due =
		(uint64_t)((double)(now - r->start) / r->step) + 1 - r->sched;
	unsigned int n, progress = 0;
	struct rl_conn *c;

	if (due > r->budget)
		due = r->budget;
	/* Far behind: catch up in steps, reading replies in between,
	 * rather than in one burst. */
	if (due > 8 * SEND_BATCH)
		due = 8 * SEND_BATCH;
	while (due) {
		c = &th->conns[r->rr];
		r->rr = (r->rr + 1) % th->nconns;
		n = due < SEND_BATCH ? (unsigned int)due : SEND_BATCH;
		n = send_batch(th, b, c, n,
			       r->start +
				       (uint64_t)(r->step * (double)r->sched),
			       r->step);
		r->sched += n;
		due -= n;
		r->budget -= n;
		progress += n;
	}
	return progress;
}

/* Closed loop: tops every socket up to its window, a batch at a time. */
static unsigned int send_window(struct rl_thread *th, struct rl_bufs *b,
				struct run *r)
{
	const struct rl_config *cfg = th->cfg;
	unsigned int k, n, progress = 0;
	struct rl_conn *c;

	for (k = 0; k < th->nconns && r->budget; k++) {
		c = &th->conns[k];
		if (c->out >= cfg->inflight)
			continue;
		/* One batch per socket per round; deeper windows fill over
		 * the next rounds. */
		n = cfg->inflight - c->out;
		if (n > r->budget)
			n = (unsigned int)r->budget;
		if (n > SEND_BATCH)
			n = SEND_BATCH;
		/* Out-of-order answers can leave the ring full: wait for
		 * them. */
		if (n > ring_room(c))
			n = (unsigned int)ring_room(c);
		if (!n)
			continue;
		send_batch(th, b, c, n, rr_now_ns(), 0);
		r->budget -= n;
		progress += n;
	}
	return progress;
}

/* The requests out on every socket. */
static uint64_t requests_out(const struct rl_thread *th)
{
	uint64_t out = 0;
	unsigned int k;

	for (k = 0; k < th->nconns; k++)
		out += th->conns[k].out;
	return out;
}

/*
 * Timeouts are in milliseconds: looks for them once a millisecond, not
 * every round (or at once when the drain made no progress). Returns true
 * when the run is over: sending done, and nothing out or the drain over.
 */
static bool check_timeouts(struct rl_thread *th, struct run *r,
			   unsigned int progress)
{
	uint64_t now = rr_now_ns();
	unsigned int k;

	if (now < r->next_expire && (r->sending || progress))
		return false;
	for (k = 0; k < th->nconns; k++)
		expire(th, &th->conns[k], now);
	r->next_expire = now + 1000000;
	return !r->sending && (!requests_out(th) || now >= r->drain_end);
}

/*
 * Nothing to do: sleeps until a reply, the next send or the next timeout
 * check. A sleeping open loop sends what fell due in the meantime
 * (latency still counts from when each was due); use --busy for sub-50 us
 * precision.
 */
static void idle(struct rl_thread *th, struct rl_bufs *b, struct run *r)
{
	uint64_t now = rr_now_ns(), next_due, wait;

	wait = r->next_expire > now ? r->next_expire - now : 0;
	if (r->sending && r->step > 0) {
		next_due = r->start + (uint64_t)(r->step * (double)r->sched);
		wait = next_due > now ? next_due - now : 0;
		if (wait < MIN_SLEEP_NS)
			wait = MIN_SLEEP_NS;
	}
	if (wait)
		recv_ready(th, b, r->ep, wait);
}

/* The send and receive loop, until the run is over or a signal stops it. */
static void run_loop(struct rl_thread *th, struct rl_bufs *b, struct run *r)
{
	const struct rl_config *cfg = th->cfg;
	unsigned int k, progress;
	uint64_t now;

	while (!*th->stop) {
		now = rr_now_ns();
		if (r->sending && (now >= r->end_send || !r->budget)) {
			r->sending = false;
			th->t_send_end = now;
			r->drain_end = now + cfg->timeout_ns;
			r->next_expire = 0;
		}
		progress = 0;
		if (r->sending && r->step > 0)
			progress += send_due(th, b, r, now);
		else if (r->sending)
			progress += send_window(th, b, r);
		if (cfg->busy)
			for (k = 0; k < th->nconns; k++)
				progress += recv_conn(th, b, &th->conns[k]);
		else
			progress += recv_ready(th, b, r->ep, 0);
		if (check_timeouts(th, r, progress))
			break;
		if (!progress && !cfg->busy)
			idle(th, b, r);
	}
}

void *sock_engine_run(void *arg)
{
	struct rl_thread *th = arg;
	const struct rl_config *cfg = th->cfg;
	struct run r = {
		.budget = th->budget,
		.step = th->rate > 0 ? 1e9 / th->rate : 0,
		.sending = true,
		.ep = -1,
	};
	struct rl_bufs b;

	rl_pin(cfg, th->idx);
	th->err = rl_bufs_init(cfg, &b, th->idx);
	if (!th->err && !cfg->busy) {
		r.ep = rl_epoll_setup(th);
		if (r.ep < 0)
			th->err = r.ep;
	}
	if (th->err)
		goto out;

	r.start = rr_now_ns();
	th->t_start = r.start;
	r.end_send = cfg->duration > 0
			     ? r.start + (uint64_t)(cfg->duration * 1e9)
			     : UINT64_MAX;
	run_loop(th, &b, &r);
	if (!th->t_send_end)
		th->t_send_end = rr_now_ns();
	__atomic_store_n(&th->c.in_flight, requests_out(th), __ATOMIC_RELAXED);
out:
	if (r.ep >= 0)
		close(r.ep);
	rl_bufs_fini(&b);
	__atomic_store_n(&th->done, true, __ATOMIC_RELEASE);
	return NULL;
}
