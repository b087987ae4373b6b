// SPDX-License-Identifier: GPL-2.0
/*
 * Following the served interface (link.h). Everything the XDP program
 * and the workers know of the link can change while they serve: an
 * operator raises the MTU, a bond fails over and takes another MAC,
 * ethtool -L changes the RX queues, the cable is pulled, the interface
 * is deleted. The kernel says all of it but the queues in an RTM_NEWLINK
 * (or RTM_DELLINK) to the RTNLGRP_LINK group, with the link's whole state
 * in it, so a notification is read as the new state; when notifications
 * were lost, the link is asked for once. The RX queues are counted in
 * sysfs at every look, a directory of a few entries.
 *
 * What is done about a change is the invoker's (invoker/follow.c,
 * follow_link()); this only says what the link is now.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "link.h"
#include "log.h"
#include "netlink.h"

/* Notifications read in one call at most; more wait for the next. */
#define DRAIN_MAX 64
/* For the one request when notifications were lost: within a tick. */
#define GET_TIMEOUT_US 50000

#define RR_LINK_CHANGE_NAME(name, label) label,
const char *const rr_link_change_names[] = { RR_LINK_CHANGES(
	RR_LINK_CHANGE_NAME) };
#undef RR_LINK_CHANGE_NAME

struct rr_link {
	int sock; /* subscribed to RTNLGRP_LINK, non-blocking */
	int ifindex;
	uint32_t seq;
	union {
		struct nlmsghdr align;
		uint8_t bytes[32768]; /* a link message is a few KiB */
	} buf;
};

int rr_link_rx_queues(const char *ifname)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "rx-", 3))
			n++;
	closedir(d);
	return n;
}

const char *rr_link_mac_str(const uint8_t *mac, char *buf)
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
		 mac[2], mac[3], mac[4], mac[5]);
	return buf;
}

/* @st from one link message; false if it says nothing we can use. */
static bool take(const struct rr_nl_link *nl, struct rr_link_state *st)
{
	if (!nl->has_mac || !nl->mtu)
		return false;
	snprintf(st->name, sizeof(st->name), "%s", nl->name);
	memcpy(st->mac, nl->mac, sizeof(st->mac));
	st->mtu = nl->mtu;
	st->up = (nl->flags & IFF_UP) && (nl->flags & IFF_RUNNING);
	return true;
}

/* Asks for the link on a short-lived blocking socket: the subscribed
 * one would mix the answer with notifications. */
static int ask(struct rr_link *l, struct rr_link_state *st)
{
	struct rr_nl_link nl;
	int fd, ret;

	fd = rr_nl_socket(false, GET_TIMEOUT_US);
	if (fd < 0)
		return fd;
	ret = rr_nl_get_link(fd, ++l->seq, l->ifindex, -1, &nl);
	close(fd);
	if (ret == -ENODEV) {
		st->gone = true;
		return 0;
	}
	if (ret)
		return ret;
	return take(&nl, st) ? 0 : -EPROTONOSUPPORT;
}

/* A VLAN device seen in a dump. */
struct vdev {
	int ifindex, link;
	uint16_t id;
};

#define VDEV_MAX 4096

/* The VLAN devices a dump found, message by message. */
struct vdevs {
	struct vdev *v;
	uint32_t n;
};

static int vdev_one(const struct nlmsghdr *nh, void *ctx)
{
	struct vdevs *d = ctx;
	struct rr_nl_link nl;

	if (nh->nlmsg_type != RTM_NEWLINK || rr_nl_parse_link(nh, &nl) ||
	    !nl.vlan_id || !nl.has_link || nl.netnsid >= 0 || d->n == VDEV_MAX)
		return 0;
	d->v[d->n++] = (struct vdev){ nl.ifindex, nl.link, nl.vlan_id };
	return 0;
}

static void add_vlan(struct rr_link_state *st, uint16_t id)
{
	if (id && id < RR_VLAN_IDS)
		st->vlans[id / 64] |= 1ULL << (id % 64);
}

/*
 * The VLAN devices on the link, and for QinQ those on them, into
 * st->vlans: one dump of every link of the namespace. A VLAN device in
 * another namespace (moved into a container) is not seen, and its tag is
 * not answered. A dump that raced a change counts as not read.
 */
static int dump_vlans(struct rr_link *l, struct rr_link_state *st)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		uint8_t attrs[RTA_SPACE(sizeof(uint32_t))];
	} req;
	struct vdevs d = { 0 };
	bool intr = false;
	uint32_t i, j;
	int fd, ret;

	fd = rr_nl_socket(false, GET_TIMEOUT_US);
	if (fd < 0)
		return fd;
	d.v = calloc(VDEV_MAX, sizeof(*d.v));
	if (!d.v) {
		ret = -ENOMEM;
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = ++l->seq;
	req.ifi.ifi_family = AF_UNSPEC;
	rr_nl_put_u32(&req, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	ret = rr_nl_dump(fd, &req.nh, l->buf.bytes, sizeof(l->buf.bytes),
			 vdev_one, &d, &intr);
	if (!ret && intr)
		ret = -EAGAIN;
	if (ret)
		goto out;
	memset(st->vlans, 0, sizeof(st->vlans));
	for (i = 0; i < d.n; i++) {
		if (d.v[i].link != l->ifindex)
			continue;
		add_vlan(st, d.v[i].id);
		for (j = 0; j < d.n; j++)
			if (d.v[j].link == d.v[i].ifindex)
				add_vlan(st, d.v[j].id);
	}
out:
	free(d.v);
	close(fd);
	st->vlans_known = !ret;
	return ret;
}

static void count_queues(struct rr_link_state *st)
{
	int n = rr_link_rx_queues(st->name);

	if (n > 0)
		st->rx_queues = (uint32_t)n;
}

int rr_link_open(struct rr_link **out, int ifindex, struct rr_link_state *st)
{
	const struct sockaddr_nl self = { .nl_family = AF_NETLINK };
	int group = RTNLGRP_LINK;
	struct rr_link *l;
	int ret;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->ifindex = ifindex;
	l->sock = rr_nl_socket(true, 0);
	if (l->sock < 0) {
		ret = l->sock;
		goto err;
	}
	if (bind(l->sock, (const struct sockaddr *)&self, sizeof(self)) ||
	    setsockopt(l->sock, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group,
		       sizeof(group))) {
		ret = -errno;
		goto err;
	}
	memset(st, 0, sizeof(*st));
	ret = ask(l, st);
	if (!ret && st->gone)
		ret = -ENODEV;
	if (ret)
		goto err;
	count_queues(st);
	/* Without them no tag is answered until a later look reads them. */
	ret = dump_vlans(l, st);
	if (ret)
		pr_debug("cannot read the VLAN devices on %s: %s\n", st->name,
			 strerror(-ret));
	*out = l;
	return 0;
err:
	rr_link_close(l);
	return ret;
}

static bool same(const struct rr_link_state *a, const struct rr_link_state *b)
{
	return !strcmp(a->name, b->name) && !memcmp(a->mac, b->mac, 6) &&
	       a->mtu == b->mtu && a->rx_queues == b->rx_queues &&
	       a->up == b->up && a->gone == b->gone &&
	       a->vlans_known == b->vlans_known &&
	       !memcmp(a->vlans, b->vlans, sizeof(a->vlans));
}

int rr_link_update(struct rr_link *l, struct rr_link_state *st)
{
	struct rr_link_state now = *st;
	const struct nlmsghdr *nh;
	struct rr_nl_link nl;
	bool lost = false, vlans = !st->vlans_known;
	int i, n, ret;

	if (!l)
		return -EINVAL;
	for (i = 0; i < DRAIN_MAX && !now.gone; i++) {
		n = rr_nl_recv(l->sock, l->buf.bytes, sizeof(l->buf.bytes),
			       MSG_DONTWAIT);
		if (n == -EAGAIN)
			break;
		if (n == -ENOBUFS || n == -EMSGSIZE) {
			/* What was lost is unknown: ask once, after. */
			lost = vlans = true;
			continue;
		}
		if (n < 0)
			return n;
		for (nh = &l->buf.align; rr_nl_ok(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if ((nh->nlmsg_type != RTM_NEWLINK &&
			     nh->nlmsg_type != RTM_DELLINK) ||
			    rr_nl_parse_link(nh, &nl))
				continue;
			/* Another link: a VLAN device, which may be on ours. */
			if (nl.ifindex != l->ifindex) {
				vlans |= nl.vlan_id != 0;
				continue;
			}
			if (nh->nlmsg_type == RTM_DELLINK)
				now.gone = true;
			else if (!take(&nl, &now))
				lost = true; /* a partial one: ask */
		}
	}
	if (lost && !now.gone) {
		ret = ask(l, &now);
		if (ret)
			return ret;
	}
	if (!now.gone)
		count_queues(&now);
	if (!now.gone && vlans)
		dump_vlans(l, &now);
	if (same(&now, st))
		return 0;
	*st = now;
	return 1;
}

void rr_link_close(struct rr_link *l)
{
	if (!l)
		return;
	if (l->sock >= 0)
		close(l->sock);
	free(l);
}
