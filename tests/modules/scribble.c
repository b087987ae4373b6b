// SPDX-License-Identifier: GPL-2.0
/*
 * A test module for the supervisor's distrust (tests/integration/
 * cell_scribble.sh): a function that writes garbage over every byte of
 * reqrouter's shared state it can reach from its cell, as a hostile or
 * broken function could. The request "scribble" does one pass; anything
 * else is echoed. The request "ctl:PATH" sends `threads 3` to the control
 * socket at PATH and replies with its answer: a cell runs as the
 * service's user, and must still not be let change the instance.
 *
 * It finds the shared memory in /proc/self/maps (so its section needs
 * `syscalls = openat read close mprotect`, and socket connect for
 * "ctl:"): every shared writable
 * anonymous or memfd mapping but the UMEM area (frames in flight, which
 * the kernel checks as it takes them; RR_UMEM_SIZE) and the rings (the
 * kernel's AF_XDP interface) gets garbage; every shared read-only one is
 * tried with mprotect() first. The reply says how many mappings and bytes
 * were written, and how many read-only ones could be made writable (none,
 * where the cell is confined as it should be).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <reqrouter/rr_function.h>

/* 4096 frames of 4096 bytes: the UMEM area, left alone. */
#define RR_UMEM_SIZE (4096UL * 4096UL)

static uint64_t seed = 0x9e3779b97f4a7c15ULL;

static uint64_t next_garbage(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static void garbage(uint8_t *p, size_t len)
{
	uint64_t g;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		g = next_garbage();
		memcpy(p + i, &g, 8);
	}
}

struct pass {
	unsigned int written, bytes_k, opened;
};

/* One line of /proc/self/maps. */
static void one_mapping(const char *line, struct pass *p)
{
	unsigned long start, end;
	char perms[5], path[128] = "";
	size_t len;

	if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %127[^\n]", &start, &end,
		   perms, path) < 3)
		return;
	len = end - start;
	if (perms[3] != 's' || len == RR_UMEM_SIZE ||
	    (strncmp(path, "/dev/zero", 9) && strncmp(path, "/memfd:", 7)))
		return;
	if (perms[1] != 'w') {
		if (mprotect((void *)start, len, PROT_READ | PROT_WRITE))
			return;
		p->opened++;
	}
	garbage((uint8_t *)start, len);
	p->written++;
	p->bytes_k += (unsigned int)(len / 1024);
}

static void scribble(struct pass *p)
{
	static char maps[65536];
	size_t have = 0;
	ssize_t n;
	char *line, *nl;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (have < sizeof(maps) - 1 &&
	       (n = read(fd, maps + have, sizeof(maps) - 1 - have)) > 0)
		have += (size_t)n;
	close(fd);
	maps[have] = '\0';
	for (line = maps; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		one_mapping(line, p);
	}
}

/* The control socket's answer to `threads 3`, into @buf. */
static int ask_control(const char *path, size_t plen, uint8_t *buf, size_t room)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	static const char cmd[] = "threads 3\n";
	ssize_t n;
	size_t have = 0;
	int fd;

	if (plen >= sizeof(sun.sun_path))
		return -EINVAL;
	memcpy(sun.sun_path, path, plen);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return snprintf((char *)buf, room, "socket: %s",
				strerror(errno));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    write(fd, cmd, sizeof(cmd) - 1) != sizeof(cmd) - 1) {
		n = snprintf((char *)buf, room, "connect: %s", strerror(errno));
		close(fd);
		return (int)n;
	}
	while (have < room && (n = read(fd, buf + have, room - have)) > 0)
		have += (size_t)n;
	close(fd);
	return (int)have;
}

static int scribble_handler(const struct rr_request *req, uint8_t *buf,
			    size_t len, size_t room)
{
	struct pass p = { 0 };
	int n;

	(void)req;
	if (len > 4 && !memcmp(buf, "ctl:", 4)) {
		n = ask_control((const char *)buf + 4, len - 4, buf, room);
		return n < 0 ? n : (size_t)n < room ? n : (int)room;
	}
	if (len != 8 || memcmp(buf, "scribble", 8))
		return (int)len;
	scribble(&p);
	n = snprintf(
		(char *)buf, room,
		"scribbled %u mappings, %u KiB; %u read-only made writable",
		p.written, p.bytes_k, p.opened);
	return n < 0 ? -EINVAL : (size_t)n < room ? n : (int)room;
}

RR_FUNCTION(scribble, 9011,
	    "write garbage over reqrouter's shared state (a test module)",
	    scribble_handler);
