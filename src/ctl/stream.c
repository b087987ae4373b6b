// SPDX-License-Identifier: GPL-2.0
/*
 * capture and trace (stream.h): the instance's stream, passed on whole.
 * A capture's is pcapng, a block at a time, each block's length in its
 * header: a block is written once all of it has come, so that a capture
 * cut short by SIGINT still reads back to its last packet; its packets
 * are counted, and the lost records its last block gives said. A
 * trace's is JSON lines, a line at a time.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "show.h"
#include "stream.h"

#include <json-c/json.h>

#define BUF_SIZE (1U << 20)
#define PCAPNG_EPB 6U
#define PCAPNG_ISB 5U
#define PCAPNG_ISB_IFDROP 5

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

struct got {
	uint64_t packets, lost;
	bool pcap;
};

/* The records lost that an interface statistics block @b of @len bytes
 * gives, if it does. */
static void isb_lost(const uint8_t *b, uint32_t len, struct got *g)
{
	uint32_t off = 20;
	uint16_t code, olen;

	while (off + 4 <= len - 4) {
		memcpy(&code, b + off, 2);
		memcpy(&olen, b + off + 2, 2);
		if (!code || off + 4 + olen > len - 4)
			return;
		if (code == PCAPNG_ISB_IFDROP && olen == 8)
			memcpy(&g->lost, b + off + 4, 8);
		off += 4 + (olen + 3U) / 4 * 4;
	}
}

/* The whole blocks (or lines) at the start of @buf's @len bytes: their
 * length, counted into @g. */
static size_t whole(const uint8_t *buf, size_t len, struct got *g)
{
	const uint8_t *nl;
	size_t off = 0;
	uint32_t type, blen;

	if (!g->pcap) {
		nl = len ? memrchr(buf, '\n', len) : NULL;
		return nl ? (size_t)(nl - buf) + 1 : 0;
	}
	while (len - off >= 8) {
		memcpy(&type, buf + off, 4);
		memcpy(&blen, buf + off + 4, 4);
		if (blen < 12 || blen % 4)
			return SIZE_MAX;
		if (len - off < blen)
			break;
		if (type == PCAPNG_EPB)
			g->packets++;
		else if (type == PCAPNG_ISB)
			isb_lost(buf + off, blen, g);
		off += blen;
	}
	return off;
}

/* The answer's line, from @buf's first @len bytes: 0 after it was
 * "ok", else the exit status after one line. Its length in *@used. */
static int first_line(const char *from, const struct rr_ctlcmd *c, char *buf,
		      size_t len, size_t *used)
{
	struct json_object *a;
	char *nl = memchr(buf, '\n', len);
	bool ok;

	if (!nl)
		return -1;
	*nl = '\0';
	*used = (size_t)(nl - buf) + 1;
	a = ctl_parse(from, buf);
	if (!a)
		return 3;
	ok = ctl_done(c, a);
	if (!ok)
		ctl_show(c, a, NULL, 0);
	json_object_put(a);
	return ok ? 0 : 1;
}

int ctl_stream(int fd, const char *from, const struct rr_ctlcmd *c,
	       unsigned long timeout_s, FILE *out, const char *name)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct got g = { .pcap = rr_ctlcmd_id(c) == RR_CTL_CAPTURE };
	bool answered = false;
	size_t len = 0, n, used;
	int ret = 0, wait;
	uint8_t *buf;
	ssize_t r;

	buf = malloc(BUF_SIZE);
	if (!buf) {
		pr_warn("out of memory\n");
		return 1;
	}
	/* Ended by a signal: what has come whole is written, the instance
	 * ends the session when the connection closes. A reader that goes
	 * away is a write error, said once, not a SIGPIPE. */
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGPIPE, SIG_IGN);
	while (!stop) {
		wait = answered || !timeout_s ? 200 : (int)timeout_s * 1000;
		r = poll(&pfd, 1, wait);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 && !answered) {
			pr_warn("%s did not answer within %lu s\n", from,
				timeout_s);
			ret = 3;
			break;
		}
		if (r == 0)
			continue;
		r = read(fd, buf + len, BUF_SIZE - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (!answered) {
				pr_warn("%s closed without an answer\n", from);
				ret = 3;
			}
			break;
		}
		len += (size_t)r;
		if (!answered) {
			ret = first_line(from, c, (char *)buf, len, &used);
			if (ret < 0) {
				ret = 0;
				continue;
			}
			if (ret)
				break;
			answered = true;
			memmove(buf, buf + used, len - used);
			len -= used;
		}
		n = whole(buf, len, &g);
		if (n == SIZE_MAX) {
			pr_warn("%s: the instance's stream is no pcapng\n",
				c->name);
			ret = 1;
			break;
		}
		if (n && (fwrite(buf, 1, n, out) != n || fflush(out))) {
			pr_warn("%s: cannot write %s: %s\n", c->name, name,
				strerror(errno));
			ret = 1;
			break;
		}
		memmove(buf, buf + n, len - n);
		len -= n;
		if (len == BUF_SIZE) {
			pr_warn("%s: a block longer than %u bytes\n", c->name,
				BUF_SIZE);
			ret = 1;
			break;
		}
	}
	free(buf);
	if (answered && !ret && g.pcap)
		pr_warn("%s: %llu packets into %s, %llu lost\n", c->name,
			(unsigned long long)g.packets, name,
			(unsigned long long)g.lost);
	return ret;
}
