// SPDX-License-Identifier: GPL-2.0
/*
 * Logging, for reqrouter and every tool. Messages go to stderr prefixed
 * with the program name, or with their priority where stderr is the
 * journal. Library messages show only with -v: a failure is
 * reported once, in our words, by the caller, and -v then shows the detail
 * (the verifier log, say).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"

static enum rr_log_level log_level = RR_LOG_INFO;
static const char *log_prog = "reqrouter";
static bool log_journal;
static char last_problem[256];

void rr_log_set_prog(const char *prog)
{
	log_prog = prog;
}

void rr_log_set_level(enum rr_log_level level)
{
	log_level = level;
}

bool rr_log_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	log_journal = env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 &&
		      !fstat(2, &st) && st.st_dev == dev && st.st_ino == ino;
	return log_journal;
}

const char *rr_log_last_problem(void)
{
	return last_problem;
}

/*
 * The line is made whole before it is written: one write, so that lines
 * of several threads never mix, and made before last_problem changes, so
 * that a line which quotes the last problem (main.c's "did not start: ")
 * reads it as it was. A line longer than the buffer is written as it
 * comes.
 */
static void vlog(enum rr_log_level level, const char *fmt, va_list ap)
{
	char line[1024];
	size_t at;
	va_list copy;
	int n;

	if (level > log_level)
		return;
	if (log_journal)
		at = (size_t)snprintf(line, sizeof(line), "<%d>", level);
	else
		at = (size_t)snprintf(line, sizeof(line), "%s: ", log_prog);
	if (at >= sizeof(line))
		at = 0;
	va_copy(copy, ap);
	n = vsnprintf(line + at, sizeof(line) - at, fmt, copy);
	va_end(copy);
	if (n >= 0 && (size_t)n < sizeof(line) - at) {
		fputs(line, stderr);
	} else {
		fwrite(line, 1, at, stderr);
		vfprintf(stderr, fmt, ap);
	}
	if (level <= RR_LOG_WARN) {
		n = (int)strcspn(line + at, "\n");
		if ((size_t)n >= sizeof(last_problem))
			n = sizeof(last_problem) - 1;
		memcpy(last_problem, line + at, (size_t)n);
		last_problem[n] = '\0';
	}
}

void rr_log(enum rr_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	vlog(RR_LOG_DEBUG, fmt, ap);
	return 0;
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	vlog(RR_LOG_DEBUG, fmt, ap);
	return 0;
}

void rr_log_route_libraries(void)
{
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}
