// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/bpf/packet program (packet.c): the fixture tables, frame ->
 * the counter it must move, for the ports packet.c configures, and the
 * allow-lists and local routes the cases assume, written as reqrouter
 * writes them.
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "frames.h"
#include "packet_test.h"
#include "testutil.h"
#include "config.h"
#include "reqrouter.skel.h"
#include "shared/guard.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "util.h"
#include "xdp.h"

#define NO_ALT .alt = -1
/* U4()/U6() give defaults that a case then overrides, on purpose. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#define U4(...)                                                  \
	{                                                        \
		.family = AF_INET, .plen = 16, .sport = F_SPORT, \
		.dport = 1232, __VA_ARGS__                       \
	}
#define U6(...)                                                   \
	{                                                         \
		.family = AF_INET6, .plen = 16, .sport = F_SPORT, \
		.dport = 1232, __VA_ARGS__                        \
	}

static const struct bpf_case steer[] = {
	/* Steered: the lookup happens, the empty slot falls back to pass. */
	{ "IPv4 UDP to a function", U4(), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv6 UDP to a function", U6(), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "802.1Q IPv4 UDP", U4(.vlans = 1), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "802.1Q IPv6 UDP", U6(.vlans = 1), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "QinQ IPv4 UDP", U4(.vlans = 2), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "QinQ IPv6 UDP", U6(.vlans = 2), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	/* The user tier checks checksums itself: steered unverified. */
	{ "garbage UDP checksum", U4(.csum = CSUM_GARBAGE), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv6 garbage UDP checksum, QinQ",
	  U6(.csum = CSUM_GARBAGE, .vlans = 2), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "partial UDP checksum", U6(.csum = CSUM_PARTIAL), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv4 zero UDP checksum", U4(.csum = CSUM_ZERO), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv4 DF set", U4(.frag = SET(F_IP_DF)), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "IPv4 no flags", U4(.frag = SET(0)), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "empty payload", U4(.plen = 0), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "1500-byte IPv4 packet", U4(.plen = 1472), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "1500-byte IPv6 packet", U6(.plen = 1452, .vlans = 2), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "Ethernet padding", U4(.plen = 2, .pad = 16), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv6 Ethernet padding", U6(.plen = 2, .pad = 9), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "UDP shorter than the IP payload",
	  U4(.plen = 4, .pad = 4, .ip_len = SET(20 + 8 + 8)), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "port 1", U4(.dport = 1), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "port 7 over IPv6", U6(.dport = 7), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "port 65535", U4(.dport = 65535), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },

	/* Not ours: to the kernel, counted by reason. */
	{ "port 1233 (1232's neighbour)", U4(.dport = 1233), 0,
	  RR_XDP_PASS_NO_FUNCTION, NO_ALT },
	{ "port 1248 (1232 + 16)", U4(.dport = 1248), 0,
	  RR_XDP_PASS_NO_FUNCTION, NO_ALT },
	{ "port 1264 (1232 + 32)", U4(.dport = 1264), 0,
	  RR_XDP_PASS_NO_FUNCTION, NO_ALT },
	{ "port 0", U4(.dport = 0), 0, RR_XDP_PASS_NO_FUNCTION, NO_ALT },
	{ "port 65534", U6(.dport = 65534), 0, RR_XDP_PASS_NO_FUNCTION,
	  NO_ALT },
	{ "port 1232 as source only", U4(.sport = 1232, .dport = 53), 0,
	  RR_XDP_PASS_NO_FUNCTION, NO_ALT },
	/* IPv4 options are the kernel's, whatever the port: steered once,
	 * passed now, before the port is looked at. */
	{ "IPv4 with options", U4(.opt_words = 10), 0, RR_XDP_PASS_IP_OPTIONS,
	  NO_ALT },
	{ "IPv4 with one option word, 802.1Q", U4(.opt_words = 1, .vlans = 1),
	  0, RR_XDP_PASS_IP_OPTIONS, NO_ALT },
	{ "IPv4 options, port without a function",
	  U4(.opt_words = 2, .dport = 1233), 0, RR_XDP_PASS_IP_OPTIONS,
	  NO_ALT },
	/* Replies that could bounce between two servers forever. */
	{ "source port 0", U4(.sport = 0), 0, RR_XDP_DROP_LOOP_PORT, NO_ALT },
	{ "source port 7 (echo)", U4(.sport = 7), 0, RR_XDP_DROP_LOOP_PORT,
	  NO_ALT },
	{ "source port 19 (chargen), IPv6", U6(.sport = 19), 0,
	  RR_XDP_DROP_LOOP_PORT, NO_ALT },
	{ "source port with a function of ours", U4(.sport = 1232), 0,
	  RR_XDP_DROP_LOOP_PORT, NO_ALT },
	/* Group destinations are the kernel's. */
	{ "broadcast MAC", U4(.dst_mac = f_bcast_mac), 0,
	  RR_XDP_PASS_NOT_UNICAST, NO_ALT },
	{ "IPv4 limited broadcast", U4(.daddr = f_bcast_ip4), 0,
	  RR_XDP_PASS_NOT_UNICAST, NO_ALT },
	{ "IPv4 multicast, VLAN", U4(.daddr = f_mcast_ip4, .vlans = 1), 0,
	  RR_XDP_PASS_NOT_UNICAST, NO_ALT },
	{ "IPv6 multicast", U6(.daddr = f_mcast_ip6), 0,
	  RR_XDP_PASS_NOT_UNICAST, NO_ALT },
	{ "port with 0 sockets", U4(.dport = 9), 0, RR_XDP_PASS_NO_FUNCTION,
	  NO_ALT },
	{ "port with a slot out of range", U4(.dport = 100), 0,
	  RR_XDP_PASS_NO_FUNCTION, NO_ALT },
	{ "ARP", U4(.ethertype = SET(F_ETH_ARP)), 0, RR_XDP_PASS_NOT_IP,
	  NO_ALT },
	{ "LLDP", U4(.ethertype = SET(0x88cc)), 0, RR_XDP_PASS_NOT_IP, NO_ALT },
	{ "tagged ARP", U4(.vlans = 1, .ethertype = SET(F_ETH_ARP)), 0,
	  RR_XDP_PASS_NOT_IP, NO_ALT },
	{ "three VLAN tags", U4(.vlans = 3), 0, RR_XDP_PASS_NOT_IP,
	  .alt = RR_XDP_PASS_MALFORMED },
	{ "TCP to a function's port", U4(.proto = SET(6)), 0,
	  RR_XDP_PASS_NOT_UDP, NO_ALT },
	{ "ICMP", U4(.proto = SET(1)), 0, RR_XDP_PASS_NOT_UDP, NO_ALT },
	{ "IPv6 TCP", U6(.proto = SET(6)), 0, RR_XDP_PASS_NOT_UDP, NO_ALT },
	{ "ICMPv6", U6(.proto = SET(58)), 0, RR_XDP_PASS_NOT_UDP, NO_ALT },
	{ "QinQ TCP", U6(.vlans = 2, .proto = SET(6)), 0, RR_XDP_PASS_NOT_UDP,
	  NO_ALT },
	{ "first fragment", U4(.frag = SET(F_IP_MF)), 0, RR_XDP_PASS_FRAGMENT,
	  NO_ALT },
	{ "middle fragment", U4(.frag = SET(F_IP_MF | 100)), 0,
	  RR_XDP_PASS_FRAGMENT, NO_ALT },
	{ "last fragment", U4(.frag = SET(100)), 0, RR_XDP_PASS_FRAGMENT,
	  NO_ALT },
	{ "last fragment with DF", U4(.frag = SET(F_IP_DF | 1)), 0,
	  RR_XDP_PASS_FRAGMENT, NO_ALT },
	{ "IPv6 hop-by-hop", U6(.proto = SET(0)), 0, RR_XDP_PASS_IPV6_EXT,
	  NO_ALT },
	{ "IPv6 routing header", U6(.proto = SET(43)), 0, RR_XDP_PASS_IPV6_EXT,
	  NO_ALT },
	{ "IPv6 fragment header", U6(.proto = SET(44)), 0, RR_XDP_PASS_IPV6_EXT,
	  NO_ALT },
	{ "IPv6 destination options", U6(.proto = SET(60)), 0,
	  RR_XDP_PASS_IPV6_EXT, NO_ALT },
	{ "IPv6 AH", U6(.proto = SET(51)), 0, RR_XDP_PASS_IPV6_EXT, NO_ALT },

	/* Broken: passed on for the kernel to drop, counted as malformed. */
	{ "Ethernet header only (IPv4 type)", U4(), SET(14),
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "Ethernet header only (IPv6 type)", U6(), SET(14),
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "Ethernet header only (VLAN type)", U4(.vlans = 1), SET(14),
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "half a VLAN tag", U4(.vlans = 1), SET(16), RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "outer tag only of QinQ", U4(.vlans = 2), SET(18),
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IPv4 header cut", U4(), SET(14 + 19), RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "IPv4 options cut", U4(.opt_words = 2), SET(14 + 24),
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IPv6 header cut", U6(), SET(14 + 39), RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "UDP header cut (lengths agree)", U4(.plen = 0, .ip_len = SET(24)),
	  SET(14 + 24), RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IPv6 UDP header cut (lengths agree)",
	  U6(.plen = 0, .ip_len = SET(4)), SET(14 + 44), RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "payload cut", U4(), SET(14 + 20 + 8 + 10), RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "IPv6 payload cut", U6(), SET(14 + 40 + 8 + 10),
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IHL 0", U4(.ihl = SET(0)), 0, RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IHL 4", U4(.ihl = SET(4)), 0, RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IHL 15 beyond the packet", U4(.ihl = SET(15)), 0,
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IP total length beyond the frame", U4(.ip_len = SET(20 + 8 + 17)), 0,
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IP total length under the header", U4(.ip_len = SET(19)), 0,
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IPv4 version 6", U4(.version = SET(6)), 0, RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "IPv6 version 4", U6(.version = SET(4)), 0, RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "IPv6 payload length beyond the frame", U6(.ip_len = SET(8 + 17)), 0,
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "UDP length 0", U4(.udp_len = SET(0)), 0, RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "UDP length 7", U4(.udp_len = SET(7)), 0, RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "UDP length beyond the IP payload", U4(.udp_len = SET(8 + 17)), 0,
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "IPv6 UDP length 7", U6(.udp_len = SET(7)), 0, RR_XDP_PASS_MALFORMED,
	  NO_ALT },
	{ "IPv6 UDP length beyond the payload", U6(.udp_len = SET(8 + 17)), 0,
	  RR_XDP_PASS_MALFORMED, NO_ALT },
	{ "QinQ, UDP length beyond the payload",
	  U4(.vlans = 2, .udp_len = SET(8 + 17)), 0, RR_XDP_PASS_MALFORMED,
	  NO_ALT },
};

/* With the interface's MAC (f_dst_mac) set, as reqrouter loads it. */
static const uint8_t other_mac[6] = { 0x02, 0, 0, 0, 0, 0x99 };
static const struct bpf_case mac[] = {
	{ "our MAC", U4(), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "our MAC, QinQ, IPv6", U6(.vlans = 2), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "another host's MAC", U4(.dst_mac = other_mac), 0,
	  RR_XDP_PASS_OTHER_HOST, NO_ALT },
	{ "another host's MAC, IPv6", U6(.dst_mac = other_mac), 0,
	  RR_XDP_PASS_OTHER_HOST, NO_ALT },
	{ "broadcast still counts as not_unicast", U4(.dst_mac = f_bcast_mac),
	  0, RR_XDP_PASS_NOT_UNICAST, NO_ALT },
};

/* The same program after the interface took other_mac while it ran
 * (rr_xdp_set_link(), as link.c follows it): the old address is another
 * host's now. */
static const struct bpf_case moved_mac[] = {
	{ "the new MAC", U4(.dst_mac = other_mac), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "the new MAC, 802.1Q, IPv6", U6(.dst_mac = other_mac, .vlans = 1), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "the old MAC", U4(), 0, RR_XDP_PASS_OTHER_HOST, NO_ALT },
	{ "the old MAC, IPv6", U6(), 0, RR_XDP_PASS_OTHER_HOST, NO_ALT },
};

/* With the VLAN check on (as reqrouter runs) and only VLAN 100 the
 * host's: the frames' outer tag is VID 100, an inner one VID 201. */
static const struct bpf_case vlan100[] = {
	{ "untagged", U4(.dst_mac = other_mac), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "802.1Q VID 100, the host's", U4(.dst_mac = other_mac, .vlans = 1), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv6, 802.1Q VID 100", U6(.dst_mac = other_mac, .vlans = 1), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "QinQ 100 + 201: the inner one not the host's",
	  U4(.dst_mac = other_mac, .vlans = 2), 0, RR_XDP_PASS_VLAN, NO_ALT },
};

/* And with VLANs 100 and 201 the host's. */
static const struct bpf_case vlan100_201[] = {
	{ "QinQ 100 + 201, both the host's",
	  U4(.dst_mac = other_mac, .vlans = 2), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "IPv6, QinQ 100 + 201", U6(.dst_mac = other_mac, .vlans = 2), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
};

/*
 * Allow-lists, written the way reqrouter writes them: parsed from the
 * config syntax by rr_parse_cidrs() and added by rr_xdp_allow().
 */
static const struct {
	uint32_t slot;
	const char *allow;
} allow_lists[] = {
	{ 6, "10.0.0.0/24, 192.0.2.7, fd00::/64" },
	{ 7, "198.51.100.0/24" }, /* IPv4 only: IPv6 is shut out */
	{ 8, "0.0.0.0/0" },
	{ 9, "2001:db8:aa00::/40 ::1" },
	{ 13, "192.0.2.0/24" }, /* PORT_LOCAL_ACL's */
};

static const uint8_t a4_in[4] = { 10, 0, 0, 200 };
static const uint8_t a4_next_net[4] = { 10, 0, 1, 1 };
static const uint8_t a4_host[4] = { 192, 0, 2, 7 };
static const uint8_t a4_host_next[4] = { 192, 0, 2, 8 };
static const uint8_t a4_other[4] = { 198, 51, 100, 9 };
static const uint8_t a6_in[16] = { 0xfd, 0,    0, 0, 0, 0, 0, 0,
				   0xff, 0xff, 0, 0, 0, 0, 0, 0x99 };
static const uint8_t a6_next_net[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 1,
					 0,    0, 0, 0, 0, 0, 0, 1 };
static const uint8_t a6_40[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xaa, 0xff, 0 };
static const uint8_t a6_41[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xab, 0 };
static const uint8_t a6_lo[16] = { [15] = 1 };

static const struct bpf_case allow[] = {
	{ "allowed /24", U4(.dport = 5000, .saddr = a4_in), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "next /24", U4(.dport = 5000, .saddr = a4_next_net), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	{ "allowed host", U4(.dport = 5000, .saddr = a4_host), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "the host next to it", U4(.dport = 5000, .saddr = a4_host_next), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	{ "allowed through QinQ", U4(.dport = 5000, .saddr = a4_in, .vlans = 2),
	  0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "not allowed through QinQ",
	  U4(.dport = 5000, .saddr = a4_next_net, .vlans = 2), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	/* IPv4 options go to the kernel before any port's rules: steered
	 * and dropped once, passed now. */
	{ "allowed with IPv4 options",
	  U4(.dport = 5000, .saddr = a4_in, .opt_words = 3), 0,
	  RR_XDP_PASS_IP_OPTIONS, NO_ALT },
	{ "not allowed with IPv4 options",
	  U4(.dport = 5000, .saddr = a4_other, .opt_words = 3), 0,
	  RR_XDP_PASS_IP_OPTIONS, NO_ALT },
	{ "allowed /64", U6(.dport = 5000, .saddr = a6_in), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "allowed /64 through 802.1Q",
	  U6(.dport = 5000, .saddr = a6_in, .vlans = 1), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "next /64", U6(.dport = 5000, .saddr = a6_next_net), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	{ "next /64 through QinQ",
	  U6(.dport = 5000, .saddr = a6_next_net, .vlans = 2), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	/* one function's list does not open another's */
	{ "allowed for another function", U4(.dport = 5001, .saddr = a4_in), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	{ "allowed here, not there", U4(.dport = 5000, .saddr = a4_other), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	{ "IPv4-only list", U4(.dport = 5001, .saddr = a4_other), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv6 against an IPv4-only list", U6(.dport = 5001, .saddr = a6_in),
	  0, RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	{ "0.0.0.0/0", U4(.dport = 5002, .saddr = a4_other), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv6 against 0.0.0.0/0", U6(.dport = 5002), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	{ "inside a /40", U6(.dport = 5003, .saddr = a6_40), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "just outside a /40", U6(.dport = 5003, .saddr = a6_41), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	{ "::1 listed alone: a martian source all the same",
	  U6(.dport = 5003, .saddr = a6_lo), 0, RR_XDP_PASS_NOT_UNICAST,
	  NO_ALT },
	{ "IPv4 against an IPv6-only list", U4(.dport = 5003), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	/* ports without a list do not look at the source */
	{ "no list on the port", U4(.dport = 1232, .saddr = a4_next_net), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "no list on the port, IPv6", U6(.dport = 7, .saddr = a6_next_net), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	/* the host's own traffic to those ports is not the list's business */
	{ "TCP to a listed port",
	  U4(.dport = 5000, .saddr = a4_other, .proto = SET(6)), 0,
	  RR_XDP_PASS_NOT_UDP, NO_ALT },
	{ "fragment to a listed port",
	  U4(.dport = 5000, .saddr = a4_other, .frag = SET(F_IP_MF)), 0,
	  RR_XDP_PASS_FRAGMENT, NO_ALT },
	{ "malformed to a listed port",
	  U4(.dport = 5000, .saddr = a4_other, .udp_len = SET(7)), 0,
	  RR_XDP_PASS_MALFORMED, NO_ALT },
};

/*
 * The host's own destinations (setup_local_routes()): the server's
 * addresses as /32 and /128, and a /24 routed to the host as a whole
 * ("AnyIP", ip route add local 198.51.100.0/24 dev lo). The unassigned
 * addresses are in the server's subnets but not the host's: transit
 * traffic, or an address that has moved to another host.
 */
static const uint8_t anyip4[4] = { 198, 51, 100, 0 };
static const uint8_t in_anyip4[4] = { 198, 51, 100, 77 };
static const uint8_t past_anyip4[4] = { 198, 51, 101, 1 };
static const uint8_t unassigned4[4] = { 10, 0, 0, 3 };
static const uint8_t unassigned6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
					 0xab, 0, 0, 0, 0, 0, 0, 3 };
static const uint8_t a4_acl13[4] = { 192, 0, 2, 5 };

#define LOCAL4(...) U4(.dport = PORT_LOCAL, __VA_ARGS__)
#define LOCAL6(...) U6(.dport = PORT_LOCAL, __VA_ARGS__)
#define MINSRC4(...) U4(.dport = PORT_MIN_SRC, __VA_ARGS__)

static const struct bpf_case guard[] = {
	/* RR_PORT_LOCAL_DST: answered for the host's destinations only. */
	{ "local IPv4 (/32)", LOCAL4(), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "local IPv6 (/128)", LOCAL6(), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "local IPv4, 802.1Q", LOCAL4(.vlans = 1), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "local IPv6, QinQ", LOCAL6(.vlans = 2), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "inside the AnyIP /24", LOCAL4(.daddr = in_anyip4), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "the AnyIP /24's first address", LOCAL4(.daddr = anyip4), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "just past the AnyIP /24", LOCAL4(.daddr = past_anyip4), 0,
	  RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "unassigned IPv4 of the server's subnet",
	  LOCAL4(.daddr = unassigned4), 0, RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "unassigned IPv6 of the server's /64", LOCAL6(.daddr = unassigned6),
	  0, RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "unassigned IPv4, 802.1Q", LOCAL4(.daddr = unassigned4, .vlans = 1),
	  0, RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "unassigned IPv6, 802.1Q", LOCAL6(.daddr = unassigned6, .vlans = 1),
	  0, RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "unassigned IPv4, QinQ", LOCAL4(.daddr = unassigned4, .vlans = 2), 0,
	  RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "unassigned IPv6, QinQ", LOCAL6(.daddr = unassigned6, .vlans = 2), 0,
	  RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "another host's source as destination", LOCAL4(.daddr = f_src_ip4), 0,
	  RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	/* Without the flag, any destination is answered (answer_for = any). */
	{ "unassigned IPv4, port without the check", U4(.daddr = unassigned4),
	  0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "unassigned IPv6, port without the check",
	  U6(.daddr = unassigned6, .vlans = 1), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	/* Not local comes first: nothing the port would drop is dropped,
	 * the kernel gets it. */
	{ "unassigned, from a loop port",
	  LOCAL4(.daddr = unassigned4, .sport = 7), 0, RR_XDP_PASS_NOT_LOCAL,
	  NO_ALT },
	{ "unassigned, from a served port",
	  LOCAL6(.daddr = unassigned6, .sport = 1232), 0, RR_XDP_PASS_NOT_LOCAL,
	  NO_ALT },
	{ "unassigned, quarantined, from a low port",
	  U4(.dport = PORT_LOCAL_QUAR, .daddr = unassigned4, .sport = 53), 0,
	  RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "unassigned, quarantined",
	  U6(.dport = PORT_LOCAL_QUAR, .daddr = unassigned6), 0,
	  RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "unassigned, source not allowed",
	  U4(.dport = PORT_LOCAL_ACL, .daddr = unassigned4), 0,
	  RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	/* Local, the port's own rules follow, in order. */
	{ "local, quarantined, from a loop port",
	  U4(.dport = PORT_LOCAL_QUAR, .sport = 7), 0, RR_XDP_DROP_LOOP_PORT,
	  NO_ALT },
	{ "local, quarantined, from a low port",
	  U4(.dport = PORT_LOCAL_QUAR, .sport = 53), 0, RR_XDP_DROP_LOW_PORT,
	  NO_ALT },
	{ "local, quarantined", U6(.dport = PORT_LOCAL_QUAR), 0,
	  RR_XDP_DROP_QUARANTINED, NO_ALT },
	{ "local, source not allowed", U4(.dport = PORT_LOCAL_ACL), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
	{ "local, source allowed",
	  U4(.dport = PORT_LOCAL_ACL, .saddr = a4_acl13), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },

	/* min_src_port 1024: no requests from the well-known ports. */
	{ "source 1023", MINSRC4(.sport = 1023), 0, RR_XDP_DROP_LOW_PORT,
	  NO_ALT },
	{ "source 53 (DNS)", MINSRC4(.sport = 53), 0, RR_XDP_DROP_LOW_PORT,
	  NO_ALT },
	{ "source 123 (NTP), IPv6, QinQ",
	  U6(.dport = PORT_MIN_SRC, .sport = 123, .vlans = 2), 0,
	  RR_XDP_DROP_LOW_PORT, NO_ALT },
	{ "source 2", MINSRC4(.sport = 2), 0, RR_XDP_DROP_LOW_PORT, NO_ALT },
	{ "source 1024", MINSRC4(.sport = 1024), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "source 40000", MINSRC4(.sport = 40000), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
	{ "source 65534, IPv6", U6(.dport = PORT_MIN_SRC, .sport = 65534), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	/* The loop ports keep their own counter. */
	{ "source 7 (echo)", MINSRC4(.sport = 7), 0, RR_XDP_DROP_LOOP_PORT,
	  NO_ALT },
	{ "source 0", MINSRC4(.sport = 0), 0, RR_XDP_DROP_LOOP_PORT, NO_ALT },
	{ "source 1232 (served here)", MINSRC4(.sport = 1232), 0,
	  RR_XDP_DROP_LOOP_PORT, NO_ALT },
	/* min_src_port 0, as the tests' ports have: only the loop ports. */
	{ "source 53, min_src_port 0", U4(.sport = 53), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "source 1023, min_src_port 0", U6(.sport = 1023), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },

	/* IPv4 options, on a port of each kind: the kernel's. */
	{ "IPv4 options, served port", U4(.opt_words = 1), 0,
	  RR_XDP_PASS_IP_OPTIONS, NO_ALT },
	{ "IPv4 options (IHL 15), local destination", LOCAL4(.opt_words = 10),
	  0, RR_XDP_PASS_IP_OPTIONS, NO_ALT },
	{ "IPv4 options, unassigned destination",
	  LOCAL4(.opt_words = 1, .daddr = unassigned4), 0,
	  RR_XDP_PASS_IP_OPTIONS, NO_ALT },
	{ "IPv4 options, from a low port", MINSRC4(.opt_words = 2, .sport = 53),
	  0, RR_XDP_PASS_IP_OPTIONS, NO_ALT },
};

/*
 * The in-kernel tier (packet.c loads echo's XDP program for PORT_XDP and
 * PORT_XDP_GUARDED): it verifies the UDP checksum as the kernel would,
 * and sees nothing the guards turn away.
 */
#define XDP4(...) U4(.dport = PORT_XDP, __VA_ARGS__)
#define XDP6(...) U6(.dport = PORT_XDP, __VA_ARGS__)
#define GUARDED4(...) U4(.dport = PORT_XDP_GUARDED, __VA_ARGS__)
#define GUARDED6(...) U6(.dport = PORT_XDP_GUARDED, __VA_ARGS__)
#define TX 0, RR_XDP_TX_FUNCTION, NO_ALT
#define DROPPED(why) 0, RR_XDP_DROP_FUNCTION, NO_ALT, .drop = (why)

static const struct bpf_case tier[] = {
	{ "valid checksum", XDP4(), TX },
	{ "IPv6 valid checksum", XDP6(), TX },
	{ "partial checksum", XDP4(.csum = CSUM_PARTIAL), TX },
	{ "IPv6 partial checksum, QinQ", XDP6(.csum = CSUM_PARTIAL, .vlans = 2),
	  TX },
	{ "IPv4 zero checksum", XDP4(.csum = CSUM_ZERO), TX },
	{ "IPv4 zero checksum, 802.1Q", XDP4(.csum = CSUM_ZERO, .vlans = 1),
	  TX },
	{ "garbage checksum", XDP4(.csum = CSUM_GARBAGE),
	  DROPPED(RR_DROP_BAD_CHECKSUM) },
	{ "IPv6 garbage checksum", XDP6(.csum = CSUM_GARBAGE),
	  DROPPED(RR_DROP_BAD_CHECKSUM) },
	{ "garbage checksum, QinQ, empty payload",
	  XDP4(.csum = CSUM_GARBAGE, .vlans = 2, .plen = 0),
	  DROPPED(RR_DROP_BAD_CHECKSUM) },
	{ "IPv6 zero checksum", XDP6(.csum = CSUM_ZERO),
	  DROPPED(RR_DROP_MALFORMED) },
	{ "IPv4 options", XDP4(.opt_words = 1), 0, RR_XDP_PASS_IP_OPTIONS,
	  NO_ALT },
	/* With the destination check and min_src_port 1024. */
	{ "guarded: local, from 40000", GUARDED4(), TX },
	{ "guarded: local IPv6, from 1024", GUARDED6(.sport = 1024), TX },
	{ "guarded: inside the AnyIP /24", GUARDED4(.daddr = in_anyip4), TX },
	{ "guarded: unassigned", GUARDED4(.daddr = unassigned4), 0,
	  RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "guarded: unassigned IPv6, QinQ",
	  GUARDED6(.daddr = unassigned6, .vlans = 2), 0, RR_XDP_PASS_NOT_LOCAL,
	  NO_ALT },
	{ "guarded: unassigned, garbage checksum",
	  GUARDED4(.daddr = unassigned4, .csum = CSUM_GARBAGE), 0,
	  RR_XDP_PASS_NOT_LOCAL, NO_ALT },
	{ "guarded: from 53", GUARDED4(.sport = 53), 0, RR_XDP_DROP_LOW_PORT,
	  NO_ALT },
	{ "guarded: IPv6 from 1023", GUARDED6(.sport = 1023), 0,
	  RR_XDP_DROP_LOW_PORT, NO_ALT },
	{ "guarded: from 7", GUARDED4(.sport = 7), 0, RR_XDP_DROP_LOOP_PORT,
	  NO_ALT },
	{ "guarded: local, garbage checksum", GUARDED6(.csum = CSUM_GARBAGE),
	  DROPPED(RR_DROP_BAD_CHECKSUM) },
};
#pragma GCC diagnostic pop

const struct bpf_table steer_cases = { steer, ARRAY_SIZE(steer) };
const struct bpf_table mac_cases = { mac, ARRAY_SIZE(mac) };
const struct bpf_table moved_mac_cases = { moved_mac, ARRAY_SIZE(moved_mac) };
const struct bpf_table vlan100_cases = { vlan100, ARRAY_SIZE(vlan100) };
const struct bpf_table vlan100_201_cases = { vlan100_201,
					     ARRAY_SIZE(vlan100_201) };
const uint8_t *const moved_mac_addr = other_mac;
const struct bpf_table allow_cases = { allow, ARRAY_SIZE(allow) };
const struct bpf_table guard_cases = { guard, ARRAY_SIZE(guard) };
const struct bpf_table tier_cases = { tier, ARRAY_SIZE(tier) };

/* One local route into the trie of its family; prefixlen counts the
 * address's bits only. */
static int add_local(struct reqrouter *skel, int family, const uint8_t *addr,
		     uint32_t prefixlen)
{
	struct rr_local_v4 k4 = { .prefixlen = prefixlen };
	struct rr_local_v6 k6 = { .prefixlen = prefixlen };
	uint8_t one = 1;

	if (family == AF_INET) {
		memcpy(k4.addr, addr, 4);
		return bpf_map__update_elem(skel->maps.local_v4, &k4,
					    sizeof(k4), &one, sizeof(one),
					    BPF_ANY);
	}
	memcpy(k6.addr, addr, 16);
	return bpf_map__update_elem(skel->maps.local_v6, &k6, sizeof(k6), &one,
				    sizeof(one), BPF_ANY);
}

int setup_local_routes(struct reqrouter *skel)
{
	t_at("%s", "local routes set-up");
	if (add_local(skel, AF_INET, f_dst_ip4, 32) ||
	    add_local(skel, AF_INET, anyip4, 24) ||
	    add_local(skel, AF_INET6, f_dst_ip6, 128)) {
		t_fail("cannot write the local routes: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int setup_allow_lists(struct reqrouter *skel)
{
	struct rr_xdp x = { .skel = skel };
	struct rr_cidr cidrs[16];
	char err[RR_ERRLEN];
	uint32_t n, i, j;

	t_at("%s", "allow-list set-up");
	for (i = 0; i < ARRAY_SIZE(allow_lists); i++) {
		n = 0; /* rr_parse_cidrs() appends */
		if (rr_parse_cidrs(allow_lists[i].allow, cidrs, 16, &n, err,
				   sizeof(err))) {
			t_fail("'%s': %s", allow_lists[i].allow, err);
			return -1;
		}
		for (j = 0; j < n; j++) {
			if (rr_xdp_allow(&x, allow_lists[i].slot, &cidrs[j])) {
				t_fail("rr_xdp_allow failed");
				return -1;
			}
		}
	}
	return 0;
}
