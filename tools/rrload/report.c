// SPDX-License-Identifier: GPL-2.0
/*
 * What an rrload run adds up to: the threads' counters and histograms
 * summed, the summary on stdout, --json FILE and --lost FILE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "clock.h"
#include "log.h"
#include "rrload.h"

static void class_merge(struct rl_class_stats *dst,
			const struct rl_class_stats *src)
{
	dst->sent += __atomic_load_n(&src->sent, __ATOMIC_RELAXED);
	dst->answered += __atomic_load_n(&src->answered, __ATOMIC_RELAXED);
	dst->timeouts += __atomic_load_n(&src->timeouts, __ATOMIC_RELAXED);
	dst->server_ns += __atomic_load_n(&src->server_ns, __ATOMIC_RELAXED);
	hist_merge(&dst->hist, &src->hist);
}

/* The mean time spent the server reported for @m's answered requests. */
static double class_server_us(const struct rl_class_stats *m)
{
	return m->answered ? rl_us(m->server_ns / m->answered) : 0.0;
}

void rl_sum_threads(const struct rl_config *cfg, struct rl_thread *th,
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
		for (k = 0; th[i].mix && k < cfg->nmix; k++)
			class_merge(&t->mix[k], &th[i].mix[k]);
		if (th[i].t_start && th[i].t_start < start)
			start = th[i].t_start;
		if (th[i].t_send_end > end)
			end = th[i].t_send_end;
	}
	if (start != UINT64_MAX && end > start)
		t->elapsed = (double)(end - start) / 1e9;
}

/* --mix: two lines a class, its counts and its latency. */
static void print_mix(const struct rl_config *cfg, const struct rl_total *t)
{
	const struct rl_class_stats *m;
	unsigned int k;

	for (k = 0; k < cfg->nmix; k++) {
		m = &t->mix[k];
		printf("  class %u:%uus: %llu sent, %llu answered, %llu timeouts, server spent %.1f us on average\n",
		       cfg->mix[k].weight, cfg->mix[k].us,
		       (unsigned long long)m->sent,
		       (unsigned long long)m->answered,
		       (unsigned long long)m->timeouts, class_server_us(m));
		if (m->hist.count)
			printf("    latency us: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n",
			       rl_us(hist_quantile(&m->hist, 0.5)),
			       rl_us(hist_quantile(&m->hist, 0.9)),
			       rl_us(hist_quantile(&m->hist, 0.99)),
			       rl_us(hist_quantile(&m->hist, 0.999)),
			       rl_us(m->hist.max),
			       rl_us(m->hist.sum / m->hist.count));
	}
}

void rl_print_summary(const struct rl_config *cfg, struct rl_total *t)
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
	if (cfg->spoof.n)
		printf("  spoofed from %u sources in %s: %llu replies to them (%llu answers, %llu slips), %llu wrong, %llu without a reply\n",
		       cfg->spoof.n, cfg->spoof.text,
		       (unsigned long long)(t->c.flood_answered +
					    t->c.flood_slipped + t->c.wrong),
		       (unsigned long long)t->c.flood_answered,
		       (unsigned long long)t->c.flood_slipped,
		       (unsigned long long)t->c.wrong,
		       (unsigned long long)(t->c.timeouts + t->c.in_flight));
	if (h->count)
		printf("  latency us: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n",
		       rl_us(hist_quantile(h, 0.5)),
		       rl_us(hist_quantile(h, 0.9)),
		       rl_us(hist_quantile(h, 0.99)),
		       rl_us(hist_quantile(h, 0.999)), rl_us(h->max),
		       rl_us(h->sum / h->count));
	print_mix(cfg, t);
}

/* A latency histogram as a JSON object, on one line. */
static void json_latency(FILE *f, const struct hist *h)
{
	fprintf(f,
		"{\"samples\": %llu, \"p50\": %.3f, \"p90\": %.3f, "
		"\"p99\": %.3f, \"p99_9\": %.3f, \"max\": %.3f, "
		"\"mean\": %.3f}",
		(unsigned long long)h->count, rl_us(hist_quantile(h, 0.5)),
		rl_us(hist_quantile(h, 0.9)), rl_us(hist_quantile(h, 0.99)),
		rl_us(hist_quantile(h, 0.999)), rl_us(h->max),
		h->count ? rl_us(h->sum / h->count) : 0.0);
}

/* --mix: "mix", an object per class (none without --mix). */
static void json_mix(FILE *f, const struct rl_config *cfg,
		     const struct rl_total *t)
{
	const struct rl_class_stats *m;
	unsigned int k;

	if (!cfg->nmix)
		return;
	fprintf(f, "  \"mix\": [\n");
	for (k = 0; k < cfg->nmix; k++) {
		m = &t->mix[k];
		fprintf(f,
			"    {\"weight\": %u, \"us\": %u, \"sent\": %llu, "
			"\"answered\": %llu, \"timeouts\": %llu, "
			"\"server_us_mean\": %.3f,\n     \"latency_us\": ",
			cfg->mix[k].weight, cfg->mix[k].us,
			(unsigned long long)m->sent,
			(unsigned long long)m->answered,
			(unsigned long long)m->timeouts, class_server_us(m));
		json_latency(f, &m->hist);
		fprintf(f, "}%s\n", k + 1 < cfg->nmix ? "," : "");
	}
	fprintf(f, "  ],\n");
}

int rl_write_json(const struct rl_config *cfg, struct rl_total *t)
{
	const struct hist *h = &t->h;
	double el = t->elapsed > 0 ? t->elapsed : 1;
	char addr[INET6_ADDRSTRLEN];
	uint64_t flood;
	const void *a;
	FILE *f;
	int i;

	f = fopen(cfg->json, "w");
	if (!f) {
		pr_warn("cannot write %s: %s\n", cfg->json, strerror(errno));
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
	/* --spoof: the flood's replies; what got none is in timeouts. */
	fprintf(f,
		"  \"spoof_sources\": %u,\n  \"spoof_cidr\": ", cfg->spoof.n);
	if (cfg->spoof.n)
		fprintf(f, "\"%s\",\n", cfg->spoof.text);
	else
		fprintf(f, "null,\n");
	flood = t->c.flood_answered + t->c.flood_slipped + t->c.wrong;
	fprintf(f,
		"  \"flood_replies\": %llu,\n  \"flood_answered\": %llu,\n"
		"  \"flood_slipped\": %llu,\n",
		(unsigned long long)(cfg->spoof.n ? flood : 0),
		(unsigned long long)t->c.flood_answered,
		(unsigned long long)t->c.flood_slipped);
	json_mix(f, cfg, t);
	fprintf(f, "  \"latency_us\": ");
	json_latency(f, h);
	fprintf(f, "\n}\n");
	if (fclose(f)) {
		pr_warn("cannot write %s: %s\n", cfg->json, strerror(errno));
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
int rl_write_lost(const struct rl_config *cfg, struct rl_thread *th,
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
		pr_warn("out of memory\n");
		return -ENOMEM;
	}
	for (i = 0, n = 0; i < nth; i++) {
		memcpy(all + n, th[i].lost, sizeof(*all) * th[i].nlost);
		n += th[i].nlost;
	}
	qsort(all, n, sizeof(*all), cmp_u64);
	clock_gettime(CLOCK_REALTIME, &rt);
	off = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec -
	      rr_now_ns();
	f = fopen(cfg->lost_file, "w");
	if (!f) {
		pr_warn("cannot write %s: %s\n", cfg->lost_file,
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
		pr_warn("cannot write %s: %s\n", cfg->lost_file,
			strerror(errno));
		return -EIO;
	}
	return 0;
}
