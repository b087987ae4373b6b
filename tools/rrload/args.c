// SPDX-License-Identifier: GPL-2.0
/*
 * rrload's command line: the option table (which also gives --help and
 * the man page), the checks between options, and --payloads FILE.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "log.h"
#include "opttable.h"
#include "parse.h"
#include "rrload.h"
#include "toolargs.h"
#include "util.h"

enum {
	OPT_TIMEOUT = 256,
	OPT_BUSY,
	OPT_JSON,
	OPT_ENGINE,
	OPT_DST_MAC,
	OPT_CPUS,
	OPT_FN_CONFIG,
	OPT_PAYLOADS,
	OPT_PAYLOAD,
	OPT_LOST,
	OPT_SPOOF,
	OPT_MIX,
	OPT_BIND,
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
	{ "payload", OPT_PAYLOAD, "TEXT",
	  "xdp engine: send this payload (1-32 bytes) rather than -l's pattern, for a function that reads its request; its reply must be as long (hash: 16 bytes)" },
	{ "mix", OPT_MIX, "W:Nus[,W:Nus...]",
	  "ask the work function (default port 9010) to spin N us, a class picked per request by its weight W (up to 8 classes, N up to 100000); every reply checked, latency reported per class" },
	{ "bind", OPT_BIND, "ADDR",
	  "socket engine: send from this local address (one of the client's, of -s's family), not the one the route picks" },
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
	{ "spoof", OPT_SPOOF, "N[@CIDR]",
	  "xdp engine: send from N source addresses spread over CIDR (default 198.18.0.0/15, IPv6 2001:2::/48), in turn; replies to them count apart, as the function's answers or DNS slips (TC, no answer)" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ NULL, 0, NULL, NULL },
};

/* One line: help2man takes only the usage line itself into the man
 * page's SYNOPSIS; the options follow, each with its own. */
#define SYNOPSIS \
	"rrload -s ADDR [-p PORT[,PORT...]] [-d SECONDS | -n COUNT] [options]"
#define ABOUT                                                                \
	"Sends UDP requests, matches and verifies every reply against the\n" \
	"function linked into the client, and reports rates and latency.\n"  \
	"Exit status: 1 if any reply was wrong, 2 usage, 3 setup failed."

static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *v, const char *what)
{
	if (rr_parse_ulong(s, min, max, v)) {
		pr_warn("%s must be a number in %lu..%lu, not '%s'\n", what,
			min, max, s);
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

/* @s, an IPv4 or IPv6 address, into @ss (port 0) and its length into
 * @len; -EINVAL if it is neither. */
static int parse_addr(const char *s, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		*len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

static int parse_server(struct rl_config *cfg, const char *s)
{
	if (parse_addr(s, &cfg->addr, &cfg->addrlen))
		return -EINVAL;
	cfg->family = cfg->addr.ss_family;
	return 0;
}

/* The options that take a number, with the range each allows. */
static const struct {
	int key;
	const char *what;
	unsigned long min, max;
} number_opts[] = {
	{ 'c', "-c", 1, RL_MAX_CONNS },
	{ 'j', "-j", 1, RL_MAX_THREADS },
	{ 'd', "-d", 1, 86400 },
	{ 'n', "-n", 1, 1ul << 48 },
	{ 'r', "-r", 1, 100000000 },
	{ 'w', "-w", 1, 65536 },
	{ OPT_TIMEOUT, "--timeout", 1, 3600000 },
};

/* Sets the number option @key to @v, already in its range. */
static void set_number(struct rl_config *cfg, int key, unsigned long v)
{
	switch (key) {
	case 'c':
		cfg->conns = (unsigned int)v;
		break;
	case 'j':
		cfg->threads = (unsigned int)v;
		break;
	case 'd':
		cfg->duration = (double)v;
		break;
	case 'n':
		cfg->count = v;
		break;
	case 'r':
		cfg->rate = (double)v;
		break;
	case 'w':
		cfg->inflight = (unsigned int)v;
		break;
	case OPT_TIMEOUT:
		cfg->timeout_ns = v * 1000000ull;
		break;
	}
}

/* A number option: 1 if @key is none, else 0 or 2 (a usage error). */
static int number_option(struct rl_config *cfg, int key, const char *arg)
{
	unsigned long v;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(number_opts); i++) {
		if (number_opts[i].key != key)
			continue;
		if (parse_uint(arg, number_opts[i].min, number_opts[i].max, &v,
			       number_opts[i].what))
			return 2;
		set_number(cfg, key, v);
		return 0;
	}
	return 1;
}

/*
 * --mix W:Nus[,W:Nus...]: classes of requests to the work function, each
 * W parts of the whole, asking for N microseconds. One line on a bad spec.
 */
static int parse_mix(struct rl_config *cfg, const char *arg)
{
	char buf[256], *item, *save = NULL, *colon, *us;
	unsigned long w, n;
	size_t len;

	if (strlen(arg) >= sizeof(buf))
		return rr_opt_fail("rrload", "--mix: '%s' is too long", arg);
	strcpy(buf, arg);
	cfg->nmix = 0;
	cfg->mix_weights = 0;
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		if (cfg->nmix == RL_MIX_MAX)
			return rr_opt_fail("rrload",
					   "--mix: at most %u classes, in '%s'",
					   RL_MIX_MAX, arg);
		colon = strchr(item, ':');
		len = strlen(item);
		if (!colon || len < 2 || strcmp(item + len - 2, "us"))
			return rr_opt_fail(
				"rrload",
				"--mix: '%s' is no WEIGHT:MICROSECONDSus (as 90:6us)",
				item);
		*colon = '\0';
		us = colon + 1;
		item[len - 2] = '\0';
		if (rr_parse_ulong(item, 1, 1000000, &w))
			return rr_opt_fail(
				"rrload",
				"--mix: the weight must be a number in 1..1000000, not '%s'",
				item);
		if (rr_parse_ulong(us, 0, RL_MIX_MAX_US, &n))
			return rr_opt_fail(
				"rrload",
				"--mix: the microseconds must be a number in 0..%u, not '%s'",
				RL_MIX_MAX_US, us);
		cfg->mix[cfg->nmix].weight = (uint32_t)w;
		cfg->mix[cfg->nmix].us = (uint32_t)n;
		cfg->mix_weights += w;
		cfg->nmix++;
	}
	if (!cfg->nmix)
		return rr_opt_fail(
			"rrload", "%s",
			"--mix needs at least one WEIGHT:MICROSECONDSus");
	return 0;
}

/* What the options are applied to. */
struct args {
	struct rl_config *cfg;
	bool have_server;
	bool have_ports;
};

/* One option of the table: 0, or the exit code after saying why. */
static int apply(int key, const char *arg, void *ctx)
{
	struct args *a = ctx;
	struct rl_config *cfg = a->cfg;
	int ret = number_option(cfg, key, arg);

	if (ret != 1)
		return ret;
	switch (key) {
	case 's':
		if (parse_server(cfg, arg))
			return rr_opt_fail(
				"rrload",
				"-s needs an IPv4 or IPv6 address, not '%s'",
				arg);
		a->have_server = true;
		return 0;
	case 'p':
		a->have_ports = true;
		return rr_opt_ports("rrload", arg, cfg->ports, RL_MAX_PORTS,
				    &cfg->nports);
	case 'f':
		return rr_opt_function("rrload", arg, &cfg->fn_override);
	case OPT_FN_CONFIG:
		cfg->fn_config = arg;
		return 0;
	case OPT_BIND:
		if (parse_addr(arg, &cfg->bind, &cfg->bindlen))
			return rr_opt_fail(
				"rrload",
				"--bind needs an IPv4 or IPv6 address, not '%s'",
				arg);
		return 0;
	case OPT_PAYLOADS:
		cfg->payloads_file = arg;
		return 0;
	case OPT_PAYLOAD:
		cfg->payload = arg;
		return 0;
	case 'l':
		return parse_size(cfg, arg) ? 2 : 0;
	case OPT_BUSY:
		cfg->busy = true;
		return 0;
	case OPT_JSON:
		cfg->json = arg;
		return 0;
	case OPT_LOST:
		cfg->lost_file = arg;
		return 0;
	case 'q':
		cfg->quiet = true;
		return 0;
	case OPT_CPUS:
		return rr_opt_cpus("rrload", arg, cfg->cpus, &cfg->ncpus);
	case OPT_ENGINE:
		if (!strcmp(arg, "xdp"))
			cfg->engine_xdp = true;
		else if (strcmp(arg, "sock"))
			return rr_opt_fail("rrload",
					   "--engine is sock or xdp, not '%s'",
					   arg);
		return 0;
	case 'i':
		cfg->ifname = arg;
		return 0;
	case OPT_DST_MAC:
		cfg->dst_mac = arg;
		return 0;
	case OPT_SPOOF:
		return rl_parse_spoof(cfg, arg);
	case OPT_MIX:
		return parse_mix(cfg, arg);
	}
	return 0;
}

/* --mix with the others: the socket engine, its own requests, and room
 * in them for the microseconds and rrload's header (sock_run.c). */
static int check_mix(struct rl_config *cfg, bool have_ports)
{
	if (cfg->engine_xdp)
		return rr_opt_fail(
			"rrload", "%s",
			"--mix needs the socket engine (the xdp engine cannot check the work function's replies)");
	if (cfg->payloads_file || cfg->fn_override)
		return rr_opt_fail(
			"rrload", "%s",
			"--mix makes its own requests to the work function: not with --payloads or -f");
	if (!have_ports)
		cfg->ports[0] = RL_MIX_PORT;
	if (cfg->len_min < RL_MIX_MIN_LEN)
		cfg->len_min = RL_MIX_MIN_LEN;
	if (cfg->len_max < RL_MIX_MIN_LEN)
		cfg->len_max = RL_MIX_MIN_LEN;
	return 0;
}

/* What the options say together; fills in the defaults that depend on
 * others. */
static int check_args(struct rl_config *cfg, bool have_server, bool have_ports)
{
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
	if (cfg->bindlen &&
	    (cfg->engine_xdp || cfg->bind.ss_family != cfg->addr.ss_family))
		return rr_opt_fail(
			"rrload", "%s",
			"--bind needs the socket engine and an address of -s's family");
	/* The engine rewrites GEN_EDGE bytes at each end of the payload
	 * every run, over what the server left: 32 bytes are all of it. */
	if (cfg->payload && (!cfg->engine_xdp || cfg->payloads_file ||
			     !*cfg->payload || strlen(cfg->payload) > 32))
		return rr_opt_fail(
			"rrload", "%s",
			"--payload takes 1-32 bytes, with --engine xdp and without --payloads");
	if (rl_check_spoof(cfg))
		return 2;
	if (cfg->nmix && check_mix(cfg, have_ports))
		return 2;
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

int rl_parse_args(int argc, char **argv, struct rl_config *cfg)
{
	static const struct rr_opt_prog prog = { "rrload", SYNOPSIS, ABOUT,
						 opts };
	struct args a = { .cfg = cfg };
	int ret;

	/* The defaults the option table's help gives. */
	*cfg = (struct rl_config){ .ports = { 1232 },
				   .nports = 1,
				   .conns = 1,
				   .threads = 1,
				   .len_min = 64,
				   .len_max = 64,
				   .inflight = 1,
				   .timeout_ns = 1000000000ull };
	ret = rr_opt_parse(&prog, argc, argv, apply, &a);
	if (ret)
		return ret;
	if (optind < argc)
		return rr_opt_fail("rrload", "unexpected argument '%s'",
				   argv[optind]);
	return check_args(cfg, a.have_server, a.have_ports);
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

int rl_load_payloads(struct rl_config *cfg)
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
		pr_warn("cannot open %s: %s\n", cfg->payloads_file,
			strerror(errno));
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
			pr_warn("%s:%u: %s\n", cfg->payloads_file, lineno,
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
		pr_warn("%s holds no payload\n", cfg->payloads_file);
		err = -EINVAL;
	}
	return err;
}
