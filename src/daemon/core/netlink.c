// SPDX-License-Identifier: GPL-2.0
/*
 * rtnetlink, spoken directly, for what reqrouter follows of the host
 * (netlink.h): the sockets, requests and attributes that the local routes
 * (localaddr.c), the veth peer (peer.c) and the link itself (link.c)
 * share. No call blocks for
 * longer than the timeout its socket was given.
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
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "netlink.h"

/*
 * Files the attributes at @rta (@len bytes) by type into @tb[0..@max];
 * unknown types (a newer kernel's) are passed over. -EINVAL if one runs
 * past the end or something that is no attribute is left over.
 */
int rr_nl_parse_attrs(const struct rtattr **tb, unsigned int max,
		      const struct rtattr *rta, int len)
{
	unsigned int type;

	memset(tb, 0, (max + 1) * sizeof(*tb));
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		type = rta->rta_type & NLA_TYPE_MASK;
		if (type <= max)
			tb[type] = rta;
	}
	/* Below 0: the last attribute's padding was left off, harmless. */
	return len > 0 ? -EINVAL : 0;
}

/* NLMSG_OK() without its signed/unsigned comparison, which clang's
 * -Wsign-compare refuses: a whole message header, and the message within
 * the @len bytes left. */
bool rr_nl_ok(const struct nlmsghdr *nh, int len)
{
	return len >= (int)sizeof(*nh) && nh->nlmsg_len >= sizeof(*nh) &&
	       nh->nlmsg_len <= (unsigned int)len;
}

/* A NETLINK_ROUTE socket: non-blocking, or with a receive timeout. */
int rr_nl_socket(bool nonblock, long timeout_us)
{
	struct timeval tv = {
		.tv_sec = timeout_us / 1000000,
		.tv_usec = timeout_us % 1000000,
	};
	int fd;

	fd = socket(AF_NETLINK,
		    SOCK_RAW | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0),
		    NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (!nonblock &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * One datagram into @buf: its length, 0 for one that is not the kernel's
 * (ignored), or -errno: -EAGAIN when nothing came (non-blocking, or the
 * timeout), -EMSGSIZE when it did not fit, -ENOBUFS when the socket
 * overran and notifications were lost.
 */
int rr_nl_recv(int fd, void *buf, size_t size, int flags)
{
	struct sockaddr_nl sa;
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr msg = {
		.msg_name = &sa,
		.msg_namelen = sizeof(sa),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	ssize_t n;

	do {
		n = recvmsg(fd, &msg, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (msg.msg_flags & MSG_TRUNC)
		return -EMSGSIZE;
	if (msg.msg_namelen != sizeof(sa) || sa.nl_pid != 0)
		return 0;
	return (int)n;
}

int rr_nl_send(int fd, const struct nlmsghdr *nh)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n;

	do {
		n = sendto(fd, nh, nh->nlmsg_len, 0,
			   (const struct sockaddr *)&kernel, sizeof(kernel));
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

/* The error an NLMSG_ERROR carries; we ask for no ACKs, so 0 is odd. */
int rr_nl_error(const struct nlmsghdr *nh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nh);

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return -EBADMSG;
	return e->error < 0 ? e->error : -EPROTO;
}

int rr_nl_dump(int fd, const struct nlmsghdr *req, void *buf, size_t size,
	       int (*each)(const struct nlmsghdr *nh, void *ctx), void *ctx,
	       bool *intr)
{
	const struct nlmsghdr *nh;
	int n, ret;

	ret = rr_nl_send(fd, req);
	if (ret < 0)
		return ret;
	for (;;) {
		n = rr_nl_recv(fd, buf, size, 0);
		if (n == -EAGAIN)
			return -ETIMEDOUT;
		if (n < 0)
			return n;
		for (nh = buf; rr_nl_ok(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != req->nlmsg_seq)
				continue;
			if (nh->nlmsg_flags & NLM_F_DUMP_INTR)
				*intr = true;
			if (nh->nlmsg_type == NLMSG_DONE) {
				if (nh->nlmsg_len >=
					    NLMSG_LENGTH(sizeof(int)) &&
				    *(const int *)NLMSG_DATA(nh) < 0)
					return *(const int *)NLMSG_DATA(nh);
				return 0;
			}
			if (nh->nlmsg_type == NLMSG_ERROR)
				return rr_nl_error(nh);
			ret = each(nh, ctx);
			if (ret < 0)
				return ret;
		}
	}
}

/* Appends a u32 attribute to the request at @msg, which has room. */
void rr_nl_put_u32(void *msg, unsigned short type, uint32_t v)
{
	struct nlmsghdr *nh = msg;
	struct rtattr *rta;

	rta = (struct rtattr *)((char *)msg + NLMSG_ALIGN(nh->nlmsg_len));
	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(sizeof(v));
	memcpy(RTA_DATA(rta), &v, sizeof(v));
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

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

/* A VLAN device's ID, from its IFLA_INFO_DATA. */
static void vlan_id(const struct rtattr *data, struct rr_nl_link *l)
{
	const struct rtattr *tb[IFLA_VLAN_MAX + 1];

	if (rr_nl_parse_attrs(tb, IFLA_VLAN_MAX, RTA_DATA(data),
			      (int)RTA_PAYLOAD(data)) ||
	    !tb[IFLA_VLAN_ID] || RTA_PAYLOAD(tb[IFLA_VLAN_ID]) < 2)
		return;
	memcpy(&l->vlan_id, RTA_DATA(tb[IFLA_VLAN_ID]), 2);
}

int rr_nl_parse_link(const struct nlmsghdr *nh, struct rr_nl_link *l)
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
	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	l->netnsid = -1;
	if (rr_nl_parse_attrs(tb, IFLA_MAX, IFLA_RTA(ifi),
			      (int)IFLA_PAYLOAD(nh)))
		return -EBADMSG;
	if (tb[IFLA_IFNAME])
		attr_str(l->name, sizeof(l->name), tb[IFLA_IFNAME]);
	else
		snprintf(l->name, sizeof(l->name), "%d", ifi->ifi_index);
	attr_u32(tb[IFLA_MTU], &l->mtu);
	if (tb[IFLA_ADDRESS] && RTA_PAYLOAD(tb[IFLA_ADDRESS]) == ETH_ALEN) {
		memcpy(l->mac, RTA_DATA(tb[IFLA_ADDRESS]), ETH_ALEN);
		l->has_mac = true;
	}
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
		if (!strcmp(l->kind, "vlan") && info[IFLA_INFO_DATA])
			vlan_id(info[IFLA_INFO_DATA], l);
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

int rr_nl_get_link(int fd, uint32_t seq, int ifindex, int netnsid,
		   struct rr_nl_link *l)
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
				return rr_nl_parse_link(nh, l);
		}
	}
}
