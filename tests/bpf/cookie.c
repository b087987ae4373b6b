// SPDX-License-Identifier: GPL-2.0
/*
 * DNS Cookies in XDP (kern/lib/cookie.h, cookie_check) on crafted queries
 * run through the XDP program with bpf_prog_test_run_opts(), the port
 * limited to one reply a second per prefix: a query that goes on is
 * passed (the port has no socket), a limited one dropped.
 * - A server cookie valid for its source (made by the dns function's own
 *   code, functions/dns/dns_cookie.c, under the secret written into
 *   cookie_keys as reqrouter writes it) validates it (kern/lib/validate.h):
 *   not held to the prefix's limit but to the validated budget (1000 a
 *   second here), over IPv4 and IPv6, counted as cookie_valid and
 *   validated. Its later queries without a cookie are let by as
 *   validated too where the prefixes' budgets would refuse them (the
 *   first is within them, and needs no validation).
 * - Over a validated budget of 1 a second, a valid cookie is limited
 *   (validated_limited), in a dry run let by and counted as would-limit,
 *   and an exempt one never; with validated_for = 0 (no
 *   RR_PORT_VALIDATE) it meets the prefix's limit as any query; an
 *   address user space marks in validate_table (as the TCP loop does at
 *   accept), IPv4 or IPv6, is validated.
 * - Forged, made for another address, expired, ahead by more than 5
 *   minutes, under another secret: limited as any query, not counted.
 * - The previous secret counts while it is good, not after.
 * - With the reply cache on the port, a reply cached without its query's
 *   cookie (as a worker caches dns's) answers another address's query,
 *   IPv4 or IPv6, with that address's valid cookie put back, with or
 *   without a rate limit; a query with any other
 *   COOKIE option (too old to echo, forged, a client cookie alone, not at
 *   the query's end) is counted as cookie_bypass and never looked up.
 * Needs root; exits 77 (skip) otherwise.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "cache.h"
#include "dns_cookie.h"
#include "frames.h"
#include "reqrouter.skel.h"
#include "rl.h"
#include "shared/cache.h"
#include "shared/cookie.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "clock.h"
#include "testutil.h"
#include "validate.h"
#include "xdp.h"
#include "xdptest.h"

#define PORT 5353
#define SLOT 2
#define CC "\x24\x64\xc4\xab\xcf\x10\xc9\x57"

static struct rr_xdp x;
static int prog_fd;
static const uint8_t secret[16] = { 1, 2,  3,  4,  5,  6,  7,  8,
				    9, 10, 11, 12, 13, 14, 15, 16 },
		     other[16] = { 16, 15, 14 };

struct frame {
	uint8_t buf[256];
	uint32_t len;
	struct frame_layout lay;
};

/* A query for example.com. A from @saddr with EDNS and a COOKIE option:
 * the client cookie and, unless @alone, a server cookie made under
 * @key at @made, for @for_addr. */
/* make() puts an empty PADDING option before the COOKIE when set: the
 * cookie is then found by walking the query, not from its end. */
static int pad_first;

static void make(struct frame *f, int family, const uint8_t *saddr,
		 const uint8_t *key, uint32_t made, const uint8_t *for_addr,
		 int alone)
{
	static const uint8_t q[] = "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00"
				   "\x00\x01\x07"
				   "example"
				   "\x03"
				   "com"
				   "\x00\x00\x01\x00\x01"
				   "\x00\x00\x29\x04\xd0\x00\x00\x00\x00";
	struct dns_cookie_keys k = { 0 };
	uint8_t p[128];
	size_t n = sizeof(q) - 1, len = alone ? 8 : 24;
	struct frame_spec s = { .family = family,
				.sport = 40000,
				.dport = PORT,
				.saddr = saddr,
				.payload = p };

	memcpy(p, q, n);
	p[n++] = 0;
	p[n++] = (uint8_t)(4 + len + (pad_first ? 4 : 0));
	if (pad_first) {
		p[n++] = 0;
		p[n++] = 12; /* PADDING, RFC 7830 */
		p[n++] = 0;
		p[n++] = 0;
	}
	p[n++] = 0;
	p[n++] = 10;
	p[n++] = 0;
	p[n++] = (uint8_t)len;
	memcpy(p + n, CC, 8);
	if (!alone) {
		dns_cookie_key(key, &k.k0[0], &k.k1[0]);
		dns_cookie_make(&k, p + n, for_addr, family == AF_INET6, made,
				p + n + 8);
	}
	s.plen = (uint32_t)(n + len);
	f->len = build_frame(f->buf, sizeof(f->buf), &s, &f->lay);
}

/* Runs @f @n times; the verdicts XDP_PASS and XDP_DROP counted. */
static void run(const struct frame *f, uint32_t n, uint32_t *pass,
		uint32_t *drop)
{
	uint32_t i;
	int v;

	for (i = 0; i < n; i++) {
		v = t_xdp_run1(prog_fd, f->buf, f->len);
		if (v < 0)
			t_fail("test run: %s", strerror(-v));
		else if (v == XDP_PASS)
			(*pass)++;
		else if (v == XDP_DROP)
			(*drop)++;
	}
}

/* The port: @flags, and validated sources (RR_PORT_VALIDATE) held to
 * @validated replies a second (0: none are validated). */
static void set_port_validated(uint32_t flags, uint32_t validated)
{
	struct rr_port_conf conf = { .slot = SLOT,
				     .nsocks = 1,
				     .flags = RR_PORT_COOKIE | flags };

	/* 1 a second per /24 (and its levels), a burst of 1. */
	rr_rl_levels(&conf, 1, 1, 24, 64);
	if (validated) {
		conf.flags |= RR_PORT_VALIDATE;
		conf.validated_for_s = 3600;
		conf.validated_interval_ns = 1000000000U / validated;
	}
	if (rr_xdp_set_port(&x, PORT, &conf))
		t_fail("cannot set the port entry");
}

static void set_port(uint32_t flags)
{
	set_port_validated(flags, 1000);
}

/* cookie_keys[SLOT]: @cur, and @prev good until @until (0: none). */
static void set_keys(const uint8_t *cur, const uint8_t *prev, uint64_t until)
{
	struct rr_cookie_keys k = { .ready = 1 };
	struct timespec tai, real;
	uint32_t key = SLOT;

	k.k0[0] = rr_le64(cur);
	k.k1[0] = rr_le64(cur + 8);
	if (prev) {
		k.k0[1] = rr_le64(prev);
		k.k1[1] = rr_le64(prev + 8);
		k.prev_until = until;
	}
	clock_gettime(CLOCK_TAI, &tai);
	clock_gettime(CLOCK_REALTIME, &real);
	k.tai_off = tai.tv_sec - real.tv_sec;
	if (bpf_map__update_elem(x.skel->maps.cookie_keys, &key, sizeof(key),
				 &k, sizeof(k), 0))
		t_fail("cannot write cookie_keys");
}

static uint64_t count(int s)
{
	uint64_t st[RR_FN_STAT_MAX];

	if (rr_xdp_read_fn_stats(&x, 0, SLOT, st)) {
		t_fail("cannot read the counters");
		return 0;
	}
	return st[s];
}

/* @n queries of @f: all passed (@through) or all but the first dropped,
 * and cookie_valid moved by @n or not at all. */
static void expect(const char *what, const struct frame *f, int through)
{
	uint32_t pass = 0, drop = 0, n = 5;
	uint64_t was = count(RR_FN_COOKIE_VALID);

	t_at("%s", what);
	run(f, n, &pass, &drop);
	if (through ? pass != n : pass > 1 || drop < n - 1)
		t_fail("%u passed, %u dropped of %u (want %s)", pass, drop, n,
		       through ? "all passed" : "the limit's");
	if (count(RR_FN_COOKIE_VALID) - was != (through ? n : 0))
		t_fail("cookie_valid moved by %lu",
		       (unsigned long)(count(RR_FN_COOKIE_VALID) - was));
}

static void rate_limit(void)
{
	static const uint8_t a[4] = { 192, 0, 2, 1 }, b[4] = { 192, 0, 3, 1 },
			     c[4] = { 192, 0, 4, 1 }, d[4] = { 192, 0, 5, 1 },
			     e[4] = { 192, 0, 6, 1 }, g[4] = { 192, 0, 7, 1 },
			     h[4] = { 192, 0, 8, 1 },
			     v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 },
			     v6b[16] = { 0x20, 0x01, 0x0d, 0xb9, [15] = 1 },
			     v6c[16] = { 0x20, 0x01, 0x0d, 0xba, [15] = 1 };
	uint32_t now = (uint32_t)time(NULL);
	struct frame f;

	set_port(RR_PORT_RL);
	set_keys(secret, NULL, 0);
	make(&f, AF_INET, a, secret, now, a, 0);
	expect("a valid cookie is not limited", &f, 1);
	make(&f, AF_INET6, v6, secret, now - 3000, v6, 0);
	expect("nor over IPv6, 50 minutes old", &f, 1);
	make(&f, AF_INET, b, secret, now, a, 0);
	expect("another address's is", &f, 0);
	make(&f, AF_INET, c, other, now, c, 0);
	expect("another secret's is", &f, 0);
	make(&f, AF_INET, d, secret, now - 3700, d, 0);
	expect("an expired one is", &f, 0);
	make(&f, AF_INET, e, secret, now + 400, e, 0);
	expect("one 400 s ahead is", &f, 0);
	make(&f, AF_INET, g, secret, now, g, 1);
	expect("a client cookie alone is", &f, 0);
	make(&f, AF_INET, h, secret, now, h, 0);
	f.buf[f.len - 1] ^= 1; /* the hash's last byte */
	expect("a forged one is", &f, 0);

	set_keys(other, secret, now + 100);
	make(&f, AF_INET6, v6b, secret, now, v6b, 0);
	expect("the previous secret's, while it is good, is not", &f, 1);
	set_keys(other, secret, now - 1);
	make(&f, AF_INET6, v6c, secret, now, v6c, 0);
	expect("after, it is", &f, 0);
}

/* @n queries of @f: @want passed, and counter @stat moved by @moved. */
static void expect_n(const char *what, const struct frame *f, uint32_t n,
		     uint32_t want, int stat, uint64_t moved)
{
	uint32_t pass = 0, drop = 0;
	uint64_t was = count(stat);

	t_at("%s", what);
	run(f, n, &pass, &drop);
	if (pass != want)
		t_fail("%u passed, %u dropped of %u (want %u passed)", pass,
		       drop, n, want);
	if (count(stat) - was != moved)
		t_fail("counter %d moved by %lu, not %lu", stat,
		       (unsigned long)(count(stat) - was),
		       (unsigned long)moved);
}

static void validated(void)
{
	static const uint8_t a[4] = { 192, 0, 10, 1 }, b[4] = { 192, 0, 11, 1 },
			     c[4] = { 192, 0, 12, 1 }, d[4] = { 192, 0, 32, 1 },
			     e[4] = { 192, 0, 14, 1 }, g[4] = { 192, 0, 15, 1 },
			     v6[16] = { 0x20, 0x01, 0x0d, 0xbb, [15] = 1 };
	const struct rr_cidr ex = { .family = AF_INET,
				    .addr = { 192, 0, 15, 1 },
				    .len = 32 };
	uint32_t now = (uint32_t)time(NULL);
	struct frame f;

	set_keys(secret, NULL, 0);
	set_port(RR_PORT_RL);
	make(&f, AF_INET, a, secret, now, a, 0);
	expect_n("a valid cookie validates its source", &f, 5, 5,
		 RR_FN_VALIDATED, 5);
	make(&f, AF_INET, a, secret, now, a, 1);
	/* The first within the prefixes' budgets: no need of it. */
	expect_n("whose queries without one are then validated", &f, 5, 5,
		 RR_FN_VALIDATED, 4);
	make(&f, AF_INET, b, secret, now, b, 1);
	expect_n("a neighbour's are not", &f, 5, 1, RR_FN_VALIDATED, 0);

	set_port_validated(RR_PORT_RL, 1);
	make(&f, AF_INET, c, secret, now, c, 0);
	expect_n("over its budget, a valid cookie is limited", &f, 5, 1,
		 RR_FN_VALIDATED_LIMITED, 4);

	set_port_validated(RR_PORT_RL, 0);
	make(&f, AF_INET, d, secret, now, d, 0);
	expect_n("with validated_for = 0, it meets the prefix's limit", &f, 5,
		 1, RR_FN_VALIDATED, 0);

	set_port_validated(RR_PORT_RL | RR_PORT_RL_LOG, 1);
	make(&f, AF_INET, e, secret, now, e, 0);
	expect_n("a dry run over the budget: let by, counted as would-limit",
		 &f, 5, 5, RR_FN_RL_WOULD_LIMIT, 4);

	set_port_validated(RR_PORT_RL | RR_PORT_RL_EXEMPT, 1);
	if (rr_rl_exempt(&x, SLOT, &ex, true))
		t_fail("cannot write the exemption");
	make(&f, AF_INET, g, secret, now, g, 0);
	expect_n("an exempt source, validated: never limited, not counted", &f,
		 5, 5, RR_FN_VALIDATED, 0);
	rr_rl_exempt(&x, SLOT, &ex, false);

	set_port(RR_PORT_RL);
	if (rr_xdp_map_validate(&x)) {
		t_fail("cannot map validate_table");
		return;
	}
	make(&f, AF_INET, b, secret, now, b, 1);
	rr_validate_mark(x.validate, x.hh_seed, AF_INET, b, rr_now_ns());
	expect_n("an address user space marks is validated", &f, 5, 5,
		 RR_FN_VALIDATED, 5);
	make(&f, AF_INET6, v6, secret, now, v6, 1);
	rr_validate_mark(x.validate, x.hh_seed, AF_INET6, v6, rr_now_ns());
	expect_n("an IPv6 one too", &f, 5, 5, RR_FN_VALIDATED, 4);
}

/* A cookie after another option is found by walking the query: valid
 * if made for its source, forged if not. */
static void padded(void)
{
	static const uint8_t a[4] = { 192, 0, 48, 1 }, b[4] = { 192, 0, 64, 1 };
	uint32_t now = (uint32_t)time(NULL);
	struct frame f;

	set_keys(secret, NULL, 0);
	set_port(RR_PORT_RL);
	pad_first = 1;
	make(&f, AF_INET, a, secret, now, a, 0);
	expect_n("a valid cookie after a PADDING option", &f, 5, 5,
		 RR_FN_COOKIE_VALID, 5);
	make(&f, AF_INET, b, other, now, b, 0);
	expect_n("a forged one after it", &f, 5, 1, RR_FN_COOKIE_VALID, 0);
	pad_first = 0;
}

/* One run of @f, its reply (if any) in @out: the verdict. */
static int run_out(const struct frame *f, uint8_t *out, uint32_t *out_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->buf,
		    .data_size_in = f->len, .data_out = out,
		    .data_size_out = *out_len, .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &o)) {
		t_fail("test run: %s", strerror(errno));
		return -1;
	}
	*out_len = o.data_size_out;
	return (int)o.retval;
}

/*
 * The reply cache and cookies: a reply to a query whose valid cookie
 * ends it, cached as the worker caches it (rr_cache_insert() with the
 * cookie left out), answers the same query from another address with
 * that address's own valid cookie, put back in the reply's last bytes;
 * every other cookie goes by the cache to a worker (cookie_bypass).
 */
static void cache(void)
{
	static const uint8_t a[4] = { 192, 0, 9, 1 }, b[4] = { 192, 0, 9, 2 },
			     c[4] = { 192, 0, 9, 3 },
			     v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 9, [15] = 2 };
	uint32_t now = (uint32_t)time(NULL), pass = 0, drop = 0, n, off;
	uint64_t bypass, miss, hit;
	uint8_t reply[256], out[256];
	struct rr_port_conf conf = { .slot = SLOT,
				     .nsocks = 1,
				     .flags = RR_PORT_COOKIE | RR_PORT_RL |
					      RR_PORT_VALIDATE | RR_PORT_CACHE,
				     .cache_gen = 1,
				     .cache_id_bytes = 2,
				     .cache_max_payload = RR_CACHE_MAX_PAYLOAD,
				     .validated_for_s = 3600,
				     .validated_interval_ns = 1000 };
	struct frame f, g;

	t_at("the reply cache and cookies");
	rr_rl_levels(&conf, 1000000, 1000, 24, 64);
	if (rr_xdp_set_port(&x, PORT, &conf) || rr_xdp_map_cache(&x)) {
		t_fail("cannot set the port or map the cache");
		return;
	}
	set_keys(secret, NULL, 0);
	/* The worker's answer to a's query: the question echoed, then the
	 * OPT with a's cookie, as dns writes it. */
	make(&f, AF_INET, a, secret, now, a, 0);
	off = f.lay.payload_off;
	n = f.len - off;
	memcpy(reply, f.buf + off, n);
	reply[2] |= 0x80; /* QR */
	if (rr_cache_insert(x.cache, x.cache_queue_entries, PORT, 1, 0,
			    f.buf + off, n, reply, n, 2,
			    1) == RR_CACHE_SKIPPED) {
		t_fail("cannot cache a reply");
		return;
	}
	reply[n - 1] ^= 1;
	if (rr_cache_insert(x.cache, x.cache_queue_entries, PORT, 1, 0,
			    f.buf + off, n, reply, n, 2, 1) != RR_CACHE_SKIPPED)
		t_fail("a reply that does not end with the query's cookie was cached");
	reply[n - 1] ^= 1;
	if (rr_cache_insert(x.cache, x.cache_queue_entries, PORT, 1, 0,
			    f.buf + off, n, reply, n, 2,
			    1) == RR_CACHE_SKIPPED) {
		t_fail("cannot cache the reply again");
		return;
	}

	bypass = count(RR_FN_COOKIE_BYPASS);
	hit = count(RR_FN_CACHE_HIT);
	make(&g, AF_INET, b, secret, now - 600, b, 0);
	n = sizeof(out);
	if (run_out(&g, out, &n) != XDP_TX)
		t_fail("another address's valid cookie: not answered in XDP");
	else if (n != g.len || memcmp(out + off, reply, 2 + 1) ||
		 memcmp(out + off + 3, reply + 3, g.len - off - 3 - 24) ||
		 memcmp(out + g.len - 24, g.buf + g.len - 24, 24))
		t_fail("the reply is not the cached one with b's cookie");
	make(&g, AF_INET6, v6, secret, now, v6, 0);
	n = sizeof(out);
	if (run_out(&g, out, &n) != XDP_TX)
		t_fail("over IPv6: not answered in XDP");
	else if (n != g.len || memcmp(out + g.len - 24, g.buf + g.len - 24, 24))
		t_fail("over IPv6: the reply does not carry its cookie");
	/* No rate limit, so nothing to validate: the cache alone is worth
	 * the check. */
	conf.flags = RR_PORT_COOKIE | RR_PORT_CACHE;
	if (rr_xdp_set_port(&x, PORT, &conf))
		t_fail("cannot set the port entry");
	make(&g, AF_INET, b, secret, now, b, 0);
	n = sizeof(out);
	if (run_out(&g, out, &n) != XDP_TX)
		t_fail("without a rate limit: not answered in XDP");
	conf.flags =
		RR_PORT_COOKIE | RR_PORT_RL | RR_PORT_VALIDATE | RR_PORT_CACHE;
	if (rr_xdp_set_port(&x, PORT, &conf))
		t_fail("cannot set the port entry");
	if (count(RR_FN_CACHE_HIT) - hit != 3)
		t_fail("cache_hit moved by %lu, not 3",
		       (unsigned long)(count(RR_FN_CACHE_HIT) - hit));

	t_at("the reply cache and cookies: these go to a worker");
	miss = count(RR_FN_CACHE_MISS);
	make(&g, AF_INET, c, secret, now - 2000, c, 0);
	run(&g, 1, &pass, &drop); /* valid, too old to echo */
	make(&g, AF_INET, c, other, now, c, 0);
	run(&g, 1, &pass, &drop); /* forged */
	make(&g, AF_INET, c, secret, now, c, 1);
	run(&g, 1, &pass, &drop); /* a client cookie alone */
	pad_first = 1;
	make(&g, AF_INET, c, secret, now, c, 0);
	run(&g, 1, &pass, &drop); /* valid, not at the query's end */
	pad_first = 0;
	if (count(RR_FN_COOKIE_BYPASS) - bypass != 4)
		t_fail("cookie_bypass moved by %lu, not 4",
		       (unsigned long)(count(RR_FN_COOKIE_BYPASS) - bypass));
	if (count(RR_FN_CACHE_MISS) != miss ||
	    count(RR_FN_CACHE_HIT) - hit != 3)
		t_fail("the cache was asked");
	if (pass != 4)
		t_fail("%u of 4 passed on (the port has no socket)", pass);
}

int main(void)
{
	static const uint8_t no_mac[6];
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = t_xdp_load(&x, no_mac, 1500);
	if (ret)
		return ret;
	/* One run at a time (no repeat): no need to attach it anywhere. */
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	rate_limit();
	validated();
	padded();
	cache();
	rr_xdp_destroy(&x);
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("DNS cookies in XDP: valid ones validate their source, none else\n");
	return 0;
}
