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

/* Large enough for a single link's RTM_NEWLINK without stats or VF
 * lists, which is a few KiB. */
#define NL_BUFSIZE 32768
/* rr_veth_peer() asks twice; together they stay within a tick. */
#define PEER_TIMEOUT_US 50000

/* What rr_veth_peer() needs of one RTM_NEWLINK. */
struct link {
	unsigned int flags;
	char name[IFNAMSIZ];
	char kind[32]; /* IFLA_INFO_KIND, "" if none */
	bool has_link; /* IFLA_LINK */
	int link;
	int netnsid;	       /* IFLA_LINK_NETNSID, -1 if none */
	uint32_t xdp_prog;     /* any mode */
	uint32_t xdp_drv_prog; /* native mode, 0 if none */
};

static void attr_str(char *dst, size_t size, const struct rtattr *rta)
{
	size_t n = RTA_PAYLOAD(rta);

	if (n >= size)
		n = size - 1;
	memcpy(dst, RTA_DATA(rta), n);
	dst[n] = '\0';
}

static bool attr_u32(const struct rtattr *rta, uint32_t *v)
{
	if (!rta || RTA_PAYLOAD(rta) < sizeof(*v))
		return false;
	memcpy(v, RTA_DATA(rta), sizeof(*v));
	return true;
}

static int parse_link(const struct nlmsghdr *nh, struct link *l)
{
	const struct rtattr *tb[IFLA_MAX + 1], *info[IFLA_INFO_MAX + 1];
	const struct rtattr *xdp[IFLA_XDP_MAX + 1];
	const struct ifinfomsg *ifi;
	uint32_t v;

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)) ||
	    nh->nlmsg_len > INT_MAX)
		return -EBADMSG;
	ifi = NLMSG_DATA(nh);
	memset(l, 0, sizeof(*l));
	l->flags = ifi->ifi_flags;
	l->netnsid = -1;
	if (rr_nl_parse_attrs(tb, IFLA_MAX, IFLA_RTA(ifi),
			      (int)IFLA_PAYLOAD(nh)))
		return -EBADMSG;
	if (tb[IFLA_IFNAME])
		attr_str(l->name, sizeof(l->name), tb[IFLA_IFNAME]);
	else
		snprintf(l->name, sizeof(l->name), "%d", ifi->ifi_index);
	if (attr_u32(tb[IFLA_LINK], &v)) {
		l->has_link = true;
		l->link = (int)v;
	}
	if (attr_u32(tb[IFLA_LINK_NETNSID], &v))
		l->netnsid = (int)v;
	if (tb[IFLA_LINKINFO]) {
		if (rr_nl_parse_attrs(info, IFLA_INFO_MAX,
				      RTA_DATA(tb[IFLA_LINKINFO]),
				      (int)RTA_PAYLOAD(tb[IFLA_LINKINFO])))
			return -EBADMSG;
		if (info[IFLA_INFO_KIND])
			attr_str(l->kind, sizeof(l->kind),
				 info[IFLA_INFO_KIND]);
	}
	if (tb[IFLA_XDP]) {
		if (rr_nl_parse_attrs(xdp, IFLA_XDP_MAX, RTA_DATA(tb[IFLA_XDP]),
				      (int)RTA_PAYLOAD(tb[IFLA_XDP])))
			return -EBADMSG;
		attr_u32(xdp[IFLA_XDP_PROG_ID], &l->xdp_prog);
		attr_u32(xdp[IFLA_XDP_DRV_PROG_ID], &l->xdp_drv_prog);
		if (!l->xdp_prog)
			l->xdp_prog = l->xdp_drv_prog;
		if (!l->xdp_prog)
			attr_u32(xdp[IFLA_XDP_SKB_PROG_ID], &l->xdp_prog);
		if (!l->xdp_drv_prog && xdp[IFLA_XDP_ATTACHED] &&
		    RTA_PAYLOAD(xdp[IFLA_XDP_ATTACHED]) >= 1 &&
		    *(const uint8_t *)RTA_DATA(xdp[IFLA_XDP_ATTACHED]) ==
			    XDP_ATTACHED_DRV)
			l->xdp_drv_prog = l->xdp_prog;
	}
	return 0;
}

/* RTM_GETLINK of @ifindex, in namespace @netnsid (ours if < 0). */
static int get_link(int fd, uint32_t seq, int ifindex, int netnsid,
		    struct link *l)
{
	union {
		struct nlmsghdr align;
		uint8_t bytes[16384];
	} buf;
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		uint8_t attrs[2 * RTA_SPACE(sizeof(uint32_t))];
	} req;
	const struct nlmsghdr *nh;
	int n, ret;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = seq;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = ifindex;
	/* Counters are most of a link message and of no use here. */
	rr_nl_put_u32(&req, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	if (netnsid >= 0)
		rr_nl_put_u32(&req, IFLA_TARGET_NETNSID, (uint32_t)netnsid);
	ret = rr_nl_send(fd, &req.nh);
	if (ret < 0)
		return ret;
	for (;;) {
		n = rr_nl_recv(fd, buf.bytes, sizeof(buf.bytes), 0);
		if (n == -EAGAIN)
			return -ETIMEDOUT;
		if (n < 0)
			return n;
		for (nh = &buf.align; rr_nl_ok(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR)
				return rr_nl_error(nh);
			if (nh->nlmsg_type == RTM_NEWLINK)
				return parse_link(nh, l);
		}
	}
}

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
	struct link self, peer;
	enum rr_peer res;
	char where[64] = "";
	int fd, ret, peer_index;

	fd = rr_nl_socket(false, PEER_TIMEOUT_US);
	if (fd < 0) {
		say(why, len, "peer is unknown: no rtnetlink socket (%s)",
		    strerror(-fd));
		return RR_PEER_UNKNOWN;
	}
	ret = get_link(fd, 1, ifindex, -1, &self);
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
	ret = get_link(fd, 2, peer_index, self.netnsid, &peer);
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
