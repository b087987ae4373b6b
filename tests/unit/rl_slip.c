// SPDX-License-Identifier: GPL-2.0
/*
 * The slip reply a worker sends for a rate-limited DNS query the XDP
 * program handed it marked as a slip (rr_rl_slip(), src/daemon/features/
 * rl.c): where the program's own XDP_TX reply would be lost (a veth whose
 * peer runs no XDP program), the worker must send the same bytes
 * (tests/bpf/rl.c checks the program's):
 * - a query with an OPT record after its question: the header and the
 *   question echoed, QR and TC set, opcode and RD kept, AA, RA and the
 *   RCODE clear, every count but QDCOUNT zero, nothing after the
 *   question; addresses and ports swapped, the UDP checksum right, over
 *   IPv4 and IPv6, and left to the transmitter when asked (the
 *   pseudo-header sum in the field, the sum from the UDP header on
 *   right);
 * - no reply to a response, two questions, a compressed name, a name
 *   past the payload, a payload shorter than a header and a question, or
 *   a bad UDP checksum (that one as bad_checksum, the others malformed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "frames.h"
#include "packet.h"
#include "rl.h"

#define SPORT 40001
#define DPORT 53

/* example.com. IN A, ID 0x1234, RD and AA set, an OPT record after. */
static const uint8_t query[] =
	"\x12\x34\x05\x00\x00\x01\x00\x00\x00\x00\x00\x01" /* header */
	"\x07"
	"example"
	"\x03"
	"com"
	"\x00\x00\x01\x00\x01"				/* example.com. A IN */
	"\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00"; /* OPT */
#define QUERY_LEN (sizeof(query) - 1)
#define QUESTION_END (12 + 13 + 4)

static uint32_t frame(uint8_t *buf, int family, const uint8_t *payload,
		      uint32_t plen, enum frame_csum csum,
		      struct frame_layout *lay)
{
	struct frame_spec s = { .family = family,
				.sport = SPORT,
				.dport = DPORT,
				.payload = payload,
				.plen = plen,
				.csum = csum };

	return build_frame(buf, 512, &s, lay);
}

static void slip_reply(int family)
{
	uint8_t buf[512];
	struct frame_layout lay;
	uint32_t len = frame(buf, family, query, QUERY_LEN, CSUM_VALID, &lay);
	const uint8_t *p = buf + lay.payload_off;
	int ret;

	assert_true(len > 0);
	ret = rr_rl_slip(buf, len, NULL);
	assert_int_equal(ret, lay.payload_off + QUESTION_END);
	assert_int_equal(p[0], 0x12);
	assert_int_equal(p[1], 0x34);
	assert_int_equal(p[2], 0x83); /* QR, TC, RD; AA clear */
	assert_int_equal(p[3], 0);
	assert_int_equal(f_get16(p + 4), 1);
	assert_int_equal(f_get16(p + 6), 0);
	assert_int_equal(f_get16(p + 8), 0);
	assert_int_equal(f_get16(p + 10), 0);
	assert_memory_equal(p + 12, query + 12, QUESTION_END - 12);
	assert_int_equal(f_get16(buf + lay.l4_off), DPORT);
	assert_int_equal(f_get16(buf + lay.l4_off + 2), SPORT);
	assert_int_equal(f_get16(buf + lay.l4_off + 4), 8 + QUESTION_END);
	assert_int_equal(ref_udp_check(buf, family, lay.l3_off, lay.l4_off,
				       8 + QUESTION_END),
			 0);
	if (family == AF_INET) {
		assert_memory_equal(buf + lay.l3_off + 12, f_dst_ip4, 4);
		assert_memory_equal(buf + lay.l3_off + 16, f_src_ip4, 4);
		assert_int_equal(ref_csum(buf + lay.l3_off, 20, 0), 0);
	} else {
		assert_memory_equal(buf + lay.l3_off + 8, f_dst_ip6, 16);
		assert_memory_equal(buf + lay.l3_off + 24, f_src_ip6, 16);
	}
	assert_memory_equal(buf, f_src_mac, 6);
	assert_memory_equal(buf + 6, f_dst_mac, 6);
}

static void test_slip_ipv4(void **state)
{
	(void)state;
	slip_reply(AF_INET);
}

static void test_slip_ipv6(void **state)
{
	(void)state;
	slip_reply(AF_INET6);
}

/* The checksum left to the transmitter: what it sums from csum_start on
 * is the right checksum. */
static void test_slip_partial(void **state)
{
	uint8_t buf[512];
	struct frame_layout lay;
	uint32_t len = frame(buf, AF_INET, query, QUERY_LEN, CSUM_VALID, &lay);
	uint32_t start = 0, ulen = 8 + QUESTION_END;
	uint16_t field;
	int ret;

	(void)state;
	ret = rr_rl_slip(buf, len, &start);
	assert_int_equal(ret, lay.payload_off + QUESTION_END);
	assert_int_equal(start, lay.l4_off);
	field = f_get16(buf + lay.l4_off + 6);
	assert_int_equal(field,
			 ref_fold(ref_pseudo(buf + lay.l3_off, AF_INET, ulen)));
	f_put16(buf + lay.l4_off + 6, ref_csum(buf + start, ulen, 0));
	assert_int_equal(
		ref_udp_check(buf, AF_INET, lay.l3_off, lay.l4_off, ulen), 0);
}

/* @payload gets no slip reply: -@why. */
static void refused(const uint8_t *payload, uint32_t plen, enum frame_csum csum,
		    int why)
{
	uint8_t buf[512];
	struct frame_layout lay;
	uint32_t len = frame(buf, AF_INET, payload, plen, csum, &lay);

	assert_true(len > 0);
	assert_int_equal(rr_rl_slip(buf, len, NULL), -why);
}

static void test_slip_refused(void **state)
{
	uint8_t q[QUERY_LEN];

	(void)state;
	memcpy(q, query, QUERY_LEN);
	q[2] |= 0x80; /* a response */
	refused(q, QUERY_LEN, CSUM_VALID, RR_DROP_MALFORMED);
	memcpy(q, query, QUERY_LEN);
	q[5] = 2; /* two questions */
	refused(q, QUERY_LEN, CSUM_VALID, RR_DROP_MALFORMED);
	memcpy(q, query, QUERY_LEN);
	q[20] = 0xc0; /* "com" as a pointer */
	refused(q, QUERY_LEN, CSUM_VALID, RR_DROP_MALFORMED);
	/* The name runs past the payload, or no QTYPE and QCLASS follow. */
	refused(query, 12 + 8, CSUM_VALID, RR_DROP_MALFORMED);
	refused(query, 12 + 13 + 3, CSUM_VALID, RR_DROP_MALFORMED);
	refused(query, 12 + 4, CSUM_VALID, RR_DROP_MALFORMED);
	refused(query, QUERY_LEN, CSUM_GARBAGE, RR_DROP_BAD_CHECKSUM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slip_ipv4),
		cmocka_unit_test(test_slip_ipv6),
		cmocka_unit_test(test_slip_partial),
		cmocka_unit_test(test_slip_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
