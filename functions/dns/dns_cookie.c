// SPDX-License-Identifier: GPL-2.0
/*
 * DNS Cookies for the dns function (dns_cookie.h): a query's COOKIE
 * option judged as RFC 7873 5.2 and RFC 9018 4 say, and server cookies
 * made. Knot DNS's mod-cookies judges the same bytes alike.
 */
#include <string.h>

#include "dns_cookie.h"

void dns_cookie_key(const uint8_t *secret, uint64_t *k0, uint64_t *k1)
{
	*k0 = rr_le64(secret);
	*k1 = rr_le64(secret + 8);
}

static uint64_t hash(uint64_t k0, uint64_t k1, const uint8_t *cc,
		     const uint8_t *vrt, const uint8_t *ip, int ipv6)
{
	if (ipv6)
		return rr_cookie_hash(k0, k1, rr_le64(cc), rr_le64(vrt),
				      rr_le64(ip), rr_le64(ip + 8), 1);
	return rr_cookie_hash(k0, k1, rr_le64(cc), rr_le64(vrt), rr_le32(ip), 0,
			      0);
}

static void put_hash(uint8_t *out, uint64_t h)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		out[i] = (uint8_t)(h >> (8 * i));
}

void dns_cookie_make(const struct dns_cookie_keys *k, const uint8_t *cc,
		     const uint8_t *ip, int ipv6, uint32_t now, uint8_t *out)
{
	out[0] = RR_COOKIE_VERSION;
	out[1] = out[2] = out[3] = 0;
	out[4] = (uint8_t)(now >> 24);
	out[5] = (uint8_t)(now >> 16);
	out[6] = (uint8_t)(now >> 8);
	out[7] = (uint8_t)now;
	put_hash(out + 8, hash(k->k0[0], k->k1[0], cc, out, ip, ipv6));
}

enum dns_cookie_kind dns_cookie_check(const struct dns_cookie_keys *k,
				      const uint8_t *opt, size_t len,
				      const uint8_t *ip, int ipv6, uint32_t now)
{
	const uint8_t *sc = opt + RR_COOKIE_CLIENT_LEN;
	uint8_t want[8];
	int32_t age;
	uint32_t ts;

	if (len == RR_COOKIE_MIN_LEN)
		return DNS_COOKIE_CLIENT;
	if (len < RR_COOKIE_FULL_MIN || len > RR_COOKIE_MAX_LEN)
		return DNS_COOKIE_MALFORMED;
	if (len != RR_COOKIE_CLIENT_LEN + RR_COOKIE_SERVER_LEN ||
	    sc[0] != RR_COOKIE_VERSION)
		return DNS_COOKIE_UNKNOWN;
	/* The hash first: a forged cookie is wrong, whatever time it says. */
	put_hash(want, hash(k->k0[0], k->k1[0], opt, sc, ip, ipv6));
	if (memcmp(want, sc + 8, 8)) {
		if (!k->has_prev || now > k->prev_until)
			return DNS_COOKIE_WRONG;
		put_hash(want, hash(k->k0[1], k->k1[1], opt, sc, ip, ipv6));
		if (memcmp(want, sc + 8, 8))
			return DNS_COOKIE_WRONG;
	}
	/* Serial number arithmetic (RFC 1982), as RFC 9018 4.3 asks. */
	ts = (uint32_t)sc[4] << 24 | (uint32_t)sc[5] << 16 |
	     (uint32_t)sc[6] << 8 | sc[7];
	age = (int32_t)(now - ts);
	if (age > RR_COOKIE_PAST_S || age < -RR_COOKIE_FUTURE_S)
		return DNS_COOKIE_EXPIRED;
	return age > RR_COOKIE_RENEW_S ? DNS_COOKIE_RENEW : DNS_COOKIE_VALID;
}
