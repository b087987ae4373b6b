/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reqrouter --check: the start-up's checks without the start (see
 * check.c). main() asks rr_check_asked() before it parses anything else.
 */
#ifndef RR_CHECK_H
#define RR_CHECK_H

#include <stdbool.h>
#include <stddef.h>

struct rr_service;

/* Whether the command line asks for --check (or a prefix of it that
 * getopt would take for it). */
bool rr_check_asked(int argc, char **argv);

/*
 * Checks what the command line and its config file ask for, prints one
 * line per problem and a verdict, and returns the exit status: 0 all is
 * well, 1 reqrouter would not start (a function's init(), the cells'
 * filter, a CPU, a group), 2 a wrong flag or a bad config file (what a
 * start exits 2 for too).
 */
int rr_check_main(int argc, char **argv);

#endif /* RR_CHECK_H */
