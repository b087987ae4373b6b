// SPDX-License-Identifier: GPL-2.0
/*
 * TCP for functions (see tcp.h): one event loop over every listener and
 * connection, in the manner RFC 7766 asks of DNS servers. Messages are
 * framed by a two-byte length; a connection may pipeline many, answered in
 * order. No client can hold the loop: every socket is non-blocking, a
 * connection that stops halfway through a message or leaves its replies
 * unread is closed after tcp_io_timeout, one with nothing under way after
 * tcp_idle_timeout, and replies waiting for a slow reader stop that
 * connection's reading, nobody else's. Connections are bounded in all,
 * per source address and per source prefix, and checked against the
 * function's allow-list.
 *
 * The pool cannot be held by a few (admit(), sweep()): a prefix past its
 * share gives up its own connection idle longest for a newcomer, a full
 * pool its connection idle longest, whoever holds it; and past half full,
 * the idle time-out shrinks with every connection taken, so that a pool
 * near full holds connections in use, not ones kept open by a message
 * every few seconds. Only an address past tcp_max_per_source, or a pool
 * (or a prefix) whose every connection has work under way, is refused.
 *
 * The loop is run as a thread or a cell, and handed over to a fresh one
 * when the functions or the listeners change, by cells/tcp_loops.c,
 * through rr_tcp_serve_*(): a retiring loop stops accepting, answers what
 * its connections have under way, closes each as it falls idle, and
 * exits. A client sees at worst its idle connection closed, which RFC
 * 7766 clients expect.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "expo.h"
#include "invoker.h"
#include "invoker.h"
#include "log.h"
#include "seccomp.h"
#include "tcp.h"
#include "util.h"
#include "validate.h"

#define REPORTS_SIZE (sizeof(struct rr_tcp_report) * RR_TCP_LOOPS)
/* A message's and a reply's most bytes: the framing's. */
#define TCP_ROOM 65535U
#define FRAME_HDR 2U
/* Replies unread past this stop the connection's reading until they go:
 * with a message (64 KB) and a reply being made, a connection holds
 * about 150 KB at most, so tcp_max_connections bounds the memory. */
#define OUT_HIGH (16U * 1024)
#define LISTEN_BACKLOG 1024
#define TICK_MS 50
#define ACCEPTS_PER_EVENT 64
#define LISTENER (1ULL << 63)

struct conn {
	int fd; /* -1: free */
	uint32_t slot;
	struct rr_request peer; /* addresses and ports, transport */
	uint8_t *in;
	uint32_t in_off, in_len, in_cap; /* bytes in[in_off..in_len) */
	uint8_t *out;
	uint32_t out_off, out_len, out_cap; /* unsent: out[out_off..out_len) */
	uint64_t active_ns;		    /* the last message or reply done */
	uint64_t in_since;  /* a message under way since; 0: none */
	uint64_t out_since; /* replies unsent, no progress since; 0: none */
	uint32_t events;    /* as armed in epoll */
	bool eof;	    /* the client sent FIN */
};

struct loop {
	struct rr_invoker *inv;
	struct rr_tcp_report *rep;
	uint32_t li;
	bool cell;
	bool retiring;
	int ep;
	int lfd[RR_MAX_SLOTS];
	struct conn *conns;
	uint32_t nconns, open;
	uint32_t *free_idx; /* a stack of free conns[] entries */
	uint32_t nfree;
	uint8_t *scratch; /* a message and its reply, framed */
	uint64_t now;
	uint64_t call_seq;
	uint64_t idle_ns, io_ns;
	uint64_t idle_full_ns;	   /* the idle time-out of a full pool */
	uint32_t prefix4, prefix6; /* bits of a source prefix */
	/* Out of descriptors: accepting paused until then (0: not). */
	uint64_t accept_paused_until;
};

/* ---- Listeners: the main thread's ---- */

static int listen_on(const struct rr_invoker *inv, uint16_t port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	const char *ifname = inv->cfg->ifname;
	int fd, one = 1, zero = 0, lowat = OUT_HIGH, ret;
	struct sockaddr *a = (struct sockaddr *)&a6;
	socklen_t alen = sizeof(a6);

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		/* Both families on one socket: IPv4 peers as ::ffff:a.b.c.d. */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	} else if (errno == EAFNOSUPPORT) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    0);
		a = (struct sockaddr *)&a4;
		alen = sizeof(a4);
	}
	if (fd < 0)
		return -errno;
	/* Replies are whole frames: Nagle would only hold the second of two
	 * pipelined ones back. Accepted sockets inherit it. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    /* The interface reqrouter serves, as for UDP: not the host's
	     * other ones. */
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname,
		       (socklen_t)strlen(ifname) + 1) ||
	    bind(fd, a, alen) || listen(fd, LISTEN_BACKLOG)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	/* The kernel keeps little unsent either, so a reader's progress
	 * shows soon as room to send (EPOLLOUT). Only an optimisation. */
	setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
	return fd;
}

/*
 * Every connection is a descriptor: the soft limit (1024 by default) would
 * run out before tcp_max_connections do. Raised to what they need, within
 * the hard limit, as servers do; said if even that is short.
 */
static void enough_descriptors(const struct rr_invoker *inv)
{
	rlim_t want = (rlim_t)inv->cfg->tcp_max_connections + 1024;
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur >= want)
		return;
	r.rlim_cur = r.rlim_max < want ? r.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &r);
	if (r.rlim_cur < want)
		pr_warn("TCP: %lu descriptors at most (RLIMIT_NOFILE): fewer than tcp_max_connections (%u) needs; raise the hard limit (LimitNOFILE=)\n",
			(unsigned long)r.rlim_cur,
			inv->cfg->tcp_max_connections);
}

static bool wants_tcp(const struct rr_invoker *inv, uint32_t slot)
{
	const struct rr_slot *s = &inv->slots[slot];

	return slot < inv->nslots && !s->removed && s->svc && s->svc->tcp;
}

void rr_tcp_init(struct rr_invoker *inv)
{
	uint32_t i;

	for (i = 0; i < RR_MAX_SLOTS; i++)
		inv->tcp.listen_fd[i] = -1;
	inv->tcp.cur = -1;
}

int rr_tcp_sync(struct rr_invoker *inv, bool *changed)
{
	struct rr_tcp *t = &inv->tcp;
	uint32_t slot;
	int fd, ret = 0;

	if (!t->reports) {
		enough_descriptors(inv);
		t->reports = mmap(NULL, REPORTS_SIZE, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (t->reports == MAP_FAILED) {
			t->reports = NULL;
			pr_warn("cannot map the TCP loop's reports: %s\n",
				strerror(errno));
			return -ENOMEM;
		}
	}
	for (slot = 0; slot < RR_MAX_SLOTS; slot++) {
		if (wants_tcp(inv, slot) == (t->listen_fd[slot] >= 0))
			continue;
		if (t->listen_fd[slot] >= 0) {
			*changed = true;
			close(t->listen_fd[slot]);
			t->listen_fd[slot] = -1;
			continue;
		}
		/* Tried for this service before: said once, as the service
		 * is. A reload or a deploy brings a new one. */
		if (t->failed[slot] == inv->slots[slot].svc)
			continue;
		fd = listen_on(inv, inv->slots[slot].svc->port);
		if (fd < 0) {
			t->failed[slot] = inv->slots[slot].svc;
			/* At start-up that stops reqrouter; later the
			 * function stays UDP only. */
			pr_warn("function '%s': cannot listen on TCP port %u: %s; %s\n",
				inv->slots[slot].svc->fn->name,
				inv->slots[slot].svc->port, strerror(-fd),
				inv->ready
					? "it is served over UDP only"
					: "tcp = no in its section serves it over UDP only");
			if (!ret)
				ret = fd;
			continue;
		}
		t->listen_fd[slot] = fd;
		*changed = true;
		pr_info("serving '%s' on TCP port %u too\n",
			inv->slots[slot].svc->fn->name,
			inv->slots[slot].svc->port);
	}
	return ret;
}

void rr_tcp_close(struct rr_invoker *inv)
{
	struct rr_tcp *t = &inv->tcp;
	uint32_t slot;

	for (slot = 0; slot < RR_MAX_SLOTS; slot++)
		if (t->listen_fd[slot] >= 0) {
			close(t->listen_fd[slot]);
			t->listen_fd[slot] = -1;
		}
	if (t->reports)
		munmap(t->reports, REPORTS_SIZE);
	t->reports = NULL;
}

/* ---- The loop ---- */

static uint64_t ms_ns(uint32_t ms)
{
	return (uint64_t)ms * 1000000ULL;
}

/* Whether @a and @b agree in their first @bits bits. */
static bool same_bits(const uint8_t *a, const uint8_t *b, uint32_t bits)
{
	uint32_t full = bits / 8, rest = bits % 8;
	uint8_t mask;

	if (memcmp(a, b, full))
		return false;
	if (!rest)
		return true;
	mask = (uint8_t)(0xff << (8 - rest));
	return !((a[full] ^ b[full]) & mask);
}

/* @r's source address, 4 or 16 bytes as its family says. */
static const uint8_t *src_bytes(const struct rr_request *r)
{
	return r->family == AF_INET ? (const uint8_t *)&r->src.v4
				    : (const uint8_t *)&r->src.v6;
}

static bool allowed(const struct rr_service *svc, const struct rr_request *r)
{
	const struct rr_cidr *c;
	uint32_t i;

	if (!svc->nallow)
		return true;
	for (i = 0; i < svc->nallow; i++) {
		c = &svc->allow[i];
		if (c->family == r->family &&
		    same_bits(c->addr, src_bytes(r), c->len))
			return true;
	}
	return false;
}

static bool same_source(const struct rr_request *a, const struct rr_request *b)
{
	return a->family == b->family && !memcmp(src_bytes(a), src_bytes(b),
						 a->family == AF_INET ? 4 : 16);
}

/* Whether @a and @b come from one source prefix (tcp_v4_prefix,
 * tcp_v6_prefix): one site, whose addresses share its connections. */
static bool same_prefix(const struct loop *l, const struct rr_request *a,
			const struct rr_request *b)
{
	return a->family == b->family &&
	       same_bits(src_bytes(a), src_bytes(b),
			 a->family == AF_INET ? l->prefix4 : l->prefix6);
}

/* A socket address into @r's @v4/@v6 and @port; an IPv4 peer of an IPv6
 * socket (::ffff:a.b.c.d) as IPv4. */
static void take_addr(const struct sockaddr_storage *ss, int *family,
		      struct in_addr *v4, struct in6_addr *v6, uint16_t *port)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

	if (ss->ss_family == AF_INET) {
		*family = AF_INET;
		*v4 = s4->sin_addr;
		*port = ntohs(s4->sin_port);
	} else if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		*family = AF_INET;
		memcpy(v4, &s6->sin6_addr.s6_addr[12], 4);
		*port = ntohs(s6->sin6_port);
	} else {
		*family = AF_INET6;
		*v6 = s6->sin6_addr;
		*port = ntohs(s6->sin6_port);
	}
}

static void count(uint64_t *ctr)
{
	rr_stat_add(ctr, 1);
}

static void arm(struct loop *l, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events,
				  .data.u64 = (uint64_t)(c - l->conns) };

	if (events == c->events)
		return;
	if (!epoll_ctl(l->ep, EPOLL_CTL_MOD, c->fd, &ev))
		c->events = events;
}

static void conn_close(struct loop *l, struct conn *c)
{
	close(c->fd); /* leaves the epoll set with it */
	c->fd = -1;
	free(c->in);
	free(c->out);
	c->in = c->out = NULL;
	l->free_idx[l->nfree++] = (uint32_t)(c - l->conns);
	l->open--;
	__atomic_store_n(&l->rep->open, l->open, __ATOMIC_RELAXED);
}

static uint32_t pending_out(const struct conn *c)
{
	return c->out_len - c->out_off;
}

/* Sends what is unsent; false if the connection broke (and is closed). */
static bool flush(struct loop *l, struct conn *c)
{
	ssize_t n;

	while (pending_out(c)) {
		n = send(c->fd, c->out + c->out_off, pending_out(c),
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			c->out_off += (uint32_t)n;
			c->out_since = l->now;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		conn_close(l, c);
		return false;
	}
	c->out_off = c->out_len = 0;
	c->out_since = 0;
	c->active_ns = l->now;
	return true;
}

/* Queues @len bytes of a framed reply; false without memory (the
 * connection is then closed: a reply cannot be left out of the order). */
static bool queue_out(struct loop *l, struct conn *c, const uint8_t *p,
		      uint32_t len)
{
	uint32_t need;
	uint8_t *o;

	if (c->out_off && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_off > c->out_cap / 2) {
		memmove(c->out, c->out + c->out_off, pending_out(c));
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	need = c->out_len + len;
	if (need > c->out_cap) {
		o = realloc(c->out, need);
		if (!o) {
			conn_close(l, c);
			return false;
		}
		c->out = o;
		c->out_cap = need;
	}
	memcpy(c->out + c->out_len, p, len);
	c->out_len += len;
	if (!c->out_since)
		c->out_since = l->now;
	return true;
}

/* One message: the function's reply framed and queued. False if the
 * connection was closed. */
static bool serve(struct loop *l, struct conn *c, const uint8_t *msg,
		  uint32_t len)
{
	struct rr_invoker *inv = l->inv;
	struct rr_tcp_stats *st = &l->rep->stats[c->slot];
	const struct rr_fn_instance *inst;
	struct rr_request req = c->peer;
	uint32_t reply_flags = 0;
	int ret;

	count(&st->requests);
	inst = __atomic_load_n(&inv->slots[c->slot].inst, __ATOMIC_ACQUIRE);
	rr_fn_request_bind(&req, inst, RR_TCP_WORKER(inv),
			   l->rep->fn_counters[c->slot]);
	req.reply_flags = &reply_flags;
	memmove(l->scratch + FRAME_HDR, msg, len);
	__atomic_store_n(&l->rep->call_slot, c->slot, __ATOMIC_RELAXED);
	__atomic_store_n(&l->rep->call_seq, ++l->call_seq, __ATOMIC_RELEASE);
	ret = inst->fn->handler(&req, l->scratch + FRAME_HDR, len, TCP_ROOM);
	__atomic_store_n(&l->rep->call_seq, ++l->call_seq, __ATOMIC_RELEASE);
	if (ret == RR_NO_REPLY) {
		count(&st->no_reply);
		return true;
	}
	if (ret < 0 || (uint32_t)ret > TCP_ROOM) {
		count(&st->errors);
		return true;
	}
	l->scratch[0] = (uint8_t)(ret >> 8);
	l->scratch[1] = (uint8_t)ret;
	count(&st->replies);
	return queue_out(l, c, l->scratch, FRAME_HDR + (uint32_t)ret);
}

/* Serves the whole messages buffered, in order, until the replies back
 * up. False if the connection was closed. */
static bool serve_buffered(struct loop *l, struct conn *c)
{
	uint32_t avail, mlen;
	const uint8_t *p;

	while (pending_out(c) < OUT_HIGH) {
		avail = c->in_len - c->in_off;
		if (avail < FRAME_HDR)
			break;
		p = c->in + c->in_off;
		mlen = (uint32_t)p[0] << 8 | p[1];
		if (!mlen) {
			count(&l->rep->stats[c->slot].bad_frames);
			conn_close(l, c);
			return false;
		}
		if (avail < FRAME_HDR + mlen)
			break;
		c->in_off += FRAME_HDR + mlen;
		if (!serve(l, c, p + FRAME_HDR, mlen))
			return false;
		c->active_ns = l->now;
		/* The next message's clock starts with its first byte. */
		c->in_since = c->in_off < c->in_len ? l->now : 0;
	}
	if (c->in_off == c->in_len)
		c->in_off = c->in_len = 0;
	return true;
}

/* Whether a whole message waits in @c's buffer. */
static bool message_buffered(const struct conn *c)
{
	uint32_t avail = c->in_len - c->in_off;

	return avail >= FRAME_HDR &&
	       avail >= FRAME_HDR + ((uint32_t)c->in[c->in_off] << 8 |
				     c->in[c->in_off + 1]);
}

/* Serves and sends until the buffered messages are done or the client
 * stops taking replies. False if the connection was closed. */
static bool pump(struct loop *l, struct conn *c)
{
	do {
		if (!serve_buffered(l, c) || !flush(l, c))
			return false;
	} while (!pending_out(c) && message_buffered(c));
	return true;
}

/* Room for the rest of the message under way, or a next one's header. */
static bool make_room(struct conn *c)
{
	uint32_t avail = c->in_len - c->in_off, want;
	uint8_t *in;

	if (c->in_off) {
		memmove(c->in, c->in + c->in_off, avail);
		c->in_len = avail;
		c->in_off = 0;
	}
	want = avail >= FRAME_HDR
		       ? FRAME_HDR + ((uint32_t)c->in[0] << 8 | c->in[1])
		       : 512;
	if (want < 512)
		want = 512;
	if (want <= c->in_cap)
		return true;
	in = realloc(c->in, want);
	if (!in)
		return false;
	c->in = in;
	c->in_cap = want;
	return true;
}

/* What epoll should wake the loop for on @c. */
static void rearm(struct loop *l, struct conn *c)
{
	uint32_t ev = 0;

	if (!c->eof && pending_out(c) < OUT_HIGH)
		ev |= EPOLLIN;
	if (pending_out(c))
		ev |= EPOLLOUT;
	/* Reading again: a message begun has its time from now. */
	if ((ev & EPOLLIN) && !(c->events & EPOLLIN) && c->in_since)
		c->in_since = l->now;
	arm(l, c, ev);
}

static void on_conn(struct loop *l, struct conn *c, uint32_t events)
{
	ssize_t n;

	/* Replies went: buffered messages may go on. */
	if ((events & EPOLLOUT) && (!flush(l, c) || !pump(l, c)))
		return;
	while ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->eof &&
	       pending_out(c) < OUT_HIGH) {
		if (c->in_len == c->in_cap && !make_room(c)) {
			conn_close(l, c);
			return;
		}
		n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len,
			 MSG_DONTWAIT);
		if (n > 0) {
			if (c->in_len == c->in_off && !c->in_since)
				c->in_since = l->now;
			c->in_len += (uint32_t)n;
			if (!serve_buffered(l, c))
				return;
			continue;
		}
		if (n == 0) {
			c->eof = true;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		conn_close(l, c);
		return;
	}
	if (!pump(l, c))
		return;
	/* A client that is done and has its replies: closed. A message cut
	 * short by its FIN can never be answered. */
	if (c->eof && !pending_out(c)) {
		conn_close(l, c);
		return;
	}
	rearm(l, c);
}

/* Whether @c has nothing under way: no message begun, no reply unsent
 * (what the kernel still holds of replies goes out after a close too). */
static bool at_rest(const struct conn *c)
{
	return !c->in_since && !pending_out(c) && !c->eof;
}

/* Whether a message of @c's waits in the kernel, not read yet (the loop
 * has yet to get to it in this round of events). */
static bool unread(const struct conn *c)
{
	uint8_t b;

	return recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/* What the open connections are to a newcomer from @r: how many share
 * its address and its prefix, and of those at rest, the one idle longest
 * in all and in its prefix. */
struct census {
	uint32_t source, prefix;
	struct conn *idlest, *prefix_idlest;
};

static void take_census(struct loop *l, const struct rr_request *r,
			struct census *cs)
{
	struct conn *c;
	bool mine;
	uint32_t i;

	memset(cs, 0, sizeof(*cs));
	for (i = 0; i < l->nconns; i++) {
		c = &l->conns[i];
		if (c->fd < 0)
			continue;
		mine = same_prefix(l, &c->peer, r);
		if (mine) {
			cs->prefix++;
			cs->source += same_source(&c->peer, r);
		}
		if (!at_rest(c))
			continue;
		if (!cs->idlest || c->active_ns < cs->idlest->active_ns)
			cs->idlest = c;
		if (mine && (!cs->prefix_idlest ||
			     c->active_ns < cs->prefix_idlest->active_ns))
			cs->prefix_idlest = c;
	}
}

/* Idle ones found with a message waiting, taken for busy, before a
 * newcomer is refused instead. */
#define EVICT_TRIES 4

/*
 * Makes room for a newcomer from @r, come for the function @st counts:
 * false if it is refused (counted). An address past tcp_max_per_source is
 * refused: it is one host, which should use the connections it has (RFC
 * 7766). A prefix past tcp_max_per_prefix gives up its own connection
 * idle longest, a full pool its connection idle longest, whoever holds
 * it: a newcomer is refused only when every connection it could take the
 * place of has work under way.
 */
static bool admit(struct loop *l, const struct rr_request *r,
		  struct rr_tcp_stats *st)
{
	const struct rr_config *cfg = l->inv->cfg;
	struct rr_tcp_stats *vst;
	struct census cs;
	struct conn *victim;
	uint32_t tries;
	bool prefix;

	for (tries = 0;; tries++) {
		take_census(l, r, &cs);
		if (cs.source >= cfg->tcp_max_per_source) {
			count(&st->refused_source);
			return false;
		}
		prefix = cs.prefix >= cfg->tcp_max_per_prefix;
		if (!prefix && l->nfree)
			return true;
		victim = prefix ? cs.prefix_idlest : cs.idlest;
		if (victim && unread(victim)) {
			/* Busy after all: served in this round. */
			victim->active_ns = l->now;
			if (tries + 1 < EVICT_TRIES)
				continue;
			victim = NULL;
		}
		if (!victim) {
			count(prefix ? &st->refused_prefix : &st->refused_full);
			return false;
		}
		vst = &l->rep->stats[victim->slot];
		count(prefix ? &vst->evicted_prefix : &vst->evicted_full);
		conn_close(l, victim);
		return true;
	}
}

/* Takes the listeners out of the epoll set for a tick (sweep() puts
 * them back). */
static void pause_accepting(struct loop *l)
{
	uint32_t slot;

	if (l->accept_paused_until)
		return;
	for (slot = 0; slot < RR_MAX_SLOTS; slot++)
		if (l->lfd[slot] >= 0)
			epoll_ctl(l->ep, EPOLL_CTL_DEL, l->lfd[slot], NULL);
	l->accept_paused_until = l->now + ms_ns(TICK_MS);
}

static void resume_accepting(struct loop *l)
{
	struct epoll_event ev = { .events = EPOLLIN };
	uint32_t slot;

	if (!l->accept_paused_until || l->now < l->accept_paused_until)
		return;
	l->accept_paused_until = 0;
	for (slot = 0; slot < RR_MAX_SLOTS; slot++) {
		if (l->lfd[slot] < 0)
			continue;
		ev.data.u64 = LISTENER | slot;
		epoll_ctl(l->ep, EPOLL_CTL_ADD, l->lfd[slot], &ev);
	}
}

static void on_listener(struct loop *l, uint32_t slot)
{
	const struct rr_service *svc = l->inv->slots[slot].svc;
	struct rr_tcp_stats *st = &l->rep->stats[slot];
	struct sockaddr_storage ss;
	struct epoll_event ev;
	struct rr_request r;
	struct conn *c;
	socklen_t sl;
	uint32_t i;
	int fd;

	for (i = 0; i < ACCEPTS_PER_EVENT; i++) {
		sl = sizeof(ss);
		fd = accept4(l->lfd[slot], (struct sockaddr *)&ss, &sl,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			/* Out of descriptors or memory: the listener would
			 * wake the loop at once again; it rests a tick. */
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				pause_accepting(l);
			return;
		}
		memset(&r, 0, sizeof(r));
		take_addr(&ss, &r.family, &r.src.v4, &r.src.v6, &r.src_port);
		sl = sizeof(ss);
		if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
			take_addr(&ss, &r.family, &r.dst.v4, &r.dst.v6,
				  &r.dst_port);
		r.transport = RR_TRANSPORT_TCP;
		if (__atomic_load_n(&l->inv->live->quarantined[slot],
				    __ATOMIC_RELAXED)) {
			count(&st->refused_quarantined);
			close(fd);
			continue;
		}
		if (!allowed(svc, &r)) {
			count(&st->refused_allow);
			close(fd);
			continue;
		}
		if (!admit(l, &r, st)) {
			close(fd);
			continue;
		}
		/* Its handshake completed: the source receives at its
		 * address (docs/DESIGN.md, "Validated sources"). */
		rr_validate_tcp(r.family, r.family == AF_INET
						  ? (const void *)&r.src.v4
						  : (const void *)&r.src.v6);
		c = &l->conns[l->free_idx[--l->nfree]];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->slot = slot;
		c->peer = r;
		c->active_ns = l->now;
		c->events = EPOLLIN;
		ev.events = EPOLLIN;
		ev.data.u64 = (uint64_t)(c - l->conns);
		if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			c->fd = -1;
			l->free_idx[l->nfree++] = (uint32_t)(c - l->conns);
			continue;
		}
		l->open++;
		__atomic_store_n(&l->rep->open, l->open, __ATOMIC_RELAXED);
		count(&st->accepted);
	}
}

/* Bytes of @fd's the kernel holds, unsent or unacknowledged. */
static bool kernel_queued(int fd)
{
	int n = 0;

	return !ioctl(fd, SIOCOUTQ, &n) && n > 0;
}

/*
 * How long a connection may idle with @l->open of the pool's taken:
 * tcp_idle_timeout up to half of it, then less with every one more, down
 * to tcp_idle_timeout_full once all are. Those kept open by a message
 * every few seconds then make room on their own, long before the pool is
 * full. RFC 7766 lets a server close idle connections, the more so under
 * load; its clients open a new one when they need it.
 */
static uint64_t idle_limit(const struct loop *l)
{
	uint32_t half = l->nconns / 2;

	if (l->open <= half || l->idle_full_ns >= l->idle_ns)
		return l->idle_ns;
	return l->idle_ns - (l->idle_ns - l->idle_full_ns) * (l->open - half) /
				    (l->nconns - half);
}

/* Closes what timed out, what a retiring loop may let go, and what a
 * quarantined function holds. */
static void sweep(struct loop *l)
{
	uint64_t idle_ns = idle_limit(l);
	struct rr_tcp_stats *st;
	struct conn *c;
	uint32_t i;

	for (i = 0; i < l->nconns; i++) {
		c = &l->conns[i];
		if (c->fd < 0)
			continue;
		st = &l->rep->stats[c->slot];
		/* Replies unsent for a while: whatever the client took since
		 * frees room, taken now, and that is progress. */
		if (c->out_since && l->now - c->out_since >= l->io_ns &&
		    !flush(l, c))
			continue;
		/* Reading paused by unread replies: what waits in the buffer
		 * is ours to take, not the client's to send. */
		if ((c->in_since && (c->events & EPOLLIN) &&
		     l->now - c->in_since >= l->io_ns) ||
		    (c->out_since && l->now - c->out_since >= l->io_ns)) {
			count(&st->io_timeouts);
			conn_close(l, c);
		} else if (c->in_since || pending_out(c)) {
			continue;
		} else if (l->retiring ||
			   __atomic_load_n(&l->inv->live->quarantined[c->slot],
					   __ATOMIC_RELAXED)) {
			conn_close(l, c);
		} else if (l->now - c->active_ns >= idle_ns) {
			/* Replies the client has not taken yet are still
			 * under way, in the kernel's queue: not idle. */
			if (kernel_queued(c->fd)) {
				c->active_ns = l->now;
				continue;
			}
			count(l->now - c->active_ns >= l->idle_ns
				      ? &st->idle_timeouts
				      : &st->idle_shrunk);
			conn_close(l, c);
		}
	}
}

static void stop_accepting(struct loop *l)
{
	uint32_t slot;

	for (slot = 0; slot < RR_MAX_SLOTS; slot++) {
		if (l->lfd[slot] < 0)
			continue;
		/* A thread's are its own copies, a cell's its own. */
		close(l->lfd[slot]);
		l->lfd[slot] = -1;
	}
}

static int loop_setup(struct loop *l)
{
	struct epoll_event ev = { .events = EPOLLIN };
	const struct rr_config *cfg = l->inv->cfg;
	uint32_t i, slot;

	l->idle_ns = ms_ns(cfg->tcp_idle_timeout_ms);
	l->idle_full_ns = ms_ns(cfg->tcp_idle_timeout_full_ms);
	l->io_ns = ms_ns(cfg->tcp_io_timeout_ms);
	l->prefix4 = cfg->tcp_v4_prefix;
	l->prefix6 = cfg->tcp_v6_prefix;
	l->nconns = cfg->tcp_max_connections;
	l->conns = calloc(l->nconns, sizeof(*l->conns));
	l->free_idx = calloc(l->nconns, sizeof(*l->free_idx));
	l->scratch = malloc(FRAME_HDR + TCP_ROOM);
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!l->conns || !l->free_idx || !l->scratch || l->ep < 0)
		return -ENOMEM;
	for (i = 0; i < l->nconns; i++) {
		l->conns[i].fd = -1;
		l->free_idx[i] = l->nconns - 1 - i;
	}
	l->nfree = l->nconns;
	for (slot = 0; slot < RR_MAX_SLOTS; slot++) {
		if (l->lfd[slot] < 0)
			continue;
		ev.data.u64 = LISTENER | slot;
		if (epoll_ctl(l->ep, EPOLL_CTL_ADD, l->lfd[slot], &ev))
			return -errno;
	}
	return 0;
}

static void loop_run(struct loop *l)
{
	struct rr_live *live = l->inv->live;
	struct epoll_event evs[64];
	uint64_t next_sweep = 0, retire_end = 0;
	uint32_t i, slot;
	int n;

	while (!__atomic_load_n(&live->stop, __ATOMIC_RELAXED)) {
		/* A quiescent point: no instance of before is held. */
		__atomic_store_n(
			&l->rep->seen_epoch,
			__atomic_load_n(&l->inv->epoch, __ATOMIC_SEQ_CST),
			__ATOMIC_RELEASE);
		l->now = rr_now_ns();
		if (!l->retiring && __atomic_load_n(&live->tcp_retire[l->li],
						    __ATOMIC_ACQUIRE)) {
			l->retiring = true;
			stop_accepting(l);
			retire_end = l->now + ms_ns(RR_TCP_RETIRE_MAX_MS);
			next_sweep = 0;
		}
		if (l->retiring && (!l->open || l->now >= retire_end))
			break;
		if (l->now >= next_sweep) {
			sweep(l);
			resume_accepting(l);
			next_sweep = l->now + ms_ns(TICK_MS);
		}
		n = epoll_wait(l->ep, evs, (int)ARRAY_SIZE(evs), TICK_MS);
		l->now = rr_now_ns();
		for (i = 0; i < (uint32_t)(n > 0 ? n : 0); i++) {
			if (evs[i].data.u64 & LISTENER) {
				slot = (uint32_t)evs[i].data.u64;
				if (slot < RR_MAX_SLOTS && l->lfd[slot] >= 0)
					on_listener(l, slot);
				continue;
			}
			if (evs[i].data.u64 < l->nconns &&
			    l->conns[evs[i].data.u64].fd >= 0)
				on_conn(l, &l->conns[evs[i].data.u64],
					evs[i].events);
		}
	}
	for (i = 0; i < l->nconns; i++)
		if (l->conns[i].fd >= 0)
			conn_close(l, &l->conns[i]);
	stop_accepting(l);
}

static void loop_free(struct loop *l)
{
	if (l->ep >= 0)
		close(l->ep);
	free(l->conns);
	free(l->free_idx);
	free(l->scratch);
}

static void loop_init(struct loop *l, struct rr_invoker *inv, uint32_t li,
		      bool cell)
{
	memset(l, 0, sizeof(*l));
	l->inv = inv;
	l->li = li;
	l->cell = cell;
	l->rep = &inv->tcp.reports[li];
	l->ep = -1;
}

/* ---- For the loops' runner (cells/tcp_loops.c) ---- */

bool rr_tcp_any_listener(const struct rr_invoker *inv)
{
	uint32_t slot;

	for (slot = 0; slot < RR_MAX_SLOTS; slot++)
		if (inv->tcp.listen_fd[slot] >= 0)
			return true;
	return false;
}

struct rr_tcp_serve *rr_tcp_serve_new(struct rr_invoker *inv, uint32_t li,
				      const int *lfd, bool cell)
{
	struct loop *l = malloc(sizeof(*l));

	if (!l)
		return NULL;
	loop_init(l, inv, li, cell);
	memcpy(l->lfd, lfd, sizeof(l->lfd));
	return (struct rr_tcp_serve *)l;
}

int rr_tcp_serve_setup(struct rr_tcp_serve *l)
{
	return loop_setup((struct loop *)l);
}

void rr_tcp_serve_run(struct rr_tcp_serve *l)
{
	loop_run((struct loop *)l);
}

void rr_tcp_serve_free(struct rr_tcp_serve *l)
{
	if (!l)
		return;
	stop_accepting((struct loop *)l);
	loop_free((struct loop *)l);
	free(l);
}

bool rr_tcp_serve_owns(const struct rr_tcp_serve *l, int fd)
{
	const struct loop *lp = (const struct loop *)l;
	uint32_t slot;

	for (slot = 0; slot < RR_MAX_SLOTS; slot++)
		if (lp->lfd[slot] == fd)
			return true;
	return false;
}

void rr_tcp_stats_sum(struct rr_invoker *inv, uint32_t slot,
		      struct rr_tcp_stats *sum)
{
	const struct rr_tcp *t = &inv->tcp;
	uint64_t *d = (uint64_t *)sum;
	const uint64_t *s;
	uint32_t li, k, n = sizeof(*sum) / sizeof(uint64_t);

	*sum = t->done[slot];
	for (li = 0; t->reports && li < RR_TCP_LOOPS; li++) {
		if (!t->loops[li].running)
			continue;
		s = (const uint64_t *)&t->reports[li].stats[slot];
		for (k = 0; k < n; k++)
			d[k] += rr_stat_read(&s[k]);
	}
}

uint64_t rr_tcp_fn_counter(struct rr_invoker *inv, uint32_t slot, uint32_t c)
{
	const struct rr_tcp *t = &inv->tcp;
	uint64_t sum = t->done_fn[slot][c];
	uint32_t li;

	for (li = 0; t->reports && li < RR_TCP_LOOPS; li++)
		if (t->loops[li].running)
			sum += rr_stat_read(
				&t->reports[li].fn_counters[slot][c]);
	return sum;
}

uint32_t rr_tcp_open(struct rr_invoker *inv)
{
	const struct rr_tcp *t = &inv->tcp;
	uint32_t li, n = 0, v;

	for (li = 0; t->reports && li < RR_TCP_LOOPS; li++) {
		if (!t->loops[li].running)
			continue;
		v = __atomic_load_n(&t->reports[li].open, __ATOMIC_RELAXED);
		/* A cell can write anything there. */
		n += v <= inv->cfg->tcp_max_connections ? v : 0;
	}
	return n;
}

/* ---- Metrics ---- */

/* The samples of family @name for requests over TCP: rx are messages
 * taken, tx replies sent, beside the UDP sockets' (tier="user"). */
void rr_tcp_write_metric(struct rr_invoker *inv, FILE *out, const char *name)
{
	bool rx = !strcmp(name, "reqrouter_rx_packets_total");
	struct rr_tcp_stats st;
	uint32_t slot;

	if (!rx && strcmp(name, "reqrouter_tx_packets_total"))
		return;
	for (slot = 0; slot < inv->nslots; slot++) {
		if (inv->tcp.listen_fd[slot] < 0)
			continue;
		rr_tcp_stats_sum(inv, slot, &st);
		fprintf(out, "%s{", name);
		rr_metric_fn_labels(out, &inv->slots[slot]);
		fprintf(out, ",tier=\"user\",transport=\"tcp\"} %lu\n",
			rx ? st.requests : st.replies);
	}
}

/* What happened to connections and messages, by event. */
static const struct {
	const char *event;
	size_t off;
} tcp_events[] = {
	{ "accepted", offsetof(struct rr_tcp_stats, accepted) },
	{ "refused_full", offsetof(struct rr_tcp_stats, refused_full) },
	{ "refused_source", offsetof(struct rr_tcp_stats, refused_source) },
	{ "refused_prefix", offsetof(struct rr_tcp_stats, refused_prefix) },
	{ "refused_allow", offsetof(struct rr_tcp_stats, refused_allow) },
	{ "refused_quarantined",
	  offsetof(struct rr_tcp_stats, refused_quarantined) },
	{ "evicted_full", offsetof(struct rr_tcp_stats, evicted_full) },
	{ "evicted_prefix", offsetof(struct rr_tcp_stats, evicted_prefix) },
	{ "idle_timeout", offsetof(struct rr_tcp_stats, idle_timeouts) },
	{ "idle_timeout_shrunk", offsetof(struct rr_tcp_stats, idle_shrunk) },
	{ "io_timeout", offsetof(struct rr_tcp_stats, io_timeouts) },
	{ "bad_frame", offsetof(struct rr_tcp_stats, bad_frames) },
	{ "no_reply", offsetof(struct rr_tcp_stats, no_reply) },
	{ "function_error", offsetof(struct rr_tcp_stats, errors) },
};

void rr_tcp_write_metrics(struct rr_invoker *inv, FILE *out)
{
	struct rr_tcp_stats st;
	uint32_t slot, i;

	if (!rr_tcp_any_listener(inv))
		return;
	rr_metric_family(out, "reqrouter_tcp_connections", "gauge",
			 "Connections open over TCP now.");
	fprintf(out, "reqrouter_tcp_connections %u\n", rr_tcp_open(inv));
	rr_metric_family(
		out, "reqrouter_tcp_events_total", "counter",
		"Connections over TCP by what became of them (accepted, refused at once, closed for a newcomer, closed by a time-out or a bad frame) and messages without a reply.");
	for (slot = 0; slot < inv->nslots; slot++) {
		if (inv->tcp.listen_fd[slot] < 0)
			continue;
		rr_tcp_stats_sum(inv, slot, &st);
		for (i = 0; i < ARRAY_SIZE(tcp_events); i++) {
			fprintf(out, "reqrouter_tcp_events_total{");
			rr_metric_fn_labels(out, &inv->slots[slot]);
			fprintf(out, ",event=\"%s\"} %lu\n",
				tcp_events[i].event,
				*(const uint64_t *)((const char *)&st +
						    tcp_events[i].off));
		}
	}
}

/* Function @slot over TCP for reqrouterctl stats, as a member ("tcp"),
 * nothing when it is not served over TCP. */
void rr_tcp_json(struct rr_invoker *inv, uint32_t slot, FILE *out)
{
	struct rr_tcp_stats st;
	uint32_t i;

	if (inv->tcp.listen_fd[slot] < 0)
		return;
	rr_tcp_stats_sum(inv, slot, &st);
	fprintf(out, ",\"tcp\":{\"rx\":%lu,\"tx\":%lu,\"events\":{",
		st.requests, st.replies);
	for (i = 0; i < ARRAY_SIZE(tcp_events); i++)
		fprintf(out, "%s\"%s\":%lu", i ? "," : "", tcp_events[i].event,
			*(const uint64_t *)((const char *)&st +
					    tcp_events[i].off));
	fprintf(out, "}}");
}
