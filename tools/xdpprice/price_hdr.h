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

/* The request's first PRICE_HDR_MAX bytes, as xdpprice built them. */
struct price_hdr {
	__u64 words[PRICE_HDR_MAX / 8];
};

#endif /* XDPPRICE_PRICE_HDR_H */
