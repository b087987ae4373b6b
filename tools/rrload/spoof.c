// SPDX-License-Identifier: GPL-2.0
/*
 * --spoof N[@CIDR]: the source addresses the XDP engine sends from, N of
 * them spread evenly over the range, and the checksum sums that move a
 * frame from its own address to each (rrload_gen.bpf.c applies them).
 * Evenly means address i sits at floor((2i + 1) * size / 2N) into the
 * range: distinct while N <= size, in as many /24s (/64s) as the range
 * and N allow, and never the range's first address.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "config.h"
#include "parse.h"
#include "rrload.h"
#include "rrload_gen.h"
#include "toolargs.h"

/* RFC 2544's benchmarking range, and RFC 5180's for IPv6. */
#define SPOOF_DEFAULT_V4 "198.18.0.0/15"
#define SPOOF_DEFAULT_V6 "2001:2::/48"

typedef unsigned __int128 u128;

int rl_parse_spoof(struct rl_config *cfg, const char *arg)
{
	const char *at = strchr(arg, '@');
	char num[32];
	unsigned long n;
	size_t len = at ? (size_t)(at - arg) : strlen(arg);

	if (len >= sizeof(num))
		len = sizeof(num) - 1;
	memcpy(num, arg, len);
	num[len] = '\0';
	if (rr_parse_ulong(num, 1, GEN_SPOOF_MAX, &n))
		return rr_opt_fail(
			"rrload",
			"--spoof needs N[@CIDR], N a number of sources in 1..%u, not '%s'",
			GEN_SPOOF_MAX, arg);
	cfg->spoof.n = (uint32_t)n;
	cfg->spoof.cidr = at ? at + 1 : NULL;
	return 0;
}

static u128 addr_get(const uint8_t *a, int family)
{
	int i, n = family == AF_INET ? 4 : 16;
	u128 v = 0;

	for (i = 0; i < n; i++)
		v = v << 8 | a[i];
	return v;
}

static void addr_put(uint8_t *a, int family, u128 v)
{
	int i, n = family == AF_INET ? 4 : 16;

	for (i = n - 1; i >= 0; i--) {
		a[i] = (uint8_t)v;
		v >>= 8;
	}
}

/* The range's size in addresses; an IPv6 range wider than 2^126 counts
 * as its first 2^126 (the sums below must not overflow 128 bits). */
static u128 spoof_size(const struct rl_spoof *sp)
{
	unsigned int bits = (sp->family == AF_INET ? 32 : 128) - sp->plen;

	return (u128)1 << (bits > 126 ? 126 : bits);
}

int rl_check_spoof(struct rl_config *cfg)
{
	const char *cidr = cfg->spoof.cidr;
	struct rr_cidr c;
	uint32_t got = 0;
	char err[256];

	if (!cfg->spoof.n)
		return 0;
	if (!cfg->engine_xdp)
		return rr_opt_fail("rrload", "%s",
				   "--spoof needs --engine xdp");
	if (!cidr)
		cidr = cfg->family == AF_INET ? SPOOF_DEFAULT_V4
					      : SPOOF_DEFAULT_V6;
	if (!*cidr || strpbrk(cidr, ", \t"))
		return rr_opt_fail("rrload",
				   "--spoof takes one prefix, not '%s'", cidr);
	if (rr_parse_cidrs(cidr, &c, 1, &got, err, sizeof(err)))
		return rr_opt_fail("rrload", "--spoof: %s", err);
	if (c.family != cfg->family)
		return rr_opt_fail("rrload",
				   "--spoof: %s is %s, the server (-s) is %s",
				   cidr, c.family == AF_INET ? "IPv4" : "IPv6",
				   cfg->family == AF_INET ? "IPv4" : "IPv6");
	cfg->spoof.family = c.family;
	cfg->spoof.plen = c.len;
	memcpy(cfg->spoof.base, c.addr, sizeof(c.addr));
	if ((u128)cfg->spoof.n > spoof_size(&cfg->spoof))
		return rr_opt_fail(
			"rrload",
			"--spoof: %u sources do not fit in %s (%llu addresses)",
			cfg->spoof.n, cidr,
			(unsigned long long)spoof_size(&cfg->spoof));
	snprintf(cfg->spoof.text, sizeof(cfg->spoof.text), "%s", cidr);
	return 0;
}

void rl_spoof_addr(const struct rl_spoof *sp, uint32_t i, uint8_t out[16])
{
	u128 size = spoof_size(sp), n2 = (u128)sp->n * 2, j = (u128)i * 2 + 1;

	/* floor(j * size / 2N) without overflowing: size = q * 2N + r. */
	memset(out, 0, 16);
	addr_put(out, sp->family,
		 addr_get(sp->base, sp->family) + j * (size / n2) +
			 j * (size % n2) / n2);
}

uint32_t rl_spoof_delta(const uint8_t *from, const uint8_t *to, size_t len)
{
	uint32_t sum = 0;
	uint16_t a, b;
	size_t i;

	/* Words as they lie in the frame: a one's complement sum does not
	 * care about byte order, as long as the checksum is read alike. */
	for (i = 0; i + 1 < len; i += 2) {
		memcpy(&a, from + i, 2);
		memcpy(&b, to + i, 2);
		sum += (uint16_t)~a;
		sum += b;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}
