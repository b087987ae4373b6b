// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of src/daemon/core/link.c and the link parser it shares
 * (core/netlink.c). First rr_nl_parse_link() on hand-built RTM_NEWLINK
 * messages: the MTU, the MAC and the flags read, an address that is no
 * Ethernet one left out, malformed messages refused, random bytes never a
 * crash. Then, as root, against the kernel in a network namespace of its
 * own (a forked child that unshares one and mounts its own sysfs, as `ip
 * netns exec` does, so nothing touches the host): a veth changed the ways
 * an operator changes one (MTU, MAC, up and down, ethtool -L, a rename,
 * deleted) and each change seen by rr_link_update() within a second.
 * Without root, iproute2 or ethtool the live test skips and says why.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "link.h"
#include "netlink.h"
#include "nlmsg.h"
#include "testutil.h"

#define SKIP 77

/* --- the parser, on crafted messages ---------------------------------- */

static struct nlmsghdr *link_msg(union t_nlmsg *m, int ifindex,
				 unsigned int flags)
{
	struct ifinfomsg *ifi;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(sizeof(*ifi));
	m->nh.nlmsg_type = RTM_NEWLINK;
	ifi = NLMSG_DATA(&m->nh);
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = flags;
	return &m->nh;
}

static const uint8_t mac_a[6] = { 0x02, 0x31, 0x31, 0x31, 0x31, 0x31 };

static void test_parse_link(void **state)
{
	struct rr_nl_link l;
	union t_nlmsg m;
	uint32_t mtu = 3000;
	char mac[18];

	link_msg(&m, 7, IFF_UP | IFF_RUNNING);
	t_nl_attr(&m, IFLA_IFNAME, "eth7", 5);
	t_nl_attr(&m, IFLA_MTU, &mtu, sizeof(mtu));
	t_nl_attr(&m, IFLA_ADDRESS, mac_a, sizeof(mac_a));
	assert_int_equal(rr_nl_parse_link(&m.nh, &l), 0);
	assert_int_equal(l.ifindex, 7);
	assert_string_equal(l.name, "eth7");
	assert_int_equal(l.mtu, 3000);
	assert_true(l.has_mac);
	assert_memory_equal(l.mac, mac_a, 6);
	assert_true(l.flags & IFF_RUNNING);
	assert_string_equal(rr_link_mac_str(l.mac, mac), "02:31:31:31:31:31");
}

static void test_parse_not_ethernet(void **state)
{
	uint8_t ib[20] = { 0x80 }; /* an InfiniBand address is 20 bytes */
	struct rr_nl_link l;
	union t_nlmsg m;

	link_msg(&m, 3, 0);
	t_nl_attr(&m, IFLA_ADDRESS, ib, sizeof(ib));
	assert_int_equal(rr_nl_parse_link(&m.nh, &l), 0);
	assert_false(l.has_mac);
	assert_int_equal(l.mtu, 0);
}

/* A VLAN device: its kind and ID, in IFLA_LINKINFO's nest. */
static void test_parse_vlan(void **state)
{
	uint8_t nest[64], *p = nest;
	struct rr_nl_link l;
	union t_nlmsg m;
	uint16_t id = 100;
	uint32_t link = 2;
	struct rtattr a;

	/* IFLA_INFO_KIND "vlan", IFLA_INFO_DATA { IFLA_VLAN_ID 100 } */
	a = (struct rtattr){ RTA_LENGTH(5), IFLA_INFO_KIND };
	memcpy(p, &a, sizeof(a));
	memcpy(p + RTA_LENGTH(0), "vlan", 5);
	p += RTA_SPACE(5);
	a = (struct rtattr){ RTA_LENGTH(RTA_SPACE(2)), IFLA_INFO_DATA };
	memcpy(p, &a, sizeof(a));
	a = (struct rtattr){ RTA_LENGTH(2), IFLA_VLAN_ID };
	memcpy(p + RTA_LENGTH(0), &a, sizeof(a));
	memcpy(p + RTA_LENGTH(0) + RTA_LENGTH(0), &id, 2);
	p += RTA_SPACE(RTA_SPACE(2));
	link_msg(&m, 9, 0);
	t_nl_attr(&m, IFLA_LINK, &link, sizeof(link));
	t_nl_attr(&m, IFLA_LINKINFO, nest, (size_t)(p - nest));
	assert_int_equal(rr_nl_parse_link(&m.nh, &l), 0);
	assert_string_equal(l.kind, "vlan");
	assert_int_equal(l.vlan_id, 100);
	assert_true(l.has_link);
	assert_int_equal(l.link, 2);
}

static void test_parse_malformed(void **state)
{
	struct rr_nl_link l;
	union t_nlmsg m;
	uint32_t mtu = 1500;

	/* Shorter than its ifinfomsg. */
	link_msg(&m, 3, 0);
	m.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg) - 4);
	assert_int_equal(rr_nl_parse_link(&m.nh, &l), -EBADMSG);
	/* An attribute that runs past the end. */
	link_msg(&m, 3, 0);
	t_nl_attr(&m, IFLA_MTU, &mtu, sizeof(mtu));
	m.nh.nlmsg_len -= 2;
	assert_int_equal(rr_nl_parse_link(&m.nh, &l), -EBADMSG);
}

static void test_parse_random(void **state)
{
	struct rr_nl_link l;
	union t_nlmsg m;
	unsigned int seed = 41, i, j, len;

	for (i = 0; i < 20000; i++) {
		link_msg(&m, 1, 0);
		len = NLMSG_LENGTH(sizeof(struct ifinfomsg)) +
		      (unsigned int)rand_r(&seed) % 200;
		for (j = NLMSG_LENGTH(sizeof(struct ifinfomsg)); j < len; j++)
			m.bytes[j] = (uint8_t)rand_r(&seed);
		m.nh.nlmsg_len = len;
		/* Either answer; what counts is that it returns. */
		(void)rr_nl_parse_link(&m.nh, &l);
	}
}

/* --- against the kernel ------------------------------------------------ */

#define FAIL(...)                                        \
	do {                                             \
		fprintf(stderr, "  FAIL: " __VA_ARGS__); \
		fputc('\n', stderr);                     \
		return 1;                                \
	} while (0)

/* Polls every 10 ms for up to a second until rr_link_update() says
 * something changed; 1 if it did, 0 if not, -errno. */
static int changed(struct rr_link *l, struct rr_link_state *st)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i, ret;

	for (i = 0; i < 100; i++) {
		ret = rr_link_update(l, st);
		if (ret)
			return ret;
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int live_link(void)
{
	struct rr_link_state st;
	struct rr_link *l = NULL;
	int ifindex, ret = 1;

	/* Its own sysfs: the RX queues are counted there. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    umount2("/sys", MNT_DETACH) ||
	    mount("sysfs", "/sys", "sysfs", 0, NULL)) {
		printf("SKIP: cannot mount a sysfs of this namespace: %s\n",
		       strerror(errno));
		return SKIP;
	}
	if (t_sh("ip link add rrl0 numrxqueues 4 numtxqueues 4 type veth peer "
		 "name rrl1 numrxqueues 4 numtxqueues 4") ||
	    t_sh("ip link set rrl0 address 02:00:00:00:00:01"))
		return 1;
	ifindex = (int)if_nametoindex("rrl0");
	if (!ifindex)
		FAIL("no rrl0");
	ret = rr_link_open(&l, ifindex, &st);
	if (ret)
		FAIL("rr_link_open: %s", strerror(-ret));
	ret = 1;
	if (st.mtu != 1500 || st.rx_queues != 4 || st.up ||
	    strcmp(st.name, "rrl0") || st.mac[5] != 1)
		FAIL("at open: mtu %u, %u queues, up %d, %s", st.mtu,
		     st.rx_queues, st.up, st.name);
	if (rr_link_update(l, &st) != 0)
		FAIL("a change with none made");

	t_sh("ip link set rrl0 mtu 3000");
	if (changed(l, &st) != 1 || st.mtu != 3000)
		FAIL("MTU 3000 not seen (%u)", st.mtu);
	t_sh("ip link set rrl0 address 02:31:31:31:31:31");
	if (changed(l, &st) != 1 || memcmp(st.mac, mac_a, 6))
		FAIL("the new MAC not seen");
	t_sh("ip link set rrl0 up && ip link set rrl1 up");
	if (changed(l, &st) != 1)
		FAIL("up not seen");
	/* Running once the peer is up too: a second notification. */
	if (!st.up && (changed(l, &st) != 1 || !st.up))
		FAIL("running not seen");
	t_sh("ethtool -L rrl0 rx 2 >/dev/null");
	if (changed(l, &st) != 1 || st.rx_queues != 2)
		FAIL("2 RX queues not seen (%u)", st.rx_queues);
	t_sh("ip link set rrl1 down");
	if (changed(l, &st) != 1 || st.up)
		FAIL("the carrier lost with the peer down not seen");
	t_sh("ip link set rrl0 down && ip link set rrl0 name rrl9");
	for (ret = 0; ret < 3 && strcmp(st.name, "rrl9"); ret++)
		changed(l, &st);
	if (strcmp(st.name, "rrl9") || st.rx_queues != 2)
		FAIL("the rename not seen (%s, %u queues)", st.name,
		     st.rx_queues);
	t_sh("ip link del rrl9");
	if (changed(l, &st) != 1 || !st.gone)
		FAIL("the deletion not seen");
	rr_link_close(l);
	return 0;
}

static bool live_ok(void)
{
	const char *why = NULL;

	if (geteuid() != 0)
		why = "not root";
	else if (system("ip -V >/dev/null 2>&1") != 0)
		why = "no ip (iproute2)";
	else if (system("ethtool --version >/dev/null 2>&1") != 0)
		why = "no ethtool";
	if (!why)
		return true;
	printf("SKIP: %s\n", why);
	return false;
}

static void test_live_link(void **state)
{
	int status;
	pid_t pid;

	if (!live_ok())
		skip();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0) {
			printf("SKIP: unshare: %s\n", strerror(errno));
			fflush(stdout);
			_exit(SKIP);
		}
		status = live_link();
		fflush(stdout);
		fflush(stderr);
		_exit(status);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == SKIP)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_link),
		cmocka_unit_test(test_parse_not_ethernet),
		cmocka_unit_test(test_parse_vlan),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_random),
		cmocka_unit_test(test_live_link),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
