/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reqrouter --check: the start-up's checks without the start (see
 * check.c). main() asks rr_check_asked() before it parses anything else.
 */
#ifndef RR_CHECK_H
#define RR_CHECK_H

#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>

struct rr_config;
struct rr_service;

/* Whether the command line asks for --check (or a prefix of it that
 * getopt would take for it). */
bool rr_check_asked(int argc, char **argv);

/*
 * What a start looks up by name before set-up, and --check with it: the
 * user to run as (into @pw; 2 if there is none of that name, a start's
 * status for a bad setting) and the control socket's group (1, as for
 * what only set-up finds). 0, or that status with one line in @err that
 * names the setting as it was given ("FILE:LINE: user" or "--user").
 */
int rr_check_user(const struct rr_config *cfg, struct passwd *pw, char *err,
		  size_t errlen);
int rr_check_group(const struct rr_config *cfg, char *err, size_t errlen);

/*
 * Checks what the command line and its config file ask for, prints one
 * line per problem and a verdict, and returns the exit status: 0 all is
 * well, 1 reqrouter would not start (a function's init(), the cells'
 * filter, a CPU, a group), 2 a wrong flag or a bad config file (what a
 * start exits 2 for too).
 */
int rr_check_main(int argc, char **argv);

#endif /* RR_CHECK_H */
