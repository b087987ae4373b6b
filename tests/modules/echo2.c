// SPDX-License-Identifier: GPL-2.0
/*
 * A test module (tests/integration/canary.sh): "echo", version 2, which
 * says so: its reply is "v2 " and the request. It declares its version
 * for the metrics' version label. "fail" gets an error (no reply, counted
 * as function_error), "crash" a SIGSEGV and "slow" its reply after 2 ms,
 * for the canary's automatic rollback.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <reqrouter/rr_function.h>
#include <reqrouter/rr_module.h>

RR_MODULE_VERSION("2.0");

static int is(const uint8_t *buf, size_t len, const char *word)
{
	return len == strlen(word) && !memcmp(buf, word, len);
}

/* The crash is the point: a sanitizer build must not catch it first. */
__attribute__((no_sanitize("undefined", "address"))) static int
echo2(const struct rr_request *req, uint8_t *buf, size_t len, size_t room)
{
	int *volatile bad = NULL;
	struct timespec t0, t;

	(void)req;
	if (is(buf, len, "crash"))
		return *bad;
	/* Spins: a cell's system call filter allows the clock. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (is(buf, len, "slow") &&
	       (t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec <
		       2000000L);
	if (is(buf, len, "fail") || len + 3 > room)
		return -EINVAL;
	memmove(buf + 3, buf, len);
	memcpy(buf, "v2 ", 3);
	return (int)len + 3;
}

RR_FUNCTION(echo, 7, "echo, version 2: its reply says \"v2\" (a test module)",
	    echo2);
