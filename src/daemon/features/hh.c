// SPDX-License-Identifier: GPL-2.0
/*
 * Heavy hitters per function (see hh.h and docs/DESIGN.md, "Who is
 * calling"). The XDP program does the counting; everything here runs on
 * the main thread between its ticks, reads mapped memory only (the
 * sketches, the ring of sampled sources) and never waits: a function's
 * interval costs a pass over its sketch, about 32 k counters, once a
 * second.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "expo.h"
#include "hh.h"
#include "invoker.h"
#include "log.h"
#include "rl.h"
#include "util.h"
#include "validate.h"
#include "xdp.h"

static const char *const kind_names[RR_HH_KINDS] = {
	[RR_HH_SOURCE] = "source",
	[RR_HH_PREFIX] = "prefix",
};

/* The two words a key hashes as, read as the XDP program reads them. */
static uint64_t key_hash(const struct rr_hh_key *key, enum rr_hh_kind kind,
			 uint64_t seed)
{
	__u64 a, b, w0, w1, h[RR_HH_KINDS];

	rr_addr_words(key->family, key->addr, &a, &b);
	rr_hh_words(key->family, a, b, &w0, &w1);
	rr_hh_hash(seed, key->family, w0, w1, h);
	return h[kind];
}

/* The median of @n (1 to RR_HH_ROWS) values, reordering them. */
static double median(double *v, uint32_t n)
{
	double t;
	uint32_t i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double estimate_hash(const struct rr_hh_fn *f, enum rr_hh_kind kind,
			    uint64_t h)
{
	double v[RR_HH_ROWS];
	uint32_t r;

	for (r = 0; r < RR_HH_ROWS; r++)
		v[r] = (double)f->dec[kind][r][rr_hh_col(h, r)] *
		       rr_hh_sign(h, r);
	return median(v, RR_HH_ROWS);
}

/*
 * The same, heeding the keys followed (at their last estimates): a row
 * where one of them shares the key's column does not count while two
 * rows at least are free of them; with fewer, each row counts with what
 * the others put there taken out. Otherwise a heavy key that shares a
 * column with it in two rows moves the median by half its weight.
 */
static double estimate_peeled(const struct rr_hh_fn *f, enum rr_hh_kind kind,
			      uint64_t h)
{
	const struct rr_hh_entry *t = f->track[kind];
	double v[RR_HH_ROWS], clean[RR_HH_ROWS];
	uint32_t r, i, col, nclean = 0;
	bool shared;

	for (r = 0; r < RR_HH_ROWS; r++) {
		col = rr_hh_col(h, r);
		v[r] = f->dec[kind][r][col];
		shared = false;
		for (i = 0; i < f->ntrack[kind]; i++)
			if (t[i].hash != h && rr_hh_col(t[i].hash, r) == col) {
				v[r] -= t[i].count * rr_hh_sign(t[i].hash, r);
				shared = true;
			}
		v[r] *= rr_hh_sign(h, r);
		if (!shared)
			clean[nclean++] = v[r];
	}
	return nclean >= 2 ? median(clean, nclean) : median(v, RR_HH_ROWS);
}

double rr_hh_estimate(const struct rr_hh_fn *f, enum rr_hh_kind kind,
		      const struct rr_hh_key *key, uint64_t seed)
{
	return estimate_peeled(f, kind, key_hash(key, kind, seed));
}

void rr_hh_key_of(const struct rr_hh_cand *c, enum rr_hh_kind kind,
		  struct rr_hh_key *key)
{
	memset(key, 0, sizeof(*key));
	key->family = c->family;
	if (c->family == AF_INET) {
		memcpy(key->addr, c->addr, 4);
		if (kind == RR_HH_PREFIX)
			key->addr[3] = 0; /* RR_HH_V4_PREFIX */
	} else {
		memcpy(key->addr, c->addr, 16);
		if (kind == RR_HH_PREFIX) /* RR_HH_V6_PREFIX */
			memset(key->addr + RR_HH_V6_PREFIX / 8, 0,
			       16 - RR_HH_V6_PREFIX / 8);
	}
}

void rr_hh_key_str(const struct rr_hh_key *key, enum rr_hh_kind kind, char *buf,
		   size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	bool v4 = key->family == AF_INET;

	inet_ntop(v4 ? AF_INET : AF_INET6, key->addr, a, sizeof(a));
	if (kind == RR_HH_PREFIX)
		snprintf(buf, len, "%s/%d", a,
			 v4 ? RR_HH_V4_PREFIX : RR_HH_V6_PREFIX);
	else
		snprintf(buf, len, "%s", a);
}

void rr_hh_fn_reset(struct rr_hh_fn *f, const struct rr_hh_sketch *sk)
{
	memset(f, 0, sizeof(*f));
	f->prev_samples = __atomic_load_n(&sk->samples, __ATOMIC_ACQUIRE);
	f->read_to = f->prev_samples;
	memcpy(f->prev, sk->count, sizeof(f->prev));
}

struct rr_hh_fn *rr_hh_fn_new(const struct rr_hh_sketch *sk)
{
	struct rr_hh_fn *f = malloc(sizeof(*f));

	if (f)
		rr_hh_fn_reset(f, sk);
	return f;
}

/* Key @key of @kind, hash @h, just sampled: followed if it is not, and
 * there is room or it is heavier than the lightest followed. */
static void offer(struct rr_hh_fn *f, enum rr_hh_kind kind,
		  const struct rr_hh_key *key, uint64_t h)
{
	struct rr_hh_entry *t = f->track[kind], *min = NULL;
	uint32_t i, n = f->ntrack[kind];
	double est;

	for (i = 0; i < n; i++) {
		if (t[i].hash == h)
			return;
		if (!min || t[i].count < min->count)
			min = &t[i];
	}
	est = estimate_hash(f, kind, h);
	if (n < RR_HH_TRACK)
		min = &t[f->ntrack[kind]++];
	else if (est <= min->count)
		return;
	min->key = *key;
	min->hash = h;
	min->count = est;
}

void rr_hh_collect(struct rr_hh_fn *f, const struct rr_hh_sketch *sk,
		   uint64_t seed)
{
	uint64_t end = __atomic_load_n(&sk->samples, __ATOMIC_ACQUIRE), n;
	struct rr_hh_key key;
	struct rr_hh_cand c;
	int k;

	if (end < f->read_to)
		f->read_to = end;
	if (end - f->read_to > RR_HH_CANDS) {
		f->lost += end - f->read_to - RR_HH_CANDS;
		f->read_to = end - RR_HH_CANDS;
	}
	for (n = f->read_to; n < end; n++) {
		/* The program may be rewriting it: a torn entry is some
		 * other key, estimated like any. */
		memcpy(&c, &sk->cand[n & (RR_HH_CANDS - 1)], sizeof(c));
		if (c.family != AF_INET && c.family != AF_INET6)
			continue;
		for (k = 0; k < RR_HH_KINDS; k++) {
			rr_hh_key_of(&c, k, &key);
			offer(f, k, &key, key_hash(&key, k, seed));
		}
	}
	f->read_to = end;
}

static int by_count(const void *a, const void *b)
{
	const struct rr_hh_entry *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

void rr_hh_interval(struct rr_hh_fn *f, const struct rr_hh_sketch *sk,
		    uint32_t sample, double dt, double tau)
{
	double a = tau > 0 ? exp(-dt / tau) : 1, scale = sample, f2[RR_HH_ROWS];
	uint64_t s = __atomic_load_n(&sk->samples, __ATOMIC_ACQUIRE);
	double peeled[RR_HH_TRACK];
	float rest[RR_HH_WIDTH];
	int32_t now[RR_HH_WIDTH];
	const struct rr_hh_entry *t;
	uint32_t k, r, j, i;
	double v;

	f->total = a * f->total + (double)(s - f->prev_samples) * scale;
	f->time = a * f->time + dt;
	f->prev_samples = s;
	f->sample = sample;
	for (k = 0; k < RR_HH_KINDS; k++) {
		for (r = 0; r < RR_HH_ROWS; r++) {
			memcpy(now, sk->count[k][r], sizeof(now));
			for (j = 0; j < RR_HH_WIDTH; j++) {
				/* Differences wrap as the counters do. */
				int32_t d =
					(int32_t)((uint32_t)now[j] -
						  (uint32_t)f->prev[k][r][j]);

				f->dec[k][r][j] = (float)(a * f->dec[k][r][j] +
							  d * scale);
			}
			memcpy(f->prev[k][r], now, sizeof(now));
		}
		/* Each followed key, then each again less the others. */
		for (i = 0; i < f->ntrack[k]; i++)
			f->track[k][i].count =
				estimate_hash(f, k, f->track[k][i].hash);
		for (i = 0; i < f->ntrack[k]; i++)
			peeled[i] = estimate_peeled(f, k, f->track[k][i].hash);
		for (i = 0; i < f->ntrack[k]; i++)
			f->track[k][i].count = peeled[i];
		/* The residual F2: each row's counters less what the keys
		 * followed put there, squared and summed. What is left is
		 * the noise a key's counter carries from the others (the
		 * heavy ones collide with it rarely, and the median takes
		 * care of that). */
		for (r = 0; r < RR_HH_ROWS; r++) {
			memcpy(rest, f->dec[k][r], sizeof(rest));
			for (i = 0; i < f->ntrack[k]; i++) {
				t = &f->track[k][i];
				rest[rr_hh_col(t->hash, r)] -=
					(float)(t->count *
						rr_hh_sign(t->hash, r));
			}
			for (v = 0, j = 0; j < RR_HH_WIDTH; j++)
				v += (double)rest[j] * rest[j];
			f2[r] = v;
		}
		f->f2[k] = median(f2, RR_HH_ROWS);
		qsort(f->track[k], f->ntrack[k], sizeof(f->track[k][0]),
		      by_count);
	}
}

double rr_hh_bound(const struct rr_hh_fn *f, enum rr_hh_kind kind)
{
	return 3 * sqrt(f->f2[kind] / RR_HH_WIDTH);
}

double rr_hh_error(const struct rr_hh_fn *f, enum rr_hh_kind kind, double count)
{
	/* count / sample samples, each worth sample requests: Poisson. */
	return rr_hh_bound(f, kind) +
	       2 * sqrt(fmax(count, 0) * (f->sample ? f->sample : 1));
}

size_t rr_hh_top(const struct rr_hh_fn *f, enum rr_hh_kind kind,
		 struct rr_hh_entry *out, size_t k)
{
	double bound = rr_hh_bound(f, kind);
	/* At least a sampled request's worth: a source that stopped decays
	 * towards 0 and never reaches it, and is gone once under that. */
	double least = f->sample ? f->sample : 1;
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < f->ntrack[kind] && n < k; i++)
		if (f->track[kind][i].count > bound &&
		    f->track[kind][i].count >= least)
			out[n++] = f->track[kind][i];
	return n;
}

uint32_t rr_hh_scale(uint32_t sample)
{
	double lambda;

	if (sample <= 1)
		return 0; /* every request: nothing to skip */
	/* -ln(1 - p), exactly enough for p near 0 too. */
	lambda = -log1p(-1.0 / sample);
	return (uint32_t)fmin(RR_HH_POOL_ONE / lambda, 4294967295.0);
}

int rr_hh_fill_pool(struct rr_hh_pool *pool)
{
	static double e[RR_HH_POOL];
	uint32_t r[1024], i, j;
	double sum = 0;
	ssize_t n;

	for (i = 0; i < RR_HH_POOL; i += ARRAY_SIZE(r)) {
		n = getrandom(r, sizeof(r), 0);
		if (n != (ssize_t)sizeof(r))
			return n < 0 ? -errno : -EIO;
		/* U in (0, 1], so -ln(U) is finite: at most 22.2. */
		for (j = 0; j < ARRAY_SIZE(r); j++) {
			e[i + j] = -log(((double)r[j] + 1) / 4294967296.0);
			sum += e[i + j];
		}
	}
	/* Scaled to a mean of exactly 1: the pool is reused until it is
	 * drawn again, and a mean off by its usual 1/sqrt(RR_HH_POOL)
	 * would sample that much too rarely or too often meanwhile. */
	for (i = 0; i < RR_HH_POOL; i++)
		pool->exp[i] = (uint32_t)lround(e[i] * RR_HH_POOL / sum *
						RR_HH_POOL_ONE);
	return 0;
}

/* The invoker's part. */

struct rr_hh {
	/* By slot: what we follow of it, and whose it is (a slot can be
	 * given to another function by a deploy or a reload). */
	struct rr_hh_fn *fn[RR_MAX_SLOTS];
	const struct rr_function *owner[RR_MAX_SLOTS];
	uint16_t port[RR_MAX_SLOTS];
	uint32_t sample[RR_MAX_SLOTS]; /* the one its port entry has */
	uint64_t next_collect_ns;
	uint64_t last_interval_ns;
};

int rr_hh_open(struct rr_invoker *inv)
{
	struct rr_hh *t;
	int ret;

	ret = rr_xdp_map_hh(&inv->xdp);
	if (!ret)
		ret = rr_hh_fill_pool(inv->xdp.hh_pool);
	t = ret ? NULL : calloc(1, sizeof(*t));
	if (!t) {
		pr_warn("heavy hitters are off: %s\n",
			strerror(ret ? -ret : ENOMEM));
		return ret ? ret : -ENOMEM;
	}
	t->last_interval_ns = rr_now_ns();
	inv->hh = t;
	return 0;
}

void rr_hh_close(struct rr_invoker *inv)
{
	uint32_t slot;

	if (!inv->hh)
		return;
	for (slot = 0; slot < RR_MAX_SLOTS; slot++)
		free(inv->hh->fn[slot]);
	free(inv->hh);
	inv->hh = NULL;
}

static bool hh_on(const struct rr_service *svc)
{
	return svc->heavy_hitters && svc->heavy_hitters_sample;
}

void rr_hh_port_conf(const struct rr_invoker *inv, const struct rr_service *svc,
		     struct rr_port_conf *conf)
{
	/* Without the pool every request would be sampled. */
	if (!inv->hh || !hh_on(svc)) {
		conf->flags &= ~RR_PORT_HH;
		conf->hh_scale = 0;
		return;
	}
	conf->flags |= RR_PORT_HH;
	conf->hh_scale = rr_hh_scale(svc->heavy_hitters_sample);
}

/* What @slot serves, followed from now on if its heavy hitters are on;
 * NULL if they are off. */
static struct rr_hh_fn *follow(struct rr_invoker *inv, uint32_t slot)
{
	struct rr_hh *t = inv->hh;
	const struct rr_slot *s = &inv->slots[slot];
	const struct rr_hh_sketch *sk = &inv->xdp.hh[slot];
	bool on = slot < inv->nslots && !s->removed && hh_on(s->svc);

	if (!on) {
		free(t->fn[slot]);
		t->fn[slot] = NULL;
		return NULL;
	}
	if (t->fn[slot] && t->owner[slot] == s->svc->fn &&
	    t->port[slot] == s->svc->port) {
		/* A skip drawn at the old rate could be long. */
		if (t->sample[slot] != s->svc->heavy_hitters_sample) {
			t->sample[slot] = s->svc->heavy_hitters_sample;
			rr_xdp_hh_reset_cpu(&inv->xdp, slot);
		}
		return t->fn[slot];
	}
	if (!t->fn[slot])
		t->fn[slot] = rr_hh_fn_new(sk);
	else
		rr_hh_fn_reset(t->fn[slot], sk);
	if (!t->fn[slot])
		return NULL;
	t->owner[slot] = s->svc->fn;
	t->port[slot] = s->svc->port;
	t->sample[slot] = s->svc->heavy_hitters_sample;
	rr_xdp_hh_reset_cpu(&inv->xdp, slot);
	return t->fn[slot];
}

void rr_hh_tick(struct rr_invoker *inv)
{
	struct rr_hh *t = inv->hh;
	uint64_t now = rr_now_ns();
	struct rr_hh_fn *f;
	bool interval, any = false;
	uint32_t slot;
	double dt;

	if (!t || now < t->next_collect_ns)
		return;
	t->next_collect_ns = now + RR_HH_COLLECT_MS * 1000000ULL;
	interval = now - t->last_interval_ns >= RR_HH_INTERVAL_MS * 1000000ULL;
	dt = (double)(now - t->last_interval_ns) / 1e9;
	for (slot = 0; slot < RR_MAX_SLOTS; slot++) {
		f = follow(inv, slot);
		if (!f)
			continue;
		any = true;
		rr_hh_collect(f, &inv->xdp.hh[slot], inv->xdp.hh_seed);
		if (interval)
			rr_hh_interval(f, &inv->xdp.hh[slot], t->sample[slot],
				       dt, RR_HH_TAU_S);
	}
	if (!interval)
		return;
	t->last_interval_ns = now;
	/* Used at most a few times over in a second. */
	if (any && rr_hh_fill_pool(inv->xdp.hh_pool))
		pr_debug("heavy hitters: cannot draw the pool again\n");
}

/* Whether @key (a source, or a prefix and all in it) is inside @c. */
static bool key_in(const struct rr_hh_key *key, enum rr_hh_kind kind,
		   const struct rr_cidr *c)
{
	uint32_t bits = key->family == AF_INET ? 32 : 128, i, n;

	if ((uint32_t)c->family != key->family)
		return false;
	if (kind == RR_HH_PREFIX &&
	    c->len > (key->family == AF_INET ? RR_HH_V4_PREFIX
					     : RR_HH_V6_PREFIX))
		return false;
	n = c->len < bits ? c->len : bits;
	for (i = 0; i < n; i++)
		if ((key->addr[i / 8] ^ c->addr[i / 8]) & (0x80 >> (i % 8)))
			return false;
	return true;
}

/* Whether the limiter lets @key by, whatever its buckets: inside one of
 * the function's rate_limit_exempt prefixes, which rl_check looks up
 * first. */
static bool exempt(const struct rr_service *svc, const struct rr_hh_key *key,
		   enum rr_hh_kind kind)
{
	uint32_t i;

	for (i = 0; i < svc->nrate_limit_exempt; i++)
		if (key_in(key, kind, &svc->rate_limit_exempt[i]))
			return true;
	return false;
}

/*
 * What slot @slot's rate limit does to @key of @kind now: NULL where it
 * lets it by (or the function has no limit), "limited" where it refuses
 * it, "would_limit" where it would were it not a dry run
 * (rate_limit_mode = log); @conf its port entry's limiter as user space
 * computes it.
 */
static const char *rl_state(struct rr_invoker *inv, uint32_t slot,
			    const struct rr_port_conf *conf,
			    const struct rr_hh_key *key, enum rr_hh_kind kind)
{
	const struct rr_service *svc = inv->slots[slot].svc;
	int v = -1;

	/* A validated source meets its own budget, not its levels'. */
	if (RR_RATE_LIMITED(svc) && kind == RR_HH_SOURCE &&
	    !exempt(svc, key, kind))
		v = rr_validate_top(&inv->xdp, conf, (int)key->family,
				    key->addr, rr_now_ns());
	if (v == 0)
		return NULL;
	if (v < 0 && (!RR_RATE_LIMITED(svc) || exempt(svc, key, kind) ||
		      !rr_rl_held(&inv->xdp, conf, (int)key->family, key->addr,
				  kind == RR_HH_SOURCE
					  ? (key->family == AF_INET ? 32 : 128)
				  : key->family == AF_INET ? RR_HH_V4_PREFIX
							   : RR_HH_V6_PREFIX,
				  rr_now_ns())))
		return NULL;
	return svc->rate_limit_mode == RR_RL_MODE_LOG ? "would_limit"
						      : "limited";
}

/* Slot @slot's port entry's limiter, for rl_state(). */
static void rl_conf(struct rr_invoker *inv, uint32_t slot,
		    struct rr_port_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->slot = slot;
	if (RR_RATE_LIMITED(inv->slots[slot].svc)) {
		rr_rl_port_conf(inv, inv->slots[slot].svc, conf);
		rr_validate_port_conf(inv->slots[slot].svc, conf);
	}
}

/* @f's top keys of @kind as a JSON member: "sources" or "prefixes"; with
 * @rl (the function limits its sources) each says whether the limiter
 * refuses it now ("limited") or would in a dry run ("would_limit"). */
static void json_kind(FILE *out, struct rr_invoker *inv, uint32_t slot,
		      const struct rr_hh_fn *f, enum rr_hh_kind kind, bool rl)
{
	struct rr_hh_entry top[RR_HH_TOPK];
	size_t n = rr_hh_top(f, kind, top, RR_HH_TOPK), i;
	char key[INET6_ADDRSTRLEN + 8];
	double time = f->time > 0 ? f->time : 1;
	struct rr_port_conf conf;
	const char *st;

	rl_conf(inv, slot, &conf);
	fprintf(out, ",\"%s\":{\"error_bound\":%.1f,\"top\":[",
		kind == RR_HH_SOURCE ? "sources" : "prefixes",
		rr_hh_bound(f, kind) / time);
	for (i = 0; i < n; i++) {
		rr_hh_key_str(&top[i].key, kind, key, sizeof(key));
		fprintf(out,
			"%s{\"%s\":\"%s\",\"requests_per_s\":%.1f,\"error\":%.1f,\"share\":%.4f",
			i ? "," : "", kind_names[kind], key,
			top[i].count / time,
			rr_hh_error(f, kind, top[i].count) / time,
			f->total > 0 ? fmin(top[i].count / f->total, 1) : 0);
		if (rl) {
			st = rl_state(inv, slot, &conf, &top[i].key, kind);
			fprintf(out, ",\"limited\":%s",
				st && !strcmp(st, "limited") ? "true"
							     : "false");
			if (st && !strcmp(st, "would_limit"))
				fprintf(out, ",\"would_limit\":true");
		}
		fprintf(out, "}");
	}
	fprintf(out, "]}");
}

void rr_hh_json(struct rr_invoker *inv, const char *name, FILE *out)
{
	const struct rr_slot *s;
	struct rr_hh_fn *f;
	uint32_t slot;
	bool found = false, first = true;

	for (slot = 0; slot < inv->nslots; slot++)
		if (!inv->slots[slot].removed &&
		    (!*name || !strcmp(inv->slots[slot].svc->fn->name, name)))
			found = true;
	if (!found) {
		fprintf(out, "{\"ok\":false,\"message\":");
		if (*name) {
			char msg[128];

			snprintf(msg, sizeof(msg),
				 "no function '%.64s' is served", name);
			rr_json_str(out, msg);
		} else {
			rr_json_str(out, "no function is served");
		}
		fprintf(out, "}\n");
		return;
	}
	fprintf(out,
		"{\"ok\":true,\"tau_s\":%.0f,\"k\":%d,\"v4_prefix\":%d,\"v6_prefix\":%d,\"functions\":[",
		RR_HH_TAU_S, RR_HH_TOPK, RR_HH_V4_PREFIX, RR_HH_V6_PREFIX);
	for (slot = 0; slot < inv->nslots; slot++) {
		s = &inv->slots[slot];
		/* A canary's sources are its function's sketch's. */
		if (s->removed || s->canary_of ||
		    (*name && strcmp(s->svc->fn->name, name)))
			continue;
		f = inv->hh ? inv->hh->fn[slot] : NULL;
		fprintf(out, "%s{\"name\":", first ? "" : ",");
		first = false;
		rr_json_str(out, s->svc->fn->name);
		fprintf(out, ",\"port\":%u,\"heavy_hitters\":%s", s->svc->port,
			f ? "true" : "false");
		if (f) {
			fprintf(out,
				",\"sample\":%u,\"sample_ratio\":%g,\"requests_per_s\":%.1f,\"samples\":%lu,\"candidates_lost\":%lu",
				f->sample ? f->sample
					  : s->svc->heavy_hitters_sample,
				1.0 / s->svc->heavy_hitters_sample,
				f->time > 0 ? f->total / f->time : 0,
				(unsigned long)f->prev_samples,
				(unsigned long)f->lost);
			json_kind(out, inv, slot, f, RR_HH_SOURCE,
				  RR_RATE_LIMITED(s->svc));
			json_kind(out, inv, slot, f, RR_HH_PREFIX,
				  RR_RATE_LIMITED(s->svc));
		}
		fprintf(out, "}");
	}
	fprintf(out, "]}\n");
}

void rr_hh_write_metrics(struct rr_invoker *inv, FILE *out)
{
	struct rr_hh_entry top[RR_HH_TOPK];
	char key[INET6_ADDRSTRLEN + 8];
	struct rr_port_conf conf;
	struct rr_hh_fn *f;
	const char *st;
	uint32_t slot;
	size_t n, i;
	double time;
	int k;

	if (!inv->hh)
		return;
	rr_metric_family(
		out, "reqrouter_heavy_hitter_requests_per_second", "gauge",
		"The function's top sources and source prefixes (at most 10 of each kind) by requests/s, estimated from its sampled sketch, decayed over 10 s; rate_limit=\"limited\" on those its rate limit refuses now, \"would_limit\" on those it would in a dry run (rate_limit_mode = log).");
	for (slot = 0; slot < inv->nslots; slot++) {
		f = inv->hh->fn[slot];
		if (!f)
			continue;
		time = f->time > 0 ? f->time : 1;
		rl_conf(inv, slot, &conf);
		for (k = 0; k < RR_HH_KINDS; k++) {
			n = rr_hh_top(f, k, top, RR_HH_TOPK);
			for (i = 0; i < n; i++) {
				rr_hh_key_str(&top[i].key, k, key, sizeof(key));
				st = rl_state(inv, slot, &conf, &top[i].key, k);
				fprintf(out,
					"reqrouter_heavy_hitter_requests_per_second{");
				rr_metric_fn_labels(out, &inv->slots[slot]);
				fprintf(out,
					",kind=\"%s\",source=\"%s\"%s%s%s} %.1f\n",
					kind_names[k], key,
					st ? ",rate_limit=\"" : "",
					st ? st : "", st ? "\"" : "",
					top[i].count / time);
			}
		}
	}
	rr_metric_family(
		out, "reqrouter_heavy_hitters_error_bound_requests_per_second",
		"gauge",
		"How far off a heavy hitter's requests/s may be from the sketch alone (3 sqrt(F2res / width)), with probability at least 0.9; sampling adds its own.");
	for (slot = 0; slot < inv->nslots; slot++) {
		f = inv->hh->fn[slot];
		if (!f)
			continue;
		time = f->time > 0 ? f->time : 1;
		for (k = 0; k < RR_HH_KINDS; k++) {
			fprintf(out,
				"reqrouter_heavy_hitters_error_bound_requests_per_second{");
			rr_metric_fn_labels(out, &inv->slots[slot]);
			fprintf(out, ",kind=\"%s\"} %.1f\n", kind_names[k],
				rr_hh_bound(f, k) / time);
		}
	}
	rr_metric_family(
		out, "reqrouter_heavy_hitters_sample_ratio", "gauge",
		"The share of the function's requests sampled into its heavy-hitter sketch (1 / heavy_hitters_sample).");
	for (slot = 0; slot < inv->nslots; slot++) {
		if (!inv->hh->fn[slot])
			continue;
		fprintf(out, "reqrouter_heavy_hitters_sample_ratio{");
		rr_metric_fn_labels(out, &inv->slots[slot]);
		fprintf(out, "} %g\n",
			1.0 / inv->slots[slot].svc->heavy_hitters_sample);
	}
	rr_metric_family(
		out, "reqrouter_heavy_hitters_candidates_lost_total", "counter",
		"Sampled sources overwritten in the ring before they were read (the sketch counted them).");
	for (slot = 0; slot < inv->nslots; slot++) {
		if (!inv->hh->fn[slot])
			continue;
		fprintf(out, "reqrouter_heavy_hitters_candidates_lost_total{");
		rr_metric_fn_labels(out, &inv->slots[slot]);
		fprintf(out, "} %lu\n", (unsigned long)inv->hh->fn[slot]->lost);
	}
}
