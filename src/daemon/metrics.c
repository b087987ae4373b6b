// SPDX-License-Identifier: GPL-2.0
/*
 * Metrics, in the Prometheus text format that node_exporter's textfile
 * collector reads (and /metrics serves), and the exit summary. The file is
 * written beside its final name and renamed over it, so a reader never
 * sees half a file. The same counters as JSON: metrics_json.c.
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

#include "metrics_internal.h"
#include "util.h"

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

static void header(FILE *out, const char *name, const char *type,
		   const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

#define SOCK_LABELS \
	"port=\"%u\",function=\"%s\",queue=\"%u\",thread=\"%u\",tier=\"user\""
#define SOCK_ARGS(s, q, t) (s)->svc->port, (s)->svc->fn->name, q, t
/* The in-kernel tier counts per (queue, function), not per thread. */
#define FN_LABELS "port=\"%u\",function=\"%s\",queue=\"%u\""
#define FN_ARGS(svc, q) (svc)->port, (svc)->fn->name, q

/* Every socket, with its queue, thread and slot. */
#define for_each_sock(inv, s, q, t, slot)                                   \
	for (q = 0; q < (inv)->nqueues; q++)                                \
		for (t = 0; t < (inv)->threads_made; t++)                   \
			for (slot = 0; slot < (inv)->nslots &&              \
				       ((s) = rr_sock_at(inv, q, t, slot)); \
			     slot++)

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
	{ "reqrouter_cache_hits_total",
	  "Requests answered from the reply cache inside XDP.", RR_FN_CACHE_HIT,
	  false },
	{ "reqrouter_cache_misses_total",
	  "Requests of a cached function the cache could not answer.",
	  RR_FN_CACHE_MISS, false },
};

/* Where the counters of (queue q, slot) start in what rr_read_fn_stats()
 * returns. */
size_t rr_fn_row(const struct rr_invoker *inv, uint32_t q, uint32_t slot)
{
	return ((size_t)q * inv->nslots + slot) * RR_FN_STAT_MAX;
}

/* Reads the in-kernel counters of every served (queue, slot) once:
 * out[(q * nslots + slot) * RR_FN_STAT_MAX + stat]. */
uint64_t *rr_read_fn_stats(struct rr_invoker *inv)
{
	uint64_t *out = calloc((size_t)inv->nqueues * inv->nslots,
			       sizeof(uint64_t) * RR_FN_STAT_MAX);
	uint32_t q, slot;

	if (!out)
		return NULL;
	for (q = 0; q < inv->nqueues; q++)
		for (slot = 0; slot < inv->nslots; slot++)
			if ((inv->slots[slot].tier_xdp ||
			     inv->slots[slot].cached) &&
			    rr_xdp_read_fn_stats(
				    &inv->xdp, q, slot,
				    out + rr_fn_row(inv, q, slot))) {
				free(out);
				return NULL;
			}
	return out;
}

static void write_fn_counters(struct rr_invoker *inv, FILE *out,
			      const uint64_t *fs, const char *name,
			      uint32_t stat, bool xdp_tier)
{
	const uint64_t *row;
	uint32_t q, slot;

	for (q = 0; q < inv->nqueues; q++)
		for (slot = 0; slot < inv->nslots; slot++) {
			if (xdp_tier ? !inv->slots[slot].tier_xdp
				     : !inv->slots[slot].cached)
				continue;
			row = fs + rr_fn_row(inv, q, slot);
			fprintf(out, "%s{" FN_LABELS "%s} %lu\n", name,
				FN_ARGS(inv->slots[slot].svc, q),
				xdp_tier ? ",tier=\"xdp\"" : "", row[stat]);
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
	return sum;
}

/* The counters functions registered (rr_fn_counter()), one family per
 * name even where two functions chose the same one. */
static void write_function_counters(struct rr_invoker *inv, FILE *out)
{
	const struct rr_slot *s, *s2;
	uint32_t slot, c, slot2, c2;
	const char *ctr;
	char name[96];
	bool seen;

	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		for (c = 0; c < s->fn_ctrs.n; c++) {
			ctr = s->fn_ctrs.name[c];
			seen = false;
			for (slot2 = 0; slot2 <= slot && !seen; slot2++) {
				s2 = &inv->slots[slot2];
				for (c2 = 0; c2 < s2->fn_ctrs.n &&
					     !(slot2 == slot && c2 >= c);
				     c2++)
					seen |= !strcmp(s2->fn_ctrs.name[c2],
							ctr);
			}
			if (seen)
				continue;
			snprintf(name, sizeof(name),
				 "reqrouter_function_%s_total", ctr);
			header(out, name, "counter", s->fn_ctrs.help[c]);
			for (slot2 = slot; slot2 < inv->nslots; slot2++) {
				s2 = &inv->slots[slot2];
				for (c2 = 0; c2 < s2->fn_ctrs.n; c2++)
					if (!strcmp(s2->fn_ctrs.name[c2], ctr))
						fprintf(out,
							"%s{port=\"%u\",function=\"%s\"} %lu\n",
							name, s2->svc->port,
							s2->svc->fn->name,
							rr_fn_counter_sum(inv,
									  slot2,
									  c2));
			}
		}
	}
}

static uint64_t sock_counter(const struct rr_sock *s, size_t offset)
{
	return rr_stat_read(
		(const uint64_t *)((const char *)s->stats + offset));
}

/* Crashes, overruns and quarantine (isolation = cell; see cell.c). */
static void write_faults(struct rr_invoker *inv, FILE *out)
{
	const struct rr_slot *s;
	uint32_t slot;

	header(out, "reqrouter_function_faults_total", "counter",
	       "Calls that crashed their cell, or ran past max_run_us and were killed.");
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		fprintf(out,
			"reqrouter_function_faults_total{port=\"%u\",function=\"%s\",kind=\"crash\"} %lu\n",
			s->svc->port, s->svc->fn->name, s->faults.crashes);
		fprintf(out,
			"reqrouter_function_faults_total{port=\"%u\",function=\"%s\",kind=\"timeout\"} %lu\n",
			s->svc->port, s->svc->fn->name, s->faults.timeouts);
	}
	header(out, "reqrouter_function_quarantined", "gauge",
	       "1 while the function is quarantined: its port drops or passes its requests.");
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		fprintf(out,
			"reqrouter_function_quarantined{port=\"%u\",function=\"%s\"} %d\n",
			s->svc->port, s->svc->fn->name, s->quarantined);
	}
	header(out, "reqrouter_cell_restarts_total", "counter",
	       "Cells that died and were forked again.");
	fprintf(out, "reqrouter_cell_restarts_total %lu\n", inv->cell_restarts);
}

/* The sockets' counters, each family with the in-kernel tier's samples of
 * the same name beside them; then the in-kernel tier's own families. */
static void write_counters(struct rr_invoker *inv, FILE *out,
			   const uint64_t *fs)
{
	const size_t nfn = ARRAY_SIZE(fn_counters);
	uint32_t q, t, slot, i, j;
	struct rr_sock *s;

	for (i = 0; i < ARRAY_SIZE(sock_counters); i++) {
		header(out, sock_counters[i].name, "counter",
		       sock_counters[i].help);
		for_each_sock (inv, s, q, t, slot) {
			fprintf(out, "%s{" SOCK_LABELS "} %lu\n",
				sock_counters[i].name, SOCK_ARGS(s, q, t),
				sock_counter(s, sock_counters[i].offset));
		}
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
		header(out, fn_counters[j].name, "counter",
		       fn_counters[j].help);
		write_fn_counters(inv, out, fs, fn_counters[j].name,
				  fn_counters[j].stat, fn_counters[j].xdp_tier);
	}
}

/* Drops by reason: per socket, and per (queue, function) in XDP. */
static void write_drops(struct rr_invoker *inv, FILE *out, const uint64_t *fs)
{
	uint32_t q, t, slot, d;
	struct rr_sock *s;

	header(out, "reqrouter_dropped_packets_total", "counter",
	       "Requests recycled without a reply, by reason.");
	for_each_sock (inv, s, q, t, slot) {
		for (d = 1; d < RR_DROP_MAX; d++)
			fprintf(out,
				"reqrouter_dropped_packets_total{" SOCK_LABELS
				",reason=\"%s\"} %lu\n",
				SOCK_ARGS(s, q, t), rr_drop_label(d),
				rr_stat_read(&s->stats->drops[d]));
	}
	for (q = 0; fs && q < inv->nqueues; q++)
		for (slot = 0; slot < inv->nslots; slot++) {
			if (!inv->slots[slot].tier_xdp)
				continue;
			for (d = 1; d < RR_DROP_MAX; d++)
				fprintf(out,
					"reqrouter_dropped_packets_total{" FN_LABELS
					",tier=\"xdp\",reason=\"%s\"} %lu\n",
					FN_ARGS(inv->slots[slot].svc, q),
					rr_drop_label(d),
					fs[rr_fn_row(inv, q, slot) +
					   RR_FN_XDP_DROP + d]);
		}
}

/* The kernel's XDP_STATISTICS of every socket. */
static void write_xsk_stats(struct rr_invoker *inv, FILE *out)
{
	uint64_t xs[N_XSK_STATS];
	uint32_t q, t, slot, i;
	struct rr_sock *s;
	char name[96];

	for (i = 0; i < N_XSK_STATS; i++) {
		snprintf(name, sizeof(name), "reqrouter_xsk_%s_total",
			 xsk_stat_names[i]);
		header(out, name, "counter",
		       "The kernel's XDP_STATISTICS for the socket.");
		for_each_sock (inv, s, q, t, slot) {
			xsk_stats(s->fd, xs);
			fprintf(out, "%s{" SOCK_LABELS "} %lu\n", name,
				SOCK_ARGS(s, q, t), xs[i]);
		}
	}
}

static void write_frames(struct rr_invoker *inv, FILE *out)
{
	struct rr_frames f;
	uint32_t q, i;

	header(out, "reqrouter_umem_frames", "gauge",
	       "Where each queue's UMEM frames are; they add up to the UMEM size.");
	for (q = 0; q < inv->nqueues; q++) {
		rr_invoker_frames(inv, q, &f);
		const struct {
			const char *state;
			uint32_t n;
		} where[] = {
			{ "fill", f.fill },
			{ "rx", f.rx },
			{ "worker", f.worker },
			{ "tx", f.tx },
			{ "completion", f.completion },
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
	header(out, "reqrouter_xdp_packets_total", "counter",
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
	uint32_t slot;

	if (inv->local) {
		header(out, "reqrouter_local_routes", "gauge",
		       "The host's local routes the destination check answers for (answer_for = local).");
		fprintf(out, "reqrouter_local_routes{family=\"ipv4\"} %u\n",
			rr_localaddr_count(inv->local, AF_INET));
		fprintf(out, "reqrouter_local_routes{family=\"ipv6\"} %u\n",
			rr_localaddr_count(inv->local, AF_INET6));
	}
	header(out, "reqrouter_xdp_tx_ok", "gauge",
	       "1 while replies sent from XDP reach the peer (always, but on a veth whose peer runs no XDP program).");
	fprintf(out, "reqrouter_xdp_tx_ok{veth_peer=\"%s\"} %d\n",
		rr_peer_label(inv->peer), inv->xdp_tx_ok);
	header(out, "reqrouter_function_in_kernel", "gauge",
	       "1 while the function is answered in XDP first (its program or its reply cache).");
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		fprintf(out,
			"reqrouter_function_in_kernel{port=\"%u\",function=\"%s\"} %d\n",
			s->svc->port, s->svc->fn->name,
			rr_slot_in_kernel(inv, s));
	}
}

int rr_metrics_write(struct rr_invoker *inv, FILE *out)
{
	uint64_t *fs = rr_read_fn_stats(inv);

	write_counters(inv, out, fs);
	write_drops(inv, out, fs);
	free(fs);
	write_function_counters(inv, out);
	write_faults(inv, out);
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

/* One line per function served (at least partly) inside XDP. */
static void summary_in_kernel(struct rr_invoker *inv, FILE *out)
{
	uint64_t *fs = rr_read_fn_stats(inv), sum[RR_FN_STAT_MAX], drops;
	const struct rr_slot *s;
	uint32_t q, slot, i;

	for (slot = 0; fs && slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		if (!s->tier_xdp && !s->cached)
			continue;
		memset(sum, 0, sizeof(sum));
		for (q = 0; q < inv->nqueues; q++)
			for (i = 0; i < RR_FN_STAT_MAX; i++)
				sum[i] += fs[rr_fn_row(inv, q, slot) + i];
		drops = 0;
		for (i = 1; i < RR_DROP_MAX; i++)
			drops += sum[RR_FN_XDP_DROP + i];
		if (s->tier_xdp)
			fprintf(out,
				"in XDP: %s: %lu requests, %lu replies, %lu punted to user space, %lu dropped\n",
				s->svc->fn->name, sum[RR_FN_XDP_RX],
				sum[RR_FN_XDP_TX], sum[RR_FN_XDP_PUNT], drops);
		else
			fprintf(out, "reply cache: %s: %lu hits, %lu misses\n",
				s->svc->fn->name, sum[RR_FN_CACHE_HIT],
				sum[RR_FN_CACHE_MISS]);
	}
	free(fs);
}

void rr_metrics_summary(struct rr_invoker *inv, FILE *out)
{
	uint64_t xdp[RR_STATS_SIZE];
	uint32_t rows = rr_xdp_stat_rows(inv->nrxqueues);
	uint64_t rx = 0, tx = 0, drops, all_drops = 0, silent = 0;
	uint32_t q, t, slot, d, i, c;
	struct rr_sock *s;

	fprintf(out, "%-8s %-12s %5s %6s %12s %12s %10s\n", "port", "function",
		"queue", "thread", "rx", "tx", "dropped");
	for_each_sock (inv, s, q, t, slot) {
		drops = 0;
		for (d = 1; d < RR_DROP_MAX; d++)
			if (d != RR_DROP_NO_REPLY)
				drops += rr_stat_read(&s->stats->drops[d]);
		silent += rr_stat_read(&s->stats->drops[RR_DROP_NO_REPLY]);
		fprintf(out, "%-8u %-12s %5u %6u %12lu %12lu %10lu\n",
			s->svc->port, s->svc->fn->name, q, t,
			rr_stat_read(&s->stats->rx),
			rr_stat_read(&s->stats->tx), drops);
		rx += rr_stat_read(&s->stats->rx);
		tx += rr_stat_read(&s->stats->tx);
		all_drops += drops;
	}
	fprintf(out, "total: %lu requests, %lu replies, %lu dropped", rx, tx,
		all_drops);
	if (silent)
		fprintf(out, ", %lu left unanswered by their function", silent);
	for (d = 1; d < RR_DROP_MAX; d++) {
		if (d == RR_DROP_NO_REPLY)
			continue;
		drops = 0;
		for_each_sock (inv, s, q, t, slot)
			drops += rr_stat_read(&s->stats->drops[d]);
		if (drops)
			fprintf(out, " %s=%lu", rr_drop_label(d), drops);
	}
	fputc('\n', out);
	for (slot = 0; slot < inv->nslots; slot++) {
		if (!inv->slots[slot].fn_ctrs.n)
			continue;
		fprintf(out, "function %s:", inv->slots[slot].svc->fn->name);
		for (c = 0; c < inv->slots[slot].fn_ctrs.n; c++)
			fprintf(out, " %s=%lu",
				inv->slots[slot].fn_ctrs.name[c],
				rr_fn_counter_sum(inv, slot, c));
		fputc('\n', out);
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
	fprintf(out, "xdp:");
	for (i = 0; i < RR_XDP_STAT_MAX; i++) {
		uint64_t sum = 0;

		for (q = 0; q < rows; q++)
			sum += xdp[q * RR_XDP_STAT_MAX + i];
		fprintf(out, " %s/%s=%lu", rr_xdp_verdict[i], rr_xdp_reason[i],
			sum);
	}
	fputc('\n', out);
}
