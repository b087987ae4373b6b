/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What reqrouter learns from rtnetlink, with no library in between:
 *
 * - the host's own destinations: the kernel's local routes (rtm_type
 *   RTN_LOCAL, any table) of the current network namespace, mirrored into
 *   the XDP program's two LPM tries so that it answers only requests
 *   addressed to this host, and kept current from route notifications;
 * - whether a veth's peer takes the frames reqrouter sends with XDP_TX:
 *   a veth drops them unless the peer runs NAPI, in practice unless the
 *   peer has a native XDP program attached.
 *
 * Both are polled from the main thread, between ticks; nothing here blocks
 * for more than about 100 ms. The local routes are localaddr.c's, the
 * veth peer peer.c's, the rtnetlink exchanges both use netlink.c's.
 */
#ifndef RR_NETLINK_H
#define RR_NETLINK_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#include <net/if.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

struct rr_localaddr;

/*
 * Opens an rtnetlink socket (non-blocking, subscribed to RTNLGRP_IPV4_ROUTE
 * and RTNLGRP_IPV6_ROUTE), dumps the local routes (through a short-lived
 * socket of their own) and writes them into the maps @fd_v4/@fd_v6 (LPM
 * tries keyed by struct rr_local_v4/rr_local_v6, value __u8; entries in
 * the maps that are not local routes are deleted, the others left alone).
 * A negative map fd leaves that family out. 0 or -errno: -EINVAL, said in
 * a log line, for a map of another shape.
 */
int rr_localaddr_open(struct rr_localaddr **out, int fd_v4, int fd_v6);

/*
 * Never blocks: drains pending notifications; if any concerned a local
 * route (or the socket overran: ENOBUFS), dumps again and brings the maps
 * up to date, adding the new entries before deleting the gone ones and
 * leaving the unchanged ones alone, so a lookup never misses an address
 * that stays. Returns how many map entries changed, or -errno. Meant to be
 * called every ~100 ms from the main loop.
 */
int rr_localaddr_update(struct rr_localaddr *la);

/*
 * Also keeps the direct-mapped table @fd (an array of RR_LOCAL_TAB struct
 * rr_local_ent, shared/guard.h) in front of the tries: filled now, then
 * emptied of an address before the tries lose it and given a new one
 * after they have it. 0, or -errno if a slot could not be written (it is
 * tried again at the next update).
 */
int rr_localaddr_set_table(struct rr_localaddr *la, int fd);

/* How many local routes of @family (AF_INET/AF_INET6) the maps hold. */
uint32_t rr_localaddr_count(const struct rr_localaddr *la, int family);

void rr_localaddr_close(struct rr_localaddr *la); /* NULL-safe */

/*
 * Reads one route message (RTM_NEWROUTE/RTM_DELROUTE) of nh->nlmsg_len
 * bytes, which the caller has checked are there (NLMSG_OK). Returns 1 if
 * it is a local route, with its family (AF_INET/AF_INET6), its destination
 * in @addr (4 or 16 bytes, host bits cleared) and @prefixlen; 0 if it is
 * another kind of message or route; -EINVAL if it is malformed.
 */
int rr_nl_parse_local_route(const struct nlmsghdr *nh, int *family,
			    uint8_t *addr, uint32_t *prefixlen);

enum rr_peer {
	RR_PEER_NOT_VETH, /* not a veth: XDP_TX replies leave as usual */
	RR_PEER_XDP,	  /* a veth whose peer is up and runs an XDP program */
	RR_PEER_NO_XDP,	  /* a veth whose peer runs none (or is down) */
	RR_PEER_UNKNOWN,  /* a veth whose peer cannot be seen */
};

/*
 * What @ifindex's peer does, through rtnetlink: RTM_GETLINK of @ifindex
 * (IFLA_LINKINFO/IFLA_INFO_KIND "veth", IFLA_LINK = the peer's ifindex,
 * IFLA_LINK_NETNSID = the peer's namespace when it is another), then
 * RTM_GETLINK of the peer, with IFLA_TARGET_NETNSID where it lives
 * elsewhere (IFLA_XDP, ifi_flags IFF_UP). Only a native-mode program
 * counts: a generic (skb) one does not start the veth's NAPI. GRO on the
 * peer would, but it cannot be seen across namespaces through rtnetlink,
 * so it counts as no program, the safe side. An @ifindex that cannot be
 * read at all gives RR_PEER_UNKNOWN. @why (may be NULL) gets a few words
 * for a log line, e.g. "peer veth1 in namespace 3 has no XDP program";
 * for a veth they always start with "peer", to follow "eth0 is a veth
 * and its ".
 * Two request/reply exchanges on a short-lived socket, each given 50 ms.
 */
enum rr_peer rr_veth_peer(int ifindex, char *why, size_t len);

/* "not_veth", "xdp", "no_xdp", "unknown". */
const char *rr_peer_label(enum rr_peer p);

/* What localaddr.c, peer.c and link.c share (netlink.c). */

/* What reqrouter reads of one RTM_NEWLINK. */
struct rr_nl_link {
	int ifindex;
	unsigned int flags; /* ifi_flags: IFF_UP, IFF_RUNNING, ... */
	char name[IF_NAMESIZE];
	char kind[32];	  /* IFLA_INFO_KIND, "" if none */
	uint16_t vlan_id; /* a VLAN device's IFLA_VLAN_ID, else 0 */
	uint32_t mtu;	  /* IFLA_MTU, 0 if none */
	uint8_t mac[6];	  /* IFLA_ADDRESS, if has_mac (an Ethernet one) */
	bool has_mac;
	bool has_link; /* IFLA_LINK */
	int link;
	int netnsid;	       /* IFLA_LINK_NETNSID, -1 if none */
	uint32_t xdp_prog;     /* any mode */
	uint32_t xdp_drv_prog; /* native mode, 0 if none */
};

/* Reads an RTM_NEWLINK or RTM_DELLINK whose nlmsg_len bytes the caller
 * has checked are there. 0 or -EBADMSG. */
int rr_nl_parse_link(const struct nlmsghdr *nh, struct rr_nl_link *l);
/* RTM_GETLINK of @ifindex, in namespace @netnsid (ours if < 0), on a
 * blocking socket @fd (its timeout bounds the wait), tagged @seq. */
int rr_nl_get_link(int fd, uint32_t seq, int ifindex, int netnsid,
		   struct rr_nl_link *l);

/*
 * Files the attributes at @rta (@len bytes) by type into @tb[0..@max];
 * unknown types (a newer kernel's) are passed over. -EINVAL if one runs
 * past the end or something that is no attribute is left over.
 */
int rr_nl_parse_attrs(const struct rtattr **tb, unsigned int max,
		      const struct rtattr *rta, int len);
/* NLMSG_OK() without its signed/unsigned comparison, which clang's
 * -Wsign-compare refuses: a whole message header, and the message within
 * the @len bytes left. */
bool rr_nl_ok(const struct nlmsghdr *nh, int len);
/* A NETLINK_ROUTE socket: non-blocking, or with a receive timeout. */
int rr_nl_socket(bool nonblock, long timeout_us);
/*
 * One datagram into @buf: its length, 0 for one that is not the kernel's
 * (ignored), or -errno: -EAGAIN when nothing came (non-blocking, or the
 * timeout), -EMSGSIZE when it did not fit, -ENOBUFS when the socket
 * overran and notifications were lost.
 */
int rr_nl_recv(int fd, void *buf, size_t size, int flags);
int rr_nl_send(int fd, const struct nlmsghdr *nh);
/*
 * Sends the dump request @req (NLM_F_DUMP, its nlmsg_seq set) on @fd and
 * reads the answer into @buf (@size bytes, aligned for a struct
 * nlmsghdr) to its end, calling @each on every message of it; @each's
 * error ends it early. Sets *@intr if the kernel says the dump raced a
 * change. 0, or -errno: -ETIMEDOUT when the socket's timeout ran out.
 */
int rr_nl_dump(int fd, const struct nlmsghdr *req, void *buf, size_t size,
	       int (*each)(const struct nlmsghdr *nh, void *ctx), void *ctx,
	       bool *intr);
/* The error an NLMSG_ERROR carries; we ask for no ACKs, so 0 is odd. */
int rr_nl_error(const struct nlmsghdr *nh);
/* Appends a u32 attribute to the request at @msg, which has room. */
void rr_nl_put_u32(void *msg, unsigned short type, uint32_t v);

#endif /* RR_NETLINK_H */
