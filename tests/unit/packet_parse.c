// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/packet program (packet.c): requests that are
 * not well-formed UDP, or whose ends may not get a reply, are dropped
 * with the right reason without reaching the function, and with the frame
 * left as it was; what is odd but well-formed is still served.
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

/* A UDP datagram shorter than its IP payload: only the datagram counts. */
static void test_udp_shorter_than_ip(void **state)
{
	struct frame_spec s = {
		.sport = 6, .dport = 1232, .plen = 10, .pad = 4
	};
	struct frame_layout lay;
	uint8_t *buf, *req, want[10];
	int ret, fam;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		/* The 4 trailing bytes are inside the IP packet. */
		s.ip_len = SET((fam ? 0 : 20) + 8 + 10 + 4);
		snprintf(where, sizeof(where), "udp < ip %s", spec_name(&s));
		buf = make(&s, 2048, &lay, &req);
		ret = rr_serve_unlimited(buf, lay.len, 2048, 1500,
					 fn("reverse"), 0, 0);
		reversed(req + lay.payload_off, want, 10);
		check_reply(req, &lay, s.family, buf, ret, want, 10, 1500);
		free(req);
		free(buf);
	}
}

/* Expects a drop as malformed, the function not called, the frame intact. */
static void expect_malformed(const uint8_t *frame, uint32_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	int ret;

	assert_non_null(buf);
	memcpy(buf, frame, len);
	memset(&seen, 0, sizeof(seen));
	ret = rr_serve_unlimited(buf, len, len, 1500, fn("rrtest_record"), 0,
				 0);
	CHECK_EQ(ret, -RR_DROP_MALFORMED);
	CHECK_EQ(seen.calls, 0);
	CHECK(!memcmp(buf, frame, len));
	free(buf);
}

/*
 * Cut anywhere, a frame is malformed: no length field can be trusted.
 * Whole, it is served; but for the one with IPv4 options, which is
 * malformed whole too now that options are refused (it was served once).
 */
static void test_truncated_everywhere(void **state)
{
	static const struct frame_spec specs[] = {
		{ .family = AF_INET, .plen = 9 },
		{ .family = AF_INET, .opt_words = 2, .plen = 4 },
		{ .family = AF_INET6, .plen = 9 },
		{ .family = AF_INET, .vlans = 1, .plen = 1 },
		{ .family = AF_INET6, .vlans = 2, .plen = 2 },
		{ .family = AF_INET, .vlans = 2, .plen = 0 },
	};
	struct frame_spec s;
	struct frame_layout lay;
	uint8_t buf[256];
	uint32_t i, n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(specs); i++) {
		s = specs[i];
		s.dport = PORT_RECORD;
		build_frame(buf, sizeof(buf), &s, &lay);
		for (n = 0; n < lay.len; n++) {
			snprintf(where, sizeof(where), "%s cut to %u bytes",
				 spec_name(&s), n);
			expect_malformed(buf, n);
		}
		snprintf(where, sizeof(where), "%s whole", spec_name(&s));
		if (s.opt_words) {
			expect_malformed(buf, lay.len);
			continue;
		}
		memset(&seen, 0, sizeof(seen));
		CHECK_EQ(rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500,
					    fn("rrtest_record"), 0, 0),
			 lay.len);
		CHECK_EQ(seen.calls, 1);
	}
}

struct bad_case {
	const char *what;
	struct frame_spec s;
};

#define V4(...)                                            \
	{                                                  \
		.family = AF_INET, .plen = 12, __VA_ARGS__ \
	}
#define V6(...)                                             \
	{                                                   \
		.family = AF_INET6, .plen = 12, __VA_ARGS__ \
	}

static const struct bad_case bad_cases[] = {
	{ "IHL 0", V4(.ihl = SET(0)) },
	{ "IHL 1", V4(.ihl = SET(1)) },
	{ "IHL 4", V4(.ihl = SET(4)) },
	{ "IHL 15 beyond the packet", V4(.ihl = SET(15)) },
	{ "IHL 15, total length beyond the frame",
	  V4(.ihl = SET(15), .ip_len = SET(80)) },
	{ "IHL 8, total length under it",
	  { .family = AF_INET, .ihl = SET(8), .plen = 0 } },
	{ "IP total length 1 over the frame", V4(.ip_len = SET(20 + 8 + 13)) },
	{ "IP total length 65535", V4(.ip_len = SET(65535)) },
	{ "IP total length under the header", V4(.ip_len = SET(19)) },
	{ "IP payload shorter than a UDP header", V4(.ip_len = SET(27)) },
	{ "IP total length 0", V4(.ip_len = SET(0)) },
	{ "UDP length 0", V4(.udp_len = SET(0)) },
	{ "UDP length 7", V4(.udp_len = SET(7)) },
	{ "UDP length beyond the IP payload", V4(.udp_len = SET(8 + 13)) },
	{ "UDP length 65535", V4(.udp_len = SET(65535)) },
	{ "IPv6 UDP length 0", V6(.udp_len = SET(0)) },
	{ "IPv6 UDP length 7", V6(.udp_len = SET(7)) },
	{ "IPv6 UDP length beyond the payload", V6(.udp_len = SET(8 + 13)) },
	{ "IPv6 payload length beyond the frame", V6(.ip_len = SET(8 + 13)) },
	{ "IPv6 payload length 7", V6(.ip_len = SET(7)) },
	{ "IPv6 payload length 0 (jumbogram)", V6(.ip_len = SET(0)) },
	{ "first fragment", V4(.frag = SET(F_IP_MF)) },
	{ "middle fragment", V4(.frag = SET(F_IP_MF | 185)) },
	{ "last fragment", V4(.frag = SET(185)) },
	{ "last fragment with DF", V4(.frag = SET(F_IP_DF | 1)) },
	{ "TCP", V4(.proto = SET(6)) },
	{ "ICMP", V4(.proto = SET(1)) },
	{ "IPv4 protocol 0", V4(.proto = SET(0)) },
	{ "UDP-Lite", V4(.proto = SET(136)) },
	{ "IPv6 hop-by-hop header", V6(.proto = SET(0)) },
	{ "IPv6 routing header", V6(.proto = SET(43)) },
	{ "IPv6 fragment header", V6(.proto = SET(44)) },
	{ "IPv6 destination options", V6(.proto = SET(60)) },
	{ "ICMPv6", V6(.proto = SET(58)) },
	{ "IPv6 TCP", V6(.proto = SET(6)) },
	{ "three VLAN tags", V4(.vlans = 3) },
	{ "three VLAN tags, IPv6", V6(.vlans = 3) },
	{ "ARP", V4(.ethertype = SET(F_ETH_ARP)) },
	{ "LLDP", V4(.ethertype = SET(0x88cc)) },
	{ "802.3 length field", V4(.ethertype = SET(60)) },
	{ "tagged ARP", V4(.vlans = 1, .ethertype = SET(F_ETH_ARP)) },
	{ "IPv4 EtherType, version 6", V4(.version = SET(6)) },
	{ "IPv4 EtherType, version 0", V4(.version = SET(0)) },
	{ "IPv6 EtherType, version 4", V6(.version = SET(4)) },
	{ "IPv4 packet under the IPv6 EtherType",
	  V4(.ethertype = SET(F_ETH_IPV6)) },
	{ "IPv6 packet under the IPv4 EtherType",
	  V6(.ethertype = SET(F_ETH_IP)) },
};

static void test_malformed(void **state)
{
	struct frame_layout lay;
	struct frame_spec s;
	uint8_t buf[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		s = bad_cases[i].s;
		s.dport = PORT_RECORD;
		snprintf(where, sizeof(where), "%s", bad_cases[i].what);
		build_frame(buf, sizeof(buf), &s, &lay);
		expect_malformed(buf, lay.len);
	}
}

/* The flags that do not make a fragment: DF, or nothing. */
static void test_not_fragments(void **state)
{
	struct frame_spec s = { .family = AF_INET, .dport = 1232, .plen = 20 };

	(void)state;
	s.frag = SET(0);
	roundtrip(&s, "reverse", 2048, 1500);
	s.frag = SET(F_IP_DF);
	roundtrip(&s, "reverse", 2048, 1500);
}

/* A bad IPv4 header checksum is dropped, as the kernel would. (The header
 * had an option word once; options are refused before the checksum is
 * looked at now, so it has none.) */
static void test_bad_ip_header_csum_dropped(void **state)
{
	struct frame_spec s = {
		.family = AF_INET, .sport = 40000, .dport = 7, .plen = 8
	};
	struct frame_layout lay;
	uint8_t buf[256];

	(void)state;
	snprintf(where, sizeof(where), "IPv4 header checksum");
	build_frame(buf, sizeof(buf), &s, &lay);
	CHECK(rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500, fn("echo"), 0,
				 0) > 0);
	build_frame(buf, sizeof(buf), &s, &lay);
	buf[lay.l3_off + 10] ^= 0x01;
	CHECK_EQ(rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500, fn("echo"),
				    0, 0),
		 -RR_DROP_MALFORMED);
}

/*
 * Nor is a request from a group or martian address: its reply would go to
 * a group, or come from the host's loopback. Both ends are checked, since
 * the reply swaps them.
 */
static void test_martian_ends_not_answered(void **state)
{
	static const uint8_t mcast_mac[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
	static const uint8_t zero4[4] = { 0, 0, 0, 0 };
	static const uint8_t lo4[4] = { 127, 0, 0, 1 };
	static const uint8_t lo6[16] = { [15] = 1 };
	static const uint8_t any6[16] = { 0 };
	static const struct {
		const char *what;
		struct frame_spec s;
		int src_mac_group;
	} cases[] = {
		{ "multicast source MAC", { .family = AF_INET }, 1 },
		{ "source 224.0.0.1",
		  { .family = AF_INET, .saddr = f_mcast_ip4 },
		  0 },
		{ "source 255.255.255.255",
		  { .family = AF_INET, .saddr = f_bcast_ip4 },
		  0 },
		{ "source 0.0.0.0", { .family = AF_INET, .saddr = zero4 }, 0 },
		{ "source 127.0.0.1", { .family = AF_INET, .saddr = lo4 }, 0 },
		{ "destination 127.0.0.1",
		  { .family = AF_INET, .daddr = lo4 },
		  0 },
		{ "source ff02::1",
		  { .family = AF_INET6, .saddr = f_mcast_ip6 },
		  0 },
		{ "source ::1", { .family = AF_INET6, .saddr = lo6 }, 0 },
		{ "source ::", { .family = AF_INET6, .saddr = any6 }, 0 },
		{ "destination ::1", { .family = AF_INET6, .daddr = lo6 }, 0 },
	};
	struct frame_layout lay;
	uint8_t buf[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct frame_spec s = cases[i].s;

		s.sport = 40000;
		s.dport = 7;
		s.plen = 4;
		build_frame(buf, sizeof(buf), &s, &lay);
		if (cases[i].src_mac_group)
			memcpy(buf + 6, mcast_mac, 6);
		snprintf(where, sizeof(where), "%s", cases[i].what);
		CHECK_EQ(rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500,
					    fn("echo"), 0, 0),
			 -RR_DROP_NOT_UNICAST);
	}
}

/*
 * A request to a broadcast or multicast address is not answered: a reply
 * would have to come from the group address (RFC 1122 3.2.1.3 forbids it)
 * and would make the server a reflector. The XDP program passes such
 * frames to the kernel; the request path refuses them as a second line.
 * Both the MAC and the IP group cases are tried, each alone.
 */
static void test_group_destination_not_answered(void **state)
{
	static const struct {
		int family;
		uint8_t mac[6];
		uint8_t ip[16];
	} groups[] = {
		{ AF_INET,
		  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		  { 255, 255, 255, 255 } },
		{ AF_INET, { 0x01, 0x00, 0x5e, 0, 0, 1 }, { 224, 0, 0, 1 } },
		{ AF_INET6,
		  { 0x33, 0x33, 0, 0, 0, 1 },
		  { 0xff, 0x02, [15] = 1 } },
	};
	struct frame_spec s = { .sport = 40000, .dport = 7, .plen = 4 };
	struct frame_layout lay;
	uint8_t buf[256];
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(groups); i++) {
		s.family = groups[i].family;
		build_frame(buf, sizeof(buf), &s, &lay);
		memcpy(buf, groups[i].mac, 6);
		if (s.family == AF_INET)
			memcpy(buf + lay.l3_off + 16, groups[i].ip, 4);
		else
			memcpy(buf + lay.l3_off + 24, groups[i].ip, 16);
		/* Both checksums cover the address: only the group may be
		 * wrong with this request. */
		fix_checksums(buf, lay.len);
		snprintf(where, sizeof(where),
			 "request to a group address #%zu", i);
		ret = rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500,
					 fn("echo"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_NOT_UNICAST);
		/* The IP group address alone, to a unicast MAC. */
		memcpy(buf, f_dst_mac, 6);
		ret = rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500,
					 fn("echo"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_NOT_UNICAST);
	}
	/* A unicast request built the same way is answered. */
	s.family = AF_INET;
	build_frame(buf, sizeof(buf), &s, &lay);
	CHECK(rr_serve_unlimited(buf, lay.len, sizeof(buf), 1500, fn("echo"), 0,
				 0) > 0);
}

/* The drop labels are metric labels users alert on. */
static void test_drop_labels(void **state)
{
	(void)state;
	assert_string_equal(rr_drop_label(RR_DROP_MALFORMED), "malformed");
	assert_string_equal(rr_drop_label(RR_DROP_FUNCTION_ERROR),
			    "function_error");
	assert_string_equal(rr_drop_label(RR_DROP_REPLY_TOO_BIG),
			    "reply_too_big");
	assert_string_equal(rr_drop_label(RR_DROP_AMPLIFICATION),
			    "amplification");
	assert_string_equal(rr_drop_label(RR_DROP_BAD_CHECKSUM),
			    "bad_checksum");
	assert_string_equal(rr_drop_label(RR_DROP_MAX), "unknown");
	assert_string_equal(rr_drop_label((enum rr_drop)1000), "unknown");
}

int run_parse_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_shorter_than_ip),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_not_fragments),
		cmocka_unit_test(test_drop_labels),
		cmocka_unit_test(test_group_destination_not_answered),
		cmocka_unit_test(test_martian_ends_not_answered),
		cmocka_unit_test(test_bad_ip_header_csum_dropped),
	};

	return cmocka_run_group_tests_name("parsing", tests, NULL, NULL);
}
