// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP endpoint (see http.h) on libmicrohttpd in "external epoll"
 * mode: we make and bind the listening socket ourselves (so a bind error
 * is our own one line), and libmicrohttpd hands us a single epoll
 * descriptor that the main loop polls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "http.h"
#include "lifecycle.h"
#include "log.h"
#include "metrics.h"

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define MAX_CONNECTIONS 16
#define CONNECTION_TIMEOUT_S 10

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
	/* A restart must not wait for the last run's TIME_WAIT sockets. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, salen) || listen(fd, 64)) {
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
	h->fd = -1;
	if (!cfg->metrics_listen[0])
		return 0;
	fd = listen_on(cfg->metrics_listen);
	if (fd < 0)
		return fd;
	h->daemon = MHD_start_daemon(
		MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, h,
		MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_EXTERNAL_LOGGER,
		mhd_log, NULL, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned int)CONNECTION_TIMEOUT_S, MHD_OPTION_END);
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
}

void rr_http_close(struct rr_http *h)
{
	if (!h->daemon)
		return;
	/* MHD closes the listening socket it was given. */
	MHD_stop_daemon(h->daemon);
	h->daemon = NULL;
	h->fd = -1;
}
