/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reply cache (docs/DESIGN.md, "A request, from the NIC to its
 * reply", step 4): a repeated request of a pure function answered in
 * place, XDP_TX, from reply_cache, which the workers fill; cache_scratch
 * is the room on each CPU that the request and the reply are copied
 * through (lib/rl.h's slip borrows it).
 */
#ifndef RR_LIB_CACHE_H
#define RR_LIB_CACHE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include <reqrouter/rr_xdp_packet.h>

#include "lib/common.h"
#include "lib/parse.h"
#include "lib/stats.h"
#include "shared/cache.h"
#include "shared/port.h"

/* The reply cache (struct rr_cache_entry), mapped into user space, which
 * fills it: cache_groups partitions of 1 << cache_queue_bits entries for
 * each of cache_queues queues, a cell group's each, sized at load
 * (shared/cache.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_cache_entry);
	__uint(max_entries, RR_CACHE_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
} reply_cache SEC(".maps");

const volatile __u32 cache_queues = 1;
const volatile __u32 cache_groups = 1;
const volatile __u32 cache_queue_bits = 13; /* log2(RR_CACHE_ENTRIES) */

/* A request's and a cached reply's bytes while one is checked. */
struct cache_scratch {
	__u64 req[RR_CACHE_WORDS];
	__u64 reply[RR_CACHE_WORDS];
	__u8 cookie[RR_CACHE_COOKIE_LEN]; /* the request's, to echo */
};

/* One struct cache_scratch per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct cache_scratch);
	__uint(max_entries, 1);
} cache_scratch SEC(".maps");

/*
 * @len (1 to RR_CACHE_MAX_PAYLOAD, a power of two) as the verifier can
 * see it is not zero, whichever register clang tested: a helper refuses
 * a length that may be 0.
 */
_Static_assert(!(RR_CACHE_MAX_PAYLOAD & (RR_CACHE_MAX_PAYLOAD - 1)),
	       "nonzero_len() masks by RR_CACHE_MAX_PAYLOAD - 1");
static __always_inline __u32 nonzero_len(__u32 len)
{
	return ((len - 1) & (RR_CACHE_MAX_PAYLOAD - 1)) + 1;
}

/* The headers' bytes at most: Ethernet, two VLAN tags, IPv6, UDP. */
#define CACHE_HDR_MAX (RR_XDP_MAX_L3_OFF + 40 + 8)

/*
 * Makes room for a reply of @rlen bytes in front of the frame, its
 * headers moved there (through @buf), where its tail has none: a veth
 * copies a frame into a buffer cut to its length, rounded up, so a
 * 114-byte query gets 14 bytes of room at its end and 256 at its start.
 * Only for a reply written whole after it: the payload's old bytes are
 * left behind. 0, or -1 with the frame untouched.
 */
static __always_inline int cache_grow_front(struct xdp_md *ctx,
					    const struct rr_xdp_req *req,
					    __u32 rlen, __u64 *buf)
{
	long cur = (long)ctx->data_end - (long)ctx->data;
	long grow = (long)req->payload_off + rlen - cur;
	__u32 hdr = req->payload_off;

	if (hdr > CACHE_HDR_MAX || !hdr || grow <= 0 ||
	    grow > RR_CACHE_MAX_PAYLOAD)
		return -1;
	/* 1 to 128 as the verifier sees it, whatever clang made of the
	 * test above. */
	rr_opaque(hdr);
	hdr = ((hdr - 1) & 127) + 1;
	if (bpf_xdp_load_bytes(ctx, 0, buf, hdr))
		return -1;
	if (bpf_xdp_adjust_head(ctx, -(int)grow))
		return -1;
	/* Cannot fail where the frame is that long, but if it did the
	 * headers would be gone: put the frame back as it was. */
	if (bpf_xdp_store_bytes(ctx, 0, buf, hdr)) {
		bpf_xdp_adjust_head(ctx, (int)grow);
		return -1;
	}
	return 0;
}

/*
 * Answers a repeated request of a pure function from the reply cache.
 * The request's bytes are compared in full, not only its hash, and the
 * entry is read between two looks at its sequence count (atomic reads,
 * which order the loads between them), so an entry a worker is
 * rewriting answers nothing. @echo: the request ends with a DNS cookie
 * XDP found valid and young enough to echo (RR_COOKIE_ECHO): it is looked
 * up without it, among the entries kept so (RR_CACHE_COOKIE), and the
 * reply gets it back in its last bytes. Returns XDP_TX, or -1 on a miss
 * with the frame untouched.
 */
static __always_inline int cache_answer(struct xdp_md *ctx,
					struct rr_xdp_req *req,
					const struct rr_port_conf *conf,
					int echo)
{
	const __u32 m = RR_CACHE_MAX_PAYLOAD - 1;
	__u32 len = req->payload_len, zero = 0, key, rlen, i;
	__u32 idb = conf->cache_id_bytes, nw = (len + 7) / 8, rw;
	__u32 tail = echo ? RR_CACHE_COOKIE_LEN : 0;
	__u16 flags = echo ? RR_CACHE_COOKIE : 0;
	__u8 *bytes;
	struct cache_scratch *sc;
	struct rr_cache_entry *e;
	__u64 h, s1, s2, diff = 0, idmask = 0, id;

	if (len > conf->cache_max_payload || len > RR_CACHE_MAX_PAYLOAD)
		return -1;
	sc = bpf_map_lookup_elem(&cache_scratch, &zero);
	if (!sc)
		return -1;
	/* Only the words the request covers are read, hashed and compared
	 * (an entry is zero beyond its request, as the last word is here). */
	if (nw)
		sc->req[(nw - 1) & (RR_CACHE_WORDS - 1)] = 0;
	if (len && bpf_xdp_load_bytes(ctx, req->payload_off, sc->req,
				      nonzero_len(len)))
		return -1;
	/* A transaction ID is no part of the key; the reply gets this one.
	 * Words are little-endian in memory order: the first bytes are the
	 * low ones. */
	if (idb > 8 || len < idb + tail)
		return -1;
	if (idb)
		idmask = idb == 8 ? ~0ULL : (1ULL << (8 * idb)) - 1;
	id = sc->req[0] & idmask;
	sc->req[0] &= ~idmask;
	/* Nor is the client's cookie, which goes back in the reply. */
	if (echo) {
		bytes = (__u8 *)sc->req;
#pragma unroll
		for (i = 0; i < RR_CACHE_COOKIE_LEN; i++) {
			sc->cookie[i] = bytes[(len - tail + i) & m];
			bytes[(len - tail + i) & m] = 0;
		}
	}
	h = rr_cache_hash(sc->req, nw, req->dst_port, len);
	/* Its queue's partition of its cell group only: a queue not
	 * served, or a group that came after load, has none. */
	if (req->queue >= cache_queues || conf->cell_group >= cache_groups)
		return -1;
	key = (req->queue * cache_groups + conf->cell_group)
		      << cache_queue_bits |
	      (__u32)(h & ((1U << cache_queue_bits) - 1));
	e = bpf_map_lookup_elem(&reply_cache, &key);
	if (!e)
		return -1;
	/* A miss is told by plain reads of the entry's key; the sequence's
	 * atomic read, which takes the line from whichever CPU holds it, is
	 * only for what may be a hit (and the key is read again after it). */
	if (READ_ONCE_U64(e->hash) != h || e->port != req->dst_port ||
	    e->req_len != len || e->gen != conf->cache_gen || e->flags != flags)
		return -1;
	s1 = __sync_fetch_and_add(&e->seq, 0);
	if (s1 & 1 || e->hash != h || e->port != req->dst_port ||
	    e->req_len != len || e->gen != conf->cache_gen || e->flags != flags)
		return -1;
	/* The coarse clock (CLOCK_MONOTONIC, a tick behind at most) is a
	 * load where the precise one reads the TSC: an entry may answer a
	 * tick past its TTL, which is given in seconds. */
	if (e->expires_ns && bpf_ktime_get_coarse_ns() > e->expires_ns)
		return -1;
	rlen = e->reply_len;
	if (rlen > RR_CACHE_MAX_PAYLOAD || rlen > req->room ||
	    rlen < idb + tail)
		return -1;
	rw = (rlen + 7) / 8;
#pragma unroll
	for (i = 0; i < RR_CACHE_WORDS; i++) {
		if (i >= nw && i >= rw)
			break;
		if (i < nw)
			diff |= e->req[i] ^ sc->req[i];
		if (i < rw)
			sc->reply[i] = e->reply[i];
	}
	s2 = __sync_fetch_and_add(&e->seq, 0);
	if (diff || s1 != s2)
		return -1;
	/* A hit: only now is the checksum worth checking. A bad one is
	 * user space's to drop and count. */
	if (!udp_csum_ok(ctx, req, 0))
		return -1;
	sc->reply[0] = (sc->reply[0] & ~idmask) | id;
	if (echo) {
		bytes = (__u8 *)sc->reply;
#pragma unroll
		for (i = 0; i < RR_CACHE_COOKIE_LEN; i++)
			bytes[(rlen - tail + i) & m] = sc->cookie[i];
	}

	/* From here the frame changes: a failure can no longer punt. The
	 * request's words are no longer needed: its headers go through them
	 * where the reply grows at the front. */
	if (rr_xdp_resize(ctx, req, rlen) &&
	    cache_grow_front(ctx, req, rlen, sc->req))
		return -1;
	if (rlen && bpf_xdp_store_bytes(ctx, req->payload_off, sc->reply,
					nonzero_len(rlen)))
		return -2;
	if (rr_xdp_build_reply(ctx, req, rlen))
		return -2;
	rr_fn_count(req, RR_FN_CACHE_HIT);
	return rr_count(req->queue, RR_XDP_TX_CACHE, XDP_TX);
}

#endif /* RR_LIB_CACHE_H */
