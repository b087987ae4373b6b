// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of src/daemon/netlink.c. First the route parser on hand-built
 * RTM_NEWROUTE messages (local host routes and prefixes, other routes,
 * malformed and truncated ones, and random bytes that must never crash
 * it). Then, as root, against the kernel in a private network namespace
 * (a forked child that unshares one, so nothing touches the host): the
 * local routes reach real BPF LPM tries at open and within a second of a
 * change, with no churn of the unchanged entries, through a notification
 * overrun and past the tries' limit; and rr_veth_peer() tells a veth
 * whose peer, here or in another namespace, runs a native XDP program
 * from one that runs none, a generic one, or is down. Without root or BPF
 * those live tests skip and say why.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "netlink.h"
#include "nlmsg.h"
#include "testutil.h"
#include "shared/guard.h"

#define SKIP 77

/* --- the parser, on crafted messages ---------------------------------- */

static struct nlmsghdr *route_msg(union t_nlmsg *m, uint16_t type,
				  uint8_t family, uint8_t rtm_type,
				  uint8_t dst_len)
{
	struct rtmsg *rtm;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(sizeof(*rtm));
	m->nh.nlmsg_type = type;
	rtm = NLMSG_DATA(&m->nh);
	rtm->rtm_family = family;
	rtm->rtm_dst_len = dst_len;
	rtm->rtm_table = RT_TABLE_LOCAL;
	rtm->rtm_protocol = RTPROT_KERNEL;
	rtm->rtm_scope = RT_SCOPE_HOST;
	rtm->rtm_type = rtm_type;
	return &m->nh;
}

/* What the kernel puts around RTA_DST in a local route: table, source,
 * output interface. */
static struct nlmsghdr *local_route(union t_nlmsg *m, uint8_t family,
				    const char *dst, uint8_t dst_len)
{
	uint8_t addr[16];
	uint32_t table = RT_TABLE_LOCAL, oif = 1;
	struct nlmsghdr *nh;
	size_t alen = family == AF_INET ? 4 : 16;

	assert_int_equal(inet_pton(family, dst, addr), 1);
	nh = route_msg(m, RTM_NEWROUTE, family, RTN_LOCAL, dst_len);
	t_nl_attr(m, RTA_TABLE, &table, sizeof(table));
	t_nl_attr(m, RTA_DST, addr, alen);
	t_nl_attr(m, RTA_PREFSRC, addr, alen);
	t_nl_attr(m, RTA_OIF, &oif, sizeof(oif));
	return nh;
}

static void expect_local(const struct nlmsghdr *nh, int family,
			 const char *addr, uint32_t prefixlen)
{
	uint8_t want[16] = { 0 }, got[16];
	uint32_t plen = 999;
	int fam = -1;

	memset(got, 0xaa, sizeof(got));
	assert_int_equal(inet_pton(family, addr, want), 1);
	assert_int_equal(rr_nl_parse_local_route(nh, &fam, got, &plen), 1);
	assert_int_equal(fam, family);
	assert_int_equal(plen, prefixlen);
	assert_memory_equal(got, want, family == AF_INET ? 4 : 16);
}

static int parse(const struct nlmsghdr *nh)
{
	uint8_t addr[16];
	uint32_t plen;
	int fam;

	return rr_nl_parse_local_route(nh, &fam, addr, &plen);
}

static void test_parse_local(void **state)
{
	union t_nlmsg m;
	struct nlmsghdr *nh;
	uint8_t addr[16] = { 0 };

	expect_local(local_route(&m, AF_INET, "192.0.2.7", 32), AF_INET,
		     "192.0.2.7", 32);
	expect_local(local_route(&m, AF_INET6, "2001:db8::7", 128), AF_INET6,
		     "2001:db8::7", 128);
	expect_local(local_route(&m, AF_INET6, "fe80::1:2", 128), AF_INET6,
		     "fe80::1:2", 128);
	/* An AnyIP prefix ("ip route add local 192.0.2.0/24 dev lo"). */
	expect_local(local_route(&m, AF_INET, "192.0.2.0", 24), AF_INET,
		     "192.0.2.0", 24);
	expect_local(local_route(&m, AF_INET, "127.0.0.0", 8), AF_INET,
		     "127.0.0.0", 8);
	/* Host bits the kernel would not send are cleared, not kept. */
	expect_local(local_route(&m, AF_INET, "192.0.2.77", 25), AF_INET,
		     "192.0.2.0", 25);
	expect_local(local_route(&m, AF_INET6, "2001:db8::ffff", 120), AF_INET6,
		     "2001:db8::ff00", 120);
	/* Its removal is a local route too: the caller knows the type. */
	nh = local_route(&m, AF_INET, "192.0.2.7", 32);
	nh->nlmsg_type = RTM_DELROUTE;
	expect_local(nh, AF_INET, "192.0.2.7", 32);
	/* "local default": everything is ours, no RTA_DST. */
	nh = route_msg(&m, RTM_NEWROUTE, AF_INET6, RTN_LOCAL, 0);
	expect_local(nh, AF_INET6, "::", 0);
	/* A zero-length address on a default route is still the default. */
	nh = route_msg(&m, RTM_NEWROUTE, AF_INET, RTN_LOCAL, 0);
	t_nl_attr(&m, RTA_DST, addr, 4);
	expect_local(nh, AF_INET, "0.0.0.0", 0);
}

static void test_parse_not_local(void **state)
{
	union t_nlmsg m;
	struct nlmsghdr *nh;
	struct rtmsg *rtm;
	uint8_t out[16], before[16];
	uint32_t plen = 7;
	int fam = 7;

	nh = local_route(&m, AF_INET, "192.0.2.0", 24);
	rtm = NLMSG_DATA(nh);
	rtm->rtm_type = RTN_UNICAST;
	memset(out, 0x55, sizeof(out));
	memcpy(before, out, sizeof(out));
	assert_int_equal(rr_nl_parse_local_route(nh, &fam, out, &plen), 0);
	/* Nothing is written for a route that is not local. */
	assert_memory_equal(out, before, sizeof(out));
	assert_int_equal(fam, 7);
	assert_int_equal(plen, 7);
	rtm->rtm_type = RTN_BROADCAST;
	assert_int_equal(parse(nh), 0);
	rtm->rtm_type = RTN_ANYCAST;
	assert_int_equal(parse(nh), 0);
	rtm->rtm_type = RTN_MULTICAST;
	assert_int_equal(parse(nh), 0);
	/* A cached IPv6 clone is not a route anyone added. */
	nh = local_route(&m, AF_INET6, "2001:db8::7", 128);
	((struct rtmsg *)NLMSG_DATA(nh))->rtm_flags |= RTM_F_CLONED;
	assert_int_equal(parse(nh), 0);
	/* Other families (MPLS, multicast routing) and other messages. */
	nh = local_route(&m, AF_INET, "192.0.2.7", 32);
	((struct rtmsg *)NLMSG_DATA(nh))->rtm_family = AF_MPLS;
	assert_int_equal(parse(nh), 0);
	((struct rtmsg *)NLMSG_DATA(nh))->rtm_family = RTNL_FAMILY_IPMR;
	assert_int_equal(parse(nh), 0);
	nh = local_route(&m, AF_INET, "192.0.2.7", 32);
	nh->nlmsg_type = RTM_NEWLINK;
	assert_int_equal(parse(nh), 0);
	nh->nlmsg_type = NLMSG_DONE;
	assert_int_equal(parse(nh), 0);
}

static void test_parse_malformed(void **state)
{
	union t_nlmsg m;
	struct nlmsghdr *nh;
	struct rtattr *rta;
	uint8_t addr[16] = { 0 };
	uint32_t table = RT_TABLE_LOCAL;

	/* A prefix longer than the address. */
	nh = local_route(&m, AF_INET, "192.0.2.7", 32);
	((struct rtmsg *)NLMSG_DATA(nh))->rtm_dst_len = 33;
	assert_int_equal(parse(nh), -EINVAL);
	nh = local_route(&m, AF_INET6, "2001:db8::7", 128);
	((struct rtmsg *)NLMSG_DATA(nh))->rtm_dst_len = 129;
	assert_int_equal(parse(nh), -EINVAL);
	/* The message ends inside its last attribute. */
	nh = local_route(&m, AF_INET6, "2001:db8::7", 128);
	nh->nlmsg_len -= 6;
	assert_int_equal(parse(nh), -EINVAL);
	/* An attribute that claims more than the message holds. */
	nh = route_msg(&m, RTM_NEWROUTE, AF_INET, RTN_LOCAL, 32);
	t_nl_attr(&m, RTA_DST, addr, 4);
	rta = (struct rtattr *)((char *)nh +
				NLMSG_LENGTH(sizeof(struct rtmsg)));
	rta->rta_len = 200;
	assert_int_equal(parse(nh), -EINVAL);
	/* An attribute shorter than its own header. */
	rta->rta_len = 2;
	assert_int_equal(parse(nh), -EINVAL);
	/* Bytes left over that are no attribute. */
	nh = local_route(&m, AF_INET, "192.0.2.7", 32);
	nh->nlmsg_len += 2;
	assert_int_equal(parse(nh), -EINVAL);
	/* A destination of the wrong size for the family. */
	nh = route_msg(&m, RTM_NEWROUTE, AF_INET, RTN_LOCAL, 24);
	t_nl_attr(&m, RTA_DST, addr, 3);
	assert_int_equal(parse(nh), -EINVAL);
	nh = route_msg(&m, RTM_NEWROUTE, AF_INET6, RTN_LOCAL, 64);
	t_nl_attr(&m, RTA_DST, addr, 4);
	assert_int_equal(parse(nh), -EINVAL);
	/* A prefix with no destination to go with it. */
	nh = route_msg(&m, RTM_NEWROUTE, AF_INET, RTN_LOCAL, 24);
	t_nl_attr(&m, RTA_TABLE, &table, sizeof(table));
	assert_int_equal(parse(nh), -EINVAL);
	/* Too short for its rtmsg, or for a header at all. */
	nh = local_route(&m, AF_INET, "192.0.2.7", 32);
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg) - 1);
	assert_int_equal(parse(nh), -EINVAL);
	nh->nlmsg_len = NLMSG_HDRLEN - 1;
	assert_int_equal(parse(nh), -EINVAL);
	assert_int_equal(parse(NULL), -EINVAL);
}

/* Random bytes and random damage to good messages: any answer will do,
 * as long as it is one of the three and the sanitizers see no access
 * outside the message. */
static void test_parse_random(void **state)
{
	static const char *const dsts[] = { "192.0.2.7", "2001:db8::7" };
	union t_nlmsg m;
	struct nlmsghdr *nh;
	uint8_t *copy, addr[16];
	uint32_t plen, len;
	unsigned int i, j, seed = 12345;
	int fam, ret;

	for (i = 0; i < 200000; i++) {
		if (i % 2) {
			nh = local_route(&m, i % 4 == 1 ? AF_INET : AF_INET6,
					 dsts[i % 4 == 1 ? 0 : 1],
					 i % 4 == 1 ? 32 : 128);
			len = nh->nlmsg_len;
			for (j = 1 + rand_r(&seed) % 4; j > 0; j--)
				m.bytes[rand_r(&seed) % len] =
					(uint8_t)rand_r(&seed);
		} else {
			for (j = 0; j < sizeof(m.bytes); j++)
				m.bytes[j] = (uint8_t)rand_r(&seed);
			m.nh.nlmsg_type =
				rand_r(&seed) % 2 ? RTM_NEWROUTE : RTM_DELROUTE;
		}
		/* The caller's promise: nlmsg_len bytes are there. Hold it
		 * to the letter in a buffer of exactly that size. */
		len = m.nh.nlmsg_len;
		if (len < NLMSG_HDRLEN || len > sizeof(m.bytes))
			len = NLMSG_HDRLEN + rand_r(&seed) % 64;
		m.nh.nlmsg_len = len;
		copy = malloc(len);
		assert_non_null(copy);
		memcpy(copy, m.bytes, len);
		ret = rr_nl_parse_local_route((struct nlmsghdr *)copy, &fam,
					      addr, &plen);
		assert_true(ret == 1 || ret == 0 || ret == -EINVAL);
		if (ret == 1)
			assert_true((fam == AF_INET && plen <= 32) ||
				    (fam == AF_INET6 && plen <= 128));
		free(copy);
	}
}

static void test_labels_and_null(void **state)
{
	assert_string_equal(rr_peer_label(RR_PEER_NOT_VETH), "not_veth");
	assert_string_equal(rr_peer_label(RR_PEER_XDP), "xdp");
	assert_string_equal(rr_peer_label(RR_PEER_NO_XDP), "no_xdp");
	assert_string_equal(rr_peer_label(RR_PEER_UNKNOWN), "unknown");
	rr_localaddr_close(NULL);
	assert_int_equal(rr_localaddr_update(NULL), -EINVAL);
	assert_int_equal(rr_localaddr_count(NULL, AF_INET), 0);
}

/* --- live: a child in a network namespace of its own ------------------ */

/* In the child: say what failed and give up (its namespace goes with it). */
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: %s:", __FILE__, __LINE__, \
				#cond);                                        \
			fprintf(stderr, " " __VA_ARGS__);                      \
			fputc('\n', stderr);                                   \
			return 1;                                              \
		}                                                              \
	} while (0)

static char peer_ns[32]; /* "rrnl-PID", named in the parent */

static int trie(int family)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);

	return bpf_map_create(BPF_MAP_TYPE_LPM_TRIE,
			      family == AF_INET ? "rr_local_v4" : "rr_local_v6",
			      family == AF_INET ? sizeof(struct rr_local_v4)
						: sizeof(struct rr_local_v6),
			      1, RR_MAX_LOCAL, &opts);
}

/* A trie key for @addr/@plen ("192.0.2.7", 32). */
static void trie_key(void *key, int family, const char *addr, uint32_t plen)
{
	if (family == AF_INET) {
		struct rr_local_v4 *k = key;

		memset(k, 0, sizeof(*k));
		k->prefixlen = plen;
		assert_int_equal(inet_pton(AF_INET, addr, k->addr), 1);
	} else {
		struct rr_local_v6 *k = key;

		memset(k, 0, sizeof(*k));
		k->prefixlen = plen;
		assert_int_equal(inet_pton(AF_INET6, addr, k->addr), 1);
	}
}

/* Whether a request to @addr would find a match, as the XDP program
 * looks it up. */
static bool matches(int fd, int family, const char *addr)
{
	uint8_t key[sizeof(struct rr_local_v6)], val;

	trie_key(key, family, addr, family == AF_INET ? 32 : 128);
	return bpf_map_lookup_elem(fd, key, &val) == 0;
}

/* Whether the trie holds @addr/@plen as an entry of its own, and how
 * many entries it holds. */
static bool holds(int fd, int family, const char *addr, uint32_t plen)
{
	uint8_t want[sizeof(struct rr_local_v6)];
	uint8_t key[sizeof(struct rr_local_v6)], next[sizeof(key)];
	size_t size = family == AF_INET ? sizeof(struct rr_local_v4)
					: sizeof(struct rr_local_v6);
	void *prev = NULL;

	trie_key(want, family, addr, plen);
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		if (!memcmp(next, want, size))
			return true;
		memcpy(key, next, size);
		prev = key;
	}
	return false;
}

static uint32_t entries(int fd)
{
	uint8_t key[sizeof(struct rr_local_v6)], next[sizeof(key)];
	void *prev = NULL;
	uint32_t n = 0;

	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
	}
	return n;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Updates every 10 ms, as the main loop would more slowly, until a
 * request to @addr matches (@want) or does not; adds the changes to
 * @changes. The milliseconds it took, or -1 past @limit_ms or on error.
 */
static double wait_for(struct rr_localaddr *la, int fd, int family,
		       const char *addr, bool want, double limit_ms,
		       int *changes)
{
	double start = now_ms();
	int ret;

	for (;;) {
		ret = rr_localaddr_update(la);
		if (ret < 0) {
			fprintf(stderr, "  rr_localaddr_update: %s\n",
				strerror(-ret));
			return -1;
		}
		*changes += ret;
		if (matches(fd, family, addr) == want)
			return now_ms() - start;
		if (now_ms() - start > limit_ms)
			return -1;
		usleep(10000);
	}
}

/* Updates for @ms: the changes seen, -1 on error. */
static int quiet(struct rr_localaddr *la, int ms)
{
	double start = now_ms();
	int ret, changes = 0;

	while (now_ms() - start < ms) {
		ret = rr_localaddr_update(la);
		if (ret < 0)
			return -1;
		changes += ret;
		usleep(10000);
	}
	return changes;
}

/* Adds or deletes (@verb) @n routes through one "ip -batch". */
static int route_batch(const char *verb, const char *type, int n,
		       const char *table)
{
	char path[] = "/tmp/rr-test-netlink.XXXXXX";
	FILE *f;
	int fd, i, ret;

	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -1;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "route %s %s 10.%d.%d.%d/32 dev lo table %s\n", verb,
			type, 100 + i / 65536, (i / 256) % 256, i % 256, table);
	fclose(f);
	ret = t_sh("ip -batch %s", path);
	unlink(path);
	return ret;
}

/* Whether the direct-mapped table @tab holds @ip (a host route) in its
 * slot. */
static bool tab_holds(int tab, int family, const char *ip)
{
	struct rr_local_ent e;
	uint8_t a[16] = { 0 };
	uint32_t w[4], slot;

	if (inet_pton(family, ip, a) != 1)
		return false;
	memcpy(w, a, sizeof(w));
	slot = rr_local_slot(family == AF_INET ? w[0]
					       : w[0] ^ w[1] ^ w[2] ^ w[3]);
	if (bpf_map_lookup_elem(tab, &slot, &e))
		return false;
	return e.family == (uint32_t)family &&
	       !memcmp(e.addr, a, family == AF_INET ? 4 : 16);
}

/* How many slots of @tab hold an address. */
static uint32_t tab_used(int tab)
{
	struct rr_local_ent e;
	uint32_t slot, n = 0;

	for (slot = 0; slot < RR_LOCAL_TAB; slot++)
		if (!bpf_map_lookup_elem(tab, &slot, &e) && e.family)
			n++;
	return n;
}

static int live_localaddr(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	struct rr_localaddr *la;
	uint8_t key[sizeof(struct rr_local_v6)], one = 1;
	int v4, v6, tab, bad, changes, ret;
	uint32_t before;
	double ms;

	CHECK(t_sh("ip link set dev lo up") == 0);
	v4 = trie(AF_INET);
	v6 = trie(AF_INET6);
	CHECK(v4 >= 0 && v6 >= 0, "%s", strerror(errno));
	/* Left from an earlier run: must go at open. */
	trie_key(key, AF_INET, "203.0.113.1", 32);
	CHECK(bpf_map_update_elem(v4, key, &one, BPF_ANY) == 0);

	/* Maps of the wrong shape are refused, not written past. */
	bad = bpf_map_create(BPF_MAP_TYPE_HASH, "rrnl_bad", 8, 1, 16, NULL);
	CHECK(bad >= 0);
	CHECK(rr_localaddr_open(&la, bad, -1) == -EINVAL && !la);
	close(bad);
	bad = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "rrnl_bad", 8, 4, 16,
			     &opts);
	CHECK(bad >= 0);
	CHECK(rr_localaddr_open(&la, bad, -1) == -EINVAL && !la);
	close(bad);
	/* A family can be left out. */
	CHECK(rr_localaddr_open(&la, -1, v6) == 0);
	CHECK(rr_localaddr_count(la, AF_INET) == 0);
	rr_localaddr_close(la);
	CHECK(entries(v4) == 1);

	CHECK(rr_localaddr_open(&la, v4, v6) == 0);
	/* The table in front of the tries: host routes only, and what an
	 * earlier user left in it goes. */
	tab = bpf_map_create(BPF_MAP_TYPE_ARRAY, "rrnl_tab", sizeof(uint32_t),
			     sizeof(struct rr_local_ent), RR_LOCAL_TAB, NULL);
	CHECK(tab >= 0, "%s", strerror(errno));
	{
		struct rr_local_ent junk = { .family = AF_INET,
					     .addr = { 203, 0, 113, 1 } };
		uint32_t slot = 7;

		CHECK(bpf_map_update_elem(tab, &slot, &junk, BPF_ANY) == 0);
	}
	CHECK(rr_localaddr_set_table(la, tab) == 0);
	CHECK(tab_holds(tab, AF_INET, "127.0.0.1"));
	CHECK(!tab_holds(tab, AF_INET, "127.0.0.0"), "a prefix in the table");
	/* 127.0.0.1 and, once it is in, ::1. */
	CHECK(tab_used(tab) <= 2, "%u slots used", tab_used(tab));
	/* lo's local routes: 127.0.0.0/8 and its address 127.0.0.1. */
	CHECK(holds(v4, AF_INET, "127.0.0.0", 8));
	CHECK(holds(v4, AF_INET, "127.0.0.1", 32));
	CHECK(!holds(v4, AF_INET, "203.0.113.1", 32), "stale entry kept");
	CHECK(entries(v4) == 2, "%u entries", entries(v4));
	CHECK(rr_localaddr_count(la, AF_INET) == 2);
	CHECK(matches(v4, AF_INET, "127.3.2.1"));
	CHECK(!matches(v4, AF_INET, "192.0.2.7"));
	changes = 0;
	CHECK(wait_for(la, v6, AF_INET6, "::1", true, 1000, &changes) >= 0);
	CHECK(holds(v6, AF_INET6, "::1", 128));
	CHECK(entries(v6) == 1 && rr_localaddr_count(la, AF_INET6) == 1);
	CHECK(quiet(la, 100) == 0, "changes with nothing changing");

	/* An address on lo: in within a second, one entry changed. */
	changes = 0;
	CHECK(t_sh("ip addr add 192.0.2.7/32 dev lo") == 0);
	ms = wait_for(la, v4, AF_INET, "192.0.2.7", true, 1000, &changes);
	CHECK(ms >= 0, "192.0.2.7 not in the trie after a second");
	CHECK(changes == 1, "%d changes", changes);
	CHECK(holds(v4, AF_INET, "192.0.2.7", 32));
	CHECK(tab_holds(tab, AF_INET, "192.0.2.7"));
	CHECK(rr_localaddr_count(la, AF_INET) == 3);
	changes = 0;
	CHECK(t_sh("ip addr del 192.0.2.7/32 dev lo") == 0);
	CHECK(wait_for(la, v4, AF_INET, "192.0.2.7", false, 1000, &changes) >=
		      0,
	      "192.0.2.7 still in the trie after a second");
	CHECK(changes == 1 && rr_localaddr_count(la, AF_INET) == 2);
	CHECK(holds(v4, AF_INET, "127.0.0.1", 32));
	CHECK(!tab_holds(tab, AF_INET, "192.0.2.7"), "left in the table");
	CHECK(tab_holds(tab, AF_INET, "127.0.0.1"));

	changes = 0;
	CHECK(t_sh("ip -6 addr add 2001:db8::7/128 dev lo nodad") == 0);
	CHECK(wait_for(la, v6, AF_INET6, "2001:db8::7", true, 1000, &changes) >=
		      0,
	      "2001:db8::7 not in the trie after a second");
	CHECK(changes == 1, "%d changes", changes);
	CHECK(holds(v6, AF_INET6, "2001:db8::7", 128));
	CHECK(tab_holds(tab, AF_INET6, "2001:db8::7"));
	CHECK(rr_localaddr_count(la, AF_INET6) == 2);
	changes = 0;
	CHECK(t_sh("ip -6 addr del 2001:db8::7/128 dev lo") == 0);
	CHECK(wait_for(la, v6, AF_INET6, "2001:db8::7", false, 1000,
		       &changes) >= 0);
	CHECK(changes == 1 && rr_localaddr_count(la, AF_INET6) == 1);
	CHECK(!tab_holds(tab, AF_INET6, "2001:db8::7"), "left in the table");

	/* An AnyIP prefix, and the same prefix in a second table: one
	 * entry, there while either route is. */
	changes = 0;
	CHECK(t_sh("ip route add local 198.51.100.0/24 dev lo") == 0);
	CHECK(wait_for(la, v4, AF_INET, "198.51.100.200", true, 1000,
		       &changes) >= 0);
	CHECK(holds(v4, AF_INET, "198.51.100.0", 24) && changes == 1);
	CHECK(!tab_holds(tab, AF_INET, "198.51.100.0"),
	      "a prefix in the table");
	CHECK(t_sh("ip route add local 198.51.100.0/24 dev lo table 100") == 0);
	CHECK(quiet(la, 100) == 0);
	CHECK(t_sh("ip route del local 198.51.100.0/24 dev lo table local") ==
	      0);
	CHECK(quiet(la, 100) == 0);
	CHECK(matches(v4, AF_INET, "198.51.100.200"));
	changes = 0;
	CHECK(t_sh("ip route del local 198.51.100.0/24 dev lo table 100") == 0);
	CHECK(wait_for(la, v4, AF_INET, "198.51.100.200", false, 1000,
		       &changes) >= 0);
	CHECK(changes == 1);
	/* Routes that are not local change nothing. */
	CHECK(t_sh("ip route add 10.20.0.0/16 dev lo") == 0);
	CHECK(t_sh("ip route add blackhole 10.21.0.0/16") == 0);
	CHECK(quiet(la, 100) == 0);

	/* An overrun: thousands of notifications unread fill the socket, so
	 * the one for 192.0.2.9 is lost; ENOBUFS must bring it in at the
	 * next update all the same. */
	CHECK(route_batch("add", "unicast", 3000, "main") == 0);
	CHECK(t_sh("ip addr add 192.0.2.9/32 dev lo") == 0);
	ret = rr_localaddr_update(la);
	CHECK(ret == 1, "update after an overrun gave %d", ret);
	CHECK(matches(v4, AF_INET, "192.0.2.9"));
	CHECK(quiet(la, 50) == 0);

	/* More local routes than the trie holds: those it holds stay, the
	 * first of the rest fill it, and it never fails. */
	before = rr_localaddr_count(la, AF_INET);
	CHECK(route_batch("add", "local", RR_MAX_LOCAL, "101") == 0);
	changes = 0;
	CHECK(wait_for(la, v4, AF_INET, "10.100.0.0", true, 2000, &changes) >=
	      0);
	CHECK(quiet(la, 50) >= 0);
	CHECK(rr_localaddr_count(la, AF_INET) == RR_MAX_LOCAL, "%u",
	      rr_localaddr_count(la, AF_INET));
	CHECK(entries(v4) == RR_MAX_LOCAL, "%u", entries(v4));
	CHECK(holds(v4, AF_INET, "127.0.0.1", 32));
	CHECK(holds(v4, AF_INET, "192.0.2.9", 32));
	CHECK(t_sh("ip route flush table 101") == 0);
	changes = 0;
	CHECK(wait_for(la, v4, AF_INET, "10.100.0.0", false, 2000, &changes) >=
	      0);
	CHECK(quiet(la, 50) >= 0);
	CHECK(rr_localaddr_count(la, AF_INET) == before);
	CHECK(entries(v4) == before);
	/* Never more in the table than in the tries. */
	CHECK(tab_used(tab) <= before + rr_localaddr_count(la, AF_INET6));
	CHECK(tab_holds(tab, AF_INET, "192.0.2.9"));

	rr_localaddr_close(la);
	close(tab);
	close(v4);
	close(v6);
	return 0;
}

/* r0 = XDP_PASS; exit */
static int xdp_pass_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K,
		  .dst_reg = BPF_REG_0,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_XDP, "rrnl_pass", "GPL", insns, 2,
			     NULL);
}

/* Attaches @prog (or detaches, when < 0) on @ifname in namespace @ns
 * (this one when NULL) in @flags' mode. 0 or -errno. */
static int xdp_set(const char *ns, const char *ifname, int prog,
		   unsigned int flags)
{
	char path[64];
	int self = -1, there = -1, ifindex, ret;

	if (ns) {
		snprintf(path, sizeof(path), "/run/netns/%s", ns);
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		there = open(path, O_RDONLY | O_CLOEXEC);
		if (self < 0 || there < 0 || setns(there, CLONE_NEWNET) < 0) {
			ret = -errno;
			goto out;
		}
	}
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex)
		ret = -errno;
	else if (prog >= 0)
		ret = bpf_xdp_attach(ifindex, prog, flags, NULL);
	else
		ret = bpf_xdp_detach(ifindex, flags, NULL);
	if (ns && setns(self, CLONE_NEWNET) < 0) {
		perror("setns back");
		_exit(1); /* any further check would be in the wrong place */
	}
out:
	if (self >= 0)
		close(self);
	if (there >= 0)
		close(there);
	return ret;
}

static enum rr_peer peer(const char *ifname, char *why, size_t len)
{
	enum rr_peer p = rr_veth_peer((int)if_nametoindex(ifname), why, len);

	printf("  %s: %s (%s)\n", ifname, rr_peer_label(p), why);
	return p;
}

/* Mean microseconds per rr_veth_peer() over @n calls. */
static double time_peer(int ifindex, int n)
{
	double start = now_ms();
	int i;

	for (i = 0; i < n; i++)
		rr_veth_peer(ifindex, NULL, 0);
	return (now_ms() - start) * 1e3 / n;
}

/* The checks on veth @a whose peer @b lives in namespace @ns (NULL:
 * this one); @ipns is what runs a command there ("ip netns exec NS "). */
static int peer_checks(const char *a, const char *b, const char *ns,
		       const char *ipns)
{
	char why[160];
	int prog, ret;
	double us;

	CHECK(peer(a, why, sizeof(why)) == RR_PEER_NO_XDP, "%s", why);
	CHECK(strstr(why, b), "%s", why);
	CHECK(!ns || strstr(why, "namespace"), "%s", why);
	prog = xdp_pass_prog();
	CHECK(prog >= 0, "loading XDP_PASS: %s", strerror(-prog));

	CHECK((ret = xdp_set(ns, b, prog, XDP_FLAGS_DRV_MODE)) == 0, "%s",
	      strerror(-ret));
	CHECK(peer(a, why, sizeof(why)) == RR_PEER_XDP, "%s", why);
	CHECK(strstr(why, b), "%s", why);
	us = time_peer((int)if_nametoindex(a), 2000);
	printf("  rr_veth_peer: %.1f us a call, peer %s\n", us,
	       ns ? "in another namespace" : "in the same namespace");
	CHECK(us < 100000);
	/* Down, it takes nothing, program or not. */
	CHECK(t_sh("%sip link set dev %s down", ipns, b) == 0);
	CHECK(peer(a, why, sizeof(why)) == RR_PEER_NO_XDP, "%s", why);
	CHECK(strstr(why, "down"), "%s", why);
	CHECK(t_sh("%sip link set dev %s up", ipns, b) == 0);
	CHECK(peer(a, why, sizeof(why)) == RR_PEER_XDP, "%s", why);
	CHECK((ret = xdp_set(ns, b, -1, XDP_FLAGS_DRV_MODE)) == 0, "%s",
	      strerror(-ret));
	CHECK(peer(a, why, sizeof(why)) == RR_PEER_NO_XDP, "%s", why);

	/* A generic-mode program starts no NAPI on the veth. */
	CHECK((ret = xdp_set(ns, b, prog, XDP_FLAGS_SKB_MODE)) == 0, "%s",
	      strerror(-ret));
	CHECK(peer(a, why, sizeof(why)) == RR_PEER_NO_XDP, "%s", why);
	CHECK(strstr(why, "generic"), "%s", why);
	CHECK((ret = xdp_set(ns, b, -1, XDP_FLAGS_SKB_MODE)) == 0, "%s",
	      strerror(-ret));
	CHECK(peer(a, why, sizeof(why)) == RR_PEER_NO_XDP, "%s", why);
	close(prog);
	return 0;
}

static int live_veth(void)
{
	char ipns[64], why[160];
	int ret = 1;

	if (t_sh("ip link set dev lo up") || t_sh("ip netns add %s", peer_ns))
		return 1;
	snprintf(ipns, sizeof(ipns), "ip netns exec %s ", peer_ns);

	/* The peer in another namespace. */
	if (t_sh("ip link add rrnlA type veth peer name rrnlB") ||
	    t_sh("ip link set dev rrnlB netns %s", peer_ns) ||
	    t_sh("ip link set dev rrnlA up") ||
	    t_sh("%sip link set dev rrnlB up", ipns))
		goto out;
	if (peer_checks("rrnlA", "rrnlB", peer_ns, ipns))
		goto out;

	/* The peer in this one. */
	if (t_sh("ip link add rrnlC type veth peer name rrnlD") ||
	    t_sh("ip link set dev rrnlC up") ||
	    t_sh("ip link set dev rrnlD up"))
		goto out;
	if (peer_checks("rrnlC", "rrnlD", NULL, ""))
		goto out;

	/* The peer elsewhere with the same ifindex as ours. */
	if (t_sh("ip link add rrnlE index 77 type veth peer name rrnlF index 77 netns %s",
		 peer_ns) ||
	    t_sh("ip link set dev rrnlE up") ||
	    t_sh("%sip link set dev rrnlF up", ipns))
		goto out;
	if (peer("rrnlE", why, sizeof(why)) != RR_PEER_NO_XDP ||
	    !strstr(why, "rrnlF")) {
		fprintf(stderr,
			"FAIL: rrnlE (index 77, peer rrnlF index 77): %s\n",
			why);
		goto out;
	}

	/* Not veths, or no link at all. */
	if (peer("lo", why, sizeof(why)) != RR_PEER_NOT_VETH ||
	    rr_veth_peer(999999, why, sizeof(why)) != RR_PEER_UNKNOWN) {
		fprintf(stderr, "FAIL: lo or link 999999: %s\n", why);
		goto out;
	}
	printf("  link 999999: %s\n", why);
	ret = 0;
out:
	t_sh("ip netns del %s", peer_ns);
	return ret;
}

/* Root and BPF, or a skip that says which is missing. */
static bool live_ok(void)
{
	char why[160] = "";
	int fd;

	if (geteuid() != 0) {
		snprintf(why, sizeof(why), "not root");
	} else if (system("ip -V >/dev/null 2>&1") != 0) {
		snprintf(why, sizeof(why), "no ip (iproute2)");
	} else {
		fd = trie(AF_INET);
		if (fd < 0)
			snprintf(why, sizeof(why),
				 "no BPF: cannot create an LPM trie: %s",
				 strerror(-fd));
		else
			close(fd);
	}
	if (!why[0])
		return true;
	printf("SKIP: %s\n", why);
	return false;
}

/* Runs @fn in a child in a network namespace of its own: 0 passed,
 * SKIP skipped (it said why), anything else failed. */
static int isolated(int (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (unshare(CLONE_NEWNET) < 0) {
			printf("SKIP: unshare(CLONE_NEWNET): %s\n",
			       strerror(errno));
			fflush(stdout);
			_exit(SKIP);
		}
		status = fn();
		fflush(stdout);
		fflush(stderr);
		exit(status);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_live_localaddr(void **state)
{
	int ret;

	if (!live_ok())
		skip();
	ret = isolated(live_localaddr);
	if (ret == SKIP)
		skip();
	assert_int_equal(ret, 0);
}

static void test_live_veth_peer(void **state)
{
	char path[64];
	int ret;

	if (!live_ok())
		skip();
	snprintf(peer_ns, sizeof(peer_ns), "rrnl-%d", (int)getpid());
	ret = isolated(live_veth);
	/* Whatever became of the child, the named namespace goes. */
	snprintf(path, sizeof(path), "/run/netns/%s", peer_ns);
	if (access(path, F_OK) == 0)
		t_sh("ip netns del %s", peer_ns);
	if (ret == SKIP)
		skip();
	assert_int_equal(ret, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_local),
		cmocka_unit_test(test_parse_not_local),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_random),
		cmocka_unit_test(test_labels_and_null),
		cmocka_unit_test(test_live_localaddr),
		cmocka_unit_test(test_live_veth_peer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
