/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The served interface as it is now (link.c): what the XDP program and
 * the workers rely on, read at start and followed while serving from
 * rtnetlink's link notifications, the VLAN devices on it (from the same
 * notifications, of those links), and the RX queues, which change with
 * no notification (ethtool -L), counted again at each look.
 */
#ifndef RR_LINK_H
#define RR_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include <net/if.h>

#include "config.h" /* RR_VLAN_IDS */

struct rr_link;

/* The changes reqrouter follows, X(enum suffix, metric label). */
#define RR_LINK_CHANGES(X)        \
	X(MTU, "mtu")             \
	X(MAC, "mac")             \
	X(RX_QUEUES, "rx_queues") \
	X(DOWN, "down")           \
	X(UP, "up")               \
	X(NAME, "name")           \
	X(VLANS, "vlans")

#define RR_LINK_CHANGE_ENUM(name, label) RR_LINK_##name,
enum rr_link_change { RR_LINK_CHANGES(RR_LINK_CHANGE_ENUM) RR_LINK_CHANGE_MAX };
#undef RR_LINK_CHANGE_ENUM
extern const char *const rr_link_change_names[RR_LINK_CHANGE_MAX];

struct rr_link_state {
	char name[IF_NAMESIZE]; /* it can be renamed while down */
	uint8_t mac[6];
	uint32_t mtu;
	uint32_t rx_queues; /* 0 if they cannot be counted */
	bool up;	    /* administratively up and running (carrier) */
	bool gone;	    /* deleted, or moved to another namespace */
	/* The VLAN IDs of the host's VLAN devices on it (and, for QinQ, on
	 * those), a bit per ID; rr_link_vlans_known false if they could
	 * not be read. */
	uint64_t vlans[RR_VLAN_IDS / 64];
	bool vlans_known;
};

/*
 * Subscribes to link notifications (RTNLGRP_LINK), then reads @ifindex
 * into @st: listening first, so that no change falls between. 0 or
 * -errno (-ENODEV: no such link; -EPROTONOSUPPORT: not an Ethernet
 * link, which has no 6-byte MAC).
 */
int rr_link_open(struct rr_link **out, int ifindex, struct rr_link_state *st);

/*
 * Never blocks: reads what the kernel said about the link since the last
 * call (asking again if notifications were lost) and counts its RX
 * queues. @st is updated; returns 1 if anything in it changed, 0 if not,
 * -errno if the link could not be read (@st is left as it was).
 */
int rr_link_update(struct rr_link *l, struct rr_link_state *st);

/* The link's RX queues (/sys/class/net/IFNAME/queues/rx-N), or -errno. */
int rr_link_rx_queues(const char *ifname);

/* "02:31:31:31:31:31" into @buf (at least 18 bytes). */
const char *rr_link_mac_str(const uint8_t *mac, char *buf);

void rr_link_close(struct rr_link *l); /* NULL-safe */

#endif /* RR_LINK_H */
