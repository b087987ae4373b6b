/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DNS Cookies in XDP (docs/DESIGN.md, "DNS Cookies in XDP"): a query to a
 * function flagged RR_FN_DNS_COOKIES (RR_PORT_COOKIE) whose server cookie
 * is valid for its source address was answered at that address before:
 * it skips the rate limit. One with any COOKIE option skips the in-kernel
 * tier, whose cached replies carry no cookie made for this client. The
 * check is the dns function's (functions/dns/dns_cookie.c), on the same
 * secrets (cookie_keys, written by src/daemon/features/cookie.c) and the
 * same hash (<reqrouter/rr_cookie.h>).
 */
#ifndef RR_LIB_COOKIE_H
#define RR_LIB_COOKIE_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_cookie.h>
#include <reqrouter/rr_xdp_req.h>

#include "lib/common.h"
#include "lib/parse.h"
#include "shared/common.h"
#include "shared/cookie.h"

/* Each function's cookie secrets, by slot (struct rr_cookie_keys). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_cookie_keys);
	__uint(max_entries, RR_MAX_SLOTS);
} cookie_keys SEC(".maps");

#define COOKIE_BUF 512 /* a query's first bytes: the question and OPT */

/* Each CPU's copy of a query's first COOKIE_BUF bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u8[COOKIE_BUF]);
	__uint(max_entries, 1);
} cookie_scratch SEC(".maps");

#define COOKIE_MAX_OPTIONS 4 /* options looked at before the cookie */

/* An OPT record whose one option is a whole COOKIE: its root name, type
 * and class, TTL, RDATA length, the option's code and length, the 24
 * bytes. */
#define COOKIE_TAIL (11 + 4 + RR_COOKIE_CLIENT_LEN + RR_COOKIE_SERVER_LEN)

/* The 8 bytes at @p as rr_le64() reads them: one load, as the program
 * runs little-endian (bpfel) and a packet may be read unaligned. */
static __always_inline __u64 cookie_word(const void *p)
{
	return *(const __u64 *)p;
}

/* A query's header from its counts on (bytes 4-11), as cookie_word()
 * reads it: one question, no answer or authority, one additional. */
#define COOKIE_COUNTS (1ULL << 8 | 1ULL << 56)

/* Whether the COOKIE_TAIL bytes at @t (in the packet) are one: the root
 * and type 41 (bytes 0-2), then the RDATA's length and the option's code
 * and length (bytes 9-14, read with the TTL's last two in one word). */
static __always_inline int cookie_tail(const __u8 *t)
{
	const __u64 opt =
		(__u64)(COOKIE_TAIL - 11) << 24 | (__u64)RR_COOKIE_OPT << 40 |
		(__u64)(RR_COOKIE_CLIENT_LEN + RR_COOKIE_SERVER_LEN) << 56;

	return (*(const __u32 *)t & 0xffffff) == 41 << 16 &&
	       (cookie_word(t + 7) & ~0xffffULL) == opt;
}

/* Whether the cookie whose client cookie, version word (version,
 * reserved, time) and hash are the little-endian words @cc, @vrt and @h
 * is valid for the source (@a, @b as rr_cookie_hash() takes them) under
 * @k: 0 if not, 2 if it is young enough for the function to echo it
 * (RR_COOKIE_RENEW_S, a second short of it), 1 if older. The hash first,
 * under the current secret: a forged cookie (a flood's) costs that alone,
 * and the clock (a helper call and a division, 40 ns here) is read only
 * for one whose hash is right, or where a previous secret may still be
 * good. */
static __always_inline int cookie_valid(const struct rr_cookie_keys *k,
					__u64 cc, __u64 vrt, __u64 h, __u64 a,
					__u64 b, int ipv6)
{
	int current;
	__u64 now;
	__u32 ts;
	__s32 age;

	if ((vrt & 0xff) != RR_COOKIE_VERSION)
		return 0;
	current = rr_cookie_hash(k->k0[0], k->k1[0], cc, vrt, a, b, ipv6) == h;
	if (!current && !k->prev_until)
		return 0;
	now = bpf_ktime_get_tai_ns() / 1000000000ULL - k->tai_off;
	if (!current &&
	    (now > k->prev_until ||
	     rr_cookie_hash(k->k0[1], k->k1[1], cc, vrt, a, b, ipv6) != h))
		return 0;
	ts = bpf_ntohl((__u32)(vrt >> 32));
	age = (__s32)((__u32)now - ts);
	if (age > RR_COOKIE_PAST_S || age < -RR_COOKIE_FUTURE_S)
		return 0;
	return age < RR_COOKIE_RENEW_S ? 2 : 1;
}

/*
 * The query at @l3_off (its IP header, of @ipv6's family, checked by the
 * caller: no options, no extension headers) to function @slot:
 * RR_COOKIE_VALID if its OPT record's COOKIE option is a server cookie
 * valid for its source (judged only where @verify: a valid one buys
 * something, its own budget or a cached answer); RR_COOKIE_ECHO if that
 * cookie is besides young enough to be echoed and the query's last
 * bytes; RR_COOKIE_OTHER for any other COOKIE option, or any where it is
 * not judged; RR_COOKIE_NONE when there is none or the query is not the
 * plain one read here (one question, no compression in it, the OPT as
 * its only other record, within its first COOKIE_BUF bytes). A global
 * function, verified once on its own.
 */
__noinline int cookie_check(struct xdp_md *ctx, __u32 l3_off, __u32 slot,
			    int ipv6, int verify)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	const struct rr_cookie_keys *k;
	__u32 zero = 0, off, len, n, pos = 12, i;
	__u64 a, b, cc, vrt, h;
	__u8 *buf, *q, *t, l;
	struct udphdr *udp;
	int at_end = 0, v;

	if (l3_off > RR_XDP_MAX_L3_OFF ||
	    src_words(data + l3_off, end, ipv6, &a, &b))
		return RR_COOKIE_NONE;
	off = l3_off + (ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	udp = data + off;
	if ((void *)(udp + 1) > end)
		return RR_COOKIE_NONE;
	len = bpf_ntohs(udp->len);
	off += sizeof(*udp);
	if (len < sizeof(*udp) + 12 + 1 + 4 + 11)
		return RR_COOKIE_NONE;
	len -= sizeof(*udp);
	/* One question, no answer or authority, the OPT alone after. */
	q = data + off;
	if ((void *)(q + 12) > end || cookie_word(q + 4) != COOKIE_COUNTS)
		return RR_COOKIE_NONE;
	/* The usual query, whose OPT's one option is a whole COOKIE (as
	 * kdig and resolvers send it): read where it lies, from its end,
	 * without a copy or the walk through the name. One that only looks
	 * so (its name ends in those bytes) has them judged as a cookie all
	 * the same, and they pass only as a cookie valid for its source,
	 * which proves the source. */
	if (len >= COOKIE_TAIL + 12 + 5 && len <= COOKIE_BUF) {
		t = q + ((len - COOKIE_TAIL) & (COOKIE_BUF - 1));
		if ((void *)(t + COOKIE_TAIL) <= end && cookie_tail(t)) {
			if (!verify)
				return RR_COOKIE_OTHER;
			cc = cookie_word(t + 15);
			vrt = cookie_word(t + 23);
			h = cookie_word(t + 31);
			at_end = 1;
			goto judge;
		}
	}
	/* Else the walk, on a copy of the query's first bytes. */
	buf = bpf_map_lookup_elem(&cookie_scratch, &zero);
	if (!buf)
		return RR_COOKIE_NONE;
	n = len > COOKIE_BUF ? COOKIE_BUF : len;
	if (bpf_xdp_load_bytes(ctx, off, buf, n))
		return RR_COOKIE_NONE;
#pragma clang loop unroll(disable)
	for (i = 0; i < 128; i++) {
		if (pos >= n)
			return RR_COOKIE_NONE;
		l = buf[pos & (COOKIE_BUF - 1)];
		if (!l)
			break;
		if (l & 0xc0)
			return RR_COOKIE_NONE;
		pos += l + 1;
	}
	pos += 1 + 4; /* the root label, QTYPE and QCLASS */
	/* The OPT: the root, type 41, then its RDATA's options. */
	if (pos + 11 > n || buf[pos & (COOKIE_BUF - 1)] ||
	    buf[(pos + 1) & (COOKIE_BUF - 1)] ||
	    buf[(pos + 2) & (COOKIE_BUF - 1)] != 41)
		return RR_COOKIE_NONE;
	pos += 11;
#pragma clang loop unroll(disable)
	for (i = 0; i < COOKIE_MAX_OPTIONS; i++) {
		__u32 code, olen;

		if (pos + 4 > n)
			return RR_COOKIE_NONE;
		code = (__u32)buf[pos & (COOKIE_BUF - 1)] << 8 |
		       buf[(pos + 1) & (COOKIE_BUF - 1)];
		olen = (__u32)buf[(pos + 2) & (COOKIE_BUF - 1)] << 8 |
		       buf[(pos + 3) & (COOKIE_BUF - 1)];
		if (code == RR_COOKIE_OPT) {
			if (olen != RR_COOKIE_CLIENT_LEN + RR_COOKIE_SERVER_LEN)
				return RR_COOKIE_OTHER;
			break;
		}
		pos += 4 + olen;
	}
	if (i == COOKIE_MAX_OPTIONS)
		return RR_COOKIE_NONE;
	if (!verify)
		return RR_COOKIE_OTHER;
	/* The cookie from the frame: a helper call, as the walk may have
	 * left it past the copy. */
	{
		__u8 c[RR_COOKIE_CLIENT_LEN + RR_COOKIE_SERVER_LEN];

		if (bpf_xdp_load_bytes(ctx, off + pos + 4, c, sizeof(c)))
			return RR_COOKIE_OTHER;
		cc = rr_le64(c);
		vrt = rr_le64(c + 8);
		h = rr_le64(c + 16);
	}
judge:
	k = bpf_map_lookup_elem(&cookie_keys, &slot);
	if (!k || !READ_ONCE_U32(k->ready))
		return RR_COOKIE_OTHER;
	v = cookie_valid(k, cc, vrt, h, a, b, ipv6);
	if (!v)
		return RR_COOKIE_OTHER;
	return v == 2 && at_end ? RR_COOKIE_ECHO : RR_COOKIE_VALID;
}

#endif /* RR_LIB_COOKIE_H */
