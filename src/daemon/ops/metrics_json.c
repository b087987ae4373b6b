// SPDX-License-Identifier: GPL-2.0
/*
 * The counters as JSON, for reqrouterctl stats (over the control socket):
 * per function both tiers' totals (and TCP's), its faults and its own
 * counters; the XDP program's verdicts; where each queue's UMEM frames
 * are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"
#include "frame.h"
#include "latency.h"
#include "metrics_internal.h"

/* "NAME":{"count":N,"p50":US,"p99":US,"buckets":[...]} of histogram
 * @bucket: each quantile as the upper bound of its bucket in us, null
 * above the last (1 s) or with nothing counted; the buckets' own counts
 * (not cumulative, bounds in "latency_le_us"), so that a reader can take
 * the quantiles of an interval from two answers (tools/bench does). */
static void json_quantiles(FILE *out, const char *name, const uint64_t *bucket)
{
	static const double qs[] = { 0.5, 0.99 };
	static const char *const qn[] = { "p50", "p99" };
	uint64_t n = 0, v;
	uint32_t b, i;

	for (b = 0; b <= RR_LATENCY_NLE; b++)
		n += bucket[b];
	fprintf(out, ",\"%s\":{\"count\":%lu", name, n);
	for (i = 0; i < 2; i++) {
		v = rr_latency_quantile(bucket, qs[i]);
		if (!n || v == UINT64_MAX)
			fprintf(out, ",\"%s\":null", qn[i]);
		else
			fprintf(out, ",\"%s\":%.1f", qn[i], (double)v / 1000.0);
	}
	fprintf(out, ",\"buckets\":[");
	for (b = 0; b <= RR_LATENCY_NLE; b++)
		fprintf(out, "%s%lu", b ? "," : "", bucket[b]);
	fprintf(out, "]}");
}

/* One function's totals over every queue and thread, both tiers. */
static void json_function(struct rr_invoker *inv, uint32_t slot,
			  const uint64_t *fs, FILE *out)
{
	const struct rr_service *svc = inv->slots[slot].svc;
	uint64_t rx = 0, tx = 0, drops[RR_DROP_MAX] = { 0 };
	char version[64];
	uint64_t lat[RR_LATENCY_NLE + 1] = { 0 },
				      qd[RR_LATENCY_NLE + 1] = { 0 };
	uint64_t sum[RR_FN_STAT_MAX] = { 0 };
	uint32_t q, t, d, i, c;
	struct rr_sock *s;

	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < inv->threads_made; t++) {
			s = rr_sock_at(inv, q, t, slot);
			rx += rr_stat_read(&s->stats->rx);
			tx += rr_stat_read(&s->stats->tx);
			for (d = 1; d < RR_DROP_MAX; d++)
				drops[d] += rr_stat_read(&s->stats->drops[d]);
			for (i = 0; i <= RR_LATENCY_NLE; i++) {
				lat[i] += rr_stat_read(
					&s->stats->latency.bucket[i]);
				qd[i] += rr_stat_read(
					&s->stats->queue_delay.bucket[i]);
			}
		}
	for (q = 0; fs && q < inv->nqueues; q++)
		for (i = 0; i < RR_FN_STAT_MAX; i++)
			sum[i] += fs[rr_fn_row(inv, q, slot) + i];
	fprintf(out, "{\"name\":");
	rr_json_str(out, svc->fn->name);
	fprintf(out, ",\"version\":");
	rr_json_str(out,
		    rr_fn_version(&inv->slots[slot], version, sizeof(version)));
	fprintf(out,
		",\"port\":%u,\"user\":{\"rx\":%lu,\"tx\":%lu,\"dropped\":{",
		svc->port, rx, tx);
	for (d = 1; d < RR_DROP_MAX; d++)
		fprintf(out, "%s\"%s\":%lu", d > 1 ? "," : "", rr_drop_label(d),
			drops[d]);
	fprintf(out, "}}");
	if (inv->slots[slot].tier_xdp) {
		fprintf(out,
			",\"xdp\":{\"rx\":%lu,\"tx\":%lu,\"punted\":%lu,\"spread\":%lu,\"dropped\":{",
			sum[RR_FN_XDP_RX], sum[RR_FN_XDP_TX],
			sum[RR_FN_XDP_PUNT], sum[RR_FN_XDP_SPREAD]);
		for (d = 1; d < RR_DROP_MAX; d++)
			fprintf(out, "%s\"%s\":%lu", d > 1 ? "," : "",
				rr_drop_label(d), sum[RR_FN_XDP_DROP + d]);
		fprintf(out, "}}");
	}
	if (inv->slots[slot].cached)
		fprintf(out, ",\"cache\":{\"hits\":%lu,\"misses\":%lu}",
			sum[RR_FN_CACHE_HIT], sum[RR_FN_CACHE_MISS]);
	if (RR_RATE_LIMITED(svc))
		fprintf(out,
			",\"rate_limit\":{\"limit\":%u,\"mode\":\"%s\",\"limited\":%lu,\"slipped\":%lu,\"evicted\":%lu,\"would_limit\":%lu,\"validated\":%lu,\"validated_limited\":%lu}",
			svc->rate_limit, rr_rl_mode_names[svc->rate_limit_mode],
			sum[RR_FN_RL_LIMITED], sum[RR_FN_RL_SLIPPED],
			sum[RR_FN_RL_EVICTED], sum[RR_FN_RL_WOULD_LIMIT],
			sum[RR_FN_VALIDATED], sum[RR_FN_VALIDATED_LIMITED]);
	if (svc->fn->flags & RR_FN_DNS_COOKIES)
		fprintf(out, ",\"cookies\":{\"valid\":%lu,\"bypass\":%lu}",
			sum[RR_FN_COOKIE_VALID], sum[RR_FN_COOKIE_BYPASS]);
	/* The user tier's time per reply and wait per request
	 * (reqrouter_request_duration_seconds, reqrouter_queue_delay_seconds). */
	json_quantiles(out, "latency_us", lat);
	json_quantiles(out, "queue_delay_us", qd);
	if (svc->deadline_us)
		fprintf(out,
			",\"deadline\":{\"us\":%u,\"expired_user\":%lu,\"expired_xdp\":%lu}",
			svc->deadline_us, drops[RR_DROP_EXPIRED],
			sum[RR_FN_XDP_DROP + RR_DROP_EXPIRED]);
	rr_tcp_json(inv, slot, out);
	fprintf(out,
		",\"faults\":{\"crash\":%lu,\"timeout\":%lu},\"quarantined\":%s",
		inv->slots[slot].faults.crashes,
		inv->slots[slot].faults.timeouts,
		inv->slots[slot].quarantined ? "true" : "false");
	fprintf(out, ",\"counters\":{");
	for (c = 0; c < inv->slots[slot].fn_ctrs.n; c++) {
		fprintf(out, "%s", c ? "," : "");
		rr_json_str(out, inv->slots[slot].fn_ctrs.name[c]);
		fprintf(out, ":%lu", rr_fn_counter_sum(inv, slot, c));
	}
	fprintf(out, "}}");
}

void rr_metrics_json(struct rr_invoker *inv, FILE *out)
{
	uint32_t rows = rr_xdp_stat_rows(inv->nrxqueues);
	uint64_t xdp[RR_STATS_SIZE], *fs = rr_read_fn_stats(inv);
	uint32_t slot, q, i;

	static const uint64_t le[RR_LATENCY_NLE] = { RR_LATENCY_LE_NS };

	/* The histograms' bucket bounds, the last bucket's above them. */
	fprintf(out, "{\"ok\":true,\"latency_le_us\":[");
	for (i = 0; i < RR_LATENCY_NLE; i++)
		fprintf(out, "%s%.1f", i ? "," : "", (double)le[i] / 1000.0);
	fprintf(out, "],\"functions\":[");
	for (slot = 0; slot < inv->nslots; slot++) {
		fprintf(out, "%s", slot ? "," : "");
		json_function(inv, slot, fs, out);
	}
	fprintf(out, "]");
	free(fs);
	if (!rr_xdp_read_stats(&inv->xdp, xdp, rows)) {
		fprintf(out, ",\"xdp\":{");
		for (i = 0; i < RR_XDP_STAT_MAX; i++) {
			uint64_t sum = 0;

			for (q = 0; q < rows; q++)
				sum += xdp[q * RR_XDP_STAT_MAX + i];
			fprintf(out, "%s\"%s/%s\":%lu", i ? "," : "",
				rr_xdp_verdict[i], rr_xdp_reason[i], sum);
		}
		fprintf(out, "}");
	}
	fprintf(out, ",\"umem_frames\":[");
	for (q = 0; q < inv->nqueues; q++) {
		struct rr_frames f;

		rr_invoker_frames(inv, q, &f);
		fprintf(out,
			"%s{\"queue\":%u,\"fill\":%u,\"rx\":%u,\"worker\":%u,\"stock\":%u,\"tx\":%u,\"completion\":%u,\"kernel\":%u}",
			q ? "," : "", q, f.fill, f.rx, f.worker, f.stock, f.tx,
			f.completion, f.kernel);
	}
	fprintf(out, "]}\n");
}

uint64_t rr_metrics_requests(struct rr_invoker *inv)
{
	uint32_t rows = rr_xdp_stat_rows(inv->nrxqueues), q, i;
	uint64_t xdp[RR_STATS_SIZE], sum = 0;

	if (rr_xdp_read_stats(&inv->xdp, xdp, rows))
		return 0;
	for (q = 0; q < rows; q++)
		for (i = 0; i < RR_XDP_STAT_MAX; i++)
			if (strcmp(rr_xdp_verdict[i], "pass"))
				sum += xdp[q * RR_XDP_STAT_MAX + i];
	return sum;
}
