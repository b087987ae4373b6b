// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the function API's lifecycle (API 2): settings from a
 * function's section reach its init() with file and line, a function
 * refuses what it does not know in one line that names them, per-worker
 * state and counters are made and undone, opt-in functions stay off until
 * configured, RR_NO_REPLY is counted as its own reason, and the bundled
 * kv function answers from its table.
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
#include "frames.h"
#include "function.h"
#include "options.h"
#include "packet.h"
#include "registry.h"
#include "testutil.h"

static struct rr_config cfg; /* large: not on the stack */
static char err[RR_ERRLEN];

/* What the test function's hooks did, to check their order and count. */
static struct {
	int inits, finis, worker_inits, worker_finis;
	char greeting[64];
	unsigned int greeting_line;
} life;

struct greet_state {
	char greeting[64];
	int served; /* counter index */
};

static int greet_init(const struct rr_fn_config *c, void **state)
{
	struct greet_state *g;
	size_t i;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	strcpy(g->greeting, "hello");
	for (i = 0; i < c->nsettings; i++) {
		const struct rr_fn_setting *s = &c->settings[i];

		if (strcmp(s->key, "greeting")) {
			free(g);
			return rr_fn_error(c, s, "unknown key '%s'", s->key);
		}
		if (strlen(s->value) >= sizeof(g->greeting)) {
			free(g);
			return rr_fn_error(c, s, "greeting too long");
		}
		strcpy(g->greeting, s->value);
		life.greeting_line = s->line;
	}
	g->served = rr_fn_counter(c, "greetings", "Greetings sent.");
	if (g->served < 0) {
		int ret = g->served;

		free(g);
		return ret;
	}
	life.inits++;
	strcpy(life.greeting, g->greeting);
	*state = g;
	return 0;
}

static void greet_fini(void *state)
{
	life.finis++;
	free(state);
}

static int greet_worker_init(void *state, uint32_t worker, void **ws)
{
	uint32_t *w = malloc(sizeof(*w));

	(void)state;
	if (!w)
		return -ENOMEM;
	*w = worker;
	*ws = w;
	life.worker_inits++;
	return 0;
}

static void greet_worker_fini(void *state, void *ws)
{
	(void)state;
	life.worker_finis++;
	free(ws);
}

/* "GREETING, PAYLOAD (worker N)"; an empty request gets no reply. */
static int greet_handler(const struct rr_request *req, uint8_t *buf, size_t len,
			 size_t room)
{
	const struct greet_state *g = req->state;
	char out[256];
	int n;

	if (!len)
		return RR_NO_REPLY;
	n = snprintf(out, sizeof(out), "%s, %.*s (worker %u)", g->greeting,
		     (int)len, (const char *)buf,
		     *(const uint32_t *)req->worker_state);
	if (n < 0 || (size_t)n > room)
		return -EMSGSIZE;
	memcpy(buf, out, (size_t)n);
	rr_fn_count(req, g->served, 1);
	return n;
}

RR_FUNCTION_DEF(rrtest_greet, 40001, "test: a greeting from its settings",
		.handler = greet_handler, .init = greet_init,
		.fini = greet_fini, .init_worker = greet_worker_init,
		.fini_worker = greet_worker_fini);

static struct rr_service *service(const char *name)
{
	struct rr_service *svc = rr_config_service_named(&cfg, name);

	if (!svc)
		fail_msg("no service '%s'", name);
	return svc;
}

static void load(const char *text)
{
	char *path = t_write_file("/tmp/rr-test-fn", text);

	assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
	if (rr_config_load(&cfg, path, err, sizeof(err)))
		fail_msg("config refused: %s", err);
	unlink(path);
}

static void check_one_line(const char *what)
{
	if (!strstr(err, what))
		fail_msg("error \"%s\" does not mention \"%s\"", err, what);
	if (strchr(err, '\n'))
		fail_msg("error \"%s\" is more than one line", err);
}

/* Runs the handler as a worker would: through rr_serve_keep(). Returns
 * the reply payload in @out. */
static int call(const struct rr_function *fn, struct rr_fn_instance *inst,
		uint32_t worker, uint64_t *counters, const char *payload,
		char *out, size_t outlen)
{
	uint8_t frame[2048];
	struct rr_request ctx = { .queue = 0, .thread = worker };
	struct frame_layout lay;
	struct rr_pkt pkt;
	int ret;

	assert_true(build_request(frame, sizeof(frame), 5555, fn->port, payload,
				  (uint32_t)strlen(payload), &lay) > 0);
	rr_fn_request_bind(&ctx, inst, worker, counters);
	ret = rr_serve_keep(frame, lay.len, sizeof(frame), 1500, 0, fn, &ctx,
			    NULL, NULL);
	if (ret < 0)
		return ret;
	assert_int_equal(rr_parse(frame, (uint32_t)ret, &pkt), 0);
	assert_true(pkt.payload_len < outlen);
	memcpy(out, frame + pkt.payload_off, pkt.payload_len);
	out[pkt.payload_len] = '\0';
	return (int)pkt.payload_len;
}

static void test_settings_reach_init(void **state)
{
	const struct rr_function *fn = rr_registry_find("rrtest_greet");
	struct rr_fn_counters ctrs = { 0 };
	uint64_t counters[2][RR_FN_MAX_COUNTERS] = { { 0 } };
	struct rr_fn_instance *inst;
	struct rr_service *svc;
	char out[256];

	(void)state;
	memset(&life, 0, sizeof(life));
	load("[function rrtest_greet]\nport = 40002\n\ngreeting = howdy\n");
	svc = service("rrtest_greet");
	assert_int_equal(svc->port, 40002); /* reqrouter's key, not passed */
	assert_int_equal(svc->nsettings, 1);
	assert_int_equal(rr_fn_instance_new(fn, svc->port, svc->settings,
					    svc->nsettings, 2, &ctrs, &inst,
					    err, sizeof(err)),
			 0);
	assert_string_equal(life.greeting, "howdy");
	assert_int_equal(life.greeting_line, 4);
	assert_int_equal(life.worker_inits, 2);
	assert_int_equal(ctrs.n, 1);
	assert_string_equal(ctrs.name[0], "greetings");

	/* Each worker sees its own state; counts go to its own copy. */
	assert_int_equal(
		call(fn, inst, 1, counters[1], "Ann", out, sizeof(out)),
		(int)strlen("howdy, Ann (worker 1)"));
	assert_string_equal(out, "howdy, Ann (worker 1)");
	call(fn, inst, 0, counters[0], "Bo", out, sizeof(out));
	assert_string_equal(out, "howdy, Bo (worker 0)");
	assert_int_equal(counters[0][0], 1);
	assert_int_equal(counters[1][0], 1);

	/* No reply, on purpose: its own reason, not a function error. */
	assert_int_equal(call(fn, inst, 0, counters[0], "", out, sizeof(out)),
			 -RR_DROP_NO_REPLY);
	assert_string_equal(rr_drop_label(RR_DROP_NO_REPLY), "no_reply");

	/* A second instance (a reload) keeps the counter's index. */
	{
		struct rr_fn_instance *again;

		assert_int_equal(rr_fn_instance_new(fn, svc->port, NULL, 0, 2,
						    &ctrs, &again, err,
						    sizeof(err)),
				 0);
		assert_int_equal(ctrs.n, 1);
		assert_string_equal(life.greeting, "hello");
		rr_fn_instance_free(again);
	}
	rr_fn_instance_free(inst);
	assert_int_equal(life.inits, 2);
	assert_int_equal(life.finis, 2);
	assert_int_equal(life.worker_finis, 4);
	rr_config_free(&cfg);
}

static void test_init_refuses(void **state)
{
	const struct rr_function *fn = rr_registry_find("rrtest_greet");
	struct rr_fn_instance *inst = (void *)1;
	struct rr_service *svc;
	char *path;

	(void)state;
	memset(&life, 0, sizeof(life));
	path = t_write_file(
		"/tmp/rr-test-fn",
		"[function rrtest_greet]\ngreeting = hi\ncolour = red\n");
	assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
	assert_int_equal(rr_config_load(&cfg, path, err, sizeof(err)), 0);
	svc = service("rrtest_greet");
	assert_int_equal(rr_fn_instance_new(fn, svc->port, svc->settings,
					    svc->nsettings, 1, NULL, &inst, err,
					    sizeof(err)),
			 -EINVAL);
	assert_null(inst);
	check_one_line("unknown key 'colour'");
	check_one_line("function rrtest_greet");
	{
		char where[96];

		snprintf(where, sizeof(where), "%s:3:", path);
		check_one_line(where);
	}
	/* init failed: nothing to undo, nothing leaked to fini. */
	assert_int_equal(life.finis, 0);
	assert_int_equal(life.worker_inits, 0);
	rr_config_free(&cfg);
	unlink(path);

	/* A function without init() keeps refusing unknown keys itself. */
	path = t_write_file("/tmp/rr-test-fn",
			    "[function echo]\ncolour = red\n");
	assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
	assert_int_equal(rr_config_load(&cfg, path, err, sizeof(err)), -EINVAL);
	check_one_line("unknown key 'colour' in [function echo]");
	rr_config_free(&cfg);
	unlink(path);
}

static void test_opt_in(void **state)
{
	char *argv[4] = { (char *)"reqrouter", (char *)"-i", (char *)"lo",
			  NULL };
	char *table = t_write_file("/tmp/rr-test-fn", "k v\n"), conf[128],
	     *path;

	(void)state;
	/* kv needs a table: off by default, --list says why. */
	assert_int_equal(rr_options_parse(3, argv, &cfg, err, sizeof(err)), 0);
	assert_false(service("kv")->enabled);
	assert_true(service("echo")->enabled);
	rr_config_free(&cfg);

	snprintf(conf, sizeof(conf), "[function kv]\ntable = %s\n", table);
	path = t_write_file("/tmp/rr-test-fn", conf);
	{
		char *argv2[6] = {
			(char *)"reqrouter", (char *)"-i", (char *)"lo",
			(char *)"-c",	     path,	   NULL
		};

		assert_int_equal(
			rr_options_parse(5, argv2, &cfg, err, sizeof(err)), 0);
		assert_true(service("kv")->enabled);
		rr_config_free(&cfg);
	}
	unlink(path);
	unlink(table);
}

static void test_kv(void **state)
{
	const struct rr_function *fn = rr_registry_find("kv");
	char *table =
		     t_write_file("/tmp/rr-test-fn",
				  "# a comment\nalpha one\nbeta two words\n\n"),
	     conf[128], out[256];
	struct rr_fn_counters ctrs = { 0 };
	uint64_t counters[RR_FN_MAX_COUNTERS] = { 0 };
	struct rr_fn_instance *inst;
	struct rr_service *svc;

	(void)state;
	assert_non_null(fn);
	snprintf(conf, sizeof(conf), "[function kv]\ntable = %s\n", table);
	load(conf);
	svc = service("kv");
	assert_int_equal(rr_fn_instance_new(fn, svc->port, svc->settings,
					    svc->nsettings, 1, &ctrs, &inst,
					    err, sizeof(err)),
			 0);
	assert_int_equal(call(fn, inst, 0, counters, "alpha", out, sizeof(out)),
			 3);
	assert_string_equal(out, "one");
	call(fn, inst, 0, counters, "beta", out, sizeof(out));
	assert_string_equal(out, "two words");
	assert_int_equal(call(fn, inst, 0, counters, "gamma", out, sizeof(out)),
			 0);
	assert_int_equal(call(fn, inst, 0, counters, "", out, sizeof(out)),
			 -RR_DROP_NO_REPLY);
	assert_int_equal(counters[0], 2); /* kv_hits */
	assert_int_equal(counters[1], 1); /* kv_misses */
	rr_fn_instance_free(inst);
	rr_config_free(&cfg);

	/* A duplicate key: one line naming the table's line. */
	unlink(table);
	table = t_write_file("/tmp/rr-test-fn", "a 1\na 2\n");
	snprintf(conf, sizeof(conf), "[function kv]\ntable = %s\n", table);
	load(conf);
	svc = service("kv");
	assert_int_equal(rr_fn_instance_new(fn, svc->port, svc->settings,
					    svc->nsettings, 1, NULL, &inst, err,
					    sizeof(err)),
			 -EINVAL);
	check_one_line(":2: key 'a' given twice");
	rr_config_free(&cfg);

	/* A missing table. */
	load("[function kv]\ntable = /nonexistent/kv.txt\n");
	svc = service("kv");
	assert_int_equal(rr_fn_instance_new(fn, svc->port, svc->settings,
					    svc->nsettings, 1, NULL, &inst, err,
					    sizeof(err)),
			 -EINVAL);
	check_one_line("cannot open table /nonexistent/kv.txt");
	rr_config_free(&cfg);
	unlink(table);
}

/* A pure function that keeps one kind of reply out of the cache. */
static int picky(const struct rr_request *req, uint8_t *buf, size_t len,
		 size_t room)
{
	(void)room;
	if (len && buf[0] == 'T')
		rr_fn_no_cache(req);
	return (int)len;
}

RR_FUNCTION_FLAGS(rrtest_picky, 40003, "test: some replies uncacheable", picky,
		  RR_FN_PURE);

static void test_no_cache(void **state)
{
	const struct rr_function *fn = rr_registry_find("rrtest_picky");
	static struct rr_keep keep = { .max = RR_CACHE_MAX_PAYLOAD };
	const char *payloads[2] = { "cache me", "Truncated" };
	uint8_t frame[128];
	struct rr_request ctx = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		size_t plen = strlen(payloads[i]);
		struct frame_layout lay;

		assert_true(build_request(frame, sizeof(frame), 5555, 40003,
					  payloads[i], (uint32_t)plen,
					  &lay) > 0);
		rr_fn_request_bind(&ctx, NULL, 0, NULL);
		assert_true(rr_serve_keep(frame, lay.len, sizeof(frame), 1500,
					  0, fn, &ctx, &keep, NULL) > 0);
		if (i == 0)
			assert_int_equal(keep.len,
					 plen); /* kept for the cache */
		else
			assert_int_equal(keep.len, UINT32_MAX); /* not kept */
	}
}

static void test_counter_names(void **state)
{
	struct rr_fn_counters ctrs = { 0 };
	int i;

	(void)state;
	/* Through a real init: the name rules and the limit. */
	for (i = 0; i < RR_FN_MAX_COUNTERS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%d", i);
		snprintf(ctrs.name[i], sizeof(ctrs.name[i]), "%s", name);
	}
	ctrs.n = RR_FN_MAX_COUNTERS;
	{
		const struct rr_function *fn = rr_registry_find("rrtest_greet");
		struct rr_fn_instance *inst;

		/* "greetings" would be the 17th counter. */
		assert_int_equal(rr_fn_instance_new(fn, 40001, NULL, 0, 1,
						    &ctrs, &inst, err,
						    sizeof(err)),
				 -ENOSPC);
		check_one_line("more than 16 counters");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings_reach_init),
		cmocka_unit_test(test_init_refuses),
		cmocka_unit_test(test_opt_in),
		cmocka_unit_test(test_kv),
		cmocka_unit_test(test_counter_names),
		cmocka_unit_test(test_no_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
