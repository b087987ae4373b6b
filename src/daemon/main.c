// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouter: serve registered C functions over UDP through AF_XDP.
 * main() parses the options, sets the invoker up, then sleeps, writing
 * metrics once a second and answering reqrouterctl and HTTP scrapes
 * between ticks, until SIGINT or SIGTERM; then it stops the workers,
 * detaches the program, removes the metrics file and prints the totals.
 * systemd hears about each step through src/daemon/ops/service.c.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pwd.h>
#include <unistd.h>

#include <net/if.h>

#include <cap-ng.h>
#include <linux/capability.h>

#include "busypoll.h"
#include "lifecycle.h"
#include "priority.h"
#include "supervise.h"
#include "check.h"
#include "clock.h"
#include "control.h"
#include "http.h"
#include "invoker.h"
#include "log.h"
#include "metrics.h"
#include "options.h"
#include "owner.h"
#include "registry.h"
#include "service.h"
#include "slots.h"
#include "hh.h"
#include "util.h"

#define TICK_MS 100
/* With cells: while a worker calls functions, and while none does (a
 * cell's death wakes the loop at once through SIGCHLD). */
#define CELL_TICK_MS 1
#define CELL_IDLE_TICK_MS 10

static volatile sig_atomic_t stop_signal, reload_signal;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_signal = 1;
	else if (sig != SIGCHLD)
		stop_signal = sig;
}

/* The functions, their ports and tiers, and each one's rate limit as the
 * config makes it (the default one unless set), with a line on what it
 * means. */
static void list_functions(const struct rr_config *cfg)
{
	char limit[16];
	uint32_t i;

	printf("%-16s %-6s %-9s %-5s %-9s %s\n", "function", "port", "tiers",
	       "pure", "limit/s", "description");
	for (i = 0; i < cfg->nservices; i++) {
		const struct rr_service *svc = &cfg->services[i];

		if (svc->rate_limit)
			snprintf(limit, sizeof(limit), "%u", svc->rate_limit);
		else
			snprintf(limit, sizeof(limit), "off");
		printf("%-16s %-6u %-9s %-5s %-9s %s%s%s%s\n", svc->fn->name,
		       svc->port,
		       rr_registry_xdp(svc->fn->name) ? "xdp,user" : "user",
		       svc->fn->flags & RR_FN_PURE ? "yes" : "no", limit,
		       svc->fn->description,
		       rr_registry_module_of(svc->fn) ? " [module]" : "",
		       svc->fn->flags & RR_FN_GATHER ? " [gathers]" : "",
		       svc->enabled ? ""
		       : (svc->fn->flags & RR_FN_OPT_IN) && !svc->configured
			       ? " (served once configured)"
			       : " (disabled)");
	}
	printf("\nlimit/s: rate_limit, replies a second to one source prefix (/%u, /%u unless\n"
	       "set), limited in XDP before either tier: %u by default, %u for a function\n"
	       "flagged RR_FN_RATE_LIMITED (dns); rate_limit = 0 in its section turns it off.\n"
	       "A validated source (a TCP handshake, a valid DNS cookie, a function's token)\n"
	       "gets %u times it for itself instead (rate_limit_validated, validated_for)\n",
	       RR_DEFAULT_V4_PREFIX, RR_DEFAULT_V6_PREFIX,
	       RR_DEFAULT_RATE_LIMIT, RR_RRL_RATE_LIMIT,
	       RR_VALIDATED_RATE_FACTOR);
}

/*
 * After set-up the main thread keeps what its operations need, and no
 * more: CAP_BPF to read the program's counters and write its maps (ports,
 * sockets, allow-lists, local routes), CAP_NET_ADMIN to detach it at the
 * end and to see a veth peer in another namespace, CAP_NET_RAW to make
 * the AF_XDP sockets of `threads N` and of a deploy that adds a function.
 * Rings and kicks work unprivileged on sockets that exist. Runs before
 * the workers are started; they drop even these (rr_worker_drop_caps).
 */
static int drop_privileges(const char *user, uid_t uid, gid_t gid)
{
	int ret;

	capng_clear(CAPNG_SELECT_BOTH);
	capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED,
		      CAP_NET_ADMIN, CAP_BPF, CAP_NET_RAW, -1);
	ret = capng_change_id((int)uid, (int)gid,
			      CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING);
	if (ret) {
		pr_warn("--user: cannot change to user '%s' (libcap-ng error %d)\n",
			user, ret);
		return -EPERM;
	}
	pr_info("running as user %s (uid %u) with CAP_NET_ADMIN, CAP_NET_RAW and CAP_BPF only\n",
		user, (unsigned int)uid);
	return 0;
}

/*
 * Started under a uid other than root's with ambient capabilities (the
 * unit: User=reqrouter): there is no id to change, but the same trimming
 * after set-up as --user's. With CAP_SETPCAP the bounding set is emptied
 * first, and every worker and cell, made later by this thread, inherits
 * an empty one; then CAP_SETPCAP goes, with what only set-up needed
 * (CAP_PERFMON: no program is loaded later, a deploy's functions are
 * answered in user space; CAP_IPC_LOCK: the UMEMs are registered) and
 * the inheritable and ambient sets. A capability not held is not asked
 * for.
 */
static int trim_capabilities(void)
{
	static const int keep[] = { CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF };
	bool have[ARRAY_SIZE(keep)], bounds;
	capng_select_t set;
	size_t i;
	int ret;

	capng_get_caps_process();
	bounds = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	for (i = 0; i < ARRAY_SIZE(keep); i++)
		have[i] = capng_have_capability(CAPNG_PERMITTED, keep[i]);
	set = bounds ? CAPNG_SELECT_ALL : CAPNG_SELECT_BOTH;
	capng_clear(set);
	for (i = 0; i < ARRAY_SIZE(keep); i++)
		if (have[i])
			capng_update(CAPNG_ADD,
				     CAPNG_EFFECTIVE | CAPNG_PERMITTED,
				     (unsigned int)keep[i]);
	ret = capng_apply(set);
	if (ret) {
		pr_warn("cannot drop the capabilities only set-up needs (libcap-ng error %d)\n",
			ret);
		return -EPERM;
	}
	pr_info("running as uid %u with at most CAP_NET_ADMIN, CAP_NET_RAW and CAP_BPF; %s\n",
		(unsigned int)geteuid(),
		bounds ? "bounding set emptied"
		       : "bounding set kept (emptying it needs CAP_SETPCAP)");
	return 0;
}

static uint64_t now_ms(void)
{
	return rr_now_ns() / 1000000;
}

/*
 * The control socket. One asked for by path or group must work, and one
 * in use means another instance serves this interface: both stop the
 * start-up. The default one is a convenience: if it cannot be made, @why
 * says so and serve() warns once the rest is up.
 */
static int open_control(struct rr_control *ctl, const struct rr_config *cfg,
			char *why, size_t whylen)
{
	char path[sizeof(ctl->path)];
	int ret;

	ctl->fd = -1;
	why[0] = '\0';
	if (!strcmp(cfg->control, "none"))
		return 0;
	if (cfg->control[0])
		snprintf(path, sizeof(path), "%s", cfg->control);
	else
		rr_control_default_path(cfg->ifname, path, sizeof(path));
	ret = rr_control_open(ctl, path, cfg->control_group, why, whylen);
	if (ret &&
	    (cfg->control[0] || cfg->control_group[0] || ret == -EADDRINUSE)) {
		pr_warn("%s\n", why);
		return ret;
	}
	return 0;
}

/*
 * While draining: true once no request has come for the quiet period, or
 * the timeout has passed. @seen and @since track the last change.
 */
static bool drained(struct rr_invoker *inv, uint64_t now, uint64_t *seen,
		    uint64_t *since, uint64_t *started)
{
	uint64_t n = rr_metrics_requests(inv);

	if (!*started) {
		*started = now;
		*since = now;
		*seen = n;
	}
	if (n != *seen) {
		*seen = n;
		*since = now;
	}
	if (now - *since >= inv->drain_quiet_ms) {
		pr_notice("drained: no request for %u ms; stopping\n",
			  inv->drain_quiet_ms);
		return true;
	}
	if (now - *started >= inv->drain_timeout_ms) {
		pr_notice(
			"drain timeout (%u ms): stopping with requests still coming\n",
			inv->drain_timeout_ms);
		return true;
	}
	return false;
}

/* The first SIGTERM drains when drain_on_term says so; another stops. */
static void drain_on_sigterm(struct rr_invoker *inv,
			     const struct rr_config *cfg)
{
	if (stop_signal != SIGTERM || !cfg->drain_on_term || inv->draining)
		return;
	stop_signal = 0;
	inv->drain_timeout_ms = RR_DRAIN_TIMEOUT_S * 1000;
	inv->drain_quiet_ms = RR_DRAIN_QUIET_S * 1000;
	inv->draining = true;
	pr_notice(
		"SIGTERM: draining (health fails; exit after %d s without a request, or %d s)\n",
		RR_DRAIN_QUIET_S, RR_DRAIN_TIMEOUT_S);
}

/*
 * Once a second: the metrics file, and whether the interface and our
 * program are still there. 0, or -errno to stop.
 */
static int each_second(struct rr_invoker *inv, const struct rr_config *cfg,
		       bool *metrics_failing)
{
	char name[IF_NAMESIZE];
	int ret;

	rr_canary_watch(inv, rr_now_ns());
	if (cfg->metrics_file[0]) {
		ret = rr_metrics_write_file(inv, cfg->metrics_file);
		/* Say it once, not every second. */
		if (ret && !*metrics_failing)
			pr_warn("cannot write %s: %s (the directory must be writable%s)\n",
				cfg->metrics_file, strerror(-ret),
				cfg->user[0] ? " by --user" : "");
		*metrics_failing = ret != 0;
	}
	if (inv->link_now.gone ||
	    !if_indextoname((unsigned)inv->ifindex, name)) {
		pr_warn("interface %s is gone; stopping\n", inv->link_now.name);
		inv->xdp.attached = false;
		return -ENODEV;
	}
	if (!rr_xdp_still_attached(&inv->xdp)) {
		pr_warn("the XDP program was removed from %s by someone else; stopping\n",
			cfg->ifname);
		inv->xdp.attached = false;
		return -ENOLINK;
	}
	/* A change only a restart follows: the unit makes it. */
	if (inv->restart_why[0] && rr_service_managed()) {
		pr_warn("%s; stopping for systemd to start reqrouter again\n",
			inv->restart_why);
		return -EAGAIN;
	}
	return 0;
}

/*
 * The time since the loop last woke (@woke; 0 before its first sleep),
 * in which it answered nobody: the longest since start, and since the
 * last GET /metrics (http.c resets that one).
 */
static void count_stall(struct rr_invoker *inv, uint64_t woke)
{
	uint64_t ns = woke ? rr_now_ns() - woke : 0;

	if (ns > inv->stall_max_ns)
		inv->stall_max_ns = ns;
	if (ns > inv->stall_scrape_ns)
		inv->stall_scrape_ns = ns;
}

/* Drops privileges, starts the workers and says it is ready. */
static int start(struct rr_invoker *inv, const struct rr_config *cfg,
		 const struct passwd *pw, const struct rr_control *ctl,
		 const char *ctl_why)
{
	struct sigaction sa = { .sa_handler = on_signal };
	uid_t uid = geteuid();
	int ret;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* Only to cut the loop's sleep short: a cell ended. */
	sigaction(SIGCHLD, &sa, NULL);
	/* What it takes may go with the privileges. */
	rr_priority_setup(inv);
	/* --user naming the user we already are has no id to change. */
	if (pw && (pw->pw_uid != uid || !uid))
		ret = drop_privileges(cfg->user, pw->pw_uid, pw->pw_gid);
	else if (uid)
		ret = trim_capabilities();
	else
		ret = 0;
	if (ret)
		return ret;
	rr_priority_check(inv);
	ret = rr_invoker_start(inv);
	if (ret)
		return ret;
	/* The canaries the config names, beside the functions serving. */
	rr_canary_start_configured(inv);
	/* The socket belongs to the uid that made it. */
	if (ctl->fd >= 0 && uid)
		pr_info("control socket %s (root, uid %u%s)\n", ctl->path,
			(unsigned int)uid, ctl->group ? " and its group" : "");
	else if (ctl->fd >= 0)
		pr_info("control socket %s (%s)\n", ctl->path,
			ctl->group ? "root and its group" : "root only");
	else if (ctl_why[0])
		pr_warn("no control socket: %s\n", ctl_why);
	pr_notice("ready on %s; SIGINT or SIGTERM stops, SIGHUP reloads\n",
		  cfg->ifname);
	rr_service_ready(inv, cfg);
	return 0;
}

static int serve(struct rr_invoker *inv, const struct rr_config *cfg,
		 const struct passwd *pw, struct rr_control *ctl,
		 const char *ctl_why, struct rr_http *http)
{
	uint64_t drain_seen = 0, drain_since = 0, drain_start = 0, woke = 0;
	bool metrics_failing = false;
	uint64_t next_second;
	struct pollfd pfd[2 + RR_CONTROL_CLIENTS];
	bool cells = cfg->isolation == RR_ISOLATION_CELL;
	int ret, tick, n;

	ret = start(inv, cfg, pw, ctl, ctl_why);
	if (ret)
		return ret;
	/* The first round at once: the metrics file is there when "ready"
	 * is said, not a second later. */
	next_second = now_ms();
	for (;;) {
		drain_on_sigterm(inv, cfg);
		if (stop_signal)
			break;
		if (inv->draining && drained(inv, now_ms(), &drain_seen,
					     &drain_since, &drain_start))
			return 0;
		/* Sleeps a tick, or less when a control or HTTP client
		 * calls; both are served here, on the main thread. */
		n = rr_control_pollfds(ctl, pfd);
		pfd[n++] = (struct pollfd){ .fd = http->fd, .events = POLLIN };
		/* Cells are watched closely: a call past max_run_us is found
		 * within a tick of its limit while calls are being made (and
		 * within CELL_IDLE_TICK_MS more for the first after a quiet
		 * spell). */
		tick = !cells	       ? TICK_MS
		       : inv->in_calls ? CELL_TICK_MS
				       : CELL_IDLE_TICK_MS;
		/* A capture's or a trace's records, and a tap's (dnstap
		 * of the reply cache's answers), are read at the tick. */
		if (tick > RR_CONTROL_STREAM_TICK_MS &&
		    (rr_control_streaming(ctl) || inv->xdp.taps))
			tick = RR_CONTROL_STREAM_TICK_MS;
		count_stall(inv, woke);
		poll(pfd, (nfds_t)n, tick);
		woke = rr_now_ns();
		rr_control_serve(ctl, inv, cfg);
		rr_http_serve(http, inv);
		/* As the reload command (control.c): each line of what it
		 * applied and refused is logged as it is decided. */
		if (reload_signal) {
			reload_signal = 0;
			rr_control_reload(ctl, inv, cfg);
		}
		rr_invoker_check_busy_poll(inv);
		rr_invoker_supervise(inv);
		rr_invoker_watch(inv);
		rr_hh_tick(inv);
		rr_steer_tick(inv, rr_slot_sync);
		rr_service_tick(inv);
		if (now_ms() < next_second)
			continue;
		next_second += 1000;
		ret = each_second(inv, cfg, &metrics_failing);
		if (ret)
			return ret;
	}
	pr_notice("signal %d: stopping\n", (int)stop_signal);
	return 0;
}

/*
 * A start refused before set-up (a wrong flag, a bad config file, a user
 * that does not exist): its reason in one line, and @status. In the
 * journal that line is the error a failed start ends with, as after
 * set-up (main()): "did not start: REASON".
 */
static int refuse(bool journal, int status, const char *why)
{
	if (journal)
		pr_err("did not start: %s\n", why);
	else
		pr_err("%s\n", why);
	return status;
}

int main(int argc, char **argv)
{
	static struct rr_invoker inv;
	static struct rr_config cfg;
	struct rr_control ctl = { .fd = -1 };
	struct rr_http http = { .fd = -1 };
	char ctl_why[RR_ERRLEN];
	struct passwd *pw = NULL, user;
	char err[RR_ERRLEN];
	bool journal;
	int ret;

	/* A reader of stdout or stderr that goes away (a pipe, a FIFO) is a
	 * write error, never a death that leaves the XDP program on the
	 * interface; sockets are written with MSG_NOSIGNAL anyway. */
	signal(SIGPIPE, SIG_IGN);
	journal = rr_log_journal();
	/* Before the options, which would ask for an interface. */
	if (rr_check_asked(argc, argv))
		return rr_check_main(argc, argv);
	ret = rr_options_parse(argc, argv, &cfg, err, sizeof(err));
	if (ret < 0)
		return refuse(journal, 2, err);
	if (ret == RR_OPTS_EXIT)
		return 0;
	if (cfg.list) {
		/* The list even where the config could not run: two
		 * functions on one port are what a user looks here for. */
		ret = rr_config_finish(&cfg, err, sizeof(err));
		list_functions(&cfg);
		if (ret)
			pr_warn("%s: reqrouter would not start so\n", err);
		return 0;
	}
	/* Names that are not there are mistakes to report before any
	 * set-up, not after; --check looks them up the same way. */
	ret = rr_check_user(&cfg, &user, err, sizeof(err));
	if (!ret)
		ret = rr_check_group(&cfg, err, sizeof(err));
	if (ret)
		return refuse(journal, ret, err);
	if (cfg.user[0])
		pw = &user;
	rr_log_set_level(cfg.verbose ? RR_LOG_DEBUG : RR_LOG_INFO);
	rr_log_route_libraries();

	/* Before any set-up: a second instance on the same interface is
	 * refused before it touches anything, whatever its control socket. */
	ret = rr_owner_claim(cfg.ifname) == -EBUSY ? -EBUSY : 0;
	if (!ret)
		ret = open_control(&ctl, &cfg, ctl_why, sizeof(ctl_why));
	if (!ret)
		ret = rr_http_open(&http, &cfg);
	if (!ret)
		ret = rr_invoker_setup(&inv, &cfg);
	/* A deploy may bring a function with cells of its own. */
	inv.add_group = rr_invoker_add_group;
	if (!ret)
		ret = serve(&inv, &cfg, pw, &ctl, ctl_why, &http);
	rr_service_stopping();
	rr_http_close(&http);
	rr_invoker_reload_cancel(&inv);
	rr_invoker_stop(&inv);
	rr_control_close(&ctl);
	if (inv.ready) {
		/* Frozen counters left behind would look like a live instance
		 * that serves nothing: the totals go to stdout instead. */
		if (cfg.metrics_file[0])
			unlink(cfg.metrics_file);
		rr_metrics_summary(&inv, stdout);
	}
	/* The reason was a warning among others; in the journal it also
	 * ends the run as an error, for journalctl -p err. */
	if (ret && journal)
		pr_err("%s: %s\n", inv.ready ? "stopped" : "did not start",
		       rr_log_last_problem()[0] ? rr_log_last_problem()
						: "see above");
	rr_invoker_destroy(&inv);
	rr_owner_release();
	rr_config_free(&cfg);
	return ret ? 1 : 0;
}
