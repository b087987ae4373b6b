// SPDX-License-Identifier: GPL-2.0
/*
 * A function's tokens (docs/FUNCTIONS.md, "Tokens: proving a source"): a
 * reply carries one made for the request's source address, and the
 * client's next request echoes it, as QUIC's Retry does; a valid one
 * proves that the source receives at its address, and validates it
 * (docs/DESIGN.md, "Validated sources"). A token is RR_TOKEN_LEN bytes:
 * version (1), three zero bytes, the wall-clock second it was made
 * (network order) and SipHash-2-4 under reqrouter's key of those 8
 * bytes, the function's port and family, and the address, in the words
 * <reqrouter/rr_cookie.h> hashes a DNS server cookie's.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <reqrouter/rr_cookie.h>
#include <reqrouter/rr_function.h>

#include "token.h"

#define TOKEN_VERSION 1
/* Ahead of now by more than this: not made here. */
#define TOKEN_FUTURE_S 5
/* The hashed word beside the port and family: no server cookie's. */
#define TOKEN_DOMAIN 0x6e656b6f74ULL /* "token" */

const char *const rr_token_result_names[RR_TOKEN_RESULTS] = {
	[RR_TOKEN_VALID] = "valid",
	[RR_TOKEN_MALFORMED] = "malformed",
	[RR_TOKEN_EXPIRED] = "expired",
	[RR_TOKEN_FORGED] = "forged",
};

static struct rr_token_env env;
static int have_key;

void rr_token_setup(const struct rr_token_env *e)
{
	env = *e;
	have_key = 1;
}

/* Outside reqrouter (a tool that runs the function): a key of its own. */
static void key_once(void)
{
	uint8_t k[16];

	if (have_key)
		return;
	if (getrandom(k, sizeof(k), 0) != sizeof(k))
		memset(k, 0, sizeof(k)); /* tokens then prove nothing */
	env.k0 = rr_le64(k);
	env.k1 = rr_le64(k + 8);
	have_key = 1;
}

static uint64_t mac(int family, const void *addr, uint16_t port,
		    const uint8_t *head)
{
	const uint8_t *p = addr;
	uint64_t word = TOKEN_DOMAIN << 32 | (uint64_t)family << 16 | port;

	if (family == AF_INET)
		return rr_cookie_hash(env.k0, env.k1, word, rr_le64(head),
				      rr_le32(p), 0, 0);
	return rr_cookie_hash(env.k0, env.k1, word, rr_le64(head), rr_le64(p),
			      rr_le64(p + 8), 1);
}

void rr_token_at(int family, const void *addr, uint16_t port, uint8_t *buf,
		 uint32_t now)
{
	uint64_t m;
	int i;

	key_once();
	memset(buf, 0, 8);
	buf[0] = TOKEN_VERSION;
	buf[4] = (uint8_t)(now >> 24);
	buf[5] = (uint8_t)(now >> 16);
	buf[6] = (uint8_t)(now >> 8);
	buf[7] = (uint8_t)now;
	m = mac(family, addr, port, buf);
	for (i = 0; i < 8; i++)
		buf[8 + i] = (uint8_t)(m >> (8 * i));
}

enum rr_token_result rr_token_judge(int family, const void *addr, uint16_t port,
				    const uint8_t *token, size_t len,
				    uint32_t now)
{
	uint32_t made;
	int32_t age;

	key_once();
	if (!token || len != RR_TOKEN_LEN || token[0] != TOKEN_VERSION ||
	    token[1] || token[2] || token[3] ||
	    (family != AF_INET && family != AF_INET6))
		return RR_TOKEN_MALFORMED;
	/* The hash first: the time of a forged token means nothing. */
	if (rr_le64(token + 8) != mac(family, addr, port, token))
		return RR_TOKEN_FORGED;
	made = (uint32_t)token[4] << 24 | (uint32_t)token[5] << 16 |
	       (uint32_t)token[6] << 8 | token[7];
	age = (int32_t)(now - made);
	if (age > RR_TOKEN_LIFE_S || age < -TOKEN_FUTURE_S)
		return RR_TOKEN_EXPIRED;
	return RR_TOKEN_VALID;
}

static uint32_t wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)ts.tv_sec;
}

static const void *source_of(const struct rr_request *req)
{
	return req->family == AF_INET ? (const void *)&req->src.v4
				      : (const void *)&req->src.v6;
}

int rr_token_make(const struct rr_request *req, uint8_t *buf, size_t room)
{
	if (!req || !buf || (req->family != AF_INET && req->family != AF_INET6))
		return -EINVAL;
	if (room < RR_TOKEN_LEN)
		return -ENOSPC;
	rr_token_at(req->family, source_of(req), req->dst_port, buf,
		    wall_now());
	return RR_TOKEN_LEN;
}

int rr_token_check(const struct rr_request *req, const uint8_t *token,
		   size_t len)
{
	static const int err[RR_TOKEN_RESULTS] = {
		[RR_TOKEN_VALID] = 0,
		[RR_TOKEN_MALFORMED] = -EINVAL,
		[RR_TOKEN_EXPIRED] = -ETIMEDOUT,
		[RR_TOKEN_FORGED] = -EACCES,
	};
	enum rr_token_result r;

	if (!req)
		return -EINVAL;
	r = rr_token_judge(req->family, source_of(req), req->dst_port, token,
			   len, wall_now());
	if (env.counts)
		__atomic_fetch_add(&env.counts[r], 1, __ATOMIC_RELAXED);
	if (r == RR_TOKEN_VALID && env.validated)
		env.validated(req->family, source_of(req));
	return err[r];
}
