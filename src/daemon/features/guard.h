/* SPDX-License-Identifier: GPL-2.0 */
/* The guards' user-space half: allow-lists in words (guard.c). */
#ifndef RR_GUARD_H
#define RR_GUARD_H

#include <stddef.h>

#include "config.h"

/* Function @svc's allow-list in words into @buf: "127.0.0.0/8, ::1/128",
 * as many prefixes as fit, then how many in all. */
void rr_allow_text(const struct rr_service *svc, char *buf, size_t len);

/* At start (rr_open_port()), a notice for a function served to an
 * allow-list only: which sources it answers, and where that is set
 * (@config_file, or "" for none). Nothing for one served to everyone. */
void rr_allow_notice(const struct rr_service *svc, const char *config_file);

/* At start and when a port opens: a warning if a socket of this host
 * (this network namespace's) is bound to @svc's UDP port, whose
 * datagrams on @ifname reqrouter now takes before the kernel sees them. */
void rr_port_taken_notice(const struct rr_service *svc, const char *ifname);

#endif /* RR_GUARD_H */
