/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DNS Cookies (RFC 7873) for the dns function: the COOKIE option of a
 * query judged, and the server cookie of RFC 9018 made (version 1, the
 * time, SipHash-2-4 of the client cookie, those and the client's address:
 * <reqrouter/rr_cookie.h>, which reqrouter's XDP program computes too).
 * The secrets are reqrouter's (cookie_secret, rr_fn_cookie_secrets()):
 * the current one, and after a rotation the previous one, still good
 * until the cookies made with it have expired.
 */
#ifndef RR_DNS_COOKIE_H
#define RR_DNS_COOKIE_H

#include <stddef.h>
#include <stdint.h>

#include <reqrouter/rr_cookie.h>

struct dns_cookie_keys {
	uint64_t k0[2], k1[2]; /* [0] the current secret, [1] the previous */
	int has_prev;
	uint64_t prev_until; /* the previous is good until then (Unix s) */
};

/* What a query's COOKIE option is. */
enum dns_cookie_kind {
	DNS_COOKIE_CLIENT,    /* a client cookie alone */
	DNS_COOKIE_VALID,     /* a server cookie of ours, in its time */
	DNS_COOKIE_RENEW,     /* the same, older than half an hour */
	DNS_COOKIE_MALFORMED, /* not 8 or 16 to 40 bytes: FORMERR */
	DNS_COOKIE_UNKNOWN,   /* a server cookie not of our form */
	DNS_COOKIE_EXPIRED,   /* ours, made over an hour ago or ahead */
	DNS_COOKIE_WRONG,     /* its hash under none of our secrets */
};

/* The key of the 16-byte @secret. */
void dns_cookie_key(const uint8_t *secret, uint64_t *k0, uint64_t *k1);

/*
 * Judges the option's @len bytes at @opt, from a client at @ip (4 bytes,
 * or 16 with @ipv6) at Unix time @now.
 */
enum dns_cookie_kind dns_cookie_check(const struct dns_cookie_keys *k,
				      const uint8_t *opt, size_t len,
				      const uint8_t *ip, int ipv6,
				      uint32_t now);

/* A server cookie for client cookie @cc, made now: 16 bytes at @out. */
void dns_cookie_make(const struct dns_cookie_keys *k, const uint8_t *cc,
		     const uint8_t *ip, int ipv6, uint32_t now, uint8_t *out);

#endif /* RR_DNS_COOKIE_H */
