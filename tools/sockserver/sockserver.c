// SPDX-License-Identifier: GPL-2.0
/*
 * sockserver: the kernel-socket baselines reqrouter is judged against,
 * serving the same functions/ registry.
 *
 *   --simple  one socket per port, recvfrom/sendto one datagram at a time
 *             (the thesis' naive server);
 *   default   one SO_REUSEPORT socket per port in each of -t pinned
 *             threads, recvmmsg/sendmmsg in batches (the optimised one).
 *
 * Sockets are IPv6 with IPV6_V6ONLY off, so IPv4 clients are served too.
 * Replies are written over the request in place, as in reqrouter.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "function.h"
#include "log.h"
#include "registry.h"
#include "toolargs.h"
#include "config.h"
#include "opttable.h"

#define MAX_PORTS 32
#define MAX_THREADS 64
#define MAX_BATCH 256
#define BUF_SIZE 2048 /* one MTU-sized datagram and room for the reply */

enum { OPT_SIMPLE = 256, OPT_CPUS, OPT_BUSY, OPT_FN_CONFIG };

static const struct rr_opt opts[] = {
	{ "port", 'p', "PORT[,PORT...]",
	  "serve the function registered on each port (default 1232)" },
	{ "function", 'f', "NAME", "serve NAME on every port given instead" },
	{ "threads", 't', "N",
	  "threads, one socket per port each (default 1)" },
	{ "batch", 'b', "N", "datagrams per recvmmsg/sendmmsg (default 64)" },
	{ "simple", OPT_SIMPLE, NULL,
	  "recvfrom/sendto on one socket per port, one thread" },
	{ "cpus", OPT_CPUS, "LIST", "pin thread i to the i-th CPU of LIST" },
	{ "busy", OPT_BUSY, NULL, "spin on non-blocking receives" },
	{ "fn-config", OPT_FN_CONFIG, "FILE",
	  "functions' settings, from reqrouter's config FILE (for functions with state)" },
	{ "verbose", 'v', NULL, "print the counters each second" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ NULL, 0, NULL, NULL },
};

#define SYNOPSIS \
	"sockserver -p PORT[,PORT...] [-t THREADS] [--simple] [--cpus LIST]"
#define ABOUT                                                                \
	"UDP request/response server on kernel sockets over the functions\n" \
	"registry: the baseline for reqrouter. Stops on SIGINT/SIGTERM."

struct srv_config {
	uint16_t ports[MAX_PORTS];
	const struct rr_function *fns[MAX_PORTS];
	int nports;
	const struct rr_function *fn_override;
	const char *fn_config;
	struct rr_fn_instance *insts[MAX_PORTS]; /* by port, as fns */
	unsigned int threads;
	unsigned int batch;
	bool simple;
	bool busy;
	bool verbose;
	int cpus[RR_MAX_CPUS]; /* --cpus, as rr_parse_cpus() gives it */
	uint32_t ncpus;
};

struct srv_thread {
	pthread_t tid;
	unsigned int idx;
	const struct srv_config *cfg;
	int fds[MAX_PORTS];
	uint64_t requests;
	uint64_t replies;
	uint64_t fn_errors;
	uint64_t send_errors;
	uint64_t fn_counters[RR_FN_MAX_COUNTERS]; /* the functions', unread */
	int err;
} __attribute__((aligned(64)));

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void inc(uint64_t *v, uint64_t n)
{
	__atomic_store_n(v, *v + n, __ATOMIC_RELAXED);
}

static int open_socket(uint16_t port, bool reuseport)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(port),
				  .sin6_addr = IN6ADDR_ANY_INIT };
	struct timeval tv = { 0, 200000 };
	int fd, one = 1, zero = 0, sz = 4 << 20, err;

	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (reuseport &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)))
		goto fail;
	/* Wake up now and then to notice a stop request. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

/*
 * The request context as reqrouter gives it, from the peer's address. The
 * destination address stays unset: it would take IP_PKTINFO control data
 * on every datagram, which the thesis' servers did not pay for, and no
 * bundled function reads it.
 */
static void fill_request(struct rr_request *req, const struct sockaddr_in6 *a,
			 struct srv_thread *th, int i)
{
	uint16_t port = th->cfg->ports[i];
	unsigned int thread = th->idx;

	memset(req, 0, sizeof(*req));
	if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
		req->family = AF_INET;
		memcpy(&req->src.v4, &a->sin6_addr.s6_addr[12], 4);
	} else {
		req->family = AF_INET6;
		req->src.v6 = a->sin6_addr;
	}
	req->src_port = ntohs(a->sin6_port);
	req->dst_port = port;
	req->thread = thread;
	rr_fn_request_bind(req, th->cfg->insts[i], thread, th->fn_counters);
}

/* --simple: one datagram per system call each way. */
static void *simple_run(void *arg)
{
	struct srv_thread *th = arg;
	const struct srv_config *cfg = th->cfg;
	struct pollfd pfd[MAX_PORTS];
	uint8_t buf[BUF_SIZE];
	struct sockaddr_in6 a;
	struct rr_request req;
	socklen_t al;
	ssize_t n;
	int i, r;

	rr_opt_pin_thread("sockserver", cfg->cpus, cfg->ncpus, th->idx);
	for (i = 0; i < cfg->nports; i++) {
		pfd[i].fd = th->fds[i];
		pfd[i].events = POLLIN;
	}
	while (!stop) {
		if (cfg->nports > 1 && poll(pfd, (nfds_t)cfg->nports, 200) <= 0)
			continue;
		for (i = 0; i < cfg->nports; i++) {
			if (cfg->nports > 1 && !(pfd[i].revents & POLLIN))
				continue;
			al = sizeof(a);
			n = recvfrom(th->fds[i], buf, sizeof(buf),
				     cfg->nports > 1 ? MSG_DONTWAIT : 0,
				     (struct sockaddr *)&a, &al);
			if (n < 0)
				continue;
			inc(&th->requests, 1);
			fill_request(&req, &a, th, i);
			r = cfg->fns[i]->handler(&req, buf, (size_t)n,
						 sizeof(buf));
			if (r < 0 || r > (int)sizeof(buf)) {
				inc(&th->fn_errors, 1);
				continue;
			}
			if (sendto(th->fds[i], buf, (size_t)r, 0,
				   (struct sockaddr *)&a, al) < 0)
				inc(&th->send_errors, 1);
			else
				inc(&th->replies, 1);
		}
	}
	return NULL;
}

struct batch {
	struct mmsghdr rmsg[MAX_BATCH];
	struct mmsghdr smsg[MAX_BATCH];
	struct iovec iov[MAX_BATCH];
	struct iovec siov[MAX_BATCH];
	struct sockaddr_in6 addr[MAX_BATCH];
	uint8_t buf[MAX_BATCH][BUF_SIZE];
};

/* Receives a batch on socket @i, answers it with one sendmmsg. */
static int serve_batch(struct srv_thread *th, struct batch *b, int i, int flags)
{
	const struct srv_config *cfg = th->cfg;
	unsigned int k, ns = 0;
	struct rr_request req;
	int n, r, sent;

	for (k = 0; k < cfg->batch; k++) {
		b->iov[k].iov_len = BUF_SIZE;
		b->rmsg[k].msg_hdr.msg_namelen = sizeof(b->addr[k]);
	}
	n = recvmmsg(th->fds[i], b->rmsg, cfg->batch, flags, NULL);
	if (n <= 0)
		return 0;
	inc(&th->requests, (uint64_t)n);
	for (k = 0; k < (unsigned int)n; k++) {
		fill_request(&req, &b->addr[k], th, i);
		r = cfg->fns[i]->handler(&req, b->buf[k], b->rmsg[k].msg_len,
					 BUF_SIZE);
		if (r < 0 || r > BUF_SIZE) {
			inc(&th->fn_errors, 1);
			continue;
		}
		/* Only answered requests go out: a failed function must not
		 * send its neighbour's reply twice or a stale buffer. */
		b->siov[ns].iov_base = b->buf[k];
		b->siov[ns].iov_len = (size_t)r;
		b->smsg[ns].msg_hdr.msg_name = &b->addr[k];
		b->smsg[ns].msg_hdr.msg_namelen =
			b->rmsg[k].msg_hdr.msg_namelen;
		ns++;
	}
	for (k = 0; k < ns; k += (unsigned int)sent) {
		sent = sendmmsg(th->fds[i], b->smsg + k, ns - k, 0);
		if (sent <= 0) {
			inc(&th->send_errors, ns - k);
			break;
		}
		inc(&th->replies, (uint64_t)sent);
	}
	return n;
}

static void *batch_run(void *arg)
{
	struct srv_thread *th = arg;
	const struct srv_config *cfg = th->cfg;
	struct pollfd pfd[MAX_PORTS];
	struct batch *b;
	unsigned int k;
	int i, flags;

	rr_opt_pin_thread("sockserver", cfg->cpus, cfg->ncpus, th->idx);
	b = calloc(1, sizeof(*b));
	if (!b) {
		th->err = -ENOMEM;
		return NULL;
	}
	for (k = 0; k < MAX_BATCH; k++) {
		b->iov[k].iov_base = b->buf[k];
		b->rmsg[k].msg_hdr.msg_iov = &b->iov[k];
		b->rmsg[k].msg_hdr.msg_iovlen = 1;
		b->rmsg[k].msg_hdr.msg_name = &b->addr[k];
		b->smsg[k].msg_hdr.msg_iov = &b->siov[k];
		b->smsg[k].msg_hdr.msg_iovlen = 1;
	}
	for (i = 0; i < cfg->nports; i++) {
		pfd[i].fd = th->fds[i];
		pfd[i].events = POLLIN;
	}
	/* One port sleeping: block in recvmmsg for the first datagram and
	 * take what else is queued. Busy or several ports: never block in
	 * the receive itself. */
	flags = cfg->busy || cfg->nports > 1 ? MSG_DONTWAIT : MSG_WAITFORONE;
	while (!stop) {
		if (!cfg->busy && cfg->nports > 1 &&
		    poll(pfd, (nfds_t)cfg->nports, 200) <= 0)
			continue;
		for (i = 0; i < cfg->nports; i++)
			serve_batch(th, b, i, flags);
	}
	free(b);
	return NULL;
}

static void print_counters(struct srv_thread *th, unsigned int n)
{
	uint64_t req = 0, rep = 0, fe = 0, se = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		req += __atomic_load_n(&th[i].requests, __ATOMIC_RELAXED);
		rep += __atomic_load_n(&th[i].replies, __ATOMIC_RELAXED);
		fe += __atomic_load_n(&th[i].fn_errors, __ATOMIC_RELAXED);
		se += __atomic_load_n(&th[i].send_errors, __ATOMIC_RELAXED);
	}
	pr_warn("requests %llu replies %llu function errors %llu send errors %llu\n",
		(unsigned long long)req, (unsigned long long)rep,
		(unsigned long long)fe, (unsigned long long)se);
}

/* One option of the table. */
static int apply(int key, const char *arg, void *ctx)
{
	struct srv_config *cfg = ctx;
	unsigned long v;

	switch (key) {
	case 'p':
		return rr_opt_ports("sockserver", arg, cfg->ports, MAX_PORTS,
				    &cfg->nports);
	case 'f':
		return rr_opt_function("sockserver", arg, &cfg->fn_override);
	case 't':
		if (rr_parse_ulong(arg, 1, MAX_THREADS, &v))
			return rr_opt_fail(
				"sockserver",
				"-t must be a number in 1..64, not '%s'", arg);
		cfg->threads = (unsigned int)v;
		return 0;
	case 'b':
		if (rr_parse_ulong(arg, 1, MAX_BATCH, &v))
			return rr_opt_fail(
				"sockserver",
				"-b must be a number in 1..256, not '%s'", arg);
		cfg->batch = (unsigned int)v;
		return 0;
	case OPT_SIMPLE:
		cfg->simple = true;
		return 0;
	case OPT_CPUS:
		return rr_opt_cpus("sockserver", arg, cfg->cpus, &cfg->ncpus);
	case OPT_BUSY:
		cfg->busy = true;
		return 0;
	case OPT_FN_CONFIG:
		cfg->fn_config = arg;
		return 0;
	case 'v':
		cfg->verbose = true;
		return 0;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct srv_config *cfg)
{
	static const struct rr_opt_prog prog = { "sockserver", SYNOPSIS, ABOUT,
						 opts };
	int i, ret;

	/* The defaults the option table's help gives. */
	*cfg = (struct srv_config){
		.ports = { 1232 }, .nports = 1, .threads = 1, .batch = 64
	};
	ret = rr_opt_parse(&prog, argc, argv, apply, cfg);
	if (ret)
		return ret;
	if (optind < argc)
		return rr_opt_fail("sockserver", "unexpected argument '%s'",
				   argv[optind]);
	if (cfg->simple && cfg->threads > 1)
		return rr_opt_fail("sockserver", "%s",
				   "--simple runs one thread; drop -t");
	for (i = 0; i < cfg->nports; i++) {
		cfg->fns[i] = cfg->fn_override
				      ? cfg->fn_override
				      : rr_registry_by_port(cfg->ports[i]);
		if (!cfg->fns[i]) {
			pr_warn("no function registered on port %u (use -f NAME)\n",
				cfg->ports[i]);
			return 2;
		}
	}
	return 0;
}

/* Closes what open_sockets() opened and frees the threads. */
static void close_sockets(const struct srv_config *cfg, struct srv_thread *th)
{
	unsigned int t;
	int i;

	for (t = 0; t < cfg->threads; t++)
		for (i = 0; i < cfg->nports; i++)
			if (th[t].fds[i] >= 0)
				close(th[t].fds[i]);
	free(th);
}

/* The threads' sockets, one per port each; NULL after saying why. */
static struct srv_thread *open_sockets(struct srv_config *cfg)
{
	struct srv_thread *th;
	unsigned int t;
	int i, r;

	th = aligned_alloc(64, sizeof(*th) * cfg->threads);
	if (!th)
		return NULL;
	memset(th, 0, sizeof(*th) * cfg->threads);
	for (t = 0; t < cfg->threads; t++)
		for (i = 0; i < cfg->nports; i++)
			th[t].fds[i] = -1;
	for (t = 0; t < cfg->threads; t++) {
		th[t].idx = t;
		th[t].cfg = cfg;
		for (i = 0; i < cfg->nports; i++) {
			r = open_socket(cfg->ports[i], !cfg->simple);
			if (r < 0) {
				pr_warn("cannot serve port %u: %s\n",
					cfg->ports[i], strerror(-r));
				close_sockets(cfg, th);
				return NULL;
			}
			th[t].fds[i] = r;
		}
	}
	return th;
}

int main(int argc, char **argv)
{
	struct srv_config cfg; /* parse_args() fills it */
	struct sigaction sa = { .sa_handler = on_signal };
	struct srv_thread *th;
	unsigned int t, started = 0;
	char err[256];
	int i, r, ret = 1;

	rr_log_set_prog("sockserver");
	r = parse_args(argc, argv, &cfg);
	if (r)
		return r;
	if (rr_opt_registry("sockserver"))
		return 1;
	/* Each port's function with its state, as reqrouter would make it. */
	for (i = 0; i < cfg.nports; i++)
		if (rr_fn_instance_from_file(cfg.fns[i], cfg.ports[i],
					     cfg.fn_config, cfg.threads,
					     &cfg.insts[i], err, sizeof(err))) {
			pr_warn("%s\n", err);
			goto out_fns;
		}
	th = open_sockets(&cfg);
	if (!th)
		goto out_fns;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (t = 0; t < cfg.threads; t++) {
		r = pthread_create(&th[t].tid, NULL,
				   cfg.simple ? simple_run : batch_run, &th[t]);
		if (r) {
			pr_warn("cannot start a thread: %s\n", strerror(r));
			stop = 1;
			break;
		}
		started++;
	}
	pr_info("%s, %u thread(s), %d port(s), ready\n",
		cfg.simple ? "simple recvfrom/sendto"
			   : "recvmmsg/sendmmsg with SO_REUSEPORT",
		cfg.threads, cfg.nports);
	while (!stop) {
		sleep(1);
		if (cfg.verbose)
			print_counters(th, cfg.threads);
	}
	for (t = 0; t < started; t++)
		pthread_join(th[t].tid, NULL);
	print_counters(th, cfg.threads);
	ret = started == cfg.threads ? 0 : 1;
	close_sockets(&cfg, th);
out_fns:
	for (i = 0; i < cfg.nports; i++)
		rr_fn_instance_free(cfg.insts[i]);
	return ret;
}
