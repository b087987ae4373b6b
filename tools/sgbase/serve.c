// SPDX-License-Identifier: GPL-2.0
/*
 * sgbase serve: a coordinator on kernel UDP sockets, its command line and
 * set-up; the gather table (gather.c) and an engine (epoll.c or uring.c)
 * do the work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "opttable.h"
#include "parse.h"
#include "sgbase.h"
#include "toolargs.h"

enum {
	OPT_ENGINE = 256,
	OPT_TARGETS,
	OPT_DEADLINE,
	OPT_REDUCE,
	OPT_BIND,
	OPT_MAX,
	OPT_CPU,
	OPT_BUSY,
};

static const struct rr_opt serve_opts[] = {
	{ "engine", OPT_ENGINE, "epoll|uring",
	  "epoll: non-blocking sockets, epoll_pwait2, recvmmsg and sendmmsg; uring: io_uring, one send SQE per target, multishot recvmsg into a buffer ring (default epoll)" },
	{ "port", 'p', "PORT", "the clients' UDP port (default 9014)" },
	{ "targets", OPT_TARGETS, "SPEC",
	  "ADDR:PORT, FIRST-LAST:PORT (IPv4) and [IPv6]:PORT, comma-separated, at most 1024 (required)" },
	{ "deadline-us", OPT_DEADLINE, "US",
	  "answer with what came after this long, 1-60000000 (default 10000)" },
	{ "reduce", OPT_REDUCE, "sum|concat",
	  "sum the replies' values, or concatenate their bodies (default sum)" },
	{ "bind", OPT_BIND, "ADDR",
	  "take clients' requests on ADDR only (default: every address)" },
	{ "max-gathers", OPT_MAX, "N",
	  "gathers out at once; a request past them is dropped, 1-65536 (default 1024)" },
	{ "cpu", OPT_CPU, "N", "pin to CPU N" },
	{ "busy", OPT_BUSY, NULL, "spin instead of sleeping for events" },
	{ "verbose", 'v', NULL, "print the counters every second" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ NULL, 0, NULL, NULL },
};

#define SERVE_SYNOPSIS                                                       \
	"sgbase serve --targets SPEC [--engine epoll|uring] [--port PORT]\n" \
	"       [--deadline-us US] [--reduce sum|concat] [--bind ADDR] [--cpu N]"
#define SERVE_ABOUT                                                              \
	"A scatter-gather coordinator on kernel UDP sockets: each request's\n"   \
	"body is sent to every target behind a 16-byte rr_sg_hdr, from one\n"    \
	"socket, and the client is answered once, when all targets replied\n"    \
	"or at the deadline: \"SUM ANSWERED/TARGETS[ missed I,J,...]\". Stops\n" \
	"on SIGINT/SIGTERM and prints its counters."

struct serve_args {
	struct sg_serve_cfg cfg;
	const char *spec;
};

static int serve_apply(int key, const char *arg, void *ctx)
{
	struct serve_args *a = ctx;
	struct sg_serve_cfg *c = &a->cfg;
	unsigned long v;

	switch (key) {
	case OPT_ENGINE:
		if (!strcmp(arg, "epoll"))
			c->engine = SG_EPOLL;
		else if (!strcmp(arg, "uring"))
			c->engine = SG_URING;
		else
			return rr_opt_fail(
				SG_PROG, "--engine is epoll or uring, not '%s'",
				arg);
		return 0;
	case 'p':
		return sg_port_option(arg, &c->port);
	case OPT_TARGETS:
		a->spec = arg;
		return 0;
	case OPT_DEADLINE:
		if (rr_parse_ulong(arg, 1, 60000000, &v))
			return rr_opt_fail(
				SG_PROG,
				"--deadline-us takes 1-60000000 microseconds, not '%s'",
				arg);
		c->deadline_ns = (uint64_t)v * 1000;
		return 0;
	case OPT_REDUCE:
		if (!strcmp(arg, "sum"))
			c->reduce = SG_SUM;
		else if (!strcmp(arg, "concat"))
			c->reduce = SG_CONCAT;
		else
			return rr_opt_fail(
				SG_PROG, "--reduce is sum or concat, not '%s'",
				arg);
		return 0;
	case OPT_BIND:
		c->bind = arg;
		return 0;
	case OPT_MAX:
		if (rr_parse_ulong(arg, 1, 65536, &v))
			return rr_opt_fail(
				SG_PROG,
				"--max-gathers takes 1-65536, not '%s'", arg);
		c->max_gathers = (uint32_t)v;
		return 0;
	case OPT_CPU:
		return sg_parse_cpu(arg, &c->cpu);
	case OPT_BUSY:
		c->busy = true;
		return 0;
	case 'v':
		c->verbose = true;
		return 0;
	}
	return 0;
}

/* The targets in the family of the one socket that sends to them all:
 * IPv4 if they all are, else IPv6 with IPv4 ones mapped. */
static int targets_setup(struct sg_targets *tg, const char *spec)
{
	struct sockaddr_storage *sa;
	char err[256];
	uint32_t i, n;

	sa = calloc(RR_SG_MAX_TARGETS, sizeof(*sa));
	if (!sa)
		return rr_opt_fail(SG_PROG, "out of memory");
	if (sg_parse_targets(spec, sa, RR_SG_MAX_TARGETS, &n, err,
			     sizeof(err))) {
		free(sa);
		return rr_opt_fail(SG_PROG, "--targets: %s", err);
	}
	tg->family = AF_INET;
	for (i = 0; i < n; i++)
		if (sa[i].ss_family == AF_INET6)
			tg->family = AF_INET6;
	for (i = 0; tg->family == AF_INET6 && i < n; i++) {
		struct sockaddr_in v4 = *(struct sockaddr_in *)&sa[i];
		struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&sa[i];

		if (v4.sin_family != AF_INET)
			continue;
		memset(v6, 0, sizeof(*v6));
		v6->sin6_family = AF_INET6;
		v6->sin6_port = v4.sin_port;
		v6->sin6_addr.s6_addr[10] = 0xff;
		v6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&v6->sin6_addr.s6_addr[12], &v4.sin_addr, 4);
	}
	tg->sa = sa;
	tg->n = n;
	tg->salen = tg->family == AF_INET ? sizeof(struct sockaddr_in)
					  : sizeof(struct sockaddr_in6);
	return 0;
}

int sg_serve_main(int argc, char **argv)
{
	static const struct rr_opt_prog prog = { "sgbase serve", SERVE_SYNOPSIS,
						 SERVE_ABOUT, serve_opts };
	struct serve_args a = { .cfg = { .engine = SG_EPOLL,
					 .reduce = SG_SUM,
					 .port = 9014,
					 .deadline_ns = 10000000,
					 .max_gathers = 1024,
					 .cpu = -1 } };
	struct sg_serve_cfg *c = &a.cfg;
	struct sockaddr_storage csa, tsa;
	socklen_t clen;
	struct sg_table t;
	int ret, cfd, tfd;

	ret = rr_opt_parse(&prog, argc, argv, serve_apply, &a);
	if (ret)
		return ret;
	if (optind < argc)
		return rr_opt_fail(SG_PROG, "serve: unexpected argument '%s'",
				   argv[optind]);
	if (!a.spec)
		return rr_opt_fail(
			SG_PROG,
			"serve: --targets SPEC is required (see --help)");
	ret = targets_setup(&c->targets, a.spec);
	if (ret)
		return ret;
	if (c->bind) {
		if (sg_parse_addr(c->bind, c->port, &csa, &clen))
			return rr_opt_fail(
				SG_PROG,
				"--bind takes an IPv4 or IPv6 address, not '%s'",
				c->bind);
	} else {
		struct sockaddr_in6 *any = (struct sockaddr_in6 *)&csa;

		memset(&csa, 0, sizeof(csa));
		any->sin6_family = AF_INET6;
		any->sin6_port = htons(c->port);
		clen = sizeof(*any);
	}
	sg_pin(c->cpu);
	sg_signals();
	cfd = sg_udp_socket(csa.ss_family, (struct sockaddr *)&csa, clen, true);
	if (cfd < 0) {
		fprintf(stderr, "%s: cannot bind port %u: %s\n", SG_PROG,
			c->port, strerror(-cfd));
		return 1;
	}
	/* One socket for every target, on an ephemeral port. */
	memset(&tsa, 0, sizeof(tsa));
	tsa.ss_family = (sa_family_t)c->targets.family;
	tfd = sg_udp_socket(c->targets.family, (struct sockaddr *)&tsa,
			    c->targets.salen, true);
	if (tfd < 0) {
		fprintf(stderr, "%s: targets' socket: %s\n", SG_PROG,
			strerror(-tfd));
		close(cfd);
		return 1;
	}
	ret = sg_table_init(&t, c);
	if (ret) {
		fprintf(stderr, "%s: %s\n", SG_PROG, strerror(-ret));
		close(tfd);
		close(cfd);
		return 1;
	}
	fprintf(stderr,
		"%s: serve: %s engine, %u targets, %s, deadline %llu us, port %u%s: ready\n",
		SG_PROG, c->engine == SG_EPOLL ? "epoll" : "uring",
		c->targets.n, c->reduce == SG_SUM ? "sum" : "concat",
		(unsigned long long)(c->deadline_ns / 1000), c->port,
		c->busy ? ", busy" : "");
	ret = c->engine == SG_EPOLL ? sg_run_epoll(&t, cfd, tfd)
				    : sg_run_uring(&t, cfd, tfd);
	sg_stats_print(&t, c->engine == SG_EPOLL ? "epoll" : "uring");
	sg_table_free(&t);
	free(c->targets.sa);
	close(tfd);
	close(cfd);
	return ret ? 1 : 0;
}
