// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the dns function (functions/dns/dns.c) on the bytes of its
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
 * dns_msg.c builds the queries and reads the replies;
 * dns_proto.c tests the protocol around the answers (RCODEs, EDNS,
 * truncation); dns_zone.c the zones and settings it refuses;
 * dns_tcp.c answers over TCP, CHAOS TXT and NSID; dns_cookie.c DNS
 * Cookies.
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
#include "dns_test.h"
#include "testutil.h"
#include "util.h"

/* ---- tests ---- */

static void test_answer(void **state)
{
	static const struct exchange xs[] = {
		{ { "www.example.com", 28, 1, 0 },
		  { 0, AA, 1, 0, 0 },
		  {
			  { "www.example.com.", 28, 3600,
			    "2001:db8:0:0:0:0:0:80" },
		  } },
		{ { "example.com", 16, 1, 0 },
		  { 0, AA, 1, 0, 0 },
		  {
			  { "example.com.", 16, 3600, "\"v=spf1 mx -all\"" },
		  } },
		/* SOA in the answer keeps its own TTL. */
		{ { "example.com", 6, 1, 0 },
		  { 0, AA, 1, 0, 0 },
		  {
			  { "example.com.", 6, 3600,
			    "ns1.example.com. hostmaster.example.com. 2026112401 300" },
		  } },
	};
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

	check_exchanges(xs, ARRAY_SIZE(xs));
	assert_int_equal(counter("dns_noerror"), 4);
}

static void test_additional(void **state)
{
	static const struct exchange xs[] = {
		/* MX: the exchanges in the zone get their A and AAAA in the
		 * additional section; the one outside (example.net) does not. The
		 * target's suffix points into the question, so it has the query's
		 * case. */
		{ { "EXAMPLE.com", 15, 1, 0 },
		  { 0, AA, 2, 0, 2 },
		  {
			  { "EXAMPLE.com.", 15, 3600, "10 mail.EXAMPLE.com." },
			  { "EXAMPLE.com.", 15, 3600, "20 mail2.example.net." },
			  { "mail.EXAMPLE.com.", 1, 3600, "192.0.2.25" },
			  { "mail.EXAMPLE.com.", 28, 3600,
			    "2001:db8:0:0:0:0:0:25" },
		  } },
		/* NS at the apex: an answer, not a referral; glue for ns1. */
		{ { "example.com", 2, 1, 0 },
		  { 0, AA, 2, 0, 2 },
		  {
			  { "example.com.", 2, 3600, "ns1.example.com." },
			  { "example.com.", 2, 3600, "ns2.example.net." },
			  { "ns1.example.com.", 1, 3600, "192.0.2.53" },
			  { "ns1.example.com.", 28, 3600,
			    "2001:db8:0:0:0:0:0:53" },
		  } },
		/* SRV targets too. */
		{ { "_sip._udp.example.com", 33, 1, 0 },
		  { 0, AA, 1, 0, 1 },
		  {
			  { "_sip._udp.example.com.", 33, 3600,
			    "10 60 5060 sip.example.com." },
			  { "sip.example.com.", 1, 3600, "192.0.2.60" },
		  } },
		/* ANY gets one RRset, the node's first by type, as from knotd. */
		{ { "example.com", 255, 1, 0 },
		  { 0, AA, 1, 0, 0 },
		  {
			  { "example.com.", 1, 3600, "192.0.2.1" },
		  } },
	};

	(void)state;
	load_example();
	check_exchanges(xs, ARRAY_SIZE(xs));
}

static void test_cname(void **state)
{
	static const struct exchange x1[] = {
		/* A chain inside the zone is followed to the end. */
		{ { "alias.example.com", 1, 1, 0 },
		  { 0, AA, 4, 0, 0 },
		  {
			  { "alias.example.com.", 5, 3600, "ftp.example.com." },
			  { "ftp.example.com.", 5, 3600, "www.example.com." },
			  { "www.example.com.", 1, 3600, "192.0.2.80" },
			  { "www.example.com.", 1, 3600, "192.0.2.81" },
		  } },
		/* Asking for the CNAME itself does not follow it. */
		{ { "alias.example.com", 5, 1, 0 }, { 0, AA, 1, 0, 0 }, {} },
		/* Out of the zone: the CNAME alone. */
		{ { "outside.example.com", 1, 1, 0 },
		  { 0, AA, 1, 0, 0 },
		  {
			  { "outside.example.com.", 5, 3600,
			    "www.example.net." },
		  } },
	};
	static const struct exchange x2[] = {
		/* A loop ends when the chain comes round. */
		{ { "loop1.example.com", 1, 1, 0 },
		  { 0, AA, 2, 0, 0 },
		  {
			  { "loop1.example.com.", 5, 3600,
			    "loop2.example.com." },
			  { "loop2.example.com.", 5, 3600,
			    "loop1.example.com." },
		  } },
	};
	struct reply r;
	struct q q;

	(void)state;
	load_example();
	check_exchanges(x1, ARRAY_SIZE(x1));

	/* To a name that does not exist: the RCODE is the target's. */
	query(&q, "dangling.example.com", 1, 1, 0);
	ask(&q, &r);
	check_counts(&r, 3, AA, 1, 1, 0);
	check_rr(&r.rr[1], "example.com.", 6, 300, NULL);

	check_exchanges(x2, ARRAY_SIZE(x2));
}

static void test_negative(void **state)
{
	static const struct exchange x1[] = {
		/* NXDOMAIN: the SOA in authority, with the SOA MINIMUM as TTL. */
		{ { "nope.example.com", 1, 1, 0 },
		  { 3, AA, 0, 1, 0 },
		  {
			  { "example.com.", 6, 300,
			    "ns1.example.com. hostmaster.example.com. 2026112401 300" },
		  } },
	};
	static const struct exchange x2[] = {
		/* NODATA: the name is there, the type is not. */
		{ { "www.example.com", 16, 1, 0 },
		  { 0, AA, 0, 1, 0 },
		  {
			  { "example.com.", 6, 300, NULL },
		  } },
		/* An empty non-terminal exists: NODATA, not NXDOMAIN. */
		{ { "b.example.com", 1, 1, 0 }, { 0, AA, 0, 1, 0 }, {} },
		{ { "a.b.example.com", 1, 1, 0 }, { 0, AA, 1, 0, 0 }, {} },
		{ { "c.b.example.com", 1, 1, 0 }, { 3, AA, 0, 1, 0 }, {} },
	};

	(void)state;
	load_example();
	check_exchanges(x1, ARRAY_SIZE(x1));
	assert_int_equal(counter("dns_nxdomain"), 1);

	check_exchanges(x2, ARRAY_SIZE(x2));
}

static void test_wildcard(void **state)
{
	static const struct exchange xs[] = {
		/* The wildcard answers with the QNAME as owner. */
		{ { "X.wild.example.com", 16, 1, 0 },
		  { 0, AA, 1, 0, 0 },
		  {
			  { "X.wild.example.com.", 16, 3600,
			    "\"from the wildcard\"" },
		  } },
		{ { "y.z.wild.example.com", 16, 1, 0 },
		  { 0, AA, 1, 0, 0 },
		  {
			  { "y.z.wild.example.com.", 16, 3600, NULL },
		  } },
		/* Another type at a wildcard's name: NODATA. */
		{ { "x.wild.example.com", 1, 1, 0 }, { 0, AA, 0, 1, 0 }, {} },
	};

	(void)state;
	load_example();
	check_exchanges(xs, ARRAY_SIZE(xs));
}

static void test_referral(void **state)
{
	static const struct exchange xs[] = {
		/* At the cut, and for the glue's own name, too. */
		{ { "sub.example.com", 2, 1, 0 }, { 0, 0, 0, 2, 1 }, {} },
		{ { "ns.sub.example.com", 1, 1, 0 }, { 0, 0, 0, 2, 1 }, {} },
		/* DS is the parent's: answered at the cut (here NODATA). */
		{ { "sub.example.com", 43, 1, 0 }, { 0, AA, 0, 1, 0 }, {} },
	};
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
	check_exchanges(xs, ARRAY_SIZE(xs));
	assert_int_equal(counter("dns_referral"), 3);
}

static void test_several_zones(void **state)
{
	static const struct exchange xs[] = {
		{ { "www.sub.example.com", 1, 1, 0 },
		  { 0, AA, 1, 0, 0 },
		  {
			  { "www.sub.example.com.", 1, 600, "192.0.2.55" },
		  } },
		{ { "nope.sub.example.com", 1, 1, 0 },
		  { 3, AA, 0, 1, 0 },
		  {
			  { "sub.example.com.", 6, 60, NULL },
		  } },
		/* DS for the child's apex is the parent's. */
		{ { "sub.example.com", 43, 1, 0 },
		  { 0, AA, 0, 1, 0 },
		  {
			  { "example.com.", 6, 300, NULL },
		  } },
		{ { "www.example.com", 1, 1, 0 }, { 0, AA, 2, 0, 0 }, {} },
	};
	char *child = t_write_file(
		"/tmp/rr-test-dns",
		"$ORIGIN sub.example.com.\n"
		"@ 600 SOA ns.sub.example.com. h.sub.example.com. 1 2 3 4 60\n"
		"@ 600 NS ns\nns 600 A 192.0.2.54\nwww 600 A 192.0.2.55\n");
	const char *kv[] = { "zone", ZONE, "zone", child };

	(void)state;
	/* The origin comes from the SOA; the child zone answers below its
	 * apex instead of the parent's referral. */
	if (load(kv, 2))
		fail_msg("refused: %s", err);
	check_exchanges(xs, ARRAY_SIZE(xs));
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
		cmocka_unit_test(test_several_zones),
	};

	return cmocka_run_group_tests_name("answers", tests, setup, teardown) |
	       run_proto_tests() | run_zone_tests() | run_tcp_tests() |
	       run_cookie_tests();
}
