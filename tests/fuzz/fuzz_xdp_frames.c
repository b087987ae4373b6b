// SPDX-License-Identifier: GPL-2.0
/*
 * A part of fuzz_xdp (fuzz_xdp.c): the random frames (noise, valid
 * requests from the shared builder, and mutations of those) and the
 * variants the tier instance gets (checksums put right, then spoilt the
 * ways senders spoil them, or padded).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "cache.h"
#include "frames.h"
#include "fuzz_xdp.h"
#include "invoker.h"
#include "log.h"
#include "packet.h"
#include "parse.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "xdp.h"

/* Addresses the mutator picks from: in and just out of the allow-list
 * entries, and group addresses. */
static const uint8_t addrs4[][4] = {
	{ 10, 0, 0, 200 },	{ 10, 0, 1, 2 },	{ 192, 168, 1, 1 },
	{ 192, 168, 1, 0 },	{ 11, 0, 0, 2 },	{ 0, 0, 0, 0 },
	{ 224, 0, 0, 1 },	{ 255, 255, 255, 255 }, { 239, 255, 255, 250 },
	{ 127, 0, 0, 1 },	{ 0, 1, 2, 3 },		{ 240, 0, 0, 1 },
	{ 223, 255, 255, 255 },
};
static const uint8_t addr6_last[] = { 0x02, 0xff, 0x00 }; /* fd00::/120 */

/* Source ports a request might come from: services that answer anything
 * (the loop risk), ports with functions, and ordinary ones. */
static const uint16_t sports[] = { 0,	 7,    13,   19,   37,	  53,
				   1232, 5353, 8080, 9999, 40000, 65535 };

static const uint16_t ethertypes[] = { 0x0800, 0x86dd, 0x8100, 0x88a8,
				       0x0806, 0x9100, 0x0000, 0xffff };
static const uint8_t ip_protos[] = { 17, 6,  1,	 58,  0,  43, 44,
				     60, 50, 51, 135, 59, 255 };

static uint64_t rng_state;

void fuzz_seed(uint64_t seed)
{
	rng_state = seed;
}

/* splitmix64: tiny, seedable, good enough to pick mutations. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static void put16(uint8_t *f, uint32_t len, uint32_t off, uint32_t v)
{
	if (off + 2 <= len) {
		f[off] = (uint8_t)(v >> 8);
		f[off + 1] = (uint8_t)v;
	}
}

uint16_t get16(const uint8_t *f, uint32_t len, uint32_t off)
{
	return off + 2 <= len ? (uint16_t)(f[off] << 8 | f[off + 1]) : 0;
}

/* A length field nudged the way parsers get wrong: by a little, or to
 * its extremes. */
static uint32_t bad_length(uint32_t v)
{
	switch (below(4)) {
	case 0:
		return v + below(19) - 9;
	case 1:
		return below(2) ? 0 : 0xffff;
	case 2:
		return v + (below(2) ? 1 : -1u);
	default:
		return below(0x10000);
	}
}

static void mutate(uint8_t *f, uint32_t *len, const struct frame_layout *lay,
		   int family)
{
	uint32_t n = *len, l3 = lay->l3_off, l4 = lay->l4_off, off, k;
	uint32_t hdr_end = l4 + F_UDP_HLEN < n ? l4 + F_UDP_HLEN : n;

	switch (below(14)) {
	case 0: /* a bit, mostly in the headers */
		off = below(4) ? below(hdr_end) : below(n);
		f[off] ^= (uint8_t)(1u << below(8));
		break;
	case 1: /* a byte */
		f[below(n)] = (uint8_t)rnd();
		break;
	case 2: /* cut short, often inside the headers */
		*len = F_ETH_HLEN +
		       below((below(2) ? hdr_end : n) - F_ETH_HLEN + 1);
		break;
	case 3: /* trailing bytes: Ethernet padding or junk */
		k = below(64);
		if (n + k > MAX_FRAME)
			k = MAX_FRAME - n;
		for (off = n; off < n + k; off++)
			f[off] = below(2) ? 0 : (uint8_t)rnd();
		*len = n + k;
		break;
	case 4: /* the EtherType of any header in the chain */
		off = 12 + 4 * below((l3 - F_ETH_HLEN) / F_VLAN_HLEN + 1);
		put16(f, n, off, ethertypes[below(sizeof(ethertypes) / 2)]);
		break;
	case 5: /* the L4 protocol */
		if (l3 + 10 <= n)
			f[l3 + (family == AF_INET ? 9 : 6)] =
				ip_protos[below(sizeof(ip_protos))];
		break;
	case 6: /* IP length: total length or payload length */
		off = l3 + (family == AF_INET ? 2 : 4);
		put16(f, n, off, bad_length(get16(f, n, off)));
		break;
	case 7: /* UDP length */
		put16(f, n, l4 + 4, bad_length(get16(f, n, l4 + 4)));
		break;
	case 8: /* IPv4 header length, or version */
		if (l3 < n)
			f[l3] = below(2) ? (uint8_t)((f[l3] & 0xf0) | below(16))
					 : (uint8_t)((below(16) << 4) |
						     (f[l3] & 0xf));
		break;
	case 9: /* IPv4 fragment field */
		if (family == AF_INET)
			put16(f, n, l3 + 6,
			      below(2) ? 0x2000u << below(2) | below(2)
				       : below(0x10000));
		break;
	case 10: /* an IP address: source or destination */
		k = below(2);
		off = l3 + (family == AF_INET ? 12 + 4 * k : 8 + 16 * k);
		if (family == AF_INET && off + 4 <= n)
			memcpy(f + off, addrs4[below(sizeof(addrs4) / 4)], 4);
		else if (family == AF_INET6 && off + 16 <= n && below(2))
			f[off + 15] = addr6_last[below(sizeof(addr6_last))];
		else if (family == AF_INET6 && off + 16 <= n && below(2))
			f[off] = below(2) ? 0xff : 0xfd; /* multicast or not */
		else if (family == AF_INET6 && off + 16 <= n && below(2)) {
			memset(f + off, 0, 15); /* ::, ::1 or ::2 */
			f[off + 15] = (uint8_t)below(3);
		} else if (family == AF_INET6 && off + 16 <= n)
			f[off + below(16)] ^= (uint8_t)(1u << below(8));
		break;
	case 11: /* the source port */
		put16(f, n, l4,
		      below(4) ? sports[below(sizeof(sports) / 2)]
			       : below(0x10000));
		break;
	case 12: /* the group bit of the destination or source MAC */
		f[below(2) * 6] ^= 1;
		break;
	default: /* the destination port */
		put16(f, n, l4 + 2,
		      below(2) ? steer_table.p[below((uint32_t)steer_table.n)]
					 .port
			       : below(0x10000));
		break;
	}
}

/* A random frame: valid, mutated, or noise. Returns its length. */
uint32_t make_frame(uint8_t *f)
{
	static uint8_t payload[MAX_FRAME];
	struct frame_spec s = { 0 };
	struct frame_layout lay;
	uint32_t kind = below(100), len, i, n;

	if (kind < 10) { /* noise with a plausible EtherType */
		len = F_ETH_HLEN + below(below(8) ? 200 : MAX_FRAME - 13);
		for (i = 0; i < len; i++)
			f[i] = (uint8_t)rnd();
		if (below(2))
			put16(f, len, 12,
			      ethertypes[below(sizeof(ethertypes) / 2)]);
		return len;
	}

	s.family = below(5) < 3 ? AF_INET : AF_INET6;
	s.csum = CSUM_VALID;
	s.vlans = (int)below(3);
	s.opt_words = below(3) ? 0 : below(11);
	s.sport = (uint16_t)rnd();
	s.dport = below(4) ? steer_table.p[below((uint32_t)steer_table.n)].port
			   : (uint16_t)rnd();
	switch (below(8)) {
	case 0:
		s.plen = below(MAX_FRAME - 120);
		break;
	case 1:
		s.plen = below(1500);
		break;
	case 2: /* around the longest payload a reply under the MTU takes */
		s.plen = MTU - F_UDP_HLEN - 2 + below(5) -
			 (s.family == AF_INET ? F_IP4_HLEN + 4 * s.opt_words
					      : F_IP6_HLEN);
		break;
	default:
		s.plen = below(65);
		break;
	}
	for (i = 0; i < s.plen; i++)
		payload[i] = (uint8_t)rnd();
	s.payload = payload;
	len = build_frame(f, MAX_FRAME, &s, &lay);
	if (!len)
		abort(); /* MAX_FRAME leaves room for every spec above */

	if (kind < 30)
		return len;
	for (n = 1 + below(4); n; n--)
		mutate(f, &len, &lay, s.family);
	return len;
}

/*
 * The frame as it goes to the tier instance: mostly with the checksums
 * rr_parse() checks put right, so mutations reach the functions, then
 * sometimes one checksum spoilt the ways senders spoil them, or trailing
 * padding. Returns the new length.
 */
uint32_t tier_variant(uint8_t *f, uint32_t len)
{
	struct rr_pkt p;
	uint32_t k, off, sum;
	uint8_t *ip, *udp;

	if (below(4))
		fix_checksums(f, len);
	if (rr_parse(f, len, &p))
		return len;
	ip = f + p.l3_off;
	udp = f + p.l4_off;
	switch (below(12)) {
	case 0: /* a bad IPv4 header checksum; over IPv6, a zero UDP one */
		if (p.family == AF_INET)
			ip[10 + below(2)] ^= (uint8_t)(1 + below(255));
		else
			udp[6] = udp[7] = 0;
		break;
	case 1: /* no UDP checksum: fine over IPv4, malformed over IPv6 */
		udp[6] = udp[7] = 0;
		break;
	case 2: /* partial: the pseudo-header's sum, as offload leaves it */
		sum = ref_fold(
			ref_pseudo(ip, p.family, p.payload_len + F_UDP_HLEN));
		put16(f, len, p.l4_off + 6, sum);
		break;
	case 3: /* garbage */
		put16(f, len, p.l4_off + 6, (uint32_t)rnd());
		break;
	case 4: /* Ethernet padding, or junk after the IP packet */
		k = 1 + below(60);
		if (len + k > MAX_FRAME)
			k = MAX_FRAME - len;
		for (off = len; off < len + k; off++)
			f[off] = below(2) ? 0 : (uint8_t)rnd();
		return len + k;
	default:
		break;
	}
	return len;
}
