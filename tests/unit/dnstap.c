// SPDX-License-Identifier: GPL-2.0
/*
 * dnstap of the dns function (functions/dns/dnstap.c), read back with a
 * reader of our own: libfstrm's file reader and protobuf-c's unpacking of
 * dnstap.proto. Each field of an AUTH_QUERY and its AUTH_RESPONSE is the
 * request's (addresses, ports, family, protocol, the message's bytes, the
 * times, identity and version); dnstap_sample = 3 writes one query in 3;
 * and a worker's ring scribbled over (as a cell may: a record of garbage,
 * padding that would pass the head, a head past any ring) loses what it
 * held, never the records written after it, and nothing else breaks.
 * The tap (rr_fn_tap()): dnstap asks for the in-kernel tier's answers at
 * its sample, and one handed to it is written as its AUTH_QUERY and
 * AUTH_RESPONSE, the bytes as they were, the extra field saying the
 * reply cache answered it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <fstrm.h>

#include "dnstap.pb-c.h"
#include "function.h"
#include "registry.h"

#define TAP "/tmp/rr-test-dnstap.tap"
#define ZONE "configs/example.zone"

static const struct rr_function *fn;
static struct rr_fn_instance *inst;
static struct rr_fn_counters ctrs;
static uint64_t counters[2][RR_FN_MAX_COUNTERS];

/* The dns function with the example zone and dnstap to TAP, and @more
 * settings (key, value pairs), for two workers. */
static void start(const char *const *more, size_t nmore)
{
	const char *kv[16] = { "zone", ZONE, "dnstap", TAP };
	struct rr_fn_setting s[8];
	char err[512];
	size_t i, n = 2 + nmore;

	memcpy(kv + 4, more, nmore * 2 * sizeof(*kv));
	for (i = 0; i < n; i++) {
		s[i].key = kv[2 * i];
		s[i].value = kv[2 * i + 1];
		s[i].file = "test.conf";
		s[i].line = (unsigned int)(10 + i);
	}
	unlink(TAP);
	memset(&ctrs, 0, sizeof(ctrs));
	memset(counters, 0, sizeof(counters));
	if (rr_fn_instance_new(fn, 53, s, n, 2, &ctrs, &inst, err, sizeof(err)))
		fail_msg("dns with dnstap refused: %s", err);
}

/* Frees the instance: its thread writes what is left, and the file is
 * closed. */
static void stop(void)
{
	rr_fn_instance_free(inst);
	inst = NULL;
}

static uint64_t counter(const char *name)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < ctrs.n; i++)
		if (!strcmp(ctrs.name[i], name))
			sum = counters[0][i] + counters[1][i];
	return sum;
}

/* A query for www.example.com A with ID @id. */
static size_t query(uint8_t *m, uint16_t id)
{
	static const uint8_t q[] = { 0,	  0,   1,   0,	 0,   1,   0,
				     0,	  0,   0,   0,	 0,   3,   'w',
				     'w', 'w', 7,   'e', 'x', 'a', 'm',
				     'p', 'l', 'e', 3,	 'c', 'o', 'm',
				     0,	  0,   1,   0,	 1 };

	memcpy(m, q, sizeof(q));
	m[0] = (uint8_t)(id >> 8);
	m[1] = (uint8_t)id;
	return sizeof(q);
}

struct asked {
	uint8_t q[64], r[512];
	size_t qlen;
	int rlen;
	struct timespec before, after;
};

/* @worker asks query @id from [src]:sport to [dst]:53 over @transport. */
static void ask(uint32_t worker, int family, const char *src, const char *dst,
		uint16_t sport, uint32_t transport, uint16_t id,
		struct asked *a)
{
	struct rr_request req = { 0 };
	uint32_t flags = 0;

	req.family = family;
	assert_int_equal(inet_pton(family, src, &req.src), 1);
	assert_int_equal(inet_pton(family, dst, &req.dst), 1);
	req.src_port = sport;
	req.dst_port = 53;
	req.transport = transport;
	req.reply_flags = &flags;
	rr_fn_request_bind(&req, inst, worker, counters[worker]);
	assert_non_null(req.worker_state);
	a->qlen = query(a->q, id);
	memcpy(a->r, a->q, a->qlen);
	clock_gettime(CLOCK_REALTIME, &a->before);
	a->rlen = fn->handler(&req, a->r, a->qlen, sizeof(a->r));
	clock_gettime(CLOCK_REALTIME, &a->after);
	assert_true(a->rlen > 0);
	/* dnstap keeps no datagram's reply from the reply cache: its
	 * answers come through the tap (test_tap). */
	if (transport == RR_TRANSPORT_UDP)
		assert_false(flags & RR_REPLY_NO_CACHE);
}

/* Every message of TAP, in order; returns how many (at most @max). */
static size_t read_tap(Dnstap__Dnstap **out, size_t max)
{
	struct fstrm_file_options *fopt = fstrm_file_options_init();
	struct fstrm_reader *r;
	const uint8_t *data;
	size_t n = 0, len;

	fstrm_file_options_set_file_path(fopt, TAP);
	r = fstrm_file_reader_init(fopt, NULL);
	fstrm_file_options_destroy(&fopt);
	assert_non_null(r);
	assert_int_equal(fstrm_reader_open(r), fstrm_res_success);
	while (fstrm_reader_read(r, &data, &len) == fstrm_res_success &&
	       n < max) {
		out[n] = dnstap__dnstap__unpack(NULL, len, data);
		assert_non_null(out[n]);
		n++;
	}
	fstrm_reader_destroy(&r);
	return n;
}

static void free_tap(Dnstap__Dnstap **d, size_t n)
{
	while (n--)
		dnstap__dnstap__free_unpacked(d[n], NULL);
}

static uint64_t ns(uint64_t sec, uint32_t nsec)
{
	return sec * 1000000000U + nsec;
}

static uint64_t ns_ts(const struct timespec *t)
{
	return ns((uint64_t)t->tv_sec, (uint32_t)t->tv_nsec);
}

/* @d is @type of @a from [src]:sport to [dst]:53. */
static void check_message(const Dnstap__Dnstap *d, int type,
			  const struct asked *a, int family, const char *src,
			  const char *dst, uint16_t sport, int tcp)
{
	const Dnstap__Message *m = d->message;
	uint8_t s[16], t[16];
	size_t alen = family == AF_INET6 ? 16 : 4;

	assert_int_equal(d->type, DNSTAP__DNSTAP__TYPE__MESSAGE);
	assert_true(d->has_identity && d->identity.len == 7 &&
		    !memcmp(d->identity.data, "ns-unit", 7));
	assert_true(d->has_version && d->version.len == 6 &&
		    !memcmp(d->version.data, "tap-v1", 6));
	assert_non_null(m);
	assert_int_equal(m->type, type);
	assert_true(m->has_socket_family && m->has_socket_protocol);
	assert_int_equal(m->socket_family,
			 family == AF_INET6 ? DNSTAP__SOCKET_FAMILY__INET6
					    : DNSTAP__SOCKET_FAMILY__INET);
	assert_int_equal(m->socket_protocol,
			 tcp ? DNSTAP__SOCKET_PROTOCOL__TCP
			     : DNSTAP__SOCKET_PROTOCOL__UDP);
	inet_pton(family, src, s);
	inet_pton(family, dst, t);
	assert_true(m->has_query_address && m->query_address.len == alen &&
		    !memcmp(m->query_address.data, s, alen));
	assert_true(m->has_response_address &&
		    m->response_address.len == alen &&
		    !memcmp(m->response_address.data, t, alen));
	assert_true(m->has_query_port && m->query_port == sport);
	assert_true(m->has_response_port && m->response_port == 53);
	assert_true(m->has_query_time_sec && m->has_query_time_nsec);
	assert_in_range(ns(m->query_time_sec, m->query_time_nsec),
			ns_ts(&a->before), ns_ts(&a->after));
	if (type == DNSTAP__MESSAGE__TYPE__AUTH_QUERY) {
		assert_true(m->has_query_message &&
			    m->query_message.len == a->qlen &&
			    !memcmp(m->query_message.data, a->q, a->qlen));
		assert_false(m->has_response_message);
		return;
	}
	assert_true(m->has_response_message &&
		    m->response_message.len == (size_t)a->rlen &&
		    !memcmp(m->response_message.data, a->r, (size_t)a->rlen));
	assert_true(m->has_response_time_sec && m->has_response_time_nsec);
	assert_in_range(ns(m->response_time_sec, m->response_time_nsec),
			ns(m->query_time_sec, m->query_time_nsec),
			ns_ts(&a->after));
}

static const char *const names[] = { "dnstap_identity", "ns-unit",
				     "dnstap_version", "tap-v1" };

static void test_fields(void **state)
{
	Dnstap__Dnstap *d[8];
	struct asked a, b;

	(void)state;
	start(names, 2);
	ask(0, AF_INET6, "2001:db8::7", "2001:db8::1", 40001, RR_TRANSPORT_UDP,
	    0x1234, &a);
	ask(1, AF_INET, "192.0.2.7", "192.0.2.1", 40002, RR_TRANSPORT_TCP,
	    0x4321, &b);
	stop();
	assert_int_equal(read_tap(d, 8), 4);
	check_message(d[0], DNSTAP__MESSAGE__TYPE__AUTH_QUERY, &a, AF_INET6,
		      "2001:db8::7", "2001:db8::1", 40001, 0);
	check_message(d[1], DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE, &a, AF_INET6,
		      "2001:db8::7", "2001:db8::1", 40001, 0);
	check_message(d[2], DNSTAP__MESSAGE__TYPE__AUTH_QUERY, &b, AF_INET,
		      "192.0.2.7", "192.0.2.1", 40002, 1);
	check_message(d[3], DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE, &b, AF_INET,
		      "192.0.2.7", "192.0.2.1", 40002, 1);
	free_tap(d, 4);
	unlink(TAP);
}

static void test_sample(void **state)
{
	const char *const kv[] = { "dnstap_sample", "3",      names[0],
				   names[1],	    names[2], names[3] };
	Dnstap__Dnstap *d[16];
	struct asked a;
	size_t n;
	int i;

	(void)state;
	start(kv, 3);
	for (i = 0; i < 9; i++)
		ask(0, AF_INET, "192.0.2.7", "192.0.2.1", 40003,
		    RR_TRANSPORT_UDP, (uint16_t)i, &a);
	assert_int_equal(counter("dnstap_messages"), 6);
	stop();
	n = read_tap(d, 16);
	assert_int_equal(n, 6);
	/* The first query of each three: IDs 0, 3, 6. */
	for (i = 0; i < 6; i++)
		assert_int_equal(d[i]->message->type,
				 i % 2 ? DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE
				       : DNSTAP__MESSAGE__TYPE__AUTH_QUERY);
	assert_int_equal(d[2]->message->query_message.data[1], 3);
	assert_int_equal(d[4]->message->query_message.data[1], 6);
	free_tap(d, n);
	unlink(TAP);
}

static void test_tap(void **state)
{
	const char *const kv[] = { "dnstap_sample", "5",      names[0],
				   names[1],	    names[2], names[3] };
	static const char extra[] =
		"reqrouter: answered in XDP by the reply cache";
	struct rr_tap_answer t = { 0 };
	struct rr_request req = { 0 };
	uint64_t main_counters[RR_FN_MAX_COUNTERS] = { 0 };
	Dnstap__Dnstap *d[6];
	struct asked a;
	int i;

	(void)state;
	start(kv, 3);
	assert_non_null(inst->tap);
	assert_int_equal(inst->tap_sample, 5);
	/* A query and its answer as the cache sent them. */
	a.qlen = query(a.q, 0xbeef);
	memcpy(a.r, a.q, a.qlen);
	req.family = AF_INET;
	inet_pton(AF_INET, "192.0.2.9", &req.src);
	inet_pton(AF_INET, "192.0.2.1", &req.dst);
	req.src_port = 40009;
	req.dst_port = 53;
	rr_fn_request_bind(&req, inst, 0, counters[0]);
	a.rlen = fn->handler(&req, a.r, a.qlen, sizeof(a.r));
	assert_true(a.rlen > 0);
	req.worker_state = NULL;
	req.counters = main_counters;
	clock_gettime(CLOCK_REALTIME, &a.before);
	t.req = &req;
	t.query = a.q;
	t.query_len = a.qlen;
	t.reply = a.r;
	t.reply_len = (size_t)a.rlen;
	t.arrival_ns = ns_ts(&a.before);
	clock_gettime(CLOCK_REALTIME, &a.after);
	t.sent_ns = ns_ts(&a.after);
	t.from = RR_TAP_CACHE;
	inst->tap(inst->tap_arg, &t);
	stop();
	/* The handler's call (the worker's first query is sampled), then
	 * the tap's, which says where it was answered. */
	assert_int_equal(read_tap(d, 6), 4);
	assert_false(d[0]->has_extra || d[1]->has_extra);
	check_message(d[2], DNSTAP__MESSAGE__TYPE__AUTH_QUERY, &a, AF_INET,
		      "192.0.2.9", "192.0.2.1", 40009, 0);
	check_message(d[3], DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE, &a, AF_INET,
		      "192.0.2.9", "192.0.2.1", 40009, 0);
	for (i = 2; i < 4; i++)
		assert_true(
			d[i]->has_extra &&
			d[i]->extra.len == sizeof(extra) - 1 &&
			!memcmp(d[i]->extra.data, extra, sizeof(extra) - 1));
	/* Counted in the counters the tap was given. */
	for (i = 0; i < (int)ctrs.n; i++)
		if (!strcmp(ctrs.name[i], "dnstap_messages"))
			assert_int_equal(main_counters[i], 2);
	free_tap(d, 4);
	unlink(TAP);
}

/* The ring's first words (dnstap.c, struct dnstap_ring): its head, and
 * 64 bytes in its tail. */
static uint64_t *head_of(void *ring)
{
	return ring;
}

static uint64_t tail_of(void *ring)
{
	return __atomic_load_n((uint64_t *)ring + 8, __ATOMIC_ACQUIRE);
}

/* Waits (at most 2 s) until the drain thread took all of @ring. */
static void drained(void *ring)
{
	int i;

	for (i = 0; i < 2000 && tail_of(ring) != *head_of(ring); i++)
		usleep(1000);
	assert_int_equal(tail_of(ring), *head_of(ring));
}

static void test_scribbled_ring(void **state)
{
	Dnstap__Dnstap *d[8];
	struct asked a, b;
	void *ring;

	(void)state;
	start(names, 2);
	ring = inst->worker_state[0];
	ask(0, AF_INET, "192.0.2.7", "192.0.2.1", 40004, RR_TRANSPORT_UDP, 1,
	    &a);
	drained(ring);
	/* A record of garbage published: the drain thread drops what the
	 * ring holds, and goes on. */
	memset((uint8_t *)ring + 192 + (*head_of(ring) & ((1U << 20) - 1)),
	       0x5a, 4096);
	__atomic_store_n(head_of(ring), *head_of(ring) + 4096,
			 __ATOMIC_RELEASE);
	drained(ring);
	/* Padding to the ring's end published as 8 bytes: the drain thread
	 * does not follow it past the head. */
	memset((uint8_t *)ring + 192 + (*head_of(ring) & ((1U << 20) - 1)),
	       0xff, 8);
	__atomic_store_n(head_of(ring), *head_of(ring) + 8, __ATOMIC_RELEASE);
	drained(ring);
	/* A head beyond any ring: the same. */
	__atomic_store_n(head_of(ring), *head_of(ring) + (1ULL << 40),
			 __ATOMIC_RELEASE);
	drained(ring);
	ask(0, AF_INET, "192.0.2.7", "192.0.2.1", 40004, RR_TRANSPORT_UDP, 2,
	    &b);
	stop();
	assert_int_equal(read_tap(d, 8), 4);
	check_message(d[0], DNSTAP__MESSAGE__TYPE__AUTH_QUERY, &a, AF_INET,
		      "192.0.2.7", "192.0.2.1", 40004, 0);
	check_message(d[3], DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE, &b, AF_INET,
		      "192.0.2.7", "192.0.2.1", 40004, 0);
	free_tap(d, 4);
	unlink(TAP);
}

static int setup(void **state)
{
	(void)state;
	fn = rr_registry_find("dns");
	assert_non_null(fn);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_tap),
		cmocka_unit_test(test_scribbled_ring),
	};

	return cmocka_run_group_tests_name("dnstap", tests, setup, NULL);
}
