// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouterctl: talks to a running reqrouter through its control socket.
 * Sends one command, prints the JSON answer as it is (--json) or as a
 * few lines for a human; stats --watch asks again every few seconds, and
 * top does at a terminal.
 * Exit status: 0 done (health: ready), 1 the instance refused or is not
 * ready, 2 usage, 3 no instance to talk to. conf-check talks to no
 * instance: it runs reqrouter --check, whose exit status it has.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctlcmd.h"
#include "log.h"
#include "opttable.h"
#include "util.h"

#define REPLY_MAX (1 << 20)
#define TIMEOUT_MS 10000
/* A reload's answer comes once its functions' init() calls are done: a
 * large zone can take a while. */
#define RELOAD_TIMEOUT_MS 600000
#define CMD_COLUMN 26 /* where a command's help starts, as an option's does */

#define WATCH_DEFAULT_S 2 /* watch(1)'s */
#define WATCH_MAX_S 3600

/* The command reqrouterctl runs itself, with no instance. */
#define CONF_CHECK "conf-check"

enum { OPT_JSON = 256, OPT_TIMEOUT, OPT_QUIET, OPT_WATCH };

static const struct rr_opt opts[] = {
	{ "control", 'c', "PATH",
	  "the instance's control socket (default: the only one in " RR_CONTROL_DIR
	  " that answers)" },
	{ "socket", 's', "PATH", "the same as --control (knotc's habit)" },
	{ "json", OPT_JSON, NULL, "print the instance's JSON answer as it is" },
	{ "timeout", OPT_TIMEOUT, "SECS",
	  "drain: stop after SECS at the latest (default " STR(
		  RR_DRAIN_TIMEOUT_S) ")" },
	{ "quiet", OPT_QUIET, "SECS",
	  "drain: stop once no request came for SECS (default " STR(
		  RR_DRAIN_QUIET_S) ")" },
	{ "watch", OPT_WATCH, NULL,
	  "stats, top: ask again every SECONDS, the number after the command (default " STR(
		  WATCH_DEFAULT_S) "), until interrupted; top does at a terminal" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ 0 },
};

#define SYNOPSIS "reqrouterctl [--control PATH] [--json] COMMAND [ARG]"

/*
 * The text between the synopsis and the options: the commands, from the
 * table, those that only read apart from those that change the instance.
 * The bash completion and docs/OPERATIONS.md take the command list from
 * here.
 */
static const char *about(void)
{
	static char text[2048];
	FILE *f = fmemopen(text, sizeof(text), "w");
	size_t n;
	int m, i;

	if (!f)
		return "";
	fprintf(f,
		"Send one COMMAND to a running reqrouter through its control socket.\n");
	for (m = 0; m < 2; m++) {
		fprintf(f, "\n%s\n",
			m ? "Commands that change the instance:"
			  : "Commands that only read:");
		for (i = 0; i < RR_CTL_NCMDS; i++) {
			const struct rr_ctlcmd *c = &rr_ctlcmds[i];
			char left[64];

			if (c->mutating != m)
				continue;
			snprintf(left, sizeof(left), "%s%s%s", c->name,
				 rr_ctlcmd_user_args(c) ? " " : "",
				 rr_ctlcmd_user_args(c) ? c->args : "");
			fprintf(f, "  %-*s  %s\n", CMD_COLUMN, left, c->help);
		}
	}
	fprintf(f, "\nCommands run here, with no instance:\n  %-*s  %s\n",
		CMD_COLUMN, CONF_CHECK " [ARG...]",
		"reqrouter --check ARG...: check a configuration (-c FILE) as a start would");
	fclose(f);
	n = strlen(text);
	if (n && text[n - 1] == '\n')
		text[n - 1] = '\0'; /* the usage adds the blank line */
	return text;
}

/*
 * Whether an instance listens at @path: false only when nobody does (the
 * file of an instance that died: connect() is refused). A socket we may
 * not use, or one too busy to take the call, counts as an instance.
 */
static bool listened(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err = 0;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = errno;
	close(fd);
	return err != ECONNREFUSED && err != ENOENT;
}

/*
 * The one socket in the default directory that an instance listens on,
 * or why there is none. Socket files nobody listens on are skipped, and
 * named in one line.
 */
#define STALE_NAMED 3

static int find_socket(char *path, size_t len)
{
	char file[sizeof(((struct sockaddr_un *)0)->sun_path)], stale[512] = "";
	size_t nstale = 0, at = 0;
	struct dirent *e;
	int found = 0;
	DIR *d;

	d = opendir(RR_CONTROL_DIR);
	if (!d) {
		pr_warn("no reqrouter is running here (%s: %s)\n",
			RR_CONTROL_DIR, strerror(errno));
		return -ENOENT;
	}
	while ((e = readdir(d)) && found < 2) {
		size_t n = strlen(e->d_name);

		if (n < 6 || strcmp(e->d_name + n - 5, ".sock"))
			continue;
		/* Longer, and no socket could be reached by it. */
		if (snprintf(file, sizeof(file), "%s/%s", RR_CONTROL_DIR,
			     e->d_name) >= (int)sizeof(file))
			continue;
		if (!listened(file)) {
			/* The first few by name, the rest counted. */
			if (nstale < STALE_NAMED && at < sizeof(stale))
				at += (size_t)snprintf(
					stale + at, sizeof(stale) - at, "%s%s",
					nstale ? ", " : "", file);
			nstale++;
			continue;
		}
		if (!found++)
			snprintf(path, len, "%s", file);
	}
	closedir(d);
	if (nstale > STALE_NAMED)
		pr_warn("skipped %s and %zu more: nobody listens (left by instances that died)\n",
			stale, nstale - STALE_NAMED);
	else if (nstale)
		pr_warn("skipped %s: nobody listens (left by an instance that died)\n",
			stale);
	if (found == 1)
		return 0;
	pr_warn(found ? "several instances run here; say which with --control %s/IFACE.sock\n"
		      : "no reqrouter is running here (no socket in %s that answers)\n",
		RR_CONTROL_DIR);
	return -ENOENT;
}

/* Sends @cmd to @path; the reply (NUL-terminated) in *out, or none
 * within @timeout_ms of silence. */
static int ask(const char *path, const char *cmd, int timeout_ms, char **out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd pfd = { .events = POLLIN };
	size_t n = 0;
	char *buf;
	ssize_t r;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		pr_warn("socket path too long: %s\n", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		pr_warn("cannot reach %s: %s%s\n", path, strerror(err),
			err == ENOENT || err == ECONNREFUSED
				? " (is reqrouter running on that interface?)"
			: err == EACCES ? " (root or the control group only)"
					: "");
		if (fd >= 0)
			close(fd);
		return -err;
	}
	if (dprintf(fd, "%s\n", cmd) < 0) {
		pr_warn("cannot send to %s: %s\n", path, strerror(errno));
		close(fd);
		return -EIO;
	}
	buf = malloc(REPLY_MAX + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	pfd.fd = fd;
	while (n < REPLY_MAX) {
		if (poll(&pfd, 1, timeout_ms) <= 0) {
			pr_warn("%s did not answer within %d s\n", path,
				timeout_ms / 1000);
			free(buf);
			close(fd);
			return -ETIMEDOUT;
		}
		r = read(fd, buf + n, REPLY_MAX - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (!n) {
		pr_warn("%s closed without an answer\n", path);
		free(buf);
		return -EIO;
	}
	*out = buf;
	return 0;
}

/* True once nothing answers at @path any more. */
static bool gone(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool up;

	if (fd < 0)
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	up = !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return !up;
}

/* After "drain": until the instance has exited, or a little past its own
 * timeout. */
static int wait_gone(const char *path, unsigned long timeout)
{
	struct timespec tick = { 0, 100000000L };
	unsigned long i;

	for (i = 0; i < (timeout + 5) * 10; i++) {
		if (gone(path)) {
			printf("drained and stopped\n");
			return 0;
		}
		nanosleep(&tick, NULL);
	}
	pr_warn("drain: the instance is still running after %lu s\n",
		timeout + 5);
	return 1;
}

/*
 * The value of "key" in a flat stretch of the reply, as text (a string's
 * contents unescaped only for \" and \\, a number or true/false as is).
 * Good enough for our own replies; --json is the interface for programs.
 */
static bool field(const char *json, const char *key, char *val, size_t len)
{
	char pat[64];
	const char *p;
	size_t i = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (!p)
		return false;
	p += strlen(pat);
	if (*p == '"') {
		for (p++; *p && *p != '"' && i + 1 < len; p++) {
			if (*p == '\\' && p[1])
				p++;
			val[i++] = *p;
		}
	} else {
		while (*p && !strchr(",}]", *p) && i + 1 < len)
			val[i++] = *p++;
	}
	val[i] = '\0';
	return true;
}

static void print_status(const char *json)
{
	static const char *const keys[] = { "interface",
					    "ready",
					    "why",
					    "xdp_mode",
					    "zerocopy",
					    "queues",
					    "threads",
					    "busy_poll",
					    "isolation",
					    "tx_csum",
					    "uptime_s",
					    "reloading",
					    "max_stall_s",
					    "pid",
					    "version",
					    "veth_peer",
					    "worker_priority",
					    "coalesce_us",
					    "mtu",
					    "mac",
					    "rx_queues",
					    "link_up",
					    "restart_needed",
					    NULL };
	const char *p = strstr(json, "\"functions\":[");
	char val[256];
	int i;

	for (i = 0; keys[i]; i++)
		if (field(json, keys[i], val, sizeof(val)))
			printf("%-10s %s\n", keys[i], val);
	printf("%-16s %-6s %-5s %-7s %-9s %-5s %-9s %s\n", "function", "port",
	       "tier", "cached", "in_kernel", "pure", "stateful", "from");
	while (p && (p = strstr(p, "{\"name\":"))) {
		char name[64], port[8], tier[8], cached[8], pure[8], st[8];
		char mod[256], removed[8], quar[8], ink[8] = "-";

		field(p, "name", name, sizeof(name));
		field(p, "port", port, sizeof(port));
		field(p, "tier", tier, sizeof(tier));
		field(p, "cached", cached, sizeof(cached));
		/* In XDP now: not while a veth's peer would lose the
		 * replies (veth_peer above). */
		field(p, "in_kernel", ink, sizeof(ink));
		field(p, "pure", pure, sizeof(pure));
		field(p, "stateful", st, sizeof(st));
		if (!field(p, "module", mod, sizeof(mod)) ||
		    !strcmp(mod, "null"))
			strcpy(mod, "built in");
		field(p, "removed", removed, sizeof(removed));
		field(p, "quarantined", quar, sizeof(quar));
		printf("%-16s %-6s %-5s %-7s %-9s %-5s %-9s %s%s%s\n", name,
		       port, tier, cached, ink, pure, st, mod,
		       strcmp(removed, "true") ? "" : " (removed)",
		       strcmp(quar, "true") ? "" : " (quarantined)");
		p++;
	}
}

/*
 * A reader of the instance's JSON for the human output of stats, which
 * has nested objects and arrays: walks the members of one object or the
 * elements of one array. Our own replies only; --json is the interface
 * for programs.
 */
struct jwalk {
	const char *p; /* at the container's '{' or '[', then at a ',' */
	bool object;
};

static const char *ws(const char *p)
{
	return p + strspn(p, " \t\r\n");
}

/* Just past the value at @p: a string, a number, a literal, or a whole
 * object or array; at the NUL if it is cut short. */
static const char *skip_value(const char *p)
{
	bool in_str = false;
	int depth = 0;

	for (; *p; p++) {
		if (in_str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"' && (in_str = false, !depth))
				return p + 1;
			continue;
		}
		if (*p == '"') {
			in_str = true;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (!depth)
				return p; /* a scalar, last in its container */
			if (!--depth)
				return p + 1;
		} else if (*p == ',' && !depth) {
			return p;
		}
	}
	return p;
}

/* The string at @p into @buf (\" and \\ unescaped, \uXXXX as '?');
 * returns the place just past it. */
static const char *json_str(const char *p, char *buf, size_t len)
{
	size_t i = 0;

	for (p++; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			if (*p == 'u') {
				p += strnlen(p + 1, 4);
				if (i + 1 < len)
					buf[i++] = '?';
				continue;
			}
		}
		if (i + 1 < len)
			buf[i++] = *p;
	}
	if (len)
		buf[i] = '\0';
	return *p ? p + 1 : p;
}

static void json_walk(struct jwalk *w, const char *v)
{
	w->p = v ? ws(v) : NULL;
	w->object = v && *w->p == '{';
	if (w->p && *w->p != '{' && *w->p != '[')
		w->p = NULL;
}

/* The next member (its key into @key, "" in an array) and its value in
 * *@val; false at the end. */
static bool json_next(struct jwalk *w, char *key, size_t len, const char **val)
{
	const char *p = w->p;

	if (!p || (*p != '{' && *p != '[' && *p != ','))
		return false;
	p = ws(p + 1);
	if (len)
		key[0] = '\0';
	if (w->object) {
		if (*p != '"')
			return false;
		p = ws(json_str(p, key, len));
		if (*p != ':')
			return false;
		p = ws(p + 1);
	} else if (*p == ']' || !*p) {
		return false;
	}
	*val = p;
	w->p = ws(skip_value(p));
	return true;
}

/* The value of member @key of the object at @obj, or NULL. */
static const char *json_get(const char *obj, const char *key)
{
	struct jwalk w;
	const char *v;
	char k[64];

	json_walk(&w, obj);
	while (json_next(&w, k, sizeof(k), &v))
		if (!strcmp(k, key))
			return v;
	return NULL;
}

/* A number member of the object at @obj; 0 if it has none. */
static unsigned long long json_u64(const char *obj, const char *key)
{
	const char *v = obj ? json_get(obj, key) : NULL;

	return v ? strtoull(v, NULL, 10) : 0;
}

/* "  WHAT: name N, name N" for the non-zero numbers of the object at
 * @obj, or "none"; nothing if there is no such object. */
static void print_nonzero(const char *what, const char *obj)
{
	unsigned long long n;
	struct jwalk w;
	const char *v;
	char k[64];
	int shown = 0;

	if (!obj)
		return;
	printf("  %s:", what);
	json_walk(&w, obj);
	while (json_next(&w, k, sizeof(k), &v)) {
		n = strtoull(v, NULL, 10);
		if (n)
			printf("%s %s %llu", shown++ ? "," : "", k, n);
	}
	printf("%s\n", shown ? "" : " none");
}

/* One function: its totals, drops by reason, faults, own counters. */
static void print_function(const char *f)
{
	const char *user = json_get(f, "user"), *xdp = json_get(f, "xdp");
	const char *cache = json_get(f, "cache"), *faults, *q, *ctrs;
	const char *tcp = json_get(f, "tcp"), *rl;
	char name[64] = "?";
	struct jwalk w;
	const char *v;

	v = json_get(f, "name");
	if (v && *v == '"')
		json_str(v, name, sizeof(name));
	printf("%s (port %llu): user space rx %llu tx %llu", name,
	       json_u64(f, "port"), json_u64(user, "rx"), json_u64(user, "tx"));
	if (xdp)
		printf(", in XDP rx %llu tx %llu punted %llu",
		       json_u64(xdp, "rx"), json_u64(xdp, "tx"),
		       json_u64(xdp, "punted"));
	if (cache)
		printf(", cache hits %llu misses %llu", json_u64(cache, "hits"),
		       json_u64(cache, "misses"));
	if (tcp)
		printf(", TCP rx %llu tx %llu", json_u64(tcp, "rx"),
		       json_u64(tcp, "tx"));
	q = json_get(f, "quarantined");
	printf("%s\n", q && !strncmp(q, "true", 4) ? " (quarantined)" : "");
	print_nonzero("dropped in user space",
		      user ? json_get(user, "dropped") : NULL);
	print_nonzero("dropped in XDP", xdp ? json_get(xdp, "dropped") : NULL);
	print_nonzero("TCP", tcp ? json_get(tcp, "events") : NULL);
	rl = json_get(f, "rate_limit");
	if (rl)
		printf("  rate limit %llu replies/s per prefix: limited %llu, slipped %llu, evicted %llu\n",
		       json_u64(rl, "limit"), json_u64(rl, "limited"),
		       json_u64(rl, "slipped"), json_u64(rl, "evicted"));
	faults = json_get(f, "faults");
	if (faults)
		printf("  faults: crash %llu, timeout %llu\n",
		       json_u64(faults, "crash"), json_u64(faults, "timeout"));
	/* The function's own, if it has any. */
	ctrs = json_get(f, "counters");
	json_walk(&w, ctrs);
	if (json_next(&w, NULL, 0, &v))
		print_nonzero("counters", ctrs);
}

/* The XDP program's verdicts ("verdict/reason": n), the non-zero ones,
 * one line per verdict, in the program's order. */
static void print_verdicts(const char *xdp)
{
	char k[64], seen[16][24];
	unsigned int nseen = 0, i, lines = 0;
	unsigned long long n;
	struct jwalk w, r;
	const char *v;
	size_t len;
	int shown;

	printf("XDP program, every queue of the interface:\n");
	json_walk(&w, xdp);
	while (json_next(&w, k, sizeof(k), &v)) {
		len = strcspn(k, "/");
		for (i = 0; i < nseen; i++)
			if (strlen(seen[i]) == len && !strncmp(seen[i], k, len))
				break;
		if (i < nseen || nseen == ARRAY_SIZE(seen) ||
		    len >= sizeof(seen[0]))
			continue;
		snprintf(seen[nseen], sizeof(seen[0]), "%.*s", (int)len, k);
		shown = 0;
		json_walk(&r, xdp);
		while (json_next(&r, k, sizeof(k), &v)) {
			n = strtoull(v, NULL, 10);
			if (!n || k[len] != '/' || strncmp(k, seen[nseen], len))
				continue;
			if (!shown++)
				printf("  %s:", seen[nseen]);
			printf("%s %s %llu", shown > 1 ? "," : "", k + len + 1,
			       n);
		}
		nseen++;
		if (shown) {
			putchar('\n');
			lines++;
		}
	}
	if (!lines)
		printf("  nothing yet\n");
}

/* Where each queue's UMEM frames are. */
static void print_umem(const char *queues)
{
	static const char *const states[] = { "fill", "rx",	    "worker",
					      "tx",   "completion", "kernel" };
	struct jwalk w;
	const char *q;
	size_t i;

	printf("UMEM frames per queue:\n  %5s", "queue");
	for (i = 0; i < ARRAY_SIZE(states); i++)
		printf(" %10s", states[i]);
	putchar('\n');
	json_walk(&w, queues);
	while (json_next(&w, NULL, 0, &q)) {
		printf("  %5llu", json_u64(q, "queue"));
		for (i = 0; i < ARRAY_SIZE(states); i++)
			printf(" %10llu", json_u64(q, states[i]));
		putchar('\n');
	}
}

/*
 * What docs/OPERATIONS.md and the alert rules send an operator here for: per
 * function its totals, its drops by reason in each tier, its faults and
 * quarantine, its own counters; the XDP program's verdicts; where the
 * UMEM frames are.
 */
static void print_stats(const char *json)
{
	const char *fns = json_get(json, "functions"), *f, *v;
	struct jwalk w;

	json_walk(&w, fns);
	while (json_next(&w, NULL, 0, &f))
		print_function(f);
	v = json_get(json, "xdp");
	if (v)
		print_verdicts(v);
	v = json_get(json, "umem_frames");
	if (v)
		print_umem(v);
}

/* A number of the reply, as a double (0 if it is not there). */
static double json_num(const char *obj, const char *key)
{
	const char *v = obj ? json_get(obj, key) : NULL;

	return v ? strtod(v, NULL) : 0;
}

/* One kind of a function's heavy hitters: "sources" (whose entries name
 * a "source") or "prefixes" ("prefix"); "rate-limited" after one whose
 * prefix the function's rate limit refuses now. */
static void print_top_kind(const char *fn, const char *member,
			   const char *entry, const char *title)
{
	const char *kind = json_get(fn, member), *e, *v;
	char key[64];
	struct jwalk w;
	int n = 0;

	if (!kind)
		return;
	printf("  %-40s %11s %8s %7s\n", title, "requests/s", "+-", "share");
	json_walk(&w, json_get(kind, "top"));
	while (json_next(&w, NULL, 0, &e)) {
		v = json_get(e, entry);
		key[0] = '\0';
		if (v && *v == '"')
			json_str(v, key, sizeof(key));
		v = json_get(e, "limited");
		printf("  %-40s %11.0f %8.0f %6.1f%%%s\n", key,
		       json_num(e, "requests_per_s"), json_num(e, "error"),
		       100 * json_num(e, "share"),
		       v && !strncmp(v, "true", 4) ? "  rate-limited" : "");
		n++;
	}
	if (!n)
		printf("  none above the error bound\n");
}

/*
 * top: per function, its requests/s as the sketch estimates them, the
 * sampling rate and the error bound, then its top sources and prefixes.
 */
static void print_top(const char *json)
{
	const char *fns = json_get(json, "functions"), *f, *v;
	char name[64];
	struct jwalk w;

	json_walk(&w, fns);
	while (json_next(&w, NULL, 0, &f)) {
		name[0] = '\0';
		v = json_get(f, "name");
		if (v && *v == '"')
			json_str(v, name, sizeof(name));
		v = json_get(f, "heavy_hitters");
		if (!v || strncmp(v, "true", 4)) {
			printf("%s (port %llu): heavy hitters off\n\n", name,
			       json_u64(f, "port"));
			continue;
		}
		printf("%s (port %llu): %.0f requests/s, 1 in %llu sampled, the sketch's error bound +-%.0f/s per source, +-%.0f/s per prefix",
		       name, json_u64(f, "port"), json_num(f, "requests_per_s"),
		       json_u64(f, "sample"),
		       json_num(json_get(f, "sources"), "error_bound"),
		       json_num(json_get(f, "prefixes"), "error_bound"));
		if (json_u64(f, "candidates_lost"))
			printf(", %llu sampled sources unread",
			       json_u64(f, "candidates_lost"));
		putchar('\n');
		print_top_kind(f, "sources", "source", "source");
		print_top_kind(f, "prefixes", "prefix", "prefix");
		putchar('\n');
	}
}

/* A reload: each line of what it applied and what needs a restart or
 * failed, then its summary, on stderr if not all was applied. */
static void print_reload(const char *json, bool ok)
{
	char line[1024], key[8];
	const char *v;
	struct jwalk w;

	json_walk(&w, json_get(json, "lines"));
	while (json_next(&w, key, sizeof(key), &v))
		if (*v == '"') {
			json_str(v, line, sizeof(line));
			printf("%s\n", line);
		}
	if (!field(json, "message", line, sizeof(line)))
		snprintf(line, sizeof(line), "%s", json);
	if (ok) {
		printf("%s\n", line);
		return;
	}
	fflush(stdout); /* the lines first, wherever both streams go */
	pr_warn("reload: %s\n", line);
}

/* What the options ask for. */
struct ctl_opts {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	unsigned long timeout, quiet; /* drain's */
	unsigned long watch;	      /* stats --watch: seconds, or 0 */
	bool json;
};

/* One option of the table. */
static int apply(int key, const char *arg, void *ctx)
{
	struct ctl_opts *o = ctx;

	switch (key) {
	case 'c':
	case 's':
		snprintf(o->path, sizeof(o->path), "%s", arg);
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_WATCH:
		o->watch = WATCH_DEFAULT_S;
		break;
	case OPT_TIMEOUT:
	case OPT_QUIET:
		if (rr_parse_ulong(arg, 1, RR_CONTROL_DRAIN_MAX_S,
				   key == OPT_TIMEOUT ? &o->timeout
						      : &o->quiet)) {
			pr_warn("--%s takes seconds, 1-%d, not '%s'\n",
				key == OPT_TIMEOUT ? "timeout" : "quiet",
				RR_CONTROL_DRAIN_MAX_S, arg);
			return 2;
		}
		break;
	}
	return 0;
}

/* The words each command with arguments takes, for the one line that
 * says so: "deploy takes FILE.so, remove NAME, ...". */
static void say_arguments(void)
{
	char line[RR_CONTROL_MAX_LINE];
	size_t off = 0;
	bool first = true;
	int i;

	line[0] = '\0';
	for (i = 0; i < RR_CTL_NCMDS && off < sizeof(line); i++) {
		const struct rr_ctlcmd *c = &rr_ctlcmds[i];
		int n;

		if (!rr_ctlcmd_user_args(c))
			continue;
		n = snprintf(line + off, sizeof(line) - off, "%s%s%s %s",
			     first ? "" : ", ", c->name, first ? " takes" : "",
			     c->args);
		if (n < 0)
			break;
		off += (size_t)n;
		first = false;
	}
	pr_warn("%s\n", line);
}

/* The command at argv[optind], its arguments after it: its row, or NULL
 * after saying what is wrong. */
static const struct rr_ctlcmd *check_command(int argc, char **argv)
{
	const struct rr_ctlcmd *c;
	const char *cmd;
	int nargs;

	if (optind >= argc) {
		pr_warn("no command given (see --help)\n");
		return NULL;
	}
	cmd = argv[optind];
	c = rr_ctlcmd_find(cmd, strlen(cmd));
	nargs = c ? (int)rr_ctlcmd_user_args(c) : 0;
	if (argc - optind != 1 + nargs &&
	    !(c && c->optional && argc - optind == 1)) {
		if (nargs)
			say_arguments();
		else
			pr_warn("one command at a time (see --help)\n");
		return NULL;
	}
	if (!c)
		pr_warn("unknown command '%s' (see --help)\n", cmd);
	return c;
}

/* The line sent to the instance for @c (@arg if it takes one): 0, or 2
 * after saying what is wrong. */
static int request_line(const struct rr_ctlcmd *c, const char *arg,
			const struct ctl_opts *o, char *line, size_t len)
{
	char full[PATH_MAX];
	int n;

	if (rr_ctlcmd_id(c) == RR_CTL_DEPLOY) {
		/* The instance runs elsewhere: give it the whole path. */
		if (!realpath(arg, full)) {
			pr_warn("deploy: %s: %s\n", arg, strerror(errno));
			return 2;
		}
		arg = full;
	}
	if (rr_ctlcmd_id(c) == RR_CTL_DRAIN) {
		if (o->quiet > o->timeout) {
			pr_warn("drain: --quiet cannot exceed --timeout\n");
			return 2;
		}
		n = snprintf(line, len, "%s %lu %lu", c->name, o->timeout,
			     o->quiet);
	} else if (arg) {
		n = snprintf(line, len, "%s %s", c->name, arg);
	} else {
		n = snprintf(line, len, "%s", c->name);
	}
	/* The instance would cut a longer one off and act on the rest. */
	if (n > RR_CONTROL_MAX_LINE) {
		pr_warn("%s: the request is %d bytes, the instance reads at most %d\n",
			c->name, n, RR_CONTROL_MAX_LINE);
		return 2;
	}
	return 0;
}

/* Prints the instance's @reply to @c for a person (or as it is, with
 * --json); true if the command succeeded (health: if it is ready). */
static bool show(const struct rr_ctlcmd *c, const char *reply, bool json)
{
	bool ok = strstr(reply, "\"ok\":true") != NULL;
	bool ready = strstr(reply, "\"ready\":true") != NULL;
	char why[256];

	if (json) {
		fputs(reply, stdout);
	} else if (rr_ctlcmd_id(c) == RR_CTL_RELOAD) {
		print_reload(reply, ok);
	} else if (!ok) {
		if (!field(reply, "message", why, sizeof(why)))
			snprintf(why, sizeof(why), "%s", reply);
		pr_warn("%s: %s\n", c->name, why);
	} else if (rr_ctlcmd_id(c) == RR_CTL_STATUS) {
		print_status(reply);
	} else if (rr_ctlcmd_id(c) == RR_CTL_STATS) {
		print_stats(reply);
	} else if (rr_ctlcmd_id(c) == RR_CTL_TOP) {
		print_top(reply);
	} else if (rr_ctlcmd_id(c) == RR_CTL_HEALTH) {
		if (ready)
			printf("ready\n");
		else if (field(reply, "why", why, sizeof(why)))
			printf("not ready: %s\n", why);
	} else if (field(reply, "message", why, sizeof(why))) {
		printf("%s\n", why);
	}
	if (ok && rr_ctlcmd_id(c) == RR_CTL_HEALTH && !ready)
		ok = false;
	return ok;
}

/*
 * stats --watch [SECONDS], top [FUNCTION] --watch [SECONDS]: the number is
 * an operand, anywhere among them (getopt moves the operands together;
 * no command or function is named by digits). Taken out of argv's
 * operands: 0, or 2 after saying what is wrong.
 */
static int watch_seconds(int *argc, char **argv, struct ctl_opts *o)
{
	int at;

	if (!o->watch || *argc - optind < 2)
		return 0;
	for (at = optind; at < *argc; at++)
		if (argv[at][0] &&
		    strspn(argv[at], "0123456789") == strlen(argv[at]))
			break;
	if (at == *argc)
		return 0;
	if (rr_parse_ulong(argv[at], 1, WATCH_MAX_S, &o->watch)) {
		pr_warn("--watch takes seconds, 1-%d, not '%s'\n", WATCH_MAX_S,
			argv[at]);
		return 2;
	}
	/* The operands after it close up, argv's NULL with them. */
	memmove(&argv[at], &argv[at + 1], (size_t)(*argc - at) * sizeof(*argv));
	(*argc)--;
	return 0;
}

/*
 * stats --watch: the stats again every o->watch seconds, as watch(1)
 * shows a command, until SIGINT or SIGTERM (exit 0). An instance that
 * goes away ends it with exit 3, one it refuses with 1.
 */
static int watch(const struct ctl_opts *o, const struct rr_ctlcmd *c,
		 const char *line)
{
	struct timespec every = { (time_t)o->watch, 0 };
	bool tty = isatty(STDOUT_FILENO);
	char when[32] = "", *reply;
	sigset_t stop;
	struct tm tm;
	time_t now;
	bool ok;

	/* Taken with sigtimedwait() between two rounds, never in the middle
	 * of one; a background job's ignored SIGINT counts too. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	for (;;) {
		if (ask(o->path, line, TIMEOUT_MS, &reply))
			return 3;
		if (!o->json) {
			now = time(NULL);
			if (localtime_r(&now, &tm))
				strftime(when, sizeof(when), "%F %T", &tm);
			printf("%sEvery %lus: reqrouterctl %s of %s, %s\n\n",
			       tty ? "\033[H\033[2J" : "", o->watch, c->name,
			       o->path, when);
		}
		ok = show(c, reply, o->json);
		free(reply);
		if (!o->json)
			putchar('\n');
		fflush(stdout);
		if (!ok)
			return 1;
		if (sigtimedwait(&stop, NULL, &every) > 0)
			return 0;
	}
}

/* An option of ours that takes its value as the next word. */
static bool takes_next(const char *word)
{
	const struct rr_opt *t;
	size_t n;

	if (word[0] == '-' && word[1] && word[1] != '-')
		for (t = opts; t->name; t++)
			if (t->arg && t->key == word[1] && !word[2])
				return true;
	if (strncmp(word, "--", 2) || strchr(word, '='))
		return false;
	n = strlen(word + 2);
	for (t = opts; t->name; t++)
		if (t->arg && n && !strncmp(t->name, word + 2, n))
			return true;
	return false;
}

/* Where conf-check is on the command line, as its command (the first
 * operand), or 0: what follows it is reqrouter's, not ours. */
static int conf_check_at(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], CONF_CHECK))
			return i;
		if (argv[i][0] != '-' || !strcmp(argv[i], "--"))
			return 0;
		if (takes_next(argv[i]))
			i++;
	}
	return 0;
}

/*
 * conf-check ARG...: runs reqrouter --check ARG... in our place: the
 * reqrouter installed beside reqrouterctl (both go to sbin/; both are in
 * build/), else the one in PATH. Its lines and exit status are the
 * answer; 127 (or 126) if there is no reqrouter to run, as env(1) says.
 */
static int conf_check(int nargs, char **args)
{
	char self[PATH_MAX], **argv;
	const char *tried = "";
	ssize_t n;
	char *slash;
	int i;

	argv = calloc((size_t)nargs + 3, sizeof(*argv));
	if (!argv) {
		pr_warn("out of memory\n");
		return 2;
	}
	argv[0] = "reqrouter";
	argv[1] = "--check";
	for (i = 0; i < nargs; i++)
		argv[i + 2] = args[i];
	fflush(stdout);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash && (size_t)(slash - self) + sizeof("/reqrouter") <=
				     sizeof(self)) {
			strcpy(slash + 1, "reqrouter");
			if (!access(self, X_OK)) {
				execv(self, argv);
				tried = self;
			}
		}
	}
	execvp("reqrouter", argv);
	i = errno;
	if (tried[0])
		pr_warn(CONF_CHECK
			": cannot run %s, nor reqrouter from PATH: %s\n",
			tried, strerror(i));
	else
		pr_warn(CONF_CHECK ": cannot run reqrouter from PATH: %s\n",
			strerror(i));
	free(argv);
	return i == ENOENT ? 127 : 126;
}

int main(int argc, char **argv)
{
	struct rr_opt_prog prog = { "reqrouterctl", SYNOPSIS, about(), opts };
	struct ctl_opts o = { .timeout = RR_DRAIN_TIMEOUT_S,
			      .quiet = RR_DRAIN_QUIET_S };
	char line[PATH_MAX + 16], *reply = NULL;
	const struct rr_ctlcmd *c;
	bool ok;
	int ret, at;

	rr_log_set_prog("reqrouterctl");
	at = conf_check_at(argc, argv);
	if (at) {
		/* Our options before it (--help), reqrouter's after it. */
		ret = rr_opt_parse(&prog, at, argv, apply, &o);
		if (ret)
			return ret;
		return conf_check(argc - at - 1, argv + at + 1);
	}
	ret = rr_opt_parse(&prog, argc, argv, apply, &o);
	if (!ret)
		ret = watch_seconds(&argc, argv, &o);
	if (ret)
		return ret;
	c = check_command(argc, argv);
	if (!c)
		return 2;
	if (o.watch && rr_ctlcmd_id(c) != RR_CTL_STATS &&
	    rr_ctlcmd_id(c) != RR_CTL_TOP) {
		pr_warn("--watch goes with stats and top only\n");
		return 2;
	}
	/* top is live, as top(1) is, for a person at a terminal. */
	if (rr_ctlcmd_id(c) == RR_CTL_TOP && !o.json && !o.watch &&
	    isatty(STDOUT_FILENO))
		o.watch = WATCH_DEFAULT_S;
	if (!o.path[0] && find_socket(o.path, sizeof(o.path)))
		return 3;
	ret = request_line(c, rr_ctlcmd_user_args(c) ? argv[optind + 1] : NULL,
			   &o, line, sizeof(line));
	if (ret)
		return ret;
	if (o.watch)
		return watch(&o, c, line);
	ret = ask(o.path, line,
		  rr_ctlcmd_id(c) == RR_CTL_RELOAD ? RELOAD_TIMEOUT_MS
						   : TIMEOUT_MS,
		  &reply);
	if (ret) {
		/* health: an instance that is gone is simply not ready. */
		if (rr_ctlcmd_id(c) == RR_CTL_HEALTH && o.json)
			printf("{\"ok\":false,\"ready\":false,\"why\":\"not running\"}\n");
		return 3;
	}
	ok = show(c, reply, o.json);
	free(reply);
	if (ok && rr_ctlcmd_id(c) == RR_CTL_DRAIN)
		return wait_gone(o.path, o.timeout);
	return ok ? 0 : 1;
}
