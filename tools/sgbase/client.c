// SPDX-License-Identifier: GPL-2.0
/*
 * sgbase client: a closed loop against a scatter-gather coordinator,
 * sgbase serve or reqrouter's fan-out function alike. C sockets, one
 * request out on each: a reply comes back without anything that names its
 * request, so the socket is what matches them. A request that times out
 * has its socket replaced (a fresh port), so that its late reply cannot
 * be taken for the next one's.
 *
 * Each reply's last line is checked against the contract
 * ("[VALUE ]ANSWERED/TARGETS[ missed I,J,...]"); with --expect-sum N,
 * VALUE must be N and every target must have answered. The summary ends
 * with one line of key=value pairs for scripts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "clock.h"
#include "hist.h"
#include "opttable.h"
#include "parse.h"
#include "sgbase.h"
#include "toolargs.h"

enum {
	OPT_SERVER = 256,
	OPT_CONC,
	OPT_DURATION,
	OPT_PAYLOAD,
	OPT_EXPECT,
	OPT_TIMEOUT,
	OPT_COUNT,
	OPT_CPU,
	OPT_BUSY,
};

static const struct rr_opt client_opts[] = {
	{ "server", OPT_SERVER, "ADDR:PORT",
	  "the coordinator, IPv4 or [IPv6] (required)" },
	{ "concurrency", OPT_CONC, "C",
	  "requests out at once, one socket each, 1-4096 (default 1)" },
	{ "duration", OPT_DURATION, "S",
	  "send for S seconds, 1-3600 (default 5)" },
	{ "count", OPT_COUNT, "N", "stop after N replies (default: no limit)" },
	{ "payload", OPT_PAYLOAD, "TEXT",
	  "each request's body, scattered to every target (default 1)" },
	{ "expect-sum", OPT_EXPECT, "N",
	  "a reply is wrong unless its VALUE is N and every target answered" },
	{ "timeout-ms", OPT_TIMEOUT, "MS",
	  "give a request up after MS ms, 1-60000 (default 1000)" },
	{ "cpu", OPT_CPU, "N", "pin to CPU N" },
	{ "busy", OPT_BUSY, NULL, "spin instead of sleeping for replies" },
	{ "verbose", 'v', NULL, "print the first wrong reply, and progress" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ NULL, 0, NULL, NULL },
};

#define CLIENT_SYNOPSIS                                                       \
	"sgbase client --server ADDR:PORT [--concurrency C] [--duration S]\n" \
	"       [--payload TEXT] [--expect-sum N] [--timeout-ms MS] [--count N]"
#define CLIENT_ABOUT                                                            \
	"A closed loop against a scatter-gather coordinator: C requests out,\n" \
	"each reply checked. Ends with one line: rate= (answered gathers/s)\n"  \
	"full_rate= (those every target answered) p50_us= p99_us= done=\n"      \
	"timeouts= wrong= partial= sent=. Exits 1 if a reply was wrong or\n"    \
	"none came."

struct client_cfg {
	struct sockaddr_storage server;
	socklen_t server_len;
	bool have_server;
	uint32_t conc;
	uint32_t duration;
	uint64_t count;
	const char *payload;
	size_t plen;
	bool expect;
	uint64_t expect_sum;
	uint64_t timeout_ns;
	int cpu;
	bool busy;
	bool verbose;
};

struct conn {
	int fd;
	bool out;
	uint64_t sent_ns;
};

struct client {
	struct client_cfg *cfg;
	struct conn *c;
	int epfd;
	struct hist h;
	uint64_t sent, done, timeouts, wrong, partial, stray, send_errors;
	bool said_wrong;
};

static int client_apply(int key, const char *arg, void *ctx)
{
	struct client_cfg *c = ctx;
	unsigned long long ull;
	unsigned long v;

	switch (key) {
	case OPT_SERVER:
		if (sg_parse_hostport(arg, &c->server, &c->server_len))
			return rr_opt_fail(
				SG_PROG,
				"--server takes ADDR:PORT or [IPv6]:PORT, not '%s'",
				arg);
		c->have_server = true;
		return 0;
	case OPT_CONC:
		if (rr_parse_ulong(arg, 1, 4096, &v))
			return rr_opt_fail(
				SG_PROG, "--concurrency takes 1-4096, not '%s'",
				arg);
		c->conc = (uint32_t)v;
		return 0;
	case OPT_DURATION:
		if (rr_parse_ulong(arg, 1, 3600, &v))
			return rr_opt_fail(
				SG_PROG,
				"--duration takes 1-3600 seconds, not '%s'",
				arg);
		c->duration = (uint32_t)v;
		return 0;
	case OPT_COUNT:
		if (rr_parse_ull(arg, 10, 1, UINT64_MAX, &ull))
			return rr_opt_fail(
				SG_PROG,
				"--count takes a number from 1, not '%s'", arg);
		c->count = ull;
		return 0;
	case OPT_PAYLOAD:
		c->payload = arg;
		c->plen = strlen(arg);
		if (!c->plen || c->plen > SG_MAX_PAYLOAD)
			return rr_opt_fail(
				SG_PROG, "--payload takes 1-%u bytes, not %zu",
				SG_MAX_PAYLOAD, c->plen);
		return 0;
	case OPT_EXPECT:
		if (rr_parse_ull(arg, 10, 0, UINT64_MAX, &ull))
			return rr_opt_fail(
				SG_PROG,
				"--expect-sum takes a number, not '%s'", arg);
		c->expect = true;
		c->expect_sum = ull;
		return 0;
	case OPT_TIMEOUT:
		if (rr_parse_ulong(arg, 1, 60000, &v))
			return rr_opt_fail(
				SG_PROG, "--timeout-ms takes 1-60000, not '%s'",
				arg);
		c->timeout_ns = (uint64_t)v * 1000000;
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

/* A decimal number of 1-20 digits at *@p, which is moved past it. */
static bool take_num(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;

	*v = 0;
	while (*p < end && **p >= '0' && **p <= '9' && *p - s < 20)
		*v = *v * 10 + (uint64_t)(*(*p)++ - '0');
	return *p > s;
}

/*
 * The reply's last line: "[VALUE ]ANSWERED/TARGETS[ missed LIST]\n".
 * Returns false if it does not read so.
 */
static bool parse_line(const char *buf, size_t len, bool *have_value,
		       uint64_t *value, uint64_t *answered, uint64_t *targets)
{
	const char *end, *p, *q;
	uint64_t a;

	if (!len || buf[len - 1] != '\n')
		return false;
	end = buf + len - 1;
	for (p = end; p > buf && p[-1] != '\n'; p--)
		;
	q = p;
	*have_value = false;
	if (!take_num(&q, end, &a))
		return false;
	if (q < end && *q == ' ') {
		*have_value = true;
		*value = a;
		q++;
		if (!take_num(&q, end, &a))
			return false;
	}
	*answered = a;
	if (q >= end || *q++ != '/' || !take_num(&q, end, targets))
		return false;
	if (*answered > *targets)
		return false;
	if (q == end)
		return *answered == *targets;
	/* The missed list, required when some did not answer. */
	if ((size_t)(end - q) < 8 || memcmp(q, " missed ", 8) ||
	    *answered == *targets)
		return false;
	for (q += 8; q < end; q++)
		if (!(*q >= '0' && *q <= '9') && *q != ',' && *q != '.')
			return false;
	return true;
}

static void check_reply(struct client *cl, const char *buf, size_t len)
{
	uint64_t value = 0, answered, targets;
	bool have_value, ok;

	ok = parse_line(buf, len, &have_value, &value, &answered, &targets);
	if (ok && answered < targets)
		cl->partial++;
	if (ok && cl->cfg->expect)
		ok = have_value && value == cl->cfg->expect_sum &&
		     answered == targets;
	if (ok)
		return;
	cl->wrong++;
	if (cl->cfg->verbose && !cl->said_wrong) {
		size_t show = len > 200 ? 200 : len;

		cl->said_wrong = true;
		fprintf(stderr,
			"%s: client: a wrong reply (%zu bytes): '%.*s'\n",
			SG_PROG, len, (int)show, buf);
	}
}

static int conn_open(struct client *cl, uint32_t i)
{
	struct client_cfg *cfg = cl->cfg;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };
	int fd;

	fd = socket(cfg->server.ss_family,
		    SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&cfg->server, cfg->server_len) ||
	    epoll_ctl(cl->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		int err = -errno;

		close(fd);
		return err;
	}
	cl->c[i].fd = fd;
	cl->c[i].out = false;
	return 0;
}

static void conn_send(struct client *cl, uint32_t i)
{
	struct conn *c = &cl->c[i];

	c->sent_ns = rr_now_ns();
	if (send(c->fd, cl->cfg->payload, cl->cfg->plen, 0) < 0) {
		/* Counted, and given up at the timeout like a lost one. */
		cl->send_errors++;
	}
	c->out = true;
	cl->sent++;
}

static void conn_recv(struct client *cl, uint32_t i)
{
	static char buf[SG_MAX_REPLY + 1];
	struct conn *c = &cl->c[i];
	uint64_t now;
	ssize_t n;

	while ((n = recv(c->fd, buf, sizeof(buf), 0)) >= 0) {
		now = rr_now_ns();
		if (!c->out) {
			cl->stray++;
			continue;
		}
		c->out = false;
		cl->done++;
		hist_add(&cl->h, now - c->sent_ns);
		check_reply(cl, buf, (size_t)n);
	}
}

int sg_client_main(int argc, char **argv)
{
	static const struct rr_opt_prog prog = { "sgbase client",
						 CLIENT_SYNOPSIS, CLIENT_ABOUT,
						 client_opts };
	struct client_cfg cfg = { .conc = 1,
				  .duration = 5,
				  .payload = "1",
				  .plen = 1,
				  .timeout_ns = 1000000000ULL,
				  .cpu = -1 };
	uint64_t start, end, now, last_check, last_print;
	struct epoll_event evs[64];
	struct client *cl;
	double elapsed;
	uint32_t i;
	int n, k, ret = 0;

	ret = rr_opt_parse(&prog, argc, argv, client_apply, &cfg);
	if (ret)
		return ret;
	if (optind < argc)
		return rr_opt_fail(SG_PROG, "client: unexpected argument '%s'",
				   argv[optind]);
	if (!cfg.have_server)
		return rr_opt_fail(
			SG_PROG,
			"client: --server ADDR:PORT is required (see --help)");
	cl = calloc(1, sizeof(*cl));
	if (cl)
		cl->c = calloc(cfg.conc, sizeof(*cl->c));
	if (!cl || !cl->c) {
		free(cl);
		fprintf(stderr, "%s: out of memory\n", SG_PROG);
		return 1;
	}
	cl->cfg = &cfg;
	sg_pin(cfg.cpu);
	sg_signals();
	cl->epfd = epoll_create1(EPOLL_CLOEXEC);
	for (i = 0; i < cfg.conc; i++)
		cl->c[i].fd = -1;
	for (i = 0; i < cfg.conc; i++) {
		ret = cl->epfd < 0 ? -errno : conn_open(cl, i);
		if (ret) {
			fprintf(stderr, "%s: client: socket: %s\n", SG_PROG,
				strerror(-ret));
			ret = 1;
			goto out;
		}
	}
	start = last_check = last_print = rr_now_ns();
	end = start + (uint64_t)cfg.duration * 1000000000ULL;
	for (i = 0; i < cfg.conc; i++)
		conn_send(cl, i);
	for (now = start; now < end && !sg_stop;) {
		/* Sleep at most 10 ms: the timeouts are checked that often. */
		n = epoll_wait(cl->epfd, evs, 64, cfg.busy ? 0 : 10);
		for (k = 0; k < n; k++)
			conn_recv(cl, evs[k].data.u32);
		now = rr_now_ns();
		if (cfg.count && cl->done >= cfg.count)
			break;
		for (k = 0; k < n; k++) {
			i = evs[k].data.u32;
			if (!cl->c[i].out && now < end)
				conn_send(cl, i);
		}
		if (now - last_check >= 10000000) {
			last_check = now;
			for (i = 0; i < cfg.conc; i++) {
				struct conn *c = &cl->c[i];

				if (!c->out ||
				    now < c->sent_ns + cfg.timeout_ns)
					continue;
				cl->timeouts++;
				epoll_ctl(cl->epfd, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
				c->fd = -1;
				if (conn_open(cl, i)) {
					fprintf(stderr,
						"%s: client: cannot reopen a socket\n",
						SG_PROG);
					ret = 1;
					goto out;
				}
				conn_send(cl, i);
			}
		}
		if (cfg.verbose && now - last_print >= 1000000000) {
			last_print = now;
			fprintf(stderr,
				"%s: client: %.0f s: done=%llu timeouts=%llu wrong=%llu\n",
				SG_PROG, (double)(now - start) / 1e9,
				(unsigned long long)cl->done,
				(unsigned long long)cl->timeouts,
				(unsigned long long)cl->wrong);
		}
	}
	elapsed = (double)(now - start) / 1e9;
	if (elapsed <= 0)
		elapsed = 1e-9;
	printf("rate=%.1f full_rate=%.1f p50_us=%.1f p99_us=%.1f done=%llu timeouts=%llu wrong=%llu partial=%llu sent=%llu\n",
	       (double)cl->done / elapsed,
	       (double)(cl->done - cl->partial) / elapsed,
	       (double)hist_quantile(&cl->h, 0.50) / 1000.0,
	       (double)hist_quantile(&cl->h, 0.99) / 1000.0,
	       (unsigned long long)cl->done, (unsigned long long)cl->timeouts,
	       (unsigned long long)cl->wrong, (unsigned long long)cl->partial,
	       (unsigned long long)cl->sent);
	if (cl->stray || cl->send_errors)
		fprintf(stderr, "%s: client: stray=%llu send_errors=%llu\n",
			SG_PROG, (unsigned long long)cl->stray,
			(unsigned long long)cl->send_errors);
	ret = cl->wrong || !cl->done ? 1 : 0;
out:
	for (i = 0; i < cfg.conc; i++)
		if (cl->c[i].fd >= 0)
			close(cl->c[i].fd);
	if (cl->epfd >= 0)
		close(cl->epfd);
	free(cl->c);
	free(cl);
	return ret;
}
