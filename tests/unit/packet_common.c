// SPDX-License-Identifier: GPL-2.0
/*
 * What the parts of the request path's tests share (packet_test.h): the
 * test functions registered for them, frames built from a spec, and the
 * reply checks.
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

struct seen seen;

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

char where[256];

const struct rr_function *fn(const char *name)
{
	const struct rr_function *f = rr_registry_find(name);

	if (!f)
		fail_msg("function '%s' is not registered", name);
	return f;
}

const char *spec_name(const struct frame_spec *s)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s vlans=%d opts=%u plen=%u pad=%u csum=%s",
		 s->family == AF_INET6 ? "IPv6" : "IPv4", s->vlans,
		 s->opt_words, s->plen, s->pad, f_csum_name(s->csum));
	return buf;
}

/*
 * Checks @reply (@ret from rr_serve_unlimited) as the answer to @req, whose
 * function wrote @payload (@plen bytes); @mtu was the limit.
 */
void check_reply(const uint8_t *req, const struct frame_layout *lay, int family,
		 const uint8_t *reply, int ret, const uint8_t *payload,
		 uint32_t plen, uint32_t mtu)
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
uint8_t *make(const struct frame_spec *s, uint32_t room,
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

void reversed(const uint8_t *in, uint8_t *out, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		out[i] = in[n - 1 - i];
}

/* Runs reverse (or echo) on @s and checks the reply. */
void roundtrip(const struct frame_spec *s, const char *name, uint32_t room,
	       uint32_t mtu)
{
	struct frame_layout lay;
	uint8_t *buf, *req, *want;
	int ret;

	snprintf(where, sizeof(where), "%s on %s", name, spec_name(s));
	buf = make(s, room, &lay, &req);
	ret = rr_serve_unlimited(buf, lay.len, room, mtu, fn(name), 0, 0);
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
