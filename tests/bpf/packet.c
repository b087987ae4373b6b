// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the XDP program (kern/reqrouter.bpf.c) without traffic: each
 * crafted frame of a fixture table runs once through
 * bpf_prog_test_run_opts(), and the test checks what a user would see:
 * the verdict (with no socket in the XSKMAP the redirect falls back to
 * XDP_PASS; the refusals are XDP_DROP), the frame handed on unchanged,
 * exactly one counter of xdp_stats moved and the round-robin cursor moved
 * only for frames that were steered to a function. Frames that would
 * really be redirected need AF_XDP sockets; the integration tests send
 * those. The guards (the destination check, min_src_port, IPv4 options)
 * run on the same program with the local routes written; a third load,
 * as reqrouter loads it with echo's XDP program in two slots, shows what
 * reaches the in-kernel tier: an answer (XDP_TX, byte for byte user
 * space's reply) or a drop counted with its reason in fn_stats, and
 * nothing at all for what the guards turn away.
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
#include "packet_test.h"
#include "testutil.h"
#include "config.h"
#include "packet.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "shared/common.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "util.h"
#include "xdp.h"

#define SKIP 77
#define DUMMY_QUEUES 66 /* beyond RR_MAX_QUEUES, to see the range check */
#define MTU 1500	/* the in-kernel tier's, as rr_xdp_load() sets it */
#define ROOM 4096	/* user space's buffer, a UMEM frame */
#define FN_ROW (RR_MAX_SLOTS * RR_FN_STAT_MAX) /* one queue's fn_stats */

static struct reqrouter *skel;
static struct rr_xdp tier_x; /* the third load, as reqrouter loads it */
static int prog_fd, stats_fd, cursor_fd, port_fd, fn_fd;

static const char *const stat_names[RR_XDP_STAT_MAX] = {
#define STAT_NAME(name, verdict, reason) [RR_XDP_##name] = #name,
	RR_XDP_STATS(STAT_NAME)
#undef STAT_NAME
};

static const char *const stat_verdicts[RR_XDP_STAT_MAX] = {
#define STAT_VERDICT(name, verdict, reason) [RR_XDP_##name] = verdict,
	RR_XDP_STATS(STAT_VERDICT)
#undef STAT_VERDICT
};

/* A port: its conf, and the function whose XDP program is in its slot. */
struct bpf_port {
	uint32_t port;
	struct rr_port_conf conf;
	const char *fn;
};

/* The ports the program is configured with: port -> (slot, sockets). */
static const struct bpf_port ports[] = {
	{ .port = 1, .conf = { .slot = 1, .nsocks = 1 } },
	{ .port = 7, .conf = { .slot = 3, .nsocks = 2 } },
	{ .port = 1232, .conf = { .slot = 0, .nsocks = 3 } },
	/* over RR_MAX_THREADS */
	{ .port = 4000, .conf = { .slot = 5, .nsocks = 20 } },
	{ .port = 65535, .conf = { .slot = 31, .nsocks = 1 } },
	/* with allow-lists, set up by run_allow_lists() */
	{ .port = 5000,
	  .conf = { .slot = 6, .nsocks = 2, .flags = RR_PORT_ALLOWLIST } },
	{ .port = 5001,
	  .conf = { .slot = 7, .nsocks = 2, .flags = RR_PORT_ALLOWLIST } },
	{ .port = 5002,
	  .conf = { .slot = 8, .nsocks = 2, .flags = RR_PORT_ALLOWLIST } },
	{ .port = 5003,
	  .conf = { .slot = 9, .nsocks = 2, .flags = RR_PORT_ALLOWLIST } },
	/* present but unusable: must behave as "no function" */
	{ .port = 9, .conf = { .slot = 4, .nsocks = 0 } },
	{ .port = 100, .conf = { .slot = RR_MAX_SLOTS, .nsocks = 1 } },
	/* the guards (guard_cases) */
	{ .port = PORT_LOCAL,
	  .conf = { .slot = 10, .nsocks = 2, .flags = RR_PORT_LOCAL_DST } },
	{ .port = PORT_MIN_SRC,
	  .conf = { .slot = 11, .nsocks = 2, .min_src_port = 1024 } },
	{ .port = PORT_LOCAL_QUAR,
	  .conf = { .slot = 12,
		    .nsocks = 2,
		    .flags = RR_PORT_LOCAL_DST | RR_PORT_QUARANTINED,
		    .min_src_port = 1024 } },
	{ .port = PORT_LOCAL_ACL,
	  .conf = { .slot = 13,
		    .nsocks = 2,
		    .flags = RR_PORT_LOCAL_DST | RR_PORT_ALLOWLIST } },
};

/* The third load's ports: echo answers in XDP. */
static const struct bpf_port tier_ports[] = {
	{ .port = PORT_XDP,
	  .conf = { .slot = 0,
		    .nsocks = 1,
		    .flags = RR_PORT_XDP,
		    .max_amplification = 3,
		    .xdp_max_payload = RR_XDP_MAX_PAYLOAD },
	  .fn = "echo" },
	{ .port = PORT_XDP_GUARDED,
	  .conf = { .slot = 1,
		    .nsocks = 1,
		    .flags = RR_PORT_XDP | RR_PORT_LOCAL_DST,
		    .max_amplification = 3,
		    .xdp_max_payload = RR_XDP_MAX_PAYLOAD,
		    .min_src_port = 1024 },
	  .fn = "echo" },
};

/* The ports of the program loaded now. */
static const struct bpf_port *cur_ports = ports;
static size_t cur_nports = ARRAY_SIZE(ports);

static const struct bpf_port *find_port(uint32_t port)
{
	size_t i;

	for (i = 0; i < cur_nports; i++)
		if (cur_ports[i].port == port)
			return &cur_ports[i];
	return NULL;
}

/* Sockets behind @slot: with one, the cursor stays put. */
static uint32_t slot_nsocks(int slot)
{
	size_t i;

	for (i = 0; i < cur_nports; i++)
		if ((int)cur_ports[i].conf.slot == slot)
			return cur_ports[i].conf.nsocks;
	return 0;
}

static int port_slot(uint32_t port)
{
	const struct bpf_port *p = find_port(port);

	return p ? (int)p->conf.slot : -1;
}

/* Snapshot of everything the program writes: the counters, the in-kernel
 * tier's counters of the queue run on, the round-robin cursors. */
struct snap {
	uint64_t stats[RR_STATS_SIZE];
	uint64_t fn[FN_ROW];
	uint32_t cursor[RR_MAX_QUEUES * RR_MAX_SLOTS];
};

static int take_snap(struct snap *s, uint32_t queue)
{
	uint32_t k;
	int ret;

	ret = rr_percpu_sum(stats_fd, 0, RR_STATS_SIZE, s->stats);
	if (!ret && queue < RR_MAX_QUEUES)
		ret = rr_percpu_sum(fn_fd, RR_FN_STATS_KEY(queue, 0, 0), FN_ROW,
				    s->fn);
	if (ret)
		return ret;
	/* As rr_xdp_read_stats() and rr_xdp_read_fn_stats() read them: a
	 * function's reply is counted once, as its tx (rr_xdp.h). */
	for (k = 0; queue < RR_MAX_QUEUES && k < RR_MAX_SLOTS; k++) {
		s->fn[k * RR_FN_STAT_MAX + RR_FN_XDP_RX] +=
			s->fn[k * RR_FN_STAT_MAX + RR_FN_XDP_TX];
		s->stats[queue * RR_XDP_STAT_MAX + RR_XDP_TX_FUNCTION] +=
			s->fn[k * RR_FN_STAT_MAX + RR_FN_XDP_TX];
	}
	for (k = 0; k < RR_MAX_QUEUES * RR_MAX_SLOTS; k++)
		if (bpf_map_lookup_elem(cursor_fd, &k, &s->cursor[k]))
			return -errno;
	return 0;
}

/* The action a counter stands for: its verdict label says. */
static uint32_t stat_action(int stat)
{
	if (!strcmp(stat_verdicts[stat], "drop"))
		return XDP_DROP;
	if (!strcmp(stat_verdicts[stat], "tx"))
		return XDP_TX;
	return XDP_PASS; /* "redirect" too: no socket, the fallback */
}

static const char *action_name(uint32_t act)
{
	switch (act) {
	case XDP_DROP:
		return "XDP_DROP";
	case XDP_PASS:
		return "XDP_PASS";
	case XDP_TX:
		return "XDP_TX";
	case XDP_REDIRECT:
		return "XDP_REDIRECT";
	default:
		return "another action";
	}
}

/* What one run must show. */
struct want {
	int stat, alt;
	int slot; /* whose cursor on the queue moves (-1: none) */
	/* RR_XDP_TX_FUNCTION, RR_XDP_DROP_FUNCTION: whose fn_stats move,
	 * with the drop's reason, or the reply user space builds */
	int fn_slot;
	int drop;
	const uint8_t *reply;
	uint32_t reply_len;
};

/* Runs the program once on @frame, what it leaves in @out (ROOM bytes);
 * -errno if the kernel refused. */
static int run(const uint8_t *frame, uint32_t len, int ifindex, uint32_t queue,
	       uint8_t *out, uint32_t *out_len, uint32_t *retval)
{
	struct xdp_md ctx = {
		.data_end = len,
		.ingress_ifindex = (uint32_t)ifindex,
		.rx_queue_index = queue,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
		    .data_size_in = len, .data_out = out, .data_size_out = ROOM,
		    .repeat = 1);

	if (ifindex) {
		opts.ctx_in = &ctx;
		opts.ctx_size_in = sizeof(ctx);
	}
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*retval = opts.retval;
	*out_len = opts.data_size_out;
	return 0;
}

/* The in-kernel tier's counters: those @w says move, by one, no other. */
static void check_fn_stats(const struct snap *before, const struct snap *after,
			   const struct want *w)
{
	uint32_t k, base = 0, rx = UINT32_MAX, second = UINT32_MAX;
	uint64_t d, want;

	if (w->stat == RR_XDP_TX_FUNCTION || w->stat == RR_XDP_DROP_FUNCTION) {
		base = RR_FN_STATS_KEY(0, (uint32_t)w->fn_slot, 0);
		rx = base + RR_FN_XDP_RX;
		second = base + (w->stat == RR_XDP_TX_FUNCTION
					 ? RR_FN_XDP_TX
					 : RR_FN_XDP_DROP + (uint32_t)w->drop);
	}
	for (k = 0; k < FN_ROW; k++) {
		d = after->fn[k] - before->fn[k];
		want = k == rx || k == second;
		if (d != want)
			t_fail("fn_stats of slot %u, counter %u moved by %llu, expected %llu",
			       k / RR_FN_STAT_MAX, k % RR_FN_STAT_MAX,
			       (unsigned long long)d, (unsigned long long)want);
	}
}

/*
 * Runs @frame and checks: the action counter @w->stat stands for (or
 * @w->alt) of @queue's row up by one and nothing else counted, the frame
 * untouched unless answered (then exactly @w->reply), the in-kernel
 * tier's counters moved as check_fn_stats() says, only the cursor of
 * @w->slot on @queue moved (slot -1: none), as it must with several
 * sockets. Returns the new cursor value.
 */
static uint32_t expect_run(const uint8_t *frame, uint32_t len, int ifindex,
			   uint32_t queue, const struct want *w)
{
	static struct snap before, after;
	static uint8_t out[ROOM];
	uint32_t row = queue < RR_MAX_QUEUES ? queue : RR_MAX_QUEUES;
	uint32_t retval = 0, k, want_key, cur_key = 0, moved = 0, out_len = 0;
	int stat = w->stat, alt = w->alt, slot = w->slot;
	uint32_t want_act = stat_action(stat);
	int ret;

	if (take_snap(&before, queue)) {
		t_fail("cannot read the maps: %s", strerror(errno));
		return 0;
	}
	ret = run(frame, len, ifindex, queue, out, &out_len, &retval);
	if (ret) {
		t_fail("test run refused: %s", strerror(-ret));
		return 0;
	}
	if (retval != want_act)
		t_fail("verdict %s, expected %s", action_name(retval),
		       action_name(want_act));
	if (retval == XDP_TX && want_act == XDP_TX) {
		/* The reply: user space's, byte for byte. */
		if (out_len != w->reply_len ||
		    memcmp(out, w->reply, w->reply_len))
			t_fail("the reply (%u bytes) is not user space's (%u bytes)",
			       out_len, w->reply_len);
	} else if (out_len != len || memcmp(out, frame, len)) {
		/* Passed to the kernel, or dropped: untouched. */
		t_fail("the frame was modified (%u bytes out of %u)", out_len,
		       len);
	}
	if (take_snap(&after, queue)) {
		t_fail("cannot read the maps: %s", strerror(errno));
		return 0;
	}
	if (queue < RR_MAX_QUEUES)
		check_fn_stats(&before, &after, w);

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

/* expect_run() for a frame that the in-kernel tier does not see. */
static uint32_t expect(const uint8_t *frame, uint32_t len, int ifindex,
		       uint32_t queue, int stat, int alt, int slot)
{
	struct want w = { .stat = stat, .alt = alt, .slot = slot };

	return expect_run(frame, len, ifindex, queue, &w);
}

/* What user space answers to @frame on @port: the reply an XDP_TX must
 * equal. Its length, or 0 (and a failure) if it does not answer. */
static uint32_t user_reply(const struct bpf_port *port, const uint8_t *frame,
			   uint32_t len, uint8_t *reply)
{
	const struct rr_function *fn =
		port && port->fn ? rr_registry_find(port->fn) : NULL;
	int ret;

	if (!fn) {
		t_fail("no function on the port to compare with");
		return 0;
	}
	memcpy(reply, frame, len);
	ret = rr_serve(reply, len, ROOM, MTU, port->conf.max_amplification, fn,
		       0, 0);
	if (ret <= 0) {
		t_fail("user space does not answer it either: %s",
		       ret ? rr_drop_label((enum rr_drop) - ret) : "0");
		return 0;
	}
	return (uint32_t)ret;
}

static void run_table(const struct bpf_table *t)
{
	static uint8_t frame[ROOM], reply[ROOM];
	struct frame_layout lay;
	const struct bpf_case *c;
	struct want w;
	uint32_t len;
	size_t i;

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
		memset(&w, 0, sizeof(w));
		w.stat = c->stat;
		w.alt = c->alt;
		w.slot = c->stat == RR_XDP_PASS_NO_SOCKET
				 ? port_slot(c->s.dport)
				 : -1;
		w.fn_slot = port_slot(c->s.dport);
		w.drop = c->drop;
		if (c->stat == RR_XDP_TX_FUNCTION) {
			w.reply = reply;
			w.reply_len = user_reply(find_port(c->s.dport), frame,
						 len, reply);
		}
		expect_run(frame, len, 0, 0, &w);
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

/* The maps' descriptors of the program loaded now. */
static void use_skel(struct reqrouter *sk)
{
	prog_fd = bpf_program__fd(sk->progs.reqrouter_xdp);
	stats_fd = bpf_map__fd(sk->maps.xdp_stats);
	cursor_fd = bpf_map__fd(sk->maps.rr_cursor);
	port_fd = bpf_map__fd(sk->maps.port_map);
	fn_fd = bpf_map__fd(sk->maps.fn_stats);
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
		memcpy((void *)&skel->data->link_mac, mac, 6);
	if (skel && reqrouter__load(skel)) {
		reqrouter__destroy(skel);
		skel = NULL;
	}
	if (!skel) {
		fprintf(stderr, "FAIL: the XDP program does not load: %s\n",
			strerror(errno));
		return 1;
	}
	use_skel(skel);
	cur_ports = ports;
	cur_nports = ARRAY_SIZE(ports);
	for (i = 0; i < ARRAY_SIZE(ports); i++) {
		if (bpf_map_update_elem(port_fd, &ports[i].port, &ports[i].conf,
					BPF_ANY)) {
			fprintf(stderr, "cannot configure port %u: %s\n",
				ports[i].port, strerror(errno));
			return 1;
		}
		rr_xdp_mark_served(skel->data->served_ports, ports[i].port,
				   ports[i].conf.nsocks);
	}
	return 0;
}

/*
 * Loads the program as reqrouter does (rr_xdp_load(), for the builder's
 * MAC), with echo's XDP program in the slots of tier_ports and the local
 * routes written.
 */
static int setup_tier(void)
{
	const struct bpf_port *p;
	char why[RR_ERRLEN];
	size_t i;
	int ret;

	ret = rr_xdp_load(&tier_x, f_dst_mac, MTU);
	if (ret) {
		fprintf(stderr, "FAIL: rr_xdp_load: %s\n", strerror(-ret));
		return 1;
	}
	use_skel(tier_x.skel);
	cur_ports = tier_ports;
	cur_nports = ARRAY_SIZE(tier_ports);
	for (i = 0; i < ARRAY_SIZE(tier_ports); i++) {
		p = &tier_ports[i];
		ret = rr_xdp_load_function(&tier_x, p->conf.slot,
					   rr_registry_xdp(p->fn), why,
					   sizeof(why));
		if (ret) {
			fprintf(stderr, "FAIL: cannot load %s in XDP: %s\n",
				p->fn, why);
			return 1;
		}
		if (rr_xdp_set_port(&tier_x, (uint16_t)p->port, &p->conf))
			return 1;
	}
	return setup_local_routes(tier_x.skel) ? 1 : 0;
}

/* The MAC changes under the running program: one 8-byte store into its
 * .data, which this process maps, as rr_xdp_set_link() makes it. */
static void move_mac(const uint8_t *mac)
{
	uint64_t word = 0;

	memcpy(&word, mac, 6);
	__atomic_store_n(&skel->data->link_mac, word, __ATOMIC_RELAXED);
}

/* The host's VLANs as rr_xdp_set_vlans() writes them: the IDs given
 * (0-terminated), the check on. */
static void set_vlans(const uint16_t *ids)
{
	for (; *ids; ids++)
		skel->data->link_vlans[*ids / 64] |= 1ULL << (*ids % 64);
	__atomic_store_n(&skel->data->link_vlan_check, 1, __ATOMIC_RELEASE);
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
	if (!setup_allow_lists(skel)) {
		run_table(&allow_cases);
		if (!setup_local_routes(skel))
			run_table(&guard_cases);
	}
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
	move_mac(moved_mac_addr);
	run_table(&moved_mac_cases);
	set_vlans((const uint16_t[]){ 100, 0 });
	run_table(&vlan100_cases);
	set_vlans((const uint16_t[]){ 201, 0 });
	run_table(&vlan100_201_cases);
	reqrouter__destroy(skel);
	skel = NULL;

	/* Loaded as reqrouter loads it, with the in-kernel tier. */
	ret = setup_tier();
	if (!ret)
		run_table(&tier_cases);
	rr_xdp_destroy(&tier_x);
	if (ret)
		return ret;

	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("%zu frames and the round robin checked\n",
	       steer_cases.n + allow_cases.n + guard_cases.n + mac_cases.n +
		       moved_mac_cases.n + vlan100_cases.n +
		       vlan100_201_cases.n + tier_cases.n);
	return 0;
}
