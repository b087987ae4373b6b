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
#include "xdp.h"

/*
 * Rate limiting as @svc says now (docs/DESIGN.md, "Rate limiting in
 * XDP"): the interval between two replies, the burst, the slip and the
 * prefix masks in memory order. The slip reply goes out with XDP_TX
 * where such frames are not lost (xdp_tx_ok); elsewhere the XDP program
 * hands the request to a worker marked as a slip, and the worker sends
 * the same reply (rr_rl_slip()).
 */
void rr_rl_port_conf(const struct rr_invoker *inv, const struct rr_service *svc,
		     struct rr_port_conf *conf)
{
	uint8_t m6[16];

	conf->flags &= ~(RR_PORT_RL | RR_PORT_RL_EXEMPT | RR_PORT_SLIP_TC |
			 RR_PORT_SLIP_WORKERS | RR_PORT_RL_LOG);
	conf->rl_seed = rr_rl_seed(inv->xdp.hh_seed, conf->slot,
				   inv->xdp.rl_gen[conf->slot % RR_MAX_SLOTS]);
	if (!svc->rate_limit)
		return;
	conf->flags |= RR_PORT_RL;
	if (svc->nrate_limit_exempt)
		conf->flags |= RR_PORT_RL_EXEMPT;
	if (svc->rate_limit_mode == RR_RL_MODE_LOG)
		conf->flags |= RR_PORT_RL_LOG;
	if (svc->fn->flags & RR_FN_SLIP_TC)
		conf->flags |= RR_PORT_SLIP_TC |
			       (inv->xdp_tx_ok ? 0 : RR_PORT_SLIP_WORKERS);
	conf->rl_interval_ns = 1000000000U / svc->rate_limit;
	if (!conf->rl_interval_ns)
		conf->rl_interval_ns = 1;
	conf->rl_burst =
		svc->rate_limit_burst ? svc->rate_limit_burst : svc->rate_limit;
	conf->rl_slip = svc->slip;
	conf->rl_mask_v4 = htonl(svc->rate_limit_v4_prefix >= 32
					 ? ~0U
					 : ~(~0U >> svc->rate_limit_v4_prefix));
	rr_rl_mask(svc->rate_limit_v6_prefix, m6, sizeof(m6));
	memcpy(conf->rl_mask_v6, m6, sizeof(m6));
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
	char slip[64] = "";

	if (!svc->rate_limit) {
		pr_info("no rate limit for '%s' (rate_limit = 0)\n",
			svc->fn->name);
		return;
	}
	if (svc->slip && svc->fn->flags & RR_FN_SLIP_TC)
		snprintf(slip, sizeof(slip),
			 ", one in %u of those over it slipped (DNS TC)",
			 svc->slip);
	pr_info("rate limit for '%s': %u replies/s per source prefix (/%u, /%u), burst %u, in XDP%s%s; rate_limit = 0 turns it off\n",
		svc->fn->name, svc->rate_limit, svc->rate_limit_v4_prefix,
		svc->rate_limit_v6_prefix,
		svc->rate_limit_burst ? svc->rate_limit_burst : svc->rate_limit,
		svc->rate_limit_mode == RR_RL_MODE_LOG ? "" : slip,
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
 * limit now, in the function @conf describes: its entry's time more than
 * a burst less a margin ahead of @now. rl_check() refuses a request from
 * there while the time is a burst ahead; a flood keeps it between that
 * and one interval less (each token, freed, is taken by its next
 * request), dipping further by the gaps between its requests. The margin
 * (10 ms, or an interval if longer, at most the burst's time) shows a
 * flooded prefix as limited throughout instead of flickering at every
 * token or gap: an interval alone is 10 us at 100000/s. One look at one
 * set, never at the whole table.
 */
bool rr_rl_held(struct rr_xdp *x, const struct rr_port_conf *conf, int family,
		const uint8_t *addr, uint64_t now)
{
	__u64 a = 0, b = 0, h, tau, margin, edge;
	struct rr_rl_set set;
	uint32_t v4, key, w;

	if (family == AF_INET) {
		memcpy(&v4, addr, 4);
		a = v4;
	} else {
		memcpy(&a, addr, 8);
		memcpy(&b, addr + 8, 8);
	}
	h = rr_rl_hash(conf, (__u32)family, a, b);
	key = rr_rl_set_of(h);
	if (bpf_map__lookup_elem(x->skel->maps.rl_table, &key, sizeof(key),
				 &set, sizeof(set), 0))
		return false;
	tau = rr_rl_tau(conf);
	margin = conf->rl_interval_ns > RL_HELD_MARGIN_NS ? conf->rl_interval_ns
							  : RL_HELD_MARGIN_NS;
	if (margin > tau)
		margin = tau;
	edge = now + tau - margin;
	for (w = 0; w < RR_RL_WAYS; w++)
		if (set.way[w].tag == h)
			return set.way[w].tat > edge;
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
