/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Telling systemd how the instance is doing (Type=notify): READY=1 once
 * it serves, STATUS= lines, WATCHDOG=1 while it is healthy and the unit
 * sets WatchdogSec=, STOPPING=1 on the way out. Every call is a no-op when
 * reqrouter does not run under systemd (no NOTIFY_SOCKET).
 */
#ifndef RR_SERVICE_H
#define RR_SERVICE_H

#include <stdbool.h>

#include "config.h"
#include "invoker.h"

/* Serving: READY=1 with a STATUS= line saying what, on which interface. */
void rr_service_ready(struct rr_invoker *inv, const struct rr_config *cfg);

/* A STATUS= line of its own (after a reload, say). */
void rr_service_status(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * Called every main-loop tick: pings the watchdog at half its interval,
 * but only while the instance is ready, so one that stops serving is
 * restarted by systemd.
 */
void rr_service_tick(struct rr_invoker *inv);

/* STOPPING=1, once the instance has decided to exit. */
/* Whether systemd was told READY=1: a unit runs reqrouter, and starts
 * it again after a failure (Restart=on-failure). */
bool rr_service_managed(void);

void rr_service_stopping(void);

#endif /* RR_SERVICE_H */
