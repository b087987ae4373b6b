// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/dns program (dns.c): DNS queries built by hand,
 * sent through the request path as a worker sends them, and the replies
 * parsed here, apart from the function's code: header flags and counts,
 * the question, each record with its names decompressed (every pointer
 * must point backwards), nothing left over.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>

#include <cmocka.h>

#include "config.h"
#include "frames.h"
#include "function.h"
#include "packet.h"
#include "registry.h"
#include "dns_test.h"
#include "testutil.h"
#include "util.h"

/* ---- queries ---- */

void put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static unsigned int get16(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* "www.example.com" -> wire, as written (case kept). */
static size_t wire_name(uint8_t *out, const char *name)
{
	size_t len = 0;

	while (*name && strcmp(name, ".")) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);

		out[len++] = (uint8_t)l;
		memcpy(out + len, name, l);
		len += l;
		name += l + (dot ? 1 : 0);
	}
	out[len++] = 0;
	return len;
}

/* A query: header with @flags, one question (unless @qname is NULL). */
void query(struct q *q, const char *qname, unsigned int qtype,
	   unsigned int qclass, unsigned int flags)
{
	memset(q, 0, sizeof(*q));
	put16(q->b, QID);
	put16(q->b + 2, flags);
	q->len = 12;
	if (!qname)
		return;
	put16(q->b + 4, 1);
	q->len += wire_name(q->b + 12, qname);
	put16(q->b + q->len, qtype);
	put16(q->b + q->len + 2, qclass);
	q->len += 4;
}

/* Appends an OPT record to the additional section. */
void add_opt(struct q *q, unsigned int payload, unsigned int version,
	     int dnssec_ok, const uint8_t *opts, size_t optlen)
{
	uint8_t *p = q->b + q->len;

	p[0] = 0;
	put16(p + 1, 41);
	put16(p + 3, payload);
	p[5] = 0;
	p[6] = (uint8_t)version;
	p[7] = dnssec_ok ? 0x80 : 0;
	p[8] = 0;
	put16(p + 9, (unsigned int)optlen);
	if (optlen)
		memcpy(p + 11, opts, optlen);
	q->len += 11 + optlen;
	put16(q->b + 10, get16(q->b + 10) + 1);
}

/* ---- replies ---- */

/*
 * Reads the name at *off: every pointer must point backwards, at a label
 * that lies before it; the text keeps the bytes' case.
 */
static void read_name(const struct reply *r, size_t *off, char *out)
{
	size_t p = *off, o = 0, hops = 0, total = 0;
	int jumped = 0;

	for (;;) {
		assert_true(p < (size_t)r->len);
		if ((r->b[p] & 0xc0) == 0xc0) {
			size_t to;

			assert_true(p + 1 < (size_t)r->len);
			to = (size_t)(r->b[p] & 0x3f) << 8 | r->b[p + 1];
			if (to >= p)
				fail_msg("pointer at %zu to %zu, not backwards",
					 p, to);
			assert_true(to >= 12); /* not into the header */
			if (!jumped)
				*off = p + 2;
			jumped = 1;
			p = to;
			assert_true(++hops < 128);
			continue;
		}
		assert_true(r->b[p] <= 63); /* a label, not 0x40 or 0x80 */
		if (!r->b[p])
			break;
		assert_true(p + 1 + r->b[p] <= (size_t)r->len);
		memcpy(out + o, r->b + p + 1, r->b[p]);
		o += r->b[p];
		out[o++] = '.';
		total += r->b[p] + 1U;
		assert_true(total < 255);
		p += r->b[p] + 1U;
	}
	if (!jumped)
		*off = p + 1;
	if (!o)
		out[o++] = '.';
	out[o] = '\0';
}

static void read_rdata(const struct reply *r, struct rr *rr, size_t off,
		       size_t rdlen)
{
	const uint8_t *d = r->b + off;
	char name[300], name2[300];
	size_t p = off, i, o = 0;

	switch (rr->type) {
	case 1:
		assert_int_equal(rdlen, 4);
		snprintf(rr->data, sizeof(rr->data), "%u.%u.%u.%u", d[0], d[1],
			 d[2], d[3]);
		return;
	case 28:
		assert_int_equal(rdlen, 16);
		for (i = 0; i < 16; i += 2)
			o += (size_t)snprintf(rr->data + o,
					      sizeof(rr->data) - o, "%s%x",
					      i ? ":" : "", get16(d + i));
		return;
	case 2:
	case 5:
		read_name(r, &p, rr->data);
		break;
	case 15:
		p += 2;
		read_name(r, &p, name);
		snprintf(rr->data, sizeof(rr->data), "%u %s", get16(d), name);
		break;
	case 6:
		read_name(r, &p, name);
		read_name(r, &p, name2);
		assert_int_equal(off + rdlen - p, 20);
		snprintf(rr->data, sizeof(rr->data), "%s %s %u %u", name, name2,
			 get32(r->b + p), get32(r->b + p + 16));
		p += 20;
		break;
	case 33:
		p += 6;
		read_name(r, &p, name);
		snprintf(rr->data, sizeof(rr->data), "%u %u %u %s", get16(d),
			 get16(d + 2), get16(d + 4), name);
		break;
	case 16:
		while (p < off + rdlen) {
			size_t l = r->b[p];

			assert_true(p + 1 + l <= off + rdlen);
			o += (size_t)snprintf(
				rr->data + o, sizeof(rr->data) - o,
				"%s\"%.*s\"", o ? " " : "", (int)l,
				(const char *)r->b + p + 1);
			p += 1 + l;
		}
		break;
	default: /* OPT and others: hex */
		for (i = 0; i < rdlen && o + 3 < sizeof(rr->data); i++)
			o += (size_t)snprintf(rr->data + o,
					      sizeof(rr->data) - o, "%02x",
					      d[i]);
		return;
	}
	assert_int_equal(p, off + rdlen); /* the names filled the RDATA */
}

/* Parses r->b[0..len) and checks its structure. */
static void parse(struct reply *r)
{
	size_t off = 12;
	unsigned int i, n;

	assert_true(r->len >= 12);
	r->id = get16(r->b);
	r->flags = get16(r->b + 2);
	r->rcode = r->flags & 0xf;
	r->qd = get16(r->b + 4);
	r->an = get16(r->b + 6);
	r->ns = get16(r->b + 8);
	r->ar = get16(r->b + 10);
	r->opt = -1;
	r->qname[0] = '\0';
	assert_int_equal(r->id, QID);
	assert_true(r->flags & QR);
	assert_true(r->qd <= 1);
	if (r->qd) {
		/* The question is the query's: no pointer in it. */
		size_t start = off;

		read_name(r, &off, r->qname);
		assert_true(off > start + 0 && !memchr(r->b + start, 0xc0, 0));
		assert_true(off + 4 <= (size_t)r->len);
		r->qtype = get16(r->b + off);
		r->qclass = get16(r->b + off + 2);
		off += 4;
	}
	n = r->an + r->ns + r->ar;
	assert_true(n <= 64);
	for (i = 0; i < n; i++) {
		struct rr *rr = &r->rr[i];
		size_t rdlen;

		read_name(r, &off, rr->owner);
		assert_true(off + 10 <= (size_t)r->len);
		rr->type = get16(r->b + off);
		rr->rclass = get16(r->b + off + 2);
		rr->ttl = get32(r->b + off + 4);
		rdlen = get16(r->b + off + 8);
		off += 10;
		assert_true(off + rdlen <= (size_t)r->len);
		if (rr->type == 41) {
			assert_int_equal(r->opt, -1);	 /* one OPT */
			assert_true(i >= r->an + r->ns); /* in additional */
			assert_string_equal(rr->owner, ".");
			r->opt = (int)i;
		}
		read_rdata(r, rr, off, rdlen);
		off += rdlen;
	}
	assert_int_equal(off, (size_t)r->len); /* nothing left over */
}

/*
 * Sends @q as a worker would: in an Ethernet/IPv4/UDP frame through
 * rr_serve_keep(), with an interface MTU of @mtu (the function's room is
 * the MTU less the IPv4 and UDP headers). Fills @r with the reply, or sets
 * r->len to the request path's (negative) result.
 */
void ask_mtu(const struct q *q, uint32_t mtu, struct reply *r)
{
	uint8_t frame[4200];
	struct rr_request ctx = { .queue = 0, .thread = 0 };
	struct frame_layout lay;
	struct rr_pkt pkt;
	int ret;

	assert_true(build_request(frame, sizeof(frame), 40000, 53, q->b,
				  (uint32_t)q->len, &lay) > 0);
	rr_fn_request_bind(&ctx, inst, 0, counters);
	ret = rr_serve_keep(frame, lay.len, sizeof(frame), mtu, 0, fn, &ctx,
			    NULL, NULL);
	memset(r, 0, sizeof(*r));
	r->len = ret;
	if (ret < 0)
		return;
	assert_int_equal(rr_parse(frame, (uint32_t)ret, &pkt), 0);
	r->len = (int)pkt.payload_len;
	memcpy(r->b, frame + pkt.payload_off, pkt.payload_len);
	parse(r);
}

void ask(const struct q *q, struct reply *r)
{
	ask_mtu(q, 4000, r);
}

void ask_tcp(const struct q *q, struct reply *r)
{
	static uint8_t buf[65535];
	struct rr_request ctx = { .family = AF_INET,
				  .src_port = 40000,
				  .dst_port = 53,
				  .transport = RR_TRANSPORT_TCP };
	uint32_t flags = 0;
	int ret;

	rr_fn_request_bind(&ctx, inst, 0, counters);
	ctx.reply_flags = &flags;
	memcpy(buf, q->b, q->len);
	ret = fn->handler(&ctx, buf, q->len, sizeof(buf));
	memset(r, 0, sizeof(*r));
	r->len = ret;
	r->no_cache = !!(flags & RR_REPLY_NO_CACHE);
	if (ret <= 0)
		return;
	assert_true(ret <= (int)sizeof(buf));
	memcpy(r->b, buf, (size_t)ret);
	parse(r);
}

/* One answer/authority/additional record as "owner type ttl data". */
void check_rr(const struct rr *rr, const char *owner, unsigned int type,
	      uint32_t ttl, const char *data)
{
	if (strcmp(rr->owner, owner) || rr->type != type || rr->ttl != ttl ||
	    rr->rclass != 1 || (data && strcmp(rr->data, data)))
		fail_msg(
			"got %s %u class %u ttl %u [%s], want %s %u ttl %u [%s]",
			rr->owner, rr->type, rr->rclass, rr->ttl, rr->data,
			owner, type, ttl, data ? data : "*");
}

void check_counts(const struct reply *r, unsigned int rcode, unsigned int flags,
		  unsigned int an, unsigned int ns, unsigned int ar)
{
	if (r->rcode != rcode || (r->flags & (AA | TC | RD)) != flags ||
	    r->an != an || r->ns != ns || r->ar != ar)
		fail_msg("rcode %u flags %#x an %u ns %u ar %u; want rcode %u "
			 "flags %#x an %u ns %u ar %u",
			 r->rcode, r->flags & (AA | TC | RD), r->an, r->ns,
			 r->ar, rcode, flags, an, ns, ar);
}

void check_exchanges(const struct exchange *x, size_t n)
{
	const size_t max = ARRAY_SIZE(x->rr);
	struct reply r;
	struct q q;
	size_t i, k;

	for (i = 0; i < n; i++, x++) {
		query(&q, x->q.name, x->q.type, x->q.qclass, x->q.flags);
		ask(&q, &r);
		check_counts(&r, x->want.rcode, x->want.flags, x->want.an,
			     x->want.ns, x->want.ar);
		for (k = 0; k < max && x->rr[k].owner; k++)
			check_rr(&r.rr[k], x->rr[k].owner, x->rr[k].type,
				 x->rr[k].ttl, x->rr[k].data);
	}
}
