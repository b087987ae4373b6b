// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP side of gathers (kern/lib/gather.h, gather_reply()) through
 * BPF_PROG_TEST_RUN: the program loaded as reqrouter loads it with room
 * for gathers, a worker's gather port, a group of three targets, and
 * replies crafted to each of the checks in turn. Each case says the
 * verdict, the one xdp_stats counter that moves, and what the entry
 * holds after: a reply is merged once, from the target it names, while
 * its gather is open under the generation it carries; a duplicate, a
 * stranger, a late or stale reply, one without a header or a value, or
 * with a bad checksum changes nothing in the entry. The reductions
 * (sum, min, max, count, or, top-k) merge as they say, and a
 * concatenation's reply on another queue than its worker's goes to the
 * kernel, for the worker's gather socket (an AF_XDP socket takes frames
 * of its own queue only). A generation is drawn at random, and a reply
 * one off, or off in a single bit, is late. A sound reply teaches
 * the program the way to its target (sg_paths, for copies built in the
 * UMEM), a refused one does not, and writing the targets again forgets
 * it. The last reply of a
 * reduction would go to the worker's socket; there is none here, so the
 * program counts it merged and drops it, as when the worker went away.
 * While a capture runs (capture_on), a gather reply is recorded in the
 * capture ring with what became of it and its bytes, as every request
 * the program judges.
 *
 * Needs root and a kernel with BPF; exits 77 (skip) otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "config.h"
#include "frames.h"
#include "reqrouter.skel.h"
#include "shared/capture.h"
#include "testutil.h"
#include "util.h"
#include "xdp.h"
#include "xdptest.h"

#define MTU 1500
#define GPORT 40001 /* the worker's gather port */
#define TPORT 7	    /* the targets' */
/* Room for worker 0 of queues 0 and 1 (worker index 16). */
#define NGATHERS (RR_SG_PER_WORKER * (RR_MAX_THREADS + 1))
#define IDX 5 /* the entry the cases use: queue 0's worker 0 */
/* Queue 1's worker 0's first entry: its replies arrive on queue 0 here. */
#define IDX_Q1 (RR_SG_PER_WORKER * RR_MAX_THREADS)

static struct rr_xdp x;
static int prog_fd, checks;
static struct rr_gather_entry *e;
static const uint8_t target_ip[3][4] = {
	{ 198, 18, 0, 101 },
	{ 198, 18, 0, 102 },
	{ 198, 18, 0, 103 },
};
static const uint8_t stranger_ip[4] = { 198, 18, 0, 104 };

/* A gather of @reduce to targets 0 and 1 (of 0-2), needing @need, in
 * entry @idx, which e then points at. */
static void open_gather(uint32_t idx, uint32_t gen, enum rr_reduce reduce,
			uint32_t need)
{
	e = &x.gathers[idx];
	memset(e, 0, sizeof(*e));
	e->need = need;
	e->reduce = reduce;
	e->group = 0;
	e->slot = 0;
	e->value = reduce == RR_REDUCE_MIN ? UINT64_MAX : 0;
	e->sent[0] = 0x3;
	__atomic_store_n(&e->state, (uint64_t)gen << 32, __ATOMIC_RELEASE);
}

struct reply {
	uint32_t gather, gen;
	uint16_t target;
	const uint8_t *from; /* source address */
	uint16_t sport;
	const char *body;
	int no_magic;
	enum frame_csum csum;
};

/* Runs one reply through the program: its verdict, or -1. */
static int run(const struct reply *r)
{
	uint8_t payload[256], frame[512], out[512];
	struct rr_sg_hdr *h = (void *)payload;
	size_t blen = strlen(r->body);
	struct frame_spec spec = {
		.family = AF_INET,
		.sport = r->sport ? r->sport : TPORT,
		.dport = GPORT,
		.saddr = r->from,
		.payload = payload,
		.plen = (uint32_t)(sizeof(*h) + blen),
		.csum = r->csum,
	};
	uint32_t len;

	h->magic = htonl(r->no_magic ? 0x12345678 : RR_SG_MAGIC);
	h->gather = htonl(r->gather);
	h->gen = htonl(r->gen);
	h->target = htons(r->target);
	h->flags = 0;
	memcpy(payload + sizeof(*h), r->body, blen);
	len = build_frame(frame, sizeof(frame), &spec, NULL);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	if (!len || bpf_prog_test_run_opts(prog_fd, &o))
		return -1;
	return (int)o.retval;
}

/* One reply: @verdict and exactly xdp_stats @stat moved by one. */
static void expect(const char *what, const struct reply *r, int verdict,
		   int stat)
{
	static const int none[2] = { -1, -1 };
	struct t_xdp_counts a, b;
	int got;

	t_at("%s", what);
	checks++;
	if (t_xdp_counts(&x, 0, &a)) {
		t_fail("cannot read the counters: %s", strerror(errno));
		return;
	}
	got = run(r);
	if (got < 0 || t_xdp_counts(&x, 0, &b)) {
		t_fail("cannot run it: %s", strerror(errno));
		return;
	}
	if (got != verdict)
		t_fail("verdict %d, want %d", got, verdict);
	t_xdp_moved(&a, &b, none, stat);
}

static void want_u64(const char *what, uint64_t got, uint64_t want)
{
	checks++;
	if (got != want)
		t_fail("%s: %llu, want %llu", what, (unsigned long long)got,
		       (unsigned long long)want);
}

static struct reply reply(uint32_t gen, uint16_t target, const char *body)
{
	struct reply r = {
		.gather = IDX,
		.gen = gen,
		.target = target,
		.from = target_ip[target % 3],
		.body = body,
	};

	return r;
}

/* The 48 bits of MAC @m with RR_SG_PATH_VALID, as sg_paths holds it. */
static uint64_t hw_of(const uint8_t *m)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 6; i++)
		v = v << 8 | m[i];
	return v | RR_SG_PATH_VALID;
}

/* sg_paths[target]: learned from a frame of build_frame()'s defaults, or
 * (!@learned) nothing at all. */
static void want_path(const char *what, uint32_t target, int learned)
{
	const struct rr_sg_path *p = &x.sg_paths[target];

	want_u64(what, p->hw, learned ? hw_of(f_src_mac) : 0);
	want_u64("... the MAC it answered to", p->own_hw,
		 learned ? hw_of(f_dst_mac) : 0);
	checks++;
	if (learned ? memcmp(p->own_addr, f_dst_ip4, 4) : p->own_addr[0])
		t_fail("%s: the address it answered to is %u.%u.%u.%u", what,
		       p->own_addr[0], p->own_addr[1], p->own_addr[2],
		       p->own_addr[3]);
}

static void checks_and_sum(void)
{
	struct reply r;

	open_gather(IDX, 7, RR_REDUCE_SUM, 2);
	r = reply(7, 0, "40 and more");
	expect("sum: target 0's 40 merged", &r, XDP_DROP, RR_XDP_GATHER_MERGED);
	want_u64("sum after target 0", e->value, 40);
	want_u64("merged after target 0", e->merged, 1);
	want_u64("tickets after target 0", (uint32_t)e->state, 1);
	want_u64("seen after target 0", e->seen[0], 1);
	want_u64("merged bits after target 0", e->merged_bits[0], 1);
	want_path("the way to target 0, learned from its reply", 0, 1);

	expect("a duplicate of target 0's reply", &r, XDP_DROP,
	       RR_XDP_GATHER_DUPLICATE);
	r = reply(7, 1, "2");
	r.from = stranger_ip;
	expect("target 1's reply from another address", &r, XDP_DROP,
	       RR_XDP_GATHER_WRONG_SOURCE);
	r = reply(7, 1, "2");
	r.sport = 8;
	expect("target 1's reply from another port", &r, XDP_DROP,
	       RR_XDP_GATHER_WRONG_SOURCE);
	r = reply(7, 2, "2");
	expect("target 2, not asked", &r, XDP_DROP, RR_XDP_GATHER_WRONG_SOURCE);
	r = reply(6, 1, "2");
	expect("target 1 to an older use of the entry", &r, XDP_DROP,
	       RR_XDP_GATHER_LATE);
	r = reply(7, 1, "2");
	r.no_magic = 1;
	expect("no gather header", &r, XDP_DROP, RR_XDP_GATHER_MALFORMED);
	r = reply(7, 1, "2");
	r.gather = NGATHERS + 3;
	expect("no such gather", &r, XDP_DROP, RR_XDP_GATHER_MALFORMED);
	r = reply(7, 1, "2");
	r.csum = CSUM_GARBAGE;
	expect("a bad UDP checksum", &r, XDP_DROP, RR_XDP_GATHER_MALFORMED);
	r = reply(7, 1, "two");
	expect("no value", &r, XDP_DROP, RR_XDP_GATHER_NO_VALUE);
	t_at("after the refusals");
	want_path("no way to target 1 learned from refused replies", 1, 0);
	want_path("nor to target 2", 2, 0);
	want_u64("sum", e->value, 40);
	want_u64("merged", e->merged, 1);
	want_u64("seen", e->seen[0], 1);

	r = reply(7, 1, "2");
	r.csum = CSUM_PARTIAL;
	/* The last: for the worker's socket, which is not there. */
	expect("target 1's 2 (a partial checksum, as veth leaves it)", &r,
	       XDP_DROP, RR_XDP_GATHER_MERGED);
	want_u64("sum, complete", e->value, 42);
	want_u64("merged, complete", e->merged, 2);
	want_u64("merged bits, complete", e->merged_bits[0], 3);
	want_path("the way to target 1, learned", 1, 1);

	/* Closed by its worker: later replies do nothing. */
	__atomic_fetch_add(&e->state, RR_SG_CLOSED, __ATOMIC_ACQ_REL);
	e->seen[0] = 0;
	r = reply(7, 0, "1");
	expect("a reply after the gather closed", &r, XDP_DROP,
	       RR_XDP_GATHER_LATE);
	want_u64("sum, closed", e->value, 42);
}

static void reductions(void)
{
	static const struct {
		enum rr_reduce reduce;
		const char *a, *b;
		uint64_t want;
	} cases[] = {
		{ RR_REDUCE_MIN, "17", "5", 5 },
		{ RR_REDUCE_MAX, "17", "5", 17 },
		{ RR_REDUCE_COUNT, "17", "5", 2 },
		{ RR_REDUCE_OR, "12", "3", 15 },
		{ RR_REDUCE_SUM, "9999999999999999999", "1",
		  10000000000000000000ULL },
	};
	struct reply r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		open_gather(IDX, 100 + (uint32_t)i, cases[i].reduce, 2);
		r = reply(100 + (uint32_t)i, 0, cases[i].a);
		expect("a reduction's first", &r, XDP_DROP,
		       RR_XDP_GATHER_MERGED);
		r = reply(100 + (uint32_t)i, 1, cases[i].b);
		expect("a reduction's second", &r, XDP_DROP,
		       RR_XDP_GATHER_MERGED);
		t_at("reduction %d of %s and %s", cases[i].reduce, cases[i].a,
		     cases[i].b);
		want_u64("value", e->value, cases[i].want);
	}

	open_gather(IDX, 200, RR_REDUCE_TOPK, 2);
	r = reply(200, 0, "200");
	expect("top-k: 200", &r, XDP_DROP, RR_XDP_GATHER_MERGED);
	r = reply(200, 1, "3");
	expect("top-k: 3", &r, XDP_DROP, RR_XDP_GATHER_MERGED);
	t_at("top-k");
	want_u64("values 0-63", e->topk[0], 1ULL << 3);
	want_u64("values 192-255", e->topk[3], 1ULL << (200 - 192));

	/* need 1 of 2: the second reply finds it complete. */
	open_gather(IDX, 300, RR_REDUCE_SUM, 1);
	r = reply(300, 0, "1");
	expect("first of need 1", &r, XDP_DROP, RR_XDP_GATHER_MERGED);
	r = reply(300, 1, "1");
	expect("second of need 1: late", &r, XDP_DROP, RR_XDP_GATHER_LATE);
	want_u64("need 1: sum", e->value, 1);

	open_gather(IDX_Q1, 400, RR_REDUCE_CONCAT, 2);
	r = reply(400, 0, "body");
	r.gather = IDX_Q1;
	expect("a concatenation's reply on another queue: to the kernel", &r,
	       XDP_PASS, RR_XDP_GATHER_OTHER_QUEUE);
	want_u64("other queue: counted, as its worker reads it", e->merged, 1);
	want_u64("other queue: its ticket", (uint32_t)e->state, 1);
	expect("... and its duplicate is not passed", &r, XDP_DROP,
	       RR_XDP_GATHER_DUPLICATE);
}

/*
 * A gather's generation is drawn at random (features/gather.c,
 * next_gen()): a forged reply must carry all 32 of its bits. Replies one
 * off, or off in one bit high or low, are late and leave the entry as
 * it was; only the generation itself is merged.
 */
static void generations(void)
{
	static const uint32_t gen = 0x9e3779b9, off[] = {
		1,
		0x80000000,
		0x00010000,
		0x00000100,
	};
	struct reply r;
	size_t i;

	open_gather(IDX, gen, RR_REDUCE_SUM, 2);
	r = reply(gen + 1, 0, "1000000");
	expect("the next generation (the old guess)", &r, XDP_DROP,
	       RR_XDP_GATHER_LATE);
	r = reply(gen - 1, 0, "1000000");
	expect("the one before", &r, XDP_DROP, RR_XDP_GATHER_LATE);
	for (i = 0; i < ARRAY_SIZE(off); i++) {
		r = reply(gen ^ off[i], 0, "1000000");
		t_at("a generation off in bit mask %#x", off[i]);
		expect("a generation off in one bit", &r, XDP_DROP,
		       RR_XDP_GATHER_LATE);
	}
	t_at("after the wrong generations");
	want_u64("nothing merged", e->merged, 0);
	want_u64("no ticket", (uint32_t)e->state, 0);
	want_u64("nothing seen", e->seen[0], 0);
	want_u64("no value", e->value, 0);
	r = reply(gen, 0, "7");
	expect("the gather's own generation", &r, XDP_DROP,
	       RR_XDP_GATHER_MERGED);
	want_u64("its value merged", e->value, 7);
}

/* Group 0: the three targets. */
/* The records a capture got: how many, and the last. */
static uint32_t nrecs;
static struct rr_capture_rec last_rec;

static int on_rec(void *ctx, void *p, size_t len)
{
	(void)ctx;
	if (len >= sizeof(last_rec))
		memcpy(&last_rec, p, sizeof(last_rec));
	nrecs++;
	return 0;
}

static void captured(void)
{
	struct ring_buffer *rb;
	struct reply r;

	rb = ring_buffer__new(bpf_map__fd(x.skel->maps.capture_ring), on_rec,
			      NULL, NULL);
	t_at("gather replies captured");
	checks++;
	if (!rb) {
		t_fail("cannot read the capture ring: %s", strerror(errno));
		return;
	}
	ring_buffer__consume(rb);
	nrecs = 0;
	x.skel->data->capture_snap = RR_CAPTURE_SNAP_MAX;
	x.skel->data->capture_on = RR_MARK_CAPTURE;
	open_gather(IDX, 9, RR_REDUCE_SUM, 2);
	r = reply(9, 0, "5");
	expect("captured: target 0's 5 merged", &r, XDP_DROP,
	       RR_XDP_GATHER_MERGED);
	expect("captured: its duplicate", &r, XDP_DROP,
	       RR_XDP_GATHER_DUPLICATE);
	x.skel->data->capture_on = 0;
	ring_buffer__consume(rb);
	t_at("gather replies captured");
	want_u64("a record for each reply", nrecs, 2);
	want_u64("the last one's verdict: a duplicate", last_rec.xdp_stat,
		 RR_XDP_GATHER_DUPLICATE);
	want_u64("... its frame whole", last_rec.caplen, last_rec.len);
	want_u64("... from the XDP program", last_rec.tier,
		 RR_CAPTURE_TIER_XDP);
	ring_buffer__free(rb);
}

static int setup_targets(void)
{
	struct rr_endpoint t[3];
	int i;

	memset(t, 0, sizeof(t));
	for (i = 0; i < 3; i++) {
		t[i].family = AF_INET;
		t[i].port = TPORT;
		memcpy(t[i].addr, target_ip[i], 4);
	}
	return rr_xdp_set_targets(&x, 0, t, 3);
}

static int setup(void)
{
	struct rr_port_conf conf = { .nsocks = 1, .flags = RR_PORT_GATHER };
	int ret;

	ret = rr_xdp_load_sized(&x, f_dst_mac, MTU, 1, 1, NGATHERS, 1, false);
	if (ret)
		return ret;
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	ret = rr_xdp_map_gathers(&x);
	if (ret)
		return ret;
	ret = setup_targets();
	if (ret)
		return ret;
	return rr_xdp_set_port(&x, GPORT, &conf);
}

int main(void)
{
	int ret;

	ret = t_xdp_start(&x, setup);
	if (ret)
		return ret;
	checks_and_sum();
	reductions();
	generations();
	captured();
	/* Targets written again (a reload): what was learned goes. */
	t_at("the targets rewritten");
	checks++;
	if (setup_targets())
		t_fail("cannot write the targets again: %s", strerror(errno));
	want_path("the way to target 0 forgotten", 0, 0);
	rr_xdp_destroy(&x);
	printf("gather replies judged as they must in %d checks, %d failures\n",
	       checks, t_failures);
	return t_failures ? 1 : 0;
}
