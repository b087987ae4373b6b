// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/dns program (dns.c): the same queries over TCP
 * and over UDP (RFC 7766: over TCP the whole answer, TC only past 64 KiB;
 * over UDP what the client offers), and what a server says about itself:
 * CHAOS TXT id.server and version.bind, EDNS NSID. The bytes expected are
 * knotd's (Knot DNS 3.2.6 with identity, version and nsid set);
 * tests/integration/dns_chaos.sh compares them with a running knotd.
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

#define CH 3
#define TXT 16

/* A zone with answers past 4 KiB (20 TXT records of 241 bytes) and past
 * 64 KiB (300 of them), in /tmp; the caller unlinks it. */
static char *big_zone(void)
{
	static char text[300 * 260 + 256];
	char s[241];
	size_t o;
	int i;

	memset(s, 'b', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	o = (size_t)snprintf(text, sizeof(text),
			     "$ORIGIN big.test.\n$TTL 300\n"
			     "@ SOA ns hostmaster 1 3600 600 86400 60\n"
			     "@ NS ns\nns A 192.0.2.53\n");
	for (i = 0; i < 300; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "%s TXT \"%03d%s\"\n",
				      i < 20 ? "four" : "many", i, s + 3);
	return t_write_file("/tmp/rr-test-dns-big", text);
}

/* The same question over TCP, with or without EDNS, and the cache never
 * asked to keep a TCP answer. */
static void tcp_query(const char *name, int edns, unsigned int payload,
		      struct reply *r)
{
	struct q q;

	query(&q, name, TXT, 1, 0);
	if (edns)
		add_opt(&q, payload, 0, 0, NULL, 0);
	ask_tcp(&q, r);
	assert_true(r->no_cache);
}

static void test_tcp_whole_answers(void **state)
{
	struct reply *u = malloc(sizeof(*u)), *t = malloc(sizeof(*t));
	struct q q;

	(void)state;
	assert_non_null(u);
	assert_non_null(t);
	load_example();

	/* long's TXT (a message of 748 bytes): over UDP without EDNS it is
	 * cut to an empty answer with TC; over TCP it comes whole, and TC
	 * is never set for size. */
	query(&q, "long.example.com", TXT, 1, 0);
	ask(&q, u);
	check_counts(u, 0, AA | TC, 0, 0, 0);
	tcp_query("long.example.com", 0, 0, t);
	check_counts(t, 0, AA, 1, 0, 0);
	assert_int_equal(t->len, 748);
	/* With EDNS 1232 it fits a datagram: the same bytes both ways. */
	add_opt(&q, 1232, 0, 0, NULL, 0);
	ask(&q, u);
	check_counts(u, 0, AA, 1, 0, 1);
	tcp_query("long.example.com", 1, 1232, t);
	assert_int_equal(t->len, u->len);
	assert_memory_equal(t->b, u->b, (size_t)u->len);

	/* huge's (about 2 kB): TC over UDP whatever EDNS offers (our 1232),
	 * whole over TCP with or without EDNS, and the OPT still says our
	 * UDP size. */
	query(&q, "huge.example.com", TXT, 1, 0);
	add_opt(&q, 4096, 0, 0, NULL, 0);
	ask(&q, u);
	check_counts(u, 0, AA | TC, 0, 0, 1);
	assert_true(u->len <= 1232);
	tcp_query("huge.example.com", 0, 0, t);
	check_counts(t, 0, AA, 1, 0, 0);
	assert_true(t->len > 1232);
	tcp_query("huge.example.com", 1, 512, t);
	check_counts(t, 0, AA, 1, 0, 1);
	assert_int_equal(t->rr[1].rclass, 1232);
	assert_int_equal(counter("dns_truncated"), 2);

	free(u);
	free(t);
}

static void test_tcp_past_4k(void **state)
{
	const char *kv[] = { "zone", NULL, "udp_max_payload", "4096" };
	struct reply *u = malloc(sizeof(*u)), *t = malloc(sizeof(*t));
	char *zone = big_zone();
	struct q q;
	int i;

	(void)state;
	assert_non_null(u);
	assert_non_null(t);
	kv[1] = zone;
	if (load(kv, 1))
		fail_msg("big zone refused: %s", err);

	/* 20 records, over 4 KiB: whole over TCP, in zone order... */
	tcp_query("four.big.test", 1, 1232, t);
	check_counts(t, 0, AA, 20, 0, 1);
	assert_true(t->len > 4096);
	for (i = 0; i < 20; i++) {
		char want[8];

		snprintf(want, sizeof(want), "\"%03d", i);
		check_rr(&t->rr[i], "four.big.test.", TXT, 300, NULL);
		assert_memory_equal(t->rr[i].data, want, 4);
	}
	/* ... and cut over UDP to the client's 1232 bytes, with TC. */
	query(&q, "four.big.test", TXT, 1, 0);
	add_opt(&q, 1232, 0, 0, NULL, 0);
	ask(&q, u);
	check_counts(u, 0, AA | TC, 0, 0, 1);
	assert_true(u->len <= 1232);
	/* With udp_max_payload 4096 and a client that offers as much, UDP
	 * still cannot carry it: TC within 4096 bytes. */
	assert_int_equal(load(kv, 2), 0);
	query(&q, "four.big.test", TXT, 1, 0);
	add_opt(&q, 4096, 0, 0, NULL, 0);
	ask_mtu(&q, 9000, u);
	check_counts(u, 0, AA | TC, 0, 0, 1);
	assert_true(u->len <= 4096);

	/* 300 records (75 kB) fit no DNS message: TC over TCP too, with
	 * the RRset left out whole, as knotd does. */
	tcp_query("many.big.test", 0, 0, t);
	check_counts(t, 0, AA | TC, 0, 0, 0);

	unlink(zone);
	load_example();
	free(u);
	free(t);
}

/* A TSIG record after the rest of @q (key "key.", hmac-sha256, no MAC,
 * time signed 1700000000): the keys are unknown to dns, as to knotd. */
static void add_tsig(struct q *q)
{
	static const uint8_t tsig[] =
		"\3key\0\0\xfa\0\xff\0\0\0\0\0\x1d"
		"\x0bhmac-sha256\0\0\0\x65\x53\xf1\0\x01\x2c\0\0\0\0\0\0\0\0";

	memcpy(q->b + q->len, tsig, sizeof(tsig) - 1);
	q->len += sizeof(tsig) - 1;
	put16(q->b + 10, (unsigned int)(q->b[10] << 8 | q->b[11]) + 1);
}

/* @r is @q sent back with the header flags @flags (QR, RD and the
 * RCODE), and, if @badkey, its TSIG's original ID the message's and its
 * error BADKEY (17). */
static void check_echo(const struct reply *r, const struct q *q,
		       unsigned int flags, int badkey)
{
	uint8_t want[sizeof(q->b)];

	memcpy(want, q->b, q->len);
	put16(want + 2, flags);
	if (badkey) {
		put16(want + q->len - 6, QID);
		put16(want + q->len - 4, 17);
	}
	assert_int_equal(r->len, q->len);
	assert_memory_equal(r->b, want, q->len);
}

/*
 * AXFR as knotd 3.2.6 answers it, byte for byte: over UDP NOTIMP (a
 * transfer needs TCP); over TCP, as IXFR, NOTAUTH (nobody may transfer),
 * the question alone (and the OPT), a TSIG sent back with BADKEY when
 * the QNAME is a zone's apex. dns said NOTIMP over TCP too, which
 * tests/integration/dns_knot.sh's comparison over TCP found.
 */
static void test_tcp_axfr(void **state)
{
	struct reply *r = malloc(sizeof(*r));
	struct q q;

	(void)state;
	assert_non_null(r);
	load_example();
	query(&q, "example.com", 252, 1, RD);
	ask(&q, r);
	check_echo(r, &q, QR | RD | 4, 0);
	ask_tcp(&q, r);
	check_echo(r, &q, QR | RD | 9, 0);
	/* The question as asked, and the OPT with our size. */
	query(&q, "EXAMPLE.com", 252, 1, RD);
	add_opt(&q, 1232, 0, 0, NULL, 0);
	ask_tcp(&q, r);
	check_echo(r, &q, QR | RD | 9, 0);
	/* Not a zone's apex, or in no zone: NOTAUTH all the same. */
	query(&q, "www.example.com", 252, 1, RD);
	ask_tcp(&q, r);
	check_echo(r, &q, QR | RD | 9, 0);
	query(&q, "example.net", 252, 1, 0);
	ask_tcp(&q, r);
	check_echo(r, &q, QR | 9, 0);
	assert_int_equal(counter("dns_other_rcode"), 4);
	assert_int_equal(counter("dns_notimp"), 1);

	/* Signed: the TSIG back with BADKEY over TCP, as for IXFR; none
	 * over UDP (NOTIMP comes first), nor for a name with no zone. */
	query(&q, "example.com", 252, 1, RD);
	add_tsig(&q);
	ask_tcp(&q, r);
	check_echo(r, &q, QR | RD | 9, 1);
	ask(&q, r);
	check_counts(r, 4, RD, 0, 0, 0);
	assert_int_equal(r->len, 12 + 13 + 4);
	query(&q, "example.com", 251, 1, RD);
	add_tsig(&q);
	ask_tcp(&q, r);
	check_echo(r, &q, QR | RD | 9, 1);
	query(&q, "example.net", 252, 1, RD);
	add_tsig(&q);
	ask_tcp(&q, r);
	check_counts(r, 9, RD, 0, 0, 0);
	assert_int_equal(r->len, 12 + 13 + 4);
	free(r);
}

/*
 * Checks the CHAOS answer in @r to a question of @qlen bytes (QNAME and
 * type and class): one TXT record, class CH, TTL 0, its owner a pointer
 * to the question, @text its one string; AA clear, as knotd's, and RD
 * as @rd.
 */
static void check_chaos(const struct reply *r, size_t qlen, unsigned int rd,
			const char *text, unsigned int ar)
{
	size_t off = 12 + qlen, n = strlen(text);
	const uint8_t *rr = r->b + off;

	check_counts(r, 0, rd, 1, 0, ar);
	assert_int_equal(r->rr[0].type, TXT);
	assert_int_equal(r->rr[0].rclass, CH);
	assert_int_equal(r->rr[0].ttl, 0);
	assert_memory_equal(rr, "\xc0\x0c\x00\x10\x00\x03\0\0\0\0", 10);
	assert_int_equal(rr[10] << 8 | rr[11], n + 1);
	assert_int_equal(rr[12], n);
	assert_memory_equal(rr + 13, text, n);
}

static void test_chaos(void **state)
{
	static const struct exchange refused[] = {
		/* Other types and names, and IN: REFUSED as before. */
		{ { "id.server", 1, CH, 0 }, { 5, 0, 0, 0, 0 }, {} },
		{ { "id.server", 255, CH, 0 }, { 5, 0, 0, 0, 0 }, {} },
		{ { "authors.bind", TXT, CH, 0 }, { 5, 0, 0, 0, 0 }, {} },
		{ { "fortune", TXT, CH, 0 }, { 5, 0, 0, 0, 0 }, {} },
		{ { "x.id.server", TXT, CH, 0 }, { 5, 0, 0, 0, 0 }, {} },
		{ { "id.server", TXT, 1, 0 }, { 5, 0, 0, 0, 0 }, {} },
		/* Not a plain query: NOTIMP. */
		{ { "id.server", TXT, CH, 4 << 11 }, { 4, 0, 0, 0, 0 }, {} },
	};
	static const struct exchange off[] = {
		{ { "id.server", TXT, CH, 0 }, { 5, 0, 0, 0, 0 }, {} },
		{ { "hostname.bind", TXT, CH, 0 }, { 5, 0, 0, 0, 0 }, {} },
		{ { "version.server", TXT, CH, 0 }, { 5, 0, 0, 0, 0 }, {} },
		{ { "version.bind", TXT, CH, 0 }, { 5, 0, 0, 0, 0 }, {} },
	};
	char long_text[300];
	const char *kv[] = { "zone",	 ZONE,
			     "identity", "ns1.example.com",
			     "version",	 "reqrouter 1.0" };
	const char *empty[] = { "zone", ZONE, "identity", "", "version", "" };
	struct reply r;
	struct q q;

	(void)state;
	/* Off by default, and when set empty (knotd's ""). */
	load_example();
	check_exchanges(off, ARRAY_SIZE(off));
	assert_int_equal(load(empty, 3), 0);
	check_exchanges(off, ARRAY_SIZE(off));

	if (load(kv, 3))
		fail_msg("refused: %s", err);
	query(&q, "id.server", TXT, CH, RD);
	ask(&q, &r);
	check_chaos(&r, 11 + 4, RD, "ns1.example.com", 0);
	assert_int_equal(r.len, 12 + 15 + 12 + 1 + 15);
	/* The owner is the question, as asked. */
	query(&q, "HostName.BIND", TXT, CH, 0);
	ask(&q, &r);
	check_chaos(&r, 15 + 4, 0, "ns1.example.com", 0);
	assert_string_equal(r.rr[0].owner, "HostName.BIND.");
	query(&q, "version.server", TXT, CH, 0);
	ask(&q, &r);
	check_chaos(&r, 16 + 4, 0, "reqrouter 1.0", 0);
	query(&q, "VERSION.bind", TXT, CH, 0);
	add_opt(&q, 1232, 0, 1, NULL, 0);
	ask(&q, &r);
	check_chaos(&r, 14 + 4, 0, "reqrouter 1.0", 1);
	assert_int_equal(r.rr[1].type, 41);
	assert_int_equal(r.rr[1].ttl, 0x8000); /* DO echoed */
	/* Over TCP, the same bytes. */
	{
		struct reply *t = malloc(sizeof(*t));

		assert_non_null(t);
		ask_tcp(&q, t);
		assert_int_equal(t->len, r.len);
		assert_memory_equal(t->b, r.b, (size_t)r.len);
		free(t);
	}
	check_exchanges(refused, ARRAY_SIZE(refused));
	assert_int_equal(counter("dns_noerror"), 5);

	/* The room the reply has, if less: TC, no record. */
	query(&q, "id.server", TXT, CH, 0);
	ask_mtu(&q, 28 + 12 + 15 + 20, &r);
	check_counts(&r, 0, TC, 0, 0, 0);

	/* One TXT string: 255 bytes at most. */
	memset(long_text, 'v', 255);
	long_text[255] = '\0';
	kv[5] = long_text;
	assert_int_equal(load(kv, 3), 0);
	query(&q, "version.bind", TXT, CH, 0);
	ask(&q, &r);
	check_chaos(&r, 14 + 4, 0, long_text, 0);
	long_text[255] = 'v';
	long_text[256] = '\0';
	assert_int_equal(load(kv, 3), -EINVAL);
	assert_non_null(strstr(
		err,
		"test.conf:12: function dns: version takes at most 255 bytes"));
	load_example();
}

/* The OPT record's RDATA in @r, as hex. */
static const char *opt_data(const struct reply *r)
{
	assert_true(r->opt >= 0);
	return r->rr[r->opt].data;
}

static void test_nsid(void **state)
{
	static const uint8_t nsid_opt[] = { 0, 3, 0, 0 };
	static const uint8_t nsid_expire[] = { 0, 3, 0, 0, 0, 9, 0, 0 };
	const char *text[] = { "zone", ZONE, "nsid", "ns1" };
	const char *hex[] = { "zone", ZONE, "nsid", "0x0102fF" };
	struct reply r;
	struct q q;

	(void)state;
	/* None by default: the option is not answered. */
	load_example();
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 1232, 0, 0, nsid_opt, sizeof(nsid_opt));
	ask(&q, &r);
	assert_string_equal(opt_data(&r), "");

	/* Set: in the OPT of a reply to a query with the option, first. */
	assert_int_equal(load(text, 2), 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 2, 0, 1);
	assert_string_equal(opt_data(&r), "000300036e7331");
	/* Before EXPIRE (knotd adds NSID when it starts the reply). */
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 1232, 0, 0, nsid_expire, sizeof(nsid_expire));
	ask(&q, &r);
	assert_string_equal(opt_data(&r), "000300036e73310009000400127500");
	/* Not asked for: not sent. */
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 1232, 0, 0, NULL, 0);
	ask(&q, &r);
	assert_string_equal(opt_data(&r), "");
	/* In refusals too, before the Extended DNS Error; and BADVERS. */
	query(&q, "www.example.org", 1, 1, 0);
	add_opt(&q, 1232, 0, 0, nsid_opt, sizeof(nsid_opt));
	ask(&q, &r);
	check_counts(&r, 5, 0, 0, 0, 1);
	assert_string_equal(opt_data(&r), "000300036e7331000f00020014");
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 1232, 1, 0, nsid_opt, sizeof(nsid_opt));
	ask(&q, &r);
	assert_int_equal(r.rr[r.opt].ttl, 0x01000000);
	assert_string_equal(opt_data(&r), "000300036e7331");
	/* CHAOS, and over TCP. */
	query(&q, "id.server", TXT, CH, 0);
	add_opt(&q, 1232, 0, 0, nsid_opt, sizeof(nsid_opt));
	ask_tcp(&q, &r);
	check_counts(&r, 5, 0, 0, 0, 1);
	assert_string_equal(opt_data(&r), "000300036e7331");

	/* In hex, as knotd's nsid takes it: "0x" and digits of either
	 * case; "0x" alone is none, "0X" starts text. */
	query(&q, "www.example.com", 1, 1, 0);
	add_opt(&q, 1232, 0, 0, nsid_opt, sizeof(nsid_opt));
	assert_int_equal(load(hex, 2), 0);
	ask(&q, &r);
	assert_string_equal(opt_data(&r), "000300030102ff");
	hex[3] = "0x";
	assert_int_equal(load(hex, 2), 0);
	ask(&q, &r);
	assert_string_equal(opt_data(&r), "");
	hex[3] = "0X01";
	assert_int_equal(load(hex, 2), 0);
	ask(&q, &r);
	assert_string_equal(opt_data(&r), "0003000430583031");

	load_example();
}

static void test_server_settings_refused(void **state)
{
	static const char *const bad_nsid[] = { "0x123", "0xzz", "0x0g", NULL };
	char longer[300];
	const char *kv[] = { "zone", ZONE, "nsid", NULL };
	int i;

	(void)state;
	for (i = 0; bad_nsid[i]; i++) {
		kv[3] = bad_nsid[i];
		if (load(kv, 2) != -EINVAL)
			fail_msg("nsid = %s taken", bad_nsid[i]);
		assert_non_null(
			strstr(err, "test.conf:11: function dns: nsid takes"));
	}
	memset(longer, 'n', 129);
	longer[129] = '\0';
	kv[3] = longer;
	assert_int_equal(load(kv, 2), -EINVAL);
	longer[128] = '\0';
	assert_int_equal(load(kv, 2), 0);
	kv[2] = "identity";
	memset(longer, 'i', 256);
	longer[256] = '\0';
	assert_int_equal(load(kv, 2), -EINVAL);
	assert_non_null(strstr(err, "identity takes at most 255 bytes"));
	kv[2] = "nonsense";
	assert_int_equal(load(kv, 2), -EINVAL);
	assert_non_null(strstr(err, "identity, version, nsid"));
	load_example();
}

int run_tcp_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_whole_answers),
		cmocka_unit_test(test_tcp_past_4k),
		cmocka_unit_test(test_tcp_axfr),
		cmocka_unit_test(test_chaos),
		cmocka_unit_test(test_nsid),
		cmocka_unit_test(test_server_settings_refused),
	};

	return cmocka_run_group_tests_name("tcp and identity", tests, setup,
					   teardown);
}
