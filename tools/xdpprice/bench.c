// SPDX-License-Identifier: GPL-2.0
/*
 * xdpprice's set-up and measurement (xdpprice.h). In a network namespace
 * of its own, whose lo has the requests' destination addresses: reqrouter's
 * program loaded by t_xdp_load() (as the BPF tests load it, through
 * rr_xdp_load()), reverse's XDP program in slot 0, the local routes
 * written by the daemon's own localaddr.c, heavy hitters' pool filled by
 * hh.c, an AF_XDP socket on lo in the XSKMAP so that the user tier's
 * redirect succeeds, and the port entries made the way the daemon makes
 * them from a config with nothing set (port_conf_of()).
 *
 * Every run goes through the harness (xdpprice.bpf.c), which puts the
 * request back before it tail-calls the program under test; its own cost
 * is measured alone on each frame and subtracted by the report. After
 * each batch the program's counters must show that every run took the
 * path the configuration stands for: a measurement of the wrong path is
 * an error, not a figure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <xdp/xsk.h>

#include "cache.h"
#include "config.h"
#include "frames.h"
#include "function.h"
#include "hh.h"
#include "invoker.h"
#include "netlink.h"
#include "packet.h"
#include "percpu.h"
#include "price_hdr.h"
#include "reflector.skel.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "rl.h"
#include "shared/cookie.h"
#include "shared/guard.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "validate.h"
#include "shared/steer.h"
#include "slots.h"
#include "testutil.h"
#include "xdp.h"
#include "xdpprice.h"
#include "xdpprice.skel.h"
#include "xdptest.h"

#define FN_NAME "reverse"
#define SLOT 0
#define PORT_NONE 9999 /* a port with no function */
#define SPORT 40000
#define MTU 1500
#define ROOM 4096
#define FRAME_MAX 2048
/* Cache generations: the entries xdpprice stores are of the first; the
 * user tier's rows look with the second and miss, on the generation's
 * compare, which an empty entry fails with the hash's a line earlier,
 * after the same lookup and the same atomic read of its sequence. */
#define GEN_HIT 1
#define GEN_MISS 2
#define UMEM_FRAMES 64
/* price_rows[]'s in-kernel defaults, whose frame the harness runs on
 * alone. */
#define ROW_DEFAULTS 1

/* The reflector's counters (tools/reflector/reflector.bpf.c). */
#define REFL_REFLECTED 0
#define REFL_STATS 2

/* The rows of the table, in its order. */
/* An XDP action by its name in the kernel's UAPI. */
const char *price_verdict_name(uint32_t v)
{
	static const char *const names[] = { "XDP_ABORTED", "XDP_DROP",
					     "XDP_PASS", "XDP_TX",
					     "XDP_REDIRECT" };

	return v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

/* clang-format off */
const struct price_row price_rows[] = {
	{ "reflector", "bare XDP_TX reflector", K_REFLECTOR,
	  XDP_TX, -1,
	  "the reference: parse, reverse, reply, one counter" },
	{ "defaults", "in-kernel tier, defaults", 0,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "reverse answered in XDP, every default on" },
	{ "no_local_dst", "- local-address check", K_NO_LOCAL,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "answer_for = local: no reply forged from an address not ours" },
	{ "local_trie", "+ local check by the trie", K_LOCAL_TRIE,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "what local_tab saves: the LPM trie lookup behind it" },
	{ "no_mac", "- destination MAC check", K_NO_MAC,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "frames for another host's MAC are left to the kernel" },
	{ "no_min_src", "- min_source_port", K_NO_MIN_SRC,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "no reply to a well-known service port (reflection loops)" },
	{ "no_hh", "- heavy hitters", K_NO_HH,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "reqrouterctl top: who calls, 1 request in 100 sampled" },
	{ "no_rl", "- rate limit", K_NO_RL,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "a flood from one prefix dropped before either tier" },
	{ "rl_busy", "+ rate limit, source bursting", K_RL_BUSY,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "its bucket ahead of now: an atomic add on the shared table" },
	{ "rl_spread", "+ rate limit, a new source each", K_SPREAD,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "a spread of 4096 sources: every request judged, no lease" },
	{ "no_csum", "- UDP checksum verify", K_CSUM_ZERO,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "no answer to a corrupted request (IPv4 with no checksum skips it)" },
	{ "no_amp", "- amplification limit", K_NO_AMP,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "max_amplification: a reply at most 3 times the request" },
	{ "allow", "+ allow-list (source in it)", K_ALLOW,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "only listed sources reach it (off by default)" },
	{ "bare", "parse + tier only",
	  K_NO_LOCAL | K_NO_MAC | K_NO_MIN_SRC | K_NO_HH | K_NO_RL |
	  K_CSUM_ZERO | K_NO_AMP,
	  XDP_TX, RR_XDP_TX_FUNCTION,
	  "every guard above off (the IPv6 checksum stays)" },
	{ "user", "user tier (cache miss, redirect)", K_USER,
	  XDP_REDIRECT, RR_XDP_REDIRECT,
	  "a worker answers: cache looked up, worker picked, arrival stamped" },
	{ "user_no_cache", "user tier, cache = no", K_USER | K_NO_CACHE,
	  XDP_REDIRECT, RR_XDP_REDIRECT,
	  "the reply cache's lookup, missed, is the difference" },
	{ "cache_hit", "reply cache hit", K_USER | K_CACHE_HIT,
	  XDP_TX, RR_XDP_TX_CACHE,
	  "a repeated request of a pure function answered in XDP" },
	{ "cookie_forged", "cache = no, forged DNS cookie",
	  K_USER | K_NO_CACHE | K_COOKIE,
	  XDP_REDIRECT, RR_XDP_REDIRECT,
	  "a valid server cookie lifts its source's limit: found, hashed" },
	{ "cookie_unchecked", "the same, validated_for = 0",
	  K_USER | K_NO_CACHE | K_COOKIE | K_NO_VALIDATE,
	  XDP_REDIRECT, RR_XDP_REDIRECT,
	  "found but not hashed: with no cache either, it would buy nothing" },
	{ "no_function", "port with no function", K_NO_FUNCTION,
	  XDP_PASS, RR_XDP_PASS_NO_FUNCTION,
	  "the host's own traffic: parse, one lookup, to the kernel" },
};
/* clang-format on */
const unsigned int price_nrows = sizeof(price_rows) / sizeof(price_rows[0]);
_Static_assert(sizeof(price_rows) / sizeof(price_rows[0]) <= PRICE_MAX_ROWS,
	       "struct price_result has room for PRICE_MAX_ROWS rows");

const struct price_frame price_frames[] = {
	{ "ipv4-64", "UDP/IPv4, 64-byte payload", AF_INET, 64 },
	{ "ipv4-800", "UDP/IPv4, 800-byte payload", AF_INET, 800 },
	{ "ipv6-64", "UDP/IPv6, 64-byte payload", AF_INET6, 64 },
};
const char *const price_helpers[PRICE_NHELPERS] = {
	[PRICE_KTIME] = "bpf_ktime_get_ns",
	[PRICE_COARSE] = "bpf_ktime_get_coarse_ns",
	[PRICE_JIFFIES] = "bpf_jiffies64",
};

const unsigned int price_nframes =
	sizeof(price_frames) / sizeof(price_frames[0]);
_Static_assert(sizeof(price_frames) / sizeof(price_frames[0]) <=
		       PRICE_MAX_FRAMES,
	       "struct price_result has room for PRICE_MAX_FRAMES frames");

/* One request as the harness sends it: the frame, and its headers'
 * length (which the harness's PRICE_HDR_MAX bytes must cover). */
struct job {
	uint8_t buf[FRAME_MAX];
	uint32_t len, hdr;
	uint32_t spread_off, spread_base; /* K_SPREAD: struct price_hdr's */
};

struct price_bench {
	struct rr_config *cfg;
	struct rr_invoker *inv;
	struct rr_localaddr *local;
	struct reflector *refl;
	struct xdpprice *h;
	/* The user tier's socket, on lo's queue 0. */
	void *umem_area;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	/* The port entry of each row, and the frames each (frame, row)
	 * runs on; the harness alone runs on the defaults' frame. */
	struct rr_port_conf conf[PRICE_MAX_ROWS];
	struct job jobs[PRICE_MAX_FRAMES][PRICE_MAX_ROWS];
	uint16_t port; /* the function's */
	int tab_fd;
	bool tab_full; /* local_tab holds the host's addresses */
};

/* --- set-up --------------------------------------------------------- */

/* The addresses the requests go to, on lo: the host's own, which the
 * daemon's localaddr.c then finds among the local routes. */
static int add_addresses(void)
{
	char a4[INET_ADDRSTRLEN], a6[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET, f_dst_ip4, a4, sizeof(a4));
	inet_ntop(AF_INET6, f_dst_ip6, a6, sizeof(a6));
	if (t_sh("ip link set lo up") || t_sh("ip addr add %s/32 dev lo", a4) ||
	    t_sh("ip addr add %s/128 dev lo nodad", a6))
		return -EIO;
	return 0;
}

/*
 * Function @svc's port entry in slot SLOT as the daemon makes it for a
 * config that sets nothing: rr_open_port() (the allow-list and
 * answer_for flags, the limits), choose_tier() (the in-kernel tier or the
 * reply cache) and rr_slot_sync() (steering by load, gathers, heavy
 * hitters, rate limit), src/daemon/slots/slots.c; the features' own parts
 * are their functions, called here. Each call starts the rate limiter's
 * buckets afresh (a new generation, as a reload does), so that no row
 * inherits another's.
 */
static void port_conf_of(struct rr_invoker *inv, const struct rr_service *svc,
			 bool tier_xdp, uint32_t cache_gen,
			 struct rr_port_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->slot = SLOT;
	c->nsocks = inv->nthreads;
	if (inv->cfg->answer_for == RR_ANSWER_LOCAL)
		c->flags |= RR_PORT_LOCAL_DST;
	rr_slot_port_settings(svc, c);
	if (tier_xdp) {
		c->flags |= RR_PORT_XDP;
	} else if (svc->cache && svc->fn->flags & RR_FN_PURE) {
		c->flags |= RR_PORT_CACHE;
		c->cache_gen = cache_gen;
		c->cache_id_bytes = svc->fn->id_bytes;
	}
	if (inv->xdp.load) {
		c->flags |= RR_PORT_LOAD;
		if (svc->steering != RR_STEER_ROUND_ROBIN)
			c->flags |= RR_PORT_LEAST_LOADED;
	}
	if (svc->gather_target)
		c->flags |= RR_PORT_SG_TARGET;
	rr_hh_port_conf(inv, svc, c);
	rr_rl_reset(&inv->xdp, SLOT);
	rr_rl_port_conf(inv, svc, c);
	rr_validate_port_conf(svc, c);
}

/*
 * Row @row's port entry: its tier's defaults, then what it switches.
 * The rate limit stays on with its defaults but for the rate: at a
 * million requests a second from one source, the default 100 000/s would
 * limit the bench's own requests after the first tenth of a second, and
 * every run after that would be a drop. With one request a nanosecond
 * allowed, every bucket look finds the bucket refilled (a plain store),
 * the path of any source under its rate; K_RL_BUSY keeps it ahead of
 * now instead (the atomic add of a source sending faster than it
 * refills), with a burst no run of this tool exhausts.
 */
static void row_conf(struct price_bench *b, const struct rr_service *xdp_svc,
		     const struct rr_service *user_svc, unsigned int row)
{
	uint32_t k = price_rows[row].knobs;
	struct rr_port_conf *c = &b->conf[row];

	if (k & K_USER)
		port_conf_of(b->inv, user_svc, false,
			     k & K_CACHE_HIT ? GEN_HIT : GEN_MISS, c);
	else
		port_conf_of(b->inv, xdp_svc, true, 0, c);
	rr_rl_levels(c, 1000000000U, 0, RR_DEFAULT_V4_PREFIX,
		     RR_DEFAULT_V6_PREFIX);
	if (k & K_RL_BUSY)
		rr_rl_levels(c, 1000000, UINT32_MAX, RR_DEFAULT_V4_PREFIX,
			     RR_DEFAULT_V6_PREFIX);
	if (k & K_NO_LOCAL)
		c->flags &= ~RR_PORT_LOCAL_DST;
	if (k & K_NO_MIN_SRC)
		c->min_src_port = 0;
	if (k & K_NO_HH)
		c->flags &= ~RR_PORT_HH;
	if (k & K_NO_RL)
		c->flags &= ~(RR_PORT_RL | RR_PORT_RL_EXEMPT | RR_PORT_SLIP_TC |
			      RR_PORT_SLIP_WORKERS);
	if (k & K_NO_AMP)
		c->max_amplification = 0;
	if (k & K_ALLOW)
		c->flags |= RR_PORT_ALLOWLIST;
	if (k & K_NO_CACHE)
		c->flags &= ~RR_PORT_CACHE;
	if (k & K_COOKIE)
		c->flags |= RR_PORT_COOKIE;
	if (k & K_NO_VALIDATE)
		c->flags &= ~RR_PORT_VALIDATE;
}

/*
 * A DNS query for example. A of @n bytes (at least 64) whose OPT record
 * carries a COOKIE option with a server cookie made now but under no
 * secret of ours, as a spoofed flood forges it. At 64 bytes the cookie
 * is the OPT's one option, the form read from the query's end; a longer
 * one has a PADDING option after it, so the query is walked to it.
 */
static void forged_query(uint8_t *p, uint32_t n)
{
	static const uint8_t head[] = { 0x12, 0x34, 0x01, 0x00, 0,   1,	  0,
					0,    0,    0,	  0,	1,   7,	  'e',
					'x',  'a',  'm',  'p',	'l', 'e', 0,
					0,    1,    0,	  1 };
	uint32_t pad = n - 64, rdlen = 4 + 24 + pad, now, i;

	memcpy(p, head, sizeof(head));
	i = sizeof(head);
	p[i++] = 0; /* the OPT: root name, type 41, 4096-byte UDP */
	p[i++] = 0;
	p[i++] = 41;
	p[i++] = 0x10;
	p[i++] = 0;
	memset(p + i, 0, 4);
	i += 4;
	p[i++] = (uint8_t)(rdlen >> 8);
	p[i++] = (uint8_t)rdlen;
	p[i++] = 0; /* COOKIE (RFC 7873): client, version 1, time, hash */
	p[i++] = 10;
	p[i++] = 0;
	p[i++] = 24;
	memset(p + i, 0xc1, 8);
	i += 8;
	p[i++] = 1;
	memset(p + i, 0, 3);
	i += 3;
	now = (uint32_t)time(NULL);
	p[i++] = (uint8_t)(now >> 24);
	p[i++] = (uint8_t)(now >> 16);
	p[i++] = (uint8_t)(now >> 8);
	p[i++] = (uint8_t)now;
	memset(p + i, 0x5a, 8);
	i += 8;
	if (pad) {
		p[i++] = 0; /* PADDING (RFC 7830) */
		p[i++] = 12;
		p[i++] = (uint8_t)((pad - 4) >> 8);
		p[i++] = (uint8_t)(pad - 4);
		memset(p + i, 0, pad - 4);
	}
}

/* Secrets for the cookie rows, of which no forged cookie is made. */
static int cookie_keys(struct price_bench *b)
{
	struct rr_cookie_keys k = { .k0 = { 0x0706050403020100ULL },
				    .k1 = { 0x0f0e0d0c0b0a0908ULL },
				    .ready = 1 };
	uint32_t slot = SLOT;

	return bpf_map__update_elem(b->inv->xdp.skel->maps.cookie_keys, &slot,
				    sizeof(slot), &k, sizeof(k), 0)
		       ? -errno
		       : 0;
}

/* A palindrome, so that reverse's reply carries the request's payload
 * and the harness need only put the headers back. */
static void palindrome(uint8_t *p, uint32_t n)
{
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		j = i < n - 1 - i ? i : n - 1 - i;
		p[i] = (uint8_t)('a' + j % 26);
	}
}

/* Frame @f's request for row @row to @port, or why it has none. */
static const char *make_job(struct job *j, unsigned int f, unsigned int row,
			    uint16_t port, uint32_t cache_max_payload)
{
	const struct price_frame *pf = &price_frames[f];
	uint32_t k = price_rows[row].knobs;
	uint8_t payload[FRAME_MAX];
	struct frame_spec s = {
		.family = pf->family,
		.sport = SPORT,
		.dport = k & K_NO_FUNCTION ? PORT_NONE : port,
		.payload = payload,
		.plen = pf->plen,
		.csum = CSUM_VALID,
	};
	struct frame_layout lay;

	if (k & K_CSUM_ZERO) {
		/* Over IPv6 a zero checksum is malformed, not absent. */
		if (pf->family == AF_INET)
			s.csum = CSUM_ZERO;
		else if (k == K_CSUM_ZERO)
			return "IPv6 has no request without a checksum";
	}
	if (k & K_CACHE_HIT && pf->plen > cache_max_payload)
		return "longer than cache_max_payload: never cached";
	if (k & K_COOKIE && pf->plen < 64)
		return "shorter than a query with a cookie";
	if (k & K_COOKIE)
		forged_query(payload, pf->plen);
	else
		palindrome(payload, pf->plen);
	j->len = build_frame(j->buf, sizeof(j->buf), &s, &lay);
	j->hdr = lay.payload_off;
	/* 10.0.0.0 up (IPv4), 2000:: up (IPv6): unicast whatever the run. */
	j->spread_off = 0;
	if (k & K_SPREAD) {
		j->spread_off = lay.l3_off + (pf->family == AF_INET ? 12 : 8);
		j->spread_base = pf->family == AF_INET ? 0x0a00 : 0x2000;
	}
	return j->len ? NULL : "does not fit";
}

/*
 * A worker's reply to @j stored in the reply cache under GEN_HIT, as a
 * worker stores it (src/lib/packet.c's rr_serve_keep(), then
 * features/cache.c's rr_cache_insert()).
 */
static int cache_reply(struct price_bench *b, const struct job *j,
		       const struct rr_port_conf *c)
{
	const struct rr_function *fn = rr_registry_find(FN_NAME);
	static struct rr_keep keep = { .max = RR_CACHE_MAX_PAYLOAD };
	struct rr_xdp *x = &b->inv->xdp;
	struct rr_request ctx = { 0 };
	uint8_t reply[ROOM];
	int ret;

	memcpy(reply, j->buf, j->len);
	rr_fn_request_bind(&ctx, NULL, 0, NULL);
	ret = rr_serve_keep(reply, j->len, ROOM, MTU, c->max_amplification, fn,
			    &ctx, &keep, NULL);
	if (ret < 0 || keep.len == UINT32_MAX)
		return -EINVAL;
	if (rr_cache_insert(rr_xdp_cache_of(x, 0, 0), x->cache_queue_entries,
			    b->port, GEN_HIT, 0, keep.req, keep.len,
			    reply + keep.reply_off,
			    (uint32_t)ret - keep.reply_off, fn->id_bytes,
			    0) == RR_CACHE_SKIPPED)
		return -ENOSPC;
	return 0;
}

/* An AF_XDP socket bound to lo's queue 0 in copy mode, put in the
 * XSKMAP for every worker of slot SLOT on queue 0: with it the user
 * tier's redirect succeeds (XDP_REDIRECT) instead of falling back to
 * XDP_PASS. Nothing is ever received on it: a test run does not
 * redirect. */
static int make_socket(struct price_bench *b)
{
	const size_t size = (size_t)UMEM_FRAMES * XSK_UMEM__DEFAULT_FRAME_SIZE;
	struct xsk_socket_config scfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	uint32_t t;
	int ret;

	b->umem_area = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->umem_area == MAP_FAILED) {
		b->umem_area = NULL;
		return -errno;
	}
	ret = xsk_umem__create(&b->umem, b->umem_area, size, &b->fill, &b->comp,
			       NULL);
	if (ret)
		return ret;
	ret = xsk_socket__create(&b->xsk, "lo", 0, b->umem, &b->rx, &b->tx,
				 &scfg);
	if (ret)
		return ret;
	for (t = 0; t < b->inv->nthreads; t++) {
		ret = rr_xdp_set_socket(&b->inv->xdp, 0, t, SLOT,
					xsk_socket__fd(b->xsk));
		if (ret)
			return ret;
	}
	return 0;
}

/* The allow-list the K_ALLOW row turns on: the requests' source /24
 * and /64. */
static int allow_sources(struct price_bench *b)
{
	struct rr_cidr c[2] = { { .family = AF_INET, .len = 24 },
				{ .family = AF_INET6, .len = 64 } };
	unsigned int i;
	int ret;

	memcpy(c[0].addr, f_src_ip4, 3);
	memcpy(c[1].addr, f_src_ip6, 8);
	for (i = 0; i < 2; i++) {
		ret = rr_xdp_allow(&b->inv->xdp, SLOT, &c[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Frees what price_setup() made, in reverse. */
void price_teardown(struct price_bench *b)
{
	if (!b)
		return;
	xdpprice__destroy(b->h);
	reflector__destroy(b->refl);
	xsk_socket__delete(b->xsk);
	xsk_umem__delete(b->umem);
	if (b->umem_area)
		munmap(b->umem_area,
		       (size_t)UMEM_FRAMES * XSK_UMEM__DEFAULT_FRAME_SIZE);
	rr_localaddr_close(b->local);
	if (b->inv) {
		rr_hh_close(b->inv);
		rr_xdp_destroy(&b->inv->xdp);
		free(b->inv);
	}
	rr_config_destroy(b->cfg);
	free(b);
}

static int fail(const char *what, int ret)
{
	fprintf(stderr, "xdpprice: %s: %s\n", what,
		strerror(ret < 0 ? -ret : ret));
	return 1;
}

/* Each program's size and the verifier's statistics, main one first. */
static int read_progs(struct price_bench *b, const struct price_opts *o,
		      struct price_result *r)
{
	const struct rr_xdp_impl *impl = rr_registry_xdp(FN_NAME);
	struct rr_xdp *x = &b->inv->xdp;
	const void *elf;
	size_t size;

	elf = reqrouter__elf_bytes(&size);
	price_progs_add(r, "reqrouter", x->skel->obj, elf, size, false,
			o->verifier);
	elf = impl->elf_bytes(&size);
	price_progs_add(r, FN_NAME, x->fn_objs[SLOT], elf, size, false,
			o->verifier);
	if (x->fn_objs_cpumap[SLOT])
		price_progs_add(r, FN_NAME " (cpumap)", x->fn_objs_cpumap[SLOT],
				elf, size, true, o->verifier);
	elf = reflector__elf_bytes(&size);
	price_progs_add(r, "reflector", b->refl->obj, elf, size, false,
			o->verifier);
	elf = xdpprice__elf_bytes(&size);
	price_progs_add(r, "xdpprice", b->h->obj, elf, size, false,
			o->verifier);
	return 0;
}

int price_setup(struct price_bench **out, const struct price_opts *o,
		struct price_result *r)
{
	const struct rr_xdp_impl *impl = rr_registry_xdp(FN_NAME);
	struct rr_service *svc, user_svc;
	struct price_bench *b;
	char err[RR_ERRLEN];
	int ret, fd4, fd6, fd_tab;
	unsigned int f, row;
	uint32_t t;

	*out = NULL;
	if (strcmp(price_rows[ROW_DEFAULTS].id, "defaults")) {
		fprintf(stderr, "xdpprice: ROW_DEFAULTS is not the defaults\n");
		return 1;
	}
	if (!t_xdp_can_run())
		return 77;
	if (!impl) {
		fprintf(stderr, "xdpprice: %s has no XDP program here\n",
			FN_NAME);
		return 1;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return fail("memory", -ENOMEM);
	*out = b;
	/* lo's addresses and socket are this namespace's alone. */
	if (unshare(CLONE_NEWNET))
		return fail("unshare(CLONE_NEWNET)", -errno);
	ret = add_addresses();
	if (ret)
		return fail("cannot give lo the requests' addresses", ret);
	b->cfg = rr_config_read(NULL, err, sizeof(err));
	if (!b->cfg) {
		fprintf(stderr, "xdpprice: the default config: %s\n", err);
		return 1;
	}
	svc = rr_config_service_named(b->cfg, FN_NAME);
	if (!svc)
		return fail("no service for " FN_NAME, -ENOENT);
	b->port = svc->port;
	user_svc = *svc;
	user_svc.tier = RR_TIER_USER;

	b->inv = calloc(1, sizeof(*b->inv));
	if (!b->inv)
		return fail("memory", -ENOMEM);
	b->inv->cfg = b->cfg;
	b->inv->nqueues = 1;
	b->inv->nthreads = b->cfg->threads;
	/* A NIC, or a veth whose peer runs an XDP program: XDP_TX frames
	 * leave, so the in-kernel tier and the cache are used. */
	b->inv->xdp_tx_ok = true;
	ret = t_xdp_load(&b->inv->xdp, f_dst_mac, MTU);
	if (ret)
		return ret;
	ret = rr_xdp_map_load(&b->inv->xdp, 1);
	if (!ret)
		ret = rr_xdp_map_cache(&b->inv->xdp);
	if (ret)
		return fail("cannot map the program's maps", ret);
	/* Every worker idle whatever the program counts as sent to it:
	 * done far ahead of sent is no backlog (rr_backlog()). */
	for (t = 0; t < RR_MAX_THREADS; t++)
		b->inv->xdp.load[0].w[t].done = 1ULL << 62;
	ret = rr_hh_open(b->inv);
	if (ret)
		return fail("heavy hitters", ret);
	rr_xdp_local_maps(&b->inv->xdp, &fd4, &fd6, &fd_tab);
	ret = rr_localaddr_open(&b->local, fd4, fd6);
	if (!ret)
		ret = rr_localaddr_set_table(b->local, fd_tab);
	if (ret)
		return fail("the local routes", ret);
	b->tab_fd = fd_tab;
	b->tab_full = true;
	ret = rr_xdp_load_function(&b->inv->xdp, SLOT, impl, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "xdpprice: cannot load %s's XDP program: %s\n",
			FN_NAME, err);
		return 1;
	}
	ret = allow_sources(b);
	if (!ret)
		ret = rr_rl_open(b->inv, SLOT, svc);
	if (ret)
		return fail("the allow-list", ret);
	ret = make_socket(b);
	if (ret)
		return fail("an AF_XDP socket on lo", ret);
	ret = cookie_keys(b);
	if (ret)
		return fail("cookie_keys", ret);

	b->refl = reflector__open_and_load();
	if (!b->refl)
		return fail("cannot load the reflector", -errno);
	b->h = xdpprice__open_and_load();
	if (!b->h)
		return fail("cannot load the harness", -errno);

	for (row = 0; row < price_nrows; row++)
		row_conf(b, svc, &user_svc, row);
	for (f = 0; f < price_nframes; f++) {
		for (row = 0; row < price_nrows; row++) {
			struct price_cell *c = &r->cells[f][row];

			c->why_na = make_job(&b->jobs[f][row], f, row, b->port,
					     svc->cache_max_payload);
			c->na = c->why_na != NULL;
			if (!c->na && price_rows[row].knobs & K_CACHE_HIT) {
				ret = cache_reply(b, &b->jobs[f][row],
						  &b->conf[row]);
				if (ret)
					return fail("cannot cache a reply",
						    ret);
			}
		}
	}
	return read_progs(b, o, r);
}

/* --- measurement ---------------------------------------------------- */

/* The xdp_stats of queue 0, summed over the CPUs. */
static int rr_stats(struct price_bench *b, uint64_t *st)
{
	return rr_xdp_read_stats(&b->inv->xdp, st, 1);
}

static int refl_stats(struct price_bench *b, uint64_t *st)
{
	return rr_percpu_sum(bpf_map__fd(b->refl->maps.stats), 0, REFL_STATS,
			     st);
}

/* local_tab full (the daemon's state) or empty (the tries answer). */
static int set_table(struct price_bench *b, bool full)
{
	static const struct rr_local_ent empty;
	uint32_t slot;

	if (b->tab_full == full)
		return 0;
	if (full) {
		if (rr_localaddr_set_table(b->local, b->tab_fd))
			return -EIO;
	} else {
		for (slot = 0; slot < RR_LOCAL_TAB; slot++)
			if (bpf_map_update_elem(b->tab_fd, &slot, &empty, 0))
				return -errno;
	}
	b->tab_full = full;
	return 0;
}

/* What the harness runs next: program @prog_fd on @j. */
static int aim(struct price_bench *b, const struct job *j, int prog_fd)
{
	struct price_hdr hdr;
	uint32_t zero = 0;

	if (j->len < sizeof(hdr.words) || j->hdr > sizeof(hdr.words))
		return -E2BIG;
	memcpy(hdr.words, j->buf, sizeof(hdr.words));
	hdr.spread_off = j->spread_off;
	hdr.spread_base = j->spread_base;
	if (bpf_map_update_elem(bpf_map__fd(b->h->maps.price_hdr), &zero, &hdr,
				0) ||
	    bpf_map_update_elem(bpf_map__fd(b->h->maps.price_target), &zero,
				&prog_fd, 0))
		return -errno;
	return 0;
}

/* @repeat runs of the harness on @j: ns per run, and the last verdict. */
static int run(struct price_bench *b, const struct job *j, uint32_t repeat,
	       uint32_t *ns, uint32_t *verdict)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = j->buf,
		    .data_size_in = j->len, .repeat = repeat);

	if (bpf_prog_test_run_opts(bpf_program__fd(b->h->progs.price_harness),
				   &opts))
		return -errno;
	*ns = opts.duration;
	*verdict = opts.retval;
	return 0;
}

/* Whether every one of @runs moved counter @want, and nothing else did;
 * says what moved if not. */
static bool one_path(const uint64_t *a, const uint64_t *z, uint32_t n, int want,
		     uint32_t runs, const char *what)
{
	bool good = true;
	uint32_t k;

	for (k = 0; k < n; k++) {
		uint64_t d = z[k] - a[k], expect = (int)k == want ? runs : 0;

		if (d != expect) {
			fprintf(stderr,
				"xdpprice: %s: counter %u moved by %lu in %u runs (want %lu)\n",
				what, k, (unsigned long)d, runs,
				(unsigned long)expect);
			good = false;
		}
	}
	return good;
}

/* @repeat runs of @prog_fd through the harness on @j into *@ns,
 * checked: the verdict, and with @stat >= 0 (reqrouter's counter) or
 * @refl_stat >= 0 (the reflector's) that every run moved that counter
 * and nothing else. 0, or 1 after saying what went wrong. */
static int timed(struct price_bench *b, const struct job *j, int prog_fd,
		 uint32_t repeat, uint32_t want, int stat, int refl_stat,
		 const char *what, uint32_t *ns)
{
	uint64_t a[RR_XDP_STAT_MAX], z[RR_XDP_STAT_MAX];
	uint32_t verdict = 0, n = 0;
	int ret;

	ret = aim(b, j, prog_fd);
	if (!ret && stat >= 0) {
		n = RR_XDP_STAT_MAX;
		ret = rr_stats(b, a);
	} else if (!ret && refl_stat >= 0) {
		n = REFL_STATS;
		ret = refl_stats(b, a);
	}
	if (!ret)
		ret = run(b, j, repeat, ns, &verdict);
	if (!ret && stat >= 0)
		ret = rr_stats(b, z);
	else if (!ret && refl_stat >= 0)
		ret = refl_stats(b, z);
	if (ret)
		return fail(what, ret);
	if (verdict != want) {
		fprintf(stderr, "xdpprice: %s: verdict %s, want %s\n", what,
			price_verdict_name(verdict), price_verdict_name(want));
		return 1;
	}
	if (n && !one_path(a, z, n, stat >= 0 ? stat : refl_stat, repeat, what))
		return 1;
	return 0;
}

/* Frame @f under row @row: its port entry, link and local_tab as the
 * row says, then timed(). */
static int measure(struct price_bench *b, unsigned int f, unsigned int row,
		   uint32_t repeat, uint32_t *ns)
{
	static const uint8_t no_mac[6];
	const struct price_row *pr = &price_rows[row];
	struct rr_xdp *x = &b->inv->xdp;
	uint32_t k = pr->knobs;
	char what[96];
	int ret;

	snprintf(what, sizeof(what), "%s, %s", price_frames[f].id, pr->id);
	if (k & K_REFLECTOR)
		return timed(b, &b->jobs[f][row],
			     bpf_program__fd(b->refl->progs.reflect), repeat,
			     pr->verdict, -1, REFL_REFLECTED, what, ns);
	ret = rr_xdp_set_port(x, b->port, &b->conf[row]);
	if (!ret)
		ret = set_table(b, !(k & K_LOCAL_TRIE));
	if (ret)
		return fail(what, ret);
	/* link_mac 0 turns the check off (lib/link.h). */
	rr_xdp_set_link(x, k & K_NO_MAC ? no_mac : f_dst_mac, MTU);
	return timed(b, &b->jobs[f][row],
		     bpf_program__fd(x->skel->progs.reqrouter_xdp), repeat,
		     pr->verdict, pr->stat, -1, what, ns);
}

/* One of the harness's own targets on frame @f's defaults request. */
static int measure_own(struct price_bench *b, unsigned int f,
		       struct bpf_program *prog, uint32_t repeat, uint32_t *ns)
{
	char what[96];

	snprintf(what, sizeof(what), "%s, %s", price_frames[f].id,
		 bpf_program__name(prog));
	return timed(b, &b->jobs[f][ROW_DEFAULTS], bpf_program__fd(prog),
		     repeat, XDP_TX, -1, -1, what, ns);
}

int price_measure(struct price_bench *b, const struct price_opts *o,
		  struct price_result *r)
{
	struct bpf_program *helpers[PRICE_NHELPERS] = {
		[PRICE_KTIME] = b->h->progs.price_ktime,
		[PRICE_COARSE] = b->h->progs.price_coarse,
		[PRICE_JIFFIES] = b->h->progs.price_jiffies,
	};
	uint32_t warm = o->repeat / 10 ? o->repeat / 10 : 1, repeat, *ns;
	uint32_t scratch, i, k;
	unsigned int f, row;
	bool first;
	int ret;

	/* Batch 0 is a short warm-up of each, checked like the rest:
	 * caches, branch predictors, the rate limiter's buckets claimed.
	 * Then the batches, every configuration in each. */
	for (i = 0; i <= o->batches; i++) {
		repeat = i ? o->repeat : warm;
		first = true;
		for (f = 0; f < price_nframes; f++) {
			if (!(o->frames & 1U << f))
				continue;
			ns = i ? &r->harness[f].ns[i - 1] : &scratch;
			ret = measure_own(b, f, b->h->progs.price_nop, repeat,
					  ns);
			for (k = 0; !ret && first && k < PRICE_NHELPERS; k++) {
				r->helpers_frame = f;
				ns = i ? &r->helpers[k].ns[i - 1] : &scratch;
				ret = measure_own(b, f, helpers[k], repeat, ns);
			}
			first = false;
			for (row = 0; !ret && row < price_nrows; row++) {
				struct price_cell *c = &r->cells[f][row];

				if (c->na || !(o->rows & 1U << row))
					continue;
				ns = i ? &c->ns[i - 1] : &scratch;
				ret = measure(b, f, row, repeat, ns);
			}
			if (ret)
				return ret;
		}
	}
	return 0;
}
