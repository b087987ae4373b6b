// SPDX-License-Identifier: GPL-2.0
/*
 * systemd's notification protocol through libsystemd's sd_notify(). Only
 * the main thread calls in here, between its ticks.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "lifecycle.h"
#include "log.h"
#include "service.h"

static bool managed;	      /* systemd listens (NOTIFY_SOCKET) */
static uint64_t watchdog_us;  /* 0: no watchdog asked for */
static uint64_t last_ping_us; /* CLOCK_MONOTONIC */

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void rr_service_ready(struct rr_invoker *inv, const struct rr_config *cfg)
{
	uint64_t usec = 0;
	int ret;

	ret = sd_notifyf(
		0,
		"READY=1\nSTATUS=serving %u function%s on %s, %u queue%s x %u worker%s",
		inv->nslots, inv->nslots == 1 ? "" : "s", cfg->ifname,
		inv->nqueues, inv->nqueues == 1 ? "" : "s", inv->nthreads,
		inv->nthreads == 1 ? "" : "s");
	if (ret <= 0)
		return; /* not under systemd, or it cannot be told */
	managed = true;
	/* > 0: enabled for this process (WATCHDOG_USEC, WATCHDOG_PID). */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec) {
		watchdog_us = usec;
		last_ping_us = now_us();
		sd_notify(0, "WATCHDOG=1");
		pr_info("systemd watchdog: every %.1f s while ready\n",
			(double)usec / 2e6);
	}
}

void rr_service_status(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sd_notifyf(0, "STATUS=%s", line);
}

void rr_service_tick(struct rr_invoker *inv)
{
	uint64_t now;

	if (!watchdog_us)
		return;
	now = now_us();
	/* A draining instance is not ready (its health fails on purpose)
	 * but alive: a drain longer than WatchdogSec must not end in a
	 * watchdog kill. Nor must a link that is down (it serves again
	 * when it is up) or a restart main.c is about to make itself. */
	if (now - last_ping_us < watchdog_us / 2 ||
	    (rr_invoker_not_ready(inv) && !inv->draining && inv->link_now.up &&
	     !inv->restart_why[0]))
		return;
	last_ping_us = now;
	sd_notify(0, "WATCHDOG=1");
}

bool rr_service_managed(void)
{
	return managed;
}

void rr_service_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}
