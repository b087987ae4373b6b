// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouterctl: talks to a running reqrouter through its control socket,
 * with knotc's habits: -s the socket, -c the config file (which names
 * it), -t how long to wait for the answer. Sends one command, prints the
 * JSON answer as it is (--json) or as a few lines for a human (show.c);
 * stats --watch asks again every few seconds, with rates, and top does
 * at a terminal.
 * Exit status: 0 done (health: ready), 1 the instance refused or is not
 * ready, 2 usage, 3 no instance to talk to (none, no answer in time, or
 * no JSON). conf-check talks to no instance: it runs reqrouter --check,
 * whose exit status it has.
 */
#include <arpa/inet.h>
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
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctlcmd.h"
#include "log.h"
#include "opttable.h"
#include "parse.h"
#include "shared/capture.h"
#include "show.h"
#include "stream.h"
#include "util.h"

#include <json-c/json.h>

#define REPLY_MAX (1 << 20)
/* How long to wait for an answer, unless --timeout says: a reload's
 * comes once its functions' init() calls are done, and a large zone can
 * take a while. */
#define TIMEOUT_S 10
#define RELOAD_TIMEOUT_S 600
#define TIMEOUT_MAX_S 86400
#define CMD_COLUMN 26 /* where a command's help starts, as an option's does */

#define WATCH_DEFAULT_S 2 /* watch(1)'s */
#define WATCH_MAX_S 3600

/* The command reqrouterctl runs itself, with no instance. */
#define CONF_CHECK "conf-check"

enum {
	OPT_JSON = 256,
	OPT_CONTROL,
	OPT_WAIT,
	OPT_QUIET,
	OPT_WATCH,
	OPT_COUNT,
	OPT_PORT,
	OPT_SOURCE,
	OPT_SECONDS,
	OPT_SNAPLEN,
	OPT_SAMPLE,
	OPT_CANARY,
};

/* capture's default bytes of a frame, and its most (the instance's). */
#define SNAPLEN_DEFAULT 256

static const struct rr_opt opts[] = {
	{ "socket", 's', "PATH",
	  "the instance's control socket (default: the only one in " RR_CONTROL_DIR
	  " that answers)" },
	{ "config", 'c', "FILE",
	  "the instance's config file: the socket its control key names, or its interface's" },
	{ "control", OPT_CONTROL, "PATH",
	  "the same as --socket (reqrouter's own option's name)" },
	{ "json", OPT_JSON, NULL, "print the instance's JSON answer as it is" },
	{ "timeout", 't', "SECS",
	  "wait SECS for the answer (default " STR(TIMEOUT_S) ", reload " STR(
		  RELOAD_TIMEOUT_S) "; 0: no limit)" },
	{ "wait", OPT_WAIT, "SECS",
	  "drain: stop after SECS at the latest (default " STR(
		  RR_DRAIN_TIMEOUT_S) ")" },
	{ "quiet", OPT_QUIET, "SECS",
	  "drain: stop once no request came for SECS (default " STR(
		  RR_DRAIN_QUIET_S) ")" },
	{ "watch", OPT_WATCH, NULL,
	  "stats, top: ask again every SECONDS, the number after the command (default " STR(
		  WATCH_DEFAULT_S) "), until interrupted; top does at a terminal; stats shows rates" },
	{ "count", OPT_COUNT, "N",
	  "--watch: stop after N answers; capture: after N packets; trace: after N records" },
	{ "write", 'w', "FILE",
	  "capture: the pcapng file to write, - for stdout (tcpdump -r -); trace: its lines' file (default stdout)" },
	{ "port", OPT_PORT, "PORT",
	  "capture: only the requests to this port (filtered in XDP), and their replies" },
	{ "source", OPT_SOURCE, "CIDR",
	  "capture: only the requests from this address or prefix, as 192.0.2.0/24 or 2001:db8::/32" },
	{ "seconds", OPT_SECONDS, "S",
	  "capture, trace: stop after S seconds (default: at --count, or when interrupted)" },
	{ "snaplen", OPT_SNAPLEN, "N",
	  "capture: the bytes of each frame to keep, 1-" STR(
		  RR_CAPTURE_SNAP_MAX) " (default " STR(SNAPLEN_DEFAULT) ")" },
	{ "sample", OPT_SAMPLE, "N",
	  "capture: one matching request in N (default 1, all)" },
	{ "canary", OPT_CANARY, "PERCENT",
	  "deploy: run the module beside the running version, for PERCENT of the sources (1-99), until promote or rollback" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ 0 },
};

#define SYNOPSIS \
	"reqrouterctl [-s SOCKET | -c CONFIG] [-t SECS] [--json] COMMAND [ARG]"

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
	if (!d && errno == EACCES) {
		/* An instance may well run: we may not look. */
		pr_warn("cannot look for instances in %s: %s (root or the control group only)\n",
			RR_CONTROL_DIR, strerror(errno));
		return -EACCES;
	}
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
	pr_warn(found ? "several instances run here; say which with --socket %s/IFACE.sock\n"
		      : "no reqrouter is running here (no socket in %s that answers)\n",
		RR_CONTROL_DIR);
	return -ENOENT;
}

/* The milliseconds left until @deadline (CLOCK_MONOTONIC), at least 0. */
static int ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(deadline->tv_sec - now.tv_sec) * 1000 +
	     (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

/*
 * Connects to @path and sends @cmd, each within @timeout_s seconds (0:
 * no limit): the connection, or -errno after one line saying why not.
 */
static int dial(const char *path, const char *cmd, unsigned long timeout_s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { (time_t)timeout_s, 0 };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		pr_warn("socket path too long: %s\n", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* connect() and the request's write wait no longer either (a
	 * backlog that is full, a peer that reads nothing). */
	if (fd >= 0 && timeout_s)
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = errno;
		if (err == EAGAIN || err == EINPROGRESS)
			pr_warn("%s did not take the call within %lu s\n", path,
				timeout_s);
		else
			pr_warn("cannot reach %s: %s%s\n", path, strerror(err),
				err == ENOENT || err == ECONNREFUSED
					? " (is reqrouter running on that interface?)"
				: err == EACCES
					? " (root or the control group only)"
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
	return fd;
}

/*
 * Sends @cmd to @path; the reply (NUL-terminated) in *out. All of it,
 * from connecting to the last byte, within @timeout_s seconds (0: no
 * limit), or one line saying it did not come.
 */
static int ask(const char *path, const char *cmd, unsigned long timeout_s,
	       char **out)
{
	struct pollfd pfd = { .events = POLLIN };
	struct timespec deadline;
	size_t n = 0;
	char *buf;
	ssize_t r;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)timeout_s;
	fd = dial(path, cmd, timeout_s);
	if (fd < 0)
		return fd;
	buf = malloc(REPLY_MAX + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	pfd.fd = fd;
	while (n < REPLY_MAX) {
		r = poll(&pfd, 1, timeout_s ? ms_left(&deadline) : -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			pr_warn("%s did not answer within %lu s%s\n", path,
				timeout_s,
				n ? " (it began to)"
				  : " (--timeout SECS to wait longer)");
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

/* What the options ask for. */
struct ctl_opts {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *config;    /* -c FILE, until it gave the path */
	unsigned long timeout; /* s, for the answer; 0: none */
	bool timeout_set;
	unsigned long wait, quiet; /* drain's */
	bool wait_set;
	unsigned long watch; /* stats --watch: seconds, or 0 */
	unsigned long count; /* --watch: answers, or 0 for no end */
	const char *canary;  /* deploy --canary PERCENT */
	bool json;
	/* capture's and trace's */
	const char *write;
	unsigned long port, seconds, snaplen, sample;
	const char *source;
};

/* Option --@name's number of @what, @min to @max: 0, or 2 after one
 * line. */
static int bounded(const char *name, const char *what, const char *arg,
		   unsigned long min, unsigned long max, unsigned long *out)
{
	if (!rr_parse_ulong(arg, min, max, out))
		return 0;
	pr_warn("--%s takes %s, %lu-%lu, not '%s'\n", name, what, min, max,
		arg);
	return 2;
}

/* Whether @arg is an address or a prefix, as the instance takes one. */
static bool source_ok(const char *arg)
{
	char addr[INET6_ADDRSTRLEN + 8], *slash;
	unsigned char bytes[16];
	unsigned long plen;
	int family = AF_INET;

	if (strlen(arg) >= sizeof(addr))
		return false;
	strcpy(addr, arg);
	slash = strchr(addr, '/');
	if (slash)
		*slash++ = '\0';
	if (inet_pton(AF_INET, addr, bytes) != 1) {
		family = AF_INET6;
		if (inet_pton(AF_INET6, addr, bytes) != 1)
			return false;
	}
	return !slash ||
	       !rr_parse_ulong(slash, 0, family == AF_INET ? 32 : 128, &plen);
}

/* One option of the table. */
static int apply(int key, const char *arg, void *ctx)
{
	struct ctl_opts *o = ctx;

	switch (key) {
	case 's':
	case OPT_CONTROL:
		if (strlen(arg) >= sizeof(o->path)) {
			pr_warn("socket path too long (%zu bytes at most): %s\n",
				sizeof(o->path) - 1, arg);
			return 2;
		}
		snprintf(o->path, sizeof(o->path), "%s", arg);
		break;
	case 'c':
		o->config = arg;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_WATCH:
		o->watch = WATCH_DEFAULT_S;
		break;
	case OPT_COUNT:
		return bounded("count", "answers", arg, 1, ULONG_MAX,
			       &o->count);
	case 'w':
		o->write = arg;
		break;
	case OPT_PORT:
		return bounded("port", "a port", arg, 1, 65535, &o->port);
	case OPT_SOURCE:
		if (!source_ok(arg)) {
			pr_warn("--source takes an address or a prefix, as 192.0.2.0/24 or 2001:db8::/32, not '%s'\n",
				arg);
			return 2;
		}
		o->source = arg;
		break;
	case OPT_SECONDS:
		return bounded("seconds", "seconds", arg, 1, TIMEOUT_MAX_S,
			       &o->seconds);
	case OPT_SNAPLEN:
		return bounded("snaplen", "bytes", arg, 1, RR_CAPTURE_SNAP_MAX,
			       &o->snaplen);
	case OPT_SAMPLE:
		return bounded("sample", "one request in N", arg, 1, UINT32_MAX,
			       &o->sample);
	case 't':
		o->timeout_set = true;
		return bounded("timeout", "seconds", arg, 0, TIMEOUT_MAX_S,
			       &o->timeout);
	case OPT_WAIT:
		o->wait_set = true;
		return bounded("wait", "seconds", arg, 1,
			       RR_CONTROL_DRAIN_MAX_S, &o->wait);
	case OPT_QUIET:
		return bounded("quiet", "seconds", arg, 1,
			       RR_CONTROL_DRAIN_MAX_S, &o->quiet);
	case OPT_CANARY: {
		char err[RR_ERRLEN];
		unsigned int permille;

		if (rr_parse_canary_share(arg, &permille, err, sizeof(err))) {
			pr_warn("%s\n", err);
			return 2;
		}
		o->canary = arg;
		break;
	}
	}
	return 0;
}

/*
 * The socket -c FILE leads to, into o->path: the file's control key or
 * its interface's socket, or none said (the usual search then). A socket
 * given as -c, as before -c meant the socket (or a missing NAME.sock), is
 * taken as one, with a line saying so. 0, or an exit status after one
 * line.
 */
static int from_config(struct ctl_opts *o)
{
	size_t n = strlen(o->config);
	bool sock_name = n > 5 && !strcmp(o->config + n - 5, ".sock");
	char err[RR_ERRLEN];
	struct stat st;
	int ret;

	/* A socket, or the socket file of an instance not running (old
	 * scripts say -c /run/reqrouter/IFACE.sock, and want exit 3). */
	if (stat(o->config, &st) ? errno == ENOENT && sock_name
				 : S_ISSOCK(st.st_mode)) {
		pr_warn("-c SOCKET is deprecated: -c names the config file now (knotc's -c), -s the socket; taking %s as -s\n",
			o->config);
		return apply('s', o->config, o);
	}
	ret = rr_control_path_of(o->config, o->path, sizeof(o->path), err,
				 sizeof(err));
	if (ret == -ENOENT)
		return 0;
	if (ret)
		pr_warn("%s\n", err);
	return ret == -ENOTCONN ? 3 : ret ? 2 : 0;
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
	if (o->canary && rr_ctlcmd_id(c) != RR_CTL_DEPLOY) {
		pr_warn("--canary is deploy's\n");
		return 2;
	}
	if (o->canary) {
		n = snprintf(line, len, "%s " RR_CTL_CANARY_FLAG " %s %s",
			     c->name, o->canary, arg);
	} else if (rr_ctlcmd_id(c) == RR_CTL_DRAIN) {
		/* Before --timeout was the answer's, it was drain's limit. */
		if (o->timeout_set && !o->wait_set) {
			pr_warn("drain: its limit is --wait SECS now; --timeout is how long to wait for the answer\n");
			return 2;
		}
		if (o->quiet > o->wait) {
			pr_warn("drain: --quiet cannot exceed --wait\n");
			return 2;
		}
		n = snprintf(line, len, "%s %lu %lu", c->name, o->wait,
			     o->quiet);
	} else if (rr_ctlcmd_id(c) == RR_CTL_CAPTURE) {
		n = snprintf(line, len, "%s %lu %s %lu %lu %lu %lu", c->name,
			     o->port, o->source ? o->source : "-", o->count,
			     o->seconds,
			     o->snaplen ? o->snaplen : SNAPLEN_DEFAULT,
			     o->sample ? o->sample : 1);
	} else if (rr_ctlcmd_id(c) == RR_CTL_TRACE) {
		n = snprintf(line, len, "%s %lu %lu", c->name, o->count,
			     o->seconds);
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

/* How long to wait for the answer to @c. */
static unsigned long timeout_for(const struct ctl_opts *o,
				 const struct rr_ctlcmd *c)
{
	if (o->timeout_set)
		return o->timeout;
	return rr_ctlcmd_id(c) == RR_CTL_RELOAD ? RELOAD_TIMEOUT_S : TIMEOUT_S;
}

/*
 * Sends @line and shows the answer to @c, as it came with --json: 0
 * done, 1 refused (health: not ready), 3 no answer or no JSON. With
 * @was (stats --watch), the answer before it, received at *@at, for the
 * rates, replaced by this one.
 */
static int answer(const struct ctl_opts *o, const struct rr_ctlcmd *c,
		  const char *line, struct json_object **was,
		  struct timespec *at)
{
	struct json_object *a;
	struct timespec now;
	char *reply = NULL;
	bool ok = false;
	double dt = 0;

	if (ask(o->path, line, timeout_for(o, c), &reply))
		return 3;
	a = ctl_parse(o->path, reply);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (a && o->json) {
		fputs(reply, stdout);
		ok = ctl_done(c, a);
	} else if (a) {
		if (was && *was)
			dt = (double)(now.tv_sec - at->tv_sec) +
			     (double)(now.tv_nsec - at->tv_nsec) / 1e9;
		ok = ctl_show(c, a, was ? *was : NULL, dt);
	}
	free(reply);
	if (!a)
		return 3;
	if (was) {
		json_object_put(*was);
		*was = a;
		*at = now;
	} else {
		json_object_put(a);
	}
	return ok ? 0 : 1;
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
 * shows a command, with each counter's rate since the last, until SIGINT
 * or SIGTERM, or --count answers (exit 0). An instance that goes away
 * ends it with exit 3, one it refuses with 1.
 */
static int watch(const struct ctl_opts *o, const struct rr_ctlcmd *c,
		 const char *line)
{
	struct timespec every = { (time_t)o->watch, 0 }, at;
	bool tty = isatty(STDOUT_FILENO);
	struct json_object *was = NULL;
	unsigned long round;
	char when[32] = "";
	sigset_t stop;
	struct tm tm;
	time_t now;
	int ret;

	/* Taken with sigtimedwait() between two rounds, never in the middle
	 * of one; a background job's ignored SIGINT counts too. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	for (round = 1;; round++) {
		if (!o->json) {
			now = time(NULL);
			if (localtime_r(&now, &tm))
				strftime(when, sizeof(when), "%F %T", &tm);
			printf("%sEvery %lus: reqrouterctl %s of %s, %s\n\n",
			       tty ? "\033[H\033[2J" : "", o->watch, c->name,
			       o->path, when);
		}
		/* stats: each counter's rate since the last answer. */
		ret = answer(o, c, line,
			     rr_ctlcmd_id(c) == RR_CTL_STATS ? &was : NULL,
			     &at);
		if (!o->json)
			putchar('\n');
		fflush(stdout);
		if (ret || round == o->count ||
		    sigtimedwait(&stop, NULL, &every) > 0)
			break;
	}
	json_object_put(was);
	return ret;
}

/*
 * Where stream() writes FILE: a new file beside it (@tmp, its name; "" to
 * write FILE itself), renamed over it once the stream has begun, so that
 * an instance that refuses leaves what FILE held as it was. A FIFO or a
 * device (a live reader, /dev/null) is written itself. NULL and errno if
 * neither can be written.
 */
static FILE *stream_open(const char *path, char *tmp, size_t tmplen)
{
	struct stat st;
	mode_t mode;
	FILE *out;
	int fd;

	tmp[0] = 0;
	if ((!stat(path, &st) && !S_ISREG(st.st_mode)) ||
	    (size_t)snprintf(tmp, tmplen, "%s.XXXXXX", path) >= tmplen) {
		tmp[0] = 0;
		return fopen(path, "w");
	}
	/* One that exists must be ours to write, as fopen() would ask,
	 * and keeps its mode; a new one gets fopen()'s. */
	if (!access(path, F_OK)) {
		if (access(path, W_OK))
			return NULL;
		mode = st.st_mode & 07777;
	} else {
		mode = umask(0);
		umask(mode);
		mode = 0666 & ~mode;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		/* A directory we may not add to, a file in it we may
		 * write: written in place, as before. */
		tmp[0] = 0;
		return errno == EACCES && !access(path, W_OK) ? fopen(path, "w")
							      : NULL;
	}
	fchmod(fd, mode);
	out = fdopen(fd, "w");
	if (!out) {
		close(fd);
		unlink(tmp);
		tmp[0] = 0;
	}
	return out;
}

/*
 * capture, trace: the output opened first (a path that cannot be written
 * is said before the instance is asked anything), then the request and
 * its stream (stream.c). A file takes the stream's place only if it
 * began: a refusal (one at a time, no instance) leaves it untouched.
 */
static int stream(struct ctl_opts *o, const struct rr_ctlcmd *c,
		  const char *line)
{
	const char *name =
		o->write && strcmp(o->write, "-") ? o->write : "stdout";
	char tmp[PATH_MAX];
	FILE *out = stdout;
	int fd, ret;

	tmp[0] = 0;
	if (strcmp(name, "stdout")) {
		out = stream_open(o->write, tmp, sizeof(tmp));
		if (!out) {
			pr_warn("%s: cannot write %s: %s\n", c->name, o->write,
				strerror(errno));
			return 1;
		}
	} else if (rr_ctlcmd_id(c) == RR_CTL_CAPTURE && isatty(STDOUT_FILENO)) {
		pr_warn("capture: -w - writes pcapng, not for a terminal; pipe it (| tcpdump -r -)\n");
		return 2;
	}
	fd = dial(o->path, line, timeout_for(o, c));
	if (fd < 0) {
		ret = 3;
		goto out;
	}
	ret = ctl_stream(fd, o->path, c, timeout_for(o, c), out, name);
	close(fd);
out:
	if (out == stdout)
		return ret;
	/* Nothing written and an error: the instance never began. */
	if (tmp[0] && ret && !ftell(out)) {
		fclose(out);
		unlink(tmp);
		return ret;
	}
	if (fclose(out) && !ret) {
		pr_warn("%s: cannot write %s: %s\n", c->name, o->write,
			strerror(errno));
		ret = 1;
	}
	if (tmp[0] && rename(tmp, o->write)) {
		pr_warn("%s: cannot write %s: %s\n", c->name, o->write,
			strerror(errno));
		unlink(tmp);
		ret = ret ? ret : 1;
	}
	return ret;
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
	struct ctl_opts o = { .wait = RR_DRAIN_TIMEOUT_S,
			      .quiet = RR_DRAIN_QUIET_S };
	char line[PATH_MAX + 16];
	const struct rr_ctlcmd *c;
	bool streams;
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
	streams = rr_ctlcmd_id(c) == RR_CTL_CAPTURE ||
		  rr_ctlcmd_id(c) == RR_CTL_TRACE;
	if (o.count && !o.watch && !streams) {
		pr_warn("--count goes with --watch, capture and trace\n");
		return 2;
	}
	if (!streams && (o.write || o.seconds)) {
		pr_warn("-w and --seconds go with capture and trace\n");
		return 2;
	}
	if (rr_ctlcmd_id(c) != RR_CTL_CAPTURE &&
	    (o.port || o.source || o.snaplen || o.sample)) {
		pr_warn("--port, --source, --snaplen and --sample go with capture\n");
		return 2;
	}
	if (rr_ctlcmd_id(c) == RR_CTL_CAPTURE && !o.write) {
		pr_warn("capture: say where with -w FILE (- for stdout)\n");
		return 2;
	}
	/* -s wins over -c, as knotc's does. */
	if (!o.path[0] && o.config) {
		ret = from_config(&o);
		if (ret)
			return ret;
	}
	if (!o.path[0] && find_socket(o.path, sizeof(o.path)))
		return 3;
	ret = request_line(c, rr_ctlcmd_user_args(c) ? argv[optind + 1] : NULL,
			   &o, line, sizeof(line));
	if (ret)
		return ret;
	if (o.watch)
		return watch(&o, c, line);
	if (streams)
		return stream(&o, c, line);
	ret = answer(&o, c, line, NULL, NULL);
	/* health: an instance that is gone is simply not ready. */
	if (ret == 3 && rr_ctlcmd_id(c) == RR_CTL_HEALTH && o.json)
		printf("{\"ok\":false,\"ready\":false,\"why\":\"not running\"}\n");
	if (!ret && rr_ctlcmd_id(c) == RR_CTL_DRAIN)
		return wait_gone(o.path, o.wait);
	return ret;
}
