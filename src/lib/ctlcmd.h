/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control commands, one row each, and what a client needs to reach
 * the daemon's control socket. The daemon dispatches on this table
 * (control.c), reqrouterctl checks its command line against it and
 * prints its --help from it, and the bash completion and docs/OPERATIONS.md
 * take the command list from that --help: a command is written here once.
 */
#ifndef RR_CTLCMD_H
#define RR_CTLCMD_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* Where an instance's socket is unless --control says otherwise. */
#define RR_CONTROL_DIR RR_RUN_DIR
/* The longest request line the daemon reads; the rest is cut off. */
#define RR_CONTROL_MAX_LINE 256
/* drain's TIMEOUT and QUIET are at most this many seconds. */
#define RR_CONTROL_DRAIN_MAX_S 3600

/* The default socket of the instance serving @ifname. */
void rr_control_default_path(const char *ifname, char *path, size_t len);

/*
 * The control socket of an instance that runs with config file @file (as
 * knotc finds knotd's): its `control` key, else its interface's default
 * socket. 0; -ENOENT if the file names neither (the interface is then
 * given on the command line, as the unit does); -ENOTCONN for control =
 * none; -EINVAL if the file cannot be read, or is wrong. All but -ENOENT
 * with one line in @err.
 */
int rr_control_path_of(const char *file, char *path, size_t len, char *err,
		       size_t errlen);

/* One per row of rr_ctlcmds[], in its order (also the order --help and
 * the daemon's "unknown command" answer list them in). */
enum rr_ctlcmd_id {
	RR_CTL_STATUS,
	RR_CTL_STATS,
	RR_CTL_HEALTH,
	RR_CTL_RELOAD,
	RR_CTL_DEPLOY,
	RR_CTL_REMOVE,
	RR_CTL_THREADS,
	RR_CTL_DRAIN,
	RR_CTL_UNQUARANTINE,
	RR_CTL_TOP,
	RR_CTL_CAPTURE,
	RR_CTL_TRACE,
	RR_CTL_PROMOTE,
	RR_CTL_ROLLBACK,
	RR_CTL_NCMDS
};

/*
 * A request line is the name alone, or the name, one space and the
 * arguments. Nothing here is enforced per command: whoever may connect
 * to the socket (root, or --control-group's members) may send any of
 * them; @mutating says which change the instance, for the help and for
 * a rule that may one day tell the two kinds apart.
 */
struct rr_ctlcmd {
	const char *name;
	/* The metavariables of the request's arguments, or NULL, and how
	 * many words they are (0: the request is the name alone). */
	const char *args;
	unsigned int nargs;
	/* reqrouterctl fills the arguments from its own options. */
	bool from_options;
	/* The arguments may be left out (the request is then the name
	 * alone); @args shows them in brackets. */
	bool optional;
	/* It changes the instance; else it only reads. */
	bool mutating;
	/* One line, for --help. */
	const char *help;
};

extern const struct rr_ctlcmd rr_ctlcmds[RR_CTL_NCMDS];

/* deploy's request with a canary: "deploy --canary PERCENT FILE.so". */
#define RR_CTL_CANARY_FLAG "--canary"

/* The row named by the @len bytes at @name, or NULL. */
const struct rr_ctlcmd *rr_ctlcmd_find(const char *name, size_t len);

/* @c's place in the table. */
static inline enum rr_ctlcmd_id rr_ctlcmd_id(const struct rr_ctlcmd *c)
{
	return (enum rr_ctlcmd_id)(c - rr_ctlcmds);
}

/* How many words follow the name on reqrouterctl's command line. */
static inline unsigned int rr_ctlcmd_user_args(const struct rr_ctlcmd *c)
{
	return c->from_options ? 0 : c->nargs;
}

#endif /* RR_CTLCMD_H */
