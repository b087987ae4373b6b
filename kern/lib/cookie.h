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

/* Whether the OPT record that ends a query's @buf, at @t, is one. */
static __always_inline int cookie_tail(const __u8 *buf, __u32 t)
{
	const __u32 m = COOKIE_BUF - 1;

	return !buf[t & m] && !buf[(t + 1) & m] && buf[(t + 2) & m] == 41 &&
	       !buf[(t + 9) & m] && buf[(t + 10) & m] == COOKIE_TAIL - 11 &&
	       !buf[(t + 11) & m] && buf[(t + 12) & m] == RR_COOKIE_OPT &&
	       !buf[(t + 13) & m] &&
	       buf[(t + 14) & m] == RR_COOKIE_CLIENT_LEN + RR_COOKIE_SERVER_LEN;
}

/* Whether the 24-byte @c (client and server cookie) is valid for the
 * source (@a, @b as rr_cookie_hash() takes them) under @k. The hash
 * first, under the current secret: a forged cookie (a flood's) costs that
 * alone, and the clock (a helper call and a division, 40 ns here) is read
 * only for one whose hash is right, or where a previous secret may still
 * be good. */
static __always_inline int cookie_valid(const struct rr_cookie_keys *k,
					const __u8 *c, __u64 a, __u64 b,
					int ipv6)
{
	__u64 cc = rr_le64(c), vrt = rr_le64(c + 8), h = rr_le64(c + 16);
	int current;
	__u64 now;
	__u32 ts;
	__s32 age;

	if (c[8] != RR_COOKIE_VERSION)
		return 0;
	current = rr_cookie_hash(k->k0[0], k->k1[0], cc, vrt, a, b, ipv6) == h;
	if (!current && !k->prev_until)
		return 0;
	now = bpf_ktime_get_tai_ns() / 1000000000ULL - k->tai_off;
	if (!current &&
	    (now > k->prev_until ||
	     rr_cookie_hash(k->k0[1], k->k1[1], cc, vrt, a, b, ipv6) != h))
		return 0;
	ts = (__u32)c[12] << 24 | (__u32)c[13] << 16 | (__u32)c[14] << 8 |
	     c[15];
	age = (__s32)((__u32)now - ts);
	return age <= RR_COOKIE_PAST_S && age >= -RR_COOKIE_FUTURE_S;
}

/*
 * The query at @l3_off (its IP header, of @ipv6's family, checked by the
 * caller: no options, no extension headers) to function @slot:
 * RR_COOKIE_VALID if its OPT record's COOKIE option is a server cookie
 * valid for its source, RR_COOKIE_OTHER for any other COOKIE option,
 * RR_COOKIE_NONE when there is none or the query is not the plain one
 * read here (one question, no compression in it, the OPT as its only
 * other record, within its first COOKIE_BUF bytes). A global function,
 * verified once on its own.
 */
__noinline int cookie_check(struct xdp_md *ctx, __u32 l3_off, __u32 slot,
			    int ipv6)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	const struct rr_cookie_keys *k;
	__u32 zero = 0, off, len, n, pos = 12, i;
	__u8 *buf, c[RR_COOKIE_MAX_LEN], ip[16], l;
	struct udphdr *udp;
	__u64 a, b = 0;

	if (l3_off > RR_XDP_MAX_L3_OFF)
		return RR_COOKIE_NONE;
	if (ipv6) {
		struct ipv6hdr *ip6h = data + l3_off;

		if ((void *)(ip6h + 1) > end)
			return RR_COOKIE_NONE;
		__builtin_memcpy(ip, &ip6h->saddr, 16);
		a = rr_le64(ip);
		b = rr_le64(ip + 8);
		off = l3_off + sizeof(*ip6h);
	} else {
		struct iphdr *iph = data + l3_off;

		if ((void *)(iph + 1) > end)
			return RR_COOKIE_NONE;
		__builtin_memcpy(ip, &iph->saddr, 4);
		a = rr_le32(ip);
		off = l3_off + sizeof(*iph);
	}
	udp = data + off;
	if ((void *)(udp + 1) > end)
		return RR_COOKIE_NONE;
	len = bpf_ntohs(udp->len);
	off += sizeof(*udp);
	buf = bpf_map_lookup_elem(&cookie_scratch, &zero);
	if (!buf || len < sizeof(*udp) + 12 + 1 + 4 + 11)
		return RR_COOKIE_NONE;
	len -= sizeof(*udp);
	n = len > COOKIE_BUF ? COOKIE_BUF : len;
	if (bpf_xdp_load_bytes(ctx, off, buf, n))
		return RR_COOKIE_NONE;
	/* One question, no answer or authority, the OPT alone after. */
	if (buf[4] || buf[5] != 1 || buf[6] || buf[7] || buf[8] || buf[9] ||
	    buf[10] || buf[11] != 1)
		return RR_COOKIE_NONE;
	/* The usual query, whose OPT's one option is a whole COOKIE (as
	 * kdig and resolvers send it): found from the end, without the walk
	 * through the name. One that only looks so (its name ends in those
	 * bytes) has them judged as a cookie all the same, and they pass
	 * only as a cookie valid for its source, which proves the source. */
	if (n == len && len >= COOKIE_TAIL + 12 + 5 &&
	    cookie_tail(buf, len - COOKIE_TAIL)) {
		pos = len - COOKIE_TAIL + 11;
		goto found;
	}
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
found:
	k = bpf_map_lookup_elem(&cookie_keys, &slot);
	if (!k || !READ_ONCE_U32(k->ready))
		return RR_COOKIE_OTHER;
	/* The cookie from the copy where it lies in it, else the frame
	 * (a helper call). */
	if (pos + 4 + 24 <= n) {
#pragma unroll
		for (i = 0; i < 24; i++)
			c[i] = buf[(pos + 4 + i) & (COOKIE_BUF - 1)];
	} else if (bpf_xdp_load_bytes(ctx, off + pos + 4, c, 24)) {
		return RR_COOKIE_OTHER;
	}
	return cookie_valid(k, c, a, b, ipv6) ? RR_COOKIE_VALID
					      : RR_COOKIE_OTHER;
}

#endif /* RR_LIB_COOKIE_H */
