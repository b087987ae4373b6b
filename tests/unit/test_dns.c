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
 * test_dns_msg.c builds the queries and reads the replies;
 * test_dns_zone.c tests the zones and settings the function refuses.
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
#include "test_dns.h"
#include "testutil.h"

const struct rr_function *fn;
struct rr_fn_instance *inst;
struct rr_fn_counters ctrs;
uint64_t counters[RR_FN_MAX_COUNTERS];
char err[512];

/* ---- set-up ---- */

int load(const char *const *kv, size_t n)
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

void load_example(void)
{
	const char *kv[] = { "zone", ZONE };

	if (load(kv, 1))
		fail_msg("example zone refused: %s", err);
}

uint64_t counter(const char *name)
{
	uint32_t i;

	for (i = 0; i < ctrs.n; i++)
		if (!strcmp(ctrs.name[i], name))
			return counters[i];
	fail_msg("no counter %s", name);
	return 0;
}

int setup(void **state)
{
	(void)state;
	fn = rr_registry_find("dns");
	assert_non_null(fn);
	assert_true(fn->flags & RR_FN_OPT_IN);
	assert_int_equal(fn->port, 53);
	load_example();
	return 0;
}

int teardown(void **state)
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
	};

	return cmocka_run_group_tests_name("answers", tests, setup, teardown) |
	       run_zone_tests();
}
