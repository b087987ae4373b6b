// SPDX-License-Identifier: GPL-2.0
/*
 * Reply cache inserts. Each entry is guarded by a sequence count: a writer
 * claims an even count by making it odd (compare-and-swap, so two workers
 * never write one entry at once; the loser skips its insert), writes, and
 * publishes the next even count. The XDP program reads the count before
 * and after copying an entry, with atomic reads that order its loads, and
 * answers only if it saw the same even count twice.
 */
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "clock.h"

enum rr_cache_insert rr_cache_insert(struct rr_cache_entry *table,
				     uint32_t entries, uint16_t port,
				     uint32_t gen, uint64_t expires_ns,
				     const uint8_t *req, uint32_t req_len,
				     const uint8_t *reply, uint32_t reply_len,
				     uint32_t id_bytes, bool cookie)
{
	const uint32_t tail = cookie ? RR_CACHE_COOKIE_LEN : 0;
	__u64 words[RR_CACHE_WORDS] = { 0 }, h, seq, now;
	struct rr_cache_entry *e;
	bool live;

	if (!table || req_len > RR_CACHE_MAX_PAYLOAD ||
	    reply_len > RR_CACHE_MAX_PAYLOAD)
		return RR_CACHE_SKIPPED;
	/* A reply that does not echo the ID breaks the function's promise:
	 * the cache would answer it wrongly, so it is not stored. */
	if (id_bytes > 8 || req_len < id_bytes || reply_len < id_bytes ||
	    memcmp(req, reply, id_bytes))
		return RR_CACHE_SKIPPED;
	/* A reply that does not end with the request's cookie would answer
	 * another client with a cookie not its own. */
	if (req_len < id_bytes + tail || reply_len < id_bytes + tail ||
	    memcmp(req + req_len - tail, reply + reply_len - tail, tail))
		return RR_CACHE_SKIPPED;
	memcpy(words, req, req_len);
	/* As the XDP program keys it: without the ID and the cookie. */
	memset(words, 0, id_bytes);
	memset((uint8_t *)words + req_len - tail, 0, tail);
	h = rr_cache_hash(words, (req_len + 7) / 8, port, req_len);
	e = &table[h & (entries - 1)];

	seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	if (seq & 1 ||
	    !__atomic_compare_exchange_n(&e->seq, &seq, seq + 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return RR_CACHE_SKIPPED;

	/* A live entry for another request is an eviction; the same request
	 * again (its reply expired, or raced a lookup) is not. */
	now = e->expires_ns ? rr_now_ns() : 0;
	live = e->port && (!e->expires_ns || now <= e->expires_ns) &&
	       (e->port != port || e->hash != h || e->req_len != req_len ||
		e->flags != (cookie ? RR_CACHE_COOKIE : 0) ||
		memcmp(e->req, words, sizeof(words)));
	e->hash = h;
	e->port = port;
	e->gen = gen;
	e->req_len = (uint16_t)req_len;
	e->reply_len = (uint16_t)reply_len;
	e->expires_ns = expires_ns;
	e->flags = cookie ? RR_CACHE_COOKIE : 0;
	memcpy(e->req, words, sizeof(words));
	memset(e->reply, 0, sizeof(e->reply));
	memcpy(e->reply, reply, reply_len - tail);
	__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
	return live ? RR_CACHE_EVICTED : RR_CACHE_INSERTED;
}
