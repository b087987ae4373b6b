// SPDX-License-Identifier: GPL-2.0
/*
 * hash: a CPU-heavy pure function with an XDP implementation, for
 * benchmarks of work done in the in-kernel tier (xdp_spread spreads a
 * function's XDP program over other CPUs; it needs one whose cost a
 * request chooses). Opt-in: served only where the config has a
 * [function hash] section; it takes no settings.
 *
 * A request is ROUNDS, one space, then DATA:
 *
 *	ROUNDS SPACE DATA
 *
 * ROUNDS is ASCII decimal, 1 to 4 digits (leading zeros allowed), from 1
 * to HASH_MAX_ROUNDS; DATA is the rest of the payload, any bytes, none
 * included. The reply is 16 lowercase hex digits: FNV-1a 64 over DATA
 * repeated ROUNDS times, the state carried from one round to the next
 * (the hash of DATA written ROUNDS times in a row). "1 a" gets
 * "af63dc4c8601ec8c", "1 " and "9 " get the offset basis,
 * "cbf29ce484222325". So a request costs ROUNDS x length byte steps,
 * each a dependent multiply, which no cache or compiler can shorten.
 *
 * No reply, on purpose (RR_NO_REPLY, counter hash_invalid): a payload
 * that does not start with a digit, has no space right after its digits
 * or more than 4 digits, or asks for 0 rounds or more than the most. A
 * room under 16 bytes is -EMSGSIZE (the amplification limit).
 *
 * Pure: the same request always gets the same reply, so where it is
 * served in user space the reply cache answers a repeated request in
 * XDP. functions/hash.bpf.c computes the same reply in the kernel for a
 * DATA of up to 128 bytes and hands everything else, invalid requests
 * included, to this code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <reqrouter/rr_function.h>

#define HASH_PORT 9012
#define HASH_MAX_DIGITS 4
#define HASH_MAX_ROUNDS 4096
#define HASH_REPLY_LEN 16
#define FNV64_BASIS 0xcbf29ce484222325ULL
#define FNV64_PRIME 0x100000001b3ULL

struct hash_state {
	int invalid; /* counter index (rr_fn_count() ignores -1) */
};

/* For a bare call (no init: the tools without a config). */
static const struct hash_state hash_nostate = { -1 };

static int hash_init(const struct rr_fn_config *cfg, void **state)
{
	struct hash_state *h;

	if (cfg->nsettings)
		return rr_fn_error(cfg, &cfg->settings[0],
				   "unknown key '%s' (hash takes no settings)",
				   cfg->settings[0].key);
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->invalid = rr_fn_counter(
		cfg, "hash_invalid",
		"Payloads that are no valid hash request (not answered).");
	if (h->invalid < 0) {
		free(h);
		return -EINVAL;
	}
	*state = h;
	return 0;
}

static void hash_fini(void *state)
{
	free(state);
}

/* FNV-1a 64 of @data (@len bytes) written @rounds times in a row. */
static uint64_t hash_fnv(const uint8_t *data, size_t len, uint32_t rounds)
{
	uint64_t h = FNV64_BASIS;
	uint32_t r;
	size_t i;

	for (r = 0; len && r < rounds; r++)
		for (i = 0; i < len; i++) {
			h ^= data[i];
			h *= FNV64_PRIME;
		}
	return h;
}

static int hash_handler(const struct rr_request *req, uint8_t *buf, size_t len,
			size_t room)
{
	const struct hash_state *st = req->state ? req->state : &hash_nostate;
	static const char hex[] = "0123456789abcdef";
	uint32_t rounds = 0;
	size_t digits = 0;
	uint64_t h;
	int i;

	while (digits < len && buf[digits] >= '0' && buf[digits] <= '9') {
		if (digits == HASH_MAX_DIGITS)
			goto invalid;
		rounds = rounds * 10 + (uint32_t)(buf[digits] - '0');
		digits++;
	}
	if (!digits || digits == len || buf[digits] != ' ' || !rounds ||
	    rounds > HASH_MAX_ROUNDS)
		goto invalid;
	if (room < HASH_REPLY_LEN)
		return -EMSGSIZE;
	h = hash_fnv(buf + digits + 1, len - digits - 1, rounds);
	for (i = HASH_REPLY_LEN - 1; i >= 0; i--, h >>= 4)
		buf[i] = (uint8_t)hex[h & 0xf];
	return HASH_REPLY_LEN;

invalid:
	rr_fn_count(req, st->invalid, 1);
	return RR_NO_REPLY;
}

RR_FUNCTION_DEF(hash, HASH_PORT,
		"FNV-1a 64 of DATA repeated ROUNDS times (benchmarks)",
		.handler = hash_handler, .init = hash_init, .fini = hash_fini,
		.flags = RR_FN_OPT_IN | RR_FN_PURE);
