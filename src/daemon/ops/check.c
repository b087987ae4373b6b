// SPDX-License-Identifier: GPL-2.0
/*
 * reqrouter --check (as nginx -t, knotc conf-check): everything start-up
 * does before it touches the interface, and nothing after. The command
 * line and the config file go through the settings table as for a start
 * (options.c, with --functions-dir's modules loaded; an interface must be
 * named), and the names are looked up by the start's own functions
 * (rr_check_user(), rr_check_group()), so that both say the same line
 * and exit with the same status; every function that
 * would be served gets its init() with its settings and one
 * init_worker(), then fini() (dns loads its zones, kv its table); the
 * cells' system call filter is built; --user, --control-group and --cpus
 * are looked up. No control socket, metrics file, HTTP listener, XDP
 * program or /run entry is made, and the interface need not exist.
 *
 * One line per problem, FILE:LINE first where the problem has a line,
 * then a verdict on stdout. The exit status is the one a start would
 * have: 2 for a wrong flag or a bad config file (reading stops at the
 * first), 1 for what only set-up finds, 0 when all is well. The verdict
 * names the functions served to an allow-list only with their lists,
 * which the start also says (rr_allow_notice()): a function that answers
 * nobody, because the list has none of its clients, drops their requests
 * in silence, and that is where a newcomer looks first. A function that
 * gathers with no allow-list is warned of as at start, on stderr, and is
 * no problem: its copies are bounded by its budgets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "function.h"
#include "gather.h"
#include "guard.h"
#include "invoker.h"
#include "log.h"
#include "options.h"
#include "seccomp.h"
#include "slots.h"
#include "util.h"

struct check {
	unsigned int problems;
	unsigned int warnings; /* said, but no reason not to start */
	int status;	       /* the worst so far: 0, 1 or 2 */
};

static void problem(struct check *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One problem, said in one line (@fmt ends without a newline). */
static void problem(struct check *c, int status, const char *fmt, ...)
{
	char line[RR_ERRLEN * 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pr_warn("%s\n", line);
	c->problems++;
	if (status > c->status)
		c->status = status;
}

bool rr_check_asked(int argc, char **argv)
{
	static const char flag[] = "--check";
	size_t n;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		n = strlen(argv[i]);
		/* "--ch" is the shortest prefix no other flag shares. */
		if (n >= 4 && n < sizeof(flag) && !strncmp(argv[i], flag, n))
			return true;
	}
	return false;
}

/* --cpus: each must be one this process may run on, or pinning fails. */
static void check_cpus(struct check *c, const struct rr_config *cfg)
{
	char bad[128];
	size_t at = 0;
	cpu_set_t set;
	uint32_t i;

	if (!cfg->ncpus)
		return;
	if (sched_getaffinity(0, sizeof(set), &set)) {
		problem(c, 1, "--cpus: cannot read this process's CPUs: %s",
			strerror(errno));
		return;
	}
	bad[0] = '\0';
	for (i = 0; i < cfg->ncpus && at < sizeof(bad); i++) {
		if (cfg->cpus[i] < CPU_SETSIZE && CPU_ISSET(cfg->cpus[i], &set))
			continue;
		at += (size_t)snprintf(bad + at, sizeof(bad) - at, "%s%d",
				       at ? ", " : "", cfg->cpus[i]);
	}
	if (bad[0])
		problem(c, 1,
			"--cpus: this process may not run on CPU %s (%d CPUs allowed)",
			bad, CPU_COUNT(&set));
}

int rr_check_user(const struct rr_config *cfg, struct passwd *pw, char *err,
		  size_t errlen)
{
	const struct passwd *found;
	char where[PATH_MAX + 32];

	if (!cfg->user[0])
		return 0;
	found = getpwnam(cfg->user);
	if (found) {
		*pw = *found; /* getpwnam()'s storage is reused by later calls */
		return 0;
	}
	rr_config_where(cfg, "user", where, sizeof(where));
	rr_errf(err, errlen, "%s: no user named '%s'", where, cfg->user);
	return 2;
}

int rr_check_group(const struct rr_config *cfg, char *err, size_t errlen)
{
	char where[PATH_MAX + 32];

	if (!cfg->control_group[0] || !strcmp(cfg->control, "none") ||
	    getgrnam(cfg->control_group))
		return 0;
	rr_config_where(cfg, "control_group", where, sizeof(where));
	rr_errf(err, errlen, "%s: no group named '%s'", where,
		cfg->control_group);
	return 1;
}

/* What a start looks up by name before set-up (main.c). */
static void check_names(struct check *c, const struct rr_config *cfg)
{
	char err[RR_ERRLEN];
	struct passwd pw;
	int status;

	status = rr_check_user(cfg, &pw, err, sizeof(err));
	if (status)
		problem(c, status, "%s", err);
	status = rr_check_group(cfg, err, sizeof(err));
	if (status)
		problem(c, status, "%s", err);
}

/*
 * Every served function's init() and one init_worker(), then the cells'
 * filter for them; everything undone again. Their names and ports into
 * @served for the verdict.
 */
static void check_functions(struct check *c, const struct rr_config *cfg,
			    char *served, size_t len)
{
	static struct rr_invoker inv; /* only its slots: the filter's input */
	struct rr_fn_instance *inst[RR_MAX_SLOTS] = { 0 };
	const struct rr_service *svc;
	char err[RR_ERRLEN], allow[512];
	size_t at = 0;
	uint32_t i;

	served[0] = '\0';
	inv.nslots = 0;
	for (i = 0; i < cfg->nservices && inv.nslots < RR_MAX_SLOTS; i++) {
		svc = &cfg->services[i];
		if (!svc->enabled)
			continue;
		inv.slots[inv.nslots].svc = svc;
		if (rr_fn_instance_new_for(svc->fn, svc->port, svc->settings,
					   svc->nsettings, 1, NULL, NULL, cfg,
					   &inst[inv.nslots], err, sizeof(err)))
			problem(c, 1, "%s", err);
		else if (rr_gather_open_notice(cfg, svc))
			c->warnings++; /* as at start: no problem, but said */
		inv.nslots++;
		allow[0] = '\0';
		if (svc->nallow) {
			strcpy(allow, " (only to ");
			rr_allow_text(svc, allow + strlen(allow),
				      sizeof(allow) - strlen(allow) - 1);
			strcat(allow, ")");
		}
		if (at < len)
			at += (size_t)snprintf(served + at, len - at,
					       "%s%s on port %u%s",
					       at ? ", " : "", svc->fn->name,
					       svc->port, allow);
	}
	/* As rr_invoker_setup() groups them and rr_invoker_start() builds
	 * the filters; each says what is wrong itself. */
	inv.cfg = cfg;
	inv.group_threads = cfg->threads;
	if (rr_slots_assign_groups(&inv)) {
		c->problems++;
		if (c->status < 1)
			c->status = 1;
	} else if (cfg->isolation == RR_ISOLATION_CELL &&
		   rr_seccomp_prepare(&inv)) {
		c->problems++;
		if (c->status < 1)
			c->status = 1;
	}
	for (i = inv.nslots; i > 0; i--)
		rr_fn_instance_free(inst[i - 1]);
}

static void verdict(const struct check *c, const struct rr_config *cfg,
		    const char *served)
{
	const char *what = cfg->config_file[0] ? cfg->config_file
					       : "the flags and defaults";

	if (!c->problems)
		printf("reqrouter --check: %s: fine%s; it would serve %s\n",
		       what,
		       !c->warnings	  ? ""
		       : c->warnings == 1 ? ", with the warning above"
					  : ", with the warnings above",
		       served);
	else
		printf("reqrouter --check: %s: %u problem%s; reqrouter would not start (exit %d)\n",
		       what, c->problems, c->problems == 1 ? "" : "s",
		       c->status);
	fflush(stdout);
}

int rr_check_main(int argc, char **argv)
{
	static struct rr_config cfg;
	struct check c = { 0 };
	char err[RR_ERRLEN], served[4096] = "";
	int ret;

	/* Only problems, unless -v: the functions' own notes then too. */
	rr_log_set_level(RR_LOG_WARN);
	/* As a start reads them: no interface is a wrong command line. */
	ret = rr_options_parse(argc, argv, &cfg, err, sizeof(err));
	if (ret == RR_OPTS_EXIT)
		return 0;
	if (ret < 0) {
		problem(&c, 2, "%s", err);
		verdict(&c, &cfg, served);
		rr_config_free(&cfg);
		return c.status;
	}
	if (cfg.verbose)
		rr_log_set_level(cfg.verbose > 1 ? RR_LOG_DEBUG : RR_LOG_INFO);
	check_names(&c, &cfg);
	check_cpus(&c, &cfg);
	check_functions(&c, &cfg, served, sizeof(served));
	verdict(&c, &cfg, served);
	rr_config_free(&cfg);
	return c.status;
}
