// SPDX-License-Identifier: GPL-2.0
/*
 * The socket engine: connected UDP sockets, spread over threads, each
 * keeping a ring of the requests it has out.
 *
 * Every request is unique (connection id and sequence number in its first
 * 12 bytes, a pattern after that) and the client runs the function itself
 * on a copy to know the reply to expect. A slot keeps the expected reply's
 * length and 64-bit hash, so a reply is verified against the oldest
 * outstanding request first (the usual case) and against the whole ring
 * when replies come out of order. A reply that matches no request is
 * wrong and is charged to the oldest request out, which then counts as
 * done; one for a request already given up is late; a second one for an
 * answered request is a duplicate. So sent = answered + wrong + timeouts
 * (+ in flight when interrupted). The chance that a wrong reply passes as
 * right is that of a 64-bit hash collision.
 *
 * Closed loop keeps INFLIGHT requests out per socket. Open loop sends on a
 * schedule, and a request's latency counts from when it was due, not from
 * when the client got round to sending it, so a client that falls behind
 * shows up in the tail instead of hiding it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "registry.h"
#include "rrload.h"

#define SEND_BATCH 32
#define RECV_BATCH 32
#define HDR_LEN 12 /* connection id and sequence number */
#define PATTERN_LEN 4096
#define EPOLL_EVENTS 64
#define MIN_SLEEP_NS 50000 /* a sleeping open loop wakes at most this often */

enum slot_state { SLOT_FREE, SLOT_OUT, SLOT_DONE, SLOT_EXPIRED, SLOT_LATE };

struct rl_slot {
	uint64_t t_ns; /* when sent (closed loop) or due (open loop) */
	uint64_t hash; /* of the expected reply */
	uint32_t len;  /* of the expected reply; UINT32_MAX: none expected */
	uint32_t state;
};

struct rl_conn {
	int fd;
	uint32_t id;
	const struct rr_function *fn;
	struct rr_request req; /* what the server's function will see */
	struct rl_slot *ring;
	uint64_t mask;
	uint64_t head; /* next sequence number */
	uint64_t tail; /* oldest request not yet answered or given up */
	uint32_t out;  /* requests outstanding */
	uint64_t fn_counters[RR_FN_MAX_COUNTERS]; /* the function's, unread */
};

/* Per-thread buffers, allocated by the thread itself (its NUMA node). */
struct rl_bufs {
	struct mmsghdr smsg[SEND_BATCH];
	struct iovec siov[SEND_BATCH];
	uint8_t *sbuf; /* SEND_BATCH * len_max */
	struct mmsghdr rmsg[RECV_BATCH];
	struct iovec riov[RECV_BATCH];
	uint8_t *rbuf; /* RECV_BATCH * rsize */
	size_t rsize;
	uint8_t *scratch; /* where the expected reply is computed */
	size_t room;
	uint64_t rnd;
};

static uint8_t *pattern; /* PATTERN_LEN + RL_MAX_PAYLOAD bytes */

uint64_t rl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Our own 64-bit mixing hash, one multiply per 8 bytes. */
static uint64_t rl_hash(const uint8_t *p, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p + i, len - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 32);
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static int conn_open(const struct rl_config *cfg, struct rl_conn *c,
		     uint32_t id, uint16_t port, uint64_t ring_size,
		     unsigned int thread)
{
	struct sockaddr_storage ss = cfg->addr, local;
	socklen_t ll = sizeof(local);
	int fd, err, sz = 4 << 20;

	c->id = id;
	c->fd = -1;
	c->fn = cfg->fn_override ? cfg->fn_override : rr_registry_by_port(port);
	if (!c->fn) {
		fprintf(stderr,
			"rrload: no function registered on port %u (use -f NAME)\n",
			port);
		return -ENOENT;
	}
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);

	fd = socket(cfg->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "rrload: cannot open a UDP socket: %s\n",
			strerror(-err));
		return err;
	}
	/* Open loop bursts; root may exceed rmem_max, others get what
	 * the system allows. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (connect(fd, (struct sockaddr *)&ss, cfg->addrlen) ||
	    getsockname(fd, (struct sockaddr *)&local, &ll)) {
		err = -errno;
		fprintf(stderr,
			"rrload: cannot connect a UDP socket to port %u: %s\n",
			port, strerror(-err));
		close(fd);
		return err;
	}
	c->fd = fd;
	memset(&c->req, 0, sizeof(c->req));
	c->req.family = cfg->family;
	c->req.dst_port = port;
	if (cfg->family == AF_INET) {
		c->req.src.v4 = ((struct sockaddr_in *)&local)->sin_addr;
		c->req.dst.v4 = ((struct sockaddr_in *)&ss)->sin_addr;
		c->req.src_port =
			ntohs(((struct sockaddr_in *)&local)->sin_port);
	} else {
		c->req.src.v6 = ((struct sockaddr_in6 *)&local)->sin6_addr;
		c->req.dst.v6 = ((struct sockaddr_in6 *)&ss)->sin6_addr;
		c->req.src_port =
			ntohs(((struct sockaddr_in6 *)&local)->sin6_port);
	}
	/* The state this thread's replies are checked with. */
	rr_fn_request_bind(&c->req, rl_fn_instance(c->fn), thread,
			   c->fn_counters);
	c->ring = calloc(ring_size, sizeof(*c->ring));
	if (!c->ring) {
		fprintf(stderr, "rrload: out of memory\n");
		close(fd);
		c->fd = -1;
		return -ENOMEM;
	}
	c->mask = ring_size - 1;
	return 0;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

int sock_engine_init(struct rl_config *cfg, struct rl_thread *th)
{
	uint64_t ring, per_conn, rnd = 0x2545f4914f6cdd1dull;
	unsigned int t, i, k, id = 0;
	int err;

	pattern = malloc(PATTERN_LEN + RL_MAX_PAYLOAD);
	if (!pattern) {
		fprintf(stderr, "rrload: out of memory\n");
		return -ENOMEM;
	}
	for (i = 0; i < PATTERN_LEN + RL_MAX_PAYLOAD; i++)
		pattern[i] = (uint8_t)(xorshift(&rnd) >> 56);

	/* The ring holds what is out plus what was given up recently, so a
	 * late reply is still recognised rather than called wrong. */
	ring = 4ull * cfg->inflight;
	if (cfg->rate > 0) {
		per_conn = (uint64_t)(cfg->rate / cfg->conns *
				      (double)cfg->timeout_ns / 1e9 * 2) +
			   1;
		if (per_conn > ring)
			ring = per_conn;
	}
	if (ring < 256)
		ring = 256;
	if (ring > (1u << 20))
		ring = 1u << 20;
	ring = pow2_at_least(ring);

	for (t = 0; t < cfg->threads; t++) {
		th[t].nconns = cfg->conns / cfg->threads +
			       (t < cfg->conns % cfg->threads);
		th[t].conns = calloc(th[t].nconns, sizeof(struct rl_conn));
		if (!th[t].conns) {
			fprintf(stderr, "rrload: out of memory\n");
			return -ENOMEM;
		}
		for (k = 0; k < th[t].nconns; k++) {
			th[t].conns[k].fd = -1;
			err = conn_open(cfg, &th[t].conns[k], id,
					cfg->ports[id % cfg->nports], ring, t);
			if (err)
				return err;
			id++;
		}
	}
	return 0;
}

void sock_engine_fini(struct rl_config *cfg, struct rl_thread *th)
{
	unsigned int t, k;

	for (t = 0; th && t < cfg->threads; t++) {
		for (k = 0; th[t].conns && k < th[t].nconns; k++) {
			if (th[t].conns[k].fd >= 0)
				close(th[t].conns[k].fd);
			free(th[t].conns[k].ring);
		}
		free(th[t].conns);
		th[t].conns = NULL;
		free(th[t].lost);
		th[t].lost = NULL;
	}
	free(pattern);
	pattern = NULL;
}

static unsigned int pick_len(const struct rl_config *cfg, struct rl_bufs *b)
{
	if (cfg->len_min == cfg->len_max)
		return cfg->len_min;
	return cfg->len_min + (unsigned int)(xorshift(&b->rnd) %
					     (cfg->len_max - cfg->len_min + 1));
}

/* Builds request @seq of @c in @buf and records what to expect in @s. */
static unsigned int make_request(const struct rl_config *cfg, struct rl_bufs *b,
				 struct rl_conn *c, uint64_t seq, uint8_t *buf,
				 struct rl_slot *s)
{
	unsigned int len;
	uint8_t hdr[HDR_LEN];
	int r;

	if (cfg->npayloads) {
		/* Given requests, in turn, the connections out of step. */
		const struct rl_payload *p =
			&cfg->payloads[(seq + c->id) % cfg->npayloads];

		len = p->len;
		memcpy(buf, p->data, len);
	} else {
		len = pick_len(cfg, b);
		memcpy(buf,
		       pattern + ((seq * 64 + c->id * 8) & (PATTERN_LEN - 1)),
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
 * Whatever the kernel does not take, or the ring has no slot for, counts
 * as a send error. Returns @n: they are used up either way.
 */
static unsigned int send_batch(struct rl_thread *th, struct rl_bufs *b,
			       struct rl_conn *c, unsigned int n, uint64_t t0,
			       double step)
{
	const struct rl_config *cfg = th->cfg;
	uint64_t room = ring_room(c);
	unsigned int i, want = n;
	struct rl_slot *s;
	int r;

	if (n > room)
		n = (unsigned int)room;
	for (i = 0; i < n; i++) {
		s = &c->ring[(c->head + i) & c->mask];
		b->siov[i].iov_base = b->sbuf + (size_t)i * cfg->len_max;
		b->siov[i].iov_len = make_request(cfg, b, c, c->head + i,
						  b->siov[i].iov_base, s);
		s->t_ns = t0 + (uint64_t)(step * i);
		s->state = SLOT_OUT;
	}
	r = n ? sendmmsg(c->fd, b->smsg, n, MSG_DONTWAIT) : 0;
	if (r < 0)
		r = 0;
	for (i = (unsigned int)r; i < n; i++)
		c->ring[(c->head + i) & c->mask].state = SLOT_FREE;
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
	       c->ring[c->tail & c->mask].state != SLOT_OUT)
		c->tail++;
}

static void answer(struct rl_thread *th, struct rl_conn *c, struct rl_slot *s,
		   uint64_t now)
{
	s->state = SLOT_DONE;
	c->out--;
	rl_inc(&th->c.answered, 1);
	hist_add(&th->hist, now > s->t_ns ? now - s->t_ns : 0);
	advance_tail(c);
}

static void on_reply(struct rl_thread *th, struct rl_conn *c,
		     const uint8_t *buf, uint32_t len, uint64_t now)
{
	uint64_t h = rl_hash(buf, len), seq, lo;
	struct rl_slot *s, *alt = NULL;

	if (c->tail < c->head) {
		s = &c->ring[c->tail & c->mask];
		if (s->hash == h && s->len == len) {
			answer(th, c, s, now);
			return;
		}
	}
	lo = c->head > c->mask + 1 ? c->head - c->mask - 1 : 0;
	for (seq = lo; seq < c->head; seq++) {
		s = &c->ring[seq & c->mask];
		if (s->hash != h || s->len != len || s->state == SLOT_FREE)
			continue;
		if (s->state == SLOT_OUT) {
			answer(th, c, s, now);
			return;
		}
		if (!alt)
			alt = s;
	}
	if (!alt) {
		/* Blame the oldest request: the server answered something,
		 * and waiting for its timeout would stall a closed loop. */
		rl_inc(&th->c.wrong, 1);
		if (c->tail < c->head) {
			s = &c->ring[c->tail & c->mask];
			s->state = SLOT_DONE;
			c->out--;
			advance_tail(c);
		}
	} else if (alt->state == SLOT_EXPIRED) {
		alt->state = SLOT_LATE;
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
		now = rl_now_ns();
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
	struct rl_slot *s;

	while (c->tail < c->head) {
		s = &c->ring[c->tail & c->mask];
		if (s->state == SLOT_OUT) {
			if (now - s->t_ns < th->cfg->timeout_ns &&
			    now >= s->t_ns)
				break;
			s->state = SLOT_EXPIRED;
			c->out--;
			rl_inc(&th->c.timeouts, 1);
			if (th->cfg->lost_file)
				note_lost(th, s->t_ns);
		}
		c->tail++;
	}
}

static int bufs_init(const struct rl_config *cfg, struct rl_bufs *b,
		     unsigned int idx)
{
	unsigned int i;

	memset(b, 0, sizeof(*b));
	b->room = RL_ROOM;
	b->rsize = (cfg->len_max > RL_ROOM ? cfg->len_max : RL_ROOM) + 64;
	b->sbuf = malloc((size_t)SEND_BATCH * cfg->len_max);
	b->rbuf = malloc((size_t)RECV_BATCH * b->rsize);
	b->scratch = malloc(b->rsize);
	if (!b->sbuf || !b->rbuf || !b->scratch)
		return -ENOMEM;
	for (i = 0; i < SEND_BATCH; i++) {
		b->smsg[i].msg_hdr.msg_iov = &b->siov[i];
		b->smsg[i].msg_hdr.msg_iovlen = 1;
	}
	for (i = 0; i < RECV_BATCH; i++) {
		b->riov[i].iov_base = b->rbuf + (size_t)i * b->rsize;
		b->riov[i].iov_len = b->rsize;
		b->rmsg[i].msg_hdr.msg_iov = &b->riov[i];
		b->rmsg[i].msg_hdr.msg_iovlen = 1;
	}
	b->rnd = 0x9e3779b97f4a7c15ull * (idx + 1);
	return 0;
}

static void bufs_fini(struct rl_bufs *b)
{
	free(b->sbuf);
	free(b->rbuf);
	free(b->scratch);
}

/*
 * Sleeping mode waits in epoll, so a round reads only the sockets that
 * have replies: a receive call on each of 64 idle sockets per round
 * would cost more than the requests themselves. Busy mode reads every
 * socket each round instead; that is what spinning is for.
 */
static int epoll_setup(struct rl_thread *th)
{
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned int k;
	int ep;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return -errno;
	for (k = 0; k < th->nconns; k++) {
		ev.data.ptr = &th->conns[k];
		if (epoll_ctl(ep, EPOLL_CTL_ADD, th->conns[k].fd, &ev)) {
			close(ep);
			return -errno;
		}
	}
	return ep;
}

/* Reads the sockets epoll reports ready, waiting up to @wait_ns. */
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

void *sock_engine_run(void *arg)
{
	struct rl_thread *th = arg;
	const struct rl_config *cfg = th->cfg;
	uint64_t start, now, end_send, drain_end = 0, sched = 0, due, out = 0;
	uint64_t budget = th->budget, next_due, wait, next_expire = 0;
	double step = th->rate > 0 ? 1e9 / th->rate : 0;
	unsigned int k, rr = 0, n, progress;
	struct rl_conn *c;
	struct rl_bufs b;
	bool sending = true;
	int ep = -1;

	rl_pin(cfg, th->idx);
	th->err = bufs_init(cfg, &b, th->idx);
	if (!th->err && !cfg->busy) {
		ep = epoll_setup(th);
		if (ep < 0)
			th->err = ep;
	}
	if (th->err)
		goto out;

	start = rl_now_ns();
	th->t_start = start;
	end_send = cfg->duration > 0 ? start + (uint64_t)(cfg->duration * 1e9)
				     : UINT64_MAX;
	while (!rl_stop) {
		now = rl_now_ns();
		if (sending && (now >= end_send || !budget)) {
			sending = false;
			th->t_send_end = now;
			drain_end = now + cfg->timeout_ns;
			next_expire = 0;
		}
		progress = 0;
		if (sending && step > 0) {
			due = (uint64_t)((double)(now - start) / step) + 1 -
			      sched;
			if (due > budget)
				due = budget;
			/* Far behind: catch up in steps, reading replies
			 * in between, rather than in one burst. */
			if (due > 8 * SEND_BATCH)
				due = 8 * SEND_BATCH;
			while (due) {
				c = &th->conns[rr];
				rr = (rr + 1) % th->nconns;
				n = due < SEND_BATCH ? (unsigned int)due
						     : SEND_BATCH;
				n = send_batch(
					th, &b, c, n,
					start + (uint64_t)(step *
							   (double)sched),
					step);
				sched += n;
				due -= n;
				budget -= n;
				progress += n;
			}
		} else if (sending) {
			for (k = 0; k < th->nconns && budget; k++) {
				c = &th->conns[k];
				if (c->out >= cfg->inflight)
					continue;
				/* One batch per socket per round; deeper
				 * windows fill over the next rounds. */
				n = cfg->inflight - c->out;
				if (n > budget)
					n = (unsigned int)budget;
				if (n > SEND_BATCH)
					n = SEND_BATCH;
				/* Out-of-order answers can leave the ring
				 * full: wait for them. */
				if (n > ring_room(c))
					n = (unsigned int)ring_room(c);
				if (!n)
					continue;
				send_batch(th, &b, c, n, rl_now_ns(), 0);
				budget -= n;
				progress += n;
			}
		}
		if (cfg->busy)
			for (k = 0; k < th->nconns; k++)
				progress += recv_conn(th, &b, &th->conns[k]);
		else
			progress += recv_ready(th, &b, ep, 0);

		/* Timeouts are in milliseconds: look for them (and count
		 * what is out) once a millisecond, not every round. */
		now = rl_now_ns();
		if (now >= next_expire || (!sending && !progress)) {
			out = 0;
			for (k = 0; k < th->nconns; k++) {
				expire(th, &th->conns[k], now);
				out += th->conns[k].out;
			}
			next_expire = now + 1000000;
			if (!sending && (!out || now >= drain_end))
				break;
		}
		if (progress || cfg->busy)
			continue;
		/* Nothing to do: sleep until a reply, the next send or the
		 * next timeout check. A sleeping open loop sends what fell
		 * due in the meantime (latency still counts from when each
		 * was due); use --busy for sub-50 us precision. */
		wait = next_expire > now ? next_expire - now : 0;
		if (sending && step > 0) {
			next_due = start + (uint64_t)(step * (double)sched);
			wait = next_due > now ? next_due - now : 0;
			if (wait < MIN_SLEEP_NS)
				wait = MIN_SLEEP_NS;
		}
		if (wait)
			recv_ready(th, &b, ep, wait);
	}
	if (!th->t_send_end)
		th->t_send_end = rl_now_ns();
	out = 0;
	for (k = 0; k < th->nconns; k++)
		out += th->conns[k].out;
	__atomic_store_n(&th->c.in_flight, out, __ATOMIC_RELAXED);
out:
	if (ep >= 0)
		close(ep);
	bufs_fini(&b);
	__atomic_store_n(&th->done, true, __ATOMIC_RELEASE);
	return NULL;
}
