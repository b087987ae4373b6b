// SPDX-License-Identifier: GPL-2.0
/*
 * Validated sources, user space's half (docs/DESIGN.md, "Validated
 * sources"): validate_table mapped for the TCP loop, which marks a source
 * validated once its handshake completed (accept), and for the workers,
 * whose functions validate a source by a token echoed
 * (rr_token_check(), src/lib/token.c, with the key drawn here); a
 * function's rate_limit_validated and validated_for into its port entry;
 * the counters and metrics. The XDP program reads the table, and marks a
 * source whose DNS server cookie is valid (kern/lib/validate.h).
 *
 * Every cell keeps the table writable, as it keeps its function's
 * frames: a function's code could mark any address validated, which
 * raises that address's budget to rate_limit_validated, no more.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <bpf/libbpf.h>
#include <reqrouter/rr_cookie.h>

#include "clock.h"
#include "expo.h"
#include "invoker.h"
#include "log.h"
#include "reqrouter.skel.h"
#include "shared/rl.h"
#include "token.h"
#include "validate.h"
#include "xdp.h"

/* What the TCP loops and the workers count, in memory they all share. */
struct counts {
	uint64_t tcp; /* sources validated by a TCP handshake */
	uint64_t token[RR_TOKEN_RESULTS];
};

/* Set at start, before any worker, cell or TCP loop is made: each keeps
 * what it was forked with. */
static struct rr_validate_set *table;
static uint64_t seed;
static struct counts *counts;
/* The tokens' key, counters and hook, as set at start. */
static struct rr_token_env token_env;

static uint64_t hash_of(uint64_t sd, int family, const void *addr)
{
	__u64 a, b;

	rr_addr_words((uint32_t)family, addr, &a, &b);
	return rr_validate_hash(sd, (uint32_t)family, a, b);
}

void rr_validate_mark(struct rr_validate_set *t, uint64_t sd, int family,
		      const void *addr, uint64_t now)
{
	uint64_t h = hash_of(sd, family, addr);
	struct rr_validate_set *set = &t[rr_validate_set_of(h)];
	struct rr_validate_entry *victim = &set->way[0];
	__u64 at, vt = UINT64_MAX; /* the entries' type, for the exchange */
	uint32_t w;

	for (w = 0; w < RR_VALIDATE_WAYS; w++) {
		if (__atomic_load_n(&set->way[w].tag, __ATOMIC_RELAXED) == h) {
			__atomic_store_n(&set->way[w].at, now,
					 __ATOMIC_RELAXED);
			return;
		}
		at = __atomic_load_n(&set->way[w].at, __ATOMIC_RELAXED);
		if (at < vt) {
			vt = at;
			victim = &set->way[w];
		}
	}
	/* Its time first, as XDP claims: a reader that matched the old tag
	 * meanwhile finds a source validated now, an error of one request. */
	if (__atomic_compare_exchange_n(&victim->at, &vt, now, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		__atomic_store_n(&victim->tag, h, __ATOMIC_RELAXED);
}

int rr_validate_held(const struct rr_validate_set *t, uint64_t sd, int family,
		     const void *addr, uint32_t for_s, uint64_t now)
{
	uint64_t h = hash_of(sd, family, addr);
	const struct rr_validate_set *set = &t[rr_validate_set_of(h)];
	uint32_t w;

	for (w = 0; w < RR_VALIDATE_WAYS; w++)
		if (__atomic_load_n(&set->way[w].tag, __ATOMIC_RELAXED) == h)
			return rr_validate_live(
				__atomic_load_n(&set->way[w].at,
						__ATOMIC_RELAXED),
				now, for_s);
	return 0;
}

static void count(uint64_t *c)
{
	if (counts)
		__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

void rr_validate_tcp(int family, const void *addr)
{
	if (!table || (family != AF_INET && family != AF_INET6))
		return;
	rr_validate_mark(table, seed, family, addr, rr_now_ns());
	count(&counts->tcp);
}

/* rr_token_check()'s hook: a valid token's source. */
static void token_valid(int family, const void *addr)
{
	if (table)
		rr_validate_mark(table, seed, family, addr, rr_now_ns());
}

int rr_validate_open(struct rr_invoker *inv)
{
	struct rr_token_env env = { .validated = token_valid };
	uint8_t key[16];
	void *p;
	int ret;

	if (getrandom(key, sizeof(key), 0) != sizeof(key))
		return -errno;
	env.k0 = rr_le64(key);
	env.k1 = rr_le64(key + 8);
	/* Shared with every cell, as the table is. */
	p = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		counts = p;
		env.counts = counts->token;
	}
	rr_token_setup(&env);
	token_env = env;
	ret = rr_xdp_map_validate(&inv->xdp);
	if (ret)
		return ret;
	table = inv->xdp.validate;
	seed = inv->xdp.hh_seed;
	return 0;
}

void rr_validate_cell_unmap(struct rr_invoker *inv)
{
	struct rr_token_env e = token_env;

	/* Tokens are still told good from bad, with the key: neither
	 * counted nor their sources marked. */
	e.counts = NULL;
	e.validated = NULL;
	rr_token_setup(&e);
	if (counts)
		munmap(counts, sizeof(*counts));
	counts = NULL;
	table = NULL;
	if (inv->xdp.validate)
		munmap(inv->xdp.validate, inv->xdp.validate_size);
	inv->xdp.validate = NULL;
}

void rr_validate_close(void)
{
	struct rr_token_env none = { .k0 = 0 };

	if (counts)
		munmap(counts, sizeof(*counts));
	counts = NULL;
	table = NULL;
	rr_token_setup(&none);
}

void rr_validate_port_conf(const struct rr_service *svc,
			   struct rr_port_conf *conf)
{
	uint64_t rate, iv;

	conf->flags &= ~RR_PORT_VALIDATE;
	conf->validated_for_s = 0;
	conf->validated_interval_ns = 0;
	if (!(conf->flags & RR_PORT_RL) || !svc->validated_for)
		return;
	rate = svc->rate_limit_validated
		       ? svc->rate_limit_validated
		       : (uint64_t)svc->rate_limit * RR_VALIDATED_RATE_FACTOR;
	iv = rate ? 1000000000ULL / rate : 0;
	conf->flags |= RR_PORT_VALIDATE;
	conf->validated_for_s = svc->validated_for;
	conf->validated_interval_ns = rate && !iv ? 1 : (uint32_t)iv;
}

void rr_validate_say(const struct rr_service *svc)
{
	uint64_t rate;

	if (!RR_RATE_LIMITED(svc))
		return;
	if (!svc->validated_for) {
		pr_info("no validated sources for '%s' (validated_for = 0): a valid cookie or a TCP handshake changes nothing of its rate limit\n",
			svc->fn->name);
		return;
	}
	rate = svc->rate_limit_validated
		       ? svc->rate_limit_validated
		       : (uint64_t)svc->rate_limit * RR_VALIDATED_RATE_FACTOR;
	if (rate)
		pr_info("validated sources of '%s' (a TCP handshake, a valid cookie or token within %u s): %lu replies/s each in place of their prefixes' budgets\n",
			svc->fn->name, svc->validated_for, rate);
	else
		pr_info("validated sources of '%s' (a TCP handshake, a valid cookie or token within %u s): not limited by replies\n",
			svc->fn->name, svc->validated_for);
}

/* A held bucket shows as held this close to its edge: as rl.c's. */
#define HELD_MARGIN_NS 10000000ULL

int rr_validate_top(struct rr_xdp *x, const struct rr_port_conf *conf,
		    int family, const uint8_t *addr, uint64_t now)
{
	__u64 a, b;
	uint64_t h, tau, margin;
	uint32_t key, w, iv = conf->validated_interval_ns;
	struct rr_rl_set set;

	if (!(conf->flags & RR_PORT_VALIDATE) || !x->validate ||
	    !rr_validate_held(x->validate, x->hh_seed, family, addr,
			      conf->validated_for_s, now))
		return -1;
	if (!iv)
		return 0;
	rr_addr_words((uint32_t)family, addr, &a, &b);
	h = rr_rl_hash(conf, (uint32_t)family, RR_VALIDATE_BITS, a, b);
	key = rr_rl_set_of(h);
	if (bpf_map__lookup_elem(x->skel->maps.rl_table, &key, sizeof(key),
				 &set, sizeof(set), 0))
		return 0;
	tau = rr_rl_tau(conf, iv);
	margin = iv > HELD_MARGIN_NS ? iv : HELD_MARGIN_NS;
	if (margin > tau)
		margin = tau;
	for (w = 0; w < RR_RL_WAYS; w++)
		if (set.way[w].tag == h && set.way[w].tat > now + tau - margin)
			return 1;
	return 0;
}

/* Sources validated now by the longest validated_for served. */
static uint32_t live_sources(const struct rr_invoker *inv)
{
	uint32_t i, w, for_s = 0, n = 0;
	uint64_t now = rr_now_ns(), at;

	for (i = 0; i < inv->nslots; i++)
		if (inv->slots[i].svc &&
		    inv->slots[i].svc->validated_for > for_s)
			for_s = inv->slots[i].svc->validated_for;
	if (!table || !for_s)
		return 0;
	for (i = 0; i < RR_VALIDATE_SETS; i++)
		for (w = 0; w < RR_VALIDATE_WAYS; w++) {
			at = __atomic_load_n(&table[i].way[w].at,
					     __ATOMIC_RELAXED);
			n += rr_validate_live(at, now, for_s);
		}
	return n;
}

void rr_validate_metrics(struct rr_invoker *inv, FILE *out)
{
	uint32_t r;

	if (!table)
		return;
	rr_metric_family(
		out, "reqrouter_validated_sources", "gauge",
		"Source addresses validated now (a TCP handshake, a valid DNS server cookie or a function's token, within the longest validated_for served).");
	fprintf(out, "reqrouter_validated_sources %u\n", live_sources(inv));
	if (!counts)
		return;
	rr_metric_family(
		out, "reqrouter_validations_total", "counter",
		"Sources validated by reqrouter's own means: a completed TCP handshake (how=\"tcp\"), a function's token echoed (how=\"token\"); those by a valid DNS server cookie are reqrouter_cookie_valid_packets_total.");
	fprintf(out, "reqrouter_validations_total{how=\"tcp\"} %lu\n",
		__atomic_load_n(&counts->tcp, __ATOMIC_RELAXED));
	fprintf(out, "reqrouter_validations_total{how=\"token\"} %lu\n",
		__atomic_load_n(&counts->token[RR_TOKEN_VALID],
				__ATOMIC_RELAXED));
	rr_metric_family(
		out, "reqrouter_tokens_total", "counter",
		"Tokens functions checked (rr_token_check()), by result: valid, malformed (a wrong length, version or reserved bytes), expired, forged (another address's, tampered, or another reqrouter's).");
	for (r = 0; r < RR_TOKEN_RESULTS; r++)
		fprintf(out, "reqrouter_tokens_total{result=\"%s\"} %lu\n",
			rr_token_result_names[r],
			__atomic_load_n(&counts->token[r], __ATOMIC_RELAXED));
}
