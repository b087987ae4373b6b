// SPDX-License-Identifier: GPL-2.0
/* Growable arrays and byte buffers (dns_buf.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dns_buf.h"

int dns_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Appends @len bytes; returns their offset, or -1. */
long dns_buf_add(struct dns_buf *b, const void *data, size_t len)
{
	size_t off = b->len;

	if (dns_grow((void **)&b->p, &b->cap, b->len + len, 1))
		return -1;
	if (len)
		memcpy(b->p + off, data, len);
	b->len += len;
	return (long)off;
}
