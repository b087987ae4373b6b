/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Crafted request frames for every C test tier: the unit tests
 * (rr_serve_unlimited), the BPF program tests (bpf_prog_test_run_opts) and the
 * fuzzers' seeds and starting points; and an RFC 1071 checksum written the
 * plain way, byte pair by byte pair, so replies are checked against
 * something other than the code under test (src/lib/packet.c).
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

/*
 * The request's UDP checksum. Valid is the default (0), so that a spec
 * left zero is a request user space answers; each of the others is one
 * that a test asks for by name. User space and the in-kernel tier accept
 * valid, partial and (over IPv4) zero, and drop garbage as bad_checksum.
 */
enum frame_csum {
	CSUM_VALID,
	CSUM_GARBAGE, /* wrong: 0xbeef, or near it if that would be right */
	CSUM_PARTIAL, /* pseudo-header sum only, as veth leaves it */
	CSUM_ZERO,    /* "no checksum" (IPv4; malformed over IPv6) */
	CSUM_KINDS
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

/* Addresses: the client (src) and server (dst) ends, and group ones. */
extern const uint8_t f_src_mac[6];
extern const uint8_t f_dst_mac[6];
extern const uint8_t f_src_ip4[4];
extern const uint8_t f_dst_ip4[4];
extern const uint8_t f_src_ip6[16];
extern const uint8_t f_dst_ip6[16];
extern const uint8_t f_bcast_mac[6];
extern const uint8_t f_mcast_ip4[4];
extern const uint8_t f_bcast_ip4[4];
extern const uint8_t f_mcast_ip6[16];
#define F_TCI_OUTER 0x2064 /* PCP 1, VID 100 */
#define F_TCI_INNER 0x00c8 /* VID 200 */

void f_put16(uint8_t *p, uint32_t v);
uint16_t f_get16(const uint8_t *p);

/* The textbook sum: big-endian 16-bit words, an odd byte padded with 0. */
uint64_t ref_sum(const uint8_t *p, size_t n, uint64_t sum);
/* Folds a sum to 16 bits, not complemented. */
uint16_t ref_fold(uint64_t sum);
/* The checksum over @n bytes at @p (from @sum): 0 over data that holds a
 * valid checksum field. */
uint16_t ref_csum(const uint8_t *p, size_t n, uint64_t sum);
/* Pseudo-header sum for a UDP datagram of @ulen bytes; @ip at the IP
 * header of @family. */
uint64_t ref_pseudo(const uint8_t *ip, int family, uint32_t ulen);
/* The UDP checksum the datagram at @udp should carry, field taken as 0. */
uint16_t ref_udp_csum(const uint8_t *ip, int family, const uint8_t *udp,
		      uint32_t ulen);
/* The UDP checksum over pseudo-header and datagram as they stand in the
 * frame (field included); 0 when the frame's checksum is valid. */
uint16_t ref_udp_check(const uint8_t *frame, int family, uint32_t l3_off,
		       uint32_t l4_off, uint32_t ulen);

/* The default payload's byte @i. */
uint8_t f_pattern(uint32_t i);

/*
 * Builds the frame into @buf (@size bytes) and returns its length, or 0
 * if it does not fit (or its UDP length would not). @lay, if set,
 * receives the offsets.
 */
uint32_t build_frame(uint8_t *buf, uint32_t size, const struct frame_spec *s,
		     struct frame_layout *lay);

/*
 * The usual request: @plen bytes of @payload in UDP from @sport to @dport
 * over IPv4 between the default addresses, with valid checksums. Returns
 * the frame's length (0 if it does not fit @size); @lay as build_frame().
 */
uint32_t build_request(uint8_t *buf, uint32_t size, uint16_t sport,
		       uint16_t dport, const void *payload, uint32_t plen,
		       struct frame_layout *lay);

/* "valid", "garbage", "partial", "zero", for messages. */
const char *f_csum_name(enum frame_csum c);

/*
 * Puts right the checksums rr_parse() checks, wherever the frame has them:
 * the IPv4 header checksum, and a UDP checksum that is neither valid nor
 * partial nor (over IPv4) zero, rewritten as the valid one (a zero one
 * over IPv6 included). Lets a fuzzer's mutations, and a test's edits of
 * a built frame, reach past those checks. Frames whose lengths do not
 * hold together are left alone: rr_parse() refuses them anyway.
 */
void fix_checksums(uint8_t *f, uint32_t len);

#endif /* RR_TEST_FRAMES_H */
