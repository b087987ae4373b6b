// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the function API's lifecycle (API 2): settings from a
 * function's section reach its init() with file and line, a function
 * refuses what it does not know in one line that names them, per-worker
 * state and counters are made and undone, opt-in functions stay off until
 * configured, RR_NO_REPLY is counted as its own reason, memory from
 * rr_fn_shared_alloc() is shared with forked children (as cells are) and
 * unmapped after fini, and the bundled kv function answers from its table
 * and, where writable, stores and deletes what every worker then reads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "frames.h"
#include "function.h"
#include "function_test.h"
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

/*
 * The handler called directly, as a forked child calls it (no cmocka
 * there): the reply in @out, NUL-terminated; what the handler returned.
 */
static int raw(const struct rr_function *fn, struct rr_fn_instance *inst,
	       const char *payload, char *out, size_t outlen)
{
	struct rr_request ctx = { 0 };
	size_t len = strlen(payload);
	int n;

	if (len >= outlen)
		return -EMSGSIZE;
	memcpy(out, payload, len);
	rr_fn_request_bind(&ctx, inst, 0, NULL);
	n = fn->handler(&ctx, (uint8_t *)out, len, outlen - 1);
	out[n >= 0 ? n : 0] = '\0';
	return n;
}

/* Waits for child @pid; its exit status, or -1 if it did not exit. */
static int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Whether @addr is mapped in this process. */
static int mapped(void *addr)
{
	unsigned char vec;

	return !mincore(addr, 1, &vec);
}

/* A function that counts its calls in shared memory. */
struct share {
	rr_fn_lock_t lock;
	uint64_t calls;
};

static struct share *share_area; /* what the last init() got */

static int share_init(const struct rr_fn_config *c, void **state)
{
	struct share *sh;
	size_t i;

	for (i = 0; i < c->nsettings; i++)
		if (!strcmp(c->settings[i].key, "size0") &&
		    !rr_fn_shared_alloc(c, 0))
			return -EINVAL;
	sh = rr_fn_shared_alloc(c, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	share_area = sh;
	if (sh->calls)
		return rr_fn_error(c, NULL, "shared memory not zeroed");
	for (i = 0; i < c->nsettings; i++)
		if (!strcmp(c->settings[i].key, "fail"))
			return rr_fn_error(c, &c->settings[i], "failing");
	*state = sh;
	return rr_fn_lock_init(&sh->lock);
}

/* Frees nothing: the shared memory is reqrouter's to unmap, after this. */
static void share_fini(void *state)
{
	const struct share *sh = state;

	life.finis++;
	life.worker_inits = (int)sh->calls; /* still readable here */
}

/* The number of calls so far, this one included. */
static int share_handler(const struct rr_request *req, uint8_t *buf, size_t len,
			 size_t room)
{
	struct share *sh = req->state;
	uint64_t n;
	int ret;

	(void)len;
	ret = rr_fn_lock(&sh->lock);
	if (ret < 0)
		return ret;
	n = ++sh->calls;
	rr_fn_unlock(&sh->lock);
	ret = snprintf((char *)buf, room, "%llu", (unsigned long long)n);
	return ret < 0 || (size_t)ret >= room ? -EMSGSIZE : ret;
}

RR_FUNCTION_DEF(rrtest_share, 40004, "test: counts calls in shared memory",
		.handler = share_handler, .init = share_init,
		.fini = share_fini);

/* @n calls of rrtest_share in a child; exits 0 if each got a reply. */
static pid_t share_child(const struct rr_function *fn,
			 struct rr_fn_instance *inst, int n)
{
	char out[64];
	pid_t pid = fork();
	int i;

	assert_true(pid >= 0);
	if (pid)
		return pid;
	for (i = 0; i < n; i++)
		if (raw(fn, inst, "x", out, sizeof(out)) <= 0)
			_exit(1);
	_exit(0);
}

static void test_shared_alloc(void **state)
{
	const struct rr_function *fn = rr_registry_find("rrtest_share");
	struct rr_fn_instance *inst;
	struct share *area;
	char out[64];
	pid_t a, b;

	(void)state;
	memset(&life, 0, sizeof(life));
	assert_int_equal(rr_fn_instance_new(fn, 40004, NULL, 0, 2, NULL, &inst,
					    err, sizeof(err)),
			 0);
	area = share_area;
	assert_int_equal(raw(fn, inst, "x", out, sizeof(out)), 1);
	assert_string_equal(out, "1");

	/* Two children as two cells: every call counted, under the lock,
	 * and seen by the parent. */
	a = share_child(fn, inst, 5000);
	b = share_child(fn, inst, 5000);
	assert_int_equal(reap(a), 0);
	assert_int_equal(reap(b), 0);
	assert_int_equal(raw(fn, inst, "x", out, sizeof(out)), 5);
	assert_string_equal(out, "10002");

	/* A child dies holding the lock: the next taker gets it, told so. */
	a = fork();
	assert_true(a >= 0);
	if (!a) {
		rr_fn_lock(&area->lock);
		_exit(0);
	}
	assert_int_equal(reap(a), 0);
	assert_int_equal(rr_fn_lock(&area->lock), RR_FN_LOCK_RECOVERED);
	rr_fn_unlock(&area->lock);
	assert_int_equal(rr_fn_lock(&area->lock), 0);
	rr_fn_unlock(&area->lock);
	assert_int_equal(raw(fn, inst, "x", out, sizeof(out)), 5);
	assert_string_equal(out, "10003");

	/* fini() still reads it; then it is gone. */
	assert_true(mapped(area));
	rr_fn_instance_free(inst);
	assert_int_equal(life.finis, 1);
	assert_int_equal(life.worker_inits, 10003);
	assert_false(mapped(area));

	/* A failed init(): what it got is unmapped, and fini() not run. */
	load("[function rrtest_share]\nfail = yes\n");
	assert_int_equal(rr_fn_instance_new(fn, 40004,
					    service("rrtest_share")->settings,
					    service("rrtest_share")->nsettings,
					    1, NULL, &inst, err, sizeof(err)),
			 -EINVAL);
	check_one_line(":2: function rrtest_share: failing");
	assert_false(mapped(share_area));
	assert_int_equal(life.finis, 1);
	rr_config_free(&cfg);

	/* Nothing to share: one line. */
	load("[function rrtest_share]\nsize0 = yes\n");
	assert_int_equal(rr_fn_instance_new(fn, 40004,
					    service("rrtest_share")->settings,
					    service("rrtest_share")->nsettings,
					    1, NULL, &inst, err, sizeof(err)),
			 -EINVAL);
	check_one_line("function rrtest_share: shared memory of 0 bytes");
	rr_config_free(&cfg);
}

/* kv with @settings (after its section line) into *inst; 0 or -errno. */
static int kv_with(const char *settings, struct rr_fn_counters *ctrs,
		   struct rr_fn_instance **inst)
{
	const struct rr_function *fn = rr_registry_find("kv");
	struct rr_service *svc;
	char conf[512];
	int ret;

	snprintf(conf, sizeof(conf), "[function kv]\n%s", settings);
	load(conf);
	svc = service("kv");
	ret = rr_fn_instance_new(fn, svc->port, svc->settings, svc->nsettings,
				 1, ctrs, inst, err, sizeof(err));
	rr_config_free(&cfg);
	return ret;
}

/* kv's reply to @payload, through rr_serve_keep(). */
static const char *kv_ask(struct rr_fn_instance *inst, uint64_t *counters,
			  const char *payload)
{
	static char out[2048];
	int n = call(rr_registry_find("kv"), inst, 0, counters, payload, out,
		     sizeof(out));

	if (n < 0)
		snprintf(out, sizeof(out), "<error %d>", n);
	return out;
}

static void test_kv_writable(void **state)
{
	const struct rr_function *fn = rr_registry_find("kv");
	char *table = t_write_file("/tmp/rr-test-fn", "alpha one\nbeta two\n"),
	     settings[256], big[1400], out[64];
	uint64_t counters[RR_FN_MAX_COUNTERS] = { 0 };
	struct rr_fn_counters ctrs = { 0 };
	struct rr_fn_instance *inst;
	rr_fn_lock_t *lock;
	pid_t pid;
	int i;

	(void)state;
	/* Not writable (the default): SET and DEL are keys not there. */
	snprintf(settings, sizeof(settings), "table = %s\n", table);
	assert_int_equal(kv_with(settings, &ctrs, &inst), 0);
	assert_string_equal(kv_ask(inst, counters, "SET alpha new"), "");
	assert_string_equal(kv_ask(inst, counters, "DEL alpha"), "");
	assert_string_equal(kv_ask(inst, counters, "alpha"), "one");
	assert_int_equal(counters[0], 1); /* kv_hits */
	assert_int_equal(counters[1], 2); /* kv_misses */
	assert_int_equal(ctrs.n, 2);	  /* no kv_sets without writes */
	rr_fn_instance_free(inst);

	/* Writable, room for 4 keys. */
	memset(counters, 0, sizeof(counters));
	memset(&ctrs, 0, sizeof(ctrs));
	snprintf(settings, sizeof(settings),
		 "table = %s\nwritable = yes\ncapacity = 4\n", table);
	assert_int_equal(kv_with(settings, &ctrs, &inst), 0);
	assert_int_equal(ctrs.n, 4);
	assert_string_equal(ctrs.name[2], "kv_sets");
	assert_string_equal(ctrs.name[3], "kv_deletes");
	assert_string_equal(kv_ask(inst, counters, "SET gamma three words"),
			    "OK");
	assert_string_equal(kv_ask(inst, counters, "gamma"), "three words");
	assert_string_equal(kv_ask(inst, counters, "SET alpha 1"), "OK");
	assert_string_equal(kv_ask(inst, counters, "alpha"), "1");
	assert_string_equal(kv_ask(inst, counters, "SET delta"), "OK");
	assert_string_equal(kv_ask(inst, counters, "delta"), ""); /* empty */
	assert_string_equal(kv_ask(inst, counters, "SET x y"), "ERR full");
	assert_string_equal(kv_ask(inst, counters, "SET beta 2"), "OK");
	assert_string_equal(kv_ask(inst, counters, "DEL beta"), "OK");
	assert_string_equal(kv_ask(inst, counters, "beta"), "");
	assert_string_equal(kv_ask(inst, counters, "DEL beta"), "OK");
	assert_string_equal(kv_ask(inst, counters, "SET x y"), "OK");
	assert_string_equal(kv_ask(inst, counters, "SET"), ""); /* a key */
	assert_string_equal(kv_ask(inst, counters, "SET "), "ERR no key");
	assert_string_equal(kv_ask(inst, counters, "DEL x y"),
			    "ERR DEL takes a key alone");
	assert_string_equal(kv_ask(inst, counters, "DEL x"), "OK");
	memset(big, 'k', sizeof(big));
	memcpy(big, "SET ", 4);
	big[4 + 256] = '\0';
	assert_string_equal(kv_ask(inst, counters, big), "ERR too long");
	big[4 + 255] = ' '; /* a key of 255 bytes, a value of 1025 */
	big[4 + 256] = 'v';
	big[4 + 256 + 1025] = '\0';
	assert_string_equal(kv_ask(inst, counters, big), "ERR too long");
	big[4 + 256 + 1024] = '\0';
	assert_string_equal(kv_ask(inst, counters, big), "OK");
	big[4 + 255] = '\0';
	assert_int_equal(strlen(kv_ask(inst, counters, big + 4)), 1024);
	memcpy(big, "DEL ", 4);
	assert_string_equal(kv_ask(inst, counters, big), "OK");
	assert_int_equal(counters[2], 6); /* kv_sets */
	assert_int_equal(counters[3], 3); /* kv_deletes */

	/* Many keys come and go: the tombstones are swept. */
	for (i = 0; i < 3000; i++) {
		char req[64];

		snprintf(req, sizeof(req), "SET churn%d %d", i, i);
		assert_string_equal(kv_ask(inst, counters, req), "OK");
		snprintf(req, sizeof(req), "churn%d", i);
		snprintf(out, sizeof(out), "%d", i);
		assert_string_equal(kv_ask(inst, counters, req), out);
		snprintf(req, sizeof(req), "DEL churn%d", i);
		assert_string_equal(kv_ask(inst, counters, req), "OK");
	}
	assert_string_equal(kv_ask(inst, counters, "gamma"), "three words");
	assert_string_equal(kv_ask(inst, counters, "alpha"), "1");

	/* What a forked child (a cell) writes, the parent reads. */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		raw(fn, inst, "SET alpha from a child", out, sizeof(out));
		_exit(strcmp(out, "OK") ? 1 : 0);
	}
	assert_int_equal(reap(pid), 0);
	assert_string_equal(kv_ask(inst, counters, "alpha"), "from a child");

	/* A child dies holding the table's lock (kv's state starts with a
	 * pointer to its shared part, which starts with the lock): the
	 * table still answers, and still knows how full it is. */
	lock = *(rr_fn_lock_t **)inst->state;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		rr_fn_lock(lock);
		_exit(0);
	}
	assert_int_equal(reap(pid), 0);
	assert_string_equal(kv_ask(inst, counters, "gamma"), "three words");
	assert_string_equal(kv_ask(inst, counters, "SET y 1"), "OK");
	assert_string_equal(kv_ask(inst, counters, "SET z 1"), "ERR full");
	rr_fn_instance_free(inst);

	/* Writable without a table: it starts empty. */
	assert_int_equal(kv_with("writable = yes\n", NULL, &inst), 0);
	assert_string_equal(kv_ask(inst, counters, "alpha"), "");
	assert_string_equal(kv_ask(inst, counters, "SET alpha a"), "OK");
	assert_string_equal(kv_ask(inst, counters, "alpha"), "a");
	rr_fn_instance_free(inst);

	/* What it refuses, in one line. */
	assert_int_equal(kv_with("writable = no\n", NULL, &inst), -EINVAL);
	check_one_line("function kv: needs 'table = FILE'");
	snprintf(settings, sizeof(settings), "table = %s\nwritable = maybe\n",
		 table);
	assert_int_equal(kv_with(settings, NULL, &inst), -EINVAL);
	check_one_line(":3: function kv: writable must be yes or no");
	snprintf(settings, sizeof(settings), "table = %s\ncapacity = 0\n",
		 table);
	assert_int_equal(kv_with(settings, NULL, &inst), -EINVAL);
	check_one_line(":3: function kv: capacity must be a number from 1");
	snprintf(settings, sizeof(settings), "table = %s\ncapacity = 1\n",
		 table);
	assert_int_equal(kv_with(settings, NULL, &inst), -EINVAL);
	check_one_line(":2: more keys than capacity = 1");
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
		check_one_line("more than 32 counters");
	}
}

/* The default reply of a gather fits the room it is given (in reqrouter,
 * the amplification limit): the list of the missed is cut to fit, the
 * value and the count never. */
static void test_gather_format(void **state)
{
	uint64_t asked[RR_SG_MAX_TARGETS / 64] = { 0 };
	uint64_t answered[RR_SG_MAX_TARGETS / 64] = { 0 };
	struct rr_gather_result res = {
		.asked = 100,
		.answered = 97,
		.asked_bits = asked,
		.answered_bits = answered,
		.reduce = RR_REDUCE_SUM,
		.value = 97,
	};
	uint8_t buf[512];
	char want[512];
	int n, i;

	(void)state;
	for (i = 0; i < 100; i++)
		asked[i / 64] |= 1ULL << (i % 64);
	memcpy(answered, asked, sizeof(answered));
	answered[0] &= ~(1ULL << 3 | 1ULL << 17 | 1ULL << 55);
	/* room, and the reply; NULL: none fits */
	const struct {
		size_t room;
		const char *reply;
	} cases[] = {
		{ 64, "97 97/100 missed 3,17,55\n" },
		{ 24, "97 97/100 missed 3,...\n" },
		{ 16, "97 97/100\n" },
		{ 10, "97 97/100\n" },
		{ 9, NULL },
	};
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		memset(buf, '#', sizeof(buf));
		n = rr_gather_format(&res, buf, cases[i].room);
		if (!cases[i].reply) {
			assert_int_equal(n, -EMSGSIZE);
			continue;
		}
		assert_int_equal(n, (int)strlen(cases[i].reply));
		assert_memory_equal(buf, cases[i].reply, (size_t)n);
		assert_int_equal(buf[cases[i].room], '#'); /* nothing past */
	}
	/* 40 missed, room enough: the first 32 and ",...". */
	res.answered = 60;
	answered[0] = ~0ULL << 40;
	n = rr_gather_format(&res, buf, sizeof(buf));
	strcpy(want, "97 60/100 missed 0");
	for (i = 1; i < 32; i++)
		sprintf(want + strlen(want), ",%d", i);
	strcat(want, ",...\n");
	assert_int_equal(n, (int)strlen(want));
	assert_memory_equal(buf, want, (size_t)n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings_reach_init),
		cmocka_unit_test(test_init_refuses),
		cmocka_unit_test(test_opt_in),
		cmocka_unit_test(test_kv),
		cmocka_unit_test(test_shared_alloc),
		cmocka_unit_test(test_kv_writable),
		cmocka_unit_test(test_counter_names),
		cmocka_unit_test(test_no_cache),
		cmocka_unit_test(test_gather_format),
	};

	return cmocka_run_group_tests_name("instances", tests, NULL, NULL) |
	       run_settings_tests();
}
