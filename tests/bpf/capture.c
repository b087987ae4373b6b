// SPDX-License-Identifier: GPL-2.0
/*
 * Capture and traces in XDP (kern/lib/capture.h; docs/DESIGN.md,
 * "Capture and traces"): crafted requests run through the XDP program
 * with bpf_prog_test_run_opts(), its capture ring read here through
 * libbpf. A test run has no AF_XDP socket, so a request for the workers
 * is passed (pass/no_socket): a verdict in XDP, recorded as such.
 * - Off (capture_on 0): no record, whatever the filter says.
 * - The filter is XDP's: a request to the captured port is recorded, its
 *   bytes as it came, up to the snap length; one to another port, or
 *   from outside the source prefix (IPv4 or IPv6), is not.
 * - A request from a loop-prone port is recorded with its drop
 *   (drop/loop_source_port), the frame as it came.
 * - --sample 4: two records of eight requests.
 * - trace_sample = 2 with a trace on: every other request of the
 *   function recorded for the trace alone (no bytes); none of another.
 * - A tap (RR_MARK_TAP, tap_sample = 1): a request for the workers is
 *   not recorded (its own dnstap is the worker's); one the reply cache
 *   answers is, request and reply, whole. (That the workers never see
 *   the tap's mark, which would read as RR_STEER_SLIP, takes a socket:
 *   tests/integration/dnstap.sh.)
 * Needs root; exits 77 (skip) otherwise.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "frames.h"
#include "cache.h"
#include "reqrouter.skel.h"
#include "shared/capture.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "testutil.h"
#include "xdp.h"
#include "xdptest.h"

#define PORT 6061
#define OTHER 6062
#define SLOT 5
#define SPORT 40001
#define MAX_RECS 16

static struct rr_xdp x;
static struct ring_buffer *rb;
static int prog_fd;

/* What the ring gave since the last take(). */
static struct got {
	struct rr_capture_rec rec;
	uint8_t data[RR_CAPTURE_SNAP_MAX];
} recs[MAX_RECS];
static uint32_t nrecs;

static int on_rec(void *ctx, void *p, size_t len)
{
	(void)ctx;
	if (nrecs < MAX_RECS && len >= sizeof(struct rr_capture_rec) &&
	    len <= sizeof(recs[0]))
		memcpy(&recs[nrecs], p, len);
	nrecs++;
	return 0;
}

static uint32_t take(void)
{
	nrecs = 0;
	ring_buffer__consume(rb);
	return nrecs;
}

/* Runs the @len-byte frame @f once; its action. */
static int run(const uint8_t *f, uint32_t len)
{
	struct xdp_md ctx = { .data_end = len };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f, .data_size_in = len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &opts)) {
		t_fail("bpf_prog_test_run_opts: %s", strerror(errno));
		return -1;
	}
	return (int)opts.retval;
}

/* The filter: port @port (0: any), source @src (NULL: any), one in
 * @sample, @snap bytes; marks @on. */
static void filter(uint32_t on, uint32_t port, const char *src, uint32_t sample,
		   uint32_t snap)
{
	struct reqrouter *s = x.skel;
	uint8_t a[16] = { 0 };
	uint32_t i;

	s->data->capture_on = 0;
	s->data->capture_port = port;
	s->data->capture_sample = sample;
	s->data->capture_snap = snap;
	s->data->capture_family = 0;
	for (i = 0; i < 4; i++)
		s->data->capture_addr[i] = s->data->capture_mask[i] = 0;
	if (src && inet_pton(AF_INET, src, a) == 1) {
		s->data->capture_family = 4;
		memcpy((void *)s->data->capture_addr, a, 4);
		s->data->capture_mask[0] = ~0U;
	} else if (src && inet_pton(AF_INET6, src, a) == 1) {
		/* a /64 */
		s->data->capture_family = 6;
		memcpy((void *)s->data->capture_addr, a, 8);
		s->data->capture_mask[0] = s->data->capture_mask[1] = ~0U;
	}
	for (i = 0; i < RR_MAX_SLOTS; i++)
		s->data->trace_sample[i] = 0;
	s->data->capture_on = on;
}

static uint8_t f4[256], f4o[256], f4l[256], f6[256];
static uint32_t f4len, f4olen, f4llen, f6len;

static int make_frames(void)
{
	static const uint8_t payload[40] = "what became of this request?";
	struct frame_spec s = { .family = AF_INET6,
				.sport = SPORT,
				.dport = PORT,
				.payload = payload,
				.plen = sizeof(payload) };

	f4len = build_request(f4, sizeof(f4), SPORT, PORT, payload,
			      sizeof(payload), NULL);
	f4olen = build_request(f4o, sizeof(f4o), SPORT, OTHER, payload,
			       sizeof(payload), NULL);
	f4llen = build_request(f4l, sizeof(f4l), 19, PORT, payload,
			       sizeof(payload), NULL);
	f6len = build_frame(f6, sizeof(f6), &s, NULL);
	return f4len && f4olen && f4llen && f6len ? 0 : -EINVAL;
}

static void port_entries(void)
{
	struct rr_port_conf conf = { .slot = SLOT, .nsocks = 1 };

	if (rr_xdp_set_port(&x, PORT, &conf))
		t_fail("cannot set port %u", PORT);
	conf.slot = SLOT + 1;
	if (rr_xdp_set_port(&x, OTHER, &conf))
		t_fail("cannot set port %u", OTHER);
}

/* The one record taken: a request of @len bytes recorded as @stat, its
 * first @cap bytes those of @f. */
static void one_request(const char *what, const uint8_t *f, uint32_t len,
			uint32_t cap, uint32_t stat)
{
	const struct rr_capture_rec *r = &recs[0].rec;

	t_at("%s", what);
	if (take() != 1) {
		t_fail("%u records, want 1", nrecs);
		return;
	}
	if (r->kind != RR_CAPTURE_REQUEST || r->tier != RR_CAPTURE_TIER_XDP ||
	    r->xdp_stat != stat || r->len != len || r->caplen != cap ||
	    r->slot != SLOT || !(r->mark & RR_MARK_CAPTURE))
		t_fail("record kind %u tier %u stat %u len %u caplen %u slot %u mark %u",
		       r->kind, r->tier, r->xdp_stat, r->len, r->caplen,
		       r->slot, r->mark);
	else if (memcmp(recs[0].data, f, cap))
		t_fail("the bytes are not the request's");
}

static void cases(void)
{
	uint32_t i, n;

	t_at("off");
	filter(0, PORT, NULL, 1, 256);
	run(f4, f4len);
	run(f4l, f4llen);
	if (take())
		t_fail("%u records with the capture off", nrecs);

	filter(RR_MARK_CAPTURE, PORT, NULL, 1, 256);
	if (run(f4, f4len) != XDP_PASS)
		t_fail("the request was not passed (no socket)");
	one_request("the captured port", f4, f4len, f4len,
		    RR_XDP_PASS_NO_SOCKET);
	filter(RR_MARK_CAPTURE, PORT, NULL, 1, 32);
	run(f4, f4len);
	one_request("32 bytes of it", f4, f4len, 32, RR_XDP_PASS_NO_SOCKET);

	t_at("another port");
	filter(RR_MARK_CAPTURE, PORT, NULL, 1, 256);
	run(f4o, f4olen);
	if (take())
		t_fail("%u records of a port not captured", nrecs);

	filter(RR_MARK_CAPTURE, 0, "198.51.100.0", 1, 256);
	run(f4, f4len);
	run(f6, f6len);
	t_at("a source outside the prefix");
	if (take())
		t_fail("%u records", nrecs);
	filter(RR_MARK_CAPTURE, 0, "fd00::", 1, 256);
	run(f4, f4len);
	run(f6, f6len);
	one_request("the IPv6 source in fd00::/64 alone", f6, f6len, f6len,
		    RR_XDP_PASS_NO_SOCKET);

	filter(RR_MARK_CAPTURE, PORT, NULL, 1, 256);
	if (run(f4l, f4llen) != XDP_DROP)
		t_fail("the loop port's request was not dropped");
	one_request("a drop, with its reason", f4l, f4llen, f4llen,
		    RR_XDP_DROP_LOOP_PORT);

	t_at("--sample 4");
	filter(RR_MARK_CAPTURE, PORT, NULL, 4, 256);
	for (i = 0; i < 8; i++)
		run(f4, f4len);
	if ((n = take()) != 2)
		t_fail("%u records of 8 requests, want 2", n);

	t_at("trace_sample = 2");
	filter(RR_MARK_TRACE, 0, NULL, 1, 256);
	x.skel->data->trace_sample[SLOT] = 2;
	for (i = 0; i < 8; i++) {
		run(f4, f4len);
		run(f4o, f4olen);
	}
	n = take();
	if (n != 4)
		t_fail("%u records of 8 requests, want 4", n);
	for (i = 0; i < n && i < MAX_RECS; i++)
		if (recs[i].rec.mark != RR_MARK_TRACE || recs[i].rec.caplen ||
		    recs[i].rec.slot != SLOT)
			t_fail("record %u: mark %u caplen %u slot %u", i,
			       recs[i].rec.mark, recs[i].rec.caplen,
			       recs[i].rec.slot);
	filter(0, 0, NULL, 1, 256);
}

/* A tap: a request for the workers, then one the cache answers (its
 * reply: f4's payload reversed). */
static void tap_cases(void)
{
	struct rr_port_conf conf = { .slot = SLOT, .nsocks = 1 };
	uint32_t off = f4len - 40, i, n;
	const struct rr_capture_rec *r;
	uint8_t reply[40];

	t_at("a tap, a request for the workers");
	filter(RR_MARK_TAP, 0, NULL, 1, 256);
	x.skel->data->tap_sample[SLOT] = 1;
	if (run(f4, f4len) != XDP_PASS)
		t_fail("not passed as it would be untapped (no socket)");
	/* What the tap took begins no record of its own. */
	if (take())
		t_fail("%u records", nrecs);

	t_at("a tap, the reply cache's answer");
	for (i = 0; i < sizeof(reply); i++)
		reply[i] = f4[off + sizeof(reply) - 1 - i];
	conf.flags = RR_PORT_CACHE;
	conf.cache_gen = 1;
	conf.cache_max_payload = RR_CACHE_MAX_PAYLOAD;
	if (rr_xdp_set_port(&x, PORT, &conf) ||
	    rr_cache_insert(x.cache, x.cache_queue_entries, PORT, 1, 0,
			    f4 + off, sizeof(reply), reply, sizeof(reply), 0,
			    0) == RR_CACHE_SKIPPED) {
		t_fail("cannot cache a reply");
		return;
	}
	if (run(f4, f4len) != XDP_TX)
		t_fail("the cache did not answer");
	n = take();
	if (n != 2) {
		t_fail("%u records, want the request's and the reply's", n);
		return;
	}
	for (i = 0; i < 2; i++) {
		r = &recs[i].rec;
		if (r->kind != (i ? RR_CAPTURE_REPLY : RR_CAPTURE_REQUEST) ||
		    r->mark != RR_MARK_TAP || r->xdp_stat != RR_XDP_TX_CACHE ||
		    r->caplen != r->len || r->len != f4len)
			t_fail("record %u: kind %u mark %u stat %u len %u caplen %u",
			       i, r->kind, r->mark, r->xdp_stat, r->len,
			       r->caplen);
	}
	if (memcmp(recs[0].data, f4, f4len))
		t_fail("the request's bytes are not those that came");
	if (memcmp(recs[1].data + off, reply, sizeof(reply)))
		t_fail("the reply's payload is not the cache's");
	x.skel->data->tap_sample[SLOT] = 0;
	filter(0, 0, NULL, 1, 256);
	port_entries();
}

int main(void)
{
	static const uint8_t no_mac[6];
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = t_xdp_load(&x, no_mac, 1500);
	if (ret)
		return ret;
	ret = make_frames();
	rb = ring_buffer__new(bpf_map__fd(x.skel->maps.capture_ring), on_rec,
			      NULL, NULL);
	if (ret || !rb) {
		fprintf(stderr, "cannot set the test up\n");
		rr_xdp_destroy(&x);
		return 1;
	}
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	if (rr_xdp_map_cache(&x)) {
		fprintf(stderr, "cannot map the reply cache\n");
		rr_xdp_destroy(&x);
		return 1;
	}
	port_entries();
	cases();
	tap_cases();
	ring_buffer__free(rb);
	rr_xdp_destroy(&x);
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("the XDP program marked and recorded what it must\n");
	return 0;
}
