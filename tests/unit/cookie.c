// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of DNS Cookies: SipHash-2-4 (include/reqrouter/rr_cookie.h)
 * against the paper's test vector and a plain byte-wise reading of the
 * same input; the server cookie of RFC 9018 (functions/dns/dns_cookie.c)
 * against RFC 9018's appendix A.1 and what libknot 3.2 makes for IPv6 and
 * for 127.0.0.1 (its knot_edns_cookie_server_generate(), checked by hand),
 * and the judgement of every kind of COOKIE option: a client cookie
 * alone, a valid one, one past half an hour (renewed), past an hour or
 * over 5 minutes ahead (expired), forged, of another client or another
 * secret (wrong), the previous secret while it is good and after, other
 * versions and lengths (unknown), and lengths no cookie has (malformed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dns_cookie.h"

static void unhex(const char *hex, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char b[3] = { hex[2 * i], hex[2 * i + 1], '\0' };

		out[i] = (uint8_t)strtoul(b, NULL, 16);
	}
}

static void keys(const char *secret_hex, struct dns_cookie_keys *k)
{
	uint8_t secret[16];

	memset(k, 0, sizeof(*k));
	unhex(secret_hex, secret, 16);
	dns_cookie_key(secret, &k->k0[0], &k->k1[0]);
}

static void test_siphash_vector(void **state)
{
	uint8_t key[16], msg[64];
	unsigned int i;

	(void)state;
	for (i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	/* SipHash paper, appendix A: 15 bytes 00..0e under key 00..0f. */
	assert_true(rr_siphash24(rr_le64(key), rr_le64(key + 8), msg, 15) ==
		    0xa129ca6149be45e5ULL);
	/* The reference's first vectors (vectors_sip64): empty and 8. */
	assert_true(rr_siphash24(rr_le64(key), rr_le64(key + 8), msg, 0) ==
		    0x726fdb47dd0e0e31ULL);
	assert_true(rr_siphash24(rr_le64(key), rr_le64(key + 8), msg, 8) ==
		    0x93f5f5799a932462ULL);
}

/* rr_cookie_hash() from words is SipHash of the bytes in a row. */
static void test_cookie_hash_words(void **state)
{
	uint8_t in[32], key[16];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 37 + 11);
	for (i = 0; i < 16; i++)
		key[i] = (uint8_t)(255 - i);
	assert_true(rr_cookie_hash(rr_le64(key), rr_le64(key + 8), rr_le64(in),
				   rr_le64(in + 8), rr_le32(in + 16), 0, 0) ==
		    rr_siphash24(rr_le64(key), rr_le64(key + 8), in, 20));
	assert_true(rr_cookie_hash(rr_le64(key), rr_le64(key + 8), rr_le64(in),
				   rr_le64(in + 8), rr_le64(in + 16),
				   rr_le64(in + 24), 1) ==
		    rr_siphash24(rr_le64(key), rr_le64(key + 8), in, 32));
}

static void check_made(const char *secret, const uint8_t *ip, int ipv6,
		       const char *cc_hex, uint32_t ts, const char *want_hex)
{
	struct dns_cookie_keys k;
	uint8_t cc[8], got[16], want[16];

	keys(secret, &k);
	unhex(cc_hex, cc, 8);
	unhex(want_hex, want, 16);
	dns_cookie_make(&k, cc, ip, ipv6, ts, got);
	assert_memory_equal(got, want, 16);
}

static void test_server_cookie_vectors(void **state)
{
	static const uint8_t doc4[4] = { 198, 51, 100, 100 };
	static const uint8_t lo[4] = { 127, 0, 0, 1 };
	static const uint8_t doc6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x02, 0x20,
					  0x00, 0x01, 0x59, 0xde, 0xd0, 0xf4,
					  0x87, 0x69, 0x82, 0xb8 };

	(void)state;
	/* RFC 9018, A.1. */
	check_made("e5e973e5a6b2a43f48e7dc849e37bfcf", doc4, 0,
		   "2464c4abcf10c957", 1559731985,
		   "010000005cf79f111f8130c3eee29480");
	/* knotd's mod-cookies answered kdig on 127.0.0.1 with this. */
	check_made("e5e973e5a6b2a43f48e7dc849e37bfcf", lo, 0,
		   "2464c4abcf10c957", 0x6b0c6d13,
		   "010000006b0c6d1395fbdcaea4dfca44");
	/* RFC 9018 A.4's client and time; libknot 3.2's cookie for them. */
	check_made("dd3bdf9344b678b185a6f5cb60fca715", doc6, 1,
		   "22681ab97d52c298", 1559734385,
		   "010000005cf7a871fb8b193931c65fa5");
}

#define NOW 1795976476U

/* The option a client that got @sc (made at @made) sends back. */
static void option(const struct dns_cookie_keys *k, const uint8_t *ip,
		   uint32_t made, uint8_t *opt)
{
	memcpy(opt, "\x24\x64\xc4\xab\xcf\x10\xc9\x57", 8);
	dns_cookie_make(k, opt, ip, 0, made, opt + 8);
}

static void test_judged(void **state)
{
	static const uint8_t ip[4] = { 192, 0, 2, 1 },
			     other[4] = { 192, 0, 2, 2 };
	static const struct {
		int age;
		enum dns_cookie_kind want;
	} ages[] = {
		{ 0, DNS_COOKIE_VALID },      { 1800, DNS_COOKIE_VALID },
		{ 1801, DNS_COOKIE_RENEW },   { 3600, DNS_COOKIE_RENEW },
		{ 3601, DNS_COOKIE_EXPIRED }, { -300, DNS_COOKIE_VALID },
		{ -301, DNS_COOKIE_EXPIRED },
	};
	struct dns_cookie_keys k, k2;
	uint8_t opt[41];
	size_t len, i;

	(void)state;
	keys("000102030405060708090a0b0c0d0e0f", &k);
	keys("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", &k2);
	option(&k, ip, NOW, opt);
	assert_int_equal(dns_cookie_check(&k, opt, 8, ip, 0, NOW),
			 DNS_COOKIE_CLIENT);
	assert_int_equal(dns_cookie_check(&k, opt, 24, ip, 0, NOW),
			 DNS_COOKIE_VALID);
	/* Another client's address, another server's secret, a bit. */
	assert_int_equal(dns_cookie_check(&k, opt, 24, other, 0, NOW),
			 DNS_COOKIE_WRONG);
	assert_int_equal(dns_cookie_check(&k2, opt, 24, ip, 0, NOW),
			 DNS_COOKIE_WRONG);
	opt[23] ^= 1;
	assert_int_equal(dns_cookie_check(&k, opt, 24, ip, 0, NOW),
			 DNS_COOKIE_WRONG);
	/* The time: an hour back and 5 minutes ahead are good; renewed
	 * past half an hour. */
	for (i = 0; i < sizeof(ages) / sizeof(*ages); i++) {
		option(&k, ip, NOW - (uint32_t)ages[i].age, opt);
		if (dns_cookie_check(&k, opt, 24, ip, 0, NOW) != ages[i].want)
			fail_msg("a cookie %d s old: not judged %d",
				 ages[i].age, ages[i].want);
	}
	/* Past 2^32 seconds the time wraps (RFC 1982). */
	option(&k, ip, 0xfffffff0U, opt);
	assert_int_equal(dns_cookie_check(&k, opt, 24, ip, 0, 0x10),
			 DNS_COOKIE_VALID);
	/* After a rotation: the previous secret while it is good. */
	option(&k, ip, NOW, opt);
	k2.k0[1] = k.k0[0];
	k2.k1[1] = k.k1[0];
	k2.has_prev = 1;
	k2.prev_until = NOW;
	assert_int_equal(dns_cookie_check(&k2, opt, 24, ip, 0, NOW),
			 DNS_COOKIE_VALID);
	assert_int_equal(dns_cookie_check(&k2, opt, 24, ip, 0, NOW + 1),
			 DNS_COOKIE_WRONG);
	/* Not version 1, or not 16 bytes of server cookie. */
	opt[8] = 2;
	assert_int_equal(dns_cookie_check(&k, opt, 24, ip, 0, NOW),
			 DNS_COOKIE_UNKNOWN);
	opt[8] = 1;
	assert_int_equal(dns_cookie_check(&k, opt, 16, ip, 0, NOW),
			 DNS_COOKIE_UNKNOWN);
	assert_int_equal(dns_cookie_check(&k, opt, 40, ip, 0, NOW),
			 DNS_COOKIE_UNKNOWN);
	/* RFC 7873 5.2.2: 8, or 16 to 40 bytes. */
	for (len = 0; len <= 41; len++)
		if (len != 8 && (len < 16 || len > 40))
			assert_int_equal(
				dns_cookie_check(&k, opt, len, ip, 0, NOW),
				DNS_COOKIE_MALFORMED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_vector),
		cmocka_unit_test(test_cookie_hash_words),
		cmocka_unit_test(test_server_cookie_vectors),
		cmocka_unit_test(test_judged),
	};

	return cmocka_run_group_tests_name("cookie", tests, NULL, NULL);
}
