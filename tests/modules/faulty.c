// SPDX-License-Identifier: GPL-2.0
/*
 * A test module: a function that misbehaves on demand, for the
 * containment tests (isolation = cell). Its payload says what to do:
 * "crash" dereferences a bad pointer (SIGSEGV), "abort" calls abort()
 * (SIGABRT), "fpe" divides by zero (SIGFPE), "spin" never returns; any
 * other payload is echoed back.
 */
#include <stdlib.h>
#include <string.h>

#include <reqrouter/rr_function.h>

static int is(const uint8_t *buf, size_t len, const char *word)
{
	return len == strlen(word) && !memcmp(buf, word, len);
}

/* The faults are the point: a sanitizer build must not catch them first. */
__attribute__((no_sanitize("undefined", "address"))) static int
faulty(const struct rr_request *req, uint8_t *buf, size_t len, size_t room)
{
	int *volatile bad = NULL;
	volatile int zero = 0;

	(void)req;
	(void)room;
	if (is(buf, len, "crash"))
		return *bad;
	if (is(buf, len, "abort"))
		abort();
	if (is(buf, len, "fpe"))
		return (int)len / zero;
	if (is(buf, len, "spin"))
		for (;;)
			__asm__ volatile("" ::: "memory");
	return (int)len;
}

RR_FUNCTION(faulty, 7700, "misbehaves on demand (a test module)", faulty);
