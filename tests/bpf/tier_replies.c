// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel tier against the user-space path, byte for byte: the
 * steering program and the bundled functions' XDP programs are loaded the
 * way reqrouter loads them (src/daemon/xdp.c), and every request frame runs both
 * through bpf_prog_test_run_opts() and through rr_serve(). Where user space
 * answers, XDP must answer with XDP_TX and the very same frame; where user
 * space drops, XDP must drop and count the same reason (a garbage UDP
 * checksum: bad_checksum on both sides). The one exception is IPv4
 * options, which the program hands to the kernel before any port is
 * looked at (XDP_PASS, counted ip_options) while user space calls them
 * malformed. Edge cases (0, 1 and odd payload lengths, MTU-size and one
 * byte over, IPv4 options, one and two VLAN tags, IPv6, valid, partial
 * and garbage incoming checksums, padding, a bad IPv4 header checksum, a
 * zero UDP checksum over IPv6, a payload byte changed after the checksum)
 * and seeded random frames. Then punts (xdp_max_payload) and the reply
 * cache: a hit equals user space's reply; a changed byte, another
 * generation, an expired entry or one being written answer nothing and
 * leave the frame untouched, and so does a request the cache holds the
 * answer to but user space would refuse (a garbage checksum, options).
 * Last, hash, whose program answers part of what it gets: the same frame
 * where its DATA fits in XDP, the rest (too long, or no request) punted
 * untouched; and its cost in XDP, printed for benchmarks.
 *
 * Needs root and a kernel with BPF; exits 77 (skip) otherwise.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "frames.h"
#include "testutil.h"
#include "cache.h"
#include "clock.h"
#include "function.h"
#include "config.h"
#include "packet.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "shared/cache.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "util.h"
#include "xdp.h"
#include "xdptest.h"

#define MTU 1500
#define ROOM 4096 /* a UMEM frame: the user path's room */

static struct rr_xdp x;
static int prog_fd, checks;

/* The ports under test, each a slot of its own. */
enum {
	SLOT_ECHO,
	SLOT_REVERSE,
	SLOT_CACHED,  /* reverse, served in user space, replies cached */
	SLOT_PUNTY,   /* reverse with xdp_max_payload = 100 */
	SLOT_AMP1,    /* echo with max_amplification = 1 */
	SLOT_IDCACHE, /* rrtest_idrev (a 2-byte ID), replies cached */
	SLOT_HASH,
	SLOT_HASH_AMP1, /* hash with max_amplification = 1 */
	NSLOTS
};

static const struct {
	uint16_t port;
	const char *fn;
	struct rr_port_conf conf;
} ports[NSLOTS] = {
	[SLOT_ECHO] = { 7,
			"echo",
			{ .flags = RR_PORT_XDP,
			  .max_amplification = 3,
			  .xdp_max_payload = RR_XDP_MAX_PAYLOAD } },
	[SLOT_REVERSE] = { 1232,
			   "reverse",
			   { .flags = RR_PORT_XDP,
			     .max_amplification = 3,
			     .xdp_max_payload = RR_XDP_MAX_PAYLOAD } },
	[SLOT_CACHED] = { 2232,
			  "reverse",
			  { .flags = RR_PORT_CACHE,
			    .max_amplification = 3,
			    .cache_gen = 1,
			    .cache_max_payload = RR_CACHE_MAX_PAYLOAD } },
	[SLOT_PUNTY] = { 3232,
			 "reverse",
			 { .flags = RR_PORT_XDP,
			   .max_amplification = 3,
			   .xdp_max_payload = 100 } },
	[SLOT_AMP1] = { 4232,
			"echo",
			{ .flags = RR_PORT_XDP,
			  .max_amplification = 1,
			  .xdp_max_payload = RR_XDP_MAX_PAYLOAD } },
	[SLOT_IDCACHE] = { 5232,
			   "rrtest_idrev",
			   { .flags = RR_PORT_CACHE,
			     .max_amplification = 3,
			     .cache_gen = 1,
			     .cache_max_payload = RR_CACHE_MAX_PAYLOAD,
			     .cache_id_bytes = 2 } },
	[SLOT_HASH] = { 9012,
			"hash",
			{ .flags = RR_PORT_XDP,
			  .max_amplification = 3,
			  .xdp_max_payload = RR_XDP_MAX_PAYLOAD } },
	[SLOT_HASH_AMP1] = { 9112,
			     "hash",
			     { .flags = RR_PORT_XDP,
			       .max_amplification = 1,
			       .xdp_max_payload = RR_XDP_MAX_PAYLOAD } },
};

static int setup(void)
{
	char why[RR_ERRLEN];
	uint32_t s;
	int ret;

	ret = rr_xdp_load(&x, f_dst_mac, MTU);
	if (ret)
		return ret;
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	for (s = 0; s < NSLOTS; s++) {
		struct rr_port_conf conf = ports[s].conf;

		conf.slot = s;
		conf.nsocks = 1;
		if (conf.flags & RR_PORT_XDP) {
			ret = rr_xdp_load_function(&x, s,
						   rr_registry_xdp(ports[s].fn),
						   why, sizeof(why));
			if (ret) {
				fprintf(stderr, "cannot load %s: %s\n",
					ports[s].fn, why);
				return ret;
			}
		}
		ret = rr_xdp_set_port(&x, ports[s].port, &conf);
		if (ret)
			return ret;
	}
	return rr_xdp_map_cache(&x);
}

static uint64_t fn_stat(uint32_t slot, uint32_t stat)
{
	uint64_t out[RR_FN_STAT_MAX];

	if (rr_xdp_read_fn_stats(&x, 0, slot, out))
		return UINT64_MAX;
	return out[stat];
}

/* Queue 0's counter @stat of xdp_stats. */
static uint64_t xdp_stat(uint32_t stat)
{
	uint64_t out[RR_XDP_STAT_MAX];

	if (rr_xdp_read_stats(&x, out, 1))
		return UINT64_MAX;
	return out[stat];
}

/* Whether the frame is IPv4 with options (IHL over 5), tags skipped. */
static bool has_ip_options(const uint8_t *f, uint32_t len)
{
	uint32_t off = F_ETH_HLEN;
	uint16_t proto = len >= off ? f_get16(f + 12) : 0;

	while ((proto == F_ETH_8021Q || proto == F_ETH_8021AD) &&
	       off + F_VLAN_HLEN <= len) {
		proto = f_get16(f + off + 2);
		off += F_VLAN_HLEN;
	}
	return proto == F_ETH_IP && off < len && (f[off] & 0xf) > 5;
}

/* Runs the steering program once; the frame it leaves is in out. */
static int run(const uint8_t *frame, uint32_t len, uint8_t *out,
	       uint32_t *out_len, uint32_t *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
		    .data_size_in = len, .data_out = out, .data_size_out = ROOM,
		    .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*retval = opts.retval;
	*out_len = opts.data_size_out;
	return 0;
}

static const struct rr_function *function(uint32_t slot)
{
	return rr_registry_find(ports[slot].fn);
}

/*
 * One frame through both paths: the same reply, or the same drop reason;
 * for IPv4 options, which user space calls malformed, the frame passed to
 * the kernel untouched before the in-kernel tier sees it. Returns what
 * user space did (reply length or -enum rr_drop).
 */
static int differ(uint32_t slot, const uint8_t *frame, uint32_t len)
{
	uint8_t user[ROOM], out[ROOM];
	uint32_t retval, out_len, reason;
	uint64_t before, after, rx, opts;
	int ret;

	checks++;
	memcpy(user, frame, len);
	ret = rr_serve(user, len, ROOM, MTU, ports[slot].conf.max_amplification,
		       function(slot), 0, 0);
	reason = ret < 0 ? (uint32_t)-ret : 0;
	before = fn_stat(slot, RR_FN_XDP_DROP + reason);
	rx = fn_stat(slot, RR_FN_XDP_RX);
	opts = xdp_stat(RR_XDP_PASS_IP_OPTIONS);
	if (run(frame, len, out, &out_len, &retval)) {
		t_fail("test run refused: %s", strerror(errno));
		return ret;
	}
	after = fn_stat(slot, RR_FN_XDP_DROP + reason);
	if (has_ip_options(frame, len)) {
		if (ret != -RR_DROP_MALFORMED)
			t_fail("user space %s IPv4 options (%d), want malformed",
			       ret < 0 ? rr_drop_label(reason) : "answers",
			       ret);
		if (retval != XDP_PASS || out_len != len ||
		    memcmp(out, frame, len))
			t_fail("IPv4 options: XDP gave verdict %u, want XDP_PASS untouched",
			       retval);
		if (xdp_stat(RR_XDP_PASS_IP_OPTIONS) != opts + 1)
			t_fail("IPv4 options not counted as ip_options");
		if (fn_stat(slot, RR_FN_XDP_RX) != rx)
			t_fail("IPv4 options reached the in-kernel tier");
	} else if (ret >= 0) {
		if (retval != XDP_TX)
			t_fail("user space answers (%d bytes), XDP gave verdict %u",
			       ret, retval);
		else if (out_len != (uint32_t)ret)
			t_fail("reply of %u bytes, user space's is %d", out_len,
			       ret);
		else if (memcmp(out, user, out_len)) {
			uint32_t i = 0;

			while (out[i] == user[i])
				i++;
			t_fail("replies differ from byte %u of %u (xdp %02x, user %02x)",
			       i, out_len, out[i], user[i]);
		}
	} else if (retval != XDP_DROP || after != before + 1) {
		t_fail("user space drops (%s), XDP gave verdict %u and counted %lu",
		       rr_drop_label(reason), retval,
		       (unsigned long)(after - before));
	}
	return ret;
}

static uint32_t frame_for(uint8_t *buf, uint32_t slot, int family, int vlans,
			  uint32_t opt_words, uint32_t plen,
			  enum frame_csum csum, uint32_t pad,
			  const uint8_t *payload)
{
	struct frame_spec s = {
		.family = family,
		.vlans = vlans,
		.opt_words = opt_words,
		.sport = 40000,
		.dport = ports[slot].port,
		.payload = payload,
		.plen = plen,
		.pad = pad,
		.csum = csum,
	};
	struct frame_layout lay;

	return build_frame(buf, ROOM, &s, &lay);
}

/*
 * One function, family, tag count, option length and payload length,
 * under each checksum kind, with and without Ethernet padding. Options
 * (answered alike once) are passed by XDP and dropped as malformed by
 * user space now (differ()); a garbage checksum (answered alike once) is
 * dropped by both as bad_checksum.
 */
static void edge_case(uint32_t slot, int fam, int vlans, int opts,
		      uint32_t plen)
{
	static const enum frame_csum csums[] = { CSUM_PARTIAL, CSUM_VALID,
						 CSUM_GARBAGE };
	uint8_t frame[ROOM];
	uint32_t len, ci;
	int pad, ret;

	for (ci = 0; ci < 3; ci++) {
		for (pad = 0; pad <= 1; pad++) {
			len = frame_for(frame, slot, fam ? AF_INET6 : AF_INET,
					vlans, opts ? 10 : 0, plen, csums[ci],
					pad ? 6 : 0, NULL);
			t_at("%s %s vlans %d opts %d payload %u csum %s pad %d",
			     ports[slot].fn, fam ? "IPv6" : "IPv4", vlans,
			     opts ? 10 : 0, plen, f_csum_name(csums[ci]), pad);
			ret = differ(slot, frame, len);
			if (!opts && csums[ci] == CSUM_GARBAGE &&
			    ret != -RR_DROP_BAD_CHECKSUM)
				t_fail("a garbage checksum gave %d, want bad_checksum",
				       ret);
		}
	}
}

static void edge_cases(void)
{
	static const uint32_t lens[] = { 0,    1,    2,	   3,	 7,    8,
					 15,   16,   17,   31,	 32,   33,
					 63,   64,   65,   100,	 255,  256,
					 257,  511,  512,  513,	 799,  800,
					 1000, 1400, 1452, 1453, 1472, 1473 };
	static const uint32_t slots[] = { SLOT_ECHO, SLOT_REVERSE };
	uint32_t li, si;
	int fam, vlans, opts;

	for (si = 0; si < 2; si++)
		for (fam = 0; fam < 2; fam++)
			for (vlans = 0; vlans <= 2; vlans++)
				for (opts = 0; opts <= (fam ? 0 : 1); opts++)
					for (li = 0; li < sizeof(lens) / 4;
					     li++)
						edge_case(slots[si], fam, vlans,
							  opts, lens[li]);
}

static void bad_headers(void)
{
	uint8_t frame[ROOM];
	uint32_t len;
	int ret;

	t_at("IPv4 header checksum wrong");
	len = frame_for(frame, SLOT_REVERSE, AF_INET, 0, 0, 40, CSUM_VALID, 0,
			NULL);
	frame[F_ETH_HLEN + 10] ^= 0x5a;
	ret = differ(SLOT_REVERSE, frame, len);
	if (ret != -RR_DROP_MALFORMED)
		t_fail("user space did not call it malformed (%d)", ret);

	t_at("IPv6 UDP checksum zero");
	len = frame_for(frame, SLOT_ECHO, AF_INET6, 1, 0, 40, CSUM_VALID, 0,
			NULL);
	frame[F_ETH_HLEN + F_VLAN_HLEN + F_IP6_HLEN + 6] = 0;
	frame[F_ETH_HLEN + F_VLAN_HLEN + F_IP6_HLEN + 7] = 0;
	ret = differ(SLOT_ECHO, frame, len);
	if (ret != -RR_DROP_MALFORMED)
		t_fail("user space did not call it malformed (%d)", ret);

	/* A payload byte changed on the way: the checksum no longer
	 * holds, on either side. */
	t_at("payload byte changed after a valid checksum");
	len = frame_for(frame, SLOT_REVERSE, AF_INET, 2, 0, 40, CSUM_VALID, 0,
			NULL);
	frame[len - 7] ^= 0x20;
	ret = differ(SLOT_REVERSE, frame, len);
	if (ret != -RR_DROP_BAD_CHECKSUM)
		t_fail("user space did not call it bad_checksum (%d)", ret);
	t_at("IPv6 payload byte changed after a valid checksum");
	len = frame_for(frame, SLOT_ECHO, AF_INET6, 0, 0, 41, CSUM_VALID, 0,
			NULL);
	frame[len - 1] ^= 0x01;
	ret = differ(SLOT_ECHO, frame, len);
	if (ret != -RR_DROP_BAD_CHECKSUM)
		t_fail("user space did not call it bad_checksum (%d)", ret);

	t_at("amplification 1, same-size reply");
	len = frame_for(frame, SLOT_AMP1, AF_INET, 0, 0, 300, CSUM_PARTIAL, 0,
			NULL);
	if (differ(SLOT_AMP1, frame, len) < 0)
		t_fail("a same-size reply must pass the limit");
}

static void random_frames(unsigned int seed, int n)
{
	static const enum frame_csum csums[] = { CSUM_GARBAGE, CSUM_PARTIAL,
						 CSUM_ZERO, CSUM_VALID };
	uint8_t frame[ROOM], payload[1500];
	uint32_t len, plen, slot, i;
	int fam, vlans, k;

	srandom(seed);
	for (k = 0; k < n; k++) {
		fam = random() & 1 ? AF_INET6 : AF_INET;
		vlans = (int)(random() % 3);
		plen = (uint32_t)(random() % 1460);
		slot = random() & 1 ? SLOT_REVERSE : SLOT_ECHO;
		for (i = 0; i < plen; i++)
			payload[i] = (uint8_t)random();
		len = frame_for(frame, slot, fam, vlans,
				fam == AF_INET ? (uint32_t)(random() % 3) : 0,
				plen, csums[random() % 4],
				random() & 1 ? (uint32_t)(random() % 20) : 0,
				payload);
		t_at("random frame %d (seed %u)", k, seed);
		differ(slot, frame, len);
	}
}

/* One request to SLOT_PUNTY (xdp_max_payload 100), its checksum partial
 * or garbage. */
static void punt_case(uint32_t plen, bool garbage)
{
	const uint32_t bad = RR_FN_XDP_DROP + RR_DROP_BAD_CHECKSUM;
	uint8_t frame[ROOM], out[ROOM];
	uint32_t len, out_len, retval;
	uint64_t punts, drops;

	t_at("punt test, payload %u, %s checksum", plen,
	     garbage ? "garbage" : "partial");
	len = frame_for(frame, SLOT_PUNTY, AF_INET, 0, 0, plen,
			garbage ? CSUM_GARBAGE : CSUM_PARTIAL, 0, NULL);
	punts = fn_stat(SLOT_PUNTY, RR_FN_XDP_PUNT);
	drops = fn_stat(SLOT_PUNTY, bad);
	checks++;
	if (run(frame, len, out, &out_len, &retval)) {
		t_fail("test run refused");
		return;
	}
	if (plen <= 100) {
		if (retval != (garbage ? XDP_DROP : XDP_TX))
			t_fail("verdict %u, want %s", retval,
			       garbage ? "XDP_DROP" : "XDP_TX");
		if (garbage && fn_stat(SLOT_PUNTY, bad) != drops + 1)
			t_fail("bad_checksum not counted");
		return;
	}
	/* No socket here: the redirect falls back to XDP_PASS. */
	if (retval != XDP_PASS || out_len != len || memcmp(out, frame, len))
		t_fail("a punted request must reach the sockets unchanged (verdict %u)",
		       retval);
	if (fn_stat(SLOT_PUNTY, RR_FN_XDP_PUNT) != punts + 1)
		t_fail("punt not counted");
	if (fn_stat(SLOT_PUNTY, bad) != drops)
		t_fail("a punted request counted as bad_checksum");
}

/*
 * Requests past xdp_max_payload go on to user space, untouched; the
 * program verifies the checksum only of what it answers, so a garbage
 * one is punted too (user space drops it there). Within the limit, a
 * garbage checksum is dropped in XDP, as bad_checksum.
 */
static void punts(void)
{
	uint32_t plen;

	for (plen = 99; plen <= 102; plen++) {
		punt_case(plen, false);
		punt_case(plen, true);
	}
}

/* Expect the cache to answer exactly as user space, or not at all. */
static void cache_case_at(uint32_t slot, const char *what, const uint8_t *frame,
			  uint32_t len, bool hit)
{
	uint8_t user[ROOM], out[ROOM];
	uint32_t out_len, retval;
	uint64_t hits = fn_stat(slot, RR_FN_CACHE_HIT);
	int ret;

	t_at("cache: %s", what);
	checks++;
	memcpy(user, frame, len);
	ret = rr_serve(user, len, ROOM, MTU, 3, function(slot), 0, 0);
	if (run(frame, len, out, &out_len, &retval)) {
		t_fail("test run refused");
		return;
	}
	if (hit) {
		if (retval != XDP_TX || (int)out_len != ret ||
		    memcmp(out, user, out_len))
			t_fail("a hit must give user space's reply (verdict %u, %u bytes, user %d)",
			       retval, out_len, ret);
		if (fn_stat(slot, RR_FN_CACHE_HIT) != hits + 1)
			t_fail("hit not counted");
	} else if (retval != XDP_PASS || out_len != len ||
		   memcmp(out, frame, len)) {
		t_fail("a miss must leave the frame to user space, untouched (verdict %u)",
		       retval);
	}
}

static void cache_case(const char *what, const uint8_t *frame, uint32_t len,
		       bool hit)
{
	cache_case_at(SLOT_CACHED, what, frame, len, hit);
}

/* What a worker stores after answering @frame. */
static void cache_fill_at(uint32_t slot, const uint8_t *frame, uint32_t len,
			  uint32_t gen, uint64_t expires)
{
	static struct rr_keep keep = { .max = RR_CACHE_MAX_PAYLOAD };
	struct rr_request ctx = { 0 };
	uint8_t user[ROOM];
	int ret;

	memcpy(user, frame, len);
	rr_fn_request_bind(&ctx, NULL, 0, NULL);
	ret = rr_serve_keep(user, len, ROOM, MTU, 3, function(slot), &ctx,
			    &keep, NULL);
	if (ret < 0 || keep.len == UINT32_MAX) {
		t_fail("cannot make a reply to cache (%d)", ret);
		return;
	}
	if (rr_cache_insert(x.cache, x.cache_queue_entries, ports[slot].port,
			    gen, expires, keep.req, keep.len,
			    user + keep.reply_off,
			    (uint32_t)ret - keep.reply_off,
			    function(slot)->id_bytes, 0) == RR_CACHE_SKIPPED)
		t_fail("insert skipped");
}

static void cache_fill(const uint8_t *frame, uint32_t len, uint32_t gen,
		       uint64_t expires)
{
	cache_fill_at(SLOT_CACHED, frame, len, gen, expires);
}

/*
 * A function whose requests start with a 2-byte transaction ID (as DNS
 * messages do): the reply echoes it and reverses the rest.
 */
static int id_reverse(const struct rr_request *req, uint8_t *buf, size_t len,
		      size_t room)
{
	size_t i, j;
	uint8_t t;

	(void)req;
	(void)room;
	if (len < 2)
		return -EINVAL;
	for (i = 2, j = len - 1; i < j; i++, j--) {
		t = buf[i];
		buf[i] = buf[j];
		buf[j] = t;
	}
	return (int)len;
}

RR_FUNCTION_DEF(rrtest_idrev, 5232, "test: a 2-byte ID, then reversed",
		.handler = id_reverse, .flags = RR_FN_PURE, .id_bytes = 2);

/*
 * Requests whose answer the cache holds, which user space refuses: the
 * cache must not answer them either. A garbage checksum is found once
 * the entry is (the program verifies only what it answers), so it counts
 * as a miss and goes on to the sockets untouched (no socket here:
 * XDP_PASS, counted no_socket); a zero checksum over IPv6 is malformed
 * before any lookup; IPv4 options go to the kernel before the port is
 * looked at (ip_options). User space drops them as bad_checksum and
 * malformed.
 */
static void cached_refusals(void)
{
	static const struct {
		const char *what;
		int family, vlans;
		uint32_t opt_words;
		enum frame_csum csum;
		int user, stat;
		bool miss;
	} refusals[] = {
		{ "garbage checksum", AF_INET, 0, 0, CSUM_GARBAGE,
		  -RR_DROP_BAD_CHECKSUM, RR_XDP_PASS_NO_SOCKET, true },
		{ "IPv6 garbage checksum, QinQ", AF_INET6, 2, 0, CSUM_GARBAGE,
		  -RR_DROP_BAD_CHECKSUM, RR_XDP_PASS_NO_SOCKET, true },
		{ "IPv6 zero checksum", AF_INET6, 1, 0, CSUM_ZERO,
		  -RR_DROP_MALFORMED, RR_XDP_PASS_NO_SOCKET, false },
		{ "IPv4 options", AF_INET, 0, 2, CSUM_VALID, -RR_DROP_MALFORMED,
		  RR_XDP_PASS_IP_OPTIONS, false },
		{ "IPv4 options, 802.1Q", AF_INET, 1, 10, CSUM_PARTIAL,
		  -RR_DROP_MALFORMED, RR_XDP_PASS_IP_OPTIONS, false },
	};
	uint8_t a[ROOM], b[ROOM], out[ROOM], user[ROOM], payload[60];
	uint32_t la, lb, out_len, retval, i;
	uint64_t hits, misses, stat;
	int ret;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 11 + 5);
	la = frame_for(a, SLOT_CACHED, AF_INET, 0, 0, sizeof(payload),
		       CSUM_VALID, 0, payload);
	cache_fill(a, la, 1, 0);
	cache_case("refusals: the answer is cached", a, la, true);
	for (i = 0; i < ARRAY_SIZE(refusals); i++) {
		t_at("cache: %s, answer cached", refusals[i].what);
		checks++;
		lb = frame_for(b, SLOT_CACHED, refusals[i].family,
			       refusals[i].vlans, refusals[i].opt_words,
			       sizeof(payload), refusals[i].csum, 0, payload);
		memcpy(user, b, lb);
		ret = rr_serve(user, lb, ROOM, MTU, 3, function(SLOT_CACHED), 0,
			       0);
		if (ret != refusals[i].user)
			t_fail("user space gave %d, want %d", ret,
			       refusals[i].user);
		hits = fn_stat(SLOT_CACHED, RR_FN_CACHE_HIT);
		misses = fn_stat(SLOT_CACHED, RR_FN_CACHE_MISS);
		stat = xdp_stat((uint32_t)refusals[i].stat);
		if (run(b, lb, out, &out_len, &retval)) {
			t_fail("test run refused");
			continue;
		}
		if (retval != XDP_PASS || out_len != lb || memcmp(out, b, lb))
			t_fail("verdict %u, want XDP_PASS with the frame untouched",
			       retval);
		if (fn_stat(SLOT_CACHED, RR_FN_CACHE_HIT) != hits)
			t_fail("counted as a cache hit");
		if (fn_stat(SLOT_CACHED, RR_FN_CACHE_MISS) !=
		    misses + refusals[i].miss)
			t_fail("cache misses moved by %llu, want %d",
			       (unsigned long long)(fn_stat(SLOT_CACHED,
							    RR_FN_CACHE_MISS) -
						    misses),
			       refusals[i].miss);
		if (xdp_stat((uint32_t)refusals[i].stat) != stat + 1)
			t_fail("not counted as %s",
			       refusals[i].stat == RR_XDP_PASS_IP_OPTIONS
				       ? "ip_options"
				       : "no_socket");
	}
}

/* The cache of a function with a transaction ID: the ID is not part of
 * the key, and a hit carries the new request's ID. */
static void cache_ids(void)
{
	uint8_t a[ROOM], b[ROOM], payload[64];
	uint32_t la, po = F_ETH_HLEN + F_IP4_HLEN + F_UDP_HLEN, i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 5 + 1);
	la = frame_for(a, SLOT_IDCACHE, AF_INET, 0, 0, 40, CSUM_PARTIAL, 0,
		       payload);
	cache_case_at(SLOT_IDCACHE, "id: empty cache", a, la, false);
	cache_fill_at(SLOT_IDCACHE, a, la, 1, 0);
	cache_case_at(SLOT_IDCACHE, "id: the same request", a, la, true);
	memcpy(b, a, la);
	b[po] ^= 0x5a; /* another ID: a hit, with that ID in the reply */
	b[po + 1] ^= 0xa5;
	cache_case_at(SLOT_IDCACHE, "id: another ID", b, la, true);
	memcpy(b, a, la);
	b[po + 2] ^= 1; /* the first byte after the ID is key */
	cache_case_at(SLOT_IDCACHE, "id: byte after the ID changed", b, la,
		      false);
	/* Payloads shorter than the ID are never answered from the cache. */
	la = frame_for(a, SLOT_IDCACHE, AF_INET, 0, 0, 1, CSUM_PARTIAL, 0,
		       payload);
	cache_case_at(SLOT_IDCACHE, "id: shorter than the ID", a, la, false);
	/* A reply that does not echo the ID is refused by the insert. */
	checks++;
	t_at("id: insert without the ID echoed");
	if (rr_cache_insert(
		    x.cache, x.cache_queue_entries, ports[SLOT_IDCACHE].port, 1,
		    0, (const uint8_t *)"ab-request", 10,
		    (const uint8_t *)"xy-reply", 8, 2, 0) != RR_CACHE_SKIPPED)
		t_fail("a reply without the request's ID was cached");
}

static void cache(void)
{
	uint8_t a[ROOM], b[ROOM], payload[RR_CACHE_MAX_PAYLOAD + 1];
	struct rr_cache_entry *e;
	uint32_t la, lb, i, plen;
	int fam, vlans;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	la = frame_for(a, SLOT_CACHED, AF_INET, 0, 0, 50, CSUM_PARTIAL, 0,
		       payload);
	cache_case("empty cache", a, la, false);
	cache_fill(a, la, 1, 0);
	cache_case("the same request", a, la, true);
	cache_case("the same request again", a, la, true);

	memcpy(b, a, la);
	lb = la;
	b[lb - 1] ^= 1;
	cache_case("last payload byte changed", b, lb, false);
	memcpy(b, a, la);
	b[F_ETH_HLEN + F_IP4_HLEN + F_UDP_HLEN] ^= 0x80;
	cache_case("first payload byte changed", b, lb, false);

	/* Other headers, same payload: a pure function's reply fits.
	 * (IPv4 had options here once; cached_refusals() has those now.) */
	for (fam = 0; fam < 2; fam++)
		for (vlans = 0; vlans <= 2; vlans++) {
			lb = frame_for(b, SLOT_CACHED, fam ? AF_INET6 : AF_INET,
				       vlans, 0, 50, CSUM_VALID, 4, payload);
			cache_case("same payload, other headers", b, lb, true);
		}

	/* Every length a cached entry can have, 0 and the limit included;
	 * one past it is never cached. */
	for (plen = 0; plen <= RR_CACHE_MAX_PAYLOAD + 1; plen += 1) {
		if (plen > 20 && plen < RR_CACHE_MAX_PAYLOAD - 20 && plen % 17)
			continue;
		lb = frame_for(b, SLOT_CACHED, AF_INET6, 1, 0, plen,
			       CSUM_PARTIAL, 0, payload);
		if (plen > RR_CACHE_MAX_PAYLOAD) {
			cache_case("over the size limit", b, lb, false);
			continue;
		}
		cache_fill(b, lb, 1, 0);
		cache_case("payload length sweep", b, lb, true);
	}

	la = frame_for(a, SLOT_CACHED, AF_INET, 0, 0, 77, CSUM_PARTIAL, 0,
		       payload + 1);
	cache_fill(a, la, 2, 0);
	cache_case("entry of another generation", a, la, false);
	cache_fill(a, la, 1, rr_now_ns() - 100000000ULL);
	cache_case("expired entry", a, la, false);
	cache_fill(a, la, 1, rr_now_ns() + 60000000000ULL);
	cache_case("entry within its TTL", a, la, true);

	/* An entry a worker is rewriting (odd sequence) answers nothing. */
	for (i = 0; i < RR_CACHE_ENTRIES; i++) {
		e = &x.cache[i];
		if (e->port == ports[SLOT_CACHED].port && e->req_len == 77)
			break;
	}
	if (i == RR_CACHE_ENTRIES) {
		t_fail("cannot find the entry just written");
		return;
	}
	__atomic_add_fetch(&e->seq, 1, __ATOMIC_SEQ_CST);
	cache_case("entry being written", a, la, false);
	__atomic_add_fetch(&e->seq, 1, __ATOMIC_SEQ_CST);
	cache_case("entry written", a, la, true);
}

/*
 * hash, a function whose XDP program answers only part of what it is
 * sent (functions/hash.bpf.c): requests whose DATA is at most
 * HASH_XDP_MAX_DATA bytes are answered in XDP with user space's very
 * frame; a longer DATA, and whatever is no valid request, must reach the
 * sockets untouched (no socket here: XDP_PASS), counted as a punt, for
 * user space to answer or refuse (hash_invalid).
 */
#define HASH_XDP_MAX_DATA 128

enum hash_want {
	HASH_IN_XDP,	   /* answered in XDP as in user space */
	HASH_PUNT_ANSWER,  /* DATA too long for XDP: user space answers */
	HASH_PUNT_INVALID, /* no request: user space answers nothing */
};

/* A hash request: @head (ROUNDS and its space, or what stands there),
 * then @dlen bytes of DATA. */
static const struct hash_req {
	const char *head;
	uint32_t dlen;
	enum hash_want want;
} hash_reqs[] = {
	{ "1 ", 0, HASH_IN_XDP },
	{ "9 ", 0, HASH_IN_XDP },
	{ "1 ", 1, HASH_IN_XDP },
	{ "0001 ", 3, HASH_IN_XDP },
	{ "3  ", 5, HASH_IN_XDP }, /* DATA starts with a space */
	{ "7 ", 13, HASH_IN_XDP },
	{ "64 ", 64, HASH_IN_XDP },
	{ "4096 ", 1, HASH_IN_XDP },
	{ "1 ", HASH_XDP_MAX_DATA, HASH_IN_XDP },
	{ "4096 ", HASH_XDP_MAX_DATA, HASH_IN_XDP },
	{ "1 ", HASH_XDP_MAX_DATA + 1, HASH_PUNT_ANSWER },
	{ "4096 ", HASH_XDP_MAX_DATA + 1, HASH_PUNT_ANSWER },
	{ "300 ", 200, HASH_PUNT_ANSWER },
	{ "2 ", 1400, HASH_PUNT_ANSWER },
	{ "", 0, HASH_PUNT_INVALID },
	{ "1", 0, HASH_PUNT_INVALID },
	{ "4096", 0, HASH_PUNT_INVALID },
	{ "a 1", 0, HASH_PUNT_INVALID },
	{ " 1 ", 4, HASH_PUNT_INVALID },
	{ "1x ", 4, HASH_PUNT_INVALID },
	{ "1\t", 4, HASH_PUNT_INVALID },
	{ "0 ", 4, HASH_PUNT_INVALID },
	{ "0000 ", 4, HASH_PUNT_INVALID },
	{ "4097 ", 4, HASH_PUNT_INVALID },
	{ "9999 ", 0, HASH_PUNT_INVALID },
	{ "00001 ", 4, HASH_PUNT_INVALID },
	{ "12345 ", 200, HASH_PUNT_INVALID },
	{ "-1 ", 4, HASH_PUNT_INVALID },
	{ "0 ", 200, HASH_PUNT_INVALID },
};

/* A hash request's payload: @head, then @dlen bytes of every value
 * (spaces and digits among them). Returns its length. */
static uint32_t hash_payload(uint8_t *p, const char *head, uint32_t dlen)
{
	uint32_t hlen = (uint32_t)strlen(head), i;

	memcpy(p, head, hlen);
	for (i = 0; i < dlen; i++)
		p[hlen + i] = (uint8_t)(i * 37 + 11);
	return hlen + dlen;
}

/* A request XDP must punt: untouched, counted, and user space's call. */
static void hash_punted(uint32_t slot, const uint8_t *frame, uint32_t len,
			enum hash_want want)
{
	uint8_t user[ROOM], out[ROOM];
	uint32_t out_len, retval;
	uint64_t punts;
	int ret;

	checks++;
	memcpy(user, frame, len);
	ret = rr_serve(user, len, ROOM, MTU, ports[slot].conf.max_amplification,
		       function(slot), 0, 0);
	if (want == HASH_PUNT_INVALID && ret != -RR_DROP_NO_REPLY)
		t_fail("user space gave %d to what is no request, want no_reply",
		       ret);
	if (want == HASH_PUNT_ANSWER && ret < 0)
		t_fail("user space does not answer (%d)", ret);
	punts = fn_stat(slot, RR_FN_XDP_PUNT);
	if (run(frame, len, out, &out_len, &retval)) {
		t_fail("test run refused");
		return;
	}
	if (retval != XDP_PASS || out_len != len || memcmp(out, frame, len))
		t_fail("a punt must reach the sockets untouched (verdict %u)",
		       retval);
	if (fn_stat(slot, RR_FN_XDP_PUNT) != punts + 1)
		t_fail("punt not counted");
}

/* One request to @slot in one frame: punted, or compared byte for byte
 * with user space by differ() (which also takes the frames that neither
 * tier answers: a garbage checksum, IPv4 options). */
static void hash_case(uint32_t slot, const uint8_t *payload, uint32_t plen,
		      enum hash_want want, int fam, int vlans, int opts,
		      enum frame_csum csum)
{
	uint8_t frame[ROOM];
	uint32_t len;
	int ret;

	len = frame_for(frame, slot, fam, vlans, opts ? 3 : 0, plen, csum, 0,
			payload);
	if (want != HASH_IN_XDP && !opts && csum != CSUM_GARBAGE) {
		hash_punted(slot, frame, len, want);
		return;
	}
	ret = differ(slot, frame, len);
	if (slot == SLOT_HASH && want == HASH_IN_XDP && !opts &&
	    csum != CSUM_GARBAGE && ret < 0)
		t_fail("user space does not answer (%d)", ret);
}

/* hash_reqs[@i] to @slot over IPv4 and IPv6, untagged and QinQ, with
 * and without IPv4 options, under each checksum kind. */
static void hash_frames(uint32_t slot, uint32_t i)
{
	static const enum frame_csum csums[] = { CSUM_PARTIAL, CSUM_VALID,
						 CSUM_GARBAGE };
	const uint32_t amp = ports[slot].conf.max_amplification;
	const struct hash_req *r = &hash_reqs[i];
	uint8_t payload[1500];
	int fam, vlans, opts, ci;
	uint32_t plen;

	plen = hash_payload(payload, r->head, r->dlen);
	for (fam = 0; fam < 2; fam++)
		for (vlans = 0; vlans <= 2; vlans += 2)
			for (opts = 0; opts <= !fam; opts++)
				for (ci = 0; ci < 3; ci++) {
					t_at("hash '%s' and %u bytes, %s, vlans %d, opts %d, csum %s, amplification %u",
					     r->head, r->dlen,
					     fam ? "IPv6" : "IPv4", vlans, opts,
					     f_csum_name(csums[ci]), amp);
					hash_case(slot, payload, plen, r->want,
						  fam ? AF_INET6 : AF_INET,
						  vlans, opts, csums[ci]);
				}
}

static void hash_cases(void)
{
	uint32_t i;

	for (i = 0; i < ARRAY_SIZE(hash_reqs); i++) {
		hash_frames(SLOT_HASH, i);
		hash_frames(SLOT_HASH_AMP1, i);
	}
}

/* Random requests, mostly valid: which tier answers is what user space
 * makes of each (the unit test checks that) and its DATA's length. */
static void hash_random(unsigned int seed, int n)
{
	uint8_t payload[1500];
	uint32_t plen, digits, rounds, dlen, i;
	enum hash_want want;
	uint8_t user[ROOM], frame[ROOM];
	uint32_t len;
	int k, ret;

	srandom(seed);
	for (k = 0; k < n; k++) {
		rounds = random() % 8 ? (uint32_t)(random() % 100)
				      : (uint32_t)(random() % 10000);
		digits = (uint32_t)snprintf((char *)payload, 8, "%0*u",
					    (int)(random() % 6), rounds);
		payload[digits] = random() % 8 ? ' ' : (uint8_t)random();
		dlen = (uint32_t)(random() % (HASH_XDP_MAX_DATA + 40));
		for (i = 0; i < dlen; i++)
			payload[digits + 1 + i] = (uint8_t)random();
		plen = digits + 1 + dlen;
		len = frame_for(frame, SLOT_HASH, AF_INET, 0, 0, plen,
				CSUM_PARTIAL, 0, payload);
		memcpy(user, frame, len);
		ret = rr_serve(user, len, ROOM, MTU, 3, function(SLOT_HASH), 0,
			       0);
		if (ret < 0)
			want = HASH_PUNT_INVALID;
		else if (dlen > HASH_XDP_MAX_DATA)
			want = HASH_PUNT_ANSWER;
		else
			want = HASH_IN_XDP;
		t_at("random hash request %d (seed %u): %u rounds, %u digits, %u bytes",
		     k, seed, rounds, digits, dlen);
		hash_case(SLOT_HASH, payload, plen, want, AF_INET,
			  (int)(random() % 3), 0, CSUM_PARTIAL);
	}
}

/* The median of test runs of one frame to @slot, each run alone (a
 * repeated run would see the reply it made): ns, or 0 if not answered. */
static uint32_t median_ns(uint32_t slot, const uint8_t *payload, uint32_t plen)
{
	uint8_t frame[ROOM], out[ROOM];
	uint32_t ns[15], len, k, t, v;

	len = frame_for(frame, slot, AF_INET, 0, 0, plen, CSUM_PARTIAL, 0,
			payload);
	for (k = 0; k < ARRAY_SIZE(ns); k++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
			    .data_size_in = len, .data_out = out,
			    .data_size_out = ROOM, .repeat = 1);

		if (bpf_prog_test_run_opts(prog_fd, &opts) ||
		    opts.retval != XDP_TX)
			return 0;
		/* Insertion sort as it comes. */
		for (t = k; t > 0 && ns[t - 1] > opts.duration; t--)
			ns[t] = ns[t - 1];
		ns[t] = opts.duration;
	}
	v = ns[ARRAY_SIZE(ns) / 2];
	return v ? v : 1;
}

/*
 * What a hash request costs in XDP, the steering program's work
 * included, printed for choosing a benchmark's request (payloads of 32
 * bytes first: what rrload --payload sends at most), with echo on a
 * frame as long for the part that is not the hash's.
 */
static void hash_cost(void)
{
	static const uint32_t sizes[][2] = {
		{ 1, 16 },    { 16, 29 }, { 64, 29 },  { 256, 28 },
		{ 1024, 27 }, { 64, 64 }, { 64, 128 }, { 4096, 128 },
	};
	uint8_t payload[256];
	uint32_t i, plen, ns;
	char head[16];

	t_at("hash: cost");
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		snprintf(head, sizeof(head), "%u ", sizes[i][0]);
		plen = hash_payload(payload, head, sizes[i][1]);
		ns = median_ns(SLOT_HASH, payload, plen);
		if (!ns)
			t_fail("%u rounds x %u B not answered", sizes[i][0],
			       sizes[i][1]);
		printf("hash in XDP, %u rounds x %u B (%u-byte payload): %u ns\n",
		       sizes[i][0], sizes[i][1], plen, ns);
	}
	plen = hash_payload(payload, "", 32);
	printf("echo in XDP, a 32-byte payload: %u ns\n",
	       median_ns(SLOT_ECHO, payload, plen));
}

/* hash's XDP program, the one with loops and bpf_loop(), must load as
 * a cpumap program too where echo's does: xdp_spread runs that copy. */
static void hash_cpumap(void)
{
	t_at("hash: cpumap copy");
	checks++;
	if (x.fn_objs_cpumap[SLOT_ECHO] && !x.fn_objs_cpumap[SLOT_HASH])
		t_fail("echo's cpumap copy loads, hash's does not");
}

int main(int argc, char **argv)
{
	unsigned int seed = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 0)
				     : (unsigned int)getpid();
	int ret;

	ret = t_xdp_start(&x, setup);
	if (ret)
		return ret;
	edge_cases();
	bad_headers();
	random_frames(seed, 3000);
	punts();
	cache();
	cached_refusals();
	cache_ids();
	hash_cpumap();
	hash_cases();
	hash_random(seed, 300);
	hash_cost();
	rr_xdp_destroy(&x);
	printf("%d frames compared, %d failures (seed %u)\n", checks,
	       t_failures, seed);
	return t_failures ? 1 : 0;
}
