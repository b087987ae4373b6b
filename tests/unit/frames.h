/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Crafted request frames for the unit tests (rr_process) and the BPF
 * program tests (bpf_prog_test_run_opts), and an RFC 1071 checksum written
 * the plain way, byte pair by byte pair, so replies are checked against
 * something other than the code under test.
 */
#ifndef RR_TEST_FRAMES_H
#define RR_TEST_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#define F_ETH_HLEN 14
#define F_VLAN_HLEN 4
#define F_IP4_HLEN 20
#define F_IP6_HLEN 40
#define F_UDP_HLEN 8
#define F_REQ_TTL 17 /* anything but the reply's 64 */

#define F_ETH_IP 0x0800
#define F_ETH_IPV6 0x86dd
#define F_ETH_ARP 0x0806
#define F_ETH_8021Q 0x8100
#define F_ETH_8021AD 0x88a8

/* Marks a field as set explicitly, so that 0 can still mean "derive it". */
#define SET(x) ((uint32_t)(x) | 0x10000u)
#define IS_SET(f) ((f)&0x10000u)
#define SET_VAL(f) ((f)&0xffffu)

#define F_IP_DF 0x4000
#define F_IP_MF 0x2000

enum frame_csum {
	CSUM_GARBAGE, /* a fixed wrong value */
	CSUM_PARTIAL, /* pseudo-header sum only, as veth leaves it */
	CSUM_ZERO,    /* "no checksum" (IPv4) */
	CSUM_VALID,
};

struct frame_spec {
	int family; /* AF_INET (also when 0) or AF_INET6 */
	int vlans;  /* 0; 1: 802.1Q; 2: 802.1ad + 802.1Q; 3: one more 802.1Q */
	uint32_t ethertype; /* SET(): overrides the one after the tags */
	uint32_t ihl;	    /* SET(): IPv4 IHL field; default 5 + opt_words */
	uint32_t opt_words; /* IPv4 options, in 32-bit words */
	uint32_t proto;	    /* SET(): IPv4 protocol / IPv6 next header */
	uint32_t frag;	    /* SET(): IPv4 flags and offset; default DF */
	uint32_t ip_len;    /* SET(): IPv4 total length / IPv6 payload length */
	uint32_t udp_len;   /* SET(): UDP length */
	uint32_t version;   /* SET(): IP version nibble */
	uint16_t sport, dport;
	const uint8_t *saddr;	/* 4 or 16 bytes; NULL: f_src_ip4/f_src_ip6 */
	const uint8_t *daddr;	/* likewise; NULL: f_dst_ip4/f_dst_ip6 */
	const uint8_t *dst_mac; /* NULL: f_dst_mac */
	const void *payload;	/* NULL: a byte pattern */
	uint32_t plen;
	uint32_t pad; /* Ethernet padding after the IP packet */
	enum frame_csum csum;
};

/* Where things are in a frame built from a spec. */
struct frame_layout {
	uint32_t l3_off, l4_off, payload_off, len;
};

static const uint8_t f_src_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t f_dst_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t f_src_ip4[4] = { 10, 0, 0, 1 };
static const uint8_t f_dst_ip4[4] = { 10, 0, 0, 2 };
static const uint8_t f_src_ip6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
				       0,    0, 0, 0, 0, 0, 0, 1 };
static const uint8_t f_dst_ip6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
				       0xab, 0, 0, 0, 0, 0, 0, 2 };
static const uint8_t f_bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t f_mcast_ip4[4] = { 224, 0, 0, 1 };
static const uint8_t f_bcast_ip4[4] = { 255, 255, 255, 255 };
static const uint8_t f_mcast_ip6[16] = { 0xff, 0x02, [15] = 1 };
#define F_TCI_OUTER 0x2064 /* PCP 1, VID 100 */
#define F_TCI_INNER 0x00c8 /* VID 200 */

static inline void f_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint16_t f_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The textbook sum: big-endian 16-bit words, an odd byte padded with 0. */
static inline uint64_t ref_sum(const uint8_t *p, size_t n, uint64_t sum)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint64_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint64_t)p[n - 1] << 8;
	return sum;
}

static inline uint16_t ref_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Pseudo-header sum for a UDP datagram of @ulen bytes; @ip at the IP
 * header of @family. */
static inline uint64_t ref_pseudo(const uint8_t *ip, int family, uint32_t ulen)
{
	uint64_t sum;

	if (family == AF_INET6)
		sum = ref_sum(ip + 8, 32, 0);
	else
		sum = ref_sum(ip + 12, 8, 0);
	return sum + 17 /* UDP */ + ulen;
}

/* The UDP checksum the datagram at @udp should carry, field taken as 0. */
static inline uint16_t ref_udp_csum(const uint8_t *ip, int family,
				    const uint8_t *udp, uint32_t ulen)
{
	uint64_t sum = ref_pseudo(ip, family, ulen);
	uint16_t csum;

	sum = ref_sum(udp, 6, sum);
	if (ulen > F_UDP_HLEN)
		sum = ref_sum(udp + F_UDP_HLEN, ulen - F_UDP_HLEN, sum);
	csum = (uint16_t)~ref_fold(sum);
	return csum ? csum : 0xffff;
}

static inline uint8_t f_pattern(uint32_t i)
{
	return (uint8_t)(i * 7 + 3 + (i >> 8));
}

/*
 * Builds the frame into @buf (@size bytes) and returns its length, or 0
 * if it does not fit. @lay, if set, receives the offsets.
 */
static inline uint32_t build_frame(uint8_t *buf, uint32_t size,
				   const struct frame_spec *s,
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
	if (len > size)
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
		f_put16(udp + 6, 0xbeef);
		break;
	case CSUM_PARTIAL:
		f_put16(udp + 6, ref_fold(ref_pseudo(ip, s->family, ulen)));
		break;
	case CSUM_ZERO:
		break;
	case CSUM_VALID:
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

#endif /* RR_TEST_FRAMES_H */
