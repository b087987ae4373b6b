/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the set-up shares with following the host while serving
 * (follow.c); rr_invoker_watch() itself is in lifecycle.h.
 */
#ifndef RR_FOLLOW_H
#define RR_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "invoker.h"

/* The longest request served on a link of MTU @mtu: the MTU, or what a
 * UMEM frame holds if that is less. */
uint32_t rr_serve_limit(uint32_t mtu);
/* A warning if a UMEM frame cannot hold what @mtu lets in. */
void rr_say_frame_limit(const char *ifname, uint32_t mtu);

/* The VLAN tags the program answers: the setting `vlans` with the host's
 * VLAN devices as link.c last saw them; said at start, or as a change. */
void rr_follow_vlans(struct rr_invoker *inv, bool started);

/*
 * A veth hands its peer XDP_TX frames only while the peer runs NAPI;
 * looked at during set-up and then every RR_WATCH_MS. True if whether
 * replies from XDP arrive changed; @why gets the peer's state in words.
 */
bool rr_look_at_peer(struct rr_invoker *inv, char *why, size_t len);
/* Says what the peer's state means for the functions served. */
void rr_say_peer(const struct rr_invoker *inv, const char *why);

#endif /* RR_FOLLOW_H */
