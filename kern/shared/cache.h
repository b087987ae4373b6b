/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reply cache (docs/DESIGN.md, "A request, from the NIC to its
 * reply", step 4): the entries user space writes and the XDP program
 * reads, and the hash both compute.
 */
#ifndef RR_SHARED_CACHE_H
#define RR_SHARED_CACHE_H

#include <linux/types.h>

/*
 * The reply cache: a direct-mapped table in an mmapable array that user
 * space fills (AF_XDP replies bypass TC egress, so no BPF program sees
 * them) and the XDP program reads. An entry answers a request only if
 * port, generation, length and every request byte match, and it has not
 * expired. @seq is a sequence lock: odd while a worker rewrites the entry,
 * so a reader that sees it change in between answers nothing.
 */
#define RR_CACHE_MAX_PAYLOAD 256 /* request and reply bytes per entry */
#define RR_CACHE_WORDS (RR_CACHE_MAX_PAYLOAD / 8)
#define RR_CACHE_ENTRIES 8192 /* a power of two */

/*
 * The table is one partition per (RX queue served, cell group),
 * RR_CACHE_ENTRIES shared out among the queues in powers of two,
 * RR_CACHE_QUEUE_MIN at least, and that many again for each cell group:
 * a request is looked up only in its queue's partition of its function's
 * group, and only that group's workers of that queue store there. What a
 * cell can write of the cache is the answers of its own functions on its
 * own queue, never another queue's or another group's. 1024 entries of
 * 552 bytes fill whole pages, so a cell keeps its own partition mapped
 * and nothing else.
 */
#define RR_CACHE_QUEUE_MIN 1024

/*
 * An entry whose request and reply both ended with the client's DNS
 * cookie (RFC 7873: its 8-byte client and 16-byte server cookie, the
 * COOKIE option last in the query and in the reply): kept without them,
 * it answers only a query whose server cookie XDP found valid for its
 * source and young enough to be echoed, that query's cookie in the
 * reply's last bytes (lib/cache.h, cache_answer()).
 */
#define RR_CACHE_COOKIE (1U << 0)
#define RR_CACHE_COOKIE_LEN 24

struct rr_cache_entry {
	__u64 seq;
	__u64 hash;
	__u64 expires_ns; /* CLOCK_MONOTONIC; 0: never (XDP reads the coarse one) */
	__u32 gen;
	__u16 port;
	__u16 req_len;
	__u16 reply_len;
	__u16 flags; /* RR_CACHE_COOKIE */
	__u16 pad[2];
	__u64 req[RR_CACHE_WORDS]; /* zero beyond req_len */
	__u64 reply[RR_CACHE_WORDS];
};

/*
 * The entry's hash over the zero-padded request words; the same code runs
 * in the XDP program and in user space. @nwords covers the request.
 */
static __inline __u64 rr_cache_hash(const __u64 *w, __u32 nwords, __u32 port,
				    __u32 len)
{
	__u64 h = 0x9e3779b97f4a7c15ULL ^ ((__u64)port << 32 | len);
	__u32 i;

	for (i = 0; i < RR_CACHE_WORDS; i++) {
		if (i >= nwords)
			break;
		h ^= w[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	return h;
}

#endif /* RR_SHARED_CACHE_H */
