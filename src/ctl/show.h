/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The instance's answers as reqrouterctl reads them (json-c) and shows
 * them to a person: status, stats (with rates under --watch), top,
 * reload, health and the one-line answers. --json prints the answer as
 * it came, once it has parsed.
 */
#ifndef RR_CTL_SHOW_H
#define RR_CTL_SHOW_H

#include <stdbool.h>

#include "ctlcmd.h"

struct json_object;

/* The answer @text from @from (the socket) as one JSON object, or NULL
 * after one line on stderr saying what is wrong with it. */
struct json_object *ctl_parse(const char *from, const char *text);

/* Whether @answer says command @c was done ("ok": true; health: and
 * the instance is ready). */
bool ctl_done(const struct rr_ctlcmd *c, struct json_object *answer);

/*
 * Prints @answer to command @c for a person. @was is the answer to the
 * same request @dt seconds earlier (stats --watch: the counters' rates),
 * or NULL. What ctl_done() says.
 */
bool ctl_show(const struct rr_ctlcmd *c, struct json_object *answer,
	      struct json_object *was, double dt);

#endif /* RR_CTL_SHOW_H */
