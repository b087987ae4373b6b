// SPDX-License-Identifier: GPL-2.0
/*
 * A test module for tokens (tests/integration/dns_cookies.sh; the API in
 * docs/FUNCTIONS.md, "Tokens: proving a source"), as QUIC's Retry: a
 * request that starts with "token " and then the token is checked
 * (rr_token_check()) and answered "valid", or "refused " and the reason
 * (malformed, expired, forged); any other request is answered "retry "
 * and a token made for its source (rr_token_make()), which the client
 * echoes behind "token ".
 */
#include <errno.h>
#include <string.h>

#include <reqrouter/rr_function.h>

#define ASK "token "
#define RETRY "retry "

static int answer(uint8_t *buf, size_t room, const char *s)
{
	size_t n = strlen(s);

	if (n > room)
		return -EMSGSIZE;
	memcpy(buf, s, n);
	return (int)n;
}

static int retry(const struct rr_request *req, uint8_t *buf, size_t len,
		 size_t room)
{
	size_t k = sizeof(ASK) - 1;
	int ret;

	if (len >= k && !memcmp(buf, ASK, k)) {
		ret = rr_token_check(req, buf + k, len - k);
		return answer(buf, room,
			      !ret		  ? "valid"
			      : ret == -EINVAL	  ? "refused malformed"
			      : ret == -ETIMEDOUT ? "refused expired"
						  : "refused forged");
	}
	k = sizeof(RETRY) - 1;
	if (room < k + RR_TOKEN_LEN)
		return -EMSGSIZE;
	memcpy(buf, RETRY, k);
	ret = rr_token_make(req, buf + k, room - k);
	return ret < 0 ? ret : (int)k + ret;
}

RR_FUNCTION_FLAGS(retry, 9018, "a token, then its check (a test module)", retry,
		  RR_FN_TOKENS);
