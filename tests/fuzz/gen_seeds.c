// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of fuzz_request into a directory: valid requests
 * over IPv4 (and with options, which the request path refuses as
 * malformed), IPv6, one VLAN tag and QinQ, each
 * behind the fuzzer's two knob bytes (MTU and buffer room; amplification
 * limit). Generated at
 * build time so no binary frames live in git.
 *
 *   gen_seeds DIR
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "frames.h"

#define KNOB_MTU_1500 4 /* see mtus[] in fuzz_request.c; room 4096 */
#define KNOB_MTU_1280_ROOM_2048 (2 | 16 << 3)
/* Byte 1, see amps[] in fuzz_request.c. */
#define AMP_NONE 0
#define AMP_DEFAULT 3
#define FIX_CHECKSUMS 0x08 /* same byte: mutations keep checksums right */

static int write_seed(const char *dir, const char *name, uint8_t knob,
		      uint8_t amp, const struct frame_spec *s)
{
	struct frame_spec valid = *s;
	uint8_t buf[4096];
	struct frame_layout lay;
	char path[512];
	uint32_t len;
	FILE *f;

	valid.csum = CSUM_VALID;
	len = build_frame(buf + 2, sizeof(buf) - 2, &valid, &lay);
	if (!len) {
		fprintf(stderr, "gen_seeds: %s does not fit\n", name);
		return -EINVAL;
	}
	buf[0] = knob;
	buf[1] = amp;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "gen_seeds: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (fwrite(buf, 1, len + 2, f) != len + 2 || fclose(f)) {
		fprintf(stderr, "gen_seeds: cannot write %s\n", path);
		return -EIO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const fam_names[] = { "ip4", "ip4opt", "ip6" };
	uint8_t payload[1500], mode; /* room for an MTU-size IPv6 payload */
	struct frame_spec s;
	char name[64];
	int fam, vlans, ret = 0;
	uint32_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds DIR\n");
		return 2;
	}
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);

	for (fam = 0; fam < 3; fam++) {
		for (vlans = 0; vlans <= 2; vlans++) {
			memset(&s, 0, sizeof(s));
			s.family = fam == 2 ? AF_INET6 : AF_INET;
			s.opt_words = fam == 1 ? 2 : 0;
			s.vlans = vlans;
			s.sport = 40000;
			s.dport = 1232;
			s.payload = (const uint8_t *)"hello, reqrouter";
			s.plen = 16;
			snprintf(name, sizeof(name), "%s-vlan%d",
				 fam_names[fam], vlans);
			ret |= write_seed(argv[1], name, KNOB_MTU_1500,
					  AMP_DEFAULT | FIX_CHECKSUMS, &s);
		}
	}

	/* Sizes: empty, at the MTU, and a full-size IPv4 options field. */
	memset(&s, 0, sizeof(s));
	s.family = AF_INET;
	s.sport = 1;
	s.dport = 7;
	ret |= write_seed(argv[1], "ip4-empty", KNOB_MTU_1500,
			  AMP_DEFAULT | FIX_CHECKSUMS, &s);
	s.family = AF_INET6;
	s.payload = payload;
	s.plen = 1500 - F_IP6_HLEN - F_UDP_HLEN;
	ret |= write_seed(argv[1], "ip6-mtu", KNOB_MTU_1500,
			  AMP_DEFAULT | FIX_CHECKSUMS, &s);
	s.plen = 1300;
	ret |= write_seed(argv[1], "ip6-over-mtu", KNOB_MTU_1280_ROOM_2048,
			  AMP_NONE, &s);
	s.family = AF_INET;
	s.opt_words = 10;
	s.vlans = 2;
	s.plen = 100;
	ret |= write_seed(argv[1], "ip4opt40-qinq", KNOB_MTU_1500, AMP_DEFAULT,
			  &s);

	/* fuzz_weird's modes: the first payload byte. */
	for (mode = 0; mode < 12; mode++) {
		memset(&s, 0, sizeof(s));
		payload[0] = mode;
		payload[1] = 0x7f; /* WEIRD_RAW: a large positive length */
		s.family = mode & 1 ? AF_INET6 : AF_INET;
		s.vlans = mode % 3;
		s.sport = 5353;
		s.dport = 65000;
		s.payload = payload;
		s.plen = 64;
		snprintf(name, sizeof(name), "weird-mode%u", mode);
		ret |= write_seed(
			argv[1], name, KNOB_MTU_1500,
			mode % 3 ? AMP_DEFAULT | FIX_CHECKSUMS : AMP_NONE, &s);
	}
	return ret ? 1 : 0;
}
