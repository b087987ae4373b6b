// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration's value parsers, shared by the INI file (config.c),
 * the settings table (settings.c) and the command line (options.c): CPU
 * and port lists, the enums' words, allow-lists, names, addresses and
 * system calls. Each writes one sentence into the caller's buffer on
 * error. Below the settings table: it calls nothing of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include "config.h"
#include "parse.h"
#include "util.h"

/* @s without the blanks around it, in place. */
static char *trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

/*
 * A list of numbers and ranges such as "0-3,6", each number below @limit
 * (blanks around each allowed):
 * @each is called with every number in turn, and may refuse one (saying
 * why in @err). @what names a number in an error ("a CPU"), @end a
 * range's end. Returns 0, -EINVAL with why in @err, or -ENOMEM.
 */
static int
parse_ranges(const char *s, uint32_t limit, const char *what, const char *end,
	     int (*each)(uint32_t v, void *arg, char *err, size_t errlen),
	     void *arg, char *err, size_t errlen)
{
	char *buf, *tok, *save, *dash;
	uint32_t lo, hi, v;
	int ret = -EINVAL;

	buf = strdup(s);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (rr_parse_u32(trim(tok), 0, limit - 1, &lo, what, err,
				 errlen))
			goto out;
		hi = lo;
		if (dash && rr_parse_u32(trim(dash + 1), lo, limit - 1, &hi,
					 end, err, errlen))
			goto out;
		for (v = lo; v <= hi; v++)
			if (each(v, arg, err, errlen))
				goto out;
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

static int add_worker(uint32_t t, void *arg, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*(uint32_t *)arg |= 1U << t;
	return 0;
}

/* A function's `workers`: a group of threads 0..RR_MAX_THREADS-1
 * (repeats allowed) per class, the groups separated by '|'. */
int rr_parse_workers(const char *s, uint32_t masks[RR_XDP_CLASSES], char *err,
		     size_t errlen)
{
	char group[RR_WORKERS_LEN], *bar;
	uint32_t k = 0, m;
	size_t len;
	int ret;

	memset(masks, 0, sizeof(uint32_t) * RR_XDP_CLASSES);
	if (!*s)
		return 0;
	for (;;) {
		bar = strchr(s, '|');
		len = bar ? (size_t)(bar - s) : strlen(s);
		if (k == RR_XDP_CLASSES)
			return rr_errf(err, errlen,
				       "more than %u groups in '%s'",
				       RR_XDP_CLASSES, s);
		if (len >= sizeof(group))
			return rr_errf(err, errlen, "a group too long in '%s'",
				       s);
		memcpy(group, s, len);
		group[len] = '\0';
		m = 0;
		ret = parse_ranges(group, RR_MAX_THREADS,
				   "a worker (a thread of each queue)",
				   "a worker range's end", add_worker, &m, err,
				   errlen);
		if (ret)
			return ret;
		if (!m)
			return rr_errf(err, errlen, "an empty group in '%s'",
				       s);
		masks[k++] = m;
		if (!bar)
			return 0;
		s = bar + 1;
	}
}

int rr_check_workers(const char *s, char *err, size_t errlen)
{
	uint32_t masks[RR_XDP_CLASSES];

	return rr_parse_workers(s, masks, err, errlen);
}

int rr_check_deadline(const char *s, char *err, size_t errlen)
{
	unsigned long v = strtoul(s, NULL, 10);

	if (v && v < RR_MIN_DEADLINE_US)
		return rr_errf(
			err, errlen,
			"deadline_us must be 0 (none) or %u-%u microseconds, not %lu",
			RR_MIN_DEADLINE_US, RR_MAX_DEADLINE_US, v);
	return 0;
}

struct cpu_list {
	int *cpus;
	uint32_t n;
};

static int add_cpu(uint32_t c, void *arg, char *err, size_t errlen)
{
	struct cpu_list *l = arg;
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (l->cpus[i] == (int)c)
			return rr_errf(err, errlen, "CPU %u is listed twice",
				       c);
	l->cpus[l->n++] = (int)c;
	return 0;
}

/* "0-3,6": ranges and single CPUs, each below RR_MAX_CPUS, no repeats. */
int rr_parse_cpus(const char *s, int *cpus, uint32_t *ncpus, char *err,
		  size_t errlen)
{
	struct cpu_list l = { .cpus = cpus };
	int ret;

	if (!*s)
		return rr_errf(err, errlen, "empty CPU list");
	ret = parse_ranges(s, RR_MAX_CPUS, "a CPU", "a CPU range's end",
			   add_cpu, &l, err, errlen);
	if (ret)
		return ret;
	if (!l.n)
		return rr_errf(err, errlen, "bad CPU list '%s'", s);
	*ncpus = l.n;
	return 0;
}

/* A function's `xdp_spread`: a CPU list of at most RR_MAX_SPREAD. */
int rr_parse_spread(const char *s, int cpus[RR_MAX_SPREAD], uint32_t *n,
		    char *err, size_t errlen)
{
	int all[RR_MAX_CPUS];
	uint32_t count = 0;
	int ret;

	ret = rr_parse_cpus(s, all, &count, err, errlen);
	if (ret)
		return ret;
	if (count > RR_MAX_SPREAD)
		return rr_errf(err, errlen, "%u CPUs in '%s': at most %u",
			       count, s, RR_MAX_SPREAD);
	memcpy(cpus, all, sizeof(int) * count);
	*n = count;
	return 0;
}

int rr_check_spread(const char *s, char *err, size_t errlen)
{
	int cpus[RR_MAX_SPREAD];
	uint32_t n;

	return rr_parse_spread(s, cpus, &n, err, errlen);
}

int rr_parse_canary_share(const char *arg, unsigned int *permille, char *err,
			  size_t errlen)
{
	unsigned int whole = 0, tenth = 0, digits = 0;
	const char *p = arg;

	for (; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
		whole = whole * 10 + (unsigned int)(*p - '0');
	if (digits && *p == '.' && p[1] >= '0' && p[1] <= '9') {
		tenth = (unsigned int)(p[1] - '0');
		p += 2;
	}
	*permille = whole * 10 + tenth;
	if (digits && !*p && *permille >= 10 && *permille <= 990)
		return 0;
	return rr_errf(
		err, errlen,
		"a canary's share is a percentage of the sources, 1 to 99 with one decimal at most (5, 12.5), not '%.32s'",
		arg);
}

int rr_parse_canary(const char *s, char *path, size_t pathlen,
		    unsigned int *permille, char *err, size_t errlen)
{
	const char *sp = strrchr(s, ' ');

	if (!sp || s[0] != '/' || (size_t)(sp - s) >= pathlen)
		return rr_errf(
			err, errlen,
			"canary takes PATH PERCENT: a module's absolute path and the percentage of the sources, not '%.64s'",
			s);
	snprintf(path, pathlen, "%.*s", (int)(sp - s), s);
	return rr_parse_canary_share(sp + 1, permille, err, errlen);
}

int rr_check_canary(const char *s, char *err, size_t errlen)
{
	char path[RR_CANARY_LEN];
	unsigned int permille;

	return rr_parse_canary(s, path, sizeof(path), &permille, err, errlen);
}

int rr_parse_canary_rollback(const char *s, uint32_t *mask, char *err,
			     size_t errlen)
{
	static const char *const words[] = { "faults", "errors", "p99" };
	char buf[RR_CANARY_ROLLBACK_LEN], *tok, *save;
	size_t i;

	*mask = 0;
	if (!*s) {
		*mask = RR_CANARY_FAULTS | RR_CANARY_ERRORS | RR_CANARY_P99;
		return 0;
	}
	if (!strcmp(s, "none"))
		return 0;
	if (strlen(s) >= sizeof(buf))
		return rr_errf(err, errlen, "bad canary_rollback '%s'", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ", ", &save); tok;
	     tok = strtok_r(NULL, ", ", &save)) {
		for (i = 0; i < ARRAY_SIZE(words) && strcmp(tok, words[i]); i++)
			;
		if (i == ARRAY_SIZE(words))
			return rr_errf(
				err, errlen,
				"canary_rollback takes none, or faults, errors and p99 separated by commas, not '%s'",
				tok);
		*mask |= 1U << i;
	}
	return 0;
}

int rr_check_canary_rollback(const char *s, char *err, size_t errlen)
{
	uint32_t mask;

	return rr_parse_canary_rollback(s, &mask, err, errlen);
}

int rr_parse_ports(const char *s, uint16_t *ports, uint32_t max,
		   uint32_t *nports, char *err, size_t errlen)
{
	char buf[512], *tok, *save;
	uint32_t port, n = 0, i;

	if (strlen(s) >= sizeof(buf) || !*s)
		return rr_errf(err, errlen, "bad port list '%s'", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (rr_parse_u32(tok, 1, 65535, &port, "a port", err, errlen))
			return -EINVAL;
		for (i = 0; i < n; i++) {
			if (ports[i] == port)
				return rr_errf(err, errlen,
					       "port %u is listed twice", port);
		}
		if (n == max)
			return rr_errf(err, errlen,
				       "at most %u ports may be listed", max);
		ports[n++] = (uint16_t)port;
	}
	if (!n)
		return rr_errf(err, errlen, "bad port list '%s'", s);
	*nports = n;
	return 0;
}

int rr_parse_vlans(const char *s, struct rr_vlans *v, const char *what,
		   char *err, size_t errlen)
{
	char buf[512], *tok, *save, *dash;
	uint32_t lo, hi, id;
	bool host = false;

	memset(v, 0, sizeof(*v));
	if (strlen(s) >= sizeof(buf) || !*s)
		return rr_errf(err, errlen,
			       "%s: host, any, or VLAN IDs, not '%s'", what, s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		if (!strcmp(tok, "host")) {
			host = true;
			continue;
		}
		if (!strcmp(tok, "any")) {
			v->any = true;
			continue;
		}
		dash = strchr(tok, '-');
		if (dash)
			*dash++ = '\0';
		if (rr_parse_u32(tok, 1, 4094, &lo, "a VLAN ID", err, errlen) ||
		    (dash &&
		     rr_parse_u32(dash, lo, 4094, &hi,
				  "the end of a VLAN ID range", err, errlen)))
			return -EINVAL;
		if (!dash)
			hi = lo;
		for (id = lo; id <= hi; id++)
			v->ids[id / 64] |= 1ULL << (id % 64);
		v->no_host = true;
	}
	if (v->any && (host || v->no_host))
		return rr_errf(err, errlen,
			       "%s: any answers every tag, alone or not at all",
			       what);
	if (!v->any && !host && !v->no_host)
		return rr_errf(err, errlen,
			       "%s: host, any, or VLAN IDs, not '%s'", what, s);
	if (host)
		v->no_host = false;
	return 0;
}

/* The words of each enum, in its order: the settings table's values
 * (settings.c), and what the tools and metrics print. */
const char *const rr_mode_names[] = {
	[RR_MODE_AUTO] = "auto",
	[RR_MODE_NATIVE] = "native",
	[RR_MODE_SKB] = "skb",
	NULL,
};

const char *const rr_tier_names[] = {
	[RR_TIER_AUTO] = "auto",
	[RR_TIER_XDP] = "xdp",
	[RR_TIER_USER] = "user",
	NULL,
};

const char *const rr_tx_csum_names[] = {
	[RR_TX_CSUM_AUTO] = "auto",
	[RR_TX_CSUM_SOFT] = "soft",
	[RR_TX_CSUM_OFFLOAD] = "offload",
	NULL,
};

const char *const rr_scatter_names[] = {
	[RR_SCATTER_TC] = "tc",
	[RR_SCATTER_SOCKET] = "socket",
	[RR_SCATTER_UMEM] = "umem",
	NULL,
};

const char *const rr_isolation_names[] = {
	[RR_ISOLATION_THREAD] = "thread",
	[RR_ISOLATION_CELL] = "cell",
	NULL,
};

const char *const rr_worker_priority_names[] = {
	[RR_PRIORITY_REALTIME] = "realtime",
	[RR_PRIORITY_NORMAL] = "normal",
	[RR_PRIORITY_AUTO] = "auto",
	NULL,
};

const char *const rr_answer_for_names[] = {
	[RR_ANSWER_LOCAL] = "local",
	[RR_ANSWER_ANY] = "any",
	NULL,
};

const char *const rr_quarantine_action_names[] = { "drop", "pass", NULL };

const char *const rr_own_cells_names[] = {
	[RR_OWN_CELLS_AUTO] = "auto",
	[RR_OWN_CELLS_YES] = "yes",
	[RR_OWN_CELLS_NO] = "no",
	NULL,
};

const char *const rr_rl_mode_names[] = {
	[RR_RL_MODE_DROP] = "drop",
	[RR_RL_MODE_LOG] = "log",
	NULL,
};

const char *const rr_steering_names[] = {
	[RR_STEER_ROUND_ROBIN] = "round_robin",
	[RR_STEER_LEAST_LOADED] = "least_loaded",
	[RR_STEER_GROUPS] = "groups",
	NULL,
};

int rr_parse_mode(const char *s, enum rr_xdp_mode *mode, char *err,
		  size_t errlen)
{
	int i = rr_parse_enum(rr_mode_names, s, "mode", err, errlen);

	if (i < 0)
		return i;
	*mode = (enum rr_xdp_mode)i;
	return 0;
}

int rr_parse_tier(const char *s, enum rr_tier *tier, char *err, size_t errlen)
{
	int i = rr_parse_enum(rr_tier_names, s, "tier", err, errlen);

	if (i < 0)
		return i;
	*tier = (enum rr_tier)i;
	return 0;
}

int rr_parse_tx_csum(const char *s, enum rr_tx_csum *csum, char *err,
		     size_t errlen)
{
	int i = rr_parse_enum(rr_tx_csum_names, s, "tx-csum", err, errlen);

	if (i < 0)
		return i;
	*csum = (enum rr_tx_csum)i;
	return 0;
}

int rr_parse_isolation(const char *s, enum rr_isolation *iso, char *err,
		       size_t errlen)
{
	int i = rr_parse_enum(rr_isolation_names, s, "isolation", err, errlen);

	if (i < 0)
		return i;
	*iso = (enum rr_isolation)i;
	return 0;
}

int rr_parse_cidrs(const char *s, struct rr_cidr *out, uint32_t max,
		   uint32_t *n, char *err, size_t errlen)
{
	char buf[4096], *tok, *save, *slash;
	uint32_t len, count = *n, maxlen;
	struct rr_cidr c;
	int i;

	if (strlen(s) >= sizeof(buf))
		return rr_errf(err, errlen, "allow-list is too long");
	strcpy(buf, s);
	for (tok = strtok_r(buf, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		memset(&c, 0, sizeof(c));
		slash = strchr(tok, '/');
		if (slash)
			*slash = '\0';
		if (inet_pton(AF_INET, tok, c.addr) == 1) {
			c.family = AF_INET;
			maxlen = 32;
		} else if (inet_pton(AF_INET6, tok, c.addr) == 1) {
			c.family = AF_INET6;
			maxlen = 128;
		} else {
			return rr_errf(err, errlen,
				       "'%s' is not an IPv4 or IPv6 address",
				       tok);
		}
		len = maxlen;
		if (slash && rr_parse_u32(slash + 1, 0, maxlen, &len,
					  "a prefix length", err, errlen))
			return -EINVAL;
		c.len = (uint8_t)len;
		/* Host bits set would never match as written: refuse them. */
		for (i = 0; i < 16; i++) {
			int keep = (int)len - i * 8;
			uint8_t mask = keep >= 8 ? 0xff
				       : keep <= 0
					       ? 0
					       : (uint8_t)(0xff << (8 - keep));

			if (c.addr[i] & ~mask)
				return rr_errf(err, errlen,
					       "%s/%u has host bits set", tok,
					       len);
		}
		if (count >= max)
			return rr_errf(err, errlen,
				       "at most %u prefixes per allow-list",
				       max);
		out[count++] = c;
	}
	if (count == *n)
		return rr_errf(err, errlen, "empty allow-list");
	*n = count;
	return 0;
}

int rr_check_ifname(const char *s, char *err, size_t errlen)
{
	if (!*s || strlen(s) >= IF_NAMESIZE || strchr(s, '/'))
		return rr_errf(err, errlen,
			       "'%s' is not a valid interface name", s);
	return 0;
}

int rr_check_control(const char *s, char *err, size_t errlen)
{
	size_t room = sizeof(((struct rr_config *)0)->control);

	if (!*s || strlen(s) >= room || (strcmp(s, "none") && s[0] != '/'))
		return rr_errf(
			err, errlen,
			"control socket '%s' must be an absolute path shorter than %zu bytes, or none",
			s, room);
	return 0;
}

int rr_parse_listen(const char *s, struct sockaddr_storage *sa,
		    socklen_t *salen, char *err, size_t errlen)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
	struct sockaddr_in *in = (struct sockaddr_in *)sa;
	const char *colon = strrchr(s, ':');
	char addr[INET6_ADDRSTRLEN + 2];
	unsigned long port;
	size_t alen;

	memset(sa, 0, sizeof(*sa));
	if (!colon || rr_parse_ulong(colon + 1, 1, 65535, &port))
		goto bad;
	alen = (size_t)(colon - s);
	if (alen >= sizeof(addr))
		goto bad;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (alen > 2 && addr[0] == '[' && addr[alen - 1] == ']') {
		addr[alen - 1] = '\0';
		if (inet_pton(AF_INET6, addr + 1, &in6->sin6_addr) != 1)
			goto bad;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*salen = sizeof(*in6);
		return 0;
	}
	if (inet_pton(AF_INET, addr, &in->sin_addr) != 1)
		goto bad;
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	*salen = sizeof(*in);
	return 0;
bad:
	return rr_errf(
		err, errlen,
		"bad metrics listen address '%s': want IPv4:PORT or [IPv6]:PORT, e.g. 127.0.0.1:9464",
		s);
}

int rr_check_listen(const char *s, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t salen;

	return rr_parse_listen(s, &sa, &salen, err, errlen);
}

/* One target, @tok: ADDR:PORT, [ADDR6]:PORT or FIRST-LAST:PORT. */
static int parse_target(const char *tok, struct rr_endpoint *out, uint32_t max,
			uint32_t *n, char *err, size_t errlen)
{
	char addr[INET6_ADDRSTRLEN + 2], *colon, *dash;
	struct rr_endpoint ep = { 0 };
	struct in_addr a, b;
	uint32_t port, first, last, i;
	size_t alen;

	colon = strrchr(tok, ':');
	if (!colon || colon == tok)
		return rr_errf(
			err, errlen,
			"target '%s': want ADDR:PORT, [ADDR6]:PORT or FIRST-LAST:PORT",
			tok);
	if (rr_parse_u32(colon + 1, 1, 65535, &port, "port", err, errlen))
		return -EINVAL;
	alen = (size_t)(colon - tok);
	if (tok[0] == '[') {
		if (alen < 3 || tok[alen - 1] != ']' ||
		    alen - 2 >= sizeof(addr))
			return rr_errf(err, errlen, "target '%s': bad address",
				       tok);
		memcpy(addr, tok + 1, alen - 2);
		addr[alen - 2] = '\0';
		if (inet_pton(AF_INET6, addr, ep.addr) != 1)
			return rr_errf(err, errlen,
				       "target '%s': bad IPv6 address", tok);
		ep.family = AF_INET6;
		ep.port = (uint16_t)port;
		if (*n >= max)
			goto full;
		out[(*n)++] = ep;
		return 0;
	}
	if (alen >= sizeof(addr))
		return rr_errf(err, errlen, "target '%s': bad address", tok);
	memcpy(addr, tok, alen);
	addr[alen] = '\0';
	dash = strchr(addr, '-');
	if (dash)
		*dash++ = '\0';
	if (inet_pton(AF_INET, addr, &a) != 1 ||
	    (dash && inet_pton(AF_INET, dash, &b) != 1))
		return rr_errf(
			err, errlen,
			"target '%s': bad IPv4 address (an IPv6 one goes in brackets)",
			tok);
	first = ntohl(a.s_addr);
	last = dash ? ntohl(b.s_addr) : first;
	if (last < first)
		return rr_errf(err, errlen,
			       "target '%s': the range ends before it starts",
			       tok);
	if (last - first >= max - *n)
		goto full;
	for (i = first;; i++) {
		ep.family = AF_INET;
		ep.port = (uint16_t)port;
		a.s_addr = htonl(i);
		memcpy(ep.addr, &a, 4);
		out[(*n)++] = ep;
		if (i == last)
			break;
	}
	return 0;
full:
	return rr_errf(err, errlen, "target '%s': a group holds at most %u",
		       tok, max);
}

int rr_parse_targets(const char *s, struct rr_endpoint *out, uint32_t max,
		     uint32_t *n, char *err, size_t errlen)
{
	char tok[128];
	size_t len;

	for (;;) {
		s += strspn(s, ", \t");
		if (!*s)
			return 0;
		len = strcspn(s, ", \t");
		if (len >= sizeof(tok))
			return rr_errf(err, errlen,
				       "target '%.*s...': too long", 32, s);
		memcpy(tok, s, len);
		tok[len] = '\0';
		if (parse_target(tok, out, max, n, err, errlen))
			return -EINVAL;
		s += len;
	}
}

/*
 * Defined by reqrouter, which confines cells (src/daemon/core/seccomp.c, with
 * libseccomp): the number of system call @name on this machine, -ENOENT
 * if no system call has that name, -ENOSYS if this machine has none of
 * it. A weak reference, so that reqrouterctl and the tools, which read
 * the same config but confine nothing, need not link libseccomp.
 */
extern int rr_seccomp_syscall_nr(const char *name) __attribute__((weak));

int rr_check_syscalls(const char *s, char *err, size_t errlen)
{
	char name[64];
	size_t len;
	int nr;

	for (s += strspn(s, " \t"); *s; s += strspn(s, " \t")) {
		len = strcspn(s, " \t");
		if (len >= sizeof(name) ||
		    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") != len)
			return rr_errf(
				err, errlen,
				"syscalls: '%.*s' is not a system call name",
				(int)len, s);
		memcpy(name, s, len);
		name[len] = '\0';
		s += len;
		if (!rr_seccomp_syscall_nr)
			continue;
		nr = rr_seccomp_syscall_nr(name);
		if (nr == -ENOENT)
			return rr_errf(err, errlen,
				       "syscalls: no system call is named '%s'",
				       name);
		if (nr < 0)
			return rr_errf(
				err, errlen,
				"syscalls: '%s' is not a system call of this machine",
				name);
	}
	return 0;
}

int rr_cookie_secret_read(const char *path, uint8_t *out, char *err,
			  size_t errlen)
{
	char text[128], *p;
	size_t n = 0, i;
	int e = 0;
	FILE *f;

	/* A directory opens, and fails at the read. */
	f = fopen(path, "re");
	if (f) {
		n = fread(text, 1, sizeof(text) - 1, f);
		e = ferror(f) ? errno : 0;
		fclose(f);
	} else {
		e = errno;
	}
	if (e) {
		rr_errf(err, errlen, "cookie_secret: cannot read %s: %s", path,
			strerror(e));
		return -e;
	}
	text[n] = '\0';
	p = text + strspn(text, " \t\r\n");
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	n = strspn(p, "0123456789abcdefABCDEF");
	if (n != 2 * 16 || p[n + strspn(p + n, " \t\r\n")])
		return rr_errf(
			err, errlen,
			"cookie_secret: %s must hold a 16-byte secret as 32 hex digits (docs/OPERATIONS.md, \"DNS Cookies\", makes one)",
			path);
	for (i = 0; i < 16; i++) {
		char byte[3] = { p[2 * i], p[2 * i + 1], '\0' };

		out[i] = (uint8_t)strtoul(byte, NULL, 16);
	}
	return 0;
}

int rr_check_cookie_secret(const char *s, char *err, size_t errlen)
{
	uint8_t secret[16];

	return rr_cookie_secret_read(s, secret, err, errlen) ? -EINVAL : 0;
}
