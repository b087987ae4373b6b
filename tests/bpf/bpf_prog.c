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
#include "percpu.h"
#include "bpf_prog.h"
#include "testutil.h"
#include "config.h"
#include "reqrouter.skel.h"
#include "rr_shared.h"
#include "util.h"
#include "xdp.h"

#define SKIP 77
#define DUMMY_QUEUES 66 /* beyond RR_MAX_QUEUES, to see the range check */

static struct reqrouter *skel;
static int prog_fd, stats_fd, cursor_fd, port_fd;

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
	{ 100, { .slot = RR_MAX_SLOTS, .nsocks = 1 } },
};

/* Sockets behind @slot: with one, the cursor stays put. */
static uint32_t slot_nsocks(int slot)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ports); i++)
		if ((int)ports[i].conf.slot == slot)
			return ports[i].conf.nsocks;
	return 0;
}

static int port_slot(uint32_t port)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ports); i++)
		if (ports[i].port == port)
			return (int)ports[i].conf.slot;
	return -1;
}

/* Snapshot of everything the program writes. */
struct snap {
	uint64_t stats[RR_STATS_SIZE];
	uint32_t cursor[RR_MAX_QUEUES * RR_MAX_SLOTS];
};

static int take_snap(struct snap *s)
{
	uint32_t k;
	int ret;

	ret = rr_percpu_sum(stats_fd, 0, RR_STATS_SIZE, s->stats);
	if (ret)
		return ret;
	for (k = 0; k < RR_MAX_QUEUES * RR_MAX_SLOTS; k++)
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
		cur_key = queue * RR_MAX_SLOTS + (uint32_t)slot;
	for (k = 0; k < RR_MAX_QUEUES * RR_MAX_SLOTS; k++) {
		int changed = after.cursor[k] != before.cursor[k];

		if (slot >= 0 && k == cur_key) {
			if (!changed && slot_nsocks(slot) > 1)
				t_fail("cursor of queue %u slot %d did not move",
				       queue, slot);
		} else if (changed) {
			t_fail("cursor of queue %u slot %u moved",
			       k / RR_MAX_SLOTS, k % RR_MAX_SLOTS);
		}
	}
	return slot >= 0 ? after.cursor[cur_key] : 0;
}

static void run_table(const struct bpf_table *t)
{
	uint8_t frame[4096];
	struct frame_layout lay;
	const struct bpf_case *c;
	uint32_t len;
	size_t i;
	int slot;

	for (i = 0; i < t->n; i++) {
		c = &t->c[i];
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
	key = queue * RR_MAX_SLOTS + (uint32_t)slot;
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
	for (i = 0; i < ARRAY_SIZE(ports); i++) {
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
	run_table(&steer_cases);
	if (!setup_allow_lists(skel))
		run_table(&allow_cases);
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
	run_table(&mac_cases);
	reqrouter__destroy(skel);

	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("%zu frames and the round robin checked\n",
	       steer_cases.n + allow_cases.n + mac_cases.n);
	return 0;
}
