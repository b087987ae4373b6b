/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tokens (rr_token_make(), rr_token_check() in <reqrouter/rr_function.h>;
 * docs/FUNCTIONS.md, "Tokens: proving a source"): reqrouter's side, the
 * key they are made under and what a valid one does, set by the daemon
 * (src/daemon/features/validate.c) before its workers start.
 */
#ifndef RR_TOKEN_INTERNAL_H
#define RR_TOKEN_INTERNAL_H

#include <stdint.h>

/* What rr_token_check() found, each counted. */
enum rr_token_result {
	RR_TOKEN_VALID,
	RR_TOKEN_MALFORMED, /* a wrong length, version or reserved bytes */
	RR_TOKEN_EXPIRED,   /* made too long ago, or ahead of now */
	RR_TOKEN_FORGED,    /* not made here for this source */
	RR_TOKEN_RESULTS
};

extern const char *const rr_token_result_names[RR_TOKEN_RESULTS];

struct rr_token_env {
	uint64_t k0, k1; /* SipHash's key words */
	/* Counters by enum rr_token_result, in memory every worker shares
	 * (cells included); NULL: not counted. */
	uint64_t *counts;
	/* Called with a valid token's source (4 or 16 bytes): it is
	 * validated; NULL: nothing more. */
	void (*validated)(int family, const void *addr);
};

/* The key, counters and hook every later call uses (before the workers
 * are made: cells keep what they were forked with). Without it, the key
 * is drawn at the first token made or checked. */
void rr_token_setup(const struct rr_token_env *env);

/* The check of rr_token_check() at wall-clock second @now, without its
 * counting and hook: an enum rr_token_result. */
enum rr_token_result rr_token_judge(int family, const void *addr, uint16_t port,
				    const uint8_t *token, size_t len,
				    uint32_t now);

/* The token of rr_token_make() made at wall-clock second @now into @buf
 * (RR_TOKEN_LEN bytes). */
void rr_token_at(int family, const void *addr, uint16_t port, uint8_t *buf,
		 uint32_t now);

#endif /* RR_TOKEN_INTERNAL_H */
