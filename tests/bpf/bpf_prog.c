// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the XDP program (kern/reqrouter.bpf.c) without traffic: each
 * crafted frame of a fixture table runs once through
 * bpf_prog_test_run_opts(), and the test checks what a user would see:
 * the verdict (nothing is ever dropped: with no socket in the XSKMAP the
 * redirect falls back to XDP_PASS), the frame handed on unchanged, exactly
 * one counter of xdp_stats moved and the round-robin cursor moved only
 * for frames that were steered to a function. Frames that would really be
 * redirected need AF_XDP sockets; the integration tests send those.
 *
 * RX queues other than 0 need a device: the test creates a veth pair
 * with many queues in a private network namespace. Needs root; exits 77
 * (skip) when it is not root or the kernel has no BPF.
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
#include "testutil.h"
#include "config.h"
#include "reqrouter.skel.h"
#include "rr_shared.h"
#include "xdp.h"

#define SKIP 77
#define DUMMY_QUEUES 66 /* beyond RR_MAX_QUEUES, to see the range check */

static struct reqrouter *skel;
static int prog_fd, stats_fd, cursor_fd, port_fd;
static int ncpus;

static const char *const stat_names[RR_XDP_STAT_MAX] = {
#define STAT_NAME(name, verdict, reason) [RR_XDP_##name] = #name,
	RR_XDP_STATS(STAT_NAME)
#undef STAT_NAME
};

/* The ports the program is configured with: port -> (slot, sockets). */
static const struct {
	uint32_t port;
	struct rr_port_conf conf;
} ports[] = {
	{ 1, { .slot = 1, .nsocks = 1 } },
	{ 7, { .slot = 3, .nsocks = 2 } },
	{ 1232, { .slot = 0, .nsocks = 3 } },
	{ 4000, { .slot = 5, .nsocks = 20 } }, /* over RR_MAX_THREADS */
	{ 65535, { .slot = 31, .nsocks = 1 } },
	/* with allow-lists, set up by run_allow_lists() */
	{ 5000, { .slot = 6, .nsocks = 2, .flags = RR_PORT_ALLOWLIST } },
	{ 5001, { .slot = 7, .nsocks = 2, .flags = RR_PORT_ALLOWLIST } },
	{ 5002, { .slot = 8, .nsocks = 2, .flags = RR_PORT_ALLOWLIST } },
	{ 5003, { .slot = 9, .nsocks = 2, .flags = RR_PORT_ALLOWLIST } },
	/* present but unusable: must behave as "no function" */
	{ 9, { .slot = 4, .nsocks = 0 } },
	{ 100, { .slot = RR_MAX_PORTS, .nsocks = 1 } },
};

/* Sockets behind @slot: with one, the cursor stays put. */
static uint32_t slot_nsocks(int slot)
{
	size_t i;

	for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		if ((int)ports[i].conf.slot == slot)
			return ports[i].conf.nsocks;
	return 0;
}

static int port_slot(uint32_t port)
{
	size_t i;

	for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		if (ports[i].port == port)
			return (int)ports[i].conf.slot;
	return -1;
}

/* Snapshot of everything the program writes. */
struct snap {
	uint64_t stats[RR_STATS_SIZE];
	uint32_t cursor[RR_MAX_QUEUES * RR_MAX_PORTS];
};

static int take_snap(struct snap *s)
{
	uint64_t vals[ncpus];
	uint32_t k;
	int c;

	for (k = 0; k < RR_STATS_SIZE; k++) {
		if (bpf_map_lookup_elem(stats_fd, &k, vals))
			return -errno;
		s->stats[k] = 0;
		for (c = 0; c < ncpus; c++)
			s->stats[k] += vals[c];
	}
	for (k = 0; k < RR_MAX_QUEUES * RR_MAX_PORTS; k++)
		if (bpf_map_lookup_elem(cursor_fd, &k, &s->cursor[k]))
			return -errno;
	return 0;
}

/* Runs the program once on @frame; -errno if the kernel refused. */
static int run(const uint8_t *frame, uint32_t len, int ifindex, uint32_t queue,
	       uint32_t *retval)
{
	uint8_t out[4096];
	struct xdp_md ctx = {
		.data_end = len,
		.ingress_ifindex = (uint32_t)ifindex,
		.rx_queue_index = queue,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
		    .data_size_in = len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (ifindex) {
		opts.ctx_in = &ctx;
		opts.ctx_size_in = sizeof(ctx);
	}
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*retval = opts.retval;
	/* XDP_PASS hands the frame to the kernel: it must be untouched. */
	if (opts.data_size_out != len || memcmp(out, frame, len))
		t_fail("the frame was modified (%u bytes out of %u)",
		       opts.data_size_out, len);
	return 0;
}

/*
 * Runs @frame and checks: XDP_PASS (XDP_DROP for a drop_* counter),
 * counter @stat (or @alt) of @queue's row up by one and nothing else
 * counted, only the cursor of @slot on @queue moved (slot -1: none), as
 * it must with several sockets. Returns the new cursor value.
 */
static uint32_t expect(const uint8_t *frame, uint32_t len, int ifindex,
		       uint32_t queue, int stat, int alt, int slot)
{
	static struct snap before, after;
	uint32_t row = queue < RR_MAX_QUEUES ? queue : RR_MAX_QUEUES;
	uint32_t retval = 0, k, want_key, cur_key = 0, moved = 0;
	/* Only a source outside an allow-list is dropped. */
	uint32_t want_act =
		stat == RR_XDP_DROP_NOT_ALLOWED || stat == RR_XDP_DROP_LOOP_PORT
			? XDP_DROP
			: XDP_PASS;
	int ret;

	if (take_snap(&before)) {
		t_fail("cannot read the maps: %s", strerror(errno));
		return 0;
	}
	ret = run(frame, len, ifindex, queue, &retval);
	if (ret) {
		t_fail("test run refused: %s", strerror(-ret));
		return 0;
	}
	if (retval != want_act)
		t_fail("verdict %u, expected %s", retval,
		       want_act == XDP_DROP ? "XDP_DROP" : "XDP_PASS");
	if (take_snap(&after)) {
		t_fail("cannot read the maps: %s", strerror(errno));
		return 0;
	}

	want_key = row * RR_XDP_STAT_MAX + (uint32_t)stat;
	for (k = 0; k < RR_STATS_SIZE; k++) {
		uint64_t d = after.stats[k] - before.stats[k];

		if (!d)
			continue;
		moved++;
		if (d == 1 &&
		    (k == want_key ||
		     (alt >= 0 && k == row * RR_XDP_STAT_MAX + (uint32_t)alt)))
			continue;
		t_fail("counter %s of row %u moved by %llu, expected %s",
		       stat_names[k % RR_XDP_STAT_MAX], k / RR_XDP_STAT_MAX,
		       (unsigned long long)d, stat_names[stat]);
	}
	if (moved != 1)
		t_fail("%u counters moved, expected exactly %s of row %u",
		       moved, stat_names[stat], row);

	if (slot >= 0)
		cur_key = queue * RR_MAX_PORTS + (uint32_t)slot;
	for (k = 0; k < RR_MAX_QUEUES * RR_MAX_PORTS; k++) {
		int changed = after.cursor[k] != before.cursor[k];

		if (slot >= 0 && k == cur_key) {
			if (!changed && slot_nsocks(slot) > 1)
				t_fail("cursor of queue %u slot %d did not move",
				       queue, slot);
		} else if (changed) {
			t_fail("cursor of queue %u slot %u moved",
			       k / RR_MAX_PORTS, k % RR_MAX_PORTS);
		}
	}
	return slot >= 0 ? after.cursor[cur_key] : 0;
}

struct bpf_case {
	const char *what;
	struct frame_spec s;
	uint32_t cut; /* SET(): the frame cut to this many bytes */
	int stat;
	int alt; /* another acceptable counter, or -1 (set by ALT()) */
};

#define NO_ALT .alt = -1
#define F_SPORT 40000 /* an ephemeral client port */
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

static const struct bpf_case cases[] = {
	/* Steered: the lookup happens, the empty slot falls back to pass. */
	{ "IPv4 UDP to a function", U4(), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv6 UDP to a function", U6(), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "802.1Q IPv4 UDP", U4(.vlans = 1), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "802.1Q IPv6 UDP", U6(.vlans = 1), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "QinQ IPv4 UDP", U4(.vlans = 2), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "QinQ IPv6 UDP", U6(.vlans = 2), 0, RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "IPv4 with options", U4(.opt_words = 10), 0, RR_XDP_PASS_NO_SOCKET,
	  NO_ALT },
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
static const struct bpf_case mac_cases[] = {
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

static const struct bpf_case allow_cases[] = {
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
	{ "allowed with IPv4 options",
	  U4(.dport = 5000, .saddr = a4_in, .opt_words = 3), 0,
	  RR_XDP_PASS_NO_SOCKET, NO_ALT },
	{ "not allowed with IPv4 options",
	  U4(.dport = 5000, .saddr = a4_other, .opt_words = 3), 0,
	  RR_XDP_DROP_NOT_ALLOWED, NO_ALT },
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
#pragma GCC diagnostic pop

static void run_table(const struct bpf_case *table, size_t n)
{
	uint8_t frame[4096];
	struct frame_layout lay;
	const struct bpf_case *c;
	uint32_t len;
	size_t i;
	int slot;

	for (i = 0; i < n; i++) {
		c = &table[i];
		t_at("%s", c->what);
		len = build_frame(frame, sizeof(frame), &c->s, &lay);
		if (!len) {
			t_fail("frame does not fit");
			continue;
		}
		if (IS_SET(c->cut))
			len = SET_VAL(c->cut);
		slot = c->stat == RR_XDP_PASS_NO_SOCKET ? port_slot(c->s.dport)
							: -1;
		expect(frame, len, 0, 0, c->stat, c->alt, slot);
	}
}

/* Picks on one (queue, slot) go 0, 1, .., n-1, 0, .. (capped at
 * RR_MAX_THREADS); the cursor holds the last pick + 1. */
static void check_round_robin(uint32_t port, uint32_t nsocks, int ifindex,
			      uint32_t queue)
{
	static char what[96];
	struct frame_spec s = { .family = AF_INET,
				.sport = F_SPORT,
				.dport = (uint16_t)port,
				.plen = 8 };
	uint32_t n = nsocks < RR_MAX_THREADS ? nsocks : RR_MAX_THREADS;
	uint32_t key, zero = 0, i, cur;
	uint8_t frame[128];
	uint32_t len = build_frame(frame, sizeof(frame), &s, NULL);
	int slot = port_slot(port);

	snprintf(what, sizeof(what), "round robin, port %u, queue %u", port,
		 queue);
	t_at("%s", what);
	key = queue * RR_MAX_PORTS + (uint32_t)slot;
	if (bpf_map_update_elem(cursor_fd, &key, &zero, BPF_ANY)) {
		t_fail("cannot reset the cursor: %s", strerror(errno));
		return;
	}
	for (i = 0; i < 2 * n + 1; i++) {
		cur = expect(frame, len, ifindex, queue, RR_XDP_PASS_NO_SOCKET,
			     -1, slot);
		if (cur != i % n + 1) {
			t_fail("run %u picked socket %u, expected %u", i,
			       cur - 1, i % n);
			return;
		}
	}
}

/* A private namespace with a veth device of many queues; its ifindex. */
static int make_queues(char *why, size_t whylen)
{
	char cmd[128];
	int ifindex, ret;

	if (unshare(CLONE_NEWNET)) {
		snprintf(why, whylen, "unshare(CLONE_NEWNET): %s",
			 strerror(errno));
		return -1;
	}
	snprintf(cmd, sizeof(cmd),
		 "ip link add rrq0 numrxqueues %d type veth peer name rrq1",
		 DUMMY_QUEUES);
	ret = system(cmd);
	ifindex = (int)if_nametoindex("rrq0");
	if (ret || !ifindex) {
		snprintf(why, whylen, "'%s' failed", cmd);
		return -1;
	}
	return ifindex;
}

static void run_queues(void)
{
	struct frame_spec s = { .family = AF_INET6,
				.sport = F_SPORT,
				.dport = 1232,
				.plen = 8,
				.vlans = 1 };
	uint8_t frame[128];
	uint32_t len = build_frame(frame, sizeof(frame), &s, NULL);
	char why[160];
	int ifindex;

	ifindex = make_queues(why, sizeof(why));
	if (ifindex < 0) {
		/* Queue 0 is covered above; say what was left out. */
		printf("note: queues other than 0 not tested: %s\n", why);
		return;
	}
	t_at("%s", "queue 1");
	expect(frame, len, ifindex, 1, RR_XDP_PASS_NO_SOCKET, -1, 0);
	t_at("%s", "queue 63");
	expect(frame, len, ifindex, 63, RR_XDP_PASS_NO_SOCKET, -1, 0);
	t_at("%s", "queue 1, no function");
	s.dport = 1233;
	len = build_frame(frame, sizeof(frame), &s, NULL);
	expect(frame, len, ifindex, 1, RR_XDP_PASS_NO_FUNCTION, -1, -1);
	/* Beyond the queues served: counted in the extra row, not steered. */
	t_at("%s", "queue 64");
	s.dport = 1232;
	len = build_frame(frame, sizeof(frame), &s, NULL);
	expect(frame, len, ifindex, 64, RR_XDP_PASS_QUEUE_RANGE, -1, -1);
	t_at("%s", "queue 65");
	expect(frame, len, ifindex, 65, RR_XDP_PASS_QUEUE_RANGE, -1, -1);

	/* Each queue has its own cursor. */
	check_round_robin(1232, 3, ifindex, 1);
	check_round_robin(1232, 3, ifindex, 0);
	check_round_robin(7, 2, ifindex, 63);
}

static int setup_allow_lists(void)
{
	struct rr_xdp x = { .skel = skel };
	struct rr_cidr cidrs[16];
	char err[RR_ERRLEN];
	uint32_t n, i, j;

	t_at("%s", "allow-list set-up");
	for (i = 0; i < sizeof(allow_lists) / sizeof(allow_lists[0]); i++) {
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

static int print_quiet(enum libbpf_print_level level, const char *fmt,
		       va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Loads the program; with @mac, as reqrouter does for an interface. */
static int setup(const uint8_t *mac)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts);
	size_t i;
	int fd;

	if (geteuid() != 0) {
		printf("needs root to load the XDP program\n");
		return SKIP;
	}
	/* Can this kernel do BPF at all? If not, skip, do not fail. */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, &mopts);
	if (fd < 0) {
		printf("BPF unavailable: bpf_map_create: %s\n",
		       strerror(errno));
		return SKIP;
	}
	close(fd);

	libbpf_set_print(print_quiet);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "cannot count CPUs: %s\n", strerror(-ncpus));
		return 1;
	}
	skel = reqrouter__open();
	if (skel && mac)
		memcpy((void *)skel->rodata->if_mac, mac, 6);
	if (skel && reqrouter__load(skel)) {
		reqrouter__destroy(skel);
		skel = NULL;
	}
	if (!skel) {
		fprintf(stderr, "FAIL: the XDP program does not load: %s\n",
			strerror(errno));
		return 1;
	}
	prog_fd = bpf_program__fd(skel->progs.reqrouter_xdp);
	stats_fd = bpf_map__fd(skel->maps.xdp_stats);
	cursor_fd = bpf_map__fd(skel->maps.rr_cursor);
	port_fd = bpf_map__fd(skel->maps.port_map);
	for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		if (bpf_map_update_elem(port_fd, &ports[i].port, &ports[i].conf,
					BPF_ANY)) {
			fprintf(stderr, "cannot configure port %u: %s\n",
				ports[i].port, strerror(errno));
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = setup(NULL);
	if (ret) {
		reqrouter__destroy(skel);
		return ret;
	}
	run_table(cases, sizeof(cases) / sizeof(cases[0]));
	if (!setup_allow_lists())
		run_table(allow_cases,
			  sizeof(allow_cases) / sizeof(allow_cases[0]));
	check_round_robin(1232, 3, 0, 0);
	check_round_robin(7, 2, 0, 0);
	check_round_robin(1, 1, 0, 0);
	check_round_robin(4000, 20, 0, 0);
	run_queues();
	reqrouter__destroy(skel);

	/* Loaded for an interface: frames for another MAC are not ours. */
	ret = setup(f_dst_mac);
	if (ret) {
		reqrouter__destroy(skel);
		return ret;
	}
	run_table(mac_cases, sizeof(mac_cases) / sizeof(mac_cases[0]));
	reqrouter__destroy(skel);

	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("%zu frames and the round robin checked\n",
	       sizeof(cases) / sizeof(cases[0]) +
		       sizeof(allow_cases) / sizeof(allow_cases[0]) +
		       sizeof(mac_cases) / sizeof(mac_cases[0]));
	return 0;
}
