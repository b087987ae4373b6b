/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reply cache, user-space side: workers insert the replies of pure
 * functions into the table the XDP program answers repeated requests
 * from (struct rr_cache_entry in kern/shared/cache.h). An insert is a few stores
 * into shared memory, never a system call.
 */
#ifndef RR_CACHE_H
#define RR_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/cache.h"

enum rr_cache_insert {
	RR_CACHE_SKIPPED,  /* another worker was writing that entry, or the
			    * reply is too long or does not echo the ID */
	RR_CACHE_INSERTED, /* into a free, stale or expired entry */
	RR_CACHE_EVICTED,  /* over a live entry for another request */
};

/*
 * Stores @reply as the answer to @req on @port under generation @gen, in
 * @table of @entries (a power of two: a queue's partition, shared/cache.h),
 * valid until @expires_ns (0: no expiry). Lengths up to
 * RR_CACHE_MAX_PAYLOAD; anything longer is skipped. The first @id_bytes
 * (0-8) of the request are a transaction ID: left out of the key, and the
 * reply must start with them (else it is skipped). With @cookie, the
 * request and the reply both end with the client's DNS cookie
 * (RR_CACHE_COOKIE_LEN bytes, the same in both, else it is skipped): left
 * out of the key and of the reply kept, the entry answers the query of
 * any client whose cookie XDP finds valid, with that client's cookie in
 * its place (RR_CACHE_COOKIE).
 */
enum rr_cache_insert rr_cache_insert(struct rr_cache_entry *table,
				     uint32_t entries, uint16_t port,
				     uint32_t gen, uint64_t expires_ns,
				     const uint8_t *req, uint32_t req_len,
				     const uint8_t *reply, uint32_t reply_len,
				     uint32_t id_bytes, bool cookie);

#endif /* RR_CACHE_H */
