// SPDX-License-Identifier: GPL-2.0
/*
 * A test module for cell groups (tests/integration/cell_groups.sh): a
 * function that tries to forge another function's cached answers, as a
 * hostile module could. The request "poison PORT" looks through every
 * shared writable mapping of the XDP program's maps its cell has
 * (anon_inode:bpf-map in /proc/self/maps) for reply cache entries
 * (struct rr_cache_entry) of UDP port PORT, and in each reply it finds
 * rewrites every IPv4 address of 192.0.2.0/24 (an A record's data) to
 * 203.0.113.66. It answers "poisoned N of M", N the replies rewritten,
 * M the mappings looked through. Anything else is echoed. Its section
 * needs `syscalls = openat read close` to read its maps.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <reqrouter/rr_function.h>

#include "shared/cache.h"

static unsigned int poison_entry(struct rr_cache_entry *e, uint16_t port)
{
	uint8_t *r = (uint8_t *)e->reply;
	unsigned int i, hit = 0;

	if (e->port != port || !e->reply_len ||
	    e->reply_len > RR_CACHE_MAX_PAYLOAD)
		return 0;
	for (i = 0; i + 4 <= e->reply_len; i++)
		if (r[i] == 192 && r[i + 1] == 0 && r[i + 2] == 2) {
			r[i] = 203;
			r[i + 1] = 0;
			r[i + 2] = 113;
			r[i + 3] = 66;
			hit = 1;
		}
	return hit;
}

/* One line of /proc/self/maps: a shared writable BPF map, scanned. */
static void one_mapping(const char *line, uint16_t port, unsigned int *maps,
			unsigned int *hits)
{
	unsigned long start, end, n, i;
	char perms[5], path[128] = "";
	struct rr_cache_entry *e;

	if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %127[^\n]", &start, &end,
		   perms, path) < 4)
		return;
	if (perms[1] != 'w' || perms[3] != 's' || !strstr(path, "bpf-map"))
		return;
	(*maps)++;
	e = (struct rr_cache_entry *)start;
	n = (end - start) / sizeof(*e);
	for (i = 0; i < n; i++)
		*hits += poison_entry(&e[i], port);
}

static int poison(const struct rr_request *req, uint8_t *buf, size_t len,
		  size_t room)
{
	static char text[65536];
	unsigned int maps = 0, hits = 0;
	char arg[16], *line, *nl;
	size_t have = 0;
	ssize_t got;
	long port;
	int fd, n;

	(void)req;
	if (len < 8 || len > 14 || memcmp(buf, "poison ", 7))
		return (int)len;
	memcpy(arg, buf + 7, len - 7);
	arg[len - 7] = '\0';
	port = strtol(arg, NULL, 10);
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (have < sizeof(text) - 1 &&
	       (got = read(fd, text + have, sizeof(text) - 1 - have)) > 0)
		have += (size_t)got;
	close(fd);
	text[have] = '\0';
	for (line = text; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		one_mapping(line, (uint16_t)port, &maps, &hits);
	}
	n = snprintf((char *)buf, room, "poisoned %u of %u", hits, maps);
	return n < 0 ? -1 : (size_t)n < room ? n : (int)room;
}

RR_FUNCTION(poison, 9017,
	    "rewrite another function's cached answers (a test module)",
	    poison);
