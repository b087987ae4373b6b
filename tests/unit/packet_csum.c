// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/packet program (packet.c): the checksums of a
 * reply. rr_csum_partial() against the textbook sum, a checksum of 0
 * sent as 0xffff, and the partial checksum left for the transmitter
 * completing to the one the software path writes.
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

/*
 * A UDP checksum that computes to 0 must go out as 0xffff: 0 means "no
 * checksum" over IPv4 and is invalid over IPv6. The payload word is chosen
 * to make the sum come out that way.
 */
static void test_checksum_zero_sent_as_ffff(void **state)
{
	uint8_t payload[2] = { 0, 0 };
	struct frame_spec s = {
		.sport = 1000, .dport = 7, .payload = payload, .plen = 2
	};
	struct frame_layout lay;
	uint8_t buf[256], *ip, *udp;
	uint16_t word;
	int fam, ret;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		payload[0] = payload[1] = 0;
		build_frame(buf, sizeof(buf), &s, &lay);
		ip = buf + lay.l3_off;
		udp = buf + lay.l4_off;
		/* Sum of the reply with a zero payload (swaps do not change
		 * it); the payload word then makes it 0xffff. */
		word = (uint16_t)(0xffff -
				  ref_fold(ref_sum(
					  udp, 6,
					  ref_pseudo(ip, s.family, 10))));
		payload[0] = (uint8_t)(word >> 8);
		payload[1] = (uint8_t)word;
		build_frame(buf, sizeof(buf), &s, &lay);
		snprintf(where, sizeof(where), "zero checksum %s",
			 spec_name(&s));
		ret = rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500,
					 fn("echo"), 0, 0);
		CHECK_EQ(ret, lay.len);
		CHECK_EQ(f_get16(udp + 6), 0xffff);
		CHECK_EQ(ref_fold(ref_sum(udp, 10,
					  ref_pseudo(ip, s.family, 10))),
			 0xffff);
	}
}

/*
 * rr_csum_partial() against the textbook sum: every length up to 300 from
 * every alignment, with bytes that are all 0xff (every add carries) and
 * with random ones, starting from sums that are 0, small and near the top.
 * Compared after folding, in network byte order.
 */
static void test_csum_partial_matches_reference(void **state)
{
	static const uint32_t starts[] = { 0, 1, 0xffff, 0xfffffffe,
					   0xffffffff };
	uint8_t buf[320];
	uint32_t len, off, i, k, sum;
	uint16_t got, want;
	int round;

	(void)state;
	srand(8);
	for (round = 0; round < 2; round++) {
		for (i = 0; i < sizeof(buf); i++)
			buf[i] = round ? (uint8_t)rand() : 0xff;
		for (len = 0; len <= 300; len++) {
			for (off = 0; off < 8; off++) {
				for (k = 0; k < 5; k++) {
					sum = rr_csum_partial(buf + off, len,
							      starts[k]);
					got = (uint16_t)~rr_csum_fold(sum);
					got = (uint16_t)ntohs(got);
					/* The start, as the same bytes in
					 * memory order, read big-endian. */
					want = ref_fold(ref_sum(
						buf + off, len,
						ref_fold(ntohl(starts[k]))));
					if (got != want)
						fail_msg(
							"len %u off %u start %#x: %#x, expected %#x",
							len, off, starts[k],
							got, want);
				}
			}
		}
	}
}

/* One request through both paths; see below. */
static void check_partial(const struct frame_spec *s)
{
	uint32_t start = 0, ulen = F_UDP_HLEN + s->plen;
	uint8_t *soft, *part, *req;
	struct frame_layout lay;
	int ret_soft, ret_part;
	uint16_t done;

	snprintf(where, sizeof(where), "partial checksum, %s", spec_name(s));
	soft = make(s, 2048, &lay, &req);
	part = malloc(2048);
	assert_non_null(part);
	memcpy(part, soft, 2048);
	ret_soft = rr_serve(soft, lay.len, 2048, 1500, 0, fn("reverse"), 0, 0);
	ret_part = rr_serve_partial(part, lay.len, 2048, 1500, 0, fn("reverse"),
				    0, 0, &start);
	CHECK_EQ(ret_part, ret_soft);
	CHECK_EQ(start, lay.l4_off);
	/* The field: the folded pseudo-header sum of the reply. */
	CHECK_EQ(f_get16(part + start + 6),
		 ref_fold(ref_pseudo(part + lay.l3_off, s->family, ulen)));
	/* Completed as skb_checksum_help() or a NIC would. */
	done = (uint16_t)~ref_fold(ref_sum(part + start, ulen, 0));
	CHECK_EQ(done ? done : 0xffff, f_get16(soft + start + 6));
	/* Nothing else differs. */
	CHECK(!memcmp(part, soft, start + 6));
	CHECK(!memcmp(part + start + 8, soft + start + 8,
		      (uint32_t)ret_soft - start - 8));
	free(part);
	free(req);
	free(soft);
}

/* A request both paths must refuse, for the same reason @why. */
static void check_partial_refused(const struct frame_spec *s, int why)
{
	uint8_t *soft, *part, *req;
	struct frame_layout lay;
	uint32_t start = 0;

	snprintf(where, sizeof(where), "partial checksum, %s", spec_name(s));
	soft = make(s, 2048, &lay, &req);
	part = malloc(2048);
	assert_non_null(part);
	memcpy(part, soft, 2048);
	CHECK_EQ(rr_serve(soft, lay.len, 2048, 1500, 0, fn("reverse"), 0, 0),
		 -why);
	CHECK_EQ(rr_serve_partial(part, lay.len, 2048, 1500, 0, fn("reverse"),
				  0, 0, &start),
		 -why);
	CHECK(!memcmp(part, req, lay.len));
	free(part);
	free(req);
	free(soft);
}

/*
 * The offload path (rr_serve_partial) leaves the pseudo-header sum in the
 * UDP checksum field, as the kernel does for CHECKSUM_PARTIAL, and says
 * where summing starts. Completing it the way the kernel or a NIC does
 * (sum from csum_start to the end, field included, complement, 0 sent as
 * 0xffff) must give exactly what the software path writes, for every
 * encapsulation, size and incoming checksum state that is answered; and
 * apart from the field the two replies are the same. A garbage incoming
 * checksum and IPv4 options (IHL 6, 7), answered once, are now refused
 * by both paths alike.
 */
static void test_partial_checksum_completes_to_full(void **state)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 17, 255, 800, 1001 };
	static const enum frame_csum csums[] = { CSUM_GARBAGE, CSUM_PARTIAL,
						 CSUM_VALID, CSUM_ZERO };
	struct frame_spec s = { .sport = 50123, .dport = 1232 };
	size_t fam, v, l, c;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		for (v = 0; v <= 2; v++) {
			s.vlans = (int)v;
			for (c = 0; c < ARRAY_SIZE(csums); c++) {
				s.csum = csums[c];
				for (l = 0; l < 8; l++) {
					s.plen = lens[l];
					s.opt_words = 0;
					if (s.csum == CSUM_GARBAGE)
						check_partial_refused(
							&s,
							RR_DROP_BAD_CHECKSUM);
					else if (fam && s.csum == CSUM_ZERO)
						check_partial_refused(
							&s, RR_DROP_MALFORMED);
					else
						check_partial(&s);
					if (fam || !v)
						continue;
					s.opt_words =
						(uint32_t)v; /* IHL 6, 7 */
					check_partial_refused(
						&s, RR_DROP_MALFORMED);
				}
			}
		}
	}
}

int run_csum_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checksum_zero_sent_as_ffff),
		cmocka_unit_test(test_partial_checksum_completes_to_full),
		cmocka_unit_test(test_csum_partial_matches_reference),
	};

	return cmocka_run_group_tests_name("checksums", tests, NULL, NULL);
}
