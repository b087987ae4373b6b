// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the sockperf function on hand-built sockperf messages:
 * a client's message that asks for a reply comes back byte for byte with
 * only the CLIENT flag cleared; one that does not (throughput), a warm-up
 * message, another server's message and anything that is no sockperf
 * message get no reply, each counted; the function is off until
 * configured and refuses settings it does not take. The header is built
 * here by hand from sockperf's layout (64-bit sequence number, 16-bit
 * flags, 32-bit length, big-endian, 14 bytes), not from functions/.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "function.h"
#include "options.h"
#include "packet.h"
#include "registry.h"
#include "testutil.h"

#include "frames.h"
#include "util.h"

#define CLIENT 0x1
#define PONG 0x2
#define WARMUP 0x4
#define HDR 14

/* Counter order, as sockperf.c registers them. */
enum { C_SILENT, C_WARMUP, C_INVALID, C_N };

static struct rr_config cfg; /* large: not on the stack */
static char err[RR_ERRLEN];

struct fixture {
	const struct rr_function *fn;
	struct rr_fn_counters ctrs;
	struct rr_fn_instance *inst;
	uint64_t counters[RR_FN_MAX_COUNTERS];
	struct rr_request req;
};

/* A sockperf message of @total bytes into @buf: header, then a payload
 * pattern. @length is the header's length field. */
static void message(uint8_t *buf, size_t total, uint64_t seq, uint16_t flags,
		    uint32_t length)
{
	size_t i;

	for (i = 0; i < 8; i++)
		buf[i] = (uint8_t)(seq >> (56 - 8 * i));
	buf[8] = (uint8_t)(flags >> 8);
	buf[9] = (uint8_t)flags;
	buf[10] = (uint8_t)(length >> 24);
	buf[11] = (uint8_t)(length >> 16);
	buf[12] = (uint8_t)(length >> 8);
	buf[13] = (uint8_t)length;
	for (i = HDR; i < total; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->fn = rr_registry_find("sockperf");
	assert_non_null(f->fn);
	assert_int_equal(rr_fn_instance_new(f->fn, f->fn->port, NULL, 0, 1,
					    &f->ctrs, &f->inst, err,
					    sizeof(err)),
			 0);
	rr_fn_request_bind(&f->req, f->inst, 0, f->counters);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rr_fn_instance_free(f->inst);
	free(f);
	return 0;
}

static int call(struct fixture *f, uint8_t *buf, size_t len, size_t room)
{
	return f->fn->handler(&f->req, buf, len, room);
}

static void test_registered(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->fn->port, 11111); /* sockperf's default */
	assert_true(f->fn->flags & RR_FN_OPT_IN);
	assert_false(f->fn->flags & RR_FN_PURE);
	assert_int_equal(f->ctrs.n, C_N);
	assert_string_equal(f->ctrs.name[C_SILENT], "sockperf_silent");
	assert_string_equal(f->ctrs.name[C_WARMUP], "sockperf_warmup");
	assert_string_equal(f->ctrs.name[C_INVALID], "sockperf_invalid");
}

/* ping-pong: every message comes back, CLIENT cleared, nothing else. */
static void test_pong(void **state)
{
	struct fixture *f = *state;
	static const size_t sizes[] = { HDR, 15, 64, 1472, 4000 };
	uint8_t buf[4096], want[4096];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t n = sizes[i];

		message(buf, n, 0x0102030405060708ULL + i, CLIENT | PONG,
			(uint32_t)n);
		memcpy(want, buf, n);
		want[9] = PONG; /* the server's reply: CLIENT cleared */
		assert_int_equal(call(f, buf, n, sizeof(buf)), (int)n);
		assert_memory_equal(buf, want, n);
	}
	/* Flags the server does not know travel back as they came. */
	message(buf, 64, 42, 0xff00 | CLIENT | PONG | 0x8, 64);
	assert_int_equal(call(f, buf, 64, sizeof(buf)), 64);
	assert_int_equal(buf[8], 0xff);
	assert_int_equal(buf[9], PONG | 0x8);
	assert_int_equal(f->counters[C_SILENT] + f->counters[C_WARMUP] +
				 f->counters[C_INVALID],
			 0);
}

/* throughput / under-load: messages without PONG are not answered. */
static void test_silent(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256], copy[256];

	message(buf, 100, 7, CLIENT, 100);
	memcpy(copy, buf, 100);
	assert_int_equal(call(f, buf, 100, sizeof(buf)), RR_NO_REPLY);
	assert_memory_equal(buf, copy, 100);
	assert_int_equal(f->counters[C_SILENT], 1);

	/* A warm-up message is never answered, PONG or not. */
	message(buf, 100, 0, CLIENT | PONG | WARMUP, 100);
	assert_int_equal(call(f, buf, 100, sizeof(buf)), RR_NO_REPLY);
	message(buf, 100, 0, CLIENT | WARMUP, 100);
	assert_int_equal(call(f, buf, 100, sizeof(buf)), RR_NO_REPLY);
	assert_int_equal(f->counters[C_WARMUP], 2);
	assert_int_equal(f->counters[C_SILENT], 1);
	assert_int_equal(f->counters[C_INVALID], 0);
}

static void test_invalid(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];
	uint64_t n = 0;
	size_t len;

	/* Shorter than the header, down to nothing. */
	for (len = 0; len < HDR; len++) {
		message(buf, HDR, 1, CLIENT | PONG, HDR);
		assert_int_equal(call(f, buf, len, sizeof(buf)), RR_NO_REPLY);
		n++;
	}
	/* Another server's reply (CLIENT clear): a loop if answered. */
	message(buf, 64, 1, PONG, 64);
	assert_int_equal(call(f, buf, 64, sizeof(buf)), RR_NO_REPLY);
	n++;
	/* A length field below the header, or past the datagram. */
	message(buf, 64, 1, CLIENT | PONG, HDR - 1);
	assert_int_equal(call(f, buf, 64, sizeof(buf)), RR_NO_REPLY);
	message(buf, 64, 1, CLIENT | PONG, 65);
	assert_int_equal(call(f, buf, 64, sizeof(buf)), RR_NO_REPLY);
	message(buf, 64, 1, CLIENT | PONG, 0xffffffffu);
	assert_int_equal(call(f, buf, 64, sizeof(buf)), RR_NO_REPLY);
	n += 3;
	assert_int_equal(f->counters[C_INVALID], n);
	assert_int_equal(f->counters[C_SILENT], 0);
}

/* The header's length is the message: a longer datagram is answered with
 * its first message only; a reply that does not fit is -EMSGSIZE. */
static void test_lengths(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256], want[256];

	message(buf, 100, 9, CLIENT | PONG, 40);
	memcpy(want, buf, 40);
	want[9] = PONG;
	assert_int_equal(call(f, buf, 100, sizeof(buf)), 40);
	assert_memory_equal(buf, want, 40);

	message(buf, 100, 9, CLIENT | PONG, 100);
	assert_int_equal(call(f, buf, 100, 99), -EMSGSIZE);
}

/* Without init (the fuzzer and the tools call handlers bare). */
static void test_no_state(void **state)
{
	const struct rr_function *fn = ((struct fixture *)*state)->fn;
	struct rr_request req = { .family = AF_INET };
	uint8_t buf[64];

	rr_fn_request_bind(&req, NULL, 0, NULL);
	message(buf, 64, 3, CLIENT | PONG, 64);
	assert_int_equal(fn->handler(&req, buf, 64, sizeof(buf)), 64);
	message(buf, 64, 3, CLIENT, 64);
	assert_int_equal(fn->handler(&req, buf, 64, sizeof(buf)), RR_NO_REPLY);
	assert_int_equal(fn->handler(&req, buf, 3, sizeof(buf)), RR_NO_REPLY);
}

/* The whole request path: a UDP frame in, the reply frame or the drop. */
static void test_frames(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[64], frame[512];
	struct frame_layout lay;
	struct frame_spec s = { .family = AF_INET6,
				.sport = 40000,
				.dport = 11111,
				.payload = msg,
				.plen = sizeof(msg),
				.csum = CSUM_VALID };
	struct rr_pkt pkt;
	int ret;

	message(msg, sizeof(msg), 77, CLIENT | PONG, sizeof(msg));
	assert_true(build_frame(frame, sizeof(frame), &s, &lay) > 0);
	ret = rr_serve_keep(frame, lay.len, sizeof(frame), 1500, 3, f->fn,
			    &f->req, NULL, NULL);
	assert_true(ret > 0);
	assert_int_equal(rr_parse(frame, (uint32_t)ret, &pkt), 0);
	assert_int_equal(pkt.payload_len, sizeof(msg));
	assert_int_equal(f_get16(frame + pkt.l4_off), 11111);	  /* sport */
	assert_int_equal(f_get16(frame + pkt.l4_off + 2), 40000); /* dport */
	msg[9] = PONG;
	assert_memory_equal(frame + pkt.payload_off, msg, sizeof(msg));

	message(msg, sizeof(msg), 78, CLIENT, sizeof(msg));
	s.family = AF_INET;
	assert_true(build_frame(frame, sizeof(frame), &s, &lay) > 0);
	assert_int_equal(rr_serve_keep(frame, lay.len, sizeof(frame), 1500, 3,
				       f->fn, &f->req, NULL, NULL),
			 -RR_DROP_NO_REPLY);
}

static struct rr_service *service(const char *name)
{
	struct rr_service *svc = rr_config_service_named(&cfg, name);

	if (!svc)
		fail_msg("no service '%s'", name);
	return svc;
}

/* Off until configured; "enabled = yes" alone turns it on. */
static void test_config(void **state)
{
	char *argv[6] = { (char *)"reqrouter", (char *)"-i", (char *)"lo",
			  (char *)"-c",	       NULL,	     NULL };
	const struct rr_function *fn = ((struct fixture *)*state)->fn;
	struct rr_fn_instance *inst;
	struct rr_service *svc;
	char *path;

	assert_int_equal(rr_options_parse(3, argv, &cfg, err, sizeof(err)), 0);
	assert_false(service("sockperf")->enabled);
	rr_config_free(&cfg);

	path = t_write_file("/tmp/rr-test-sockperf",
			    "[function sockperf]\nenabled = yes\n");
	argv[4] = path;
	assert_int_equal(rr_options_parse(5, argv, &cfg, err, sizeof(err)), 0);
	assert_true(service("sockperf")->enabled);
	assert_int_equal(service("sockperf")->port, 11111);
	rr_config_free(&cfg);
	unlink(path);

	/* A key it does not take: one line naming file, line, function. */
	path = t_write_file("/tmp/rr-test-sockperf",
			    "[function sockperf]\nport = 12000\nsize = 64\n");
	assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
	assert_int_equal(rr_config_load(&cfg, path, err, sizeof(err)), 0);
	svc = service("sockperf");
	assert_int_equal(svc->port, 12000);
	assert_int_equal(rr_fn_instance_new(fn, svc->port, svc->settings,
					    svc->nsettings, 1, NULL, &inst, err,
					    sizeof(err)),
			 -EINVAL);
	{
		char want[128];

		snprintf(want, sizeof(want),
			 "%s:3: function sockperf: unknown key 'size'", path);
		if (!strstr(err, want))
			fail_msg("error \"%s\" lacks \"%s\"", err, want);
		assert_null(strchr(err, '\n'));
	}
	rr_config_free(&cfg);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_registered, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pong, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lengths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
