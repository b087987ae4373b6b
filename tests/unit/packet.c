// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the request path in user space (src/lib/packet.c): a crafted
 * request frame goes through rr_serve_unlimited()/rr_serve() with a function, and the
 * reply frame is checked field by field against what a client would
 * accept: addresses and ports swapped, tags kept, lengths and both
 * checksums right (checked with the independent sum in frames.h), the
 * payload what the function wrote. Frames that are not well-formed UDP
 * requests must be dropped as malformed without reaching the function
 * (packet_parse.c), and so must requests whose UDP checksum the
 * kernel would refuse, or that carry IPv4 options (packet_guards.c).
 * Buffers are allocated at their exact size, so ASan catches any access
 * past the frame or the room.
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
#include "packet_test.h"
#include "packet.h"
#include "registry.h"
#include "util.h"
#include <reqrouter/rr_function.h>

static uint32_t max_payload(const struct frame_spec *s, uint32_t mtu)
{
	uint32_t l3 = s->family == AF_INET6 ? F_IP6_HLEN
					    : F_IP4_HLEN + 4 * s->opt_words;

	return mtu - l3 - F_UDP_HLEN;
}

/*
 * Why a request built from @s is not answered, or 0 if it is: IPv4
 * options are malformed (the XDP program gives them to the kernel), so
 * is a zero UDP checksum over IPv6 (RFC 8200 8.1); a UDP checksum that is
 * neither valid nor partial nor IPv4's zero is bad, as the kernel says.
 */
static int refusal(const struct frame_spec *s)
{
	if (s->opt_words)
		return RR_DROP_MALFORMED;
	if (s->family == AF_INET6 && s->csum == CSUM_ZERO)
		return RR_DROP_MALFORMED;
	if (s->csum == CSUM_GARBAGE)
		return RR_DROP_BAD_CHECKSUM;
	return 0;
}

/* A request that must be dropped for @why: not answered, the function
 * not called, the frame as it came. */
static void refused(const struct frame_spec *s, int why)
{
	struct frame_layout lay;
	uint8_t *buf, *req;

	snprintf(where, sizeof(where), "record on %s", spec_name(s));
	buf = make(s, 2048, &lay, &req);
	memset(&seen, 0, sizeof(seen));
	CHECK_EQ(rr_serve_unlimited(buf, lay.len, 2048, 1500,
				    fn("rrtest_record"), 0, 0),
		 -why);
	CHECK_EQ(seen.calls, 0);
	CHECK(!memcmp(buf, req, lay.len));
	free(req);
	free(buf);
}

/*
 * Every encapsulation, payload size and incoming checksum state. Since
 * the request path verifies UDP checksums and refuses IPv4 options, the
 * garbage checksum and the options (IHL 6 and 15) that were answered
 * before are now dropped, each for its reason (refusal()); the rest is
 * answered as before.
 */
static void test_reverse_replies(void **state)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 17, 64, 255, 1001 };
	static const enum frame_csum csums[] = { CSUM_GARBAGE, CSUM_PARTIAL,
						 CSUM_ZERO, CSUM_VALID };
	static const uint32_t opts[] = { 0, 1, 10 }; /* IHL 5, 6, 15 */
	struct frame_spec s = { .sport = 50123, .dport = 1232 };
	size_t fam, v, o, l, c;
	int why;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		for (v = 0; v <= 2; v++) {
			s.vlans = (int)v;
			for (o = 0; o < (fam ? 1 : 3); o++) {
				s.opt_words = fam ? 0 : opts[o];
				for (c = 0; c < 4; c++) {
					s.csum = csums[c];
					for (l = 0; l <= 10; l++) {
						s.plen = l < 10 ? lens[l]
								: max_payload(
									  &s,
									  1500);
						why = refusal(&s);
						if (why)
							refused(&s, why);
						else
							roundtrip(&s, "reverse",
								  2048, 1500);
					}
				}
			}
		}
	}
}

static void test_echo_replies(void **state)
{
	struct frame_spec s = { .sport = 9, .dport = 7, .csum = CSUM_PARTIAL };
	uint32_t l;

	(void)state;
	for (l = 0; l < 40; l += 13) {
		s.plen = l;
		s.family = AF_INET;
		s.vlans = 0;
		roundtrip(&s, "echo", 2048, 1500);
		s.family = AF_INET6;
		s.vlans = 2;
		roundtrip(&s, "echo", 2048, 1500);
	}
	/* A jumbo MTU, limited by the buffer instead. */
	s.family = AF_INET;
	s.vlans = 1;
	s.plen = 4000;
	roundtrip(&s, "echo", 4096, 9000);
}

/* The function sees the request as the client sent it. */
static void test_function_sees_request(void **state)
{
	static const struct {
		int family, vlans;
		uint32_t queue, thread;
		uint32_t room; /* the MTU less the IP and UDP headers */
	} views[] = {
		{ AF_INET, 1, 3, 5, 1500 - 20 - 8 },
		{ AF_INET6, 2, 0, 1, 1500 - 40 - 8 },
	};
	struct frame_spec s = { .sport = 54321,
				.dport = PORT_RECORD,
				.plen = 33 };
	struct frame_layout lay;
	uint8_t buf[2048];
	uint32_t i, alen;
	int ret, v6;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(views); i++) {
		s.family = views[i].family;
		s.vlans = views[i].vlans;
		v6 = s.family == AF_INET6;
		alen = v6 ? 16 : 4;
		snprintf(where, sizeof(where), "request view %s",
			 v6 ? "IPv6" : "IPv4");
		build_frame(buf, sizeof(buf), &s, &lay);
		memset(&seen, 0, sizeof(seen));
		ret = rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500,
					 fn("rrtest_record"), views[i].queue,
					 views[i].thread);
		CHECK_EQ(ret, lay.len);
		CHECK_EQ(seen.calls, 1);
		CHECK_EQ(seen.req.family, s.family);
		CHECK(!memcmp(&seen.req.src, v6 ? f_src_ip6 : f_src_ip4, alen));
		CHECK(!memcmp(&seen.req.dst, v6 ? f_dst_ip6 : f_dst_ip4, alen));
		CHECK_EQ(seen.req.src_port, 54321);
		CHECK_EQ(seen.req.dst_port, PORT_RECORD);
		CHECK_EQ(seen.req.queue, views[i].queue);
		CHECK_EQ(seen.req.thread, views[i].thread);
		CHECK_EQ(seen.len, 33);
		CHECK_EQ(seen.room, views[i].room);
	}
}

/* Replies longer than the request: lengths and checksums follow. (This
 * once had a case with IPv4 options; those are dropped now, see
 * packet_guards.c.) */
static void test_longer_reply(void **state)
{
	struct frame_spec s = { .sport = 4444,
				.dport = PORT_GROW,
				.csum = CSUM_PARTIAL };
	struct frame_layout lay;
	uint8_t *buf, *req, *want;
	uint32_t i, k;
	int ret;

	(void)state;
	for (i = 0; i < 6; i++) {
		s.family = i & 1 ? AF_INET6 : AF_INET;
		s.vlans = (int)(i / 2);
		for (k = 0; k < 3; k++) {
			/* small, odd, and exactly half of the MTU's room */
			s.plen = k == 0	  ? 10
				 : k == 1 ? 333
					  : max_payload(&s, 1500) / 2;
			snprintf(where, sizeof(where), "grow %s",
				 spec_name(&s));
			buf = make(&s, 2048, &lay, &req);
			ret = rr_serve_unlimited(buf, lay.len, 2048, 1500,
						 fn("rrtest_grow"), 0, 0);
			want = malloc(2 * s.plen + 1);
			assert_non_null(want);
			memcpy(want, req + lay.payload_off, s.plen);
			memcpy(want + s.plen, req + lay.payload_off, s.plen);
			check_reply(req, &lay, s.family, buf, ret, want,
				    2 * s.plen, 1500);
			free(want);
			free(req);
			free(buf);
		}
	}
}

/* A reply shorter than the request: the old payload's tail is not sent.
 * (Its IPv4 request had options once; those are dropped now.) */
static void test_shorter_reply(void **state)
{
	struct frame_spec s = { .sport = 3, .dport = PORT_SHRINK, .plen = 99 };
	struct frame_layout lay;
	uint8_t *buf, *req;
	int fam, ret;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		snprintf(where, sizeof(where), "shrink %s", spec_name(&s));
		buf = make(&s, 2048, &lay, &req);
		ret = rr_serve_unlimited(buf, lay.len, 2048, 1500,
					 fn("rrtest_shrink"), 0, 0);
		check_reply(req, &lay, s.family, buf, ret,
			    req + lay.payload_off, 1, 1500);
		free(req);
		free(buf);
	}
}

/*
 * Ethernet pads short frames to 60 bytes and some links add more; the
 * lengths come from the IP and UDP headers, and the padding is neither
 * summed nor sent back.
 */
static void test_padding_ignored(void **state)
{
	struct frame_spec s = { .sport = 5,
				.dport = 1232,
				.csum = CSUM_PARTIAL };
	uint32_t i, hdr;

	(void)state;
	for (i = 0; i < 6; i++) {
		s.family = i & 1 ? AF_INET6 : AF_INET;
		s.vlans = (int)(i / 2);
		s.plen = 3;
		hdr = 14 + 4 * (uint32_t)s.vlans +
		      (s.family == AF_INET6 ? 40 : 20) + 8 + 3;
		/* to the 60-byte minimum, or some anyway when over it */
		s.pad = hdr < 60 ? 60 - hdr : 7;
		roundtrip(&s, "reverse", 2048, 1500);
		s.plen = 101;
		s.pad = 31;
		roundtrip(&s, "reverse", 2048, 1500);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reverse_replies),
		cmocka_unit_test(test_echo_replies),
		cmocka_unit_test(test_function_sees_request),
		cmocka_unit_test(test_longer_reply),
		cmocka_unit_test(test_shorter_reply),
		cmocka_unit_test(test_padding_ignored),
	};

	return cmocka_run_group_tests_name("replies", tests, NULL, NULL) |
	       run_limit_tests() | run_csum_tests() | run_parse_tests() |
	       run_guard_tests();
}
