// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP endpoint (see http.h) on libmicrohttpd in "external epoll"
 * mode: we make and bind the listening socket ourselves (so a bind error
 * is our own one line), and libmicrohttpd hands us a single epoll
 * descriptor that the main loop polls. Which connections stay open is
 * decided here, not by libmicrohttpd's limits (below).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "clock.h"
#include "http.h"
#include "lifecycle.h"
#include "log.h"
#include "metrics.h"

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* A response that does not move (a client that does not read) for this
 * long is dropped by libmicrohttpd. */
#define CONNECTION_TIMEOUT_S 10
/* Entries, and libmicrohttpd's own limit: the connections counted, and
 * those cut that libmicrohttpd has not closed yet (it does on its next
 * look at them), which under a crowd reconnecting at once are many more
 * than the counted; at its limit libmicrohttpd refuses a newcomer, a
 * health probe too, before any choice is made here. */
#define TRACKED (8 * RR_HTTP_CONNECTIONS)
/* What victim() looks at of a connection's unread bytes for a whole
 * request head: a probe's GET is well within it. */
#define HEAD_PEEK 1024
/* New connections in their grace at once, past which their grace is
 * over: a flood of connects never fills the table (TRACKED), where a
 * newcomer would be refused outright. */
#define GRACE_MAX (TRACKED / 2)

/*
 * Keeping /healthz and /metrics answered. libmicrohttpd's own limits
 * refuse the newest connection once its table is full, and its timeout
 * starts again at every byte, so a few connections that each send a
 * byte every few seconds would hold every slot for good. Instead every
 * connection is followed here from libmicrohttpd's notices, and
 *  - a connection must send a whole request head within
 *    RR_HTTP_HEAD_TIMEOUT_MS of its connect or of its previous reply,
 *    however it drips;
 *  - a newer connection always gets in: past RR_HTTP_PER_ADDRESS from its
 *    address, or past RR_HTTP_CONNECTIONS in all, the one that has waited
 *    longest for its request (of that address, or of all) is cut, one in
 *    a request only if none is waiting for one;
 *  - but none is cut in its first RR_HTTP_GRACE_MS: the limits are
 *    applied again when that ends (it "settles"), and till then a crowd
 *    that reconnects at once may be over them, up to GRACE_MAX new ones
 *    in all (past it, the oldest of them are cut as any other).
 * A prober sends its request as soon as it connects, well within its
 * grace, so it is answered however many connections others hold or make,
 * from its own address too, in the same instant. A connection is cut by
 * shutdown(): libmicrohttpd sees its end and closes it as a client's
 * (there is no call to close one). Each cut is counted
 * (inv->http_events), never logged.
 */
struct rr_http_conn {
	struct MHD_Connection *conn; /* NULL: a free entry */
	int fd;
	sa_family_t family;
	uint8_t addr[16];  /* the peer's address, without its port */
	uint64_t since_ns; /* CLOCK_MONOTONIC: connected, or its last reply */
	uint64_t connected_ns; /* CLOCK_MONOTONIC: connected */
	bool settled; /* its grace is over: it may be cut for another */
	bool busy;    /* in a request: its head is in, the reply not out */
	bool cut;     /* shut down; libmicrohttpd closes it */
};

static bool same_peer(const struct rr_http_conn *a,
		      const struct rr_http_conn *b)
{
	return a->family == b->family && !memcmp(a->addr, b->addr, 16);
}

static void count(struct rr_http *h, enum rr_http_event ev)
{
	if (h->inv)
		h->inv->http_events[ev]++;
}

static void cut(struct rr_http *h, struct rr_http_conn *e,
		enum rr_http_event ev)
{
	shutdown(e->fd, SHUT_RDWR);
	e->cut = true;
	count(h, ev);
}

/* Whether a whole request head waits in @e's socket, not yet read by
 * libmicrohttpd: a prober's, that came in the same round as a crowd of
 * newer connections. A dripper's never ends. */
static bool head_waiting(const struct rr_http_conn *e)
{
	char buf[HEAD_PEEK];
	ssize_t n;

	n = recv(e->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	return n >= 4 && memmem(buf, n, "\r\n\r\n", 4);
}

/* Whether @e is to be cut before @v: waiting for its request head rather
 * than in a request, then the longer. */
static bool before(const struct rr_http_conn *e, const struct rr_http_conn *v)
{
	return !v || e->busy < v->busy ||
	       (e->busy == v->busy && e->since_ns < v->since_ns);
}

/* Of the open connections (of @newest's address if @peer), when there
 * are more than @max counting @newest, the one to cut first (before()):
 * of the settled, or of all past GRACE_MAX in their grace; NULL while
 * there are at most @max, or none is a candidate. Never @newest. One
 * whose whole head waits unread is in a request: it is marked so and
 * another looked for (at most once for each connection). */
static struct rr_http_conn *victim(struct rr_http *h,
				   const struct rr_http_conn *newest, bool peer,
				   unsigned int max)
{
	struct rr_http_conn *e, *v, *any;
	unsigned int n, fresh;

	for (;;) {
		v = any = NULL;
		n = fresh = 0;
		for (e = h->conns; e < h->conns + TRACKED; e++) {
			if (!e->conn || e->cut)
				continue;
			fresh += !e->settled;
			if (peer && !same_peer(e, newest))
				continue;
			n++;
			if (e == newest)
				continue;
			if (before(e, any))
				any = e;
			if (e->settled && before(e, v))
				v = e;
		}
		if (fresh > GRACE_MAX)
			v = any;
		if (n <= max || !v)
			return NULL;
		if (v->busy || !head_waiting(v))
			return v;
		v->busy = true;
	}
}

/* @newest is in, or has settled: one of its address's, or anyone's,
 * goes if it is one too many. */
static void make_room(struct rr_http *h, const struct rr_http_conn *newest)
{
	struct rr_http_conn *v;

	v = victim(h, newest, true, RR_HTTP_PER_ADDRESS);
	if (v)
		cut(h, v, RR_HTTP_EV_EVICTED_ADDRESS);
	v = victim(h, newest, false, RR_HTTP_CONNECTIONS);
	if (v)
		cut(h, v, RR_HTTP_EV_EVICTED_FULL);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *i;
	struct rr_http *h = cls;
	struct rr_http_conn *e;
	const struct sockaddr *sa;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		e = *ctx;
		if (e)
			memset(e, 0, sizeof(*e));
		*ctx = NULL;
		return;
	}
	/* Each answer may share one buffer: read before the next is asked. */
	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!i)
		return;
	for (e = h->conns; e < h->conns + TRACKED && e->conn; e++)
		;
	if (e == h->conns + TRACKED) {
		/* Not while fewer are cut than are open: this one goes too. */
		shutdown(i->connect_fd, SHUT_RDWR);
		count(h, RR_HTTP_EV_EVICTED_FULL);
		return;
	}
	e->fd = i->connect_fd;
	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	sa = i ? i->client_addr : NULL;
	if (sa && sa->sa_family == AF_INET)
		memcpy(e->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa && sa->sa_family == AF_INET6)
		memcpy(e->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
	e->family = sa ? sa->sa_family : AF_UNSPEC;
	e->conn = c;
	e->since_ns = rr_now_ns();
	e->connected_ns = e->since_ns;
	*ctx = e;
	count(h, RR_HTTP_EV_ACCEPTED);
	make_room(h, e);
}

/* The connection's entry, or NULL. */
static struct rr_http_conn *entry_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i;

	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/* A request answered (or abandoned): the wait for the next one's head
 * starts. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct rr_http_conn *e = entry_of(c);

	if (e) {
		e->busy = false;
		e->since_ns = rr_now_ns();
	}
}

/* Cuts the connections whose request head is late, and applies the
 * limits again for each whose grace has ended. */
static void cut_late(struct rr_http *h)
{
	uint64_t now = rr_now_ns();
	struct rr_http_conn *e;

	for (e = h->conns; e < h->conns + TRACKED; e++)
		if (e->conn && !e->cut && !e->busy &&
		    now - e->since_ns > RR_HTTP_HEAD_TIMEOUT_MS * 1000000ULL)
			cut(h, e, RR_HTTP_EV_HEADER_TIMEOUT);
	for (e = h->conns; e < h->conns + TRACKED; e++)
		if (e->conn && !e->cut && !e->settled &&
		    now - e->connected_ns >= RR_HTTP_GRACE_MS * 1000000ULL) {
			e->settled = true;
			make_room(h, e);
		}
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status,
			     const char *type, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, mode);
	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned int status,
			    const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)msg,
		     strlen(msg), MHD_RESPMEM_MUST_COPY);
}

static enum MHD_Result metrics(struct MHD_Connection *c, struct rr_invoker *inv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	f = open_memstream(&buf, &len);
	if (!f)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "out of memory\n");
	ret = rr_metrics_write(inv, f);
	if (fclose(f) || ret) {
		free(buf);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "cannot produce the metrics\n");
	}
	/* Its longest stall since the last scrape starts again. */
	inv->stall_scrape_ns = 0;
	return reply(c, MHD_HTTP_OK, PROM_TYPE, buf, len,
		     MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result healthz(struct MHD_Connection *c, struct rr_invoker *inv)
{
	const char *why = rr_invoker_not_ready(inv);
	char msg[160];

	if (!why)
		return text(c, MHD_HTTP_OK, "ready\n");
	snprintf(msg, sizeof(msg), "not ready: %s\n", why);
	return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_len, void **req_cls)
{
	struct rr_http *h = cls;
	struct rr_http_conn *e = entry_of(c);

	/* Its head is in: no longer a candidate for the head's deadline. */
	if (e)
		e->busy = true;
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "only GET and HEAD\n");
	if (!h->inv)
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			    "not ready: starting\n");
	if (!strcmp(url, "/metrics"))
		return metrics(c, h->inv);
	if (!strcmp(url, "/healthz"))
		return healthz(c, h->inv);
	return text(c, MHD_HTTP_NOT_FOUND, "try /metrics or /healthz\n");
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[256];

	vsnprintf(line, sizeof(line), fmt, ap);
	pr_debug("metrics http: %s", line);
}

static int listen_on(const char *spec)
{
	struct sockaddr_storage sa;
	char err[RR_ERRLEN];
	socklen_t salen;
	int fd, one = 1, ret;

	if (rr_parse_listen(spec, &sa, &salen, err, sizeof(err))) {
		pr_warn("%s\n", err);
		return -EINVAL;
	}
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		ret = -errno;
		pr_warn("--metrics-listen %s: cannot make a socket: %s\n", spec,
			strerror(-ret));
		return ret;
	}
	/* A restart must not wait for the last run's TIME_WAIT sockets. A
	 * flood of connects waits in the backlog, taken and cut in turn,
	 * rather than having SYNs dropped: a prober's dropped SYN would
	 * cost it a second (its retry). */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, salen) || listen(fd, SOMAXCONN)) {
		ret = -errno;
		pr_warn("--metrics-listen %s: %s\n", spec, strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

int rr_http_open(struct rr_http *h, const struct rr_config *cfg)
{
	const union MHD_DaemonInfo *info;
	int fd;

	h->daemon = NULL;
	h->inv = NULL;
	h->conns = NULL;
	h->fd = -1;
	if (!cfg->metrics_listen[0])
		return 0;
	h->conns = calloc(TRACKED, sizeof(*h->conns));
	if (!h->conns)
		return -ENOMEM;
	fd = listen_on(cfg->metrics_listen);
	if (fd < 0) {
		free(h->conns);
		h->conns = NULL;
		return fd;
	}
	/* Its limit only bounds the table: the limits are make_room()'s. */
	h->daemon = MHD_start_daemon(
		MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, h,
		MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_EXTERNAL_LOGGER,
		mhd_log, NULL, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)TRACKED, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned int)CONNECTION_TIMEOUT_S,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
	if (!h->daemon)
		close(fd);
	/* From here on the daemon owns fd and closes it when stopped. */
	info = h->daemon ? MHD_get_daemon_info(h->daemon,
					       MHD_DAEMON_INFO_EPOLL_FD)
			 : NULL;
	if (!info) {
		pr_warn("--metrics-listen %s: cannot start the HTTP server\n",
			cfg->metrics_listen);
		rr_http_close(h);
		return -EIO;
	}
	h->fd = info->epoll_fd;
	pr_info("metrics over HTTP on %s (/metrics, /healthz)\n",
		cfg->metrics_listen);
	return 0;
}

void rr_http_serve(struct rr_http *h, struct rr_invoker *inv)
{
	if (!h->daemon)
		return;
	h->inv = inv;
	MHD_run(h->daemon);
	cut_late(h);
}

void rr_http_close(struct rr_http *h)
{
	if (h->daemon)
		/* MHD closes the listening socket it was given. */
		MHD_stop_daemon(h->daemon);
	h->daemon = NULL;
	h->fd = -1;
	free(h->conns);
	h->conns = NULL;
}
