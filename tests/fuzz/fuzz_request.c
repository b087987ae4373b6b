// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the user-space request path: one raw frame in,
 * rr_serve_unlimited() with every registered function, and the reply frame or a
 * counted drop out. Built with ASan and UBSan, so any out-of-bounds access
 * in parsing, the function call or reply construction stops the run; the
 * checks below catch the logical failures a sanitizer cannot see: a return
 * value the worker would use as a counter index or a TX length, a reply
 * that overflows the buffer or the MTU, a bad checksum, unswapped
 * addresses, a request dropped that should have been answered.
 *
 * Input: byte 0 picks the MTU (low 3 bits) and the buffer room (high 5
 * bits: 4096 down to 128 in steps of 128, as a frame's offset in a UMEM
 * chunk would); byte 1 the amplification limit (low 3 bits; 0 calls
 * rr_serve_unlimited(), which has none, anything else rr_serve() as the worker
 * does) and, with bit 3, puts right the checksums rr_parse() checks so
 * mutations get past them; the rest is the frame, cut to the room.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "frames.h"
#include "packet.h"
#include "registry.h"
#include <reqrouter/rr_function.h>
#include "testutil.h"

#define FRAME_ROOM 4096
#define ROOM_STEP 128
#define FILL_BYTE 0xa5 /* the buffer past the frame, as a reused chunk */
#define TEST_QUEUE 3
#define TEST_THREAD 1
#define FIX_CHECKSUMS 0x08 /* in byte 1 */

/* Ethernet's minimum MTU is 68, so every header of a reply fits it. */
static const uint32_t mtus[8] = {
	68, 576, 1280, 1499, 1500, 3000, 9000, 65535
};
/* Amplification factors; 3 is the default, 1000 the largest allowed. */
static const uint32_t amps[8] = { 0, 1, 2, 3, 3, 4, 10, 1000 };

/*
 * fuzz_weird: a function that only exists in this binary. The first
 * payload byte picks what it returns, so the fuzzer reaches every way a
 * function can misbehave; the fill modes write the whole room they were
 * given, which ASan turns into a crash if the room overstates the buffer.
 */
enum weird_mode {
	WEIRD_ECHO,
	WEIRD_FILL_ROOM, /* room bytes, returns room */
	WEIRD_FILL_OVER, /* room bytes, returns room + 1 */
	WEIRD_EMSGSIZE,
	WEIRD_EINVAL,
	WEIRD_MINUS_ONE,
	WEIRD_INT_MIN,
	WEIRD_INT_MAX,
	WEIRD_EMPTY,
	WEIRD_RAW,	 /* returns payload bytes 1..4 as a 32-bit int */
	WEIRD_FILL_SOME, /* room bytes, returns some length <= room */
};

static struct {
	int called;
	const uint8_t *buf;
	size_t len, room;
	int mode, ret;
	struct rr_request req;
} weird;

static uint8_t fill_pattern(size_t i)
{
	return (uint8_t)(i * 31 + 7);
}

static void fill_room(uint8_t *buf, size_t room)
{
	size_t i;

	for (i = 0; i < room; i++)
		buf[i] = fill_pattern(i);
}

static int weird_handler(const struct rr_request *req, uint8_t *buf, size_t len,
			 size_t room)
{
	int mode = len ? buf[0] : WEIRD_EMPTY, ret;
	uint32_t raw;

	weird.called = 1;
	weird.buf = buf;
	weird.len = len;
	weird.room = room;
	weird.req = *req;
	switch (mode) {
	case WEIRD_ECHO:
		ret = (int)len;
		break;
	case WEIRD_FILL_ROOM:
		fill_room(buf, room);
		ret = (int)room;
		break;
	case WEIRD_FILL_OVER:
		fill_room(buf, room);
		ret = (int)room + 1;
		break;
	case WEIRD_EMSGSIZE:
		ret = -EMSGSIZE;
		break;
	case WEIRD_EINVAL:
		ret = -EINVAL;
		break;
	case WEIRD_MINUS_ONE:
		ret = -1;
		break;
	case WEIRD_INT_MIN:
		ret = INT_MIN;
		break;
	case WEIRD_INT_MAX:
		ret = INT_MAX;
		break;
	case WEIRD_EMPTY:
		ret = 0;
		break;
	case WEIRD_RAW:
		raw = 0;
		memcpy(&raw, buf + 1, len > 4 ? 4 : len - 1);
		ret = (int)raw;
		break;
	default:
		fill_room(buf, room);
		ret = (int)(((size_t)mode * 977) % (room + 1));
		mode = WEIRD_FILL_SOME;
		break;
	}
	weird.mode = mode;
	weird.ret = ret;
	return ret;
}

RR_FUNCTION(fuzz_weird, 65000, "misbehaves on purpose (fuzz only)",
	    weird_handler);

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* What rr_parse() accepted must really be a well-formed UDP request. */
static void check_parse(const uint8_t *f, uint32_t len, const struct rr_pkt *p)
{
	uint32_t l3 = p->l3_off, hlen, l4_len, ulen;
	uint16_t proto = be16(f + 12);

	fz_check(p->vlans >= 0 && p->vlans <= 2, "vlans %d", p->vlans);
	fz_check(l3 == F_ETH_HLEN + (uint32_t)p->vlans * F_VLAN_HLEN,
		 "l3_off %u with %d tags", l3, p->vlans);
	if (p->vlans)
		proto = be16(f + l3 - 2);
	if (p->family == AF_INET) {
		fz_check(proto == 0x0800, "IPv4 under EtherType %#x", proto);
		hlen = (f[l3] & 0xf) * 4u;
		fz_check(f[l3] >> 4 == 4 && hlen >= F_IP4_HLEN, "IPv4 header");
		fz_check(f[l3 + 9] == 17, "IPv4 protocol %u", f[l3 + 9]);
		fz_check(!(be16(f + l3 + 6) & 0x3fff),
			 "IPv4 fragment accepted");
		fz_check(be16(f + l3 + 2) >= hlen &&
				 l3 + be16(f + l3 + 2) <= len,
			 "IPv4 total length %u", be16(f + l3 + 2));
		l4_len = be16(f + l3 + 2) - hlen;
	} else {
		fz_check(p->family == AF_INET6, "family %d", p->family);
		fz_check(proto == 0x86dd, "IPv6 under EtherType %#x", proto);
		fz_check(f[l3] >> 4 == 6 && f[l3 + 6] == 17, "IPv6 header");
		hlen = F_IP6_HLEN;
		l4_len = be16(f + l3 + 4);
		fz_check(l3 + hlen + l4_len <= len, "IPv6 payload length");
	}
	fz_check(p->l4_off == l3 + hlen, "l4_off %u", p->l4_off);
	fz_check(p->payload_off == p->l4_off + F_UDP_HLEN, "payload_off");
	fz_check(l4_len >= F_UDP_HLEN, "UDP header past the IP payload");
	ulen = be16(f + p->l4_off + 4);
	fz_check(ulen >= F_UDP_HLEN && ulen <= l4_len, "UDP length %u", ulen);
	fz_check(p->payload_len == ulen - F_UDP_HLEN, "payload_len %u",
		 p->payload_len);
	fz_check(p->payload_off + p->payload_len <= len,
		 "payload past the frame");
}

/* Not multicast, broadcast, 0/8, loopback, :: or ::1. */
static int unicast(const uint8_t *a, int family)
{
	static const uint8_t zero[15];

	if (family == AF_INET)
		return a[0] != 0 && a[0] != 127 && a[0] < 224;
	return a[0] != 0xff && (memcmp(a, zero, sizeof(zero)) || a[15] > 1);
}

/* The reply: built from @req (a copy of the request) and @rp, its parse. */
static void check_reply(const uint8_t *r, uint32_t rlen, const uint8_t *req,
			const struct rr_pkt *rp)
{
	struct rr_pkt p;
	uint32_t l3 = rp->l3_off, hlen = rp->l4_off - l3, ulen, i;
	uint32_t alen = rp->family == AF_INET ? 4 : 16;
	uint32_t src = rp->family == AF_INET ? 12 : 8;
	uint32_t dst = src + alen;

	/*
	 * The reply goes where the request came from: a request from a
	 * broadcast, multicast or martian source must not be answered, or one
	 * forged request gets a reply to a whole group or to the host itself
	 * (RFC 1122 3.2.1.3: discard it; the kernel does). Nor may a reply
	 * come from such an address.
	 */
	fz_check(!((r[0] | r[6]) & 1), "reply between group MAC addresses");
	fz_check(unicast(r + l3 + src, rp->family) &&
			 unicast(r + l3 + dst, rp->family),
		 "reply from or to a group or martian address");
	fz_check(rr_parse(r, rlen, &p) == 0, "the reply does not parse");
	fz_check(p.l3_off == rp->l3_off && p.l4_off == rp->l4_off &&
			 p.family == rp->family && p.vlans == rp->vlans,
		 "the reply's headers moved");
	ulen = rlen - p.l4_off;
	fz_check(p.payload_len == ulen - F_UDP_HLEN,
		 "reply of %u bytes with a UDP length of %u", rlen,
		 p.payload_len + F_UDP_HLEN);
	fz_check(be16(r + p.l4_off + 6) != 0, "UDP checksum left 0");
	fz_check(ref_udp_check(r, p.family, l3, p.l4_off, ulen) == 0,
		 "bad UDP checksum %#06x", be16(r + p.l4_off + 6));
	fz_check(rr_udp_csum(r, &p) == 0, "rr_udp_csum disagrees on the reply");

	fz_check(!memcmp(r, req + 6, 6) && !memcmp(r + 6, req, 6),
		 "MAC addresses not swapped");
	fz_check(!memcmp(r + 12, req + 12, l3 - 12), "VLAN tags changed");
	fz_check(!memcmp(r + l3 + src, req + l3 + dst, alen) &&
			 !memcmp(r + l3 + dst, req + l3 + src, alen),
		 "IP addresses not swapped");
	fz_check(!memcmp(r + p.l4_off, req + p.l4_off + 2, 2) &&
			 !memcmp(r + p.l4_off + 2, req + p.l4_off, 2),
		 "UDP ports not swapped");
	if (p.family == AF_INET) {
		fz_check(be16(r + l3 + 2) == hlen + ulen, "IPv4 total length");
		fz_check(r[l3 + 8] == RR_REPLY_TTL, "TTL %u", r[l3 + 8]);
		fz_check(ref_csum(r + l3, hlen, 0) == 0,
			 "bad IPv4 header checksum");
		/* Version to id, fragment field, protocol and options. */
		for (i = 0; i < hlen; i++)
			if (i != 2 && i != 3 && i != 8 && i != 10 && i != 11 &&
			    (i < 12 || i >= 20))
				fz_check(r[l3 + i] == req[l3 + i],
					 "IPv4 header byte %u changed", i);
	} else {
		fz_check(be16(r + l3 + 4) == ulen, "IPv6 payload length");
		fz_check(r[l3 + 7] == RR_REPLY_TTL, "hop limit %u", r[l3 + 7]);
		fz_check(!memcmp(r + l3, req + l3, 4) &&
				 r[l3 + 6] == req[l3 + 6],
			 "IPv6 header fields changed");
	}
}

/*
 * The offload path (rr_serve_partial) on the same request must build the
 * same reply as @soft but for the UDP checksum, which it leaves partial,
 * and which summed from csum_start as a transmitter would must be the one
 * rr_serve() wrote.
 */
static void check_partial(const struct rr_function *fn, const uint8_t *req,
			  uint32_t len, uint32_t room, uint32_t mtu,
			  uint32_t amp, const uint8_t *soft, int ret,
			  const struct rr_pkt *p)
{
	uint32_t start = 0, ulen = (uint32_t)ret - p->l4_off;
	uint16_t done;
	uint8_t *buf;
	int ret2;

	buf = malloc(room);
	if (!buf)
		abort();
	memcpy(buf, req, len);
	memset(buf + len, FILL_BYTE, room - len);
	ret2 = rr_serve_partial(buf, len, room, mtu, amp, fn, TEST_QUEUE,
				TEST_THREAD, &start);
	fz_check(ret2 == ret, "%s: partial path returned %d, software %d",
		 fn->name, ret2, ret);
	fz_check(start == p->l4_off, "%s: csum_start %u, UDP header at %u",
		 fn->name, start, p->l4_off);
	fz_check(!memcmp(buf, soft, start + 6) &&
			 !memcmp(buf + start + 8, soft + start + 8,
				 (uint32_t)ret - start - 8),
		 "%s: partial reply differs beyond the checksum", fn->name);
	done = ref_csum(buf + start, ulen, 0);
	fz_check((done ? done : 0xffff) == be16(soft + start + 6),
		 "%s: partial checksum completes to %#x, software wrote %#x",
		 fn->name, done, be16(soft + start + 6));
	free(buf);
}

static int fn_is(const struct rr_function *fn, const char *name)
{
	return !strcmp(fn->name, name);
}

static void run_one(const struct rr_function *fn, const uint8_t *req,
		    uint32_t len, uint32_t room, uint32_t mtu, uint32_t amp)
{
	uint32_t max_frame, reply_room, i;
	uint64_t amp_cap = UINT64_MAX, req_ip;
	int amp_limited = 0;
	int parse_err, ret, want = 0;
	struct rr_pkt p;
	uint8_t *buf;

	/* Exactly room bytes, so ASan sees any write past them. */
	buf = malloc(room);
	if (!buf)
		abort();
	memcpy(buf, req, len);
	memset(buf + len, FILL_BYTE, room - len);
	memset(&weird, 0, sizeof(weird));

	parse_err = rr_parse(req, len, &p);
	if (amp)
		ret = rr_serve(buf, len, room, mtu, amp, fn, TEST_QUEUE,
			       TEST_THREAD);
	else
		ret = rr_serve_unlimited(buf, len, room, mtu, fn, TEST_QUEUE,
					 TEST_THREAD);

	fz_check(ret != 0, "%s: neither a reply nor a drop", fn->name);
	fz_check(ret > -RR_DROP_MAX, "%s: unknown drop %d", fn->name, ret);
	/* Metrics name each drop by its label. */
	fz_check(ret > 0 ||
			 strcmp(rr_drop_label((enum rr_drop)(-ret)), "unknown"),
		 "%s: drop %d has no label", fn->name, ret);
	/* A frame rr_parse() refuses is dropped for the reason it gives. */
	fz_check(!parse_err || ret == parse_err,
		 "%s: rr_parse() says %d, the request path %d", fn->name,
		 parse_err, ret);
	fz_check(parse_err || ret != -RR_DROP_MALFORMED,
		 "%s: a frame rr_parse() accepts was dropped as malformed",
		 fn->name);
	if (parse_err)
		goto out;
	check_parse(req, len, &p);

	max_frame = min_u32(room, min_u32(p.l3_off + mtu, p.l3_off + 0xffff));
	reply_room = max_frame > p.payload_off ? max_frame - p.payload_off : 0;
	/* The reply's IP packet may be amp times the request's, at most. */
	req_ip = p.payload_off - p.l3_off + p.payload_len;
	if (amp) {
		amp_cap = amp * req_ip - (p.payload_off - p.l3_off);
		amp_limited = amp_cap < reply_room;
	}
	if (ret > 0) {
		fz_check((uint32_t)ret <= room,
			 "%s: reply of %d bytes, room %u", fn->name, ret, room);
		fz_check((uint32_t)ret <= max_frame,
			 "%s: reply of %d bytes over MTU %u (l3 at %u)",
			 fn->name, ret, mtu, p.l3_off);
		fz_check(!amp || ret - p.l3_off <= amp * req_ip,
			 "%s: reply IP packet of %u bytes, %u x %" PRIu64
			 " allowed",
			 fn->name, ret - p.l3_off, amp, req_ip);
		check_reply(buf, (uint32_t)ret, req, &p);
		if (amp && (fn_is(fn, "echo") || fn_is(fn, "reverse")))
			check_partial(fn, req, len, room, mtu, amp, buf, ret,
				      &p);
	}

	if (fn_is(fn, "echo") || fn_is(fn, "reverse")) {
		/* A same-size reply is sent exactly when it fits. */
		want = p.payload_len <= reply_room
			       ? (int)p.l4_off + 8 + (int)p.payload_len
			       : -RR_DROP_REPLY_TOO_BIG;
		fz_check(ret == want, "%s: returned %d, expected %d", fn->name,
			 ret, want);
		for (i = 0; ret > 0 && i < p.payload_len; i++)
			fz_check(buf[p.payload_off + i] ==
					 req[p.payload_off +
					     (fn_is(fn, "echo")
						      ? i
						      : p.payload_len - 1 - i)],
				 "%s: payload byte %u", fn->name, i);
	} else if (fn_is(fn, "fuzz_weird") && weird.called) {
		fz_check(weird.buf == buf + p.payload_off, "payload pointer");
		fz_check(weird.len == p.payload_len, "payload length %zu",
			 weird.len);
		fz_check(weird.room >= weird.len, "room %zu below length %zu",
			 weird.room, weird.len);
		fz_check(weird.room <= max_frame - p.payload_off,
			 "room %zu overstates the buffer or MTU (%u)",
			 weird.room, max_frame - p.payload_off);
		fz_check(weird.room <= amp_cap,
			 "room %zu over the amplification limit %" PRIu64,
			 weird.room, amp_cap);
		fz_check(weird.req.family == p.family &&
				 weird.req.src_port == be16(req + p.l4_off) &&
				 weird.req.dst_port ==
					 be16(req + p.l4_off + 2) &&
				 weird.req.queue == TEST_QUEUE &&
				 weird.req.thread == TEST_THREAD,
			 "request context");
		fz_check(
			!memcmp(&weird.req.src,
				req + p.l3_off + (p.family == AF_INET ? 12 : 8),
				p.family == AF_INET ? 4 : 16) &&
				!memcmp(&weird.req.dst,
					req + p.l3_off +
						(p.family == AF_INET ? 16 : 24),
					p.family == AF_INET ? 4 : 16),
			"request addresses");
		if (weird.ret == -EMSGSIZE ||
		    (weird.ret > 0 && (size_t)weird.ret > weird.room))
			want = amp_limited ? -RR_DROP_AMPLIFICATION
					   : -RR_DROP_REPLY_TOO_BIG;
		else if (weird.ret < 0)
			want = -RR_DROP_FUNCTION_ERROR;
		else
			want = (int)p.payload_off + weird.ret;
		fz_check(ret == want,
			 "fuzz_weird mode %d returned %d: got %d, "
			 "expected %d",
			 weird.mode, weird.ret, ret, want);
		for (i = 0; ret > 0 && i < (uint32_t)weird.ret &&
			    (weird.mode == WEIRD_FILL_ROOM ||
			     weird.mode == WEIRD_FILL_SOME);
		     i++)
			fz_check(buf[p.payload_off + i] == fill_pattern(i),
				 "fuzz_weird: reply byte %u", i);
	} else if (fn_is(fn, "fuzz_weird")) {
		fz_check(ret == -RR_DROP_REPLY_TOO_BIG,
			 "fuzz_weird not called, yet %d", ret);
	}
out:
	free(buf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	if (rr_registry_check(err, sizeof(err)))
		fz_fail("registry: %s", err);
	if (!rr_registry_find("fuzz_weird") || !rr_registry_find("echo"))
		fz_fail("registry lacks fuzz_weird or echo");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[FRAME_ROOM];
	uint32_t mtu, room, len, amp;
	size_t i, n = rr_registry_count();

	if (size < 2)
		return 0;
	mtu = mtus[data[0] & 7];
	room = FRAME_ROOM - (uint32_t)(data[0] >> 3) * ROOM_STEP;
	amp = amps[data[1] & 7];
	len = size - 2 > room ? room : (uint32_t)(size - 2);
	memcpy(frame, data + 2, len);
	if (data[1] & FIX_CHECKSUMS)
		fix_checksums(frame, len);
	for (i = 0; i < n; i++) {
		const struct rr_function *fn = rr_registry_at(i);

		/* A function with settings and state (kv, dns) is called only
		 * with the state its init() made; fuzz_dns covers dns. */
		if (fn->init)
			continue;
		run_one(fn, frame, len, room, mtu, amp);
	}
	return 0;
}
