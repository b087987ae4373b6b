// SPDX-License-Identifier: GPL-2.0
/*
 * Target lists and addresses on the command line. sg_parse_targets() takes
 * the syntax reqrouter's `[group NAME] targets =` will: kept apart, with
 * no state, so that it can move into src/lib unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "parse.h"
#include "sgbase.h"

/* The longest entry: "[" an IPv6 address "]:" a port, or two IPv4 ones. */
#define ENTRY_MAX (INET6_ADDRSTRLEN + 16)

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v;

	if (rr_parse_ulong(s, 1, 65535, &v))
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

static void set_v4(struct sockaddr_storage *sa, uint32_t host_order,
		   uint16_t port)
{
	struct sockaddr_in *a = (struct sockaddr_in *)sa;

	memset(sa, 0, sizeof(*sa));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(host_order);
	a->sin_port = htons(port);
}

/* One entry, NUL-terminated in @e (which it may write into). */
static int parse_entry(char *e, struct sockaddr_storage *out, uint32_t max,
		       uint32_t *n, char *err, size_t errlen)
{
	struct in_addr first, last;
	char *colon, *dash;
	uint32_t lo, hi;
	uint64_t count;
	uint16_t port;

	if (e[0] == '[') {
		struct sockaddr_in6 *a;
		char *close = strchr(e, ']');

		if (!close || close[1] != ':')
			return rr_errf(err, errlen,
				       "'%s': an IPv6 target is [ADDR]:PORT",
				       e);
		*close = '\0';
		if (strchr(e + 1, '-'))
			return rr_errf(
				err, errlen,
				"'%s]': IPv6 ranges are not supported; list the targets",
				e);
		if (parse_port(close + 2, &port))
			return rr_errf(err, errlen,
				       "'%s]:%s': the port must be 1-65535", e,
				       close + 2);
		if (*n >= max)
			return rr_errf(err, errlen, "more than %u targets",
				       max);
		a = (struct sockaddr_in6 *)&out[*n];
		memset(&out[*n], 0, sizeof(out[*n]));
		if (inet_pton(AF_INET6, e + 1, &a->sin6_addr) != 1)
			return rr_errf(err, errlen, "'%s': not an IPv6 address",
				       e + 1);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		(*n)++;
		return 0;
	}
	colon = strrchr(e, ':');
	if (!colon)
		return rr_errf(
			err, errlen,
			"'%s': a target is ADDR:PORT, FIRST-LAST:PORT or [IPv6]:PORT",
			e);
	*colon = '\0';
	if (strchr(e, ':'))
		return rr_errf(
			err, errlen,
			"'%s': an IPv6 target needs brackets, [ADDR]:PORT", e);
	if (parse_port(colon + 1, &port))
		return rr_errf(err, errlen, "'%s:%s': the port must be 1-65535",
			       e, colon + 1);
	dash = strchr(e, '-');
	if (dash)
		*dash = '\0';
	if (inet_pton(AF_INET, e, &first) != 1)
		return rr_errf(err, errlen, "'%s': not an IPv4 address", e);
	last = first;
	if (dash && inet_pton(AF_INET, dash + 1, &last) != 1)
		return rr_errf(err, errlen, "'%s': not an IPv4 address",
			       dash + 1);
	lo = ntohl(first.s_addr);
	hi = ntohl(last.s_addr);
	if (hi < lo)
		return rr_errf(err, errlen,
			       "'%s-%s': the range ends before it starts", e,
			       dash + 1);
	count = (uint64_t)hi - lo + 1;
	if (count > max - *n)
		return rr_errf(err, errlen, "more than %u targets", max);
	for (uint64_t i = 0; i < count; i++)
		set_v4(&out[(*n)++], lo + (uint32_t)i, port);
	return 0;
}

int sg_parse_targets(const char *spec, struct sockaddr_storage *out,
		     uint32_t max, uint32_t *n, char *err, size_t errlen)
{
	const char *p = spec, *end;
	char e[ENTRY_MAX + 1];
	size_t len;
	int ret;

	*n = 0;
	if (!spec || !*spec)
		return rr_errf(err, errlen, "no targets");
	for (;;) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		/* Spaces around an entry, as a config line would have. */
		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (!len)
			return rr_errf(err, errlen, "an empty entry in '%s'",
				       spec);
		if (len > ENTRY_MAX)
			return rr_errf(err, errlen, "'%.*s...': not a target",
				       ENTRY_MAX, p);
		memcpy(e, p, len);
		e[len] = '\0';
		ret = parse_entry(e, out, max, n, err, errlen);
		if (ret)
			return ret;
		if (!end)
			return 0;
		p = end + 1;
	}
}

int sg_parse_addr(const char *s, uint16_t port, struct sockaddr_storage *sa,
		  socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;

	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
	return -EINVAL;
}

int sg_parse_hostport(const char *s, struct sockaddr_storage *sa,
		      socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *h = s;
	size_t hl;
	uint16_t port;

	colon = strrchr(s, ':');
	if (!colon || parse_port(colon + 1, &port))
		return -EINVAL;
	hl = (size_t)(colon - s);
	if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
		h = s + 1;
		hl -= 2;
	} else if (memchr(s, ':', hl)) {
		return -EINVAL; /* IPv6 without brackets */
	}
	if (!hl || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	return sg_parse_addr(host, port, sa, len);
}

void sg_sockaddr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(s->sin_port));
	} else {
		const struct sockaddr_in6 *s = (const void *)sa;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(s->sin6_port));
	}
}
