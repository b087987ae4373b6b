// SPDX-License-Identifier: GPL-2.0
/*
 * Command-line options. The table below is the only list of them: the
 * getopt string, the long options and the --help text (which the README
 * reproduces, checked by a test) are all generated from it.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <ini.h>

#include "module.h"
#include "options.h"
#include "parse.h"
#include "opttable.h"
#include "version.h"

enum {
	OPT_CPUS = 256,
	OPT_METRICS,
	OPT_METRICS_LISTEN,
	OPT_LIST,
	OPT_USER,
	OPT_TIER,
	OPT_NO_CACHE,
	OPT_TX_CSUM,
	OPT_CONTROL,
	OPT_CONTROL_GROUP,
	OPT_FUNCTIONS_DIR,
	OPT_DRAIN_ON_TERM,
	OPT_ISOLATION,
};

static const struct rr_opt rr_options[] = {
	{ "interface", 'i', "IFACE", "network interface to serve (required)" },
	{ "queues", 'q', "N",
	  "serve RX queues 0..N-1 (default: all the interface has)" },
	{ "threads", 't', "N", "worker threads per queue (default: 1)" },
	{ "ports", 'p', "PORT[,PORT...]",
	  "serve only the functions on these ports (default: all)" },
	{ "config", 'c', "FILE", "read settings from FILE; flags override it" },
	{ "native", 'N', NULL, "require native (driver) XDP" },
	{ "skb", 'S', NULL, "use SKB (generic) XDP and copy mode" },
	{ "busy-poll", 'B', NULL, "busy-poll the rings instead of sleeping" },
	{ "tier", OPT_TIER, "TIER",
	  "answer every function in auto, xdp or user tier (default: each function's own, auto)" },
	{ "no-cache", OPT_NO_CACHE, NULL,
	  "never answer from the reply cache, whatever the functions' settings" },
	{ "batch", 'b', "N", "descriptors per batch, 1-256 (default: 64)" },
	{ "tx-csum", OPT_TX_CSUM, "MODE",
	  "reply UDP checksums: offload, soft or auto (default: auto)" },
	{ "cpus", OPT_CPUS, "LIST",
	  "pin workers to these CPUs, e.g. 0-3,6 (default: all allowed)" },
	{ "metrics-file", OPT_METRICS, "FILE",
	  "rewrite FILE every second in Prometheus text format" },
	{ "metrics-listen", OPT_METRICS_LISTEN, "ADDR:PORT",
	  "serve GET /metrics and /healthz over HTTP on ADDR:PORT" },
	{ "control", OPT_CONTROL, "PATH",
	  "control socket for reqrouterctl, or none (default: /run/reqrouter/IFACE.sock)" },
	{ "control-group", OPT_CONTROL_GROUP, "GROUP",
	  "let GROUP use the control socket too (default: root only)" },
	{ "isolation", OPT_ISOLATION, "MODE",
	  "workers as threads, or as cells (processes) that contain a function's crash or overrun (default: thread)" },
	{ "drain-on-term", OPT_DRAIN_ON_TERM, NULL,
	  "SIGTERM drains first: health fails, requests are answered until none came for 2 s (30 s at most)" },
	{ "user", OPT_USER, "USER",
	  "after set-up, run as USER with only the capabilities still needed" },
	{ "functions-dir", OPT_FUNCTIONS_DIR, "DIR",
	  "load the function modules (*.so) in DIR; they replace built-in functions of the same name" },
	{ "list", OPT_LIST, NULL, "list the registered functions and exit" },
	{ "verbose", 'v', NULL, "log more (library messages included)" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ 0 },
};

#define N_OPTIONS (sizeof(rr_options) / sizeof(rr_options[0]) - 1)

void rr_options_usage(FILE *out)
{
	rr_opt_usage(out, "reqrouter -i IFACE [options]",
		     "Serve the registered UDP functions on IFACE over AF_XDP.",
		     rr_options);
}

static int apply(struct rr_config *cfg, int key, const char *arg, char *err,
		 size_t errlen)
{
	switch (key) {
	case 'i':
		return rr_set_ifname(cfg, arg, err, errlen);
	case 'q':
		return rr_parse_u32(arg, 1, RR_MAX_QUEUES, &cfg->queues,
				    "-q (queues)", err, errlen);
	case 't':
		return rr_parse_u32(arg, 1, RR_MAX_THREADS, &cfg->threads,
				    "-t (threads)", err, errlen);
	case 'p':
		return rr_parse_ports(arg, cfg->only_ports, RR_MAX_SLOTS,
				      &cfg->n_only_ports, err, errlen);
	case 'N':
		cfg->mode = RR_MODE_NATIVE;
		return 0;
	case 'S':
		cfg->mode = RR_MODE_SKB;
		return 0;
	case 'B':
		cfg->busy_poll = true;
		return 0;
	case OPT_TIER:
		cfg->tier_set = true;
		return rr_parse_tier(arg, &cfg->tier, err, errlen);
	case OPT_NO_CACHE:
		cfg->no_cache = true;
		return 0;
	case 'b':
		return rr_parse_u32(arg, 1, RR_MAX_BATCH, &cfg->batch,
				    "-b (batch)", err, errlen);
	case OPT_TX_CSUM:
		return rr_parse_tx_csum(arg, &cfg->tx_csum, err, errlen);
	case OPT_CPUS:
		return rr_parse_cpus(arg, cfg->cpus, &cfg->ncpus, err, errlen);
	case OPT_METRICS:
		if (!*arg || strlen(arg) >= sizeof(cfg->metrics_file))
			return rr_errf(err, errlen, "bad --metrics-file '%s'",
				       arg);
		strcpy(cfg->metrics_file, arg);
		return 0;
	case OPT_METRICS_LISTEN:
		return rr_set_metrics_listen(cfg, arg, err, errlen);
	case OPT_CONTROL:
		return rr_set_control(cfg, arg, err, errlen);
	case OPT_ISOLATION:
		return rr_parse_isolation(arg, &cfg->isolation, err, errlen);
	case OPT_DRAIN_ON_TERM:
		cfg->drain_on_term = true;
		return 0;
	case OPT_FUNCTIONS_DIR:
		snprintf(cfg->functions_dir, sizeof(cfg->functions_dir), "%s",
			 arg);
		return 0;
	case OPT_CONTROL_GROUP:
		return rr_set_control_group(cfg, arg, err, errlen);
	case OPT_USER:
		if (!*arg || strlen(arg) >= sizeof(cfg->user))
			return rr_errf(err, errlen, "bad --user '%s'", arg);
		strcpy(cfg->user, arg);
		return 0;
	case OPT_LIST:
		cfg->list = true;
		return 0;
	case 'v':
		cfg->verbose++;
		return 0;
	case 'c':
		return 0; /* read before the other flags */
	}
	return -EINVAL;
}

/* functions_dir from the config file, read ahead of the rest. */
static int peek_key(void *user, const char *section, const char *key,
		    const char *val)
{
	char *dir = user;

	if (!strcmp(section, "reqrouter") && !strcmp(key, "functions_dir"))
		snprintf(dir, PATH_MAX, "%s", val);
	return 1;
}

/*
 * Modules come first: the config's [function NAME] sections and -p may
 * name their functions. The flag wins over the file; a directory is
 * loaded once per process.
 */
static int load_modules(const char *flag_dir, const char *config_file,
			char *err, size_t errlen)
{
	static char loaded[PATH_MAX];
	char dir[PATH_MAX] = "";

	if (flag_dir)
		snprintf(dir, sizeof(dir), "%s", flag_dir);
	else if (config_file)
		ini_parse(config_file, peek_key, dir); /* errors: later */
	if (!dir[0] || !strcmp(dir, loaded))
		return 0;
	snprintf(loaded, sizeof(loaded), "%s", dir);
	return rr_modules_load_dir(dir, err, errlen);
}

int rr_options_parse(int argc, char **argv, struct rr_config *cfg, char *err,
		     size_t errlen)
{
	struct option longopts[N_OPTIONS + 1];
	char shortopts[RR_OPT_SHORT_LEN(N_OPTIONS)];
	const char *config_file = NULL, *functions_dir = NULL;
	int key, ret, help = 0, native = 0, skb = 0;

	rr_opt_build(rr_options, shortopts, longopts);

	/* Pass 1: syntax, --help and the config file. */
	opterr = 0;
	optind = 0;
	while ((key = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	       -1) {
		if (key == '?' || key == ':') {
			rr_opt_error(key, argv, err, errlen);
			return -EINVAL;
		}
		if (key == 'h')
			help = 1;
		if (key == RR_OPT_VERSION && !help)
			help = 2;
		native |= key == 'N';
		skb |= key == 'S';
		if (key == 'c')
			config_file = optarg;
		if (key == OPT_FUNCTIONS_DIR)
			functions_dir = optarg;
	}
	if (help == 1) {
		rr_options_usage(stdout);
		return RR_OPTS_EXIT;
	}
	if (help == 2) {
		printf("reqrouter %s\n", RR_VERSION);
		return RR_OPTS_EXIT;
	}
	if (native && skb)
		return rr_errf(err, errlen, "-N and -S exclude each other");
	if (optind < argc)
		return rr_errf(err, errlen, "unexpected argument '%s'",
			       argv[optind]);
	ret = load_modules(functions_dir, config_file, err, errlen);
	if (!ret)
		ret = rr_config_init(cfg, err, errlen);
	if (ret)
		return ret;
	if (config_file) {
		ret = rr_config_load(cfg, config_file, err, errlen);
		if (ret)
			return ret;
	}

	/* Pass 2: the flags, over the file. */
	optind = 0;
	while ((key = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	       -1) {
		ret = apply(cfg, key, optarg, err, errlen);
		if (ret)
			return ret;
	}

	if (!cfg->list && !cfg->ifname[0])
		return rr_errf(err, errlen,
			       "no interface given: use -i IFACE (see --help)");
	ret = rr_config_finish(cfg, err, errlen);
	return ret ? ret : RR_OPTS_RUN;
}
