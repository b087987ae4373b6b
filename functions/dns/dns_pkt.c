// SPDX-License-Identifier: GPL-2.0
/*
 * The dns function's response writer (dns_pkt.h): libknot's way of
 * putting RRsets into a message, compression heuristics included, so that
 * replies have knotd's sizes.
 *
 * Every pointer this writer follows was written by it, or is the question
 * copied from a query whose QNAME the parser checked (no pointers, at most
 * 255 bytes), and points backwards to the start of a label: the walks
 * below end, and stay inside what was written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dns_pkt.h"

#define ESPACE (-1)

static int is_ptr(const uint8_t *p)
{
	return (*p & 0xc0) == 0xc0;
}

static uint16_t ptr_of(const uint8_t *p)
{
	return (uint16_t)((p[0] & 0x3f) << 8 | p[1]);
}

static void put_ptr(uint8_t *dst, uint16_t off)
{
	dst[0] = (uint8_t)(0xc0 | off >> 8);
	dst[1] = (uint8_t)off;
}

/* knot_wire_seek_label(): past any pointers to a label. */
static const uint8_t *seek(const uint8_t *wire, const uint8_t *lp)
{
	while (is_ptr(lp))
		lp = wire + ptr_of(lp);
	return lp;
}

static const uint8_t *next_label(const uint8_t *wire, const uint8_t *lp)
{
	return seek(wire, lp + *lp + 1);
}

/* libknot's label_is_equal(): @l1 as it is, @l2 lower-cased. */
static int label_eq(const uint8_t *l1, const uint8_t *l2)
{
	unsigned int i;

	if (*l1 != *l2)
		return 0;
	for (i = 1; i <= *l1; i++)
		if (l1[i] != dns_lower[l2[i]])
			return 0;
	return 1;
}

/* @d1 (uncompressed) equals the name at @d2 in the message. */
static int name_eq_wire(const uint8_t *wire, const uint8_t *d1,
			const uint8_t *d2)
{
	d2 = seek(wire, d2);
	while (*d1 || *d2) {
		if (!label_eq(d1, d2))
			return 0;
		d1 += *d1 + 1;
		d2 = next_label(wire, d2);
	}
	return 1;
}

void dns_pkt_init(struct dns_pkt *p, uint8_t *wire, size_t qname_len,
		  unsigned int qlabels, size_t max)
{
	p->wire = wire;
	p->size = DNS_HDR_LEN + qname_len + 4;
	p->max = max;
	p->suffix_pos = DNS_HDR_LEN;
	p->suffix_labels = (uint8_t)qlabels;
	p->qlabels = (uint8_t)qlabels;
	p->section = DNS_SEC_ANSWER;
	p->tc = 0;
	p->count[0] = p->count[1] = p->count[2] = 0;
	p->nrr = 0;
}

/* Records where a name was written, as compr_set_ptr(). */
static void set_hint(struct dns_pkt *p, struct dns_rrinfo *info, unsigned int i,
		     const uint8_t *at, size_t len)
{
	uint16_t off = (uint16_t)(at - p->wire);

	if (is_ptr(at))
		off = ptr_of(at);
	if (i < DNS_HINTS && off + len < DNS_PTR_MAX)
		info->hints[i] = off;
}

/*
 * libknot's compr_put_dname(): writes @name at @dst (@max bytes there),
 * compressed against the current suffix. Returns the bytes written or
 * ESPACE.
 */
static int put_name(struct dns_pkt *p, const uint8_t *name, uint8_t *dst,
		    size_t max)
{
	const uint8_t *wire = p->wire, *suffix, *match, *cptr;
	unsigned int nlabels, slabels, orig;
	size_t written = 0, n;

	if (!*name) {
		if (max < 1)
			return ESPACE;
		*dst = 0;
		return 1;
	}
	orig = nlabels = dns_name_labels(name);
	suffix = wire + p->suffix_pos;
	slabels = p->suffix_labels;
	while (slabels > nlabels) {
		suffix = next_label(wire, suffix);
		slabels--;
	}
	while (nlabels > slabels) {
		n = (size_t)*name + 1;
		if (written + n > max)
			return ESPACE;
		memcpy(dst + written, name, n);
		written += n;
		name += n;
		nlabels--;
	}
	match = name;
	cptr = suffix;
	while (*name) {
		const uint8_t *next_name = name + *name + 1;
		const uint8_t *next_suffix = next_label(wire, suffix);

		if (!label_eq(name, suffix)) {
			n = (size_t)(name - match) + *name + 1;
			if (written + n > max)
				return ESPACE;
			memcpy(dst + written, match, n);
			written += n;
			match = next_name;
			cptr = next_suffix;
		}
		name = next_name;
		suffix = next_suffix;
	}
	if (match == name) {
		if (written + 1 > max)
			return ESPACE;
		dst[written++] = 0;
	} else {
		if (written + 2 > max)
			return ESPACE;
		put_ptr(dst + written, (uint16_t)(cptr - wire));
		written += 2;
	}
	/* Similar names come together: the next one is compared with this. */
	n = (size_t)(dst - wire);
	if (written > 2 && n + written < DNS_PTR_MAX) {
		p->suffix_pos = (uint16_t)n;
		p->suffix_labels = (uint8_t)orig;
	}
	return (int)written;
}

static size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* One record's owner (libknot's write_owner()). */
static int put_owner(struct dns_pkt *p, struct dns_rrinfo *info,
		     const uint8_t *owner, uint8_t **dst, size_t *avail)
{
	int n;

	if (*owner && info->hints[0]) {
		if (*avail < 2)
			return ESPACE;
		put_ptr(*dst, info->hints[0]);
		n = 2;
	} else if (*owner &&
		   name_eq_wire(p->wire, owner, p->wire + p->suffix_pos)) {
		if (*avail < 2)
			return ESPACE;
		put_ptr(*dst, p->suffix_pos);
		set_hint(p, info, 0, p->wire + p->suffix_pos,
			 dns_name_len(owner));
		n = 2;
	} else {
		p->suffix_pos = DNS_HDR_LEN;
		p->suffix_labels = p->qlabels;
		n = put_name(p, owner, *dst, min_sz(*avail, DNS_MAX_NAME));
		if (n < 0)
			return ESPACE;
		set_hint(p, info, 0, *dst, (size_t)n);
	}
	*dst += n;
	*avail -= (size_t)n;
	return 0;
}

/* One RDATA (libknot's write_rdata()): names compressed or hinted as the
 * main type table says. */
static int put_rdata(struct dns_pkt *p, struct dns_rrinfo *info,
		     unsigned int idx, uint16_t type, const uint8_t *src,
		     size_t len, uint8_t **dst, size_t *avail)
{
	const uint8_t *end = src + len;
	uint8_t *out = *dst + 2, *start;
	size_t left;
	const int8_t *b;
	int known, n;

	if (*avail < 2)
		return ESPACE;
	left = *avail - 2;
	start = out;
	b = dns_rdata_blocks(type, 0, &known);
	for (; len && *b != DNS_B_END; b++) {
		size_t k;

		switch (*b) {
		case DNS_B_CNAME:
		case DNS_B_NAME:
			k = dns_name_len(src);
			if (*b == DNS_B_CNAME) {
				n = put_name(p, src, out,
					     min_sz(left, DNS_MAX_NAME));
				if (n < 0)
					return ESPACE;
			} else {
				if (k > min_sz(left, DNS_MAX_NAME))
					return ESPACE;
				memcpy(out, src, k);
				n = (int)k;
			}
			/* The first name of each RDATA leaves a hint. */
			if (1 + idx < DNS_HINTS && !info->hints[1 + idx])
				set_hint(p, info, 1 + idx, out, (size_t)n);
			out += n;
			left -= (size_t)n;
			src += k;
			continue;
		case DNS_B_NAPTR_HDR:
			n = dns_naptr_header_len(src, end);
			k = n < 0 ? (size_t)(end - src) : (size_t)n;
			break;
		case DNS_B_REST:
			k = (size_t)(end - src);
			break;
		default:
			k = (size_t)*b;
			break;
		}
		if (k > (size_t)(end - src)) /* not from libzscanner */
			k = (size_t)(end - src);
		if (k > left)
			return ESPACE;
		memcpy(out, src, k);
		out += k;
		left -= k;
		src += k;
	}
	dns_put16(*dst, (uint16_t)(out - start));
	*avail = left;
	*dst = out;
	return 0;
}

/* An RRset's records, each with its owner, class IN, TTL and RDATA;
 * returns the bytes written or ESPACE. */
static int put_records(struct dns_pkt *p, const struct dns_rrview *rr,
		       struct dns_rrinfo *info, unsigned int flags)
{
	uint8_t *dst = p->wire + p->size;
	size_t avail = p->max > p->size ? p->max - p->size : 0;
	const uint8_t *rd = rr->rdata;
	unsigned int i;

	for (i = 0; i < rr->count; i++) {
		size_t len = dns_get16(rd);
		uint32_t ttl = rr->ttl;

		if (put_owner(p, info, rr->owner, &dst, &avail) || avail < 8)
			return ESPACE;
		if ((flags & DNS_PF_SOAMINTTL) && rr->type == DNS_T_SOA &&
		    len >= 4 && dns_get32(rd + 2 + len - 4) < ttl)
			ttl = dns_get32(rd + 2 + len - 4);
		if ((flags & DNS_PF_ORIGTTL) && rr->type == DNS_T_RRSIG &&
		    len >= 8)
			ttl = dns_get32(rd + 2 + 4);
		dns_put16(dst, rr->type);
		dns_put16(dst + 2, DNS_C_IN);
		dns_put32(dst + 4, ttl);
		dst += 8;
		avail -= 8;
		if (put_rdata(p, info, i, rr->type, rd + 2, len, &dst, &avail))
			return ESPACE;
		rd += 2 + len;
	}
	return (int)(dst - (p->wire + p->size));
}

int dns_pkt_put(struct dns_pkt *p, const struct dns_rrview *rr, uint16_t hint,
		unsigned int flags, const struct dns_rrinfo **info_out)
{
	struct dns_rrinfo tmp, *info = &tmp;
	unsigned int i;
	int n;

	if (flags & DNS_PF_CHECKDUP)
		for (i = 0; i < p->nrr; i++)
			if (p->info[i].id == rr->id &&
			    p->info[i].type == rr->type)
				return 0;
	if (p->section != DNS_SEC_ADDITIONAL && p->nrr < DNS_PKT_RRSETS)
		info = &p->info[p->nrr];
	memset(info, 0, sizeof(*info));
	info->id = rr->id;
	info->src = rr->src;
	info->type = rr->type;
	info->hints[0] = hint;
	n = put_records(p, rr, info, flags);
	if (n < 0) {
		if (!(flags & DNS_PF_NOTRUNC))
			p->tc = 1;
		return -1;
	}
	if (!rr->count)
		return 0;
	p->size += (size_t)n;
	p->count[p->section] += rr->count;
	if (info != &tmp)
		p->nrr++;
	if (info_out)
		*info_out = info;
	return 0;
}

int dns_pkt_put_image(struct dns_pkt *p, const struct dns_rrview *rr,
		      const struct dns_image *img)
{
	struct dns_rrinfo *info = &p->info[p->nrr];

	if (img->len > p->max - p->size) {
		p->tc = 1;
		return -1;
	}
	memcpy(p->wire + p->size, img->bytes, img->len);
	p->size += img->len;
	p->count[p->section] += rr->count;
	p->suffix_pos = img->suffix_pos;
	p->suffix_labels = img->suffix_labels;
	info->id = rr->id;
	info->src = rr->src;
	info->type = rr->type;
	memcpy(info->hints, img->hints, sizeof(info->hints));
	p->nrr++;
	return 0;
}

int dns_pkt_image(const struct dns_rrview *rr, struct dns_image *img)
{
	size_t qlen = dns_name_len(rr->owner), max = 65535;
	struct dns_pkt *p;
	const struct dns_rrinfo *info;
	uint8_t *wire;
	int ret = 0;

	memset(img, 0, sizeof(*img));
	p = malloc(sizeof(*p));
	wire = malloc(max);
	if (!p || !wire) {
		ret = -ENOMEM;
		goto out;
	}
	memset(wire, 0, DNS_HDR_LEN);
	memcpy(wire + DNS_HDR_LEN, rr->owner, qlen);
	memset(wire + DNS_HDR_LEN + qlen, 0, 4);
	dns_pkt_init(p, wire, qlen, dns_name_labels(rr->owner), max);
	if (dns_pkt_put(p, rr, DNS_HDR_LEN, DNS_PF_ORIGTTL, &info))
		goto out; /* never fits: no image */
	img->len = (uint32_t)(p->size - (DNS_HDR_LEN + qlen + 4));
	img->bytes = malloc(img->len ? img->len : 1);
	if (!img->bytes) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy((uint8_t *)img->bytes, wire + DNS_HDR_LEN + qlen + 4, img->len);
	img->suffix_pos = p->suffix_pos;
	img->suffix_labels = p->suffix_labels;
	memcpy(img->hints, info->hints, sizeof(img->hints));
out:
	free(wire);
	free(p);
	return ret;
}

size_t dns_pkt_put_opt(uint8_t *dst, const struct dns_opt *o)
{
	size_t len = DNS_OPT_LEN;

	dst[0] = 0; /* the root */
	dns_put16(dst + 1, DNS_T_OPT);
	dns_put16(dst + 3, o->payload);
	dns_put32(dst + 5, (uint32_t)o->ext_rcode << 24 | o->flags);
	/* knotd adds NSID when it starts the reply, the rest at its end. */
	if (o->nsid) {
		dns_put16(dst + len, DNS_OPT_NSID);
		dns_put16(dst + len + 2, o->nsid_len);
		memcpy(dst + len + 4, o->nsid, o->nsid_len);
		len += DNS_OPT_HDR_LEN + o->nsid_len;
	}
	if (o->ede) {
		dns_put16(dst + len, DNS_OPT_EDE);
		dns_put16(dst + len + 2, 2);
		dns_put16(dst + len + 4, o->ede);
		len += DNS_OPT_EDE_LEN;
	}
	if (o->has_expire) {
		dns_put16(dst + len, DNS_OPT_EXPIRE);
		dns_put16(dst + len + 2, 4);
		dns_put32(dst + len + 4, o->expire);
		len += DNS_OPT_EXPIRE_LEN;
	}
	if (o->cookie_len) {
		dns_put16(dst + len, DNS_OPT_COOKIE);
		dns_put16(dst + len + 2, o->cookie_len);
		memcpy(dst + len + 4, o->cookie, o->cookie_len);
		len += DNS_OPT_HDR_LEN + o->cookie_len;
	}
	dns_put16(dst + 9, (uint16_t)(len - DNS_OPT_LEN));
	return len;
}

size_t dns_put_tsig_badkey(uint8_t *dst, size_t room, const struct dns_query *q,
			   uint16_t id)
{
	size_t olen = dns_name_len(q->tsig_owner);
	size_t alen = dns_name_len(q->tsig_alg);
	size_t rdlen = alen + 16, len = olen + 10 + rdlen;
	uint8_t *rd;

	if (len > room)
		return 0;
	memcpy(dst, q->tsig_owner, olen);
	dst += olen;
	dns_put16(dst, DNS_T_TSIG);
	dns_put16(dst + 2, DNS_C_ANY);
	dns_put32(dst + 4, 0);
	dns_put16(dst + 8, (uint16_t)rdlen);
	rd = dst + 10;
	memcpy(rd, q->tsig_alg, alen);
	rd += alen;
	memcpy(rd, q->tsig_time, 6);
	dns_put16(rd + 6, 300); /* fudge */
	dns_put16(rd + 8, 0);	/* MAC size */
	dns_put16(rd + 10, id); /* original ID */
	dns_put16(rd + 12, 17); /* BADKEY */
	dns_put16(rd + 14, 0);	/* other length */
	return len;
}
