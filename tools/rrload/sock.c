// SPDX-License-Identifier: GPL-2.0
/*
 * The socket engine: connected UDP sockets, spread over threads, each
 * keeping a ring of the requests it has out.
 *
 * Every request is unique (connection id and sequence number in its first
 * 12 bytes, a pattern after that) and the client runs the function itself
 * on a copy to know the reply to expect. A sent entry keeps the expected reply's
 * length and 64-bit hash, so a reply is verified against the oldest
 * outstanding request first (the usual case) and against the whole ring
 * when replies come out of order. A reply that matches no request is
 * wrong and is charged to the oldest request out, which then counts as
 * done; one for a request already given up is late; a second one for an
 * answered request is a duplicate. So sent = answered + wrong + timeouts
 * (+ in flight when interrupted). The chance that a wrong reply passes as
 * right is that of a 64-bit hash collision.
 *
 * With --mix the requests are the work function's ("N" microseconds, then
 * a tag: a space, the 12 bytes and the pattern) and its replies say how
 * long the server spun, which the client cannot know: a reply is matched
 * by the hash of the tag it carries back, then its microseconds must be
 * its request's class's and the time spent at least that, else it is
 * wrong. Every class has its counters and latency histogram.
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

#include "log.h"
#include "registry.h"
#include "rrload.h"
#include "sock.h"

uint8_t *rl_pattern; /* PATTERN_LEN + RL_MAX_PAYLOAD bytes */

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
	/* --mix checks the work function's replies itself, on any port. */
	if (!c->fn && !cfg->nmix) {
		pr_warn("no function registered on port %u (use -f NAME)\n",
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
		pr_warn("cannot open a UDP socket: %s\n", strerror(-err));
		return err;
	}
	/* Open loop bursts; root may exceed rmem_max, others get what
	 * the system allows. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (cfg->bindlen &&
	    bind(fd, (const struct sockaddr *)&cfg->bind, cfg->bindlen)) {
		err = -errno;
		pr_warn("cannot send from --bind's address: %s\n",
			strerror(-err));
		close(fd);
		return err;
	}
	if (connect(fd, (struct sockaddr *)&ss, cfg->addrlen) ||
	    getsockname(fd, (struct sockaddr *)&local, &ll)) {
		err = -errno;
		pr_warn("cannot connect a UDP socket to port %u: %s\n", port,
			strerror(-err));
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
	rr_fn_request_bind(&c->req, rl_fn_instance(cfg, c->fn), thread,
			   c->fn_counters);
	c->ring = calloc(ring_size, sizeof(*c->ring));
	if (!c->ring) {
		pr_warn("out of memory\n");
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

	rl_pattern = malloc(PATTERN_LEN + RL_MAX_PAYLOAD);
	if (!rl_pattern) {
		pr_warn("out of memory\n");
		return -ENOMEM;
	}
	for (i = 0; i < PATTERN_LEN + RL_MAX_PAYLOAD; i++)
		rl_pattern[i] = (uint8_t)(xorshift(&rnd) >> 56);

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
		if (cfg->nmix)
			th[t].mix = calloc(cfg->nmix, sizeof(*th[t].mix));
		if (!th[t].conns || (cfg->nmix && !th[t].mix)) {
			pr_warn("out of memory\n");
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
		free(th[t].mix);
		th[t].mix = NULL;
		free(th[t].lost);
		th[t].lost = NULL;
	}
	free(rl_pattern);
	rl_pattern = NULL;
}

int rl_bufs_init(const struct rl_config *cfg, struct rl_bufs *b,
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

void rl_bufs_fini(struct rl_bufs *b)
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
int rl_epoll_setup(struct rl_thread *th)
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
