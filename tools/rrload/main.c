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

#include "clock.h"
#include "log.h"
#include "registry.h"
#include "toolargs.h"
#include "rrload.h"
#include "config.h"
#include "opttable.h"

/* Set by SIGINT and SIGTERM; the threads see it through rl_thread.stop. */
static volatile sig_atomic_t stop;

/* Runs init() of every function the run's ports (or -f) verify with, as
 * reqrouter would with the same config, into cfg->instances. */
static int make_instances(struct rl_config *cfg)
{
	const struct rr_function *fn;
	char err[256];
	int i;

	for (i = 0; i < cfg->nports; i++) {
		fn = cfg->fn_override ? cfg->fn_override
				      : rr_registry_by_port(cfg->ports[i]);
		if (!fn || rl_fn_instance(cfg, fn) || !fn->init)
			continue; /* the engines report a missing one */
		if (rr_fn_instance_from_file(
			    fn, cfg->ports[i], cfg->fn_config, cfg->threads,
			    &cfg->instances[cfg->ninstances].inst, err,
			    sizeof(err))) {
			pr_warn("%s%s\n", err,
				cfg->fn_config
					? ""
					: " (give its settings with --fn-config FILE)");
			return -EINVAL;
		}
		cfg->instances[cfg->ninstances++].fn = fn;
	}
	return 0;
}

static void free_instances(struct rl_config *cfg)
{
	while (cfg->ninstances)
		rr_fn_instance_free(cfg->instances[--cfg->ninstances].inst);
}

static void on_signal(int sig)
{
	if (sig != SIGUSR1)
		stop = 1;
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
	uint64_t start = rr_now_ns(), next = start + 1000000000ull, now;
	uint64_t ans, prev_ans = 0;
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
		if (stop && cfg->engine_xdp && !kicked) {
			pthread_kill(th[0].tid, SIGUSR1);
			kicked = true;
		}
		if (cfg->engine_xdp)
			xdp_engine_poll(cfg, th);
		now = rr_now_ns();
		if (now < next || cfg->quiet || !prev || !cur || !sec)
			continue;
		rl_sum_threads(cfg, th, cur);
		hist_diff(sec, &cur->h, &prev->h);
		err = cur->c.wrong + cur->c.timeouts + cur->c.send_errors;
		/* --spoof: the flood's replies are all there is. */
		ans = cur->c.answered + cur->c.flood_answered +
		      cur->c.flood_slipped;
		fprintf(stderr,
			"%6.1fs  sent %9.0f/s  %s %9.0f/s  total %llu  errors %llu  p99 %.1f us\n",
			(double)(now - start) / 1e9,
			(double)(cur->c.sent - prev->c.sent) * 1e9 /
				(double)(now - next + 1000000000ull),
			cfg->spoof.n ? "flood replies" : "answered",
			(double)(ans - prev_ans) * 1e9 /
				(double)(now - next + 1000000000ull),
			(unsigned long long)ans, err,
			rl_us(hist_quantile(sec, 0.99)));
		prev_ans = ans;
		memcpy(prev, cur, sizeof(*prev));
		next = now + 1000000000ull;
	}
	free(prev);
	free(cur);
	free(sec);
}

/* Starts the engine's threads, watches them and waits for them; returns
 * how many started. */
static unsigned int run_threads(struct rl_config *cfg, struct rl_thread *th,
				unsigned int nth)
{
	unsigned int i, started = 0;
	int r;

	for (i = 0; i < nth; i++) {
		r = pthread_create(&th[i].tid, NULL,
				   cfg->engine_xdp ? xdp_engine_run
						   : sock_engine_run,
				   &th[i]);
		if (r) {
			pr_warn("cannot start a thread: %s\n", strerror(r));
			stop = 1;
			break;
		}
		started++;
	}
	if (started == nth)
		watch(cfg, th, nth);
	for (i = 0; i < started; i++)
		pthread_join(th[i].tid, NULL);
	if (cfg->engine_xdp)
		xdp_engine_poll(cfg, th);
	for (i = 0; i < started; i++)
		if (th[i].err)
			pr_warn("thread %u failed: %s\n", i,
				strerror(-th[i].err));
	return started;
}

/* The summary, --json and --lost; returns the exit status they give. */
static int report(const struct rl_config *cfg, struct rl_thread *th,
		  unsigned int started, struct rl_total *tot)
{
	int ret = 0;

	rl_sum_threads(cfg, th, tot);
	rl_print_summary(cfg, tot);
	if (cfg->json && rl_write_json(cfg, tot))
		ret = 3;
	if (cfg->lost_file && rl_write_lost(cfg, th, started))
		ret = 3;
	if (tot->c.wrong) {
		pr_warn("%llu wrong replies\n",
			(unsigned long long)tot->c.wrong);
		ret = 1;
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct rl_config cfg; /* rl_parse_args() fills it */
	struct sigaction sa = { .sa_handler = on_signal,
				.sa_flags = (int)SA_RESETHAND };
	struct rl_thread *th = NULL;
	struct rl_total *tot = NULL;
	unsigned int i, nth, started = 0;
	int ret = 3, r;

	rr_log_set_prog("rrload");
	r = rl_parse_args(argc, argv, &cfg);
	if (r)
		return r;
	if (rr_opt_registry("rrload"))
		return 3;
	/* --mix checks the work function's replies without running it. */
	if (!cfg.nmix && make_instances(&cfg))
		return 3;
	if (cfg.payloads_file && rl_load_payloads(&cfg))
		return 2;
	nth = cfg.engine_xdp ? 1 : cfg.threads;
	th = aligned_alloc(64, sizeof(*th) * RL_MAX_THREADS);
	tot = calloc(1, sizeof(*tot));
	if (!th || !tot) {
		pr_warn("out of memory\n");
		goto out;
	}
	memset(th, 0, sizeof(*th) * RL_MAX_THREADS);
	for (i = 0; i < nth; i++) {
		th[i].idx = i;
		th[i].cfg = &cfg;
		th[i].stop = &stop;
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
	started = run_threads(&cfg, th, nth);
	ret = report(&cfg, th, started, tot);
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
	free_instances(&cfg);
	for (i = 0; i < cfg.npayloads; i++)
		free(cfg.payloads[i].data);
	free(cfg.payloads);
	return ret;
}
