/* SPDX-License-Identifier: GPL-2.0 */
/*
 * capture and trace as reqrouterctl runs them (stream.c): after the
 * instance's one-line answer, its stream, written whole blocks (pcapng)
 * or whole lines (JSON) at a time, until the instance ends it, or
 * SIGINT or SIGTERM.
 */
#ifndef RR_CTL_STREAM_H
#define RR_CTL_STREAM_H

#include <stdio.h>

#include "ctlcmd.h"

/*
 * Reads command @c's answer on @fd, within @timeout_s seconds (0: no
 * limit), then its stream into @out (named @name in what is said), and
 * says on stderr what it got. Exit status: 0 done, 1 refused or the
 * output failed, 3 no answer.
 */
int ctl_stream(int fd, const char *from, const struct rr_ctlcmd *c,
	       unsigned long timeout_s, FILE *out, const char *name);

#endif /* RR_CTL_STREAM_H */
