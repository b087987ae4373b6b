/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus over HTTP (--metrics-listen): GET /metrics answers exactly
 * what the metrics file holds, GET /healthz 200 "ready" while the
 * instance is ready and 503 with the reason otherwise. libmicrohttpd runs
 * without threads of its own: the main thread polls its one descriptor
 * beside the control socket and serves requests between its ticks, so a
 * scrape reads the counters and the functions' table just as the metrics
 * file and reqrouterctl do, never concurrently with a reload.
 */
#ifndef RR_HTTP_H
#define RR_HTTP_H

#include "config.h"
#include "invoker.h"

/*
 * Connections open at once, and from one address: a newer one takes the
 * place of the one that has waited longest for its request (http.c),
 * once the newer one's first RR_HTTP_GRACE_MS are over (a prober's
 * request is in by then). A connection's request head must be in within
 * RR_HTTP_HEAD_TIMEOUT_MS of its connect or of its previous reply.
 */
#define RR_HTTP_CONNECTIONS 16
#define RR_HTTP_PER_ADDRESS 4
#define RR_HTTP_GRACE_MS 100
#define RR_HTTP_HEAD_TIMEOUT_MS 2000

struct MHD_Daemon;
struct rr_http_conn;

struct rr_http {
	struct MHD_Daemon *daemon;  /* NULL: no HTTP endpoint */
	struct rr_invoker *inv;	    /* set by rr_http_serve() */
	struct rr_http_conn *conns; /* the connections followed (http.c) */
	int fd;			    /* to poll for POLLIN; -1 if none */
};

/*
 * Binds cfg->metrics_listen (nothing if it is empty). Called before the
 * set-up, so an address in use stops reqrouter before it touches the
 * interface. Returns 0 or -errno, with one line logged.
 */
int rr_http_open(struct rr_http *h, const struct rr_config *cfg);

/* Serves what is waiting; call every tick (also when fd did not poll
 * readable: it runs libmicrohttpd's timeouts). */
void rr_http_serve(struct rr_http *h, struct rr_invoker *inv);

/* Stops listening and drops open connections. Safe on one never opened. */
void rr_http_close(struct rr_http *h);

#endif /* RR_HTTP_H */
