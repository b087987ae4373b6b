// SPDX-License-Identifier: GPL-2.0
/*
 * A part of fuzz_xdp (fuzz_xdp.c): the tier instance, loaded as reqrouter
 * loads it, each frame run through it and through rr_serve() on a copy,
 * and the two outcomes compared.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "cache.h"
#include "frames.h"
#include "fuzz_xdp.h"
#include "invoker.h"
#include "log.h"
#include "packet.h"
#include "parse.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "shared/cache.h"
#include "shared/common.h"
#include "shared/stats.h"
#include "xdp.h"

/* What the tier instance must do with a steered request. */
enum outcome {
	OUT_PASS, /* go on to the (missing) sockets, untouched */
	OUT_TX,	  /* the function's XDP program answers */
	OUT_HIT,  /* the reply cache answers */
	OUT_MISS, /* the cache has nothing: on to the sockets */
	OUT_PUNT, /* past xdp_max_payload: on to the sockets */
	OUT_DROP, /* dropped for user space's reason */
};

static const char *const outcome_names[] = {
	[OUT_PASS] = "go on to the sockets",
	[OUT_TX] = "be answered in XDP",
	[OUT_HIT] = "be answered from the cache",
	[OUT_MISS] = "miss the cache",
	[OUT_PUNT] = "be punted",
	[OUT_DROP] = "be dropped",
};

static const char *const kind_names[] = {
	[TIER_USER] = "user space only",
	[TIER_XDP] = "XDP",
	[TIER_EMPTY] = "XDP, empty slot",
	[TIER_CACHE] = "cached",
};

#define FN_LABEL(name, label) [RR_FN_##name] = label,
static const char *const fn_labels[RR_FN_XDP_DROP + 1] = { RR_FN_STATS(
	FN_LABEL) };
#undef FN_LABEL

/* One frame through the tier instance, and what it was compared with. */
struct tier_case {
	const uint8_t *f;
	uint32_t len;
	uint32_t queue;
	const struct port *p; /* its port when steered, else NULL */
	enum outcome want;
	int user;		     /* rr_serve(): reply length or -drop */
	uint8_t reply[ROOM];	     /* user space's frame */
	uint8_t out[ROOM];	     /* XDP's frame */
	uint32_t out_len, retval;    /* XDP's */
	struct delta dl;	     /* its xdp_stats row */
	uint64_t fn[RR_FN_STAT_MAX]; /* its port's fn_stats */
};

int tier_load(struct tier *t, int ncpus)
{
	const struct rr_xdp_impl *impl;
	char why[RR_ERRLEN];
	const struct port *p;
	size_t i;
	int ret;

	/* A reply cache partition for every queue a frame may name. */
	ret = rr_xdp_load_sized(&t->x, f_dst_mac, MTU, RR_MAX_QUEUES, 1, 0, 0,
				false);
	if (ret)
		return ret;
	for (i = 0; i < tier_table.n; i++) {
		p = &tier_table.p[i];
		if (p->kind != TIER_XDP)
			continue;
		impl = rr_registry_xdp(p->fn);
		if (!impl) {
			fprintf(stderr, "fuzz_xdp: no XDP program for %s\n",
				p->fn);
			return -ENOENT;
		}
		ret = rr_xdp_load_function(&t->x, p->conf.slot, impl, why,
					   sizeof(why));
		if (ret) {
			fprintf(stderr, "fuzz_xdp: cannot load %s in XDP: %s\n",
				p->fn, why);
			return ret;
		}
	}
	ret = configure(t->x.skel, &tier_table);
	if (!ret)
		ret = rr_xdp_map_cache(&t->x);
	if (ret)
		return ret;
	t->prog_fd = bpf_program__fd(t->x.skel->progs.reqrouter_xdp);
	t->fn_fd = bpf_map__fd(t->x.skel->maps.fn_stats);
	t->st.fd = bpf_map__fd(t->x.skel->maps.xdp_stats);
	t->st.ncpus = ncpus;
	t->st.percpu = calloc((size_t)ncpus * BATCH_MAX, sizeof(uint64_t));
	return t->st.percpu ? 0 : -ENOMEM;
}

/* Runs c->f through the tier instance and reads what it counted. */
static int tier_run(struct tier *t, struct tier_case *c, struct xdp_md *ctx)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = c->f,
		    .data_size_in = c->len, .data_out = c->out,
		    .data_size_out = sizeof(c->out), .repeat = 1);
	uint32_t key, s;
	uint64_t v[RR_FN_STAT_MAX];
	int ret;

	if (ctx) {
		ctx->rx_queue_index = c->queue;
		ctx->data_end = c->len;
		o.ctx_in = ctx;
		o.ctx_size_in = sizeof(*ctx);
	}
	ret = bpf_prog_test_run_opts(t->prog_fd, &o);
	if (ret)
		return ret;
	t->runs++;
	c->retval = o.retval;
	c->out_len = o.data_size_out;
	ret = row_delta(&t->st,
			c->queue < RR_MAX_QUEUES ? c->queue : RR_MAX_QUEUES,
			&c->dl);
	if (ret || !c->p)
		return ret;
	key = RR_FN_STATS_KEY(c->queue, c->p->conf.slot, 0);
	ret = read_range(t->fn_fd, &t->st, key, RR_FN_STAT_MAX, v);
	if (ret)
		return ret;
	for (s = 0; s < RR_FN_STAT_MAX; s++) {
		c->fn[s] = v[s] - t->fn_seen[key + s];
		t->fn_seen[key + s] = v[s];
	}
	/* As rr_xdp_read_stats() and rr_xdp_read_fn_stats() read them: a
	 * function's reply is counted once, as its tx (rr_xdp.h). */
	c->fn[RR_FN_XDP_RX] += c->fn[RR_FN_XDP_TX];
	if (c->fn[RR_FN_XDP_TX]) {
		c->dl.total += c->fn[RR_FN_XDP_TX];
		c->dl.stat = RR_XDP_TX_FUNCTION;
		t->fn_tx += c->fn[RR_FN_XDP_TX];
	}
	return 0;
}

/* Whether the reply cache holds an answer to @payload on @p's port, looked
 * up as the XDP program looks it up: in @queue's partition. */
static int cache_holds(const struct tier *t, const struct port *p,
		       const uint8_t *payload, uint32_t len, uint32_t queue)
{
	const struct rr_cache_entry *part = rr_xdp_cache_of(&t->x, queue, 0),
				    *e;
	__u64 w[RR_CACHE_WORDS] = { 0 }, h;

	if (!part || len > p->conf.cache_max_payload ||
	    len > RR_CACHE_MAX_PAYLOAD)
		return 0;
	memcpy(w, payload, len);
	h = rr_cache_hash(w, (len + 7) / 8, p->port, len);
	e = &part[h & (t->x.cache_queue_entries - 1)];
	return !(e->seq & 1) && e->hash == h && e->port == p->port &&
	       e->req_len == len && e->gen == p->conf.cache_gen &&
	       !e->expires_ns && !memcmp(e->req, w, sizeof(w));
}

static const char *user_said(const struct tier_case *c, char *buf, size_t n)
{
	if (c->user >= 0)
		snprintf(buf, n, "answers (%d bytes)", c->user);
	else
		snprintf(buf, n, "drops (%s)", rr_drop_label(-c->user));
	return buf;
}

/* What each outcome shows: the action, the xdp_stats counter and the
 * fn_stats counters that move (-1: none). */
static const struct shows {
	uint32_t act;
	int stat;
	int fn[2];
} outcome_shows[] = {
	[OUT_PASS] = { XDP_PASS, RR_XDP_PASS_NO_SOCKET, { -1, -1 } },
	[OUT_TX] = { XDP_TX,
		     RR_XDP_TX_FUNCTION,
		     { RR_FN_XDP_RX, RR_FN_XDP_TX } },
	[OUT_HIT] = { XDP_TX, RR_XDP_TX_CACHE, { RR_FN_CACHE_HIT, -1 } },
	[OUT_MISS] = { XDP_PASS,
		       RR_XDP_PASS_NO_SOCKET,
		       { RR_FN_CACHE_MISS, -1 } },
	[OUT_PUNT] = { XDP_PASS,
		       RR_XDP_PASS_NO_SOCKET,
		       { RR_FN_XDP_RX, RR_FN_XDP_PUNT } },
	[OUT_DROP] = { XDP_DROP, RR_XDP_DROP_FUNCTION, { RR_FN_XDP_RX, -1 } },
};

/*
 * Compares what the tier instance did with a steered request with user
 * space's answer and c->want; NULL when they agree, else why not.
 */
static const char *judge_steered(const struct tier_case *c, char *buf, size_t n)
{
	const struct shows *w = &outcome_shows[c->want];
	uint64_t want_fn[RR_FN_STAT_MAX] = { 0 };
	uint32_t want_act = w->act, reason = 0, i;
	int want_stat = w->stat;
	char user[64];

	for (i = 0; i < 2; i++)
		if (w->fn[i] >= 0)
			want_fn[w->fn[i]] = 1;
	if (c->want == OUT_DROP)
		want_fn[RR_FN_XDP_DROP - c->user] = 1; /* and its reason */
	user_said(c, user, sizeof(user));

	/* What a user would notice first: the reply, the drop reason. */
	if (c->retval == XDP_TX) {
		if (c->user < 0) {
			snprintf(buf, n, "XDP answered, user space %s", user);
			return buf;
		}
		if (c->out_len != (uint32_t)c->user) {
			snprintf(buf, n,
				 "XDP's reply is %u bytes, user space's %d",
				 c->out_len, c->user);
			return buf;
		}
		for (i = 0; i < c->out_len && c->out[i] == c->reply[i]; i++)
			;
		if (i < c->out_len) {
			snprintf(buf, n,
				 "XDP's reply differs from user space's at "
				 "byte %u of %u (xdp %02x, user %02x)",
				 i, c->out_len, c->out[i], c->reply[i]);
			return buf;
		}
	} else if (c->retval == XDP_DROP) {
		for (i = 1; i < RR_DROP_MAX; i++)
			if (c->fn[RR_FN_XDP_DROP + i])
				reason = i;
		if (!reason || (c->user >= 0 || (uint32_t)-c->user != reason)) {
			snprintf(buf, n, "XDP dropped it (%s), user space %s",
				 reason ? rr_drop_label(reason)
					: "no function-tier reason",
				 user);
			return buf;
		}
	} else if (c->retval == XDP_PASS) {
		if (c->out_len != c->len || memcmp(c->out, c->f, c->len)) {
			snprintf(buf, n, "XDP passed it on changed");
			return buf;
		}
	}
	if (c->retval != want_act) {
		snprintf(buf, n,
			 "user space %s, so it should %s; XDP gave "
			 "verdict %u (counted %s:%s)",
			 user, outcome_names[c->want], c->retval,
			 c->dl.stat >= 0 ? stat_verdicts[c->dl.stat] : "-",
			 c->dl.stat >= 0 ? stat_labels[c->dl.stat] : "-");
		return buf;
	}
	if (c->dl.total != 1 || c->dl.stat != want_stat) {
		snprintf(buf, n,
			 "%" PRIu64 " counters moved, last %s:%s; want "
			 "%s:%s once",
			 c->dl.total,
			 c->dl.stat >= 0 ? stat_verdicts[c->dl.stat] : "-",
			 c->dl.stat >= 0 ? stat_labels[c->dl.stat] : "-",
			 stat_verdicts[want_stat], stat_labels[want_stat]);
		return buf;
	}
	for (i = 0; i < RR_FN_STAT_MAX; i++) {
		if (c->fn[i] == want_fn[i])
			continue;
		snprintf(buf, n,
			 "fn_stats %s%s%s moved by %" PRIu64 ", want %" PRIu64
			 " (it should %s)",
			 fn_labels[i < RR_FN_XDP_DROP ? i : RR_FN_XDP_DROP],
			 i < RR_FN_XDP_DROP ? "" : ":",
			 i < RR_FN_XDP_DROP ? ""
					    : rr_drop_label(i - RR_FN_XDP_DROP),
			 c->fn[i], want_fn[i], outcome_names[c->want]);
		return buf;
	}
	return NULL;
}

/* The steering instance's rules, for what is not the function's. */
static const char *judge_other(const struct tier_case *c, enum expect want)
{
	if (c->retval != (want == EXPECT_DROP ? XDP_DROP : XDP_PASS))
		return want == EXPECT_DROP ? "a request to drop was not dropped"
					   : "verdict is not XDP_PASS";
	if (c->out_len != c->len || memcmp(c->out, c->f, c->len))
		return "the frame was changed";
	if (c->dl.total != 1)
		return "not counted exactly once on its queue";
	if (c->dl.steered)
		return "XDP steered it, user space would not serve it";
	if (c->dl.dropped != (want == EXPECT_DROP))
		return "counted as a drop wrongly";
	return NULL;
}

static void tier_report(struct tier *t, uint64_t no, const struct tier_case *c,
			const char *why)
{
	if (t->fails++ >= MAX_REPORTS)
		return;
	fprintf(stderr,
		"fuzz_xdp: frame %" PRIu64 " (%u bytes, queue %u), in-kernel "
		"tier",
		no, c->len, c->queue);
	if (c->p)
		fprintf(stderr, ", port %u (%s, %s)", c->p->port, c->p->fn,
			kind_names[c->p->kind]);
	fprintf(stderr, ": %s\n", why);
	hexdump(c->f, c->len);
	if (c->retval == XDP_TX && c->user >= 0 &&
	    (c->out_len != (uint32_t)c->user ||
	     memcmp(c->out, c->reply, c->out_len))) {
		fprintf(stderr, "XDP's reply:\n");
		hexdump(c->out, c->out_len);
		fprintf(stderr, "user space's reply:\n");
		hexdump(c->reply, (uint32_t)c->user);
	}
}

/* tier_run(), reporting a failed test run or counter read; returns
 * non-zero when it failed. */
static int run_checked(struct tier *t, uint64_t no, struct tier_case *c,
		       struct xdp_md *ctx)
{
	char buf[256];
	int ret = tier_run(t, c, ctx);

	if (ret) {
		snprintf(buf, sizeof(buf), "test run or counters: %s",
			 strerror(-ret));
		tier_report(t, no, c, buf);
	}
	return ret;
}

/*
 * One frame through the tier instance and, when it is steered to a
 * function, through rr_serve() on a copy; a cached port's miss that user
 * space answers is cached as a worker would, and the frame run again.
 */
void tier_check(struct tier *t, uint64_t no, const uint8_t *f, uint32_t len,
		uint32_t queue, struct xdp_md *ctx, int loop_rule)
{
	static struct tier_case c;
	static uint8_t fixed[MAX_FRAME];
	const struct rr_function *fn;
	const struct port *p;
	enum expect want;
	struct rr_pkt pkt;
	const char *why;
	char buf[256];
	int within, fits, late_csum;

	t->frames++;
	want = expect_verdict(&tier_table, f, len, queue, loop_rule, &p);
	c.f = f;
	c.len = len;
	c.queue = queue;
	c.p = p;
	c.user = 0;
	if (run_checked(t, no, &c, ctx))
		return;
	if (want != EXPECT_STEER) {
		why = judge_other(&c, want);
		if (why)
			tier_report(t, no, &c, why);
		return;
	}

	t->steered++;
	fn = rr_registry_find(p->fn);
	memcpy(c.reply, f, len);
	c.user = rr_serve(c.reply, len, ROOM, MTU, p->conf.max_amplification,
			  fn, queue, 0);
	/*
	 * The request's shape, whatever its UDP checksum: the program looks
	 * at the checksum last, only for what it would answer, so a request
	 * user space drops as bad_checksum is punted when it is too long for
	 * the program, and looked up (a miss) on a cached port, provided its
	 * reply would fit the MTU (else the size is its reason, found first).
	 */
	memcpy(fixed, f, len);
	fix_checksums(fixed, len);
	if (rr_parse(fixed, len, &pkt))
		memset(&pkt, 0, sizeof(pkt));
	fits = pkt.payload_off &&
	       pkt.payload_off - pkt.l3_off + pkt.payload_len <= MTU;
	within = pkt.payload_off &&
		 pkt.payload_len <= p->conf.xdp_max_payload &&
		 pkt.payload_len <= RR_XDP_MAX_PAYLOAD &&
		 len <= RR_XDP_MAX_FRAME;
	late_csum = c.user == -RR_DROP_BAD_CHECKSUM && fits;
	switch (p->kind) {
	case TIER_XDP:
	case TIER_EMPTY:
		if (c.user < 0)
			c.want = late_csum && !within ? OUT_PUNT : OUT_DROP;
		else if (!within)
			c.want = OUT_PUNT;
		else
			c.want = p->kind == TIER_XDP ? OUT_TX : OUT_PASS;
		break;
	case TIER_CACHE:
		if (c.user < 0)
			c.want = late_csum ? OUT_MISS : OUT_PASS;
		else
			c.want = cache_holds(t, p, f + pkt.payload_off,
					     pkt.payload_len, queue)
					 ? OUT_HIT
					 : OUT_MISS;
		break;
	default:
		c.want = OUT_PASS;
		break;
	}
	why = judge_steered(&c, buf, sizeof(buf));
	if (why) {
		tier_report(t, no, &c, why);
		return;
	}
	t->tx += c.want == OUT_TX;
	t->hits += c.want == OUT_HIT;
	t->punts += c.want == OUT_PUNT;
	if (c.want == OUT_DROP)
		t->drops[-c.user]++;
	if (c.want == OUT_TX && (uint32_t)c.user == pkt.l3_off + MTU)
		t->at_mtu++;
	if (c.want != OUT_MISS || c.user < 0 ||
	    pkt.payload_len > p->conf.cache_max_payload)
		return;

	if (rr_cache_insert(rr_xdp_cache_of(&t->x, queue, 0),
			    t->x.cache_queue_entries, p->port,
			    p->conf.cache_gen, 0, f + pkt.payload_off,
			    pkt.payload_len, c.reply + pkt.payload_off,
			    (uint32_t)c.user - pkt.payload_off, 0,
			    0) == RR_CACHE_SKIPPED) {
		tier_report(t, no, &c, "cache insert skipped");
		return;
	}
	t->inserts++;
	c.want = OUT_HIT;
	if (run_checked(t, no, &c, ctx))
		return;
	why = judge_steered(&c, buf, sizeof(buf));
	if (why) {
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 " (run again after caching user space's reply)");
		tier_report(t, no, &c, buf);
		return;
	}
	t->hits++;
}

/* No fn_stats counter moved that a frame did not account for (one for
 * another slot or queue than the request's, say). */
int tier_fn_leftovers(struct tier *t)
{
	uint64_t v[BATCH_MAX];
	uint32_t key, n, i;
	int ret, bad = 0;

	for (key = 0; key < RR_FN_STATS_SIZE; key += n) {
		n = RR_FN_STATS_SIZE - key < BATCH_MAX ? RR_FN_STATS_SIZE - key
						       : BATCH_MAX;
		ret = read_range(t->fn_fd, &t->st, key, n, v);
		if (ret)
			return ret;
		for (i = 0; i < n; i++) {
			if (v[i] == t->fn_seen[key + i])
				continue;
			if (bad++ < MAX_REPORTS)
				fprintf(stderr,
					"fuzz_xdp: fn_stats of queue %u slot "
					"%u, counter %u, moved by %" PRIu64
					" outside the frames' own ports\n",
					(key + i) / RR_FN_STAT_MAX /
						RR_MAX_SLOTS,
					(key + i) / RR_FN_STAT_MAX %
						RR_MAX_SLOTS,
					(key + i) % RR_FN_STAT_MAX,
					v[i] - t->fn_seen[key + i]);
		}
	}
	return bad;
}
