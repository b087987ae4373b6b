// SPDX-License-Identifier: GPL-2.0
/*
 * Metrics, in the Prometheus text format that node_exporter's textfile
 * collector reads (and /metrics serves), and the exit summary. The file is
 * written beside its final name and renamed over it, so a reader never
 * sees half a file. The same counters as JSON: metrics_json.c.
 *
 * Each family is written once, with all its samples (Prometheus refuses
 * a scrape with a family twice): a function's own counters are one family
 * with the counter's name a label, whatever the names. The per-socket
 * counters are summed over groups of sockets first, as metrics_detail
 * says (struct group); the exit summary has a line per function that
 * was called, and leaves out every counter that stayed 0.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/if_xdp.h>

#include "capture.h"
#include "frame.h"
#include "lifecycle.h"
#include "metrics_internal.h"
#include "settings.h"
#include "hh.h"
#include "slots.h"
#include "util.h"
#include "validate.h"
#include "version.h"

#define RR_XDP_STAT_VERDICT(name, verdict, reason) verdict,
const char *const rr_xdp_verdict[] = { RR_XDP_STATS(RR_XDP_STAT_VERDICT) };
#define RR_XDP_STAT_REASON(name, verdict, reason) reason,
const char *const rr_xdp_reason[] = { RR_XDP_STATS(RR_XDP_STAT_REASON) };

/* The kernel's per-socket XDP_STATISTICS, in struct order. */
static const char *const xsk_stat_names[] = {
	"rx_dropped",	"rx_invalid_descs",	    "tx_invalid_descs",
	"rx_ring_full", "rx_fill_ring_empty_descs", "tx_ring_empty_descs",
};
#define N_XSK_STATS (ARRAY_SIZE(xsk_stat_names))

static void xsk_stats(int fd, uint64_t out[N_XSK_STATS])
{
	struct xdp_statistics st = { 0 };
	socklen_t len = sizeof(st);

	memset(out, 0, sizeof(uint64_t) * N_XSK_STATS);
	if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len))
		return;
	out[0] = st.rx_dropped;
	out[1] = st.rx_invalid_descs;
	out[2] = st.tx_invalid_descs;
	out[3] = st.rx_ring_full;
	out[4] = st.rx_fill_ring_empty_descs;
	out[5] = st.tx_ring_empty_descs;
}

/* Every socket, with its queue, thread and slot. */
#define for_each_sock(inv, s, q, t, slot)                                   \
	for (q = 0; q < (inv)->nqueues; q++)                                \
		for (t = 0; t < (inv)->threads_made; t++)                   \
			for (slot = 0; slot < (inv)->nslots &&              \
				       ((s) = rr_sock_at(inv, q, t, slot)); \
			     slot++)

/*
 * The sockets one sample stands for, at the metrics_detail level: one
 * (socket), every thread's of one queue (queue), or all of a function's
 * (function): nq queues from q, nt threads from t, of one slot. The
 * in-kernel tier counts per (queue, slot), not per socket: its groups
 * are of queues alone.
 */
struct group {
	uint32_t slot;
	bool sockets;
	uint32_t q, nq;
	uint32_t t, nt;
};

static struct group group_first(const struct rr_invoker *inv, uint32_t slot,
				bool sockets)
{
	enum rr_metrics_detail detail = inv->cfg->metrics_detail;

	return (struct group){
		.slot = slot,
		.sockets = sockets,
		.nq = detail == RR_DETAIL_FUNCTION ? inv->nqueues : 1,
		.nt = sockets && detail != RR_DETAIL_SOCKET ? inv->threads_made
							    : 1,
	};
}

static bool group_valid(const struct rr_invoker *inv, const struct group *g)
{
	return g->q < inv->nqueues && (!g->sockets || g->t < inv->threads_made);
}

static void group_next(const struct rr_invoker *inv, struct group *g)
{
	g->t += g->nt;
	if (!g->sockets || g->t >= inv->threads_made) {
		g->t = 0;
		g->q += g->nq;
	}
}

/* A group's labels: the function's, then the queue and thread where
 * the detail keeps them; the caller adds the rest and the braces. */
static void group_labels(FILE *out, const struct rr_invoker *inv,
			 const struct group *g)
{
	rr_metric_fn_labels(out, &inv->slots[g->slot]);
	if (inv->cfg->metrics_detail != RR_DETAIL_FUNCTION)
		fprintf(out, ",queue=\"%u\"", g->q);
	if (inv->cfg->metrics_detail == RR_DETAIL_SOCKET && g->sockets)
		fprintf(out, ",thread=\"%u\"", g->t);
}

static uint64_t sock_counter(const struct rr_sock *s, size_t offset)
{
	return rr_stat_read(
		(const uint64_t *)((const char *)s->stats + offset));
}

/* The sum over a group of sockets of the counter at @off in struct
 * rr_sock_stats, or with @xs of the kernel's XDP_STATISTICS @off, read
 * into xs[socket index][N_XSK_STATS] (see read_xsk_stats()). */
static uint64_t group_sum(struct rr_invoker *inv, const struct group *g,
			  size_t off, const uint64_t *xs)
{
	const struct rr_sock *s;
	uint64_t sum = 0;
	uint32_t q, t;

	for (q = g->q; q < g->q + g->nq; q++)
		for (t = g->t; t < g->t + g->nt; t++) {
			s = rr_sock_at(inv, q, t, g->slot);
			sum += xs ? xs[(size_t)(s - inv->socks) * N_XSK_STATS +
				       off]
				  : sock_counter(s, off);
		}
	return sum;
}

/* The sum over a group's queues of the in-kernel counter @stat. */
static uint64_t group_fn_sum(const struct rr_invoker *inv,
			     const struct group *g, const uint64_t *fs,
			     uint32_t stat)
{
	uint64_t sum = 0;
	uint32_t q;

	for (q = g->q; q < g->q + g->nq; q++)
		sum += fs[rr_fn_row(inv, q, g->slot) + stat];
	return sum;
}

/* The per-socket counters of struct rr_sock_stats, by name. */
static const struct {
	const char *name;
	const char *help;
	size_t offset;
} sock_counters[] = {
	{ "reqrouter_rx_packets_total",
	  "Requests taken off a socket's RX ring.",
	  offsetof(struct rr_sock_stats, rx) },
	{ "reqrouter_tx_packets_total", "Replies put on a socket's TX ring.",
	  offsetof(struct rr_sock_stats, tx) },
	{ "reqrouter_tx_ring_full_total",
	  "Rounds in which a full TX ring held requests back in RX.",
	  offsetof(struct rr_sock_stats, tx_ring_full) },
	{ "reqrouter_arrival_stamps_skewed_total",
	  "Requests stamped in XDP later than a worker took them (a clock that went backwards): served as if they had not waited.",
	  offsetof(struct rr_sock_stats, stamp_skewed) },
	{ "reqrouter_kick_errors_total",
	  "TX kicks (sendto) that failed other than by backpressure.",
	  offsetof(struct rr_sock_stats, kick_errors) },
	{ "reqrouter_cache_insertions_total",
	  "Replies a worker stored in the reply cache.",
	  offsetof(struct rr_sock_stats, cache_inserts) },
	{ "reqrouter_cache_evictions_total",
	  "Cache insertions that replaced a live entry of another request.",
	  offsetof(struct rr_sock_stats, cache_evictions) },
	{ "reqrouter_cache_skips_total",
	  "Replies of a cached function not stored: another worker was writing the entry, or the reply did not fit.",
	  offsetof(struct rr_sock_stats, cache_skips) },
	{ "reqrouter_gathers_total",
	  "Gathers a worker started for the function's requests.",
	  offsetof(struct rr_sock_stats, gathers) },
	{ "reqrouter_gathers_timed_out_total",
	  "Gathers that completed by their deadline, some targets missing.",
	  offsetof(struct rr_sock_stats, gathers_timed_out) },
	{ "reqrouter_gather_targets_missed_total",
	  "Targets asked in a gather whose reply was not in its result.",
	  offsetof(struct rr_sock_stats, gather_missed) },
	{ "reqrouter_gather_copies_umem_total",
	  "Gather copies built in the UMEM and sent from the function's AF_XDP socket (gather_scatter = umem); the others, to targets not heard from yet, went through the stack.",
	  offsetof(struct rr_sock_stats, gather_umem) },
};

/* The in-kernel tier's counters (enum rr_fn_stat) as metrics: rx, tx and
 * drops share the user tier's names with tier="xdp". */
static const struct {
	const char *name;
	const char *help;
	uint32_t stat;
	bool xdp_tier; /* only for functions answered in XDP */
} fn_counters[] = {
	{ "reqrouter_rx_packets_total", NULL, RR_FN_XDP_RX, true },
	{ "reqrouter_tx_packets_total", NULL, RR_FN_XDP_TX, true },
	{ "reqrouter_punted_packets_total",
	  "Requests the in-kernel tier handed on to user space.",
	  RR_FN_XDP_PUNT, true },
	{ "reqrouter_spread_packets_total",
	  "Requests handed to an xdp_spread CPU, where the function's XDP program ran them.",
	  RR_FN_XDP_SPREAD, true },
	{ "reqrouter_cache_hits_total",
	  "Requests answered from the reply cache inside XDP.", RR_FN_CACHE_HIT,
	  false },
	{ "reqrouter_cache_misses_total",
	  "Requests of a cached function the cache could not answer.",
	  RR_FN_CACHE_MISS, false },
	{ "reqrouter_rate_limited_packets_total",
	  "Requests over the function's rate_limit for their source prefix, dropped in XDP.",
	  RR_FN_RL_LIMITED, false },
	{ "reqrouter_rate_limit_slips_total",
	  "Requests over the function's rate_limit answered with its slip reply, from XDP or, where XDP's would be lost, from a worker.",
	  RR_FN_RL_SLIPPED, false },
	{ "reqrouter_rate_limit_evictions_total",
	  "Source prefixes the rate limiter forgot while their buckets were still filling, to make room for a new prefix in a full set of its table.",
	  RR_FN_RL_EVICTED, false },
	{ "reqrouter_rate_limit_would_limit_packets_total",
	  "Requests over the function's rate_limit let by, as rate_limit_mode = log (a dry run) says: those it would have dropped or slipped.",
	  RR_FN_RL_WOULD_LIMIT, false },
	{ "reqrouter_cookie_valid_packets_total",
	  "DNS queries whose server cookie the XDP program found valid for their source, which validates it; checked only where that buys something: a rate limit with validated_for above 0, or the reply cache.",
	  RR_FN_COOKIE_VALID, false },
	{ "reqrouter_validated_packets_total",
	  "Requests from validated sources (a TCP handshake, a valid DNS server cookie or a function's token, within validated_for) let by within their own budget, rate_limit_validated, in place of their prefixes'.",
	  RR_FN_VALIDATED, false },
	{ "reqrouter_validated_limited_packets_total",
	  "Requests from validated sources over rate_limit_validated, dropped in XDP.",
	  RR_FN_VALIDATED_LIMITED, false },
	{ "reqrouter_cookie_bypass_packets_total",
	  "DNS queries with a COOKIE option sent past the in-kernel tier (the reply cache) to a worker, which makes the reply's cookie: all but a valid cookie, young enough to echo, that ends the query, which the cache answers with that cookie.",
	  RR_FN_COOKIE_BYPASS, false },
};

/* Where the counters of (queue q, slot) start in what rr_read_fn_stats()
 * returns. */
size_t rr_fn_row(const struct rr_invoker *inv, uint32_t q, uint32_t slot)
{
	return ((size_t)q * inv->nslots + slot) * RR_FN_STAT_MAX;
}

/* Whether the XDP program counts anything for slot @s (fn_stats): its
 * tier, its cache, its rate limit, its deadline or its DNS cookies. */
static bool counted_in_xdp(const struct rr_slot *s)
{
	return s->tier_xdp || s->cached || RR_RATE_LIMITED(s->svc) ||
	       s->svc->deadline_us || s->svc->fn->flags & RR_FN_DNS_COOKIES;
}

/* Reads the in-kernel counters of every served (queue, slot) once:
 * out[(q * nslots + slot) * RR_FN_STAT_MAX + stat]; those of a function
 * the XDP program counts nothing for stay 0. */
uint64_t *rr_read_fn_stats(struct rr_invoker *inv)
{
	uint64_t *out = calloc((size_t)inv->nqueues * inv->nslots,
			       sizeof(uint64_t) * RR_FN_STAT_MAX);
	uint32_t q, slot;

	if (!out)
		return NULL;
	for (q = 0; q < inv->nqueues; q++)
		for (slot = 0; slot < inv->nslots; slot++)
			if (counted_in_xdp(&inv->slots[slot]) &&
			    rr_xdp_read_fn_stats(
				    &inv->xdp, q, slot,
				    out + rr_fn_row(inv, q, slot))) {
				free(out);
				return NULL;
			}
	return out;
}

/* The in-kernel counter @stat of every function that has it, per queue
 * or summed over them (metrics_detail = function). */
static void write_fn_counters(struct rr_invoker *inv, FILE *out,
			      const uint64_t *fs, const char *name,
			      uint32_t stat, bool xdp_tier)
{
	struct group g;
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++) {
		if (stat == RR_FN_RL_LIMITED || stat == RR_FN_RL_SLIPPED ||
		    stat == RR_FN_RL_EVICTED || stat == RR_FN_RL_WOULD_LIMIT ||
		    stat == RR_FN_VALIDATED ||
		    stat == RR_FN_VALIDATED_LIMITED) {
			if (!RR_RATE_LIMITED(inv->slots[slot].svc))
				continue;
		} else if (stat == RR_FN_COOKIE_VALID ||
			   stat == RR_FN_COOKIE_BYPASS) {
			if (!(inv->slots[slot].svc->fn->flags &
			      RR_FN_DNS_COOKIES))
				continue;
		} else if (xdp_tier ? !inv->slots[slot].tier_xdp
				    : !inv->slots[slot].cached)
			continue;
		for (g = group_first(inv, slot, false); group_valid(inv, &g);
		     group_next(inv, &g)) {
			fprintf(out, "%s{", name);
			group_labels(out, inv, &g);
			fprintf(out, "%s} %lu\n",
				xdp_tier ? ",tier=\"xdp\"" : "",
				group_fn_sum(inv, &g, fs, stat));
		}
	}
}

/* Counter @c of the function in @slot, summed over the workers. */
uint64_t rr_fn_counter_sum(struct rr_invoker *inv, uint32_t slot, uint32_t c)
{
	uint64_t sum = 0;
	uint32_t q, t;

	for (q = 0; inv->workers && q < inv->nqueues; q++)
		for (t = 0; t < inv->threads_made; t++)
			sum += rr_stat_read(
				&rr_worker_at(inv, q, t)
					 ->rep->fn_counters[slot][c]);
	return sum + rr_tcp_fn_counter(inv, slot, c) +
	       __atomic_load_n(&inv->tap_counters[slot][c], __ATOMIC_RELAXED);
}

/* The counters functions registered (rr_fn_counter()): one family, the
 * counter's name a label, so that no name a function picks can make a
 * family of its own, or clash with one of ours. */
static void write_function_counters(struct rr_invoker *inv, FILE *out)
{
	const struct rr_slot *s;
	uint32_t slot, c;

	rr_metric_family(
		out, "reqrouter_function_events_total", "counter",
		"Events a function counted (rr_fn_count()), by its counter's name (rr_fn_counter()).");
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		for (c = 0; c < s->fn_ctrs.n; c++) {
			fprintf(out, "reqrouter_function_events_total{");
			rr_metric_fn_labels(out, s);
			fprintf(out, ",counter=\"%s\"} %lu\n",
				s->fn_ctrs.name[c],
				rr_fn_counter_sum(inv, slot, c));
		}
	}
}

/* Crashes, overruns and quarantine (isolation = cell; see cells/supervise.c and slots/quarantine.c). */
static void write_faults(struct rr_invoker *inv, FILE *out)
{
	const struct rr_slot *s;
	uint32_t slot;

	rr_metric_family(
		out, "reqrouter_function_faults_total", "counter",
		"Calls that crashed their cell, or ran past max_run_us and were killed.");
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		fprintf(out, "reqrouter_function_faults_total{");
		rr_metric_fn_labels(out, s);
		fprintf(out, ",kind=\"crash\"} %lu\n", s->faults.crashes);
		fprintf(out, "reqrouter_function_faults_total{");
		rr_metric_fn_labels(out, s);
		fprintf(out, ",kind=\"timeout\"} %lu\n", s->faults.timeouts);
	}
	rr_metric_family(
		out, "reqrouter_function_quarantined", "gauge",
		"1 while the function is quarantined: its port drops or passes its requests.");
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		fprintf(out, "reqrouter_function_quarantined{");
		rr_metric_fn_labels(out, s);
		fprintf(out, "} %d\n", s->quarantined);
	}
	rr_metric_family(out, "reqrouter_cell_restarts_total", "counter",
			 "Cells that died and were forked again.");
	fprintf(out, "reqrouter_cell_restarts_total %lu\n", inv->cell_restarts);
}

/* The sockets' counters, each family with the in-kernel tier's samples of
 * the same name beside them; then the in-kernel tier's own families. */
static void write_counters(struct rr_invoker *inv, FILE *out,
			   const uint64_t *fs)
{
	const size_t nfn = ARRAY_SIZE(fn_counters);
	uint32_t slot, i, j;
	struct group g;

	for (i = 0; i < ARRAY_SIZE(sock_counters); i++) {
		rr_metric_family(out, sock_counters[i].name, "counter",
				 sock_counters[i].help);
		for (slot = 0; slot < inv->nslots; slot++)
			for (g = group_first(inv, slot, true);
			     group_valid(inv, &g); group_next(inv, &g)) {
				fprintf(out, "%s{", sock_counters[i].name);
				group_labels(out, inv, &g);
				fprintf(out, ",tier=\"user\"} %lu\n",
					group_sum(inv, &g,
						  sock_counters[i].offset,
						  NULL));
			}
		rr_tcp_write_metric(inv, out, sock_counters[i].name);
		for (j = 0; fs && j < nfn; j++)
			if (!strcmp(fn_counters[j].name, sock_counters[i].name))
				write_fn_counters(inv, out, fs,
						  fn_counters[j].name,
						  fn_counters[j].stat,
						  fn_counters[j].xdp_tier);
	}
	for (j = 0; fs && j < nfn; j++) {
		if (!fn_counters[j].help)
			continue; /* written beside the user tier's above */
		rr_metric_family(out, fn_counters[j].name, "counter",
				 fn_counters[j].help);
		write_fn_counters(inv, out, fs, fn_counters[j].name,
				  fn_counters[j].stat, fn_counters[j].xdp_tier);
	}
}

/* Drops by reason: per socket group, and per (queue, function) in XDP. */
static void write_drops(struct rr_invoker *inv, FILE *out, const uint64_t *fs)
{
	const size_t drops = offsetof(struct rr_sock_stats, drops);
	uint32_t slot, d;
	struct group g;

	rr_metric_family(out, "reqrouter_dropped_packets_total", "counter",
			 "Requests recycled without a reply, by reason.");
	for (slot = 0; slot < inv->nslots; slot++) {
		for (g = group_first(inv, slot, true); group_valid(inv, &g);
		     group_next(inv, &g)) {
			for (d = 1; d < RR_DROP_MAX; d++) {
				fputs("reqrouter_dropped_packets_total{", out);
				group_labels(out, inv, &g);
				fprintf(out,
					",tier=\"user\",reason=\"%s\"} %lu\n",
					rr_drop_label(d),
					group_sum(inv, &g,
						  drops + d * sizeof(uint64_t),
						  NULL));
			}
		}
	}
	/* The in-kernel tier's, and the deadline's drops in XDP. */
	for (slot = 0; fs && slot < inv->nslots; slot++) {
		if (!inv->slots[slot].tier_xdp &&
		    !inv->slots[slot].svc->deadline_us)
			continue;
		for (g = group_first(inv, slot, false); group_valid(inv, &g);
		     group_next(inv, &g)) {
			for (d = 1; d < RR_DROP_MAX; d++) {
				fputs("reqrouter_dropped_packets_total{", out);
				group_labels(out, inv, &g);
				fprintf(out,
					",tier=\"xdp\",reason=\"%s\"} %lu\n",
					rr_drop_label(d),
					group_fn_sum(inv, &g, fs,
						     RR_FN_XDP_DROP + d));
			}
		}
	}
}

/* The kernel's XDP_STATISTICS of every socket, read once:
 * [socket index][N_XSK_STATS], zero for a socket that has none. free()
 * it; NULL without memory. */
static uint64_t *read_xsk_stats(struct rr_invoker *inv)
{
	uint64_t *xs = calloc((size_t)RR_NWORKERS(inv) * RR_MAX_SLOTS,
			      sizeof(uint64_t) * N_XSK_STATS);
	uint32_t q, t, slot;
	struct rr_sock *s;

	if (!xs)
		return NULL;
	for_each_sock (inv, s, q, t, slot)
		if (s->xsk)
			xsk_stats(s->fd,
				  xs + (size_t)(s - inv->socks) * N_XSK_STATS);
	return xs;
}

static void write_xsk_stats(struct rr_invoker *inv, FILE *out)
{
	uint64_t *xs = read_xsk_stats(inv);
	uint32_t slot, i;
	struct group g;
	char name[96];

	for (i = 0; xs && i < N_XSK_STATS; i++) {
		snprintf(name, sizeof(name), "reqrouter_xsk_%s_total",
			 xsk_stat_names[i]);
		rr_metric_family(out, name, "counter",
				 "The kernel's XDP_STATISTICS for the socket.");
		for (slot = 0; slot < inv->nslots; slot++)
			for (g = group_first(inv, slot, true);
			     group_valid(inv, &g); group_next(inv, &g)) {
				fprintf(out, "%s{", name);
				group_labels(out, inv, &g);
				fprintf(out, ",tier=\"user\"} %lu\n",
					group_sum(inv, &g, i, xs));
			}
	}
	free(xs);
}

/* "0.0000005" for 500 ns: seconds as Prometheus writes a le or a sum,
 * exact, without an exponent. */
static void seconds(char *buf, size_t len, uint64_t ns)
{
	size_t n;

	snprintf(buf, len, "%lu.%09lu", ns / 1000000000, ns % 1000000000);
	n = strlen(buf);
	while (buf[n - 1] == '0')
		buf[--n] = '\0';
	if (buf[n - 1] == '.')
		buf[n - 1] = '\0';
}

/*
 * One histogram per function of the struct rr_latency at @off in its
 * sockets' stats (latency.h), summed over them, as family @name.
 */
static void write_histogram(struct rr_invoker *inv, FILE *out, const char *name,
			    const char *help, size_t off)
{
	static const uint64_t le[] = { RR_LATENCY_LE_NS };
	uint64_t bucket[RR_LATENCY_NLE + 1], sum_ns, cum;
	const struct rr_latency *l;
	const struct rr_slot *s;
	uint32_t slot, q, t, b;
	char sec[32];

	_Static_assert(ARRAY_SIZE(le) == RR_LATENCY_NLE, "RR_LATENCY_LE_NS");
	rr_metric_family(out, name, "histogram", help);
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		memset(bucket, 0, sizeof(bucket));
		sum_ns = 0;
		for (q = 0; q < inv->nqueues; q++)
			for (t = 0; t < inv->threads_made; t++) {
				l = (const void *)((const char *)rr_sock_at(
							   inv, q, t, slot)
							   ->stats +
						   off);
				for (b = 0; b <= RR_LATENCY_NLE; b++)
					bucket[b] +=
						rr_stat_read(&l->bucket[b]);
				sum_ns += rr_stat_read(&l->sum_ns);
			}
		for (b = 0, cum = 0; b <= RR_LATENCY_NLE; b++) {
			cum += bucket[b];
			if (b < RR_LATENCY_NLE)
				seconds(sec, sizeof(sec), le[b]);
			fprintf(out, "%s_bucket{", name);
			rr_metric_fn_labels(out, s);
			fprintf(out, ",le=\"%s\"} %lu\n",
				b < RR_LATENCY_NLE ? sec : "+Inf", cum);
		}
		seconds(sec, sizeof(sec), sum_ns);
		fprintf(out, "%s_sum{", name);
		rr_metric_fn_labels(out, s);
		fprintf(out, "} %s\n%s_count{", sec, name);
		rr_metric_fn_labels(out, s);
		fprintf(out, "} %lu\n", cum);
	}
}

/* Each function's replies by the time the user tier held them, and its
 * requests by the time they waited for a worker. */
static void write_latency(struct rr_invoker *inv, FILE *out)
{
	write_histogram(
		inv, out, "reqrouter_request_duration_seconds",
		"Time from a request's batch taken off a socket's RX ring to its reply put on the TX ring, in the user tier.",
		offsetof(struct rr_sock_stats, latency));
	write_histogram(
		inv, out, "reqrouter_queue_delay_seconds",
		"Time from a request's arrival in the XDP program to its batch taken off the RX ring by a worker: how long it waited for one (the steering setting).",
		offsetof(struct rr_sock_stats, queue_delay));
}

static void write_frames(struct rr_invoker *inv, FILE *out)
{
	struct rr_frames f;
	uint32_t q, i;

	rr_metric_family(
		out, "reqrouter_umem_frames", "gauge",
		"Where each queue's UMEM frames are; they add up to the UMEM size.");
	for (q = 0; q < inv->nqueues; q++) {
		rr_invoker_frames(inv, q, &f);
		const struct {
			const char *state;
			uint32_t n;
		} where[] = {
			{ "fill", f.fill },	{ "rx", f.rx },
			{ "worker", f.worker }, { "stock", f.stock },
			{ "tx", f.tx },		{ "completion", f.completion },
			{ "kernel", f.kernel },
		};

		for (i = 0; i < ARRAY_SIZE(where); i++)
			fprintf(out,
				"reqrouter_umem_frames{queue=\"%u\",state=\"%s\"} %u\n",
				q, where[i].state, where[i].n);
	}
}

/* Every queue the interface has, served or not: on the others the program
 * passes everything to the kernel, and says so here. */
static void write_xdp_stats(struct rr_invoker *inv, FILE *out)
{
	uint32_t rows = rr_xdp_stat_rows(inv->nrxqueues), q, i;
	uint64_t xdp[RR_STATS_SIZE];
	char queue[16];

	if (rr_xdp_read_stats(&inv->xdp, xdp, rows))
		return;
	rr_metric_family(
		out, "reqrouter_xdp_packets_total", "counter",
		"Packets seen by the XDP program, by queue and verdict.");
	for (q = 0; q < rows; q++) {
		if (q == RR_MAX_QUEUES)
			snprintf(queue, sizeof(queue), "%u+", q);
		else
			snprintf(queue, sizeof(queue), "%u", q);
		for (i = 0; i < RR_XDP_STAT_MAX; i++)
			fprintf(out,
				"reqrouter_xdp_packets_total{queue=\"%s\",verdict=\"%s\",reason=\"%s\"} %lu\n",
				queue, rr_xdp_verdict[i], rr_xdp_reason[i],
				xdp[q * RR_XDP_STAT_MAX + i]);
	}
}

/* What the guards see of the host: its local routes (the destination
 * check) and whether in-kernel replies can reach a veth's peer. */
static void write_guards(struct rr_invoker *inv, FILE *out)
{
	const struct rr_slot *s;
	uint32_t slot, mask, k;

	if (inv->local) {
		rr_metric_family(
			out, "reqrouter_local_routes", "gauge",
			"The host's local routes the destination check answers for (answer_for = local).");
		fprintf(out, "reqrouter_local_routes{family=\"ipv4\"} %u\n",
			rr_localaddr_count(inv->local, AF_INET));
		fprintf(out, "reqrouter_local_routes{family=\"ipv6\"} %u\n",
			rr_localaddr_count(inv->local, AF_INET6));
	}
	rr_metric_family(
		out, "reqrouter_xdp_tx_ok", "gauge",
		"1 while replies sent from XDP reach the peer (always, but on a veth whose peer runs no XDP program).");
	fprintf(out, "reqrouter_xdp_tx_ok{veth_peer=\"%s\"} %d\n",
		rr_peer_label(inv->peer), inv->xdp_tx_ok);
	rr_metric_family(
		out, "reqrouter_steering_workers", "gauge",
		"The workers of each queue the function's requests of a class may go to: every thread, or under steering = groups the class's group as it is now (class 0 grown or not; 1-3 those its XDP program classifies so).");
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		for (k = 0; k < RR_XDP_CLASSES; k++) {
			mask = rr_steer_group_mask(inv, s, k);
			/* Classes past 0 only where a group is listed. */
			if (k && !mask)
				continue;
			fprintf(out, "reqrouter_steering_workers{");
			rr_metric_fn_labels(out, s);
			fprintf(out, ",steering=\"%s\",class=\"%u\"} %d\n",
				rr_steering_names[s->svc->steering], k,
				mask ? __builtin_popcount(mask)
				     : (int)inv->group_threads);
		}
	}
	rr_metric_family(
		out, "reqrouter_xdp_spread_cpus", "gauge",
		"The CPUs the function's XDP program runs on by xdp_spread (0: the receiving CPU); state says why a listed set is not in effect (held: replies from XDP would be lost on this veth).");
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		if (s->spread.state == RR_SPREAD_OFF)
			continue;
		fprintf(out, "reqrouter_xdp_spread_cpus{");
		rr_metric_fn_labels(out, s);
		fprintf(out, ",state=\"%s\"} %u\n",
			rr_spread_state_name(s->spread.state),
			s->spread.state == RR_SPREAD_ON ? s->spread.n : 0);
	}
	rr_metric_family(
		out, "reqrouter_function_in_kernel", "gauge",
		"1 while the function is answered in XDP first (its program or its reply cache).");
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		fprintf(out, "reqrouter_function_in_kernel{");
		rr_metric_fn_labels(out, s);
		fprintf(out, "} %d\n", rr_slot_in_kernel(inv, s));
	}
}

/* Which reqrouter this is, and whether it serves (as /healthz says). */
static void write_state(struct rr_invoker *inv, FILE *out)
{
	int i;

	rr_metric_family(
		out, "reqrouter_build_info", "gauge",
		"Always 1: the release and the function API version (RR_FUNCTION_API) in labels.");
	fprintf(out,
		"reqrouter_build_info{version=\"%s\",function_api=\"%u\"} 1\n",
		RR_VERSION, RR_FUNCTION_API);
	rr_metric_family(
		out, "reqrouter_ready", "gauge",
		"1 while every worker serves (GET /healthz says ready); 0 while starting, draining or stopping, while the link is down, and when a change of the interface needs a restart.");
	fprintf(out, "reqrouter_ready %d\n", !rr_invoker_not_ready(inv));
	rr_metric_family(
		out, "reqrouter_link_mtu", "gauge",
		"The served interface's MTU now: the longest reply sent, and the longest request served up to what a UMEM frame holds.");
	fprintf(out, "reqrouter_link_mtu %u\n", inv->link_now.mtu);
	rr_metric_family(
		out, "reqrouter_link_changes_total", "counter",
		"Changes of the served interface followed while serving: mtu, mac, rx_queues (ethtool -L), down and up (carrier or admin state), name, vlans (a VLAN device on it made or removed).");
	for (i = 0; i < RR_LINK_CHANGE_MAX; i++)
		fprintf(out,
			"reqrouter_link_changes_total{change=\"%s\"} %lu\n",
			rr_link_change_names[i], inv->link_changes[i]);
}

/* How long the main loop went without answering anybody, at most. */
static void write_stall(struct rr_invoker *inv, FILE *out)
{
	char start[32], scrape[32];

	seconds(start, sizeof(start), inv->stall_max_ns);
	seconds(scrape, sizeof(scrape), inv->stall_scrape_ns);
	rr_metric_family(
		out, "reqrouter_main_loop_max_stall_seconds", "gauge",
		"The longest the main thread went between two waits, answering no control client, scrape or watchdog: since start, and since the last GET /metrics.");
	fprintf(out,
		"reqrouter_main_loop_max_stall_seconds{since=\"start\"} %s\n"
		"reqrouter_main_loop_max_stall_seconds{since=\"scrape\"} %s\n",
		start, scrape);
}

/* What became of the clients of the control socket and of the metrics
 * listener (enum rr_control_event, enum rr_http_event). */
static const char *const control_event_names[RR_CONTROL_EV_MAX] = {
	[RR_CONTROL_EV_ACCEPTED] = "accepted",
	[RR_CONTROL_EV_REFUSED_UID] = "refused_uid",
	[RR_CONTROL_EV_REFUSED_FULL] = "refused_full",
	[RR_CONTROL_EV_EVICTED] = "evicted",
	[RR_CONTROL_EV_TIMED_OUT] = "timed_out",
};
static const char *const http_event_names[RR_HTTP_EV_MAX] = {
	[RR_HTTP_EV_ACCEPTED] = "accepted",
	[RR_HTTP_EV_EVICTED_ADDRESS] = "evicted_address",
	[RR_HTTP_EV_EVICTED_FULL] = "evicted_full",
	[RR_HTTP_EV_HEADER_TIMEOUT] = "header_timeout",
};

static void write_ops_clients(struct rr_invoker *inv, FILE *out)
{
	int i;

	rr_metric_family(
		out, "reqrouter_control_clients_total", "counter",
		"Connections to the control socket by what became of them: accepted, refused at once (refused_uid: its uid held its most; refused_full: every slot taken), evicted for root or the service user, timed_out.");
	for (i = 0; i < RR_CONTROL_EV_MAX; i++)
		fprintf(out,
			"reqrouter_control_clients_total{event=\"%s\"} %lu\n",
			control_event_names[i], inv->control_events[i]);
	rr_metric_family(
		out, "reqrouter_metrics_http_connections_total", "counter",
		"Connections to the metrics listener by what became of them: accepted, closed for a newer one (evicted_address: from its address; evicted_full: every slot taken), header_timeout (no whole request in time).");
	for (i = 0; i < RR_HTTP_EV_MAX; i++)
		fprintf(out,
			"reqrouter_metrics_http_connections_total{event=\"%s\"} %lu\n",
			http_event_names[i], inv->http_events[i]);
}

/* Capture, traces and taps (features/capture.c): what their rings had no
 * room for. */
static void write_capture(struct rr_invoker *inv, FILE *out)
{
	rr_metric_family(
		out, "reqrouter_capture_lost_total", "counter",
		"Records of marked requests (reqrouterctl capture and trace, a function's tap: dnstap of the reply cache's answers) lost: the XDP program's ring or a worker's had no room, or a tapped answer could not be handed whole.");
	fprintf(out, "reqrouter_capture_lost_total %lu\n",
		rr_capture_lost(inv));
}

int rr_metrics_write(struct rr_invoker *inv, FILE *out)
{
	uint64_t *fs = rr_read_fn_stats(inv);

	write_state(inv, out);
	write_stall(inv, out);
	write_ops_clients(inv, out);
	write_capture(inv, out);
	write_counters(inv, out, fs);
	write_drops(inv, out, fs);
	free(fs);
	rr_tcp_write_metrics(inv, out);
	rr_hh_write_metrics(inv, out);
	rr_validate_metrics(inv, out);
	write_latency(inv, out);
	write_function_counters(inv, out);
	write_faults(inv, out);
	rr_canary_write_metrics(inv, out);
	write_guards(inv, out);
	write_xsk_stats(inv, out);
	write_frames(inv, out);
	write_xdp_stats(inv, out);
	return ferror(out) ? -EIO : 0;
}

int rr_metrics_write_file(struct rr_invoker *inv, const char *path)
{
	char tmp[PATH_MAX + 16];
	FILE *out;
	int fd, ret;

	/*
	 * A fresh temporary beside the file (mkstemp: O_EXCL, so never an
	 * existing file or a symlink someone planted under a name we would
	 * have guessed), then renamed over it, so a reader sees the old or
	 * the new text, never half of one. Readable by the collector.
	 */
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) || !(out = fdopen(fd, "w"))) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return ret;
	}
	ret = rr_metrics_write(inv, out);
	if (fclose(out) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/*
 * The exit summary goes to the journal: it says what moved and nothing
 * else (a row or a counter that stayed 0 is left out), in lines no
 * longer than SUMMARY_WIDTH. A list of NAME=VALUE items that would pass
 * it goes on in a line of its own that starts as the first did.
 */
#define SUMMARY_WIDTH 160

struct items {
	FILE *out;
	const char *head; /* what a line of items starts with */
	size_t col;	  /* 0: no line begun */
};

static void item(struct items *it, const char *name, uint64_t v)
{
	char text[128];
	size_t n;

	if (!v)
		return;
	n = (size_t)snprintf(text, sizeof(text), " %s=%lu", name, v);
	if (it->col && it->col + n > SUMMARY_WIDTH) {
		fputc('\n', it->out);
		it->col = 0;
	}
	if (!it->col)
		it->col = (size_t)fprintf(it->out, "%s", it->head);
	it->col += (size_t)fprintf(it->out, "%s", text);
}

static void items_end(struct items *it)
{
	if (it->col)
		fputc('\n', it->out);
	it->col = 0;
}

/* One line per function served (at least partly) inside XDP that
 * counted something there. */
static void summary_in_kernel(struct rr_invoker *inv, FILE *out)
{
	uint64_t *fs = rr_read_fn_stats(inv), sum[RR_FN_STAT_MAX], drops;
	const struct rr_slot *s;
	uint32_t q, slot, i;

	for (slot = 0; fs && slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		if (!counted_in_xdp(s))
			continue;
		memset(sum, 0, sizeof(sum));
		for (q = 0; q < inv->nqueues; q++)
			for (i = 0; i < RR_FN_STAT_MAX; i++)
				sum[i] += fs[rr_fn_row(inv, q, slot) + i];
		drops = 0;
		for (i = 1; i < RR_DROP_MAX; i++)
			drops += sum[RR_FN_XDP_DROP + i];
		if (s->tier_xdp && (sum[RR_FN_XDP_RX] || sum[RR_FN_XDP_TX] ||
				    sum[RR_FN_XDP_PUNT] || drops)) {
			fprintf(out,
				"in XDP: %s: %lu requests, %lu replies, %lu punted to user space, %lu dropped",
				s->svc->fn->name, sum[RR_FN_XDP_RX],
				sum[RR_FN_XDP_TX], sum[RR_FN_XDP_PUNT], drops);
			if (sum[RR_FN_XDP_SPREAD])
				fprintf(out, ", %lu of them on xdp_spread CPUs",
					sum[RR_FN_XDP_SPREAD]);
			fprintf(out, "\n");
		} else if (!s->tier_xdp && s->cached &&
			   (sum[RR_FN_CACHE_HIT] || sum[RR_FN_CACHE_MISS]))
			fprintf(out, "reply cache: %s: %lu hits, %lu misses\n",
				s->svc->fn->name, sum[RR_FN_CACHE_HIT],
				sum[RR_FN_CACHE_MISS]);
		if (RR_RATE_LIMITED(s->svc) &&
		    (sum[RR_FN_RL_LIMITED] || sum[RR_FN_RL_SLIPPED]))
			fprintf(out,
				"rate limit: %s: %u replies/s per prefix, %lu limited (dropped), %lu slipped\n",
				s->svc->fn->name, s->svc->rate_limit,
				sum[RR_FN_RL_LIMITED], sum[RR_FN_RL_SLIPPED]);
		if (RR_RATE_LIMITED(s->svc) && sum[RR_FN_RL_WOULD_LIMIT])
			fprintf(out,
				"rate limit: %s: %lu would have been limited (rate_limit_mode = log)\n",
				s->svc->fn->name, sum[RR_FN_RL_WOULD_LIMIT]);
	}
	free(fs);
}

/* The user tier: a row per function that was sent anything, the totals
 * with the drops by reason. */
static void summary_user(struct rr_invoker *inv, FILE *out)
{
	uint64_t rx[RR_MAX_SLOTS] = { 0 }, tx[RR_MAX_SLOTS] = { 0 },
		 dropped[RR_MAX_SLOTS] = { 0 }, by_reason[RR_DROP_MAX] = { 0 };
	uint64_t all_rx = 0, all_tx = 0, all_dropped = 0, v;
	struct items it = { out, "dropped:", 0 };
	bool header = false;
	uint32_t q, t, slot, d;
	struct rr_sock *s;

	for_each_sock (inv, s, q, t, slot) {
		rx[slot] += rr_stat_read(&s->stats->rx);
		tx[slot] += rr_stat_read(&s->stats->tx);
		for (d = 1; d < RR_DROP_MAX; d++) {
			v = rr_stat_read(&s->stats->drops[d]);
			by_reason[d] += v;
			if (d != RR_DROP_NO_REPLY)
				dropped[slot] += v;
		}
	}
	for (slot = 0; slot < inv->nslots; slot++) {
		all_rx += rx[slot];
		all_tx += tx[slot];
		all_dropped += dropped[slot];
		if (!rx[slot] && !tx[slot] && !dropped[slot])
			continue;
		if (!header)
			fprintf(out, "%-8s %-16s %12s %12s %10s\n", "port",
				"function", "rx", "tx", "dropped");
		header = true;
		fprintf(out, "%-8u %-16s %12lu %12lu %10lu\n",
			inv->slots[slot].svc->port,
			inv->slots[slot].svc->fn->name, rx[slot], tx[slot],
			dropped[slot]);
	}
	it.col = (size_t)fprintf(
		out, "in user space: %lu requests, %lu replies, %lu dropped",
		all_rx, all_tx, all_dropped);
	if (by_reason[RR_DROP_NO_REPLY])
		it.col += (size_t)fprintf(
			out, ", %lu left unanswered by their function",
			by_reason[RR_DROP_NO_REPLY]);
	for (d = 1; d < RR_DROP_MAX; d++)
		if (d != RR_DROP_NO_REPLY)
			item(&it, rr_drop_label(d), by_reason[d]);
	items_end(&it);
}

void rr_metrics_summary(struct rr_invoker *inv, FILE *out)
{
	uint64_t xdp[RR_STATS_SIZE];
	uint32_t rows = rr_xdp_stat_rows(inv->nrxqueues);
	struct items it = { out, NULL, 0 };
	char head[96], name[64];
	uint32_t q, slot, i, c;

	summary_user(inv, out);
	for (slot = 0; slot < inv->nslots; slot++) {
		snprintf(head, sizeof(head),
			 "function %s:", inv->slots[slot].svc->fn->name);
		it.head = head;
		for (c = 0; c < inv->slots[slot].fn_ctrs.n; c++)
			item(&it, inv->slots[slot].fn_ctrs.name[c],
			     rr_fn_counter_sum(inv, slot, c));
		items_end(&it);
	}
	for (slot = 0; slot < inv->nslots; slot++)
		if (inv->slots[slot].faults.crashes ||
		    inv->slots[slot].faults.timeouts)
			fprintf(out,
				"function %s: %lu crashes, %lu timeouts%s\n",
				inv->slots[slot].svc->fn->name,
				inv->slots[slot].faults.crashes,
				inv->slots[slot].faults.timeouts,
				inv->slots[slot].quarantined ? ", quarantined"
							     : "");
	summary_in_kernel(inv, out);
	if (rr_xdp_read_stats(&inv->xdp, xdp, rows))
		return;
	it.head = "xdp:";
	for (i = 0; i < RR_XDP_STAT_MAX; i++) {
		uint64_t sum = 0;

		for (q = 0; q < rows; q++)
			sum += xdp[q * RR_XDP_STAT_MAX + i];
		snprintf(name, sizeof(name), "%s/%s", rr_xdp_verdict[i],
			 rr_xdp_reason[i]);
		item(&it, name, sum);
	}
	items_end(&it);
}
