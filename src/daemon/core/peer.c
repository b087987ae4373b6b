// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a veth's peer takes the frames reqrouter sends with XDP_TX
 * (rr_veth_peer(), netlink.h): two RTM_GETLINK exchanges on a short-lived
 * socket, each given PEER_TIMEOUT_US.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "netlink.h"

/* rr_veth_peer() asks twice; together they stay within a tick. */
#define PEER_TIMEOUT_US 50000

static void say(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

enum rr_peer rr_veth_peer(int ifindex, char *why, size_t len)
{
	struct rr_nl_link self, peer;
	enum rr_peer res;
	char where[64] = "";
	int fd, ret, peer_index;

	fd = rr_nl_socket(false, PEER_TIMEOUT_US);
	if (fd < 0) {
		say(why, len, "peer is unknown: no rtnetlink socket (%s)",
		    strerror(-fd));
		return RR_PEER_UNKNOWN;
	}
	ret = rr_nl_get_link(fd, 1, ifindex, -1, &self);
	if (ret < 0) {
		say(why, len, "peer is unknown: link %d cannot be read (%s)",
		    ifindex, strerror(-ret));
		res = RR_PEER_UNKNOWN;
		goto out;
	}
	if (strcmp(self.kind, "veth")) {
		if (self.kind[0])
			say(why, len, "%s is of kind %s, not a veth", self.name,
			    self.kind);
		else
			say(why, len, "%s is not a veth", self.name);
		res = RR_PEER_NOT_VETH;
		goto out;
	}
	/* Older kernels leave IFLA_LINK out when it equals the link's own
	 * index, which a peer in another namespace may well have (6.18
	 * sends it whenever there is IFLA_LINK_NETNSID). */
	if (self.has_link)
		peer_index = self.link;
	else if (self.netnsid >= 0)
		peer_index = ifindex;
	else
		peer_index = 0;
	if (peer_index <= 0) {
		say(why, len, "peer is unknown: %s names none", self.name);
		res = RR_PEER_UNKNOWN;
		goto out;
	}
	if (self.netnsid >= 0)
		snprintf(where, sizeof(where),
			 " in another network namespace (id %d)", self.netnsid);
	ret = rr_nl_get_link(fd, 2, peer_index, self.netnsid, &peer);
	if (ret < 0) {
		say(why, len, "peer (link %d%s) cannot be seen: %s", peer_index,
		    where, strerror(-ret));
		res = RR_PEER_UNKNOWN;
		goto out;
	}
	res = RR_PEER_NO_XDP;
	if (!(peer.flags & IFF_UP)) {
		say(why, len, "peer %s%s is down", peer.name, where);
	} else if (peer.xdp_drv_prog) {
		say(why, len, "peer %s%s runs XDP program %u", peer.name, where,
		    peer.xdp_drv_prog);
		res = RR_PEER_XDP;
	} else if (peer.xdp_prog) {
		say(why, len,
		    "peer %s%s runs XDP program %u in generic mode only, which starts no NAPI",
		    peer.name, where, peer.xdp_prog);
	} else {
		say(why, len, "peer %s%s has no XDP program", peer.name, where);
	}
out:
	close(fd);
	return res;
}

const char *rr_peer_label(enum rr_peer p)
{
	switch (p) {
	case RR_PEER_NOT_VETH:
		return "not_veth";
	case RR_PEER_XDP:
		return "xdp";
	case RR_PEER_NO_XDP:
		return "no_xdp";
	case RR_PEER_UNKNOWN:
		break;
	}
	return "unknown";
}
