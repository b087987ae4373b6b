/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What xdpprice (bench.c) and its harness (xdpprice.bpf.c) share: the
 * request's first bytes, which the harness puts back before every run.
 */
#ifndef XDPPRICE_PRICE_HDR_H
#define XDPPRICE_PRICE_HDR_H

#include <linux/types.h>

/* Bytes put back: the headers (Ethernet, IPv6 and UDP are 62) and the
 * payload's first bytes after them. Every request is longer. */
#define PRICE_HDR_MAX 64

/* Sources a spread row (K_SPREAD) cycles through, one per run. */
#define PRICE_SPREAD_SOURCES 4096

/*
 * The request's first PRICE_HDR_MAX bytes, as xdpprice built them; and
 * for a spread row the offset of its source address (0: none) and the
 * first 16 bits the harness gives the n-th run's source, spread_base +
 * n % PRICE_SPREAD_SOURCES, the next 16 bits taking what that adds off
 * (ones' complement), so that neither checksum changes.
 */
struct price_hdr {
	__u64 words[PRICE_HDR_MAX / 8];
	__u32 spread_off;
	__u32 spread_base;
};

#endif /* XDPPRICE_PRICE_HDR_H */
