// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the dns function (functions/dns.c) on the bytes of its
 * replies: queries are built by hand, sent through the request path as a
 * worker sends them (rr_serve_keep() on an Ethernet/IPv4/UDP frame, the
 * function's instance made by rr_fn_instance_new()), and every reply is
 * parsed here, apart from the function's code: header flags and counts,
 * the question as the query had it, each record with its owner and names
 * decompressed (every compression pointer must point backwards to a label
 * inside the message), nothing left over.
 *
 * The expectations are knotd's (Knot DNS 3.2.6) answers from the same
 * zone, configs/example.zone; the tests run from the repository's root.
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

#include <cmocka.h>

#include "config.h"
#include "function.h"
#include "packet.h"
#include "registry.h"
#include "testutil.h"

#define ZONE "configs/example.zone"
#define QID 0xbeef

static const struct rr_function *fn;
static struct rr_fn_instance *inst;
static struct rr_fn_counters ctrs;
static uint64_t counters[RR_FN_MAX_COUNTERS];
static char err[512];

/* ---- queries ---- */

struct q {
	uint8_t b[1024];
	size_t len;
};

static void put16(uint8_t *p, unsigned int v)
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
static void query(struct q *q, const char *qname, unsigned int qtype,
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
static void add_opt(struct q *q, unsigned int payload, unsigned int version,
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

struct rr {
	char owner[300];
	unsigned int type, rclass;
	uint32_t ttl;
	char data[1100]; /* names decompressed, A/AAAA/TXT/MX/SOA as text */
};

struct reply {
	int len; /* > 0: a reply; else the request path's result */
	uint8_t b[4096];
	unsigned int id, flags, rcode, qd, an, ns, ar;
	char qname[300];
	unsigned int qtype, qclass;
	struct rr rr[64]; /* answer, authority, additional in order */
	int opt;	  /* index in rr[] of the OPT record, or -1 */
};

#define QR 0x8000
#define AA 0x0400
#define TC 0x0200
#define RD 0x0100

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
static void ask_mtu(const struct q *q, uint32_t mtu, struct reply *r)
{
	uint8_t frame[4200] = { 0 };
	uint8_t *ip = frame + 14, *udp = ip + 20;
	struct rr_request ctx = { .queue = 0, .thread = 0 };
	struct rr_pkt pkt;
	int ret;

	frame[12] = 0x08;
	ip[0] = 0x45;
	put16(ip + 2, (unsigned int)(20 + 8 + q->len));
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
	put16(udp, 40000);
	put16(udp + 2, 53);
	put16(udp + 4, (unsigned int)(8 + q->len));
	memcpy(udp + 8, q->b, q->len);
	{
		uint16_t c = rr_csum_fold(rr_csum_partial(ip, 20, 0));

		memcpy(ip + 10, &c, 2);
	}
	rr_fn_request_bind(&ctx, inst, 0, counters);
	ret = rr_serve_keep(frame, (uint32_t)(14 + 20 + 8 + q->len),
			    sizeof(frame), mtu, 0, fn, &ctx, NULL, NULL);
	memset(r, 0, sizeof(*r));
	r->len = ret;
	if (ret < 0)
		return;
	assert_int_equal(rr_parse(frame, (uint32_t)ret, &pkt), 0);
	r->len = (int)pkt.payload_len;
	memcpy(r->b, frame + pkt.payload_off, pkt.payload_len);
	parse(r);
}

static void ask(const struct q *q, struct reply *r)
{
	ask_mtu(q, 4000, r);
}

/* One answer/authority/additional record as "owner type ttl data". */
static void check_rr(const struct rr *rr, const char *owner, unsigned int type,
		     uint32_t ttl, const char *data)
{
	if (strcmp(rr->owner, owner) || rr->type != type || rr->ttl != ttl ||
	    rr->rclass != 1 || (data && strcmp(rr->data, data)))
		fail_msg(
			"got %s %u class %u ttl %u [%s], want %s %u ttl %u [%s]",
			rr->owner, rr->type, rr->rclass, rr->ttl, rr->data,
			owner, type, ttl, data ? data : "*");
}

static void check_counts(const struct reply *r, unsigned int rcode,
			 unsigned int flags, unsigned int an, unsigned int ns,
			 unsigned int ar)
{
	if (r->rcode != rcode || (r->flags & (AA | TC | RD)) != flags ||
	    r->an != an || r->ns != ns || r->ar != ar)
		fail_msg("rcode %u flags %#x an %u ns %u ar %u; want rcode %u "
			 "flags %#x an %u ns %u ar %u",
			 r->rcode, r->flags & (AA | TC | RD), r->an, r->ns,
			 r->ar, rcode, flags, an, ns, ar);
}

/* ---- set-up ---- */

static int load(const char *const *kv, size_t n)
{
	struct rr_fn_setting s[8];
	size_t i;

	rr_fn_instance_free(inst);
	inst = NULL;
	for (i = 0; i < n; i++) {
		s[i].key = kv[2 * i];
		s[i].value = kv[2 * i + 1];
		s[i].file = "test.conf";
		s[i].line = (unsigned int)(10 + i);
	}
	memset(&ctrs, 0, sizeof(ctrs));
	memset(counters, 0, sizeof(counters));
	err[0] = '\0';
	return rr_fn_instance_new(fn, 53, s, n, 1, &ctrs, &inst, err,
				  sizeof(err));
}

static void load_example(void)
{
	const char *kv[] = { "zone", ZONE };

	if (load(kv, 1))
		fail_msg("example zone refused: %s", err);
}

static uint64_t counter(const char *name)
{
	uint32_t i;

	for (i = 0; i < ctrs.n; i++)
		if (!strcmp(ctrs.name[i], name))
			return counters[i];
	fail_msg("no counter %s", name);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	fn = rr_registry_find("dns");
	assert_non_null(fn);
	assert_true(fn->flags & RR_FN_OPT_IN);
	assert_int_equal(fn->port, 53);
	load_example();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rr_fn_instance_free(inst);
	inst = NULL;
	return 0;
}

/* ---- tests ---- */

static void test_answer(void **state)
{
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* The question comes back with the query's case; RD is copied;
	 * the owner is a pointer to the question (2 bytes). */
	query(&q, "WwW.ExAmPlE.cOm", 1, 1, RD);
	ask(&q, &r);
	check_counts(&r, 0, AA | RD, 2, 0, 0);
	assert_string_equal(r.qname, "WwW.ExAmPlE.cOm.");
	assert_int_equal(r.qtype, 1);
	assert_int_equal(r.qclass, 1);
	check_rr(&r.rr[0], "WwW.ExAmPlE.cOm.", 1, 3600, "192.0.2.80");
	check_rr(&r.rr[1], "WwW.ExAmPlE.cOm.", 1, 3600, "192.0.2.81");
	assert_int_equal(r.len, 65); /* what knotd sends: both owners are
				      * pointers to the question */
	assert_memory_equal(r.b + 33, "\xc0\x0c", 2);

	query(&q, "www.example.com", 28, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	check_rr(&r.rr[0], "www.example.com.", 28, 3600,
		 "2001:db8:0:0:0:0:0:80");

	query(&q, "example.com", 16, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	check_rr(&r.rr[0], "example.com.", 16, 3600, "\"v=spf1 mx -all\"");

	/* SOA in the answer keeps its own TTL. */
	query(&q, "example.com", 6, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	check_rr(&r.rr[0], "example.com.", 6, 3600,
		 "ns1.example.com. hostmaster.example.com. 2026112401 300");
	assert_int_equal(counter("dns_noerror"), 4);
}

static void test_additional(void **state)
{
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* MX: the exchanges in the zone get their A and AAAA in the
	 * additional section; the one outside (example.net) does not. The
	 * target's suffix points into the question, so it has the query's
	 * case. */
	query(&q, "EXAMPLE.com", 15, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 2, 0, 2);
	check_rr(&r.rr[0], "EXAMPLE.com.", 15, 3600, "10 mail.EXAMPLE.com.");
	check_rr(&r.rr[1], "EXAMPLE.com.", 15, 3600, "20 mail2.example.net.");
	check_rr(&r.rr[2], "mail.EXAMPLE.com.", 1, 3600, "192.0.2.25");
	check_rr(&r.rr[3], "mail.EXAMPLE.com.", 28, 3600,
		 "2001:db8:0:0:0:0:0:25");

	/* NS at the apex: an answer, not a referral; glue for ns1. */
	query(&q, "example.com", 2, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 2, 0, 2);
	check_rr(&r.rr[0], "example.com.", 2, 3600, "ns1.example.com.");
	check_rr(&r.rr[1], "example.com.", 2, 3600, "ns2.example.net.");
	check_rr(&r.rr[2], "ns1.example.com.", 1, 3600, "192.0.2.53");
	check_rr(&r.rr[3], "ns1.example.com.", 28, 3600,
		 "2001:db8:0:0:0:0:0:53");

	/* SRV targets too. */
	query(&q, "_sip._udp.example.com", 33, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 1);
	check_rr(&r.rr[0], "_sip._udp.example.com.", 33, 3600,
		 "10 60 5060 sip.example.com.");
	check_rr(&r.rr[1], "sip.example.com.", 1, 3600, "192.0.2.60");

	/* ANY gets one RRset, the node's first by type, as from knotd. */
	query(&q, "example.com", 255, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	check_rr(&r.rr[0], "example.com.", 1, 3600, "192.0.2.1");
}

static void test_cname(void **state)
{
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* A chain inside the zone is followed to the end. */
	query(&q, "alias.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 4, 0, 0);
	check_rr(&r.rr[0], "alias.example.com.", 5, 3600, "ftp.example.com.");
	check_rr(&r.rr[1], "ftp.example.com.", 5, 3600, "www.example.com.");
	check_rr(&r.rr[2], "www.example.com.", 1, 3600, "192.0.2.80");
	check_rr(&r.rr[3], "www.example.com.", 1, 3600, "192.0.2.81");

	/* Asking for the CNAME itself does not follow it. */
	query(&q, "alias.example.com", 5, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);

	/* Out of the zone: the CNAME alone. */
	query(&q, "outside.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	check_rr(&r.rr[0], "outside.example.com.", 5, 3600, "www.example.net.");

	/* To a name that does not exist: the RCODE is the target's. */
	query(&q, "dangling.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 3, AA, 1, 1, 0);
	check_rr(&r.rr[1], "example.com.", 6, 300, NULL);

	/* A loop ends when the chain comes round. */
	query(&q, "loop1.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 2, 0, 0);
	check_rr(&r.rr[0], "loop1.example.com.", 5, 3600, "loop2.example.com.");
	check_rr(&r.rr[1], "loop2.example.com.", 5, 3600, "loop1.example.com.");
}

static void test_negative(void **state)
{
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* NXDOMAIN: the SOA in authority, with the SOA MINIMUM as TTL. */
	query(&q, "nope.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 3, AA, 0, 1, 0);
	check_rr(&r.rr[0], "example.com.", 6, 300,
		 "ns1.example.com. hostmaster.example.com. 2026112401 300");
	assert_int_equal(counter("dns_nxdomain"), 1);

	/* NODATA: the name is there, the type is not. */
	query(&q, "www.example.com", 16, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 0, 1, 0);
	check_rr(&r.rr[0], "example.com.", 6, 300, NULL);

	/* An empty non-terminal exists: NODATA, not NXDOMAIN. */
	query(&q, "b.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 0, 1, 0);
	query(&q, "a.b.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	query(&q, "c.b.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 3, AA, 0, 1, 0);
}

static void test_wildcard(void **state)
{
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* The wildcard answers with the QNAME as owner. */
	query(&q, "X.wild.example.com", 16, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	check_rr(&r.rr[0], "X.wild.example.com.", 16, 3600,
		 "\"from the wildcard\"");
	query(&q, "y.z.wild.example.com", 16, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	check_rr(&r.rr[0], "y.z.wild.example.com.", 16, 3600, NULL);
	/* Another type at a wildcard's name: NODATA. */
	query(&q, "x.wild.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 0, 1, 0);
}

static void test_referral(void **state)
{
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* Below a zone cut: a referral, not authoritative, with glue. */
	query(&q, "www.sub.example.com", 1, 1, RD);
	ask(&q, &r);
	check_counts(&r, 0, RD, 0, 2, 1);
	/* In canonical RDATA order, as knotd keeps them. */
	check_rr(&r.rr[0], "sub.example.com.", 2, 3600, "ns.sub.example.com.");
	check_rr(&r.rr[1], "sub.example.com.", 2, 3600, "ns.example.net.");
	check_rr(&r.rr[2], "ns.sub.example.com.", 1, 3600, "192.0.2.54");
	/* At the cut, and for the glue's own name, too. */
	query(&q, "sub.example.com", 2, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, 0, 0, 2, 1);
	query(&q, "ns.sub.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, 0, 0, 2, 1);
	/* DS is the parent's: answered at the cut (here NODATA). */
	query(&q, "sub.example.com", 43, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 0, 1, 0);
	assert_int_equal(counter("dns_referral"), 3);
}

static void test_refused_and_classes(void **state)
{
	static const uint8_t ede[] = { 0, 15, 0, 2, 0, 20 };
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* Outside every zone. */
	query(&q, "www.example.org", 1, 1, RD);
	ask(&q, &r);
	check_counts(&r, 5, RD, 0, 0, 0);
	assert_string_equal(r.qname, "www.example.org.");
	/* With EDNS, the reason as an Extended DNS Error (20: not
	 * authoritative), as knotd gives it. */
	add_opt(&q, 1232, 0, 0, NULL, 0);
	ask(&q, &r);
	check_counts(&r, 5, RD, 0, 0, 1);
	assert_int_equal(r.rr[0].type, 41);
	assert_memory_equal(r.b + r.len - 6, ede, 6);
	/* Names that only end like a zone are outside it. */
	query(&q, "xexample.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 5, 0, 0, 0, 0);
	assert_int_equal(counter("dns_refused"), 3);

	/* Class ANY is answered as IN; CHAOS and others are refused. */
	query(&q, "www.example.com", 1, 255, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 2, 0, 0);
	assert_int_equal(r.rr[0].rclass, 1);
	query(&q, "version.bind", 16, 3, 0);
	ask(&q, &r);
	check_counts(&r, 5, 0, 0, 0, 0);
	query(&q, "www.example.com", 1, 4, 0);
	ask(&q, &r);
	check_counts(&r, 5, 0, 0, 0, 0);
}

static void test_formerr_notimp(void **state)
{
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* No question: FORMERR (with the OPT if there was one). */
	query(&q, NULL, 0, 0, RD);
	ask(&q, &r);
	check_counts(&r, 1, RD, 0, 0, 0);
	assert_int_equal(r.qd, 0);
	add_opt(&q, 1232, 0, 0, NULL, 0);
	ask(&q, &r);
	check_counts(&r, 1, RD, 0, 0, 1);

	/* Bytes after the last record: FORMERR with the question and no
	 * OPT. */
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 1232, 0, 0, NULL, 0);
	q.b[q.len++] = 0;
	ask(&q, &r);
	check_counts(&r, 1, 0, 0, 0, 0);
	assert_string_equal(r.qname, "www.example.com.");

	/* An OPT outside the additional section, or two of them. */
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 1232, 0, 0, NULL, 0);
	put16(q.b + 6, 1);
	put16(q.b + 10, 0);
	ask(&q, &r);
	check_counts(&r, 1, 0, 0, 0, 0);
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 1232, 0, 0, NULL, 0);
	add_opt(&q, 1232, 0, 0, NULL, 0);
	ask(&q, &r);
	check_counts(&r, 1, 0, 0, 0, 0);
	/* An option that overruns the OPT's RDATA. */
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 1232, 0, 0, (const uint8_t *)"\0\3\0\5ab", 6);
	ask(&q, &r);
	check_counts(&r, 1, 0, 0, 0, 0);
	assert_int_equal(counter("dns_formerr"), 6);

	/* Opcodes other than QUERY: NOTIMP, the opcode kept. NOTIFY and
	 * UPDATE are not allowed from anyone: NOTAUTH. */
	query(&q, "www.example.com", 1, 1, 2 << 11);
	ask(&q, &r);
	check_counts(&r, 4, 0, 0, 0, 0);
	assert_int_equal((r.flags >> 11) & 0xf, 2);
	query(&q, "example.com", 6, 1, 4 << 11);
	ask(&q, &r);
	check_counts(&r, 9, 0, 0, 0, 0);
	/* QTYPE 0 and AXFR over UDP: NOTIMP; IXFR: NOTAUTH. */
	query(&q, "example.com", 0, 1, 0);
	ask(&q, &r);
	check_counts(&r, 4, 0, 0, 0, 0);
	query(&q, "example.com", 252, 1, 0);
	ask(&q, &r);
	check_counts(&r, 4, 0, 0, 0, 0);
	query(&q, "example.com", 251, 1, 0);
	ask(&q, &r);
	check_counts(&r, 9, 0, 0, 0, 0);
	assert_int_equal(counter("dns_notimp"), 3);
}

/* No reply at all, as knotd: what fails before the question ends, and
 * responses (answering them makes loops). */
static void test_ignored(void **state)
{
	static const uint8_t bad_qnames[][16] = {
		{ 0x40, 'a', 0, 0, 1, 0, 1 },		    /* label type 01 */
		{ 0x80, 'a', 0, 0, 1, 0, 1 },		    /* label type 10 */
		{ 3, 'w', 'w', 'w', 0xc0, 12, 0, 1, 0, 1 }, /* a pointer */
		{ 3, 'w', 'w', 'w', 0, 0, 1 },		    /* QCLASS cut */
		{ 5, 'w', 'w', 'w' },			    /* the label cut */
	};
	static const size_t bad_len[] = { 7, 7, 10, 7, 4 };
	struct reply r;
	struct q q;
	size_t i;

	(void)state;
	load_example();
	query(&q, "www.example.com", 1, 1, 0);
	q.len = 11;
	ask(&q, &r);
	assert_int_equal(r.len, -RR_DROP_NO_REPLY);
	query(&q, "www.example.com", 1, 1, QR);
	ask(&q, &r);
	assert_int_equal(r.len, -RR_DROP_NO_REPLY);
	query(&q, "www.example.com", 1, 1, 0);
	put16(q.b + 4, 2); /* two questions */
	ask(&q, &r);
	assert_int_equal(r.len, -RR_DROP_NO_REPLY);
	for (i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++) {
		query(&q, NULL, 0, 0, 0);
		put16(q.b + 4, 1);
		memcpy(q.b + 12, bad_qnames[i], bad_len[i]);
		q.len = 12 + bad_len[i];
		ask(&q, &r);
		if (r.len != -RR_DROP_NO_REPLY)
			fail_msg("bad QNAME %zu answered (%d)", i, r.len);
	}
	/* 256 bytes of name. */
	query(&q, NULL, 0, 0, 0);
	put16(q.b + 4, 1);
	for (i = 0; i < 4; i++) {
		q.b[12 + i * 64] = 63;
		memset(q.b + 13 + i * 64, 'a', 63);
	}
	q.len = 12 + 256 + 1 + 4;
	ask(&q, &r);
	assert_int_equal(r.len, -RR_DROP_NO_REPLY);
	assert_int_equal(counter("dns_ignored"), 9);
}

static void test_edns(void **state)
{
	static const uint8_t nsid[] = { 0, 3, 0, 0 };
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* An OPT in the reply: version 0, our payload size (1232, knotd's
	 * default), DO echoed, no options echoed. */
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 4096, 0, 1, nsid, sizeof(nsid));
	ask(&q, &r);
	check_counts(&r, 0, AA, 2, 0, 1);
	assert_int_equal(r.opt, 2);
	assert_int_equal(r.rr[2].rclass, 1232);
	assert_int_equal(r.rr[2].ttl, 0x8000);
	assert_string_equal(r.rr[2].data, "");
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 4096, 0, 0, NULL, 0);
	ask(&q, &r);
	assert_int_equal(r.rr[2].ttl, 0);

	/* EDNS EXPIRE: the SOA's EXPIRE (1209600), as from a primary. Also
	 * in a refusal once a zone is found, which for DS is the parent's
	 * whatever the opcode. */
	{
		static const uint8_t expire[] = { 0, 9, 0, 0 };
		static const uint8_t value[] = { 0, 9, 0, 4, 0, 0x12, 0x75, 0 };

		query(&q, "www.example.com", 1, 1, 0);
		add_opt(&q, 1232, 0, 0, expire, sizeof(expire));
		ask(&q, &r);
		check_counts(&r, 0, AA, 2, 0, 1);
		assert_memory_equal(r.b + r.len - 8, value, 8);
		query(&q, "sub.example.com", 43, 1, 4 << 11);
		add_opt(&q, 1232, 0, 0, expire, sizeof(expire));
		ask(&q, &r);
		check_counts(&r, 9, 0, 0, 0, 1);
		assert_memory_equal(r.b + r.len - 8, value, 8);
		query(&q, "www.example.org", 1, 1, 0);
		add_opt(&q, 1232, 0, 0, expire, sizeof(expire));
		ask(&q, &r);
		check_counts(&r, 5, 0, 0, 0, 1);
		assert_int_equal(r.b[r.len - 7], 6); /* the EDE alone */
	}

	/* EDNS version 1: BADVERS (16: 1 in the OPT, 0 in the header),
	 * the question and nothing else. */
	query(&q, "www.example.com", 1, 1, RD);
	add_opt(&q, 1232, 1, 1, NULL, 0);
	ask(&q, &r);
	check_counts(&r, 0, RD, 0, 0, 1);
	assert_int_equal(r.rr[0].ttl, 0x01008000);
	assert_string_equal(r.qname, "www.example.com.");
	assert_int_equal(counter("dns_other_rcode"), 2);
}

static void test_truncation(void **state)
{
	const char *kv[] = { "zone", ZONE, "udp_max_payload", "4096" };
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	/* About 700 bytes of TXT: over 512 without EDNS, so TC with the
	 * answer section empty, authoritative and NOERROR. */
	query(&q, "long.example.com", 16, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA | TC, 0, 0, 0);
	assert_true(r.len <= 512);
	/* EDNS with 1232 bytes: it fits. */
	add_opt(&q, 1232, 0, 0, NULL, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 1);
	assert_true(r.len > 512 && r.len <= 1232);
	/* An advertised size under 512 counts as 512. */
	query(&q, "long.example.com", 16, 1, 0);
	add_opt(&q, 100, 0, 0, NULL, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA | TC, 0, 0, 1);
	/* The room the reply has caps it too: an MTU of 600 leaves 572
	 * bytes for DNS. */
	query(&q, "long.example.com", 16, 1, 0);
	add_opt(&q, 1232, 0, 0, NULL, 0);
	ask_mtu(&q, 600, &r);
	check_counts(&r, 0, AA | TC, 0, 0, 1);
	assert_true(r.len <= 572);

	/* knotd keeps the whole RRsets that fit: the CNAME, and TC. */
	query(&q, "longalias.example.com", 16, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA | TC, 1, 0, 0);
	check_rr(&r.rr[0], "longalias.example.com.", 5, 3600,
		 "long.example.com.");

	/* About 2000 bytes: over our 1232 whatever the client offers... */
	query(&q, "huge.example.com", 16, 1, 0);
	add_opt(&q, 4096, 0, 0, NULL, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA | TC, 0, 0, 1);
	assert_true(r.len <= 1232);
	assert_int_equal(counter("dns_truncated"), 5);
	/* ... unless udp_max_payload allows more; and it says so. */
	assert_int_equal(load(kv, 2), 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 1);
	assert_true(r.len > 1232);
	assert_int_equal(r.rr[1].rclass, 4096);
}

static void test_several_zones(void **state)
{
	char *child = t_write_file(
		"/tmp/rr-test-dns",
		"$ORIGIN sub.example.com.\n"
		"@ 600 SOA ns.sub.example.com. h.sub.example.com. 1 2 3 4 60\n"
		"@ 600 NS ns\nns 600 A 192.0.2.54\nwww 600 A 192.0.2.55\n");
	const char *kv[] = { "zone", ZONE, "zone", child };
	struct reply r;
	struct q q;

	(void)state;
	/* The origin comes from the SOA; the child zone answers below its
	 * apex instead of the parent's referral. */
	if (load(kv, 2))
		fail_msg("refused: %s", err);
	query(&q, "www.sub.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	check_rr(&r.rr[0], "www.sub.example.com.", 1, 600, "192.0.2.55");
	query(&q, "nope.sub.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 3, AA, 0, 1, 0);
	check_rr(&r.rr[0], "sub.example.com.", 6, 60, NULL);
	/* DS for the child's apex is the parent's. */
	query(&q, "sub.example.com", 43, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 0, 1, 0);
	check_rr(&r.rr[0], "example.com.", 6, 300, NULL);
	query(&q, "www.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 2, 0, 0);
	unlink(child);
}

/* What knotd makes of a zone file, and DNAME. */
static void test_zone_rules(void **state)
{
	char *zone = t_write_file(
		"/tmp/rr-test-dns",
		"$ORIGIN t.\n$TTL 100\n@ SOA ns admin 1 2 3 4 50\n@ NS ns\n"
		"ns A 192.0.2.1\nsig A 192.0.2.2\n"
		"sig RRSIG A 8 2 3600 20300101000000 20200101000000 1 t. AAAA\n"
		"ttl 10 A 192.0.2.3\nttl 20 A 192.0.2.4\n"
		"dup A 192.0.2.5\ndup A 192.0.2.5\nOut.Of.Zone. A 192.0.2.9\n"
		"dn DNAME target\ntarget A 192.0.2.6\nx.target A 192.0.2.7\n");
	const char *kv[] = { "zone", zone };
	struct reply r;
	struct q q;

	(void)state;
	if (load(kv, 1))
		fail_msg("refused: %s", err);
	/* An RRSIG answers with its original TTL field. */
	query(&q, "sig.t", 46, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	check_rr(&r.rr[0], "sig.t.", 46, 3600, NULL);
	/* An RRset's TTL is its last record's; a record twice is once. */
	query(&q, "ttl.t", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 2, 0, 0);
	check_rr(&r.rr[0], "ttl.t.", 1, 20, "192.0.2.3");
	check_rr(&r.rr[1], "ttl.t.", 1, 20, "192.0.2.4");
	query(&q, "dup.t", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 0);
	/* What is outside the zone is left out of it. */
	query(&q, "out.of.zone", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 5, 0, 0, 0, 0);
	/* DNAME: the DNAME, a CNAME made for the name, then its target. */
	query(&q, "X.dn.t", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 3, 0, 0);
	check_rr(&r.rr[0], "dn.t.", 39, 100, NULL);
	check_rr(&r.rr[1], "X.dn.t.", 5, 100, "x.target.t.");
	check_rr(&r.rr[2], "x.target.t.", 1, 100, "192.0.2.7");
	query(&q, "y.dn.t", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 3, AA, 2, 1, 0);
	unlink(zone);
	load_example();
}

static void check_init_error(const char *const *kv, size_t n, const char *what)
{
	if (load(kv, n) != -EINVAL)
		fail_msg("accepted, or not with -EINVAL: '%s'", err);
	if (!strstr(err, what))
		fail_msg("error \"%s\" does not mention \"%s\"", err, what);
	if (strchr(err, '\n'))
		fail_msg("error \"%s\" is more than one line", err);
	if (!strstr(err, "function dns"))
		fail_msg("error \"%s\" does not name the function", err);
}

static void test_init_errors(void **state)
{
	char *bad = t_write_file("/tmp/rr-test-dns",
				 "$ORIGIN t.\n@ SOA a. b. 1 2 3 4 5\n"
				 "@ NS a.\nwww A 192.0.2.300\n");
	char *nosoa = t_write_file("/tmp/rr-test-dns",
				   "$ORIGIN t.\nwww A 192.0.2.1\n");
	char *cname = t_write_file("/tmp/rr-test-dns",
				   "$ORIGIN t.\n@ SOA a. b. 1 2 3 4 5\n"
				   "@ NS a.\nx CNAME y\nx A 192.0.2.1\n");
	char *relative = t_write_file("/tmp/rr-test-dns",
				      "@ SOA a b 1 2 3 4 5\n@ NS a\n");
	char *chaos = t_write_file("/tmp/rr-test-dns",
				   "$ORIGIN t.\n@ SOA a. b. 1 2 3 4 5\n"
				   "x CH TXT \"hi\"\n");
	char *twice = t_write_file("/tmp/rr-test-dns",
				   "$ORIGIN t.\n@ SOA a. b. 1 2 3 4 5\n"
				   "@ SOA a. b. 9 2 3 4 5\n@ NS a.\n");
	char where[600];
	struct reply r;
	struct q q;

	(void)state;
	{
		const char *kv[] = { "zone", ZONE, "colour", "red" };

		check_init_error(
			kv, 2,
			"test.conf:11: function dns: unknown key 'colour'");
	}
	{
		const char *kv[] = { "zone", "/nonexistent/x.zone" };

		check_init_error(kv, 1, "test.conf:10:");
		check_init_error(kv, 1,
				 "cannot read zone file /nonexistent/x.zone");
	}
	{
		const char *kv[] = { "zone", bad };

		/* The zone file's own line, and libzscanner's reason. */
		snprintf(where, sizeof(where), "%s:4: ", bad);
		check_init_error(kv, 1, where);
		check_init_error(kv, 1, "IPv4");
	}
	{
		const char *kv[] = { "zone", nosoa };

		check_init_error(kv, 1,
				 "no SOA record to take its origin from");
	}
	{
		const char *kv[] = { "zone", where };

		snprintf(where, sizeof(where), "t %s", nosoa);
		check_init_error(kv, 1, "has no SOA record for t.");
	}
	{
		const char *kv[] = { "zone", cname };

		snprintf(where, sizeof(where),
			 "%s:4: another record beside CNAME at x.t.", cname);
		check_init_error(kv, 1, where);
	}
	{
		/* Relative names need the origin in the setting... */
		const char *kv[] = { "zone", relative };

		check_init_error(kv, 1, "ORIGIN");
	}
	{
		const char *kv[] = { "zone", where };

		snprintf(where, sizeof(where), "rel.example %s", relative);
		assert_int_equal(load(kv, 1), 0);
		query(&q, "a.rel.example", 1, 1, 0);
		ask(&q, &r);
		check_counts(&r, 3, AA, 0, 1, 0);
	}
	{
		/* libzscanner reads class IN only. */
		const char *kv[] = { "zone", chaos };

		snprintf(where, sizeof(where), "%s:3: unsupported record type",
			 chaos);
		check_init_error(kv, 1, where);
	}
	{
		/* A second SOA is ignored, as knotd ignores it. */
		const char *kv[] = { "zone", twice };

		assert_int_equal(load(kv, 1), 0);
		query(&q, "t", 6, 1, 0);
		ask(&q, &r);
		check_rr(&r.rr[0], "t.", 6, 3600, "a. b. 1 5");
	}
	{
		/* One value "ORIGIN FILE": the literals are joined on
		 * purpose (the parentheses tell clang so). */
		const char *kv[] = { "zone", ZONE, "zone",
				     ("example.com. " ZONE) };

		check_init_error(
			kv, 2,
			"test.conf:11: function dns: zone example.com. is given twice");
	}
	{
		const char *kv[] = { "zone", "a b c" };

		check_init_error(kv, 1, "zone takes [ORIGIN] FILE");
	}
	{
		const char *kv[] = { "zone", ZONE, "udp_max_payload", "100" };

		check_init_error(kv, 2, "udp_max_payload must be 512-4096");
	}
	check_init_error(NULL, 0, "needs at least one 'zone = [ORIGIN] FILE'");
	unlink(bad);
	unlink(nosoa);
	unlink(cname);
	unlink(relative);
	unlink(chaos);
	unlink(twice);
	load_example();
}

/* From a config file, as reqrouter reads it: reqrouter's own keys stay
 * with it, the others reach init() with their lines. */
static void test_config_file(void **state)
{
	static struct rr_config cfg; /* large: not on the stack */
	const struct rr_service *svc = NULL;
	char *path = t_write_file(
		"/tmp/rr-test-dns",
		"[function dns]\nport = 5353\nmax_amplification = 0\n"
		"zone = example.com " ZONE "\nudp_max_payload = 4096\n");
	struct reply r;
	struct q q;
	uint32_t i;

	(void)state;
	assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
	if (rr_config_load(&cfg, path, err, sizeof(err)))
		fail_msg("config refused: %s", err);
	for (i = 0; i < cfg.nservices; i++)
		if (cfg.services[i].fn == fn)
			svc = &cfg.services[i];
	assert_non_null(svc);
	assert_true(svc->enabled); /* opt-in: the section turns it on */
	assert_int_equal(svc->port, 5353);
	assert_int_equal(svc->max_amplification, 0);
	assert_int_equal(svc->nsettings, 2);
	assert_string_equal(svc->settings[0].key, "zone");
	assert_int_equal(svc->settings[1].line, 5);
	rr_fn_instance_free(inst);
	assert_int_equal(rr_fn_instance_new(fn, svc->port, svc->settings,
					    svc->nsettings, 2, &ctrs, &inst,
					    err, sizeof(err)),
			 0);
	query(&q, "huge.example.com", 16, 1, 0);
	add_opt(&q, 4096, 0, 0, NULL, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 1, 0, 1);
	rr_config_free(&cfg);
	unlink(path);
	load_example();
}

/* Without its state (a caller that ran no init), nothing is answered
 * and nothing is touched. */
static void test_no_state(void **state)
{
	struct rr_request req = { 0 };
	uint8_t buf[64] = { 0 };
	uint64_t c[RR_FN_MAX_COUNTERS] = { 0 };

	(void)state;
	req.counters = c;
	assert_int_equal(fn->handler(&req, buf, sizeof(buf), sizeof(buf)),
			 RR_NO_REPLY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_additional),
		cmocka_unit_test(test_cname),
		cmocka_unit_test(test_negative),
		cmocka_unit_test(test_wildcard),
		cmocka_unit_test(test_referral),
		cmocka_unit_test(test_refused_and_classes),
		cmocka_unit_test(test_formerr_notimp),
		cmocka_unit_test(test_ignored),
		cmocka_unit_test(test_edns),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_several_zones),
		cmocka_unit_test(test_zone_rules),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_no_state),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
