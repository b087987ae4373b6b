// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the request path in user space (src/packet.c): a crafted
 * request frame goes through rr_process()/rr_serve() with a function, and the
 * reply frame is checked field by field against what a client would
 * accept: addresses and ports swapped, tags kept, lengths and both
 * checksums right (checked with the independent sum in frames.h), the
 * payload what the function wrote. Frames that are not well-formed UDP
 * requests must be dropped as malformed without reaching the function.
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
#include "packet.h"
#include "registry.h"
#include "rr_function.h"

/* Test functions, on ports no bundled function uses. */
#define PORT_RECORD 40001
#define PORT_GROW 40002
#define PORT_FAIL 40003
#define PORT_OVERCLAIM 40004
#define PORT_FILL 40005
#define PORT_SHRINK 40006

static struct {
	int calls;
	struct rr_request req;
	size_t len, room;
} seen;

/* Echoes, remembering what it was given. */
static int record_handler(const struct rr_request *req, uint8_t *buf,
			  size_t len, size_t room)
{
	(void)buf;
	seen.calls++;
	seen.req = *req;
	seen.len = len;
	seen.room = room;
	return (int)len;
}
RR_FUNCTION(rrtest_record, PORT_RECORD, "test: echo and record",
	    record_handler);

/* The payload twice, or -EMSGSIZE when that does not fit. */
static int grow_handler(const struct rr_request *req, uint8_t *buf, size_t len,
			size_t room)
{
	(void)req;
	seen.calls++;
	if (2 * len > room)
		return -EMSGSIZE;
	memcpy(buf + len, buf, len);
	return (int)(2 * len);
}
RR_FUNCTION(rrtest_grow, PORT_GROW, "test: payload twice", grow_handler);

static int fail_handler(const struct rr_request *req, uint8_t *buf, size_t len,
			size_t room)
{
	(void)req;
	(void)buf;
	(void)len;
	(void)room;
	seen.calls++;
	return -EINVAL;
}
RR_FUNCTION(rrtest_fail, PORT_FAIL, "test: always fails", fail_handler);

/* Claims one byte more than it may write (and writes none). */
static int overclaim_handler(const struct rr_request *req, uint8_t *buf,
			     size_t len, size_t room)
{
	(void)req;
	(void)buf;
	(void)len;
	seen.calls++;
	return (int)room + 1;
}
RR_FUNCTION(rrtest_overclaim, PORT_OVERCLAIM, "test: too long",
	    overclaim_handler);

/* Writes all the room it is given. */
static int fill_handler(const struct rr_request *req, uint8_t *buf, size_t len,
			size_t room)
{
	size_t i;

	(void)req;
	(void)len;
	seen.calls++;
	seen.room = room;
	for (i = 0; i < room; i++)
		buf[i] = (uint8_t)(0xa5 ^ i);
	return (int)room;
}
RR_FUNCTION(rrtest_fill, PORT_FILL, "test: fills the room", fill_handler);

static int shrink_handler(const struct rr_request *req, uint8_t *buf,
			  size_t len, size_t room)
{
	(void)req;
	(void)buf;
	(void)room;
	seen.calls++;
	return len ? 1 : 0;
}
RR_FUNCTION(rrtest_shrink, PORT_SHRINK, "test: first byte only",
	    shrink_handler);

static char where[256];

#define CHECK(c)                                                \
	do {                                                    \
		if (!(c))                                       \
			fail_msg("%s: %s is false", where, #c); \
	} while (0)

#define CHECK_EQ(a, b)                                                        \
	do {                                                                  \
		long long a_ = (long long)(a), b_ = (long long)(b);           \
		if (a_ != b_)                                                 \
			fail_msg("%s: %s is %lld, expected %s = %lld", where, \
				 #a, a_, #b, b_);                             \
	} while (0)

static const struct rr_function *fn(const char *name)
{
	const struct rr_function *f = rr_registry_find(name);

	if (!f)
		fail_msg("function '%s' is not registered", name);
	return f;
}

static const char *spec_name(const struct frame_spec *s)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s vlans=%d opts=%u plen=%u pad=%u csum=%d",
		 s->family == AF_INET6 ? "IPv6" : "IPv4", s->vlans,
		 s->opt_words, s->plen, s->pad, s->csum);
	return buf;
}

/*
 * Checks @reply (@ret from rr_process) as the answer to @req, whose
 * function wrote @payload (@plen bytes); @mtu was the limit.
 */
static void check_reply(const uint8_t *req, const struct frame_layout *lay,
			int family, const uint8_t *reply, int ret,
			const uint8_t *payload, uint32_t plen, uint32_t mtu)
{
	const uint8_t *rip = req + lay->l3_off, *ip = reply + lay->l3_off;
	const uint8_t *rudp = req + lay->l4_off, *udp = reply + lay->l4_off;
	uint32_t ulen = F_UDP_HLEN + plen, ip_len;

	CHECK_EQ(ret, lay->payload_off + plen);
	/* Ethernet: addresses swapped, tags and EtherType kept. */
	CHECK(!memcmp(reply, req + 6, 6));
	CHECK(!memcmp(reply + 6, req, 6));
	CHECK(!memcmp(reply + 12, req + 12, lay->l3_off - 12));

	if (family == AF_INET) {
		uint32_t hlen = (rip[0] & 0xf) * 4u;

		ip_len = hlen + ulen;
		CHECK_EQ(ip[0], rip[0]);
		CHECK_EQ(ip[1], rip[1]);
		CHECK_EQ(f_get16(ip + 2), ip_len);
		CHECK(!memcmp(ip + 4, rip + 4, 4)); /* id, flags, offset */
		CHECK_EQ(ip[8], 64);
		CHECK_EQ(ip[9], 17);
		CHECK(!memcmp(ip + 12, rip + 16, 4));
		CHECK(!memcmp(ip + 16, rip + 12, 4));
		CHECK(!memcmp(ip + 20, rip + 20, hlen - 20)); /* options */
		CHECK_EQ(ref_fold(ref_sum(ip, hlen, 0)), 0xffff);
	} else {
		ip_len = F_IP6_HLEN + ulen;
		CHECK(!memcmp(ip, rip, 4)); /* version, class, flow label */
		CHECK_EQ(f_get16(ip + 4), ulen);
		CHECK_EQ(ip[6], 17);
		CHECK_EQ(ip[7], 64);
		CHECK(!memcmp(ip + 8, rip + 24, 16));
		CHECK(!memcmp(ip + 24, rip + 8, 16));
	}
	CHECK(ip_len <= mtu);

	CHECK_EQ(f_get16(udp), f_get16(rudp + 2));
	CHECK_EQ(f_get16(udp + 2), f_get16(rudp));
	CHECK_EQ(f_get16(udp + 4), ulen);
	CHECK_EQ(f_get16(udp + 6), ref_udp_csum(ip, family, udp, ulen));
	/* And as a receiver verifies it: the sum over everything is ~0. */
	CHECK_EQ(ref_fold(ref_sum(udp, ulen, ref_pseudo(ip, family, ulen))),
		 0xffff);
	CHECK(!memcmp(udp + F_UDP_HLEN, payload, plen));
}

/* Builds @s into an exactly @room-byte buffer; the caller frees it. */
static uint8_t *make(const struct frame_spec *s, uint32_t room,
		     struct frame_layout *lay, uint8_t **copy)
{
	uint8_t *buf = malloc(room);

	assert_non_null(buf);
	if (!build_frame(buf, room, s, lay))
		fail_msg("%s does not fit %u bytes", spec_name(s), room);
	*copy = malloc(lay->len);
	assert_non_null(*copy);
	memcpy(*copy, buf, lay->len);
	return buf;
}

static void reversed(const uint8_t *in, uint8_t *out, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		out[i] = in[n - 1 - i];
}

/* Runs reverse (or echo) on @s and checks the reply. */
static void roundtrip(const struct frame_spec *s, const char *name,
		      uint32_t room, uint32_t mtu)
{
	struct frame_layout lay;
	uint8_t *buf, *req, *want;
	int ret;

	snprintf(where, sizeof(where), "%s on %s", name, spec_name(s));
	buf = make(s, room, &lay, &req);
	ret = rr_process(buf, lay.len, room, mtu, fn(name), 0, 0);
	if (ret < 0)
		fail_msg("%s: dropped as %s", where, rr_drop_label(-ret));
	want = malloc(s->plen + 1);
	assert_non_null(want);
	if (!strcmp(name, "reverse"))
		reversed(req + lay.payload_off, want, s->plen);
	else
		memcpy(want, req + lay.payload_off, s->plen);
	check_reply(req, &lay, s->family, buf, ret, want, s->plen, mtu);
	free(want);
	free(req);
	free(buf);
}

static uint32_t max_payload(const struct frame_spec *s, uint32_t mtu)
{
	uint32_t l3 = s->family == AF_INET6 ? F_IP6_HLEN
					    : F_IP4_HLEN + 4 * s->opt_words;

	return mtu - l3 - F_UDP_HLEN;
}

/* RFC 8200 8.1: a zero UDP checksum over IPv6 is dropped, not answered. */
static void refused_ipv6_zero_csum(const struct frame_spec *s)
{
	struct frame_layout lay;
	uint8_t *buf, *req;

	snprintf(where, sizeof(where), "reverse on %s", spec_name(s));
	buf = make(s, 2048, &lay, &req);
	CHECK_EQ(rr_process(buf, lay.len, 2048, 1500, fn("reverse"), 0, 0),
		 -RR_DROP_MALFORMED);
	free(req);
	free(buf);
}

/* Every encapsulation, payload size and incoming checksum state (a zero
 * one over IPv6 is refused). */
static void test_reverse_replies(void **state)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 17, 64, 255, 1001 };
	static const enum frame_csum csums[] = { CSUM_GARBAGE, CSUM_PARTIAL,
						 CSUM_ZERO, CSUM_VALID };
	static const uint32_t opts[] = { 0, 1, 10 }; /* IHL 5, 6, 15 */
	struct frame_spec s = { .sport = 50123, .dport = 1232 };
	size_t fam, v, o, l, c;

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
						if (fam && s.csum == CSUM_ZERO)
							refused_ipv6_zero_csum(
								&s);
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
		ret = rr_process(buf, lay.len, sizeof(buf), 1500, fn("echo"), 0,
				 0);
		CHECK_EQ(ret, lay.len);
		CHECK_EQ(f_get16(udp + 6), 0xffff);
		CHECK_EQ(ref_fold(ref_sum(udp, 10,
					  ref_pseudo(ip, s.family, 10))),
			 0xffff);
	}
}

/* The function sees the request as the client sent it. */
static void test_function_sees_request(void **state)
{
	struct frame_spec s = {
		.sport = 54321, .dport = PORT_RECORD, .plen = 33, .vlans = 1
	};
	struct frame_layout lay;
	uint8_t buf[2048];
	int ret;

	(void)state;
	snprintf(where, sizeof(where), "request view IPv4");
	build_frame(buf, sizeof(buf), &s, &lay);
	memset(&seen, 0, sizeof(seen));
	ret = rr_process(buf, lay.len, sizeof(buf), 1500, fn("rrtest_record"),
			 3, 5);
	CHECK_EQ(ret, lay.len);
	CHECK_EQ(seen.calls, 1);
	CHECK_EQ(seen.req.family, AF_INET);
	CHECK(!memcmp(&seen.req.src.v4, f_src_ip4, 4));
	CHECK(!memcmp(&seen.req.dst.v4, f_dst_ip4, 4));
	CHECK_EQ(seen.req.src_port, 54321);
	CHECK_EQ(seen.req.dst_port, PORT_RECORD);
	CHECK_EQ(seen.req.queue, 3);
	CHECK_EQ(seen.req.thread, 5);
	CHECK_EQ(seen.len, 33);
	CHECK_EQ(seen.room, 1500 - 20 - 8);

	snprintf(where, sizeof(where), "request view IPv6");
	s.family = AF_INET6;
	s.vlans = 2;
	build_frame(buf, sizeof(buf), &s, &lay);
	memset(&seen, 0, sizeof(seen));
	ret = rr_process(buf, lay.len, sizeof(buf), 1500, fn("rrtest_record"),
			 0, 1);
	CHECK_EQ(ret, lay.len);
	CHECK_EQ(seen.calls, 1);
	CHECK_EQ(seen.req.family, AF_INET6);
	CHECK(!memcmp(&seen.req.src.v6, f_src_ip6, 16));
	CHECK(!memcmp(&seen.req.dst.v6, f_dst_ip6, 16));
	CHECK_EQ(seen.req.src_port, 54321);
	CHECK_EQ(seen.req.dst_port, PORT_RECORD);
	CHECK_EQ(seen.req.thread, 1);
	CHECK_EQ(seen.room, 1500 - 40 - 8);
}

/* Replies longer than the request: lengths and checksums follow. */
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
		s.opt_words = i == 2 ? 2 : 0;
		for (k = 0; k < 3; k++) {
			/* small, odd, and exactly half of the MTU's room */
			s.plen = k == 0	  ? 10
				 : k == 1 ? 333
					  : max_payload(&s, 1500) / 2;
			snprintf(where, sizeof(where), "grow %s",
				 spec_name(&s));
			buf = make(&s, 2048, &lay, &req);
			ret = rr_process(buf, lay.len, 2048, 1500,
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

/* A function that cannot fit its reply, or fails: nothing is sent. */
static void test_function_drops(void **state)
{
	struct frame_spec s = { .sport = 4444, .plen = 800 };
	struct frame_layout lay;
	uint8_t buf[2048];
	int ret, fam;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		snprintf(where, sizeof(where), "drops %s", spec_name(&s));

		/* 1600 bytes do not fit a 1500 MTU: the function says so. */
		build_frame(buf, sizeof(buf), &s, &lay);
		ret = rr_process(buf, lay.len, sizeof(buf), 1500,
				 fn("rrtest_grow"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_REPLY_TOO_BIG);

		build_frame(buf, sizeof(buf), &s, &lay);
		ret = rr_process(buf, lay.len, sizeof(buf), 1500,
				 fn("rrtest_fail"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_FUNCTION_ERROR);

		/* Claiming more than the room is never sent. */
		build_frame(buf, sizeof(buf), &s, &lay);
		ret = rr_process(buf, lay.len, sizeof(buf), 1500,
				 fn("rrtest_overclaim"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_REPLY_TOO_BIG);
		build_frame(buf, sizeof(buf), &s, &lay);
		ret = rr_process(buf, lay.len, sizeof(buf), 9000,
				 fn("rrtest_overclaim"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_REPLY_TOO_BIG);
	}
}

struct limit_case {
	int family, vlans;
	uint32_t room, mtu;
	uint32_t want_room; /* what the function is offered */
};

/*
 * The room a function is offered: the reply's IP packet fits the MTU, the
 * frame fits the buffer, the lengths fit 16 bits. A function that uses all
 * of it gives a valid reply of exactly that size.
 */
static void test_reply_limits(void **state)
{
	static const struct limit_case cases[] = {
		{ AF_INET, 0, 2048, 1500, 1500 - 28 },
		{ AF_INET, 2, 2048, 1500, 1500 - 28 },
		{ AF_INET6, 0, 2048, 1500, 1500 - 48 },
		{ AF_INET6, 1, 2048, 1500, 1500 - 48 },
		{ AF_INET, 0, 2048, 576, 576 - 28 },
		/* the buffer is the limit */
		{ AF_INET, 0, 4096, 9000, 4096 - 14 - 28 },
		{ AF_INET6, 2, 4096, 9000, 4096 - 22 - 48 },
		{ AF_INET, 1, 1000, 1500, 1000 - 18 - 28 },
		/* the 16-bit IPv4 total length is the limit */
		{ AF_INET, 0, 70000, 65535, 65535 - 28 },
		{ AF_INET, 0, 70000, 100000, 65535 - 28 },
	};
	struct frame_spec s = {
		.sport = 1, .dport = PORT_FILL, .plen = 50, .csum = CSUM_GARBAGE
	};
	const struct limit_case *c;
	struct frame_layout lay;
	uint8_t *buf, *req, *want;
	uint32_t i, j;
	int ret;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = &cases[i];
		s.family = c->family;
		s.vlans = c->vlans;
		snprintf(where, sizeof(where), "limits #%u %s room %u mtu %u",
			 i, spec_name(&s), c->room, c->mtu);
		buf = make(&s, c->room, &lay, &req);
		memset(&seen, 0, sizeof(seen));
		ret = rr_process(buf, lay.len, c->room, c->mtu,
				 fn("rrtest_fill"), 0, 0);
		CHECK_EQ(seen.calls, 1);
		CHECK_EQ(seen.room, c->want_room);
		want = malloc(c->want_room);
		assert_non_null(want);
		for (j = 0; j < c->want_room; j++)
			want[j] = (uint8_t)(0xa5 ^ j);
		check_reply(req, &lay, s.family, buf, ret, want, c->want_room,
			    c->mtu);
		CHECK(ret <= (int)c->room);
		free(want);
		free(req);
		free(buf);
	}
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
	ret = rr_process(buf, lay.len, sizeof(buf), 1500, fn("rrtest_record"),
			 0, 0);
	CHECK_EQ(ret, -RR_DROP_REPLY_TOO_BIG);
	CHECK_EQ(seen.calls, 0);
}

/* A reply shorter than the request: the old payload's tail is not sent. */
static void test_shorter_reply(void **state)
{
	struct frame_spec s = {
		.sport = 3, .dport = PORT_SHRINK, .plen = 99, .opt_words = 3
	};
	struct frame_layout lay;
	uint8_t *buf, *req;
	int fam, ret;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		snprintf(where, sizeof(where), "shrink %s", spec_name(&s));
		buf = make(&s, 2048, &lay, &req);
		ret = rr_process(buf, lay.len, 2048, 1500, fn("rrtest_shrink"),
				 0, 0);
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
		ret = rr_process(buf, lay.len, 2048, 1500, fn("reverse"), 0, 0);
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
	ret = rr_process(buf, len, len, 1500, fn("rrtest_record"), 0, 0);
	CHECK_EQ(ret, -RR_DROP_MALFORMED);
	CHECK_EQ(seen.calls, 0);
	CHECK(!memcmp(buf, frame, len));
	free(buf);
}

/* Cut anywhere, a frame is malformed: no length field can be trusted. */
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
	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		s = specs[i];
		s.dport = PORT_RECORD;
		build_frame(buf, sizeof(buf), &s, &lay);
		for (n = 0; n < lay.len; n++) {
			snprintf(where, sizeof(where), "%s cut to %u bytes",
				 spec_name(&s), n);
			expect_malformed(buf, n);
		}
		/* and whole, it is served */
		snprintf(where, sizeof(where), "%s whole", spec_name(&s));
		memset(&seen, 0, sizeof(seen));
		CHECK_EQ(rr_process(buf, lay.len, sizeof(buf), 1500,
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
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
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

struct amp_case {
	int family, vlans;
	uint32_t opt_words, plen, factor;
	uint32_t want_room; /* offered to the function */
};

/*
 * A reply's IP packet may be at most max_amplification times the
 * request's: the function is offered just that much room, and using all
 * of it gives a reply of exactly that size. The MTU and the buffer still
 * apply when they are tighter; 0 means no limit.
 */
static void test_amplification_room(void **state)
{
	static const struct amp_case cases[] = {
		/* IPv4: request IP packet 20 + 8 + 10 = 38, reply <= 114 */
		{ AF_INET, 0, 0, 10, 3, 114 - 28 },
		{ AF_INET, 2, 0, 10, 3, 114 - 28 }, /* tags are not IP */
		/* options count on both sides: request 32 + 8 + 10 = 50 */
		{ AF_INET, 0, 3, 10, 3, 150 - 40 },
		/* IPv6: 40 + 8 + 10 = 58, reply <= 174 */
		{ AF_INET6, 0, 0, 10, 3, 174 - 48 },
		{ AF_INET6, 1, 0, 10, 3, 174 - 48 },
		{ AF_INET, 0, 0, 0, 3, 84 - 28 }, /* empty request */
		{ AF_INET, 0, 0, 10, 1, 10 }, /* no larger than the request */
		{ AF_INET6, 0, 0, 0, 1, 0 },
		/* the MTU is tighter */
		{ AF_INET, 0, 0, 1000, 3, 1500 - 28 },
		{ AF_INET6, 0, 0, 500, 3, 1500 - 48 },
		/* no limit, and limits too large to compute in 32 bits */
		{ AF_INET, 0, 0, 10, 0, 1500 - 28 },
		{ AF_INET, 0, 0, 10, 1000, 1500 - 28 },
		{ AF_INET6, 0, 0, 1400, 1000, 1500 - 48 },
		{ AF_INET, 0, 0, 10, UINT32_MAX, 1500 - 28 },
		/* 113025456 * 38 wraps to 32 in 32-bit arithmetic */
		{ AF_INET, 0, 0, 10, 113025456, 1500 - 28 },
	};
	struct frame_spec s = { .sport = 1,
				.dport = PORT_FILL,
				.csum = CSUM_PARTIAL };
	const struct amp_case *c;
	struct frame_layout lay;
	uint8_t *buf, *req, *want;
	uint32_t i, j;
	int ret;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = &cases[i];
		s.family = c->family;
		s.vlans = c->vlans;
		s.opt_words = c->opt_words;
		s.plen = c->plen;
		snprintf(where, sizeof(where), "amplification #%u %s factor %u",
			 i, spec_name(&s), c->factor);
		buf = make(&s, 2048, &lay, &req);
		memset(&seen, 0, sizeof(seen));
		ret = rr_serve(buf, lay.len, 2048, 1500, c->factor,
			       fn("rrtest_fill"), 0, 0);
		CHECK_EQ(seen.calls, 1);
		CHECK_EQ(seen.room, c->want_room);
		want = malloc(c->want_room + 1);
		assert_non_null(want);
		for (j = 0; j < c->want_room; j++)
			want[j] = (uint8_t)(0xa5 ^ j);
		check_reply(req, &lay, s.family, buf, ret, want, c->want_room,
			    1500);
		free(want);
		free(req);
		free(buf);
	}
}

/* Over the cap: dropped and counted as amplification, not as too big. */
static void test_amplification_drops(void **state)
{
	struct frame_spec s = { .sport = 1, .plen = 10 };
	struct frame_layout lay;
	uint8_t buf[2048];
	int fam, ret;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		snprintf(where, sizeof(where), "amplification drops %s",
			 spec_name(&s));

		/* twice the payload is more than a factor of 1 allows */
		build_frame(buf, sizeof(buf), &s, &lay);
		ret = rr_serve(buf, lay.len, sizeof(buf), 1500, 1,
			       fn("rrtest_grow"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_AMPLIFICATION);
		build_frame(buf, sizeof(buf), &s, &lay);
		ret = rr_serve(buf, lay.len, sizeof(buf), 1500, 3,
			       fn("rrtest_grow"), 0, 0);
		CHECK(ret > 0);
		build_frame(buf, sizeof(buf), &s, &lay);
		ret = rr_serve(buf, lay.len, sizeof(buf), 1500, 3,
			       fn("rrtest_overclaim"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_AMPLIFICATION);
		/* a reply as long as the request is always fine */
		build_frame(buf, sizeof(buf), &s, &lay);
		ret = rr_serve(buf, lay.len, sizeof(buf), 1500, 1,
			       fn("reverse"), 0, 0);
		CHECK_EQ(ret, lay.len);
		/* other failures keep their own names */
		build_frame(buf, sizeof(buf), &s, &lay);
		ret = rr_serve(buf, lay.len, sizeof(buf), 1500, 1,
			       fn("rrtest_fail"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_FUNCTION_ERROR);
		build_frame(buf, sizeof(buf), &s, &lay);
		f_put16(buf + lay.l4_off + 4, 7); /* UDP length 7 */
		ret = rr_serve(buf, lay.len, sizeof(buf), 1500, 3,
			       fn("reverse"), 0, 0);
		CHECK_EQ(ret, -RR_DROP_MALFORMED);
	}

	/* When the MTU is the tighter limit, it is the MTU's drop. */
	s.family = AF_INET;
	s.plen = 1000;
	snprintf(where, sizeof(where), "MTU tighter than the cap");
	build_frame(buf, sizeof(buf), &s, &lay);
	ret = rr_serve(buf, lay.len, sizeof(buf), 1500, 3,
		       fn("rrtest_overclaim"), 0, 0);
	CHECK_EQ(ret, -RR_DROP_REPLY_TOO_BIG);
	build_frame(buf, sizeof(buf), &s, &lay);
	ret = rr_serve(buf, lay.len, sizeof(buf), 1500, 3, fn("rrtest_grow"), 0,
		       0);
	CHECK_EQ(ret, -RR_DROP_REPLY_TOO_BIG);
}

/* A bad IPv4 header checksum is dropped, as the kernel would. */
static void test_bad_ip_header_csum_dropped(void **state)
{
	struct frame_spec s = { .family = AF_INET,
				.sport = 40000,
				.dport = 7,
				.plen = 8,
				.opt_words = 1 };
	struct frame_layout lay;
	uint8_t buf[256];

	(void)state;
	snprintf(where, sizeof(where), "IPv4 header checksum");
	build_frame(buf, sizeof(buf), &s, &lay);
	CHECK(rr_process(buf, lay.len, sizeof(buf), 1500, fn("echo"), 0, 0) >
	      0);
	build_frame(buf, sizeof(buf), &s, &lay);
	buf[lay.l3_off + 10] ^= 0x01;
	CHECK_EQ(rr_process(buf, lay.len, sizeof(buf), 1500, fn("echo"), 0, 0),
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
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct frame_spec s = cases[i].s;

		s.sport = 40000;
		s.dport = 7;
		s.plen = 4;
		build_frame(buf, sizeof(buf), &s, &lay);
		if (cases[i].src_mac_group)
			memcpy(buf + 6, mcast_mac, 6);
		snprintf(where, sizeof(where), "%s", cases[i].what);
		CHECK_EQ(rr_process(buf, lay.len, sizeof(buf), 1500, fn("echo"),
				    0, 0),
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
	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		s.family = groups[i].family;
		build_frame(buf, sizeof(buf), &s, &lay);
		memcpy(buf, groups[i].mac, 6);
		if (s.family == AF_INET) {
			memcpy(buf + lay.l3_off + 16, groups[i].ip, 4);
			f_put16(buf + lay.l3_off + 10, 0);
			f_put16(buf + lay.l3_off + 10,
				(uint16_t)~ref_fold(
					ref_sum(buf + lay.l3_off, 20, 0)));
		} else {
			memcpy(buf + lay.l3_off + 24, groups[i].ip, 16);
		}
		snprintf(where, sizeof(where),
			 "request to a group address #%zu", i);
		ret = rr_process(buf, lay.len, sizeof(buf), 1500, fn("echo"), 0,
				 0);
		CHECK_EQ(ret, -RR_DROP_NOT_UNICAST);
		/* The IP group address alone, to a unicast MAC. */
		memcpy(buf, f_dst_mac, 6);
		ret = rr_process(buf, lay.len, sizeof(buf), 1500, fn("echo"), 0,
				 0);
		CHECK_EQ(ret, -RR_DROP_NOT_UNICAST);
	}
	/* A unicast request built the same way is answered. */
	s.family = AF_INET;
	build_frame(buf, sizeof(buf), &s, &lay);
	CHECK(rr_process(buf, lay.len, sizeof(buf), 1500, fn("echo"), 0, 0) >
	      0);
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
	assert_string_equal(rr_drop_label(RR_DROP_MAX), "unknown");
	assert_string_equal(rr_drop_label((enum rr_drop)1000), "unknown");
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

/*
 * The offload path (rr_serve_partial) leaves the pseudo-header sum in the
 * UDP checksum field, as the kernel does for CHECKSUM_PARTIAL, and says
 * where summing starts. Completing it the way the kernel or a NIC does
 * (sum from csum_start to the end, field included, complement, 0 sent as
 * 0xffff) must give exactly what the software path writes, for every
 * encapsulation, size and incoming checksum state; and apart from the
 * field the two replies are the same.
 */
static void test_partial_checksum_completes_to_full(void **state)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 17, 255, 800, 1001 };
	static const enum frame_csum csums[] = { CSUM_GARBAGE, CSUM_PARTIAL,
						 CSUM_VALID };
	struct frame_spec s = { .sport = 50123, .dport = 1232 };
	size_t fam, v, l, c;

	(void)state;
	for (fam = 0; fam < 2; fam++) {
		s.family = fam ? AF_INET6 : AF_INET;
		for (v = 0; v <= 2; v++) {
			s.vlans = (int)v;
			s.opt_words = fam ? 0 : (uint32_t)v; /* IHL 5-7 */
			for (c = 0; c < 3; c++) {
				s.csum = csums[c];
				for (l = 0; l < 8; l++) {
					s.plen = lens[l];
					check_partial(&s);
				}
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reverse_replies),
		cmocka_unit_test(test_echo_replies),
		cmocka_unit_test(test_checksum_zero_sent_as_ffff),
		cmocka_unit_test(test_partial_checksum_completes_to_full),
		cmocka_unit_test(test_csum_partial_matches_reference),
		cmocka_unit_test(test_function_sees_request),
		cmocka_unit_test(test_longer_reply),
		cmocka_unit_test(test_function_drops),
		cmocka_unit_test(test_reply_limits),
		cmocka_unit_test(test_request_over_mtu),
		cmocka_unit_test(test_shorter_reply),
		cmocka_unit_test(test_padding_ignored),
		cmocka_unit_test(test_udp_shorter_than_ip),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_not_fragments),
		cmocka_unit_test(test_amplification_room),
		cmocka_unit_test(test_amplification_drops),
		cmocka_unit_test(test_drop_labels),
		cmocka_unit_test(test_group_destination_not_answered),
		cmocka_unit_test(test_martian_ends_not_answered),
		cmocka_unit_test(test_bad_ip_header_csum_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
