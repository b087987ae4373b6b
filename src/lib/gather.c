// SPDX-License-Identifier: GPL-2.0
/*
 * The gather API's side that functions link wherever they run
 * (reqrouter, the tools): rr_gather_start() hands over to the worker
 * that holds the request, and the default reply of a completed gather.
 * The gathers themselves are src/daemon/features/gather.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "function.h"

int rr_gather_start(const struct rr_request *req,
		    const struct rr_gather_spec *g)
{
	if (!req || !g)
		return -EINVAL;
	if (!req->gather || !req->gather->start)
		return -EOPNOTSUPP;
	return req->gather->start(req->gather, req, g);
}

/* Appends to @buf (@room bytes) at *at; 0 once it is full. */
static int put(uint8_t *buf, size_t room, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int put(uint8_t *buf, size_t room, size_t *at, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || *at > room || (size_t)n > room - *at)
		return 0;
	memcpy(buf + *at, tmp, (size_t)n);
	*at += (size_t)n;
	return 1;
}

int rr_gather_format(const struct rr_gather_result *res, uint8_t *buf,
		     size_t room)
{
	const struct rr_gather_part *p;
	uint32_t i, w, missed = 0;
	size_t at = 0, off = 0, cut = room > 5 ? room - 5 : 0;
	uint64_t miss;
	bool more = false;
	int ok = 1;

	switch (res->reduce) {
	case RR_REDUCE_CONCAT:
		while (off + sizeof(*p) <= res->len) {
			p = (const void *)(res->data + off);
			if (off + sizeof(*p) + p->len > res->len ||
			    (size_t)p->len + 1 > room - at)
				return -EMSGSIZE;
			memcpy(buf + at, p->body, p->len);
			at += p->len;
			buf[at++] = '\n';
			off += (sizeof(*p) + p->len + 1) & ~(size_t)1;
		}
		break;
	case RR_REDUCE_TOPK:
		if (!res->ntopk)
			ok = put(buf, room, &at, "- ");
		for (i = 0; ok && i < res->ntopk; i++)
			ok = put(buf, room, &at, "%u%s", res->topk[i],
				 i + 1 < res->ntopk ? "," : " ");
		break;
	default:
		ok = put(buf, room, &at, "%llu ",
			 (unsigned long long)res->value);
		break;
	}
	ok = ok && put(buf, room, &at, "%u/%u", res->answered, res->asked);
	/* The missing, a word at a time (most gathers have none): the first
	 * 32, or as many as leave room for ",...\n", then ",...". */
	for (w = 0; ok && !more && w < RR_SG_MAX_TARGETS / 64; w++) {
		miss = res->asked_bits[w] & ~res->answered_bits[w];
		for (; miss; miss &= miss - 1) {
			i = w * 64 + (uint32_t)__builtin_ctzll(miss);
			if (missed == 32 ||
			    !put(buf, cut, &at, "%s%u",
				 missed ? "," : " missed ", i)) {
				more = true;
				break;
			}
			missed++;
		}
	}
	if (ok && more && missed)
		ok = put(buf, room, &at, ",...");
	else if (ok && more && room) /* if it leaves room for the '\n' */
		put(buf, room - 1, &at, " missed ...");
	ok = ok && put(buf, room, &at, "\n");
	return ok ? (int)at : -EMSGSIZE;
}
