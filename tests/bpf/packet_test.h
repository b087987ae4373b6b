/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of the tests/bpf/packet program share: a fixture, one crafted frame
 * and the one counter it must move, and the tables of them
 * (packet_cases.c) that packet.c runs.
 */
#ifndef RR_BPF_PACKET_TEST_H
#define RR_BPF_PACKET_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "frames.h"
#include "reqrouter.skel.h"

struct bpf_case {
	const char *what;
	struct frame_spec s;
	uint32_t cut; /* SET(): the frame cut to this many bytes */
	int stat;
	int alt;  /* another acceptable counter, or -1 (set by ALT()) */
	int drop; /* RR_XDP_DROP_FUNCTION: the enum rr_drop counted */
};

#define F_SPORT 40000 /* an ephemeral client port */

/*
 * Ports for the guards (guard_cases): answered for the host's own
 * destinations only (RR_PORT_LOCAL_DST); no requests from below 1024
 * (min_src_port); both, and quarantined; both an allow-list and the
 * destination check. The allow-list admits 192.0.2.0/24 only.
 */
#define PORT_LOCAL 6000
#define PORT_MIN_SRC 6001
#define PORT_LOCAL_QUAR 6002
#define PORT_LOCAL_ACL 6003
/* The in-kernel tier's ports (tier_cases), echo's XDP program in their
 * slots: plain, and with the destination check and min_src_port 1024. */
#define PORT_XDP 7000
#define PORT_XDP_GUARDED 7001

struct bpf_table {
	const struct bpf_case *c;
	size_t n;
};

/* Frames for the configured ports; with the interface's MAC set; and to
 * ports with allow-lists, which setup_allow_lists() writes first; to the
 * guarded ports, with the local routes setup_local_routes() writes; to
 * the in-kernel tier's ports. */
extern const struct bpf_table steer_cases, mac_cases, allow_cases, guard_cases,
	tier_cases;
/* Frames after the interface's MAC moved to moved_mac_addr while the
 * program ran. */
extern const struct bpf_table moved_mac_cases;
/* Then with the VLAN check on: VLAN 100 the host's; then 100 and 201. */
extern const struct bpf_table vlan100_cases, vlan100_201_cases;
extern const uint8_t *const moved_mac_addr;
int setup_allow_lists(struct reqrouter *skel);
/* The host's own destinations, as reqrouter mirrors its local routes:
 * the server's address (f_dst_ip4/32, f_dst_ip6/128) and an "AnyIP"
 * prefix, 198.51.100.0/24. */
int setup_local_routes(struct reqrouter *skel);

#endif /* RR_BPF_PACKET_TEST_H */
