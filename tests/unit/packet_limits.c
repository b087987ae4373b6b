// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/packet program (packet.c): the room a function
 * is offered (MTU, buffer, 16-bit lengths, the amplification limit) and
 * the drops when a reply does not fit it or the function fails.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "frames.h"
#include "packet.h"
#include "registry.h"
#include "packet_test.h"
#include "util.h"

/* A function and the limits it is served under, and what comes of it:
 * -enum rr_drop, ANY_REPLY or SAME_SIZE_REPLY. */
struct drop_case {
	const char *fn;
	uint32_t mtu, factor;
	int want;
};

#define ANY_REPLY 1
#define SAME_SIZE_REPLY 2

/* Serves @s, built afresh, as each case says and checks the outcome. */
static void check_drops(const struct frame_spec *s, const struct drop_case *c,
			size_t n)
{
	struct frame_layout lay;
	uint8_t buf[2048];
	size_t i;
	int ret;

	for (i = 0; i < n; i++, c++) {
		build_frame(buf, sizeof(buf), s, &lay);
		ret = rr_serve(buf, lay.len, sizeof(buf), c->mtu, c->factor,
			       fn(c->fn), 0, 0);
		if (c->want == ANY_REPLY)
			CHECK(ret > 0);
		else if (c->want == SAME_SIZE_REPLY)
			CHECK_EQ(ret, lay.len);
		else
			CHECK_EQ(ret, c->want);
	}
}

/* A function that cannot fit its reply, or fails: nothing is sent. */
static void test_function_drops(void **state)
{
	static const struct drop_case cases[] = {
		/* 1600 bytes do not fit a 1500 MTU: the function says so. */
		{ "rrtest_grow", 1500, 0, -RR_DROP_REPLY_TOO_BIG },
		{ "rrtest_fail", 1500, 0, -RR_DROP_FUNCTION_ERROR },
		/* Claiming more than the room is never sent. */
		{ "rrtest_overclaim", 1500, 0, -RR_DROP_REPLY_TOO_BIG },
		{ "rrtest_overclaim", 9000, 0, -RR_DROP_REPLY_TOO_BIG },
	};
	struct frame_spec s = { .sport = 4444, .plen = 800 };
	int fam;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		snprintf(where, sizeof(where), "drops %s", spec_name(&s));
		check_drops(&s, cases, ARRAY_SIZE(cases));
	}
}

/*
 * Serves @s from a @room-byte buffer with rrtest_fill, which uses all the
 * room it is offered, under @mtu and amplification @factor: it must be
 * offered @want_room and its reply must be valid and exactly that long.
 */
static void check_fill(const struct frame_spec *s, uint32_t room, uint32_t mtu,
		       uint32_t factor, uint32_t want_room)
{
	struct frame_layout lay;
	uint8_t *buf, *req, *want;
	uint32_t j;
	int ret;

	buf = make(s, room, &lay, &req);
	memset(&seen, 0, sizeof(seen));
	ret = rr_serve(buf, lay.len, room, mtu, factor, fn("rrtest_fill"), 0,
		       0);
	CHECK_EQ(seen.calls, 1);
	CHECK_EQ(seen.room, want_room);
	want = malloc(want_room + 1);
	assert_non_null(want);
	for (j = 0; j < want_room; j++)
		want[j] = (uint8_t)(0xa5 ^ j);
	check_reply(req, &lay, s->family, buf, ret, want, want_room, mtu);
	CHECK(ret <= (int)room);
	free(want);
	free(req);
	free(buf);
}

/* A request, the limits it is served under (buffer, MTU, amplification
 * factor) and the room rrtest_fill must be offered. */
struct room_case {
	int family, vlans;
	uint32_t opt_words, plen;
	uint32_t room, mtu, factor;
	uint32_t want_room;
};

/* Runs each case through check_fill(), the request's UDP checksum as
 * @csum. */
static void check_rooms(const struct room_case *c, size_t n,
			enum frame_csum csum)
{
	struct frame_spec s = { .sport = 1, .dport = PORT_FILL, .csum = csum };
	size_t i;

	for (i = 0; i < n; i++, c++) {
		s.family = c->family;
		s.vlans = c->vlans;
		s.opt_words = c->opt_words;
		s.plen = c->plen;
		snprintf(where, sizeof(where),
			 "room #%zu %s room %u mtu %u factor %u", i,
			 spec_name(&s), c->room, c->mtu, c->factor);
		check_fill(&s, c->room, c->mtu, c->factor, c->want_room);
	}
}

/*
 * The room a function is offered: the reply's IP packet fits the MTU, the
 * frame fits the buffer, the lengths fit 16 bits. A function that uses all
 * of it gives a valid reply of exactly that size.
 */
static void test_reply_limits(void **state)
{
	static const struct room_case cases[] = {
		{ AF_INET, 0, 0, 50, 2048, 1500, 0, 1500 - 28 },
		{ AF_INET, 2, 0, 50, 2048, 1500, 0, 1500 - 28 },
		{ AF_INET6, 0, 0, 50, 2048, 1500, 0, 1500 - 48 },
		{ AF_INET6, 1, 0, 50, 2048, 1500, 0, 1500 - 48 },
		{ AF_INET, 0, 0, 50, 2048, 576, 0, 576 - 28 },
		/* the buffer is the limit */
		{ AF_INET, 0, 0, 50, 4096, 9000, 0, 4096 - 14 - 28 },
		{ AF_INET6, 2, 0, 50, 4096, 9000, 0, 4096 - 22 - 48 },
		{ AF_INET, 1, 0, 50, 1000, 1500, 0, 1000 - 18 - 28 },
		/* the 16-bit IPv4 total length is the limit */
		{ AF_INET, 0, 0, 50, 70000, 65535, 0, 65535 - 28 },
		{ AF_INET, 0, 0, 50, 70000, 100000, 0, 65535 - 28 },
	};

	(void)state;
	/* Garbage once, which was answered; a valid checksum now. */
	check_rooms(cases, ARRAY_SIZE(cases), CSUM_VALID);
}

/* A request that is itself larger than the MTU allows cannot be echoed. */
static void test_request_over_mtu(void **state)
{
	struct frame_spec s = { .sport = 2,
				.dport = PORT_RECORD,
				.plen = 1473 };
	struct frame_layout lay;
	uint8_t buf[2048];
	int ret;

	(void)state;
	snprintf(where, sizeof(where), "request over the MTU");
	build_frame(buf, sizeof(buf), &s, &lay);
	memset(&seen, 0, sizeof(seen));
	ret = rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500,
				 fn("rrtest_record"), 0, 0);
	CHECK_EQ(ret, -RR_DROP_REPLY_TOO_BIG);
	CHECK_EQ(seen.calls, 0);
}

/*
 * A reply's IP packet may be at most max_amplification times the
 * request's: the function is offered just that much room, and using all
 * of it gives a reply of exactly that size. The MTU and the buffer still
 * apply when they are tighter; 0 means no limit.
 */
static void test_amplification_room(void **state)
{
	static const struct room_case cases[] = {
		/* IPv4: request IP packet 20 + 8 + 10 = 38, reply <= 114 */
		{ AF_INET, 0, 0, 10, 2048, 1500, 3, 114 - 28 },
		/* tags are not IP */
		{ AF_INET, 2, 0, 10, 2048, 1500, 3, 114 - 28 },
		/* (IPv4 options, which counted on both sides, are refused
		 * now: packet_guards.c) */
		/* IPv6: 40 + 8 + 10 = 58, reply <= 174 */
		{ AF_INET6, 0, 0, 10, 2048, 1500, 3, 174 - 48 },
		{ AF_INET6, 1, 0, 10, 2048, 1500, 3, 174 - 48 },
		/* empty request */
		{ AF_INET, 0, 0, 0, 2048, 1500, 3, 84 - 28 },
		/* no larger than the request */
		{ AF_INET, 0, 0, 10, 2048, 1500, 1, 10 },
		{ AF_INET6, 0, 0, 0, 2048, 1500, 1, 0 },
		/* the MTU is tighter */
		{ AF_INET, 0, 0, 1000, 2048, 1500, 3, 1500 - 28 },
		{ AF_INET6, 0, 0, 500, 2048, 1500, 3, 1500 - 48 },
		/* no limit, and limits too large to compute in 32 bits */
		{ AF_INET, 0, 0, 10, 2048, 1500, 0, 1500 - 28 },
		{ AF_INET, 0, 0, 10, 2048, 1500, 1000, 1500 - 28 },
		{ AF_INET6, 0, 0, 1400, 2048, 1500, 1000, 1500 - 48 },
		{ AF_INET, 0, 0, 10, 2048, 1500, UINT32_MAX, 1500 - 28 },
		/* 113025456 * 38 wraps to 32 in 32-bit arithmetic */
		{ AF_INET, 0, 0, 10, 2048, 1500, 113025456, 1500 - 28 },
	};

	(void)state;
	check_rooms(cases, ARRAY_SIZE(cases), CSUM_PARTIAL);
}

/* Over the cap: dropped and counted as amplification, not as too big. */
static void test_amplification_drops(void **state)
{
	static const struct drop_case cases[] = {
		/* twice the payload is more than a factor of 1 allows */
		{ "rrtest_grow", 1500, 1, -RR_DROP_AMPLIFICATION },
		{ "rrtest_grow", 1500, 3, ANY_REPLY },
		{ "rrtest_overclaim", 1500, 3, -RR_DROP_AMPLIFICATION },
		/* a reply as long as the request is always fine */
		{ "reverse", 1500, 1, SAME_SIZE_REPLY },
		/* other failures keep their own names */
		{ "rrtest_fail", 1500, 1, -RR_DROP_FUNCTION_ERROR },
	};
	/* When the MTU is the tighter limit, it is the MTU's drop. */
	static const struct drop_case mtu_cases[] = {
		{ "rrtest_overclaim", 1500, 3, -RR_DROP_REPLY_TOO_BIG },
		{ "rrtest_grow", 1500, 3, -RR_DROP_REPLY_TOO_BIG },
	};
	struct frame_spec s = { .sport = 1, .plen = 10 };
	struct frame_layout lay;
	uint8_t buf[2048];
	int fam, ret;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		snprintf(where, sizeof(where), "amplification drops %s",
			 spec_name(&s));
		check_drops(&s, cases, ARRAY_SIZE(cases));
		build_frame(buf, sizeof(buf), &s, &lay);
		f_put16(buf + lay.l4_off + 4, 7); /* UDP length 7 */
		ret = rr_serve(buf, lay.len, sizeof(buf), 1500, 3,
			       fn("reverse"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_MALFORMED);
	}

	s.family = AF_INET;
	s.plen = 1000;
	snprintf(where, sizeof(where), "MTU tighter than the cap");
	check_drops(&s, mtu_cases, ARRAY_SIZE(mtu_cases));
}

int run_limit_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_drops),
		cmocka_unit_test(test_reply_limits),
		cmocka_unit_test(test_request_over_mtu),
		cmocka_unit_test(test_amplification_room),
		cmocka_unit_test(test_amplification_drops),
	};

	return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
