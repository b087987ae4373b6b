// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the hash function: "ROUNDS DATA" gets the 16 lowercase
 * hex digits of FNV-1a 64 over DATA written ROUNDS times in a row, for
 * known vectors and against a plain reference that hashes the repeated
 * bytes once; DATA may hold any byte; every malformed request (no digit
 * first, no space after the digits, 0 rounds, more than 4096 or more than
 * 4 digits) is unanswered and counted as hash_invalid; a room under 16
 * bytes is -EMSGSIZE; the function is pure, on port 9012, takes no
 * settings and is off until configured.
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
#include "registry.h"
#include "testutil.h"
#include "util.h"

#define REPLY_LEN 16
#define MAX_ROUNDS 4096

/* Counter order, as hash.c registers them. */
enum { C_INVALID, C_N };

struct fixture {
	const struct rr_function *fn;
	struct rr_fn_counters ctrs;
	struct rr_fn_instance *inst;
	uint64_t counters[RR_FN_MAX_COUNTERS];
	struct rr_request req;
	char err[RR_ERRLEN];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->fn = rr_registry_find("hash");
	assert_non_null(f->fn);
	f->req.family = AF_INET;
	assert_int_equal(rr_fn_instance_new(f->fn, f->fn->port, NULL, 0, 1,
					    &f->ctrs, &f->inst, f->err,
					    sizeof(f->err)),
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

/* Sends @len bytes of @req in a buffer of @room bytes; returns the
 * handler's result, the reply in @out (NUL-terminated) if any. */
static int ask_n(struct fixture *f, const void *req, size_t len, size_t room,
		 char *out)
{
	static uint8_t buf[8192];
	int ret;

	assert_true(room <= sizeof(buf) && len <= room);
	memcpy(buf, req, len);
	ret = f->fn->handler(&f->req, buf, len, room);
	if (out && ret >= 0) {
		memcpy(out, buf, (size_t)ret);
		out[ret] = '\0';
	}
	return ret;
}

static int ask(struct fixture *f, const char *req, char *out)
{
	return ask_n(f, req, strlen(req), 1472, out);
}

/* FNV-1a 64, the plain way: once over @len bytes. */
static uint64_t fnv1a64(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* "@head" then @dlen bytes of @data must get the hash of @data written
 * @rounds times in a row, as 16 lowercase hex digits. */
static void expect_rounds(struct fixture *f, const char *head,
			  const uint8_t *data, size_t dlen, unsigned int rounds)
{
	size_t hlen = strlen(head), i;
	uint8_t *req, *rep;
	char out[64], want[32];
	int ret;

	req = malloc(hlen + dlen);
	rep = malloc(dlen * rounds + 1);
	assert_non_null(req);
	assert_non_null(rep);
	memcpy(req, head, hlen);
	memcpy(req + hlen, data, dlen);
	for (i = 0; i < rounds; i++)
		memcpy(rep + i * dlen, data, dlen);
	snprintf(want, sizeof(want), "%016llx",
		 (unsigned long long)fnv1a64(rep, dlen * rounds));
	ret = ask_n(f, req, hlen + dlen, 1472, out);
	if (ret != REPLY_LEN || strcmp(out, want))
		fail_msg("'%s' and %zu bytes: %d '%s', want '%s'", head, dlen,
			 ret, ret >= 0 ? out : "", want);
	free(req);
	free(rep);
}

static void test_registered(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->fn->port, 9012);
	assert_true(f->fn->flags & RR_FN_OPT_IN);
	assert_true(f->fn->flags & RR_FN_PURE);
	assert_int_equal(f->fn->id_bytes, 0);
	assert_int_equal(f->ctrs.n, C_N);
	assert_string_equal(f->ctrs.name[C_INVALID], "hash_invalid");
}

/* Published FNV-1a 64 values, and the same after more rounds. */
static void test_vectors(void **state)
{
	static const struct {
		const char *req, *reply;
	} v[] = {
		{ "1 ", "cbf29ce484222325" },
		{ "1 a", "af63dc4c8601ec8c" },
		{ "1 foobar", "85944171f73967e8" },
		/* No DATA: the offset basis, however many rounds. */
		{ "9 ", "cbf29ce484222325" },
		{ "4096 ", "cbf29ce484222325" },
		/* "aa", "abcabcabc", 4096 x "hello world". */
		{ "2 a", "089c4307b54596b7" },
		{ "3 abc", "d328b56182a25b1b" },
		{ "4096 hello world", "5df1c9ce5b1ca325" },
		/* Leading zeros count for nothing. */
		{ "0002 a", "089c4307b54596b7" },
		{ "03 abc", "d328b56182a25b1b" },
	};
	struct fixture *f = *state;
	char out[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		if (ask(f, v[i].req, out) != REPLY_LEN)
			fail_msg("'%s' not answered in 16 bytes", v[i].req);
		if (strcmp(out, v[i].reply))
			fail_msg("'%s' got '%s', want '%s'", v[i].req, out,
				 v[i].reply);
	}
	assert_int_equal(f->counters[C_INVALID], 0);
}

/* Any rounds and any DATA, against the reference over the repeated
 * bytes: the state goes on from one round to the next. */
static void test_rounds(void **state)
{
	static const unsigned int rounds[] = { 1, 2, 3, 7, 64, 999, 4096 };
	struct fixture *f = *state;
	uint8_t data[300];
	char head[16];
	size_t i, r;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 37 + 11); /* every byte value */
	for (r = 0; r < ARRAY_SIZE(rounds); r++) {
		snprintf(head, sizeof(head), "%u ", rounds[r]);
		expect_rounds(f, head, data, 1, rounds[r]);
		expect_rounds(f, head, data, 128, rounds[r]);
		expect_rounds(f, head, data, 129, rounds[r]);
		if (rounds[r] < 100)
			expect_rounds(f, head, data, sizeof(data), rounds[r]);
	}
	/* DATA that holds spaces, digits, NUL and 0xff, or starts with a
	 * space: all of it is DATA. */
	expect_rounds(f, "5 ", (const uint8_t *)" 12 \0\xff x", 8, 5);
	expect_rounds(f, "0005 ", (const uint8_t *)"  ", 2, 5);
	expect_rounds(f, "1 ", (const uint8_t *)"4096 x", 6, 1);
	assert_int_equal(f->counters[C_INVALID], 0);
}

/* The reply is the 16 digits alone, nothing of the request after them. */
static void test_reply_shape(void **state)
{
	struct fixture *f = *state;
	char out[64];
	int i;

	assert_int_equal(ask(f, "17 a longer request than the reply", out),
			 REPLY_LEN);
	assert_int_equal(strlen(out), REPLY_LEN);
	for (i = 0; i < REPLY_LEN; i++)
		if (!strchr("0123456789abcdef", out[i]))
			fail_msg("'%s' is no lowercase hex", out);
}

/* What is no request: unanswered, counted, whatever the room. */
static void test_invalid(void **state)
{
	static const char *const bad[] = {
		"",	  "a",	    " 1 a",  "1",	"12",	   "4096",
		"1x a",	  "1\ta",   "1\n",   "1_",	"0 a",	   "0 ",
		"0000 a", "4097 a", "9999 ", "00001 a", "12345 a", "10000 a",
		"-1 a",	  "+1 a",   "x1 a",
	};
	struct fixture *f = *state;
	char out[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (ask(f, bad[i], out) != RR_NO_REPLY)
			fail_msg("'%s' was answered: '%s'", bad[i], out);
	/* A NUL first. */
	assert_int_equal(ask_n(f,
			       "\0"
			       "1 a",
			       4, 64, out),
			 RR_NO_REPLY);
	/* Invalid comes before room: still no reply, not -EMSGSIZE. */
	assert_int_equal(ask_n(f, "0 a", 3, 3, out), RR_NO_REPLY);
	assert_int_equal(f->counters[C_INVALID], ARRAY_SIZE(bad) + 2);
	/* The bounds themselves are requests. */
	assert_int_equal(ask(f, "4096 a", out), REPLY_LEN);
	assert_int_equal(ask(f, "0001 a", out), REPLY_LEN);
	assert_int_equal(ask(f, "1 ", out), REPLY_LEN);
	assert_int_equal(f->counters[C_INVALID], ARRAY_SIZE(bad) + 2);
}

/* Under 16 bytes of room (the amplification limit): -EMSGSIZE. */
static void test_room(void **state)
{
	struct fixture *f = *state;
	char out[64];

	assert_int_equal(ask_n(f, "1 a", 3, 15, out), -EMSGSIZE);
	assert_int_equal(ask_n(f, "1 a", 3, 16, out), REPLY_LEN);
	assert_string_equal(out, "af63dc4c8601ec8c");
	assert_int_equal(f->counters[C_INVALID], 0);
}

/* Without init (the tools' bare calls): the same replies, no counters. */
static void test_no_state(void **state)
{
	const struct rr_function *fn = ((struct fixture *)*state)->fn;
	struct rr_request req = { .family = AF_INET };
	uint8_t buf[64] = "1 a";

	rr_fn_request_bind(&req, NULL, 0, NULL);
	assert_int_equal(fn->handler(&req, buf, 3, sizeof(buf)), REPLY_LEN);
	assert_memory_equal(buf, "af63dc4c8601ec8c", REPLY_LEN);
	memcpy(buf, "0 a", 3);
	assert_int_equal(fn->handler(&req, buf, 3, sizeof(buf)), RR_NO_REPLY);
	assert_int_equal(fn->handler(&req, buf, 0, sizeof(buf)), RR_NO_REPLY);
}

/* No settings: any key is refused, in one line that names it. */
static void test_settings(void **state)
{
	struct fixture *f = *state;
	struct rr_fn_setting s = { "rounds", "5", "test.conf", 3 };
	struct rr_fn_instance *inst = NULL;

	assert_int_equal(rr_fn_instance_new(f->fn, 9012, &s, 1, 1, NULL, &inst,
					    f->err, sizeof(f->err)),
			 -EINVAL);
	assert_null(inst);
	if (!strstr(f->err,
		    "test.conf:3: function hash: unknown key 'rounds' (hash takes no settings)"))
		fail_msg("unknown key: error \"%s\"", f->err);
	assert_null(strchr(f->err, '\n'));
}

/* Off until configured: a function that burns CPU on request. */
static void test_config(void **state)
{
	(void)state;
	assert_int_equal(t_check_opt_in("hash", 9012,
					"[function hash]\nenabled = yes\n", 0),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_registered, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_vectors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_shape, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_room, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
