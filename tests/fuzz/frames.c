// SPDX-License-Identifier: GPL-2.0
/* Frame builder and an independent checksum, shared by the fuzzers. */
#include <string.h>
#include <sys/socket.h>

#include "frames.h"

const uint8_t fz_server_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t mac_src[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t ip4_src[4] = { 10, 0, 0, 2 };
static const uint8_t ip4_dst[4] = { 10, 0, 0, 1 };
static const uint8_t ip6_src[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
				     0,	   0, 0, 0, 0, 0, 0, 2 };
static const uint8_t ip6_dst[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
				     0,	   0, 0, 0, 0, 0, 0, 1 };

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

uint32_t fz_sum16(const uint8_t *p, uint32_t len, uint32_t sum)
{
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2) {
		sum += (uint32_t)p[i] << 8 | p[i + 1];
		sum = (sum & 0xffff) + (sum >> 16);
	}
	if (len & 1) {
		sum += (uint32_t)p[len - 1] << 8;
		sum = (sum & 0xffff) + (sum >> 16);
	}
	return sum;
}

uint16_t fz_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t fz_udp_check(const uint8_t *frame, int family, uint32_t l3_off,
		      uint32_t l4_off, uint32_t udp_len)
{
	const uint8_t *ip = frame + l3_off;
	uint32_t sum;

	if (family == AF_INET)
		sum = fz_sum16(ip + 12, 8, 0);
	else
		sum = fz_sum16(ip + 8, 32, 0);
	sum += 17 + udp_len; /* protocol and length of the pseudo-header */
	return fz_fold(fz_sum16(frame + l4_off, udp_len, sum));
}

static uint16_t get16(const uint8_t *f, uint32_t len, uint32_t off)
{
	return off + 2 <= len ? (uint16_t)(f[off] << 8 | f[off + 1]) : 0;
}

void fz_fix_checksums(uint8_t *f, uint32_t len)
{
	uint32_t off = FZ_ETH_HLEN, hlen;
	uint16_t proto = get16(f, len, 12);
	int tags;

	for (tags = 0; tags < 2 && (proto == 0x8100 || proto == 0x88a8);
	     tags++) {
		proto = get16(f, len, off + 2);
		off += FZ_VLAN_HLEN;
	}
	if (proto == 0x0800 && off + FZ_IP4_HLEN <= len) {
		hlen = (f[off] & 0xfu) * 4;
		if (hlen < FZ_IP4_HLEN || off + hlen > len)
			return;
		put16(f + off + 10, 0);
		put16(f + off + 10, fz_fold(fz_sum16(f + off, hlen, 0)));
	} else if (proto == 0x86dd && off + FZ_IP6_HLEN + FZ_UDP_HLEN <= len &&
		   !get16(f, len, off + FZ_IP6_HLEN + 6)) {
		put16(f + off + FZ_IP6_HLEN + 6, 0xffff);
	}
}

uint32_t fz_build_frame(uint8_t *buf, uint32_t cap,
			const struct fz_frame_spec *s, struct fz_layout *lay)
{
	uint32_t off = FZ_ETH_HLEN, hlen, ulen, i;
	uint16_t csum;
	uint8_t *ip;

	hlen = s->family == AF_INET ? FZ_IP4_HLEN + s->ip_opts : FZ_IP6_HLEN;
	ulen = FZ_UDP_HLEN + s->payload_len;
	if (s->vlans < 0 || s->vlans > 2 || s->ip_opts > 40 || s->ip_opts % 4 ||
	    ulen > 0xffff || FZ_ETH_HLEN + 2 * FZ_VLAN_HLEN + hlen + ulen > cap)
		return 0;

	memcpy(buf, fz_server_mac, 6);
	memcpy(buf + 6, mac_src, 6);
	for (i = 0; i < (uint32_t)s->vlans; i++) {
		/* QinQ: the outer tag is 802.1ad, the inner 802.1Q. */
		put16(buf + off - 2, s->vlans == 2 && i == 0 ? 0x88a8 : 0x8100);
		put16(buf + off, 100 + i); /* TCI: VLAN id */
		off += FZ_VLAN_HLEN;
	}
	put16(buf + off - 2, s->family == AF_INET ? 0x0800 : 0x86dd);

	ip = buf + off;
	lay->l3_off = off;
	if (s->family == AF_INET) {
		ip[0] = 0x40 | (uint8_t)(hlen / 4);
		ip[1] = 0;
		put16(ip + 2, hlen + ulen);
		put16(ip + 4, 0x1234); /* id */
		put16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = 17;
		ip[10] = ip[11] = 0;
		memcpy(ip + 12, ip4_src, 4);
		memcpy(ip + 16, ip4_dst, 4);
		/* Options: NOPs ending in End of Option List. */
		memset(ip + FZ_IP4_HLEN, 1, s->ip_opts);
		if (s->ip_opts)
			ip[hlen - 1] = 0;
		csum = fz_fold(fz_sum16(ip, hlen, 0));
		put16(ip + 10, csum);
	} else {
		ip[0] = 0x60;
		ip[1] = ip[2] = ip[3] = 0;
		put16(ip + 4, ulen);
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, ip6_src, 16);
		memcpy(ip + 24, ip6_dst, 16);
	}
	off += hlen;
	lay->l4_off = off;
	put16(buf + off, s->sport);
	put16(buf + off + 2, s->dport);
	put16(buf + off + 4, ulen);
	put16(buf + off + 6, 0);
	if (s->payload_len)
		memcpy(buf + off + FZ_UDP_HLEN, s->payload, s->payload_len);
	csum = fz_udp_check(buf, s->family, lay->l3_off, off, ulen);
	put16(buf + off + 6, csum ? csum : 0xffff);
	lay->payload_off = off + FZ_UDP_HLEN;
	lay->len = off + ulen;
	return lay->len;
}
