// SPDX-License-Identifier: GPL-2.0
/*
 * The test frame builder and the reference checksum (frames.h), shared by
 * the unit, BPF and fuzz tests.
 */
#include <string.h>
#include <sys/socket.h>

#include "frames.h"

const uint8_t f_src_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
const uint8_t f_dst_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
const uint8_t f_src_ip4[4] = { 10, 0, 0, 1 };
const uint8_t f_dst_ip4[4] = { 10, 0, 0, 2 };
const uint8_t f_src_ip6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
				0,    0, 0, 0, 0, 0, 0, 1 };
const uint8_t f_dst_ip6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
				0xab, 0, 0, 0, 0, 0, 0, 2 };
const uint8_t f_bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
const uint8_t f_mcast_ip4[4] = { 224, 0, 0, 1 };
const uint8_t f_bcast_ip4[4] = { 255, 255, 255, 255 };
const uint8_t f_mcast_ip6[16] = { 0xff, 0x02, [15] = 1 };

void f_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

uint16_t f_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The textbook sum: big-endian 16-bit words, an odd byte padded with 0. */
uint64_t ref_sum(const uint8_t *p, size_t n, uint64_t sum)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint64_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint64_t)p[n - 1] << 8;
	return sum;
}

uint16_t ref_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Pseudo-header sum for a UDP datagram of @ulen bytes; @ip at the IP
 * header of @family. */
uint64_t ref_pseudo(const uint8_t *ip, int family, uint32_t ulen)
{
	uint64_t sum;

	if (family == AF_INET6)
		sum = ref_sum(ip + 8, 32, 0);
	else
		sum = ref_sum(ip + 12, 8, 0);
	return sum + 17 /* UDP */ + ulen;
}

/* The UDP checksum the datagram at @udp should carry, field taken as 0. */
uint16_t ref_udp_csum(const uint8_t *ip, int family, const uint8_t *udp,
		      uint32_t ulen)
{
	uint64_t sum = ref_pseudo(ip, family, ulen);
	uint16_t csum;

	sum = ref_sum(udp, 6, sum);
	if (ulen > F_UDP_HLEN)
		sum = ref_sum(udp + F_UDP_HLEN, ulen - F_UDP_HLEN, sum);
	csum = (uint16_t)~ref_fold(sum);
	return csum ? csum : 0xffff;
}

uint8_t f_pattern(uint32_t i)
{
	return (uint8_t)(i * 7 + 3 + (i >> 8));
}

/*
 * A checksum that is wrong for this datagram, whatever its bytes: 0xbeef,
 * or the next value up if that happens to be the valid or the partial one
 * (0 and 0xffff, the two that mean something of their own, never come up).
 */
static uint16_t garbage_csum(const uint8_t *ip, int family, const uint8_t *udp,
			     uint32_t ulen)
{
	uint16_t valid = ref_udp_csum(ip, family, udp, ulen);
	uint16_t partial = ref_fold(ref_pseudo(ip, family, ulen));
	uint16_t g = 0xbeef;

	while (g == valid || g == partial)
		g++;
	return g;
}

const char *f_csum_name(enum frame_csum c)
{
	static const char *const names[CSUM_KINDS] = {
		[CSUM_VALID] = "valid",
		[CSUM_GARBAGE] = "garbage",
		[CSUM_PARTIAL] = "partial",
		[CSUM_ZERO] = "zero",
	};

	return (unsigned int)c < CSUM_KINDS ? names[c] : "?";
}

/*
 * Builds the frame into @buf (@size bytes) and returns its length, or 0
 * if it does not fit. @lay, if set, receives the offsets.
 */
uint32_t build_frame(uint8_t *buf, uint32_t size, const struct frame_spec *s,
		     struct frame_layout *lay)
{
	int v6 = s->family == AF_INET6;
	uint32_t off = F_ETH_HLEN, ihl, l3, l4, iplen, ulen, len, i;
	uint16_t ethertype = v6 ? F_ETH_IPV6 : F_ETH_IP;
	uint8_t proto = IS_SET(s->proto) ? (uint8_t)SET_VAL(s->proto) : 17;
	uint8_t *ip, *udp;

	ihl = 5 + s->opt_words;
	l4 = F_ETH_HLEN + F_VLAN_HLEN * (uint32_t)s->vlans +
	     (v6 ? F_IP6_HLEN : ihl * 4);
	len = l4 + F_UDP_HLEN + s->plen + s->pad;
	if (len > size || F_UDP_HLEN + s->plen > 0xffff)
		return 0;
	memset(buf, 0, len);

	memcpy(buf, s->dst_mac ? s->dst_mac : f_dst_mac, 6);
	memcpy(buf + 6, f_src_mac, 6);
	if (IS_SET(s->ethertype))
		ethertype = (uint16_t)SET_VAL(s->ethertype);
	if (s->vlans) {
		/* 802.1ad outside when there are two tags or more. */
		f_put16(buf + 12, s->vlans >= 2 ? F_ETH_8021AD : F_ETH_8021Q);
		for (i = 0; i < (uint32_t)s->vlans; i++) {
			f_put16(buf + off, i ? F_TCI_INNER + i : F_TCI_OUTER);
			f_put16(buf + off + 2, i + 1 < (uint32_t)s->vlans
						       ? F_ETH_8021Q
						       : ethertype);
			off += F_VLAN_HLEN;
		}
	} else {
		f_put16(buf + 12, ethertype);
	}
	l3 = off;
	ip = buf + l3;
	ulen = F_UDP_HLEN + s->plen;

	if (v6) {
		iplen = IS_SET(s->ip_len) ? SET_VAL(s->ip_len) : ulen;
		ip[0] = (uint8_t)((IS_SET(s->version) ? SET_VAL(s->version) : 6)
				  << 4);
		ip[1] = 0x0a; /* traffic class and flow label, kept */
		ip[2] = 0xbc;
		ip[3] = 0xde;
		f_put16(ip + 4, iplen);
		ip[6] = proto;
		ip[7] = F_REQ_TTL;
		memcpy(ip + 8, s->saddr ? s->saddr : f_src_ip6, 16);
		memcpy(ip + 24, s->daddr ? s->daddr : f_dst_ip6, 16);
	} else {
		uint32_t field_ihl = IS_SET(s->ihl) ? SET_VAL(s->ihl) : ihl;

		iplen = IS_SET(s->ip_len) ? SET_VAL(s->ip_len) : ihl * 4 + ulen;
		ip[0] = (uint8_t)((IS_SET(s->version) ? SET_VAL(s->version) : 4)
					  << 4 |
				  (field_ihl & 0xf));
		ip[1] = 0x28; /* DSCP/ECN, kept */
		f_put16(ip + 2, iplen);
		f_put16(ip + 4, 0x1234);
		f_put16(ip + 6, IS_SET(s->frag) ? SET_VAL(s->frag) : F_IP_DF);
		ip[8] = F_REQ_TTL;
		ip[9] = proto;
		memcpy(ip + 12, s->saddr ? s->saddr : f_src_ip4, 4);
		memcpy(ip + 16, s->daddr ? s->daddr : f_dst_ip4, 4);
		for (i = 0; i < s->opt_words; i++) {
			uint8_t *o = ip + F_IP4_HLEN + 4 * i;

			if (i == 0) { /* Router Alert */
				o[0] = 0x94;
				o[1] = 4;
			} else {
				memset(o, 1, 4); /* NOP */
			}
		}
		f_put16(ip + 10, (uint16_t)~ref_fold(ref_sum(ip, ihl * 4, 0)));
	}

	udp = buf + l4;
	f_put16(udp, s->sport);
	f_put16(udp + 2, s->dport);
	f_put16(udp + 4, IS_SET(s->udp_len) ? SET_VAL(s->udp_len) : ulen);
	for (i = 0; i < s->plen; i++)
		udp[F_UDP_HLEN + i] = s->payload
					      ? ((const uint8_t *)s->payload)[i]
					      : f_pattern(i);
	switch (s->csum) {
	case CSUM_GARBAGE:
		f_put16(udp + 6, garbage_csum(ip, s->family, udp, ulen));
		break;
	case CSUM_PARTIAL:
		f_put16(udp + 6, ref_fold(ref_pseudo(ip, s->family, ulen)));
		break;
	case CSUM_ZERO:
		break;
	case CSUM_VALID:
	default:
		f_put16(udp + 6, ref_udp_csum(ip, s->family, udp, ulen));
		break;
	}
	/* Padding that is not zero, so a reply that keeps it shows. */
	for (i = 0; i < s->pad; i++)
		buf[l4 + ulen + i] = 0xee;

	if (lay) {
		lay->l3_off = l3;
		lay->l4_off = l4;
		lay->payload_off = l4 + F_UDP_HLEN;
		lay->len = len;
	}
	return len;
}

uint32_t build_request(uint8_t *buf, uint32_t size, uint16_t sport,
		       uint16_t dport, const void *payload, uint32_t plen,
		       struct frame_layout *lay)
{
	struct frame_spec s = { .family = AF_INET,
				.sport = sport,
				.dport = dport,
				.payload = payload,
				.plen = plen,
				.csum = CSUM_VALID };

	return build_frame(buf, size, &s, lay);
}

uint16_t ref_csum(const uint8_t *p, size_t n, uint64_t sum)
{
	return (uint16_t)~ref_fold(ref_sum(p, n, sum));
}

uint16_t ref_udp_check(const uint8_t *frame, int family, uint32_t l3_off,
		       uint32_t l4_off, uint32_t ulen)
{
	return ref_csum(frame + l4_off, ulen,
			ref_pseudo(frame + l3_off, family, ulen));
}

static uint16_t get16_in(const uint8_t *f, uint32_t len, uint32_t off)
{
	return off + 2 <= len ? f_get16(f + off) : 0;
}

void fix_checksums(uint8_t *f, uint32_t len)
{
	uint32_t off = F_ETH_HLEN, hlen, l4, ulen;
	uint16_t proto = get16_in(f, len, 12), field;
	int tags, family;
	uint8_t *udp;

	for (tags = 0;
	     tags < 2 && (proto == F_ETH_8021Q || proto == F_ETH_8021AD);
	     tags++) {
		proto = get16_in(f, len, off + 2);
		off += F_VLAN_HLEN;
	}
	if (proto == F_ETH_IP && off + F_IP4_HLEN <= len) {
		hlen = (f[off] & 0xfu) * 4;
		if (hlen < F_IP4_HLEN || off + hlen > len)
			return;
		f_put16(f + off + 10, 0);
		f_put16(f + off + 10, ref_csum(f + off, hlen, 0));
		family = AF_INET;
	} else if (proto == F_ETH_IPV6 && off + F_IP6_HLEN <= len) {
		hlen = F_IP6_HLEN;
		family = AF_INET6;
	} else {
		return;
	}

	/* The UDP checksum, over the datagram the UDP length gives. */
	l4 = off + hlen;
	if (l4 + F_UDP_HLEN > len)
		return;
	udp = f + l4;
	ulen = f_get16(udp + 4);
	if (ulen < F_UDP_HLEN || l4 + ulen > len)
		return;
	field = f_get16(udp + 6);
	/* Zero is "no checksum" over IPv4, and never right over IPv6, even
	 * where the sum would check out (the datagram's checksum is 0, sent
	 * as 0xffff). */
	if (!field) {
		if (family == AF_INET)
			return;
	} else if (!ref_udp_check(f, family, off, l4, ulen) ||
		   field == ref_fold(ref_pseudo(f + off, family, ulen))) {
		return; /* accepted as it is: keep what the sender chose */
	}
	f_put16(udp + 6, ref_udp_csum(f + off, family, udp, ulen));
}
