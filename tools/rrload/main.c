// SPDX-License-Identifier: GPL-2.0
/*
 * rrload: load client for reqrouter and any UDP request/response server.
 * Parses options, runs an engine (sockets, or frames offered from the
 * kernel), prints a progress line a second and a summary, writes JSON.
 * Exit status: 0, 1 if any reply was wrong, 2 for a usage error, 3 if the
 * run could not be set up.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "registry.h"
#include "toolargs.h"
#include "rrload.h"
#include "config.h"
#include "opttable.h"

enum {
	OPT_TIMEOUT = 256,
	OPT_BUSY,
	OPT_JSON,
	OPT_ENGINE,
	OPT_DST_MAC,
	OPT_CPUS,
	OPT_FN_CONFIG,
	OPT_PAYLOADS,
	OPT_LOST,
};

static const struct rr_opt opts[] = {
	{ "server", 's', "ADDR", "server IPv4 or IPv6 address (required)" },
	{ "port", 'p', "PORT[,PORT...]",
	  "UDP ports, spread over the sockets (default 1232)" },
	{ "function", 'f', "NAME",
	  "verify replies as NAME (default: the function on each port)" },
	{ "fn-config", OPT_FN_CONFIG, "FILE",
	  "functions' settings, from reqrouter's config FILE (needed to verify functions with state)" },
	{ "payloads", OPT_PAYLOADS, "FILE",
	  "send these requests in turn: one per line, as text, or as hex after '0x' (xdp engine: the first two bytes become the request's number, which the reply must echo, as DNS IDs)" },
	{ "conns", 'c', "N", "sockets (default 1)" },
	{ "threads", 'j', "N",
	  "threads, sockets spread over them (default 1)" },
	{ "size", 'l', "SIZE|MIN-MAX", "payload bytes (default 64)" },
	{ "duration", 'd', "SECONDS", "send for this long (default 5)" },
	{ "count", 'n', "COUNT", "send this many requests in total" },
	{ "rate", 'r', "RATE",
	  "open loop: requests/s in total, whatever the replies" },
	{ "inflight", 'w', "N",
	  "closed loop: requests out per socket (default 1)" },
	{ "timeout", OPT_TIMEOUT, "MS",
	  "give a request up after MS ms (default 1000)" },
	{ "busy", OPT_BUSY, NULL, "spin instead of sleeping for replies" },
	{ "json", OPT_JSON, "FILE", "write the summary as JSON to FILE" },
	{ "lost", OPT_LOST, "FILE",
	  "write when each request that timed out was sent (open loop: due), in seconds since the epoch, one a line, in order" },
	{ "quiet", 'q', NULL, "no progress line" },
	{ "cpus", OPT_CPUS, "LIST", "pin thread i to the i-th CPU of LIST" },
	{ "engine", OPT_ENGINE, "sock|xdp",
	  "xdp: offer frames from the kernel on -i (max rate)" },
	{ "iface", 'i', "IFACE", "xdp engine: the client's interface" },
	{ "dst-mac", OPT_DST_MAC, "MAC",
	  "xdp engine: server MAC (default: neighbour table)" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ NULL, 0, NULL, NULL },
};

#define SYNOPSIS                                                              \
	"rrload -s ADDR [-p PORT[,PORT...]] [-c CONNS] [-j THREADS]\n"        \
	"              [-l SIZE|MIN-MAX] [-d SECONDS | -n COUNT] [-r RATE]\n" \
	"              [-w INFLIGHT] [--timeout MS] [--busy] [--json FILE] [-q]"
#define ABOUT                                                                \
	"Sends UDP requests, matches and verifies every reply against the\n" \
	"function linked into the client, and reports rates and latency.\n"  \
	"Exit status: 1 if any reply was wrong, 2 usage, 3 setup failed."

volatile sig_atomic_t rl_stop;

/* One instance per function this run checks replies of. */
static struct {
	const struct rr_function *fn;
	struct rr_fn_instance *inst;
} instances[RL_MAX_PORTS + 1];
static unsigned int ninstances;

const struct rr_fn_instance *rl_fn_instance(const struct rr_function *fn)
{
	unsigned int i;

	for (i = 0; i < ninstances; i++)
		if (instances[i].fn == fn)
			return instances[i].inst;
	return NULL;
}

/* Runs init() of every function the run's ports (or -f) verify with, as
 * reqrouter would with the same config. */
static int make_instances(const struct rl_config *cfg)
{
	const struct rr_function *fn;
	char err[256];
	int i;

	for (i = 0; i < cfg->nports; i++) {
		fn = cfg->fn_override ? cfg->fn_override
				      : rr_registry_by_port(cfg->ports[i]);
		if (!fn || rl_fn_instance(fn) || !fn->init)
			continue; /* the engines report a missing one */
		if (rr_fn_instance_from_file(
			    fn, cfg->ports[i], cfg->fn_config, cfg->threads,
			    &instances[ninstances].inst, err, sizeof(err))) {
			fprintf(stderr, "rrload: %s%s\n", err,
				cfg->fn_config
					? ""
					: " (give its settings with --fn-config FILE)");
			return -EINVAL;
		}
		instances[ninstances++].fn = fn;
	}
	return 0;
}

static void free_instances(void)
{
	while (ninstances)
		rr_fn_instance_free(instances[--ninstances].inst);
}

static void on_signal(int sig)
{
	if (sig != SIGUSR1)
		rl_stop = 1;
}

void rl_pin(const struct rl_config *cfg, unsigned int idx)
{
	cpu_set_t set;

	if (!cfg->ncpus)
		return;
	CPU_ZERO(&set);
	CPU_SET(cfg->cpus[idx % cfg->ncpus], &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "rrload: cannot pin thread %u to CPU %d\n", idx,
			cfg->cpus[idx % cfg->ncpus]);
}

static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *v, const char *what)
{
	if (rr_parse_ulong(s, min, max, v)) {
		fprintf(stderr,
			"rrload: %s must be a number in %lu..%lu, not '%s'\n",
			what, min, max, s);
		return -EINVAL;
	}
	return 0;
}

static int parse_size(struct rl_config *cfg, const char *s)
{
	char buf[64], *dash;
	unsigned long a, b;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_uint(buf, 1, RL_MAX_PAYLOAD, &a, "-l size"))
		return -EINVAL;
	b = a;
	if (dash &&
	    parse_uint(dash + 1, a, RL_MAX_PAYLOAD, &b, "-l maximum size"))
		return -EINVAL;
	cfg->len_min = (unsigned int)a;
	cfg->len_max = (unsigned int)b;
	return 0;
}

static int parse_server(struct rl_config *cfg, const char *s)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&cfg->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&cfg->addr;

	memset(&cfg->addr, 0, sizeof(cfg->addr));
	if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		cfg->family = AF_INET;
		cfg->addrlen = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		cfg->family = AF_INET6;
		cfg->addrlen = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct rl_config *cfg)
{
	char shortopts[RR_OPT_SHORT_LEN(sizeof(opts) / sizeof(opts[0]))];
	struct option longopts[sizeof(opts) / sizeof(opts[0])];
	bool have_server = false;
	unsigned long v;
	int c;

	rr_opt_build(opts, shortopts, longopts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_server(cfg, optarg))
				return rr_opt_fail(
					"rrload",
					"-s needs an IPv4 or IPv6 address, not '%s'",
					optarg);
			have_server = true;
			break;
		case 'p':
			if (rr_opt_ports("rrload", optarg, cfg->ports,
					 RL_MAX_PORTS, &cfg->nports))
				return 2;
			break;
		case 'f':
			if (rr_opt_function("rrload", optarg,
					    &cfg->fn_override))
				return 2;
			break;
		case OPT_FN_CONFIG:
			cfg->fn_config = optarg;
			break;
		case OPT_PAYLOADS:
			cfg->payloads_file = optarg;
			break;
		case 'c':
			if (parse_uint(optarg, 1, RL_MAX_CONNS, &v, "-c"))
				return 2;
			cfg->conns = (unsigned int)v;
			break;
		case 'j':
			if (parse_uint(optarg, 1, RL_MAX_THREADS, &v, "-j"))
				return 2;
			cfg->threads = (unsigned int)v;
			break;
		case 'l':
			if (parse_size(cfg, optarg))
				return 2;
			break;
		case 'd':
			if (parse_uint(optarg, 1, 86400, &v, "-d"))
				return 2;
			cfg->duration = (double)v;
			break;
		case 'n':
			if (parse_uint(optarg, 1, 1ul << 48, &v, "-n"))
				return 2;
			cfg->count = v;
			break;
		case 'r':
			if (parse_uint(optarg, 1, 100000000, &v, "-r"))
				return 2;
			cfg->rate = (double)v;
			break;
		case 'w':
			if (parse_uint(optarg, 1, 65536, &v, "-w"))
				return 2;
			cfg->inflight = (unsigned int)v;
			break;
		case OPT_TIMEOUT:
			if (parse_uint(optarg, 1, 3600000, &v, "--timeout"))
				return 2;
			cfg->timeout_ns = v * 1000000ull;
			break;
		case OPT_BUSY:
			cfg->busy = true;
			break;
		case OPT_JSON:
			cfg->json = optarg;
			break;
		case OPT_LOST:
			cfg->lost_file = optarg;
			break;
		case 'q':
			cfg->quiet = true;
			break;
		case OPT_CPUS:
			if (rr_opt_cpus("rrload", optarg, cfg->cpus,
					&cfg->ncpus))
				return 2;
			break;
		case OPT_ENGINE:
			if (!strcmp(optarg, "xdp"))
				cfg->engine_xdp = true;
			else if (strcmp(optarg, "sock"))
				return rr_opt_fail(
					"rrload",
					"--engine is sock or xdp, not '%s'",
					optarg);
			break;
		case 'i':
			cfg->ifname = optarg;
			break;
		case OPT_DST_MAC:
			cfg->dst_mac = optarg;
			break;
		default:
			return rr_opt_other("rrload", c, argv, SYNOPSIS, ABOUT,
					    opts);
		}
	}
	if (optind < argc)
		return rr_opt_fail("rrload", "unexpected argument '%s'",
				   argv[optind]);
	if (!have_server)
		return rr_opt_fail("rrload", "%s",
				   "-s ADDR is required (see --help)");
	if (cfg->engine_xdp && !cfg->ifname)
		return rr_opt_fail("rrload", "%s",
				   "--engine xdp needs -i IFACE");
	if (!cfg->engine_xdp && (cfg->ifname || cfg->dst_mac))
		return rr_opt_fail("rrload", "%s",
				   "-i and --dst-mac need --engine xdp");
	if (cfg->engine_xdp && cfg->lost_file)
		return rr_opt_fail("rrload", "%s",
				   "--lost needs the socket engine");
	if (cfg->threads > cfg->conns) {
		if (cfg->conns > 1)
			return rr_opt_fail("rrload", "%s",
					   "-j THREADS cannot exceed -c CONNS");
		cfg->conns = cfg->threads;
	}
	if (!cfg->duration && !cfg->count)
		cfg->duration = 5;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One line of --payloads into @p: text as it is, or hex after "0x". */
static int parse_payload(const char *line, size_t len, struct rl_payload *p)
{
	size_t i, n = len;
	int hi, lo;

	if (len >= 2 && line[0] == '0' && line[1] == 'x') {
		line += 2;
		len -= 2;
		if (len % 2)
			return -EINVAL;
		n = len / 2;
	}
	if (n > RL_MAX_PAYLOAD)
		return -EMSGSIZE;
	p->data = malloc(n ? n : 1);
	if (!p->data)
		return -ENOMEM;
	p->len = (uint32_t)n;
	if (n == len) {
		memcpy(p->data, line, n);
		return 0;
	}
	for (i = 0; i < n; i++) {
		hi = hexval(line[2 * i]);
		lo = hexval(line[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		p->data[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static int load_payloads(struct rl_config *cfg)
{
	unsigned int lineno = 0, cap = 0;
	struct rl_payload *more;
	char *line = NULL;
	size_t size = 0;
	ssize_t len;
	FILE *f;
	int err = 0;

	f = fopen(cfg->payloads_file, "r");
	if (!f) {
		fprintf(stderr, "rrload: cannot open %s: %s\n",
			cfg->payloads_file, strerror(errno));
		return -errno;
	}
	while (!err && (len = getline(&line, &size, f)) >= 0) {
		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		if (cfg->npayloads == cap) {
			cap = cap ? cap * 2 : 64;
			more = realloc(cfg->payloads, cap * sizeof(*more));
			if (!more) {
				err = -ENOMEM;
				break;
			}
			cfg->payloads = more;
		}
		err = parse_payload(line, (size_t)len,
				    &cfg->payloads[cfg->npayloads]);
		if (err)
			fprintf(stderr, "rrload: %s:%u: %s\n",
				cfg->payloads_file, lineno,
				err == -EMSGSIZE ? "payload too long"
						 : "bad hex after 0x");
		else
			cfg->npayloads++;
	}
	/* The engines size their buffers from -l: make it cover them. */
	for (lineno = 0; lineno < cfg->npayloads; lineno++) {
		uint32_t n = cfg->payloads[lineno].len;

		if (!lineno || n < cfg->len_min)
			cfg->len_min = n;
		if (!lineno || n > cfg->len_max)
			cfg->len_max = n;
	}
	if (cfg->len_max == 0)
		cfg->len_max = 1; /* a buffer of 0 bytes is no buffer */
	free(line);
	fclose(f);
	if (!err && !cfg->npayloads) {
		fprintf(stderr, "rrload: %s holds no payload\n",
			cfg->payloads_file);
		err = -EINVAL;
	}
	return err;
}

struct rl_total {
	struct rl_counters c;
	struct hist h;
	double elapsed;
};

static void sum_threads(const struct rl_config *cfg, struct rl_thread *th,
			struct rl_total *t)
{
	uint64_t start = UINT64_MAX, end = 0, *dst, *src;
	unsigned int i, k;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < cfg->threads; i++) {
		dst = (uint64_t *)&t->c;
		src = (uint64_t *)&th[i].c;
		for (k = 0; k < sizeof(t->c) / sizeof(uint64_t); k++)
			dst[k] += __atomic_load_n(&src[k], __ATOMIC_RELAXED);
		hist_merge(&t->h, &th[i].hist);
		if (th[i].t_start && th[i].t_start < start)
			start = th[i].t_start;
		if (th[i].t_send_end > end)
			end = th[i].t_send_end;
	}
	if (start != UINT64_MAX && end > start)
		t->elapsed = (double)(end - start) / 1e9;
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static void print_summary(const struct rl_config *cfg, struct rl_total *t)
{
	const struct hist *h = &t->h;
	double el = t->elapsed > 0 ? t->elapsed : 1;

	printf("rrload: %llu sent (%.0f/s), %llu answered (%.0f/s) in %.2f s\n",
	       (unsigned long long)t->c.sent, (double)t->c.sent / el,
	       (unsigned long long)t->c.answered, (double)t->c.answered / el,
	       t->elapsed);
	printf("  wrong %llu  timeouts %llu  late %llu  duplicates %llu  send errors %llu  in flight %llu\n",
	       (unsigned long long)t->c.wrong,
	       (unsigned long long)t->c.timeouts, (unsigned long long)t->c.late,
	       (unsigned long long)t->c.duplicates,
	       (unsigned long long)t->c.send_errors,
	       (unsigned long long)t->c.in_flight);
	if (t->c.refused)
		printf("  %llu ICMP port unreachable: is the server listening?\n",
		       (unsigned long long)t->c.refused);
	if (h->count)
		printf("  latency us: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n",
		       us(hist_quantile(h, 0.5)), us(hist_quantile(h, 0.9)),
		       us(hist_quantile(h, 0.99)), us(hist_quantile(h, 0.999)),
		       us(h->max), us(h->sum / h->count));
	(void)cfg;
}

static int write_json(const struct rl_config *cfg, struct rl_total *t)
{
	const struct hist *h = &t->h;
	double el = t->elapsed > 0 ? t->elapsed : 1;
	char addr[INET6_ADDRSTRLEN];
	const void *a;
	FILE *f;
	int i;

	f = fopen(cfg->json, "w");
	if (!f) {
		fprintf(stderr, "rrload: cannot write %s: %s\n", cfg->json,
			strerror(errno));
		return -errno;
	}
	a = cfg->family == AF_INET
		    ? (const void *)&((struct sockaddr_in *)&cfg->addr)
			      ->sin_addr
		    : (const void *)&((struct sockaddr_in6 *)&cfg->addr)
			      ->sin6_addr;
	inet_ntop(cfg->family, a, addr, sizeof(addr));
	fprintf(f, "{\n  \"engine\": \"%s\",\n  \"server\": \"%s\",\n",
		cfg->engine_xdp ? "xdp" : "sock", addr);
	fprintf(f, "  \"ports\": [");
	for (i = 0; i < cfg->nports; i++)
		fprintf(f, "%s%u", i ? ", " : "", cfg->ports[i]);
	fprintf(f, "],\n  \"mode\": \"%s\",\n",
		cfg->rate > 0 ? "open" : "closed");
	fprintf(f,
		"  \"conns\": %u,\n  \"threads\": %u,\n  \"inflight\": %u,\n",
		cfg->conns, cfg->threads, cfg->inflight);
	fprintf(f,
		"  \"size_min\": %u,\n  \"size_max\": %u,\n"
		"  \"rate_target\": %.0f,\n  \"busy\": %s,\n",
		cfg->len_min, cfg->len_max, cfg->rate,
		cfg->busy ? "true" : "false");
	fprintf(f, "  \"elapsed_s\": %.6f,\n", t->elapsed);
	fprintf(f,
		"  \"sent\": %llu,\n  \"answered\": %llu,\n"
		"  \"wrong\": %llu,\n  \"timeouts\": %llu,\n"
		"  \"late\": %llu,\n  \"duplicates\": %llu,\n"
		"  \"send_errors\": %llu,\n  \"in_flight\": %llu,\n"
		"  \"refused\": %llu,\n",
		(unsigned long long)t->c.sent,
		(unsigned long long)t->c.answered,
		(unsigned long long)t->c.wrong,
		(unsigned long long)t->c.timeouts,
		(unsigned long long)t->c.late,
		(unsigned long long)t->c.duplicates,
		(unsigned long long)t->c.send_errors,
		(unsigned long long)t->c.in_flight,
		(unsigned long long)t->c.refused);
	fprintf(f, "  \"sent_per_s\": %.1f,\n  \"answered_per_s\": %.1f,\n",
		(double)t->c.sent / el, (double)t->c.answered / el);
	fprintf(f,
		"  \"latency_us\": {\"samples\": %llu, \"p50\": %.3f, "
		"\"p90\": %.3f, \"p99\": %.3f, \"p99_9\": %.3f, "
		"\"max\": %.3f, \"mean\": %.3f}\n}\n",
		(unsigned long long)h->count, us(hist_quantile(h, 0.5)),
		us(hist_quantile(h, 0.9)), us(hist_quantile(h, 0.99)),
		us(hist_quantile(h, 0.999)), us(h->max),
		h->count ? us(h->sum / h->count) : 0.0);
	if (fclose(f)) {
		fprintf(stderr, "rrload: cannot write %s: %s\n", cfg->json,
			strerror(errno));
		return -EIO;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* --lost: every thread's given-up requests, oldest first, as wall-clock
 * times, so that a test can put them beside the moment it broke
 * something (date +%s.%N). */
static int write_lost(const struct rl_config *cfg, struct rl_thread *th,
		      unsigned int nth)
{
	struct timespec rt;
	uint64_t *all, off;
	size_t n = 0, k;
	unsigned int i;
	FILE *f;

	for (i = 0; i < nth; i++)
		n += th[i].nlost;
	all = malloc(sizeof(*all) * (n ? n : 1));
	if (!all) {
		fprintf(stderr, "rrload: out of memory\n");
		return -ENOMEM;
	}
	for (i = 0, n = 0; i < nth; i++) {
		memcpy(all + n, th[i].lost, sizeof(*all) * th[i].nlost);
		n += th[i].nlost;
	}
	qsort(all, n, sizeof(*all), cmp_u64);
	clock_gettime(CLOCK_REALTIME, &rt);
	off = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec -
	      rl_now_ns();
	f = fopen(cfg->lost_file, "w");
	if (!f) {
		fprintf(stderr, "rrload: cannot write %s: %s\n", cfg->lost_file,
			strerror(errno));
		free(all);
		return -errno;
	}
	for (k = 0; k < n; k++)
		fprintf(f, "%llu.%09llu\n",
			(unsigned long long)((all[k] + off) / 1000000000ull),
			(unsigned long long)((all[k] + off) % 1000000000ull));
	free(all);
	if (fclose(f)) {
		fprintf(stderr, "rrload: cannot write %s: %s\n", cfg->lost_file,
			strerror(errno));
		return -EIO;
	}
	return 0;
}

static bool all_done(const struct rl_config *cfg, struct rl_thread *th,
		     unsigned int n)
{
	unsigned int i;

	(void)cfg;
	for (i = 0; i < n; i++)
		if (!__atomic_load_n(&th[i].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* Waits for the threads, printing one line a second: the rates, errors
 * and the p99 of that second alone (a snapshot difference). */
static void watch(struct rl_config *cfg, struct rl_thread *th, unsigned int nth)
{
	struct rl_total *prev, *cur;
	struct hist *sec;
	uint64_t start = rl_now_ns(), next = start + 1000000000ull, now;
	unsigned long long err;
	struct timespec ts = { 0, 20000000 };
	bool kicked = false;

	prev = calloc(1, sizeof(*prev));
	cur = calloc(1, sizeof(*cur));
	sec = calloc(1, sizeof(*sec));
	while (!all_done(cfg, th, nth)) {
		nanosleep(&ts, NULL);
		/* A test run lasts up to a second and only a signal to its
		 * own thread ends it early. */
		if (rl_stop && cfg->engine_xdp && !kicked) {
			pthread_kill(th[0].tid, SIGUSR1);
			kicked = true;
		}
		if (cfg->engine_xdp)
			xdp_engine_poll(cfg, th);
		now = rl_now_ns();
		if (now < next || cfg->quiet || !prev || !cur || !sec)
			continue;
		sum_threads(cfg, th, cur);
		hist_diff(sec, &cur->h, &prev->h);
		err = cur->c.wrong + cur->c.timeouts + cur->c.send_errors;
		fprintf(stderr,
			"%6.1fs  sent %9.0f/s  answered %9.0f/s  total %llu  errors %llu  p99 %.1f us\n",
			(double)(now - start) / 1e9,
			(double)(cur->c.sent - prev->c.sent) * 1e9 /
				(double)(now - next + 1000000000ull),
			(double)(cur->c.answered - prev->c.answered) * 1e9 /
				(double)(now - next + 1000000000ull),
			(unsigned long long)cur->c.answered, err,
			us(hist_quantile(sec, 0.99)));
		memcpy(prev, cur, sizeof(*prev));
		next = now + 1000000000ull;
	}
	free(prev);
	free(cur);
	free(sec);
}

int main(int argc, char **argv)
{
	struct rl_config cfg = {
		.ports = { 1232 },
		.nports = 1,
		.conns = 1,
		.threads = 1,
		.len_min = 64,
		.len_max = 64,
		.inflight = 1,
		.timeout_ns = 1000000000ull,
	};
	struct sigaction sa = { .sa_handler = on_signal,
				.sa_flags = (int)SA_RESETHAND };
	struct rl_thread *th = NULL;
	struct rl_total *tot = NULL;
	unsigned int i, nth, started = 0;
	char err[256];
	int ret = 3, r;

	r = parse_args(argc, argv, &cfg);
	if (r)
		return r;
	if (rr_registry_check(err, sizeof(err))) {
		fprintf(stderr, "rrload: %s\n", err);
		return 3;
	}
	if (make_instances(&cfg))
		return 3;
	if (cfg.payloads_file && load_payloads(&cfg))
		return 2;
	nth = cfg.engine_xdp ? 1 : cfg.threads;
	th = aligned_alloc(64, sizeof(*th) * RL_MAX_THREADS);
	tot = calloc(1, sizeof(*tot));
	if (!th || !tot) {
		fprintf(stderr, "rrload: out of memory\n");
		goto out;
	}
	memset(th, 0, sizeof(*th) * RL_MAX_THREADS);
	for (i = 0; i < nth; i++) {
		th[i].idx = i;
		th[i].cfg = &cfg;
		th[i].budget = cfg.count
				       ? cfg.count / nth + (i < cfg.count % nth)
				       : UINT64_MAX;
		th[i].rate = cfg.rate / nth;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);

	/* The engines say what failed, in one line. */
	r = cfg.engine_xdp ? xdp_engine_init(&cfg, th)
			   : sock_engine_init(&cfg, th);
	if (r)
		goto fini;
	for (i = 0; i < nth; i++) {
		r = pthread_create(&th[i].tid, NULL,
				   cfg.engine_xdp ? xdp_engine_run
						  : sock_engine_run,
				   &th[i]);
		if (r) {
			fprintf(stderr, "rrload: cannot start a thread: %s\n",
				strerror(r));
			rl_stop = 1;
			break;
		}
		started++;
	}
	if (started == nth)
		watch(&cfg, th, nth);
	for (i = 0; i < started; i++)
		pthread_join(th[i].tid, NULL);
	if (cfg.engine_xdp)
		xdp_engine_poll(&cfg, th);
	for (i = 0; i < started; i++)
		if (th[i].err)
			fprintf(stderr, "rrload: thread %u failed: %s\n", i,
				strerror(-th[i].err));

	sum_threads(&cfg, th, tot);
	print_summary(&cfg, tot);
	ret = 0;
	if (cfg.json && write_json(&cfg, tot))
		ret = 3;
	if (cfg.lost_file && write_lost(&cfg, th, started))
		ret = 3;
	if (tot->c.wrong) {
		fprintf(stderr, "rrload: %llu wrong replies\n",
			(unsigned long long)tot->c.wrong);
		ret = 1;
	}
	if (started < nth)
		ret = 3;
fini:
	if (cfg.engine_xdp)
		xdp_engine_fini(&cfg, th);
	else
		sock_engine_fini(&cfg, th);
out:
	free(th);
	free(tot);
	free_instances();
	for (i = 0; i < cfg.npayloads; i++)
		free(cfg.payloads[i].data);
	free(cfg.payloads);
	return ret;
}
