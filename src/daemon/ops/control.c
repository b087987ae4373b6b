// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket (see control.h). Everything here runs on the main
 * thread between its ticks: a command never races the workers except
 * through what they already share (counters, the reload's epoch).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_link.h>

#include "capture.h"
#include "clock.h"
#include "control.h"
#include "expo.h"
#include "lifecycle.h"
#include "log.h"
#include "metrics.h"
#include "module.h"
#include "opttable.h"
#include "priority.h"
#include "registry.h"
#include "service.h"
#include "settings.h"
#include "slots.h"
#include "hh.h"
#include "util.h"
#include "version.h"

/* A whole exchange, line in and reply out, or the client is dropped. */
#define CLIENT_DEADLINE_MS 2000

/*
 * What is at the control socket's path: 0 nothing, 1 a socket file that
 * nobody listens on (left by an instance that died: connect() is
 * refused), or -errno: -EADDRINUSE a socket that answers (or whose
 * backlog is full: an instance too busy to take the call), -EEXIST a file
 * that is no socket, anything else a socket we cannot tell about (not
 * ours to remove). Never waits: the probe does not block.
 */
static int probe(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, ret;

	if (lstat(sa->sun_path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ? errno : 0;
	close(fd);
	if (ret == ECONNREFUSED)
		return 1;
	if (ret == ENOENT) /* gone since the lstat() */
		return 0;
	if (!ret || ret == EAGAIN || ret == EINPROGRESS)
		return -EADDRINUSE;
	return -ret;
}

/* Frees client @cl's slot. */
static void client_close(struct rr_ctl_client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	free(cl->out);
	memset(cl, 0, sizeof(*cl));
	cl->fd = -1;
}

int rr_control_open(struct rr_control *c, const char *path, const char *group,
		    char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct group *gr = NULL;
	char dir[sizeof(sa.sun_path)], *slash;
	mode_t mask;
	int ret;

	c->fd = -1;
	c->path[0] = '\0';
	c->started_ns = rr_now_ns();
	for (ret = 0; ret < RR_CONTROL_CLIENTS; ret++)
		c->clients[ret].fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen,
			 "control socket path %s is longer than %zu bytes",
			 path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	if (group && *group) {
		gr = getgrnam(group);
		if (!gr) {
			snprintf(err, errlen,
				 "--control-group: no group named '%s'", group);
			return -ENOENT;
		}
	}
	strcpy(sa.sun_path, path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		/* Only our own default directory is made; any other must
		 * exist, as for every other path we are given. */
		if (!strcmp(dir, RR_CONTROL_DIR) && mkdir(dir, 0755) &&
		    errno != EEXIST) {
			ret = -errno;
			snprintf(err, errlen, "cannot make %s: %s", dir,
				 strerror(-ret));
			return ret;
		}
	}
	ret = probe(&sa);
	if (ret == -EADDRINUSE) {
		snprintf(
			err, errlen,
			"control socket %s is in use by another instance (reqrouterctl --control %s status)",
			path, path);
		return ret;
	}
	if (ret == -EEXIST) {
		snprintf(
			err, errlen,
			"control socket path %s is a file that is no socket; remove it or give another --control",
			path);
		return ret;
	}
	if (ret < 0) {
		snprintf(err, errlen,
			 "cannot tell whether control socket %s is in use: %s",
			 path, strerror(-ret));
		return ret;
	}
	/* Left by an instance that died: nobody listens on it. */
	if (ret == 1) {
		if (unlink(path) && errno != ENOENT) {
			ret = -errno;
			snprintf(
				err, errlen,
				"cannot remove the stale control socket %s: %s",
				path, strerror(-ret));
			return ret;
		}
		pr_info("control socket %s was left by an instance that died; replaced\n",
			path);
	}
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create the control socket: %s",
			 strerror(-ret));
		return ret;
	}
	/*
	 * The socket file is made with its final mode (through the umask,
	 * before any thread exists), so there is no window with looser
	 * rights, and no chmod() by path that a symlink swapped in could
	 * redirect; the group is set on the link itself, never followed.
	 */
	mask = umask(gr ? 0117 : 0177);
	ret = bind(c->fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(mask);
	if (ret || (gr && lchown(path, (uid_t)-1, gr->gr_gid)) ||
	    listen(c->fd, RR_CONTROL_BACKLOG)) {
		ret = -errno;
		/* Not root (the unit), it may give the socket only a group
		 * its user is a member of. */
		if (gr && ret == -EPERM)
			snprintf(
				err, errlen,
				"cannot give control socket %s the group %s: uid %u is not a member (SupplementaryGroups=%s in the unit)",
				path, group, (unsigned int)geteuid(), group);
		else
			snprintf(err, errlen,
				 "cannot set up control socket %s: %s", path,
				 strerror(-ret));
		close(c->fd);
		c->fd = -1;
		unlink(path);
		return ret;
	}
	strcpy(c->path, path);
	c->group = gr != NULL;
	return 0;
}

/* The answer to a client still waiting for a reload at the end. */
#define STOPPED_RELOAD \
	"{\"ok\":false,\"message\":\"reqrouter stopped before the reload was applied\",\"lines\":[]}\n"

void rr_control_close(struct rr_control *c)
{
	struct rr_ctl_client *cl;

	if (c->fd < 0)
		return;
	rr_capture_free(c->capture);
	c->capture = NULL;
	for (cl = c->clients; cl < c->clients + RR_CONTROL_CLIENTS; cl++) {
		/* Told, if it listens, rather than cut off. */
		if (cl->fd >= 0 && cl->reload)
			send(cl->fd, STOPPED_RELOAD, sizeof(STOPPED_RELOAD) - 1,
			     MSG_NOSIGNAL | MSG_DONTWAIT);
		if (cl->fd >= 0)
			client_close(cl);
	}
	close(c->fd);
	c->fd = -1;
	unlink(c->path);
}

/* A reload's report: a summary and a line per key, at most. */
#define RELOAD_MSG_MAX 16384
/* The command line a reload reads back, at most. */
#define CMDLINE_MAX (256 * 1024)
/* getopt's value for a settings row without a letter: FLAG_ROW + its
 * index, as options.c numbers them. */
#define FLAG_ROW 256
#define MAX_FLAGS 64

/*
 * reqrouter's own command line, as the kernel keeps it: *@argv (NULL
 * terminated, *@argc entries) points into *@buf; both malloc()ed.
 */
static int read_cmdline(char **buf, char ***argv, int *argc)
{
	size_t n, i;
	int k = 0;
	FILE *f;

	*buf = malloc(CMDLINE_MAX + 1);
	*argv = NULL;
	*argc = 0;
	f = fopen("/proc/self/cmdline", "re");
	if (!*buf || !f) {
		if (f)
			fclose(f);
		return -errno;
	}
	n = fread(*buf, 1, CMDLINE_MAX, f);
	fclose(f);
	(*buf)[n] = '\0';
	for (i = 0; i < n; i++)
		*argc += !(*buf)[i];
	*argv = calloc((size_t)*argc + 1, sizeof(**argv));
	if (!*argv)
		return -ENOMEM;
	for (i = 0; i < n && k < *argc; i += strlen(*buf + i) + 1)
		(*argv)[k++] = *buf + i;
	*argc = k;
	return 0;
}

/* The settings row of getopt's @key, or NULL. */
static const struct rr_setting *flag_row(int key)
{
	size_t i;

	if (key >= FLAG_ROW && (size_t)(key - FLAG_ROW) < rr_nsettings)
		return &rr_settings[key - FLAG_ROW];
	for (i = 0; i < rr_nsettings; i++)
		if (rr_settings[i].flag && rr_settings[i].letter == key)
			return &rr_settings[i];
	return NULL;
}

/*
 * The config a restart would run with: the defaults, the config file as
 * it is now, then the flags of reqrouter's own command line (read back
 * from /proc/self/cmdline) over it, each through its row of the settings
 * table as at start-up (src/daemon/ops/options.c): a flag keeps overriding
 * the file, and a reload compares like with like. Modules are not loaded
 * again: a changed functions_dir is a key that needs a restart. NULL
 * with one line in @err.
 */
static struct rr_config *restart_config(const struct rr_config *cfg, char *err,
					size_t errlen)
{
	char shortopts[RR_OPT_SHORT_LEN(MAX_FLAGS)], *buf = NULL, **argv;
	struct option longopts[MAX_FLAGS + 1];
	struct rr_opt t[MAX_FLAGS + 1];
	const struct rr_setting *row;
	struct rr_config *next = NULL;
	int argc = 0, key, ret;
	size_t i, n = 0;

	if (rr_nsettings + 3 > MAX_FLAGS) {
		snprintf(err, errlen, "too many settings to read flags for");
		return NULL;
	}
	for (i = 0; i < rr_nsettings; i++)
		if (rr_settings[i].flag)
			t[n++] =
				(struct rr_opt){ rr_settings[i].flag,
						 rr_settings[i].letter
							 ? rr_settings[i].letter
							 : FLAG_ROW + (int)i,
						 rr_settings[i].arg, NULL };
	t[n++] = (struct rr_opt){ "dump-settings", RR_OPT_VERSION - 1, "WHAT",
				  NULL };
	t[n++] = (struct rr_opt)RR_OPT_VERSION_ENTRY;
	t[n++] = (struct rr_opt)RR_OPT_HELP_ENTRY;
	t[n] = (struct rr_opt){ 0 };
	rr_opt_build(t, shortopts, longopts);

	ret = read_cmdline(&buf, &argv, &argc);
	if (ret) {
		snprintf(
			err, errlen,
			"cannot read reqrouter's command line (/proc/self/cmdline): %s",
			strerror(-ret));
		goto out;
	}
	next = rr_config_read(cfg->config_file, err, errlen);
	if (!next)
		goto out;
	opterr = 0;
	optind = 0;
	while ((key = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	       -1) {
		row = flag_row(key);
		if (row && rr_setting_set(row, next, optarg, true, err, errlen))
			goto fail;
	}
	if (!rr_config_finish(next, err, errlen))
		goto out;
fail:
	rr_config_destroy(next);
	next = NULL;
out:
	free(argv);
	free(buf);
	return next;
}

/*
 * Reloads. The config file is read here, at once (it is small); the
 * functions' new states are made on the reload's own thread while the
 * main loop goes on (rr_invoker_reload_start()), and every tick
 * reload_step() asks whether they are made, applies the reload if so and
 * answers the clients that wait for it. A reload asked for while one is
 * under way follows it, reading the file then: a file changed again
 * during a long reload is applied too, and the asker's report says so.
 */

/* The report of reload number c->reload_done: its summary line, then a
 * line per key. */
static char report[RELOAD_MSG_MAX];

/* The report as the reload command's answer: the summary as the message,
 * the other lines in "lines"; ok only if all was applied. */
static void write_report(FILE *f, int ret)
{
	const char *line = report + strcspn(report, "\n");
	char one[RELOAD_MSG_MAX];
	size_t n;

	fprintf(f, "{\"ok\":%s,\"message\":", ret ? "false" : "true");
	snprintf(one, sizeof(one), "%.*s", (int)(line - report), report);
	rr_json_str(f, one);
	fprintf(f, ",\"lines\":[");
	for (n = 0; *line; line += n) {
		line++; /* its newline */
		n = strcspn(line, "\n");
		snprintf(one, sizeof(one), "%.*s", (int)n, line);
		rr_json_str(f, one);
		if (line[n])
			fputc(',', f);
	}
	fprintf(f, "]}\n");
}

/* Client @cl, waiting for a reload that ended, gets its report. */
static void answer_reloaded(struct rr_control *c, struct rr_ctl_client *cl)
{
	size_t len = 0;
	FILE *f;

	cl->reload = 0;
	free(cl->out);
	cl->out = NULL;
	f = open_memstream(&cl->out, &len);
	if (!f) {
		client_close(cl);
		return;
	}
	write_report(f, c->reload_ret);
	if (fclose(f)) {
		client_close(cl);
		return;
	}
	cl->out_len = len;
	cl->out_off = 0;
	cl->writing = true;
	/* The exchange's deadline, from now: the wait was the reload's. */
	cl->deadline_ns = rr_now_ns() + CLIENT_DEADLINE_MS * 1000000ULL;
}

/* Reload number c->reload_seq has ended, @ret as rr_invoker_reload_poll()
 * returns, its report written: systemd's status, and its clients. */
static void reload_ended(struct rr_control *c, int ret)
{
	struct rr_ctl_client *cl;

	c->reload_done = c->reload_seq;
	c->reload_ret = ret;
	/* The summary, the first line: a newline would end STATUS=. */
	rr_service_status("reload: %.*s", (int)strcspn(report, "\n"), report);
	for (cl = c->clients; cl < c->clients + RR_CONTROL_CLIENTS; cl++)
		if (cl->fd >= 0 && cl->reload && cl->reload <= c->reload_done)
			answer_reloaded(c, cl);
}

/* The next reload begins: the config a restart would run with, and its
 * new states being made. */
static void reload_begin(struct rr_control *c, struct rr_invoker *inv,
			 const struct rr_config *cfg)
{
	struct rr_config *next;
	char err[RR_ERRLEN];
	int ret;

	c->reload_seq++;
	c->reload_again = false;
	next = restart_config(cfg, err, sizeof(err));
	if (!next) {
		pr_warn("reload: %s; nothing changed\n", err);
		snprintf(report, sizeof(report), "%s; nothing changed", err);
		reload_ended(c, -EINVAL);
		return;
	}
	ret = rr_invoker_reload_start(inv, next);
	if (ret) {
		rr_config_destroy(next);
		snprintf(report, sizeof(report),
			 "cannot start the reload: %s; nothing changed",
			 strerror(-ret));
		pr_warn("reload: %s\n", report);
		reload_ended(c, ret);
		return;
	}
	pr_info("reload: config read; the functions' new state is being made in the background\n");
	rr_service_status("reload: under way");
}

/* A reload asked for: the number of the one whose report answers. */
static uint64_t reload_ask(struct rr_control *c, struct rr_invoker *inv,
			   const struct rr_config *cfg)
{
	if (!inv->reload) {
		reload_begin(c, inv, cfg);
		return c->reload_seq;
	}
	if (!c->reload_again)
		pr_info("reload: asked for while one is under way: another follows it\n");
	c->reload_again = true;
	return c->reload_seq + 1;
}

void rr_control_reload(struct rr_control *c, struct rr_invoker *inv,
		       const struct rr_config *cfg)
{
	reload_ask(c, inv, cfg);
}

/* Every tick: a reload whose states are made is applied, and once it is
 * over (its old states freed), one asked for meanwhile begins. */
static void reload_step(struct rr_control *c, struct rr_invoker *inv,
			const struct rr_config *cfg)
{
	int ret;

	if (inv->reload) {
		ret = rr_invoker_reload_poll(inv, report, sizeof(report));
		if (ret != -EINPROGRESS)
			reload_ended(c, ret);
	}
	if (c->reload_again && !inv->reload)
		reload_begin(c, inv, cfg);
}

/*
 * One per row of rr_ctlcmds[]: answers the request with one JSON object
 * on @f. @arg is what followed the name and its space ("" for a command
 * without arguments, or whose optional ones were left out; never empty
 * otherwise).
 */
typedef void handler_fn(struct rr_control *c, struct rr_invoker *inv,
			const struct rr_config *cfg, const char *arg, FILE *f);

/* The answer to a command that changes something: its outcome, in one
 * line. */
static void reply(FILE *f, int ret, const char *msg)
{
	fprintf(f, "{\"ok\":%s,\"message\":", ret ? "false" : "true");
	rr_json_str(f, msg);
	fprintf(f, "}\n");
}

/* Function slot @s's version and share, and its canary's module, share,
 * version and quarantine as "canary" while one runs. */
static void status_canary(FILE *f, const struct rr_invoker *inv,
			  const struct rr_slot *s)
{
	const struct rr_slot *cs = rr_slot_canary(inv, s);
	const struct rr_module *mod;
	char v[64];

	fprintf(f, ",\"version\":");
	rr_json_str(f, rr_fn_version(s, v, sizeof(v)));
	fprintf(f, ",\"share\":%.1f",
		cs ? 100 - s->canary_permille / 10.0 : 100.0);
	if (!cs)
		return;
	fprintf(f, ",\"canary\":{\"share\":%.1f,\"quarantined\":%s,\"module\":",
		s->canary_permille / 10.0, cs->quarantined ? "true" : "false");
	mod = rr_registry_module_of(cs->svc->fn);
	if (mod)
		rr_json_str(f, mod->path);
	else
		fprintf(f, "null");
	fprintf(f, ",\"version\":");
	rr_json_str(f, rr_fn_version(cs, v, sizeof(v)));
	fprintf(f, "}");
}

static void cmd_status(struct rr_control *c, struct rr_invoker *inv,
		       const struct rr_config *cfg, const char *arg, FILE *f)
{
	const char *why = rr_invoker_not_ready(inv);
	struct rr_module *mod;
	uint32_t slot, n;
	char mac[18];

	fprintf(f, "{\"ok\":true,\"version\":");
	rr_json_str(f, RR_VERSION);
	fprintf(f, ",\"pid\":%d,\"interface\":", (int)getpid());
	rr_json_str(f, cfg->ifname);
	fprintf(f,
		",\"ifindex\":%d,\"xdp_mode\":\"%s\",\"zerocopy\":%s,\"queues\":%u,\"threads\":%u,\"cell_groups\":%u,\"busy_poll\":%s,\"isolation\":\"%s\",\"tx_csum\":\"%s\",\"uptime_s\":%.1f,\"ready\":%s",
		inv->ifindex,
		inv->xdp.flags & XDP_FLAGS_DRV_MODE ? "native" : "skb",
		inv->zerocopy ? "true" : "false", inv->nqueues,
		inv->group_threads, inv->ngroups,
		cfg->busy_poll ? "true" : "false",
		cfg->isolation == RR_ISOLATION_CELL ? "cell" : "thread",
		inv->tx_csum_offload ? "offload" : "soft",
		(double)(rr_now_ns() - c->started_ns) / 1e9,
		why ? "false" : "true");
	/* The main loop's longest stall since start (main.c), and whether a
	 * reload's new states are being made. */
	fprintf(f, ",\"reloading\":%s,\"max_stall_s\":%.3f",
		inv->reload ? "true" : "false",
		(double)inv->stall_max_ns / 1e9);
	if (why) {
		fprintf(f, ",\"why\":");
		rr_json_str(f, why);
	}
	fprintf(f, ",\"veth_peer\":\"%s\"", rr_peer_label(inv->peer));
	fprintf(f, ",\"mtu\":%u,\"mac\":\"%s\",\"rx_queues\":%u,\"link_up\":%s",
		inv->link_now.mtu, rr_link_mac_str(inv->link_now.mac, mac),
		inv->link_now.rx_queues, inv->link_now.up ? "true" : "false");
	if (inv->restart_why[0]) {
		fprintf(f, ",\"restart_needed\":");
		rr_json_str(f, inv->restart_why);
	}
	fprintf(f, ",\"worker_priority\":\"%s\"", rr_priority_mode(inv));
	/* worker_priority = auto: those at realtime priority now. */
	if (!strcmp(rr_priority_mode(inv), "auto"))
		fprintf(f, ",\"workers_raised\":%u", rr_priority_raised(inv));
	fprintf(f, ",\"coalesce_us\":%u",
		inv->cfg->busy_poll ? 0 : inv->cfg->coalesce_us);
	fprintf(f, ",\"functions\":[");
	for (slot = 0, n = 0; slot < inv->nslots; slot++) {
		const struct rr_service *svc = inv->slots[slot].svc;

		if (inv->slots[slot].canary_of)
			continue; /* shown with its function */
		fprintf(f, "%s{\"name\":", n++ ? "," : "");
		rr_json_str(f, svc->fn->name);
		fprintf(f,
			",\"port\":%u,\"tier\":\"%s\",\"cell_group\":%u,\"deadline_us\":%u,\"cached\":%s,\"in_kernel\":%s,\"pure\":%s,\"stateful\":%s,\"removed\":%s,\"quarantined\":%s,\"module\":",
			svc->port, inv->slots[slot].tier_xdp ? "xdp" : "user",
			inv->slots[slot].cell_group, svc->deadline_us,
			inv->slots[slot].cached ? "true" : "false",
			rr_slot_in_kernel(inv, &inv->slots[slot]) ? "true"
								  : "false",
			svc->fn->flags & RR_FN_PURE ? "true" : "false",
			svc->fn->init ? "true" : "false",
			inv->slots[slot].removed ? "true" : "false",
			inv->slots[slot].quarantined ? "true" : "false");
		mod = rr_registry_module_of(svc->fn);
		if (mod)
			rr_json_str(f, mod->path);
		else
			fprintf(f, "null");
		status_canary(f, inv, &inv->slots[slot]);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
}

static void cmd_stats(struct rr_control *c, struct rr_invoker *inv,
		      const struct rr_config *cfg, const char *arg, FILE *f)
{
	rr_metrics_json(inv, f);
}

static void cmd_health(struct rr_control *c, struct rr_invoker *inv,
		       const struct rr_config *cfg, const char *arg, FILE *f)
{
	const char *why = rr_invoker_not_ready(inv);

	if (!why) {
		fprintf(f, "{\"ok\":true,\"ready\":true}\n");
		return;
	}
	fprintf(f, "{\"ok\":true,\"ready\":false,\"why\":");
	rr_json_str(f, why);
	fprintf(f, "}\n");
}

/* Answered once the reload it asked for has ended, with its report
 * (write_report()); the client waits, the others are served meanwhile. */
static void cmd_reload(struct rr_control *c, struct rr_invoker *inv,
		       const struct rr_config *cfg, const char *arg, FILE *f)
{
	c->asked = reload_ask(c, inv, cfg);
}

/* "deploy FILE.so", or "deploy --canary PERCENT FILE.so" (canary.c). */
static void cmd_deploy(struct rr_control *c, struct rr_invoker *inv,
		       const struct rr_config *cfg, const char *arg, FILE *f)
{
	size_t flag = strlen(RR_CTL_CANARY_FLAG " ");
	char msg[RR_ERRLEN * 2] = "", share[16];
	unsigned int permille;
	const char *path;
	int ret;

	if (strncmp(arg, RR_CTL_CANARY_FLAG " ", flag)) {
		ret = rr_invoker_deploy(inv, arg, msg, sizeof(msg));
		reply(f, ret, msg);
		return;
	}
	path = strchr(arg + flag, ' ');
	snprintf(share, sizeof(share), "%.*s",
		 path ? (int)(path - arg - flag) : 15, arg + flag);
	ret = rr_parse_canary_share(share, &permille, msg, sizeof(msg));
	if (!ret && !path) {
		snprintf(msg, sizeof(msg), "deploy --canary PERCENT FILE.so");
		ret = -EINVAL;
	}
	if (!ret)
		ret = rr_invoker_canary(inv, path + 1, permille, msg,
					sizeof(msg));
	reply(f, ret, msg);
}

/* promote NAME, rollback NAME (canary.c). */
static void cmd_promote(struct rr_control *c, struct rr_invoker *inv,
			const struct rr_config *cfg, const char *arg, FILE *f)
{
	char msg[RR_ERRLEN * 2] = "";

	reply(f, rr_invoker_promote(inv, arg, msg, sizeof(msg)), msg);
}

static void cmd_rollback(struct rr_control *c, struct rr_invoker *inv,
			 const struct rr_config *cfg, const char *arg, FILE *f)
{
	char msg[RR_ERRLEN * 2] = "";

	reply(f, rr_invoker_rollback(inv, arg, msg, sizeof(msg)), msg);
}

static void cmd_remove(struct rr_control *c, struct rr_invoker *inv,
		       const struct rr_config *cfg, const char *arg, FILE *f)
{
	char msg[RR_ERRLEN * 2] = "";
	int ret = rr_invoker_remove(inv, arg, msg, sizeof(msg));

	reply(f, ret, msg);
}

static void cmd_threads(struct rr_control *c, struct rr_invoker *inv,
			const struct rr_config *cfg, const char *arg, FILE *f)
{
	char msg[RR_ERRLEN * 2] = "";
	unsigned long n;
	int ret;

	ret = rr_parse_ulong(arg, 1, RR_MAX_THREADS, &n);
	if (ret)
		snprintf(msg, sizeof(msg),
			 "threads takes a number 1-%d, not '%.32s'",
			 RR_MAX_THREADS, arg);
	else
		ret = rr_invoker_set_threads(inv, (uint32_t)n, msg,
					     sizeof(msg));
	reply(f, ret, msg);
}

static void cmd_drain(struct rr_control *c, struct rr_invoker *inv,
		      const struct rr_config *cfg, const char *arg, FILE *f)
{
	char msg[RR_ERRLEN * 2] = "";
	unsigned int timeout, quiet;

	if (sscanf(arg, "%u %u", &timeout, &quiet) != 2 || !timeout || !quiet ||
	    quiet > timeout || timeout > RR_CONTROL_DRAIN_MAX_S) {
		snprintf(
			msg, sizeof(msg),
			"drain takes TIMEOUT QUIET in seconds, 1 <= QUIET <= TIMEOUT <= %d",
			RR_CONTROL_DRAIN_MAX_S);
		reply(f, -EINVAL, msg);
		return;
	}
	inv->drain_timeout_ms = timeout * 1000;
	inv->drain_quiet_ms = quiet * 1000;
	inv->draining = true;
	snprintf(
		msg, sizeof(msg),
		"draining: health fails now; exit once no request came for %u s, or after %u s",
		quiet, timeout);
	pr_notice("%s\n", msg);
	reply(f, 0, msg);
}

static void cmd_unquarantine(struct rr_control *c, struct rr_invoker *inv,
			     const struct rr_config *cfg, const char *arg,
			     FILE *f)
{
	char msg[RR_ERRLEN * 2] = "";
	int ret = rr_invoker_unquarantine(inv, arg, msg, sizeof(msg));

	reply(f, ret, msg);
}

/* Who calls: every function's heavy hitters, or @arg's (hh.c). */
static void cmd_top(struct rr_control *c, struct rr_invoker *inv,
		    const struct rr_config *cfg, const char *arg, FILE *f)
{
	rr_hh_json(inv, arg, f);
}

/* capture, trace: the session begun, and the client streams it once
 * this line is out; or the one line that says why not. */
static void start_stream(struct rr_control *c, struct rr_invoker *inv,
			 enum rr_capture_kind kind, const char *arg, FILE *f)
{
	char err[256];
	int ret;

	ret = rr_capture_start(&c->capture, inv, kind, arg, err, sizeof(err));
	if (ret) {
		reply(f, ret, err);
		return;
	}
	reply(f, 0, kind == RR_CAPTURE_PCAP ? "capturing" : "tracing");
	c->streaming = 1 + (int)kind;
}

static void cmd_capture(struct rr_control *c, struct rr_invoker *inv,
			const struct rr_config *cfg, const char *arg, FILE *f)
{
	start_stream(c, inv, RR_CAPTURE_PCAP, arg, f);
}

static void cmd_trace(struct rr_control *c, struct rr_invoker *inv,
		      const struct rr_config *cfg, const char *arg, FILE *f)
{
	start_stream(c, inv, RR_CAPTURE_TRACE, arg, f);
}

static handler_fn *const handlers[RR_CTL_NCMDS] = {
	[RR_CTL_STATUS] = cmd_status,
	[RR_CTL_STATS] = cmd_stats,
	[RR_CTL_HEALTH] = cmd_health,
	[RR_CTL_RELOAD] = cmd_reload,
	[RR_CTL_DEPLOY] = cmd_deploy,
	[RR_CTL_REMOVE] = cmd_remove,
	[RR_CTL_THREADS] = cmd_threads,
	[RR_CTL_DRAIN] = cmd_drain,
	[RR_CTL_UNQUARANTINE] = cmd_unquarantine,
	[RR_CTL_TOP] = cmd_top,
	[RR_CTL_CAPTURE] = cmd_capture,
	[RR_CTL_TRACE] = cmd_trace,
	[RR_CTL_PROMOTE] = cmd_promote,
	[RR_CTL_ROLLBACK] = cmd_rollback,
};

/* The answer to a line that names no command: the ones there are. */
static void reply_unknown(FILE *f, const char *line)
{
	char msg[RR_CONTROL_MAX_LINE + 256];
	size_t n;
	int i;

	n = (size_t)snprintf(msg, sizeof(msg), "unknown command '%.64s' (",
			     line);
	for (i = 0; i < RR_CTL_NCMDS && n < sizeof(msg); i++)
		n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s%s",
				      i ? ", " : "", rr_ctlcmds[i].name);
	if (n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n, ")");
	reply(f, -EINVAL, msg);
}

/* Whether @pid is a child of this process: a cell, a worker's or a TCP
 * loop's, whatever its kind. */
static bool our_child(pid_t pid)
{
	char path[32], line[64];
	bool child = true;
	long ppid;
	FILE *f;

	/* 0: a client in another pid namespace (a sandbox's), where no
	 * cell of ours is; unreadable: the cells' pids were checked. */
	if (pid <= 0 || pid == getpid())
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %ld", &ppid) == 1) {
			child = ppid == (long)getpid();
			break;
		}
	fclose(f);
	return child;
}

/*
 * Whether the client on @fd may change the instance: root, or the user
 * the instance runs as, but not one of its own cells, a worker's or a TCP
 * loop's (which under --user run as that user, and whose functions a
 * `syscalls` setting may let connect).
 * Members of --control-group only read. The kernel says who connected
 * (SO_PEERCRED, its uid into *@uid); nothing the client sends is asked.
 */
static bool may_change(int fd, const struct rr_invoker *inv, uint32_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	uint32_t i;

	*uid = (uint32_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    len != sizeof(cred))
		return false;
	*uid = (uint32_t)cred.uid;
	for (i = 0; inv->workers && i < RR_NWORKERS(inv); i++)
		if (inv->workers[i].pid && inv->workers[i].pid == cred.pid)
			return false;
	for (i = 0; i < RR_TCP_LOOPS; i++)
		if (inv->tcp.loops[i].pid && inv->tcp.loops[i].pid == cred.pid)
			return false;
	if (our_child(cred.pid))
		return false;
	return cred.uid == 0 || cred.uid == geteuid();
}

/* The request @line answered on @f: one lookup in the table, then the
 * row's handler. */
static void dispatch(struct rr_control *c, struct rr_invoker *inv,
		     const struct rr_config *cfg, const char *line,
		     bool changer, FILE *f)
{
	size_t len = strcspn(line, " ");
	const struct rr_ctlcmd *cmd = rr_ctlcmd_find(line, len);
	/* The name alone, where the arguments may be left out. */
	bool bare = cmd && cmd->optional && !line[len];
	char msg[160];

	/* A command with arguments is "NAME ARGS", one without "NAME". */
	if (!cmd || (!bare && line[len] != (cmd->nargs ? ' ' : '\0'))) {
		reply_unknown(f, line);
		return;
	}
	if (cmd->nargs && !bare && !line[len + 1]) {
		snprintf(msg, sizeof(msg), "%s needs an argument", cmd->name);
		reply(f, -EINVAL, msg);
		return;
	}
	if (cmd->mutating && !changer) {
		snprintf(
			msg, sizeof(msg),
			"%s changes the instance: only root and the user it runs as (uid %u) may; the control group may only read",
			cmd->name, (unsigned int)geteuid());
		reply(f, -EPERM, msg);
		return;
	}
	/* Both change the functions or the workers that the reload's new
	 * states are being made for. */
	if (inv->reload && (rr_ctlcmd_id(cmd) == RR_CTL_DEPLOY ||
			    rr_ctlcmd_id(cmd) == RR_CTL_THREADS ||
			    rr_ctlcmd_id(cmd) == RR_CTL_PROMOTE ||
			    rr_ctlcmd_id(cmd) == RR_CTL_ROLLBACK)) {
		snprintf(msg, sizeof(msg),
			 "a reload is under way; %s once it is done",
			 cmd->name);
		reply(f, -EBUSY, msg);
		return;
	}
	handlers[rr_ctlcmd_id(cmd)](
		c, inv, cfg, cmd->nargs && !bare ? line + len + 1 : "", f);
}

/* The reply to the line in @cl->in, ready to write. */
static void client_answer(struct rr_control *c, struct rr_ctl_client *cl,
			  struct rr_invoker *inv, const struct rr_config *cfg)
{
	size_t len = 0;
	FILE *f;

	f = open_memstream(&cl->out, &len);
	if (!f) {
		client_close(cl);
		return;
	}
	cl->in[strcspn(cl->in, "\r\n")] = '\0';
	if (cl->too_long)
		reply(f, -E2BIG,
		      "the command line is longer than " STR(
			      RR_CONTROL_MAX_LINE) " bytes");
	else
		dispatch(c, inv, cfg, cl->in, cl->changer, f);
	if (fclose(f)) {
		client_close(cl);
		return;
	}
	if (c->asked) {
		/* A reload's: answered with its report once it has ended
		 * (it may have already, refused at once). */
		cl->reload = c->asked;
		c->asked = 0;
		if (cl->reload <= c->reload_done)
			answer_reloaded(c, cl);
		return;
	}
	cl->out_len = len;
	cl->writing = true;
	cl->stream = c->streaming;
	c->streaming = 0;
}

/*
 * Reads what client @cl has sent, without waiting: a whole line (or the
 * connection's end after some bytes) is answered; a line that does not
 * fit is refused, never cut and run.
 */
static void client_read(struct rr_control *c, struct rr_ctl_client *cl,
			struct rr_invoker *inv, const struct rr_config *cfg)
{
	ssize_t r;

	for (;;) {
		if (cl->in_len == sizeof(cl->in) - 1) {
			/* Full without a newline: too long. */
			cl->too_long = true;
			client_answer(c, cl, inv, cfg);
			return;
		}
		r = read(cl->fd, cl->in + cl->in_len,
			 sizeof(cl->in) - 1 - cl->in_len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		if (r <= 0) {
			if (r == 0 && cl->in_len)
				client_answer(c, cl, inv, cfg);
			else
				client_close(cl);
			return;
		}
		cl->in_len += (size_t)r;
		cl->in[cl->in_len] = '\0';
		if (memchr(cl->in, '\n', cl->in_len)) {
			cl->too_long =
				strcspn(cl->in, "\n") > RR_CONTROL_MAX_LINE;
			client_answer(c, cl, inv, cfg);
			return;
		}
	}
}

/* Sends what it can of the @len bytes at @buf to @cl: the bytes sent,
 * or -1 once the client went away. */
static ssize_t client_send(struct rr_ctl_client *cl, const char *buf,
			   size_t len)
{
	size_t off = 0;
	ssize_t r;

	while (off < len) {
		/* A client gone meanwhile is no reason to die of SIGPIPE. */
		r = send(cl->fd, buf + off, len - off, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			break;
		if (r <= 0)
			return -1;
		off += (size_t)r;
	}
	return (ssize_t)off;
}

/* Writes what it can of @cl's reply; closes the connection once all of
 * it is out, or the client went away. */
static void client_write(struct rr_ctl_client *cl)
{
	ssize_t r;

	r = client_send(cl, cl->out + cl->out_off, cl->out_len - cl->out_off);
	if (r >= 0)
		cl->out_off += (size_t)r;
	if (r >= 0 && cl->out_off < cl->out_len)
		return;
	client_close(cl);
}

/*
 * A capture's or a trace's client: its reply line, then its session's
 * stream, as far as it takes them. The session ends when the client goes
 * away (it sends nothing, so anything read is its end), and the client
 * is closed once the session has ended and all of it is out.
 */
static void client_stream(struct rr_control *c, struct rr_ctl_client *cl)
{
	enum rr_capture_kind kind = (enum rr_capture_kind)(cl->stream - 1);
	const char *buf = NULL;
	char sink[64];
	size_t len;
	ssize_t r;

	r = read(cl->fd, sink, sizeof(sink));
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
		goto gone;
	if (cl->out_off < cl->out_len) {
		r = client_send(cl, cl->out + cl->out_off,
				cl->out_len - cl->out_off);
		if (r < 0)
			goto gone;
		cl->out_off += (size_t)r;
		if (cl->out_off < cl->out_len)
			return;
	}
	len = rr_capture_pending(c->capture, kind, &buf);
	if (len) {
		r = client_send(cl, buf, len);
		if (r < 0)
			goto gone;
		rr_capture_sent(c->capture, kind, (size_t)r);
	}
	if (!rr_capture_done(c->capture, kind))
		return;
gone:
	rr_capture_stop(c->capture, kind);
	client_close(cl);
}

bool rr_control_streaming(const struct rr_control *c)
{
	const struct rr_ctl_client *cl;

	for (cl = c->clients; cl < c->clients + RR_CONTROL_CLIENTS; cl++)
		if (cl->fd >= 0 && cl->stream)
			return true;
	return false;
}

/*
 * Admission. The backlog is read through every call, so a client of
 * root's never waits behind a crowd of others': each connection is
 * taken or refused at once, by who it is (SO_PEERCRED). Root and the
 * service's user (may_change()) get a free slot, or the one that
 * another user's client has held longest; any other user gets a free
 * slot while it holds fewer than RR_CONTROL_PER_UID, and is refused
 * otherwise, with one line saying why. Each is counted
 * (inv->control_events), never logged: a crowd must not flood the log.
 */

/* Whether a connection could be taken now: a slot is free, or held by a
 * client that root's or the service user's would take it from. */
static bool room(const struct rr_control *c)
{
	const struct rr_ctl_client *cl;

	for (cl = c->clients; cl < c->clients + RR_CONTROL_CLIENTS; cl++)
		if (cl->fd < 0 || !cl->changer)
			return true;
	return false;
}

/* The slots held by clients of @uid that may not change the instance. */
static unsigned int held_by(const struct rr_control *c, uint32_t uid)
{
	const struct rr_ctl_client *cl;
	unsigned int n = 0;

	for (cl = c->clients; cl < c->clients + RR_CONTROL_CLIENTS; cl++)
		n += cl->fd >= 0 && !cl->changer && cl->uid == uid;
	return n;
}

/* A free slot, or NULL. */
static struct rr_ctl_client *free_slot(struct rr_control *c)
{
	struct rr_ctl_client *cl;

	for (cl = c->clients; cl < c->clients + RR_CONTROL_CLIENTS; cl++)
		if (cl->fd < 0)
			return cl;
	return NULL;
}

/* The client that may not change the instance and has held its slot
 * longest (the earliest deadline), or NULL. */
static struct rr_ctl_client *oldest_other(struct rr_control *c)
{
	struct rr_ctl_client *cl, *old = NULL;

	for (cl = c->clients; cl < c->clients + RR_CONTROL_CLIENTS; cl++)
		if (cl->fd >= 0 && !cl->changer &&
		    (!old || cl->deadline_ns < old->deadline_ns))
			old = cl;
	return old;
}

/* Tells the client on @fd that it got no slot, if it listens (never
 * waiting), and closes it. */
static void refuse(int fd, const char *why)
{
	char line[320];
	int n;

	n = snprintf(line, sizeof(line),
		     "{\"ok\":false,\"message\":\"busy: %s; try again\"}\n",
		     why);
	if (n > 0 && (size_t)n < sizeof(line))
		send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

/* The new connection @fd gets a slot, or is refused (room() was true). */
static void admit(struct rr_control *c, struct rr_invoker *inv, int fd,
		  uint64_t now)
{
	struct rr_ctl_client *cl;
	char why[192];
	bool changer;
	uint32_t uid;

	changer = may_change(fd, inv, &uid);
	cl = free_slot(c);
	if (!changer && held_by(c, uid) >= RR_CONTROL_PER_UID) {
		snprintf(
			why, sizeof(why),
			"uid %u holds %d connections to the control socket, the most for a user other than root or the service's",
			(unsigned int)uid, RR_CONTROL_PER_UID);
		inv->control_events[RR_CONTROL_EV_REFUSED_UID]++;
		refuse(fd, why);
		return;
	}
	if (!changer && !cl) {
		snprintf(why, sizeof(why),
			 "all %d of the control socket's slots are taken",
			 RR_CONTROL_CLIENTS);
		inv->control_events[RR_CONTROL_EV_REFUSED_FULL]++;
		refuse(fd, why);
		return;
	}
	if (!cl) {
		/* Root's or the service user's: another's slot. */
		cl = oldest_other(c);
		if (!cl) { /* not without room() */
			close(fd);
			return;
		}
		if (cl->stream)
			rr_capture_stop(c->capture,
					(enum rr_capture_kind)(cl->stream - 1));
		if (!cl->writing)
			refuse(cl->fd,
			       "the slot went to root or the service's user");
		else
			close(cl->fd);
		cl->fd = -1;
		client_close(cl);
		inv->control_events[RR_CONTROL_EV_EVICTED]++;
	}
	cl->fd = fd;
	cl->changer = changer;
	cl->uid = uid;
	cl->deadline_ns = now + CLIENT_DEADLINE_MS * 1000000ULL;
	inv->control_events[RR_CONTROL_EV_ACCEPTED]++;
}

/* Takes the connections waiting, as many as the backlog holds at most,
 * while any could get a slot. */
static void take_clients(struct rr_control *c, struct rr_invoker *inv,
			 uint64_t now)
{
	int i, fd;

	for (i = 0; i < RR_CONTROL_BACKLOG && room(c); i++) {
		fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			break;
		admit(c, inv, fd, now);
	}
}

int rr_control_pollfds(const struct rr_control *c, struct pollfd *pfd)
{
	const struct rr_ctl_client *cl;
	int n = 0;

	if (c->fd < 0)
		return 0;
	/* Left in the backlog, it would wake the loop at once, every time. */
	if (room(c))
		pfd[n++] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
	/* One waiting for a reload has nothing to say until it ends. */
	for (cl = c->clients; cl < c->clients + RR_CONTROL_CLIENTS; cl++)
		if (cl->fd >= 0 && !cl->reload)
			pfd[n++] = (struct pollfd){
				.fd = cl->fd,
				/* A stream is written every tick; its
				 * client's end is what wakes the loop. */
				.events = cl->writing && !cl->stream ? POLLOUT
								     : POLLIN,
			};
	return n;
}

/*
 * Never waits: moves a reload on, takes the connections waiting
 * (take_clients()), moves every client on as far as its bytes allow, and
 * drops any that has not finished its exchange within CLIENT_DEADLINE_MS
 * (but for the wait for a reload). A client that sends a byte at a time,
 * or reads its reply slowly, holds only its own slot; the main loop's
 * supervision, health and metrics go on.
 */
void rr_control_serve(struct rr_control *c, struct rr_invoker *inv,
		      const struct rr_config *cfg)
{
	uint64_t now = rr_now_ns();
	struct rr_ctl_client *cl;

	reload_step(c, inv, cfg);
	/* The taps' records are read without a control socket too. */
	rr_capture_tick(&c->capture, inv);
	if (c->fd < 0)
		return;
	take_clients(c, inv, now);
	for (cl = c->clients; cl < c->clients + RR_CONTROL_CLIENTS; cl++) {
		if (cl->fd < 0 || cl->reload)
			continue;
		/* A stream has no deadline: it lasts as its session does. */
		if (cl->stream) {
			client_stream(c, cl);
			continue;
		}
		if (now > cl->deadline_ns) {
			inv->control_events[RR_CONTROL_EV_TIMED_OUT]++;
			client_close(cl);
			continue;
		}
		if (!cl->writing)
			client_read(c, cl, inv, cfg);
		if (cl->fd >= 0 && cl->stream)
			client_stream(c, cl);
		else if (cl->fd >= 0 && cl->writing)
			client_write(cl);
	}
}
