// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouterctl: talks to a running reqrouter through its control socket.
 * Sends one command, prints the JSON answer as it is (--json) or as a
 * few lines for a human. Exit status: 0 done (health: ready), 1 the
 * instance refused or is not ready, 2 usage, 3 no instance to talk to.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
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
#define TIMEOUT_MS 10000 /* a reload may wait for workers */
#define CMD_COLUMN 26 /* where a command's help starts, as an option's does */

enum { OPT_JSON = 256, OPT_TIMEOUT, OPT_QUIET };

static const struct rr_opt opts[] = {
	{ "control", 'c', "PATH",
	  "the instance's control socket (default: the only one in " RR_CONTROL_DIR
	  ")" },
	{ "json", OPT_JSON, NULL, "print the instance's JSON answer as it is" },
	{ "timeout", OPT_TIMEOUT, "SECS",
	  "drain: stop after SECS at the latest (default " STR(
		  RR_DRAIN_TIMEOUT_S) ")" },
	{ "quiet", OPT_QUIET, "SECS",
	  "drain: stop once no request came for SECS (default " STR(
		  RR_DRAIN_QUIET_S) ")" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ 0 },
};

#define SYNOPSIS "reqrouterctl [--control PATH] [--json] COMMAND [ARG]"

/*
 * The text between the synopsis and the options: the commands, from the
 * table, those that only read apart from those that change the instance.
 * The bash completion and the README take the command list from here.
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
	fclose(f);
	n = strlen(text);
	if (n && text[n - 1] == '\n')
		text[n - 1] = '\0'; /* the usage adds the blank line */
	return text;
}

/* The one socket in the default directory, or why there is none. */
static int find_socket(char *path, size_t len)
{
	struct dirent *e;
	int found = 0;
	DIR *d;

	d = opendir(RR_CONTROL_DIR);
	if (!d) {
		pr_warn("no reqrouter is running here (%s: %s)\n",
			RR_CONTROL_DIR, strerror(errno));
		return -ENOENT;
	}
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n < 6 || strcmp(e->d_name + n - 5, ".sock"))
			continue;
		if (found++)
			break;
		snprintf(path, len, "%s/%s", RR_CONTROL_DIR, e->d_name);
	}
	closedir(d);
	if (found == 1)
		return 0;
	pr_warn(found ? "several instances run here; say which with --control %s/IFACE.sock\n"
		      : "no reqrouter is running here (no socket in %s)\n",
		RR_CONTROL_DIR);
	return -ENOENT;
}

/* Sends @cmd to @path; the reply (NUL-terminated) in *out. */
static int ask(const char *path, const char *cmd, char **out)
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
		if (poll(&pfd, 1, TIMEOUT_MS) <= 0) {
			pr_warn("%s did not answer within %d s\n", path,
				TIMEOUT_MS / 1000);
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
	static const char *const keys[] = {
		"interface", "ready",	"why",	     "xdp_mode",  "zerocopy",
		"queues",    "threads", "busy_poll", "isolation", "tx_csum",
		"uptime_s",  "pid",	"version",   "veth_peer", NULL
	};
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

static void print_stats(const char *json)
{
	const char *p = json;

	while ((p = strstr(p, "{\"name\":"))) {
		const char *end = strstr(p, "\"counters\":");
		char name[64], port[8], rx[24], tx[24], v[24];

		field(p, "name", name, sizeof(name));
		field(p, "port", port, sizeof(port));
		field(p, "rx", rx, sizeof(rx));
		field(p, "tx", tx, sizeof(tx));
		printf("%s (port %s): user space rx %s tx %s", name, port, rx,
		       tx);
		if (end && strstr(p, "\"xdp\":{") &&
		    strstr(p, "\"xdp\":{") < end) {
			const char *x = strstr(p, "\"xdp\":{");

			field(x, "rx", rx, sizeof(rx));
			field(x, "tx", tx, sizeof(tx));
			field(x, "punted", v, sizeof(v));
			printf(", in XDP rx %s tx %s punted %s", rx, tx, v);
		}
		if (end && strstr(p, "\"cache\":{") &&
		    strstr(p, "\"cache\":{") < end) {
			const char *c = strstr(p, "\"cache\":{");

			field(c, "hits", rx, sizeof(rx));
			field(c, "misses", tx, sizeof(tx));
			printf(", cache hits %s misses %s", rx, tx);
		}
		putchar('\n');
		p++;
	}
}

/* What the options ask for. */
struct ctl_opts {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	unsigned long timeout, quiet; /* drain's */
	bool json;
};

/* One option of the table. */
static int apply(int key, const char *arg, void *ctx)
{
	struct ctl_opts *o = ctx;

	switch (key) {
	case 'c':
		snprintf(o->path, sizeof(o->path), "%s", arg);
		break;
	case OPT_JSON:
		o->json = true;
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
	if (argc - optind != 1 + nargs) {
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
	} else if (!ok) {
		if (!field(reply, "message", why, sizeof(why)))
			snprintf(why, sizeof(why), "%s", reply);
		pr_warn("%s: %s\n", c->name, why);
	} else if (rr_ctlcmd_id(c) == RR_CTL_STATUS) {
		print_status(reply);
	} else if (rr_ctlcmd_id(c) == RR_CTL_STATS) {
		print_stats(reply);
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

int main(int argc, char **argv)
{
	struct rr_opt_prog prog = { "reqrouterctl", SYNOPSIS, about(), opts };
	struct ctl_opts o = { .timeout = RR_DRAIN_TIMEOUT_S,
			      .quiet = RR_DRAIN_QUIET_S };
	char line[PATH_MAX + 16], *reply = NULL;
	const struct rr_ctlcmd *c;
	bool ok;
	int ret;

	rr_log_set_prog("reqrouterctl");
	ret = rr_opt_parse(&prog, argc, argv, apply, &o);
	if (ret)
		return ret;
	c = check_command(argc, argv);
	if (!c)
		return 2;
	if (!o.path[0] && find_socket(o.path, sizeof(o.path)))
		return 3;
	ret = request_line(c, rr_ctlcmd_user_args(c) ? argv[optind + 1] : NULL,
			   &o, line, sizeof(line));
	if (ret)
		return ret;
	ret = ask(o.path, line, &reply);
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
