// SPDX-License-Identifier: GPL-2.0
/*
 * The table of control commands (see ctlcmd.h): the one place a command
 * is named, with its arguments and its help line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlcmd.h"
#include "parse.h"
#include "settings.h"

const struct rr_ctlcmd rr_ctlcmds[RR_CTL_NCMDS] = {
	[RR_CTL_STATUS] = {
		.name = "status",
		.help = "interface, XDP mode, queues, workers, functions and tiers, uptime",
	},
	[RR_CTL_STATS] = {
		.name = "stats",
		.help = "the counters, per function, live",
	},
	[RR_CTL_HEALTH] = {
		.name = "health",
		.help = "exit 0 only while ready to serve, else say why",
	},
	[RR_CTL_RELOAD] = {
		.name = "reload",
		.mutating = true,
		.help = "as SIGHUP: apply the config's changes while serving; exit 1 naming what needs a restart",
	},
	[RR_CTL_DEPLOY] = {
		.name = "deploy",
		.args = "FILE.so",
		.nargs = 1,
		.mutating = true,
		.help = "add or replace functions from a module, while serving",
	},
	[RR_CTL_REMOVE] = {
		.name = "remove",
		.args = "NAME",
		.nargs = 1,
		.mutating = true,
		.help = "take a function's port out: its packets go to the kernel",
	},
	[RR_CTL_THREADS] = {
		.name = "threads",
		.args = "N",
		.nargs = 1,
		.mutating = true,
		.help = "workers (and sockets) per queue, changed while serving",
	},
	/* The request carries both numbers; a person gives them with
	 * --timeout and --quiet, which have defaults. */
	[RR_CTL_DRAIN] = {
		.name = "drain",
		.args = "TIMEOUT QUIET",
		.nargs = 2,
		.from_options = true,
		.mutating = true,
		.help = "health fails, requests are still answered, exit once they stop",
	},
	[RR_CTL_UNQUARANTINE] = {
		.name = "unquarantine",
		.args = "NAME",
		.nargs = 1,
		.mutating = true,
		.help = "a quarantined function serves again",
	},
	[RR_CTL_TOP] = {
		.name = "top",
		.args = "[FUNCTION]",
		.nargs = 1,
		.optional = true,
		.help = "who calls each function: the top sources and prefixes by requests/s, live",
	},
	/* The request carries the filter; a person gives it with --port,
	 * --source, --count, --seconds, --snaplen and --sample. Packets
	 * are the clients' data: root's and the service user's only. */
	[RR_CTL_CAPTURE] = {
		.name = "capture",
		.args = "PORT SOURCE COUNT SECONDS SNAPLEN SAMPLE",
		.nargs = 6,
		.from_options = true,
		.mutating = true,
		.help = "UDP requests and their replies from both tiers, drops with their reason, into a pcapng file (-w FILE, or -w - for tcpdump -r -); TCP goes through the kernel's stack: tcpdump sees it",
	},
	[RR_CTL_TRACE] = {
		.name = "trace",
		.args = "COUNT SECONDS",
		.nargs = 2,
		.from_options = true,
		.help = "a JSON line per request sampled by trace_sample: tier, XDP verdict, queuing delay, function time, reply size",
	},
	[RR_CTL_PROMOTE] = {
		.name = "promote",
		.args = "NAME",
		.nargs = 1,
		.mutating = true,
		.help = "a function's canary (deploy --canary) serves every source",
	},
	[RR_CTL_ROLLBACK] = {
		.name = "rollback",
		.args = "NAME",
		.nargs = 1,
		.mutating = true,
		.help = "a function's canary stops: every source gets the running version",
	},
};

void rr_control_default_path(const char *ifname, char *path, size_t len)
{
	snprintf(path, len, "%s/%s.sock", RR_CONTROL_DIR, ifname);
}

int rr_control_path_of(const char *file, char *path, size_t len, char *err,
		       size_t errlen)
{
	struct rr_config *cfg = calloc(1, sizeof(*cfg));
	int ret;

	if (!cfg)
		return rr_errf(err, errlen, "out of memory");
	rr_settings_defaults(cfg);
	ret = rr_config_load_main(cfg, file, err, errlen);
	if (ret) {
		ret = -EINVAL; /* not -ENOENT: the file is missing, not a key */
	} else if (!strcmp(cfg->control, "none")) {
		snprintf(
			err, errlen,
			"%s says control = none: that instance has no control socket",
			file);
		ret = -ENOTCONN;
	} else if (cfg->control[0]) {
		snprintf(path, len, "%s", cfg->control);
	} else if (cfg->ifname[0]) {
		rr_control_default_path(cfg->ifname, path, len);
	} else {
		ret = -ENOENT;
	}
	rr_config_free(cfg);
	free(cfg);
	return ret;
}

const struct rr_ctlcmd *rr_ctlcmd_find(const char *name, size_t len)
{
	int i;

	for (i = 0; i < RR_CTL_NCMDS; i++)
		if (strlen(rr_ctlcmds[i].name) == len &&
		    !memcmp(rr_ctlcmds[i].name, name, len))
			return &rr_ctlcmds[i];
	return NULL;
}
