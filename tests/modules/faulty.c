// SPDX-License-Identifier: GPL-2.0
/*
 * A test module: a function that misbehaves on demand, for the
 * containment tests (isolation = cell). Its payload says what to do:
 * "crash" dereferences a bad pointer (SIGSEGV), "abort" calls abort()
 * (SIGABRT), "fpe" divides by zero (SIGFPE), "spin" never returns, "slow"
 * spins for 300 ms and answers "slow", "open"
 * opens and closes /etc/hostname (openat and close, which a cell's system
 * call filter allows only with `syscalls = openat close`) and answers
 * "opened", "signal" asks whether pid 1 exists (tgkill with signal 0, which
 * a cell may send itself only) and answers "signalled"; any other payload
 * is echoed back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <reqrouter/rr_function.h>

static int is(const uint8_t *buf, size_t len, const char *word)
{
	return len == strlen(word) && !memcmp(buf, word, len);
}

/* The faults are the point: a sanitizer build must not catch them first. */
__attribute__((no_sanitize("undefined", "address"))) static int
faulty(const struct rr_request *req, uint8_t *buf, size_t len, size_t room)
{
	static const char opened[] = "opened", signalled[] = "signalled";
	int *volatile bad = NULL;
	volatile int zero = 0;
	struct timespec t0, t;
	int fd;

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
	if (is(buf, len, "slow")) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec -
			       t0.tv_nsec <
		       300000000L);
		return (int)len;
	}
	if (is(buf, len, "open")) {
		fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		close(fd);
		if (room < sizeof(opened) - 1)
			return -ENOSPC;
		memcpy(buf, opened, sizeof(opened) - 1);
		return (int)sizeof(opened) - 1;
	}
	if (is(buf, len, "signal")) {
		syscall(SYS_tgkill, 1, 1, 0);
		if (room < sizeof(signalled) - 1)
			return -ENOSPC;
		memcpy(buf, signalled, sizeof(signalled) - 1);
		return (int)sizeof(signalled) - 1;
	}
	return (int)len;
}

RR_FUNCTION(faulty, 7700, "misbehaves on demand (a test module)", faulty);
