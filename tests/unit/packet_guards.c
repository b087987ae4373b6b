// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/packet program (packet.c): the request path
 * answers only what the kernel would have taken as a datagram for us. A
 * UDP checksum must be valid, partial (the pseudo-header sum a sender
 * with checksum offload leaves, as a veth peer does) or, over IPv4 only,
 * zero; anything else is dropped as bad_checksum. IPv4 options are
 * malformed: the XDP program hands them to the kernel, and a reply
 * built by swapping addresses would get them wrong. Each case goes through
 * rr_parse() and the worker's paths (software and offloaded checksum),
 * which must agree; a refused request never reaches the function and
 * leaves the frame as it came.
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

/* What is done to the frame after it is built, checksums and all. */
enum edit {
	EDIT_NONE,
	EDIT_PAYLOAD,	 /* one payload byte flipped */
	EDIT_LAST_BYTE,	 /* the last payload byte (odd lengths: the pad) */
	EDIT_SPORT,	 /* the UDP source port, under the checksum */
	EDIT_SADDR,	 /* the IP source, only in the pseudo-header (the
			 * IPv4 header checksum is put right) */
	EDIT_FIELD_FFFF, /* the checksum field 0xffff, not the valid one */
};

struct guard_case {
	const char *what;
	struct frame_spec s;
	enum edit edit;
	int want; /* 0: answered; else the enum rr_drop it is dropped for */
};

/* G4()/G6() give defaults that a case then overrides, on purpose. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#define G4(...)                                                          \
	{                                                                \
		.family = AF_INET, .sport = 40000, .dport = PORT_RECORD, \
		.plen = 33, __VA_ARGS__                                  \
	}
#define G6(...)                                                           \
	{                                                                 \
		.family = AF_INET6, .sport = 40000, .dport = PORT_RECORD, \
		.plen = 33, __VA_ARGS__                                   \
	}

static const struct guard_case cases[] = {
	/* What the kernel accepts is answered. */
	{ "IPv4 valid", G4(), EDIT_NONE, 0 },
	{ "IPv6 valid", G6(), EDIT_NONE, 0 },
	{ "IPv4 valid, QinQ", G4(.vlans = 2), EDIT_NONE, 0 },
	{ "IPv6 valid, 802.1Q", G6(.vlans = 1), EDIT_NONE, 0 },
	{ "IPv4 partial", G4(.csum = CSUM_PARTIAL), EDIT_NONE, 0 },
	{ "IPv6 partial", G6(.csum = CSUM_PARTIAL), EDIT_NONE, 0 },
	{ "IPv6 partial, QinQ", G6(.csum = CSUM_PARTIAL, .vlans = 2), EDIT_NONE,
	  0 },
	{ "IPv4 partial, empty payload", G4(.csum = CSUM_PARTIAL, .plen = 0),
	  EDIT_NONE, 0 },
	/* A partial checksum covers no payload, so the kernel (and we)
	 * cannot see a change there: it is still taken. */
	{ "IPv4 partial, payload byte changed", G4(.csum = CSUM_PARTIAL),
	  EDIT_PAYLOAD, 0 },
	{ "IPv4 zero (no checksum)", G4(.csum = CSUM_ZERO), EDIT_NONE, 0 },
	{ "IPv4 zero, 802.1Q", G4(.csum = CSUM_ZERO, .vlans = 1), EDIT_NONE,
	  0 },
	{ "IPv4 zero, payload byte changed", G4(.csum = CSUM_ZERO),
	  EDIT_PAYLOAD, 0 },

	/* What it would drop is not. */
	{ "IPv4 garbage", G4(.csum = CSUM_GARBAGE), EDIT_NONE,
	  RR_DROP_BAD_CHECKSUM },
	{ "IPv6 garbage", G6(.csum = CSUM_GARBAGE), EDIT_NONE,
	  RR_DROP_BAD_CHECKSUM },
	{ "IPv4 garbage, QinQ", G4(.csum = CSUM_GARBAGE, .vlans = 2), EDIT_NONE,
	  RR_DROP_BAD_CHECKSUM },
	{ "IPv6 garbage, 802.1Q", G6(.csum = CSUM_GARBAGE, .vlans = 1),
	  EDIT_NONE, RR_DROP_BAD_CHECKSUM },
	{ "IPv4 garbage, empty payload", G4(.csum = CSUM_GARBAGE, .plen = 0),
	  EDIT_NONE, RR_DROP_BAD_CHECKSUM },
	{ "IPv4 valid, one payload byte flipped", G4(), EDIT_PAYLOAD,
	  RR_DROP_BAD_CHECKSUM },
	{ "IPv6 valid, one payload byte flipped", G6(), EDIT_PAYLOAD,
	  RR_DROP_BAD_CHECKSUM },
	{ "IPv4 valid, odd length, last byte flipped", G4(.plen = 33),
	  EDIT_LAST_BYTE, RR_DROP_BAD_CHECKSUM },
	{ "IPv6 valid, QinQ, last byte flipped", G6(.plen = 8, .vlans = 2),
	  EDIT_LAST_BYTE, RR_DROP_BAD_CHECKSUM },
	{ "IPv4 valid, source port changed", G4(), EDIT_SPORT,
	  RR_DROP_BAD_CHECKSUM },
	{ "IPv4 valid, source address changed", G4(), EDIT_SADDR,
	  RR_DROP_BAD_CHECKSUM },
	{ "IPv6 valid, source address changed", G6(), EDIT_SADDR,
	  RR_DROP_BAD_CHECKSUM },
	{ "IPv4 partial, source address changed", G4(.csum = CSUM_PARTIAL),
	  EDIT_SADDR, RR_DROP_BAD_CHECKSUM },
	{ "IPv6 field 0xffff, not the valid one", G6(), EDIT_FIELD_FFFF,
	  RR_DROP_BAD_CHECKSUM },
	/* RFC 8200 8.1: IPv6 has no "no checksum". */
	{ "IPv6 zero", G6(.csum = CSUM_ZERO), EDIT_NONE, RR_DROP_MALFORMED },
	{ "IPv6 zero, QinQ", G6(.csum = CSUM_ZERO, .vlans = 2), EDIT_NONE,
	  RR_DROP_MALFORMED },

	/* IPv4 options: malformed, whatever the checksum says. */
	{ "IHL 6 (Router Alert)", G4(.opt_words = 1), EDIT_NONE,
	  RR_DROP_MALFORMED },
	{ "IHL 15 (40 bytes of options)", G4(.opt_words = 10), EDIT_NONE,
	  RR_DROP_MALFORMED },
	{ "IHL 6, 802.1Q", G4(.opt_words = 1, .vlans = 1), EDIT_NONE,
	  RR_DROP_MALFORMED },
	{ "IHL 15, QinQ, partial",
	  G4(.opt_words = 10, .vlans = 2, .csum = CSUM_PARTIAL), EDIT_NONE,
	  RR_DROP_MALFORMED },
	{ "IHL 7, zero checksum", G4(.opt_words = 2, .csum = CSUM_ZERO),
	  EDIT_NONE, RR_DROP_MALFORMED },
	{ "IHL 6, garbage checksum", G4(.opt_words = 1, .csum = CSUM_GARBAGE),
	  EDIT_NONE, RR_DROP_MALFORMED },
};
#pragma GCC diagnostic pop

/* Applies @e to the frame built as @lay says. */
static void apply(uint8_t *f, const struct frame_layout *lay, int family,
		  uint32_t plen, enum edit e)
{
	uint8_t *ip = f + lay->l3_off;

	switch (e) {
	case EDIT_NONE:
		break;
	case EDIT_PAYLOAD:
		f[lay->payload_off + plen / 2] ^= 0x10;
		break;
	case EDIT_LAST_BYTE:
		f[lay->payload_off + plen - 1] ^= 0x01;
		break;
	case EDIT_SPORT:
		f_put16(f + lay->l4_off, f_get16(f + lay->l4_off) + 1);
		break;
	case EDIT_SADDR:
		if (family == AF_INET6) {
			ip[8 + 15] ^= 0x04;
		} else {
			ip[12 + 3] ^= 0x04;
			f_put16(ip + 10, 0);
			f_put16(ip + 10, ref_csum(ip, F_IP4_HLEN, 0));
		}
		break;
	case EDIT_FIELD_FFFF:
		f_put16(f + lay->l4_off + 6, 0xffff);
		break;
	}
}

static void check_guard(const struct guard_case *c)
{
	struct frame_spec s = c->s;
	struct frame_layout lay;
	uint8_t *buf, *req, *part;
	uint32_t start = 0;
	struct rr_pkt pkt;
	int ret;

	snprintf(where, sizeof(where), "%s (%s)", c->what, spec_name(&s));
	buf = make(&s, 2048, &lay, &req);
	apply(buf, &lay, s.family, s.plen, c->edit);
	if (c->edit == EDIT_FIELD_FFFF &&
	    !ref_udp_check(buf, s.family, lay.l3_off, lay.l4_off,
			   F_UDP_HLEN + s.plen))
		fail_msg("%s: 0xffff happens to be valid here", where);
	memcpy(req, buf, lay.len);
	part = malloc(2048);
	assert_non_null(part);
	memcpy(part, buf, 2048);

	/* The parser says why; each path of the worker does the same. */
	CHECK_EQ(rr_parse(buf, lay.len, &pkt), -c->want);
	memset(&seen, 0, sizeof(seen));
	ret = rr_serve_unlimited(buf, lay.len, 2048, 1500, fn("rrtest_record"),
				 0, 0);
	if (c->want) {
		CHECK_EQ(ret, -c->want);
		CHECK_EQ(seen.calls, 0);
		CHECK(!memcmp(buf, req, lay.len));
	} else {
		CHECK_EQ(seen.calls, 1);
		check_reply(req, &lay, s.family, buf, ret,
			    req + lay.payload_off, s.plen, 1500);
	}
	CHECK_EQ(rr_serve_partial(part, lay.len, 2048, 1500, 3,
				  fn("rrtest_record"), 0, 0, &start),
		 c->want ? -c->want : ret);
	free(part);
	free(req);
	free(buf);
}

static void test_guards(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		check_guard(&cases[i]);
}

/* A flipped bit that leaves an IPv4 checksum field zero means "no
 * checksum", which is taken. */
static int no_csum(const struct frame_spec *s, const uint8_t *f,
		   const struct frame_layout *lay)
{
	return s->family != AF_INET6 && !f_get16(f + lay->l4_off + 6);
}

/*
 * Every payload length from 0 to 64, both families, with and without a
 * tag: valid and partial are taken, garbage and each single flipped bit
 * of a valid datagram are not. A checksum misses no single-bit error, so
 * no length may let one through.
 */
static void test_every_bit_counts(void **state)
{
	struct frame_spec s = { .sport = 40000, .dport = PORT_RECORD };
	struct frame_layout lay;
	uint8_t buf[256];
	uint32_t plen, off, bit;
	struct rr_pkt pkt;
	int fam, v;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		for (v = 0; v <= 1; v++) {
			s.vlans = v;
			for (plen = 0; plen <= 64; plen++) {
				s.plen = plen;
				snprintf(where, sizeof(where), "%s",
					 spec_name(&s));
				s.csum = CSUM_PARTIAL;
				build_frame(buf, sizeof(buf), &s, &lay);
				CHECK_EQ(rr_parse(buf, lay.len, &pkt), 0);
				s.csum = CSUM_GARBAGE;
				build_frame(buf, sizeof(buf), &s, &lay);
				CHECK_EQ(rr_parse(buf, lay.len, &pkt),
					 -RR_DROP_BAD_CHECKSUM);
				s.csum = CSUM_VALID;
				build_frame(buf, sizeof(buf), &s, &lay);
				CHECK_EQ(rr_parse(buf, lay.len, &pkt), 0);
				/* the UDP header but its length, and the
				 * payload */
				for (off = lay.l4_off; off < lay.len; off++) {
					if (off == lay.l4_off + 4 ||
					    off == lay.l4_off + 5)
						continue;
					for (bit = 0; bit < 8; bit++) {
						buf[off] ^=
							(uint8_t)(1u << bit);
						snprintf(where, sizeof(where),
							 "%s, byte %u bit %u",
							 spec_name(&s), off,
							 bit);
						CHECK_EQ(
							rr_parse(buf, lay.len,
								 &pkt),
							no_csum(&s, buf, &lay)
								? 0
								: -RR_DROP_BAD_CHECKSUM);
						buf[off] ^=
							(uint8_t)(1u << bit);
					}
				}
			}
		}
	}
}

int run_guard_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guards),
		cmocka_unit_test(test_every_bit_counts),
	};

	return cmocka_run_group_tests_name("guards", tests, NULL, NULL);
}
