// SPDX-License-Identifier: GPL-2.0
/* The helpers of testutil.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

int t_failures;
char t_where[160];

char *t_write_file(const char *prefix, const char *text)
{
	static char paths[8][128];
	static unsigned int next;
	char *path = paths[next++ % 8];
	size_t len = strlen(text);
	int fd;

	snprintf(path, sizeof(paths[0]), "%s.XXXXXX", prefix);
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
	close(fd);
	return path;
}

void t_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s: ", t_where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	t_failures++;
}

void t_at(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t_where, sizeof(t_where), fmt, ap);
	va_end(ap);
}

int t_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ret = system(cmd);
	if (ret != 0)
		fprintf(stderr, "  '%s' gave %d\n", cmd, ret);
	return ret;
}
