/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Growable arrays and byte buffers for the dns function's zone loader:
 * the records as read (dns_zone_file.c) and the zone while it is built
 * (dns_zone.c) both grow by doubling. Beneath both; calls nothing of
 * theirs.
 */
#ifndef RR_DNS_BUF_H
#define RR_DNS_BUF_H

#include <stddef.h>
#include <stdint.h>

struct dns_buf {
	uint8_t *p;
	size_t len, cap;
};

/* Makes room for @need elements of @size bytes in *@p (capacity *@cap),
 * doubling from 64. Returns 0 or -ENOMEM. */
int dns_grow(void **p, size_t *cap, size_t need, size_t size);

/* Appends @len bytes; returns their offset, or -1. */
long dns_buf_add(struct dns_buf *b, const void *data, size_t len);

#endif /* RR_DNS_BUF_H */
