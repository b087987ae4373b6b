// SPDX-License-Identifier: GPL-2.0
/*
 * Target lists and addresses on the command line. sg_parse_targets() reads
 * reqrouter's own `[group NAME] targets =` syntax (rr_parse_targets()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "config.h"
#include "parse.h"
#include "sgbase.h"
#include "toolargs.h"

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v;

	if (rr_parse_ulong(s, 1, 65535, &v))
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int sg_port_option(const char *arg, uint16_t *port)
{
	if (parse_port(arg, port))
		return rr_opt_fail(SG_PROG, "--port takes 1-65535, not '%s'",
				   arg);
	return 0;
}

int sg_parse_targets(const char *spec, struct sockaddr_storage *out,
		     uint32_t max, uint32_t *n, char *err, size_t errlen)
{
	struct rr_endpoint *ep;
	uint32_t i;
	int ret;

	*n = 0;
	if (!spec || !*spec)
		return rr_errf(err, errlen, "no targets");
	ep = calloc(max, sizeof(*ep));
	if (!ep)
		return rr_errf(err, errlen, "out of memory");
	ret = rr_parse_targets(spec, ep, max, n, err, errlen);
	for (i = 0; !ret && i < *n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		if (ep[i].family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&out[i];

			a->sin6_family = AF_INET6;
			memcpy(&a->sin6_addr, ep[i].addr, 16);
			a->sin6_port = htons(ep[i].port);
		} else {
			struct sockaddr_in *a = (struct sockaddr_in *)&out[i];

			a->sin_family = AF_INET;
			memcpy(&a->sin_addr, ep[i].addr, 4);
			a->sin_port = htons(ep[i].port);
		}
	}
	free(ep);
	return ret;
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
