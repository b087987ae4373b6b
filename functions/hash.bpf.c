// SPDX-License-Identifier: GPL-2.0
/*
 * hash in XDP: the very reply of functions/hash.c (FNV-1a 64 of DATA
 * repeated ROUNDS times, as 16 hex digits) for a DATA of up to
 * HASH_XDP_MAX_DATA bytes. Anything else is punted untouched, so that the
 * C implementation alone decides: a longer DATA (it answers) and every
 * request that is no valid one (it counts hash_invalid and answers
 * nothing), so the two tiers never give different verdicts.
 *
 * DATA is copied to the stack once; the rounds run through bpf_loop(),
 * one call of hash_round() a round, so the verifier checks one round of
 * at most HASH_XDP_MAX_DATA bytes, not 4096 of them.
 */
#include <reqrouter/rr_xdp.h>

#define HASH_MAX_DIGITS 4
#define HASH_MAX_ROUNDS 4096
#define HASH_XDP_MAX_DATA 128
#define HASH_REPLY_LEN 16
#define FNV64_BASIS 0xcbf29ce484222325ULL
#define FNV64_PRIME 0x100000001b3ULL

/* What the rounds share: bpf_loop() passes the callback one pointer. */
struct hash_run {
	__u64 h;
	__u32 len;
	__u32 pad;
	__u8 data[HASH_XDP_MAX_DATA];
};

static __always_inline __u8 hash_hex_digit(__u64 v)
{
	v &= 0xf;
	return v < 10 ? '0' + v : 'a' - 10 + v;
}

/* One round: FNV-1a 64 over the whole DATA, from where the last left. */
static long hash_round(__u64 index, void *arg)
{
	struct hash_run *run = arg;
	__u64 h = run->h;
	__u32 i;

	for (i = 0; i < HASH_XDP_MAX_DATA; i++) {
		if (i >= run->len)
			break;
		h ^= run->data[i];
		h *= FNV64_PRIME;
	}
	run->h = h;
	return 0;
}

static __always_inline int hash_xdp(struct xdp_md *ctx, struct rr_xdp_req *req)
{
	__u8 head[HASH_MAX_DIGITS + 1] = {}, hex[HASH_REPLY_LEN];
	__u32 len = req->payload_len, hlen, rounds = 0, k;
	struct hash_run run = {};
	__u64 h, dlen;
	long ret;
	int i;

	/* ROUNDS and its space: at most the first five bytes. */
	hlen = len < sizeof(head) ? len : sizeof(head);
	if (!hlen || bpf_xdp_load_bytes(ctx, req->payload_off, head, hlen))
		return RR_XDP_PUNT;
	for (k = 0; k < HASH_MAX_DIGITS; k++) {
		if (k >= hlen || head[k] < '0' || head[k] > '9')
			break;
		rounds = rounds * 10 + (head[k] - '0');
	}
	/* No digit, no space after them (a fifth digit included), or out
	 * of range: user space says it is invalid. */
	if (!k || k >= hlen || head[k] != ' ' || !rounds ||
	    rounds > HASH_MAX_ROUNDS)
		return RR_XDP_PUNT;
	/* One register, checked where the helper takes it: clang would
	 * check a copy the verifier does not tie to it. */
	dlen = len - k - 1;
	rr_opaque(dlen);
	if (dlen > HASH_XDP_MAX_DATA)
		return RR_XDP_PUNT;
	run.len = dlen;
	run.h = FNV64_BASIS;
	if (dlen) {
		if (bpf_xdp_load_bytes(ctx, req->payload_off + k + 1, run.data,
				       dlen))
			return RR_XDP_PUNT;
		ret = bpf_loop(rounds, hash_round, &run, 0);
		if (ret != rounds)
			return RR_XDP_PUNT;
	}
	h = run.h;
	for (i = HASH_REPLY_LEN - 1; i >= 0; i--, h >>= 4)
		hex[i] = hash_hex_digit(h);

	/* No room under the amplification limit: -EMSGSIZE, as in user
	 * space. No room to grow the frame: it is still untouched. */
	ret = rr_xdp_resize(ctx, req, HASH_REPLY_LEN);
	if (ret == -EMSGSIZE)
		return -EMSGSIZE;
	if (ret)
		return RR_XDP_PUNT;
	/* From here the frame has changed: a failure can no longer punt. */
	if (bpf_xdp_store_bytes(ctx, req->payload_off, hex, HASH_REPLY_LEN))
		return -EINVAL;
	return HASH_REPLY_LEN;
}

RR_XDP_FUNCTION(hash, hash_xdp);
