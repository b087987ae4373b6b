// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/dns program (dns.c): DNS Cookies as the
 * function answers them, Knot's mod-cookies' way with its defaults
 * (tests/integration/dns_knot.sh compares the two): over UDP a client
 * cookie alone, or a server cookie that is not valid, gets BADCOOKIE with
 * a server cookie to use; the valid one the answer, with that cookie; over
 * TCP every one the answer; a COOKIE option of a length no cookie has
 * FORMERR; none of them a reply the cache may keep; each counted. A
 * room too small for our cookie gets the answer without one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dns_test.h"

#define BADCOOKIE 23
#define CC "\x24\x64\xc4\xab\xcf\x10\xc9\x57"

/* www.example.com A with EDNS and a COOKIE option of @len bytes. */
static void cookie_query(struct q *q, const uint8_t *cookie, size_t len)
{
	uint8_t opt[4 + 64];

	opt[0] = 0;
	opt[1] = 10;
	opt[2] = 0;
	opt[3] = (uint8_t)len;
	memcpy(opt + 4, cookie, len);
	query(q, "www.example.com", 1, 1, RD);
	add_opt(q, 1232, 0, 0, opt, 4 + len);
}

/* The reply's COOKIE option, the last thing in it: 24 bytes into @out. */
static void reply_cookie(const struct reply *r, uint8_t *out)
{
	const uint8_t *p = r->b + r->len - 28;

	assert_true(r->opt >= 0 && r->len > 28);
	assert_memory_equal(p, "\x00\x0a\x00\x18", 4);
	assert_memory_equal(p + 4, CC, 8); /* the client's, echoed */
	assert_int_equal(p[12], 1);	   /* version 1 */
	memcpy(out, p + 4, 24);
}

static unsigned int full_rcode(const struct reply *r)
{
	return (unsigned int)r->b[r->len - 28 - 11 + 5] << 4 | r->rcode;
}

static void test_cookies(void **state)
{
	uint8_t c[40], got[24];
	struct reply *r = malloc(sizeof(*r));
	struct q q;

	(void)state;
	assert_non_null(r);
	/* A client cookie alone: BADCOOKIE (23: 7 in the header, 1 in the
	 * OPT), the question, no answer, a server cookie to use. */
	memcpy(c, CC, 8);
	cookie_query(&q, c, 8);
	ask(&q, r);
	assert_int_equal(r->rcode, BADCOOKIE & 0xf);
	check_counts(r, BADCOOKIE & 0xf, RD, 0, 0, 1);
	reply_cookie(r, got);
	assert_int_equal(full_rcode(r), BADCOOKIE);
	assert_int_equal(counter("dns_cookie_client"), 1);
	assert_int_equal(counter("dns_badcookie"), 1);
	/* Sent back: the answer, and the same cookie. */
	cookie_query(&q, got, 24);
	ask(&q, r);
	check_counts(r, 0, AA | RD, 2, 0, 1);
	reply_cookie(r, c);
	assert_memory_equal(c, got, 24);
	assert_int_equal(counter("dns_cookie_valid"), 1);
	/* Over TCP it is answered, and never kept by the cache, even from
	 * another address (ask_tcp()'s 0.0.0.0), where it is wrong. */
	cookie_query(&q, got, 24);
	ask_tcp(&q, r);
	check_counts(r, 0, AA | RD, 2, 0, 1);
	assert_true(r->no_cache);
	assert_int_equal(counter("dns_cookie_wrong"), 1);
	memcpy(c, CC, 8);
	cookie_query(&q, c, 8);
	ask_tcp(&q, r);
	check_counts(r, 0, AA | RD, 2, 0, 1);
	reply_cookie(r, c);
	/* Forged: BADCOOKIE and a good one. */
	memcpy(c, got, 24);
	c[23] ^= 0x40;
	cookie_query(&q, c, 24);
	ask(&q, r);
	check_counts(r, BADCOOKIE & 0xf, RD, 0, 0, 1);
	reply_cookie(r, c);
	assert_memory_equal(c + 8, "\x01\x00\x00\x00", 4);
	assert_int_equal(counter("dns_cookie_wrong"), 2);
	/* Version 2: not ours to read. */
	memcpy(c, got, 24);
	c[8] = 2;
	cookie_query(&q, c, 24);
	ask(&q, r);
	check_counts(r, BADCOOKIE & 0xf, RD, 0, 0, 1);
	assert_int_equal(counter("dns_cookie_unknown"), 1);
	/* No cookie has 7, 9 or 41 bytes: FORMERR, with an OPT and no
	 * cookie in it. */
	cookie_query(&q, c, 7);
	ask(&q, r);
	check_counts(r, 1, RD, 0, 0, 1);
	assert_int_equal(r->len, q.len - 11);
	cookie_query(&q, c, 9);
	ask(&q, r);
	check_counts(r, 1, RD, 0, 0, 1);
	assert_int_equal(counter("dns_cookie_malformed"), 2);
	assert_int_equal(counter("dns_badcookie"), 3);
	/* A room no longer than the query (an MTU, max_amplification):
	 * no room for our cookie, answered as without one (fuzz_dns). */
	memcpy(c, CC, 8);
	cookie_query(&q, c, 8);
	ask_mtu(&q, 28 + (uint32_t)q.len, r);
	assert_true(r->len > 0 && r->len <= (int)q.len);
	assert_int_equal(r->rcode, 0);
	assert_int_equal(counter("dns_badcookie"), 3);
	free(r);
}

int run_cookie_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cookies),
	};

	return cmocka_run_group_tests_name("cookies", tests, setup, teardown);
}
