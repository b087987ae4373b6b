// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the dns function's request path: arbitrary bytes
 * as a DNS message, straight into its handler, with ASan and UBSan. The
 * function is made as reqrouter makes it (rr_fn_instance_new()) from
 * zones written at start-up that have a bit of everything the answer
 * logic branches on: CNAME chains and loops, DNAME, wildcards (one a
 * CNAME loop), empty non-terminals, a delegation with glue, NS/MX/SRV/
 * SVCB targets, long RRsets, and a child zone.
 *
 * Input: byte 0 picks the instance (bit 0: udp_max_payload 1232, or 4096
 * with CHAOS identity and version and an NSID)
 * and the small room (bits 1-7: the message's length plus 0-127 bytes);
 * the rest is the message. Each input runs with the small room and with
 * 4096 bytes, each in a buffer of exactly that size, so a write past the
 * room is an ASan report. Checked besides the sanitizers:
 * - the handler returns RR_NO_REPLY or a reply of 12 bytes up to the room,
 *   and the same bytes when run again (nothing uninitialised leaks in);
 * - a reply parses on its own: QR, the query's ID, opcode and RD, AD, CD,
 *   RA and Z clear, the question as the query had it, every record inside
 *   the message, every compression pointer backwards, names of at most
 *   255 bytes, nothing left over, one OPT at most (the root's, in the
 *   additional section, version 0, our payload size);
 * - without OPT (and TSIG) a reply is 512 bytes at most;
 * - a reply that fits the small room is the one the small room gets;
 * - exactly one RCODE counter (or dns_ignored, for no reply) moves.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "function.h"
#include "registry.h"
#include <reqrouter/rr_function.h>
#include "testutil.h"
#include "util.h"

#define LARGE_ROOM 4096

/* The zones: tests/fuzz/gen_dns_seeds.c asks for their names. */
static const char parent_zone[] =
	"$ORIGIN fz.\n$TTL 300\n"
	"@ SOA ns1 admin 1 7200 3600 1209600 60\n"
	"@ NS ns1\n@ NS ns2.other.\n@ MX 10 mx\n@ MX 20 mx\n@ MX 30 mx.other.\n"
	"@ A 192.0.2.1\n@ AAAA 2001:db8::1\n@ TXT \"apex\"\n"
	"ns1 A 192.0.2.53\nns1 AAAA 2001:db8::53\nmx A 192.0.2.25\n"
	"www A 192.0.2.80\nwww A 192.0.2.81\nwww AAAA 2001:db8::80\n"
	"c1 CNAME c2\nc2 CNAME c3\nc3 CNAME c4\nc4 CNAME c5\nc5 CNAME c6\n"
	"c6 CNAME www\nout CNAME www.other.\nloop1 CNAME loop2\n"
	"loop2 CNAME loop1\ndangling CNAME nothing\n"
	"dn DNAME target\ntarget A 192.0.2.90\nx.target A 192.0.2.91\n"
	"*.w TXT \"wild\"\n*.w2 CNAME a.w2\n*.w3 MX 10 mx\n"
	"a.b.ent A 192.0.2.99\n"
	"_s._udp SRV 0 0 53 www\n_s._udp SRV 0 0 54 x.target\n"
	"svc SVCB 1 www alpn=h2\nweb HTTPS 1 svc\n"
	"del NS ns.del\ndel NS ns.other.\nns.del A 192.0.2.54\n"
	"ns.del AAAA 2001:db8::54\n"
	"long TXT \"" /* about 600 bytes in 4 strings */
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" \""
	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"\n"
	"many MX 1 m1\nmany MX 2 m2\nmany MX 3 m3\nmany MX 4 m4\nmany MX 5 m5\n"
	"many MX 6 m6\nmany MX 7 m7\nmany MX 8 m8\nmany MX 9 m9\n"
	"many MX 10 m10\nmany MX 11 m11\nmany MX 12 m12\nmany MX 13 m13\n"
	"many MX 14 m14\nmany MX 15 m15\nmany MX 16 m16\nmany MX 17 m17\n"
	"m1 A 10.0.0.1\nm2 A 10.0.0.2\nm3 AAAA ::3\nm9 A 10.0.0.9\n"
	"m15 A 10.0.0.15\nm16 A 10.0.0.16\nm17 A 10.0.0.17\n"
	"child NS ns.child\nns.child A 192.0.2.55\n";

static const char child_zone[] =
	"$ORIGIN child.fz.\n$TTL 600\n"
	"@ SOA ns admin 1 2 3 4 30\n@ NS ns\nns A 192.0.2.55\n"
	"www A 192.0.2.56\n* AAAA 2001:db8::56\n";

static const struct rr_function *fn;
static struct rr_fn_instance *inst[2];
static struct rr_fn_counters ctrs[2];
static uint64_t counters[2][RR_FN_MAX_COUNTERS];
static const uint16_t udp_max[2] = { 1232, 4096 };

static const char *const rcode_counters[] = {
	"dns_noerror", "dns_nxdomain",	  "dns_refused", "dns_formerr",
	"dns_notimp",  "dns_other_rcode", "dns_ignored",
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void write_zone(char *path, const char *text)
{
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fz_fail("cannot write %s", path);
	close(fd);
}

/* Reads a name at *off of the reply: pointers only backwards, labels of
 * 63 bytes or less, 255 bytes in all. */
static void check_name(const uint8_t *m, size_t len, size_t *off)
{
	size_t p = *off, total = 1, hops = 0;
	int jumped = 0;

	for (;;) {
		fz_check(p < len, "name past the reply at %zu", p);
		if ((m[p] & 0xc0) == 0xc0) {
			size_t to;

			fz_check(p + 1 < len, "pointer cut at %zu", p);
			to = (size_t)(m[p] & 0x3f) << 8 | m[p + 1];
			fz_check(
				to < p && to >= 12,
				"pointer at %zu to %zu: not backwards into the "
				"message",
				p, to);
			if (!jumped)
				*off = p + 2;
			jumped = 1;
			p = to;
			fz_check(++hops < 128, "pointer chain");
			continue;
		}
		fz_check(m[p] <= 63, "label type %#x at %zu", m[p], p);
		if (!m[p])
			break;
		total += m[p] + 1U;
		fz_check(total <= 255, "name over 255 bytes");
		p += m[p] + 1U;
	}
	if (!jumped)
		*off = p + 1;
}

/* The reply on its own terms, and against the query it answers. */
static void check_reply(const uint8_t *q, size_t qlen, const uint8_t *r,
			size_t rlen, int which)
{
	uint16_t qf = qlen >= 4 ? be16(q + 2) : 0, rf;
	unsigned int n, i, an, ns, ar, opt = 0, tsig = 0;
	size_t off = 12;

	fz_check(rlen >= 12, "reply of %zu bytes", rlen);
	rf = be16(r + 2);
	fz_check(qlen >= 12, "a reply to %zu bytes", qlen);
	fz_check(!memcmp(r, q, 2), "ID not the query's");
	fz_check(rf & 0x8000, "QR clear");
	fz_check((rf & 0x7900) == (qf & 0x7900),
		 "opcode or RD not the query's");
	fz_check(!(rf & 0x00f0), "RA, Z, AD or CD set: %#x", rf);
	fz_check(be16(r + 4) <= 1, "QDCOUNT %u", be16(r + 4));
	if (be16(r + 4)) {
		check_name(r, rlen, &off);
		fz_check(off + 4 <= rlen, "question cut");
		off += 4;
		fz_check(off <= qlen && !memcmp(r + 12, q + 12, off - 12),
			 "question not the query's");
	}
	an = be16(r + 6);
	ns = be16(r + 8);
	ar = be16(r + 10);
	n = an + ns + ar;
	for (i = 0; i < n; i++) {
		size_t start = off, rdlen;
		uint16_t type;

		check_name(r, rlen, &off);
		fz_check(off + 10 <= rlen, "record %u cut", i);
		type = be16(r + off);
		rdlen = be16(r + off + 8);
		fz_check(off + 10 + rdlen <= rlen, "RDATA of record %u cut", i);
		if (type == 41) {
			fz_check(!opt++, "two OPT records");
			fz_check(i >= an + ns, "OPT outside additional");
			fz_check(r[start] == 0, "OPT owner not the root");
			fz_check(be16(r + off + 2) == udp_max[which],
				 "OPT payload %u", be16(r + off + 2));
			fz_check(r[off + 5] == 0, "EDNS version %u",
				 r[off + 5]);
		} else if (type == 250) {
			tsig++;
		}
		off += 10 + rdlen;
	}
	fz_check(off == rlen, "%zu bytes after the last record", rlen - off);
	fz_check(opt || tsig || rlen <= 512, "%zu bytes without EDNS", rlen);
}

static uint64_t rcode_total(int which)
{
	uint64_t sum = 0;
	uint32_t i, k;

	for (i = 0; i < ctrs[which].n; i++)
		for (k = 0; k < ARRAY_SIZE(rcode_counters); k++)
			if (!strcmp(ctrs[which].name[i], rcode_counters[k]))
				sum += counters[which][i];
	return sum;
}

/* One call in a buffer of exactly @room bytes; the reply is copied to
 * @out. */
static int run(int which, const uint8_t *msg, size_t len, size_t room,
	       uint8_t *out)
{
	struct rr_request req = { 0 };
	uint64_t before = rcode_total(which);
	uint8_t *buf = malloc(room ? room : 1);
	int ret;

	if (!buf)
		abort();
	memcpy(buf, msg, len);
	memset(buf + len, 0xa5, room - len);
	req.family = AF_INET;
	rr_fn_request_bind(&req, inst[which], 0, counters[which]);
	ret = fn->handler(&req, buf, len, room);
	fz_check(ret == RR_NO_REPLY || (ret >= 12 && (size_t)ret <= room),
		 "handler returned %d with room %zu", ret, room);
	fz_check(rcode_total(which) == before + 1,
		 "RCODE counters moved by %llu",
		 (unsigned long long)(rcode_total(which) - before));
	if (ret > 0)
		memcpy(out, buf, (size_t)ret);
	free(buf);
	return ret;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char parent[] = "/tmp/fuzz-dns-parent.XXXXXX";
	char child[] = "/tmp/fuzz-dns-child.XXXXXX";
	char zone2[128], err[512];
	int i;

	(void)argc;
	(void)argv;
	if (rr_registry_check(err, sizeof(err)))
		fz_fail("registry: %s", err);
	fn = rr_registry_find("dns");
	if (!fn)
		fz_fail("no dns function");
	write_zone(parent, parent_zone);
	write_zone(child, child_zone);
	snprintf(zone2, sizeof(zone2), "child.fz %s", child);
	for (i = 0; i < 2; i++) {
		struct rr_fn_setting s[6] = {
			{ "zone", parent, "fuzz", 1 },
			{ "zone", zone2, "fuzz", 2 },
			{ "udp_max_payload", i ? "4096" : "1232", "fuzz", 3 },
			{ "identity", "ns1.fz", "fuzz", 4 },
			{ "version", "fuzzing", "fuzz", 5 },
			{ "nsid", "0x6e7331", "fuzz", 6 },
		};

		if (rr_fn_instance_new(fn, 53, s, i ? 6 : 3, 1, &ctrs[i],
				       &inst[i], err, sizeof(err)))
			fz_fail("init: %s", err);
	}
	unlink(parent);
	unlink(child);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t small[LARGE_ROOM], large[LARGE_ROOM], again[LARGE_ROOM];
	int which, rs, rl, ra;
	size_t len, room;

	if (size < 1)
		return 0;
	which = data[0] & 1;
	len = size - 1 > LARGE_ROOM ? LARGE_ROOM : size - 1;
	room = len + (data[0] >> 1);
	if (room > LARGE_ROOM)
		room = LARGE_ROOM;

	rl = run(which, data + 1, len, LARGE_ROOM, large);
	ra = run(which, data + 1, len, LARGE_ROOM, again);
	fz_check(rl == ra && (rl < 0 || !memcmp(large, again, (size_t)rl)),
		 "two runs differ: %d and %d bytes", rl, ra);
	if (rl > 0)
		check_reply(data + 1, len, large, (size_t)rl, which);
	rs = run(which, data + 1, len, room, small);
	fz_check((rs < 0) == (rl < 0),
		 "a reply with one room, none with another");
	if (rs > 0)
		check_reply(data + 1, len, small, (size_t)rs, which);
	if (rl > 0 && (size_t)rl <= room)
		fz_check(rs == rl && !memcmp(small, large, (size_t)rl),
			 "a %d-byte reply fits %zu bytes, yet that room got %d",
			 rl, room, rs);
	return 0;
}
