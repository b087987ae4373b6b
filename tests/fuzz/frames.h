/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Valid request frames for the fuzzers: the seed corpus of the libFuzzer
 * target and the starting points the XDP fuzzer mutates. The checksum here
 * is written apart from src/packet.c on purpose, so the fuzzers check the
 * request path against an independent implementation.
 */
#ifndef FZ_FRAMES_H
#define FZ_FRAMES_H

#include <stdint.h>

#define FZ_ETH_HLEN 14
#define FZ_VLAN_HLEN 4
#define FZ_IP4_HLEN 20
#define FZ_IP6_HLEN 40
#define FZ_UDP_HLEN 8

/* The destination MAC of every built frame: the server's interface. */
extern const uint8_t fz_server_mac[6];

struct fz_frame_spec {
	int family;	  /* AF_INET or AF_INET6 */
	int vlans;	  /* 0..2 tags, 802.1ad outside 802.1Q when 2 */
	uint32_t ip_opts; /* IPv4 option bytes: a multiple of 4, <= 40 */
	uint16_t sport;
	uint16_t dport;
	const uint8_t *payload;
	uint32_t payload_len;
};

/* Where the headers of a built frame start. */
struct fz_layout {
	uint32_t l3_off;
	uint32_t l4_off;
	uint32_t payload_off;
	uint32_t len; /* the whole frame */
};

/*
 * Writes the frame @s describes into @buf, with valid IPv4 header and UDP
 * checksums. Returns the frame length, or 0 if it needs more than @cap.
 */
uint32_t fz_build_frame(uint8_t *buf, uint32_t cap,
			const struct fz_frame_spec *s, struct fz_layout *lay);

/*
 * Puts right the checksums rr_parse() checks, wherever the frame has them:
 * the IPv4 header checksum, and a zero UDP checksum over IPv6 (made
 * 0xffff). Lets a fuzzer's mutations reach past those checks.
 */
void fz_fix_checksums(uint8_t *f, uint32_t len);

/* RFC 1071 one's-complement sum of big-endian 16-bit words, unfolded. */
uint32_t fz_sum16(const uint8_t *p, uint32_t len, uint32_t sum);
/* Folds a sum and complements it: 0 over data that includes a valid
 * checksum field. */
uint16_t fz_fold(uint32_t sum);
/* The UDP checksum over pseudo-header and datagram as they stand in the
 * frame (field included); 0 when the frame's checksum is valid. */
uint16_t fz_udp_check(const uint8_t *frame, int family, uint32_t l3_off,
		      uint32_t l4_off, uint32_t udp_len);

#endif /* FZ_FRAMES_H */
