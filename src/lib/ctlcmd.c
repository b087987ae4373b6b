// SPDX-License-Identifier: GPL-2.0
/*
 * The table of control commands (see ctlcmd.h): the one place a command
 * is named, with its arguments and its help line.
 */
#include <stdio.h>
#include <string.h>

#include "ctlcmd.h"

const struct rr_ctlcmd rr_ctlcmds[RR_CTL_NCMDS] = {
	[RR_CTL_STATUS] = { "status", NULL, 0, false, false,
			    "interface, XDP mode, queues, workers, functions and tiers, uptime" },
	[RR_CTL_STATS] = { "stats", NULL, 0, false, false,
			   "the counters, per function, live" },
	[RR_CTL_HEALTH] = { "health", NULL, 0, false, false,
			    "exit 0 only while ready to serve, else say why" },
	[RR_CTL_RELOAD] = { "reload", NULL, 0, false, true,
			    "as SIGHUP: re-read the config, re-initialise functions with state" },
	[RR_CTL_DEPLOY] = { "deploy", "FILE.so", 1, false, true,
			    "add or replace functions from a module, while serving" },
	[RR_CTL_REMOVE] = { "remove", "NAME", 1, false, true,
			    "take a function's port out: its packets go to the kernel" },
	[RR_CTL_THREADS] = { "threads", "N", 1, false, true,
			     "workers (and sockets) per queue, changed while serving" },
	/* The request carries both numbers; a person gives them with
	 * --timeout and --quiet, which have defaults. */
	[RR_CTL_DRAIN] = { "drain", "TIMEOUT QUIET", 2, true, true,
			   "health fails, requests are still answered, exit once they stop" },
	[RR_CTL_UNQUARANTINE] = { "unquarantine", "NAME", 1, false, true,
				  "a quarantined function serves again" },
};

void rr_control_default_path(const char *ifname, char *path, size_t len)
{
	snprintf(path, len, "%s/%s.sock", RR_CONTROL_DIR, ifname);
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
