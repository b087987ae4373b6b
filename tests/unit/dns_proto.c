// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/dns program (dns.c): the protocol around the
 * answers, as knotd has it: REFUSED and the classes, FORMERR and NOTIMP,
 * what is not answered at all, EDNS(0) and truncation.
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

static void test_refused_and_classes(void **state)
{
	static const struct exchange x1[] = {
		/* Names that only end like a zone are outside it. */
		{ { "xexample.com", 1, 1, 0 }, { 5, 0, 0, 0, 0 }, {} },
	};
	static const struct exchange x2[] = {
		{ { "version.bind", 16, 3, 0 }, { 5, 0, 0, 0, 0 }, {} },
		{ { "www.example.com", 1, 4, 0 }, { 5, 0, 0, 0, 0 }, {} },
	};
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
	check_exchanges(x1, ARRAY_SIZE(x1));
	assert_int_equal(counter("dns_refused"), 3);

	/* Class ANY is answered as IN; CHAOS and others are refused. */
	query(&q, "www.example.com", 1, 255, 0);
	ask(&q, &r);
	check_counts(&r, 0, AA, 2, 0, 0);
	assert_int_equal(r.rr[0].rclass, 1);
	check_exchanges(x2, ARRAY_SIZE(x2));
}

static void test_formerr_notimp(void **state)
{
	static const struct exchange xs[] = {
		{ { "example.com", 6, 1, 4 << 11 }, { 9, 0, 0, 0, 0 }, {} },
		/* QTYPE 0 and AXFR over UDP: NOTIMP; IXFR: NOTAUTH. */
		{ { "example.com", 0, 1, 0 }, { 4, 0, 0, 0, 0 }, {} },
		{ { "example.com", 252, 1, 0 }, { 4, 0, 0, 0, 0 }, {} },
		{ { "example.com", 251, 1, 0 }, { 9, 0, 0, 0, 0 }, {} },
	};
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
	check_exchanges(xs, ARRAY_SIZE(xs));
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
	for (i = 0; i < ARRAY_SIZE(bad_len); i++) {
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
	static const struct exchange xs[] = {
		/* knotd keeps the whole RRsets that fit: the CNAME, and TC. */
		{ { "longalias.example.com", 16, 1, 0 },
		  { 0, AA | TC, 1, 0, 0 },
		  {
			  { "longalias.example.com.", 5, 3600,
			    "long.example.com." },
		  } },
	};
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

	check_exchanges(xs, ARRAY_SIZE(xs));

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

int run_proto_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_and_classes),
		cmocka_unit_test(test_formerr_notimp),
		cmocka_unit_test(test_ignored),
		cmocka_unit_test(test_edns),
		cmocka_unit_test(test_truncation),
	};

	return cmocka_run_group_tests_name("protocol", tests, setup, teardown);
}
