// SPDX-License-Identifier: GPL-2.0
/*
 * The guards' user-space half (docs/DESIGN.md, "A request, from the NIC
 * to its reply", step 3): a function's allow-list in words, for the log
 * at start and for --check. The guards themselves are the XDP program's
 * (kern/, the destination and source checks).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "guard.h"
#include "log.h"

void rr_allow_text(const struct rr_service *svc, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN], one[INET6_ADDRSTRLEN + 8];
	size_t at = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < svc->nallow; i++) {
		if (!inet_ntop(svc->allow[i].family, svc->allow[i].addr, addr,
			       sizeof(addr)))
			snprintf(addr, sizeof(addr), "?");
		snprintf(one, sizeof(one), "%s%s/%u", i ? ", " : "", addr,
			 svc->allow[i].len);
		/* Room for this one and for what the cut would add. */
		if (at + strlen(one) + 32 >= len) {
			snprintf(buf + at, len - at, ", ... (%u in all)",
				 svc->nallow);
			return;
		}
		at += (size_t)snprintf(buf + at, len - at, "%s", one);
	}
}

void rr_allow_notice(const struct rr_service *svc, const char *config_file)
{
	char list[1024];

	if (!svc->nallow)
		return;
	rr_allow_text(svc, list, sizeof(list));
	pr_notice(
		"'%s' answers only %s: see allow in [function %s]%s%s (requests from other sources are dropped, counted as source_not_allowed)\n",
		svc->fn->name, list, svc->fn->name,
		config_file[0] ? " of " : "", config_file);
}
