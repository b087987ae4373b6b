// SPDX-License-Identifier: GPL-2.0
/*
 * The guards' user-space half (docs/DESIGN.md, "A request, from the NIC
 * to its reply", step 3): a function's allow-list in words, for the log
 * at start and for --check, and the warning for a port a socket of the
 * host's holds. The guards themselves are the XDP program's (kern/, the
 * destination and source checks).
 */
#include <arpa/inet.h>
#include <stdint.h>
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

/* The first socket in /proc/net/@file bound to local port @port: 1 with
 * its uid and inode, 0 if none (or the table cannot be read). */
static int port_socket(const char *file, uint16_t port, unsigned int *uid,
		       unsigned long *inode)
{
	char path[64], line[512], addr[64];
	unsigned int lport;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/net/%s", file);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* sl local_address rem_address st tx:rx tr:when retrnsmt uid
	 * timeout inode */
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line,
			   " %*u: %63[0-9A-Fa-f]:%x %*s %*x %*s %*s %*s %u %*u %lu",
			   addr, &lport, uid, inode) == 4 &&
		    lport == port)
			found = 1;
	fclose(f);
	return found;
}

void rr_port_taken_notice(const struct rr_service *svc, const char *ifname)
{
	unsigned long inode = 0;
	unsigned int uid = 0;

	if (!port_socket("udp", (uint16_t)svc->port, &uid, &inode) &&
	    !port_socket("udp6", (uint16_t)svc->port, &uid, &inode))
		return;
	pr_warn("UDP port %u of '%s' is bound by a socket of this host (uid %u, socket inode %lu): its datagrams arriving on %s go to '%s', never to that socket\n",
		svc->port, svc->fn->name, uid, inode, ifname, svc->fn->name);
}
