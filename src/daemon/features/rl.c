// SPDX-License-Identifier: GPL-2.0
/*
 * Rate limiting, user space's half (docs/DESIGN.md, "Rate limiting in
 * XDP"): a function's rate_limit settings into its XDP port entry and its
 * exemptions in the program's maps, and the look at one prefix's bucket
 * that tells the heavy hitters (hh.c) which of the top sources it holds
 * back. The limiting itself is the XDP program's (kern/, rl_check).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <bpf/libbpf.h>

#include "invoker.h"
#include "log.h"
#include "packet.h"
#include "reqrouter.skel.h"
#include "rl.h"
#include "shared/guard.h"
#include "util.h"
#include "xdp.h"

/*
 * The levels of prefixes the limiter keeps around the configured one
 * (rate_limit_v4_prefix, _v6_prefix), narrowest first, and the budget of
 * each as a multiple of the configured prefix's (num / den): the source
 * itself at half, so that one address takes at most half of its
 * prefix's and leaves the rest to its neighbours (Knot 3.4 gives a /32
 * a 32nd of a /24's, which at NSD's 200/s per /24, dns's default, would
 * hold a lone resolver to 6/s; its /128 has half a /64's, as here), and
 * the wider ones as Knot 3.4 scales them: IPv4's /20 eight times a /24's
 * (256 : 32), IPv6's /56 and /48 1.5 and 2 times a /64's (3 : 2, 4 : 2).
 * A level is 'off' bits out from the configured prefix (full: the
 * whole address), kept only while inside 1..the address's bits.
 */
struct rl_level {
	int off; /* bits more than the configured prefix; RL_FULL: all */
	uint32_t num, den;
};

#define RL_FULL 1000

static const struct rl_level rl_levels_v4[] = {
	{ RL_FULL, 1, 2 },
	{ 0, 1, 1 },
	{ -4, 8, 1 },
};
static const struct rl_level rl_levels_v6[] = {
	{ RL_FULL, 1, 2 },
	{ 0, 1, 1 },
	{ -8, 3, 2 },
	{ -16, 2, 1 },
};

/* Family @fam's levels of @conf (@bits the address's) around a
 * @prefix-long one whose interval is @interval_ns. */
static void rl_fill(struct rr_port_conf *conf, int fam, uint32_t bits,
		    uint32_t prefix, uint64_t interval_ns,
		    const struct rl_level *lv, size_t nlv)
{
	uint64_t iv;
	size_t i, n = 0;
	int len;

	for (i = 0; i < nlv && n < RR_RL_LEVELS; i++) {
		len = lv[i].off == RL_FULL ? (int)bits
					   : (int)prefix + lv[i].off;
		if (len < 1 || len > (int)bits ||
		    (lv[i].off == RL_FULL && prefix >= bits))
			continue;
		iv = interval_ns * lv[i].den / lv[i].num;
		conf->rl_len[fam][n] = (uint8_t)len;
		if (iv > UINT32_MAX)
			iv = UINT32_MAX;
		conf->rl_interval_ns[fam][n] = !interval_ns ? 0
					       : iv < 1	    ? 1
							    : (uint32_t)iv;
		n++;
	}
	for (; n < RR_RL_LEVELS; n++) {
		conf->rl_len[fam][n] = 0;
		conf->rl_interval_ns[fam][n] = 0;
	}
}

void rr_rl_levels(struct rr_port_conf *conf, uint32_t rate, uint32_t burst,
		  uint32_t v4_prefix, uint32_t v6_prefix)
{
	uint64_t interval_ns = rate ? 1000000000U / rate : 0;

	if (rate && !interval_ns)
		interval_ns = 1;
	conf->rl_burst_ns = (uint64_t)(burst ? burst : rate) * interval_ns;
	rl_fill(conf, RR_RL_V4, 32, v4_prefix, interval_ns, rl_levels_v4,
		ARRAY_SIZE(rl_levels_v4));
	rl_fill(conf, RR_RL_V6, 128, v6_prefix, interval_ns, rl_levels_v6,
		ARRAY_SIZE(rl_levels_v6));
}

/*
 * Rate limiting as @svc says now (docs/DESIGN.md, "Rate limiting in
 * XDP"): the levels of prefixes, their intervals and the burst
 * (rr_rl_levels()), the slip and the mode. The slip reply goes out with
 * XDP_TX where such frames are not lost (xdp_tx_ok); elsewhere the XDP
 * program hands the request to a worker marked as a slip, and the worker
 * sends the same reply (rr_rl_slip()).
 */
void rr_rl_port_conf(const struct rr_invoker *inv, const struct rr_service *svc,
		     struct rr_port_conf *conf)
{
	conf->flags &=
		~(RR_PORT_RL | RR_PORT_RL_EXEMPT | RR_PORT_SLIP_TC |
		  RR_PORT_SLIP_WORKERS | RR_PORT_RL_LOG | RR_PORT_RL_COST);
	conf->rl_seed = rr_rl_seed(inv->xdp.hh_seed, conf->slot,
				   inv->xdp.rl_gen[conf->slot % RR_MAX_SLOTS]);
	if (!svc->rate_limit && !svc->rate_limit_us)
		return;
	conf->flags |= RR_PORT_RL;
	/* Where the workers can charge it. */
	if (svc->rate_limit_us && inv->xdp.rl_cost)
		conf->flags |= RR_PORT_RL_COST;
	if (svc->nrate_limit_exempt)
		conf->flags |= RR_PORT_RL_EXEMPT;
	if (svc->rate_limit_mode == RR_RL_MODE_LOG)
		conf->flags |= RR_PORT_RL_LOG;
	if (svc->fn->flags & RR_FN_SLIP_TC)
		conf->flags |= RR_PORT_SLIP_TC |
			       (inv->xdp_tx_ok ? 0 : RR_PORT_SLIP_WORKERS);
	rr_rl_levels(conf, svc->rate_limit, svc->rate_limit_burst,
		     svc->rate_limit_v4_prefix, svc->rate_limit_v6_prefix);
	conf->rl_slip = svc->slip;
}

/*
 * A microsecond of the function's time costs a level's bucket what a
 * reply costs it at rate_limit = rate_limit_us: the same levels, the
 * same shares, each bucket's burst a second's budget
 * (RR_RL_COST_BURST_NS), keyed by the port entry's hashes.
 */
void rr_rl_cost_conf(const struct rr_service *svc,
		     const struct rr_port_conf *conf, struct rr_rl_cost *c)
{
	struct rr_port_conf lv = { .rl_seed = 0 };

	memset(c, 0, sizeof(*c));
	if (!(conf->flags & RR_PORT_RL_COST))
		return;
	rr_rl_levels(&lv, svc->rate_limit_us, 0, svc->rate_limit_v4_prefix,
		     svc->rate_limit_v6_prefix);
	c->seed = conf->rl_seed;
	memcpy(c->interval_ns, lv.rl_interval_ns, sizeof(c->interval_ns));
	memcpy(c->len, lv.rl_len, sizeof(c->len));
}

bool rr_rl_source(const uint8_t *frame, uint32_t len, struct rr_rl_charge *ch)
{
	uint32_t off = 12;
	uint16_t type;

	if (len < off + 2)
		return false;
	type = (uint16_t)(frame[off] << 8 | frame[off + 1]);
	if (type == 0x8100 || type == 0x88a8) {
		off += 4;
		if (len < off + 2)
			return false;
		type = (uint16_t)(frame[off] << 8 | frame[off + 1]);
	}
	off += 2;
	if (type == 0x0800 && len >= off + 20) {
		ch->family = AF_INET;
		memcpy(ch->addr, frame + off + 12, 4);
		return true;
	}
	if (type == 0x86dd && len >= off + 40) {
		ch->family = AF_INET6;
		memcpy(ch->addr, frame + off + 8, 16);
		return true;
	}
	return false;
}

/* One level's bucket of hash @h in @table charged @add ns at @now: its
 * entry, restarted if its time is past, or the earliest of its set,
 * claimed (its time first, as rl_take() claims). */
static void charge_level(struct rr_rl_set *table, uint64_t h, uint64_t add,
			 uint64_t now)
{
	struct rr_rl_set *set = &table[rr_rl_set_of(h)];
	struct rr_rl_entry *victim = &set->way[0];
	__u64 t, vt = UINT64_MAX; /* the entries' type, for the exchanges */
	uint32_t w;

	for (w = 0; w < RR_RL_WAYS; w++) {
		if (__atomic_load_n(&set->way[w].tag, __ATOMIC_RELAXED) == h) {
			t = __atomic_load_n(&set->way[w].tat, __ATOMIC_RELAXED);
			if (t < now &&
			    __atomic_compare_exchange_n(
				    &set->way[w].tat, &t, now + add, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				return;
			__atomic_fetch_add(&set->way[w].tat, add,
					   __ATOMIC_RELAXED);
			return;
		}
		t = __atomic_load_n(&set->way[w].tat, __ATOMIC_RELAXED);
		if (t < vt) {
			vt = t;
			victim = &set->way[w];
		}
	}
	if (__atomic_compare_exchange_n(&victim->tat, &vt, now + add, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		__atomic_store_n(&victim->tag, h, __ATOMIC_RELAXED);
}

void rr_rl_charge(struct rr_rl_set *table, const struct rr_rl_cost *c,
		  const struct rr_rl_charge *ch, uint32_t n, uint64_t now)
{
	struct rr_port_conf conf = { .rl_seed = c->seed };
	uint32_t i, l;
	__u64 a, b;
	int fam;

	for (i = 0; i < n; i++) {
		fam = ch[i].family == AF_INET ? RR_RL_V4 : RR_RL_V6;
		rr_addr_words(ch[i].family, ch[i].addr, &a, &b);
		for (l = 0; l < RR_RL_LEVELS && c->len[fam][l]; l++)
			if (c->interval_ns[fam][l])
				charge_level(table,
					     rr_rl_hash(&conf,
							(__u32)ch[i].family,
							c->len[fam][l], a, b),
					     ch[i].ns * c->interval_ns[fam][l] /
						     1000,
					     now);
	}
}

void rr_rl_mask(uint32_t bits, uint8_t *mask, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		mask[i] = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);
		bits = bits >= 8 ? bits - 8 : 0;
	}
}

int rr_rl_slip(uint8_t *frame, uint32_t len, uint32_t *csum_start)
{
	uint32_t pos = RR_DNS_HDR, n, i;
	struct rr_pkt pkt;
	uint8_t *p;
	int ret;

	ret = rr_parse(frame, len, &pkt);
	if (ret)
		return ret;
	p = frame + pkt.payload_off;
	n = pkt.payload_len < RR_SLIP_MAX ? pkt.payload_len : RR_SLIP_MAX;
	if (n < RR_DNS_HDR + 5 || p[2] & RR_DNS_QR || p[4] || p[5] != 1)
		return -RR_DROP_MALFORMED;
	for (i = 0; i < RR_DNS_MAX_LABELS; i++) {
		if (pos >= n || p[pos] & 0xc0)
			return -RR_DROP_MALFORMED;
		if (!p[pos])
			break;
		pos += p[pos] + 1U;
	}
	pos += 1 + 4; /* the root label, QTYPE and QCLASS */
	if (i == RR_DNS_MAX_LABELS || pos > n)
		return -RR_DROP_MALFORMED;
	p[2] = (uint8_t)((p[2] & 0x79) | RR_DNS_QR | RR_DNS_TC);
	p[3] = 0; /* opcode and RD kept, AA, RA and the RCODE clear */
	memset(p + 6, 0, 6);
	if (!csum_start)
		return (int)rr_build_reply(frame, &pkt, pos);
	*csum_start = pkt.l4_off;
	return (int)rr_build_reply_partial(frame, &pkt, pos);
}

void rr_rl_say(const struct rr_service *svc)
{
	struct rr_port_conf conf = { .slot = 0 };
	char slip[64] = "", levels[160] = "";
	uint32_t f, l, base;
	int n = 0;

	if (svc->rate_limit_us)
		pr_info("cost limit for '%s': %u us of its time a second per source prefix (/%u, /%u; a source half of it), charged by its workers, limited in XDP; rate_limit_us = 0 turns it off\n",
			svc->fn->name, svc->rate_limit_us,
			svc->rate_limit_v4_prefix, svc->rate_limit_v6_prefix);
	if (!svc->rate_limit) {
		pr_info("no rate limit for '%s' (rate_limit = 0)\n",
			svc->fn->name);
		return;
	}
	if (svc->slip && svc->fn->flags & RR_FN_SLIP_TC)
		snprintf(slip, sizeof(slip),
			 ", one in %u of those over it slipped (DNS TC)",
			 svc->slip);
	rr_rl_levels(&conf, svc->rate_limit, svc->rate_limit_burst,
		     svc->rate_limit_v4_prefix, svc->rate_limit_v6_prefix);
	base = 1000000000U / svc->rate_limit;
	for (f = 0; f < 2; f++)
		for (l = 0; l < RR_RL_LEVELS && conf.rl_interval_ns[f][l]; l++)
			if (conf.rl_len[f][l] !=
			    (f ? svc->rate_limit_v6_prefix
			       : svc->rate_limit_v4_prefix))
				n += snprintf(
					levels + n, sizeof(levels) - n,
					"%s/%u %.2gx", n ? ", " : "",
					conf.rl_len[f][l],
					(double)(base ? base : 1) /
						conf.rl_interval_ns[f][l]);
	pr_info("rate limit for '%s': %u replies/s per source prefix (/%u, /%u), burst %u, in XDP (and times that: %s)%s%s; rate_limit = 0 turns it off\n",
		svc->fn->name, svc->rate_limit, svc->rate_limit_v4_prefix,
		svc->rate_limit_v6_prefix,
		svc->rate_limit_burst ? svc->rate_limit_burst : svc->rate_limit,
		levels, svc->rate_limit_mode == RR_RL_MODE_LOG ? "" : slip,
		svc->rate_limit_mode == RR_RL_MODE_LOG
			? ", a dry run (rate_limit_mode = log): what it would limit is counted and let by"
			: "");
}

int rr_rl_open(struct rr_invoker *inv, uint32_t slot,
	       const struct rr_service *svc)
{
	uint32_t i;
	int ret;

	for (i = 0; i < svc->nrate_limit_exempt; i++) {
		ret = rr_rl_exempt(&inv->xdp, slot, &svc->rate_limit_exempt[i],
				   true);
		if (ret)
			return ret;
	}
	/* The slot may have served another function: its buckets are not
	 * this one's. */
	return rr_rl_reset(&inv->xdp, slot);
}

int rr_rl_reset(struct rr_xdp *x, uint32_t slot)
{
	if (slot >= RR_MAX_SLOTS)
		return -EINVAL;
	x->rl_gen[slot] = ++x->rl_gens;
	return 0;
}

/* How much less than a burst ahead a bucket may be and still count as
 * held: a flood's requests come in bursts of their own. */
#define RL_HELD_MARGIN_NS 10000000ULL

/*
 * Whether the limiter holds the prefix of @family's address @addr at its
 * limit now, in the function @conf describes: the entry of one of its
 * levels no longer than @bits (a source: all; a /24: the /24 and the
 * /20) more than a burst less a margin ahead of @now. rl_check() refuses
 * a request from there while a level's time is a burst ahead; a flood
 * keeps it between that and one interval less (each token, freed, is
 * taken by its next request), dipping further by the gaps between its
 * requests. The margin (10 ms, or the level's interval if longer, at
 * most the burst's time) shows a flooded prefix as limited throughout
 * instead of flickering at every token or gap: an interval alone is
 * 10 us at 100000/s. One look at one set a level, never at the whole
 * table.
 */
bool rr_rl_held(struct rr_xdp *x, const struct rr_port_conf *conf, int family,
		const uint8_t *addr, uint32_t bits, uint64_t now)
{
	int fam = family == AF_INET ? RR_RL_V4 : RR_RL_V6;
	__u64 a, b, h, tau, margin;
	uint32_t key, w, l, iv;
	struct rr_rl_set set;

	rr_addr_words((uint32_t)family, addr, &a, &b);
	for (l = 0; l < RR_RL_LEVELS && conf->rl_len[fam][l]; l++) {
		iv = conf->rl_interval_ns[fam][l];
		if (conf->rl_len[fam][l] > bits)
			continue;
		h = rr_rl_hash(conf, (__u32)family, conf->rl_len[fam][l], a, b);
		key = rr_rl_set_of(h);
		/* Over its cost (rate_limit_us), as rl_check() judges it. */
		if (conf->flags & RR_PORT_RL_COST && x->rl_cost)
			for (w = 0; w < RR_RL_WAYS; w++)
				if (x->rl_cost[key].way[w].tag == h &&
				    x->rl_cost[key].way[w].tat >
					    now + RR_RL_COST_BURST_NS -
						    RL_HELD_MARGIN_NS)
					return true;
		if (!iv)
			continue;
		if (bpf_map__lookup_elem(x->skel->maps.rl_table, &key,
					 sizeof(key), &set, sizeof(set), 0))
			return false;
		tau = rr_rl_tau(conf, iv);
		margin = iv > RL_HELD_MARGIN_NS ? iv : RL_HELD_MARGIN_NS;
		if (margin > tau)
			margin = tau;
		for (w = 0; w < RR_RL_WAYS; w++)
			if (set.way[w].tag == h &&
			    set.way[w].tat > now + tau - margin)
				return true;
	}
	return false;
}

int rr_rl_exempt(struct rr_xdp *x, uint32_t slot, const struct rr_cidr *c,
		 bool add)
{
	struct rr_allow_v4 k4 = { .prefixlen = 32 + c->len, .slot = slot };
	struct rr_allow_v6 k6 = { .prefixlen = 32 + c->len, .slot = slot };
	struct bpf_map *m;
	uint8_t one = 1;
	void *key;
	size_t klen;
	int ret;

	if (c->family == AF_INET) {
		memcpy(k4.addr, c->addr, sizeof(k4.addr));
		m = x->skel->maps.rl_exempt_v4;
		key = &k4;
		klen = sizeof(k4);
	} else {
		memcpy(k6.addr, c->addr, sizeof(k6.addr));
		m = x->skel->maps.rl_exempt_v6;
		key = &k6;
		klen = sizeof(k6);
	}
	if (!add) {
		ret = bpf_map__delete_elem(m, key, klen, 0);
		return ret == -ENOENT ? 0 : ret;
	}
	ret = bpf_map__update_elem(m, key, klen, &one, sizeof(one), 0);
	if (ret)
		pr_warn("cannot add to the rate-limit exemptions: %s%s\n",
			strerror(-ret),
			ret == -ENOSPC ? " (too many prefixes)" : "");
	return ret;
}
