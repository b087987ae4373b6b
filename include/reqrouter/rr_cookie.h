/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DNS server cookies (RFC 7873, the server cookie of RFC 9018): SipHash-2-4
 * and the one hash a server cookie carries, in plain fixed-width types so
 * that the dns function (functions/dns/dns_cookie.c) and reqrouter's XDP
 * program (kern/lib/cookie.h), which checks a cookie before the rate
 * limit, compute it from this one text.
 *
 * A server cookie is 16 bytes: version (1), reserved (3, zero), the time
 * it was made (32 bits, seconds since the epoch, network order) and the
 * hash: SipHash-2-4, keyed by the server's 16-byte secret, of the client
 * cookie (8), version, reserved and time (8) and the client's address (4
 * or 16 bytes), written as SipHash writes its result, least significant
 * byte first.
 */
#ifndef RR_COOKIE_H
#define RR_COOKIE_H

#include <linux/types.h>

#define RR_COOKIE_OPT 10 /* the EDNS option's code */
#define RR_COOKIE_CLIENT_LEN 8
#define RR_COOKIE_SERVER_LEN 16 /* RFC 9018's */
#define RR_COOKIE_MIN_LEN 8	/* client cookie alone */
#define RR_COOKIE_FULL_MIN 16	/* with a server cookie: 8 to 32 bytes */
#define RR_COOKIE_MAX_LEN 40
#define RR_COOKIE_VERSION 1
#define RR_COOKIE_SECRET_LEN 16
/* RFC 9018 4.3: a cookie is good from 1 hour before now to 5 minutes
 * after, and one older than half an hour is replaced. */
#define RR_COOKIE_PAST_S 3600
#define RR_COOKIE_FUTURE_S 300
#define RR_COOKIE_RENEW_S 1800

/* In line always: BPF takes five arguments a call at most. */
#define RR_COOKIE_INLINE static inline __attribute__((always_inline))

/* An 8-byte little-endian word, as SipHash reads its input and key. */
RR_COOKIE_INLINE __u64 rr_le64(const __u8 *p)
{
	return (__u64)p[0] | (__u64)p[1] << 8 | (__u64)p[2] << 16 |
	       (__u64)p[3] << 24 | (__u64)p[4] << 32 | (__u64)p[5] << 40 |
	       (__u64)p[6] << 48 | (__u64)p[7] << 56;
}

RR_COOKIE_INLINE __u32 rr_le32(const __u8 *p)
{
	return (__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 |
	       (__u32)p[3] << 24;
}

#define RR_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

/* SipHash's state (Aumasson and Bernstein, 2012). */
struct rr_sip {
	__u64 v0, v1, v2, v3;
};

RR_COOKIE_INLINE void rr_sip_round(struct rr_sip *s)
{
	s->v0 += s->v1;
	s->v1 = RR_ROTL64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = RR_ROTL64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = RR_ROTL64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = RR_ROTL64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = RR_ROTL64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = RR_ROTL64(s->v2, 32);
}

RR_COOKIE_INLINE void rr_sip_init(struct rr_sip *s, __u64 k0, __u64 k1)
{
	s->v0 = k0 ^ 0x736f6d6570736575ULL;
	s->v1 = k1 ^ 0x646f72616e646f6dULL;
	s->v2 = k0 ^ 0x6c7967656e657261ULL;
	s->v3 = k1 ^ 0x7465646279746573ULL;
}

/* One 8-byte word of input: two compression rounds. */
RR_COOKIE_INLINE void rr_sip_word(struct rr_sip *s, __u64 m)
{
	s->v3 ^= m;
	rr_sip_round(s);
	rr_sip_round(s);
	s->v0 ^= m;
}

/* The last word (the input's length in its top byte, the bytes left
 * below) and four finalization rounds. */
RR_COOKIE_INLINE __u64 rr_sip_final(struct rr_sip *s, __u64 b)
{
	rr_sip_word(s, b);
	s->v2 ^= 0xff;
	rr_sip_round(s);
	rr_sip_round(s);
	rr_sip_round(s);
	rr_sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* SipHash-2-4 of @len bytes at @p under the key (@k0, @k1). */
RR_COOKIE_INLINE __u64 rr_siphash24(__u64 k0, __u64 k1, const __u8 *p,
				    __u32 len)
{
	struct rr_sip s;
	__u64 b = (__u64)len << 56;
	__u32 i;

	rr_sip_init(&s, k0, k1);
	for (i = 0; i + 8 <= len; i += 8)
		rr_sip_word(&s, rr_le64(p + i));
	for (; i < len; i++)
		b |= (__u64)p[i] << (8 * (i & 7));
	return rr_sip_final(&s, b);
}

/*
 * A server cookie's hash from its words: @cc the client cookie and @vrt
 * version, reserved and time, each as rr_le64() reads its 8 bytes; the
 * client's address as @a (rr_le32() of an IPv4 address) or, with @ipv6,
 * @a and @b (rr_le64() of each half of an IPv6 address). No loop: the XDP
 * program calls it as it is.
 */
RR_COOKIE_INLINE __u64 rr_cookie_hash(__u64 k0, __u64 k1, __u64 cc, __u64 vrt,
				      __u64 a, __u64 b, int ipv6)
{
	struct rr_sip s;

	rr_sip_init(&s, k0, k1);
	rr_sip_word(&s, cc);
	rr_sip_word(&s, vrt);
	if (!ipv6)
		return rr_sip_final(&s, (__u64)20 << 56 | (a & 0xffffffffULL));
	rr_sip_word(&s, a);
	rr_sip_word(&s, b);
	return rr_sip_final(&s, (__u64)32 << 56);
}

#endif /* RR_COOKIE_H */
