// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the tests/unit/config program (config.c): the settings table.
 * Every [reqrouter] key that has a flag must take exactly the values the
 * flag takes, store the same, and refuse the same with the same sentence
 * (naming the key or the flag), because both go through the same row.
 * The values tried come from the row itself: a number's range and its
 * neighbours, an enum's names, a string at and past its length, empty.
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
#include <ini.h>

#include "config.h"
#include "options.h"
#include "settings.h"
#include "config_test.h"
#include "testutil.h"

/* A second configuration, the flag's, to hold beside the file's. */
static struct rr_config by_flag;
static char flag_err[RR_ERRLEN];

#define MAX_VALUES 16
#define VALUE_LEN 4200

struct values {
	char v[MAX_VALUES][VALUE_LEN];
	int n;
};

static void add(struct values *vs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add(struct values *vs, const char *fmt, ...)
{
	va_list ap;

	assert_true(vs->n < MAX_VALUES);
	va_start(ap, fmt);
	vsnprintf(vs->v[vs->n++], VALUE_LEN, fmt, ap);
	va_end(ap);
}

/* @len characters, a valid form for the row's check where it has one. */
static void add_long(struct values *vs, const struct rr_setting *s, size_t len)
{
	char *v;

	assert_true(vs->n < MAX_VALUES && len < VALUE_LEN);
	v = vs->v[vs->n++];
	memset(v, 'a', len);
	v[len] = '\0';
	if (s->check == rr_check_control)
		v[0] = '/';
}

/* The values worth trying for row @s. */
static void values_of(const struct rr_setting *s, struct values *vs)
{
	size_t i;

	vs->n = 0;
	if (s->complete == RR_COMPLETE_DIR) {
		/* A directory the row takes is loaded from at once (and
		 * once): try only what the row itself refuses. */
		add_long(vs, s, s->size);
		add(vs, "%s", "");
		return;
	}
	add(vs, "x");
	switch (s->type) {
	case RR_SETTING_U32:
		add(vs, "%u", s->min);
		add(vs, "%u", s->max);
		add(vs, "%u", s->max + 1);
		if (s->min)
			add(vs, "%u", s->min - 1);
		add(vs, "-1");
		add(vs, "0x10");
		break;
	case RR_SETTING_ENUM:
		for (i = 0; s->names[i]; i++)
			add(vs, "%s", s->names[i]);
		add(vs, "%s", "AUTO");
		break;
	case RR_SETTING_STRING:
		add_long(vs, s, s->size - 1);
		add_long(vs, s, s->size);
		add_long(vs, s, 150);
		add(vs, "/run/reqrouter/x.sock");
		add(vs, "none");
		add(vs, "127.0.0.1:9464");
		add(vs, "[::1]:80");
		add(vs, "eth0");
		add(vs, "a/b");
		break;
	case RR_SETTING_CPUS:
		add(vs, "0-3,6");
		add(vs, "%u", s->max);
		add(vs, "1,1");
		add(vs, "3-1");
		break;
	default:
		break;
	}
	add(vs, "%s", "");
}

/* Line and file of an INI error: what follows them. */
static const char *sentence(const char *e)
{
	const char *p = strstr(e, ":2: ");

	return p ? p + 4 : e;
}

/* @e, which starts with @from, starting with @to instead. */
static void replaced(const char *e, const char *from, const char *to, char *out,
		     size_t len)
{
	snprintf(out, len, "%s%s", to, e + strlen(from));
}

/* What row @s's key does with @val: through the file where a line can
 * hold it, else through the key's parser, which is the file's. */
static int by_key(const struct rr_setting *s, const char *val)
{
	char text[VALUE_LEN + 64], *path;
	int ret;

	err[0] = '\0';
	if (strlen(s->key) + strlen(val) + 3 > INI_MAX_LINE - 2) {
		assert_int_equal(rr_config_init(&cfg, err, sizeof(err)), 0);
		return rr_setting_set(s, &cfg, val, false, err, sizeof(err));
	}
	snprintf(text, sizeof(text), "[reqrouter]\n%s = %s\n", s->key, val);
	path = t_write_file("/tmp/rr-test-conf", text);
	ret = PARSE("--list", "-c", path);
	unlink(path);
	return ret;
}

static int by_flag_value(const struct rr_setting *s, const char *val)
{
	char opt[64];
	int ret;

	snprintf(opt, sizeof(opt), "--%s", s->flag);
	ret = PARSE("--list", opt, val);
	memcpy(&by_flag, &cfg, sizeof(cfg));
	snprintf(flag_err, sizeof(flag_err), "%s", err);
	return ret;
}

static void test_flag_and_key_agree(void **state)
{
	const struct rr_setting *s;
	struct values *vs = malloc(sizeof(*vs));
	char flagname[48], want[RR_ERRLEN];
	int rf, rk, i;

	(void)state;
	assert_non_null(vs);
	for (s = rr_settings; s < rr_settings + rr_nsettings; s++) {
		if (!s->key || !s->flag || !s->arg)
			continue;
		values_of(s, vs);
		for (i = 0; i < vs->n; i++) {
			const char *v = vs->v[i];

			rf = by_flag_value(s, v);
			rk = by_key(s, v);
			if ((rf == RR_OPTS_RUN) != (rk == RR_OPTS_RUN))
				fail_msg(
					"%s/--%s '%.40s': flag %d (%s), key %d (%s)",
					s->key, s->flag, v, rf, flag_err, rk,
					err);
			if (rf == RR_OPTS_RUN) {
				if (memcmp((char *)&cfg + s->off,
					   (char *)&by_flag + s->off, s->size))
					fail_msg(
						"%s '%.40s': flag and key store different values",
						s->key, v);
				continue;
			}
			/* The same sentence, naming the flag or the key. */
			if (s->letter)
				snprintf(flagname, sizeof(flagname), "-%c (%s)",
					 s->letter, s->flag);
			else if (s->type == RR_SETTING_ENUM)
				snprintf(flagname, sizeof(flagname), "%s",
					 s->flag);
			else
				snprintf(flagname, sizeof(flagname), "--%s",
					 s->flag);
			/* A sentence the row makes names the key or the flag
			 * first; a check's own names neither. */
			if (!strncmp(sentence(err), s->key, strlen(s->key)) &&
			    !strncmp(flag_err, flagname, strlen(flagname)))
				replaced(sentence(err), s->key, flagname, want,
					 sizeof(want));
			else
				snprintf(want, sizeof(want), "%s",
					 sentence(err));
			/* The file's "PATH:LINE: " may have cut its sentence
			 * shorter: compare what it kept. */
			if (strlen(err) == sizeof(err) - 1
				    ? strncmp(want, flag_err, strlen(want))
				    : strcmp(want, flag_err))
				fail_msg(
					"%s '%.40s': the key says \"%s\", the flag \"%s\"",
					s->key, v, sentence(err), flag_err);
			if (strchr(flag_err, '\n') || !flag_err[0])
				fail_msg("%s '%.40s': not one line: \"%s\"",
					 s->key, v, flag_err);
		}
	}
	free(vs);
}

/* A switch sets what its key's "yes" sets. */
static void test_switches_agree(void **state)
{
	const struct rr_setting *s;
	char opt[64];

	(void)state;
	for (s = rr_settings; s < rr_settings + rr_nsettings; s++) {
		if (!s->key || !s->flag || s->arg)
			continue;
		assert_int_equal(s->type, RR_SETTING_BOOL);
		snprintf(opt, sizeof(opt), "--%s", s->flag);
		assert_int_equal(PARSE("--list", opt), RR_OPTS_RUN);
		assert_true(*(bool *)((char *)&cfg + s->off));
		assert_int_equal(by_key(s, "yes"), RR_OPTS_RUN);
		assert_true(*(bool *)((char *)&cfg + s->off));
		assert_int_equal(by_key(s, "no"), RR_OPTS_RUN);
		assert_false(*(bool *)((char *)&cfg + s->off));
	}
}

/* The two drifts the table ended, as a user meets them. */
static void test_former_drifts(void **state)
{
	char *dir = malloc(PATH_MAX + 8), *path;

	(void)state;
	assert_non_null(dir);
	/* a too-long --functions-dir was cut short and loaded; now it is
	 * refused as functions_dir is, in one line */
	dir[0] = '/';
	memset(dir + 1, 'd', PATH_MAX);
	dir[PATH_MAX + 1] = '\0';
	EXPECT_ERROR("--functions-dir is too long", "--list", "--functions-dir",
		     dir);
	assert_int_equal(by_key(rr_setting_by_key("functions_dir"), dir),
			 -EINVAL);
	check_err("functions_dir is too long");
	free(dir);

	/* an empty metrics_file was taken (no metrics); now it is refused
	 * as --metrics-file is */
	EXPECT_ERROR("--metrics-file must not be empty", "--list",
		     "--metrics-file", "");
	path = t_write_file("/tmp/rr-test-conf",
			    "[reqrouter]\nmetrics_file =\n");
	EXPECT_ERROR(":2: metrics_file must not be empty", "--list", "-c",
		     path);
	unlink(path);
}

/* Defaults come from the rows; --help says them, generated. */
static void test_defaults_from_rows(void **state)
{
	const struct rr_setting *batch = rr_setting_by_key("batch");
	char line[320];

	(void)state;
	assert_non_null(batch);
	assert_int_equal(PARSE("--list"), RR_OPTS_RUN);
	assert_int_equal(cfg.batch, batch->def);
	rr_setting_help(batch, line, sizeof(line));
	assert_string_equal(line, "descriptors per batch, 1-256 (default: 64)");
	rr_setting_help(rr_setting_by_key("tx_csum"), line, sizeof(line));
	assert_string_equal(
		line,
		"reply UDP checksums: auto, soft or offload (default: auto)");
	assert_null(rr_setting_by_key("ports")); /* a flag only */
}

/* Every option's --help line fits the room --help gives it, whole. */
static void test_help_fits(void **state)
{
	char line[RR_SETTING_HELP_MAX + 1];
	size_t i;

	(void)state;
	for (i = 0; i < rr_nsettings; i++) {
		if (!rr_settings[i].flag)
			continue;
		rr_setting_help(&rr_settings[i], line, sizeof(line));
		if (strlen(line) >= RR_SETTING_HELP_MAX)
			fail_msg("--%s's help is cut at %d bytes: '%s'",
				 rr_settings[i].flag, RR_SETTING_HELP_MAX - 1,
				 line);
	}
}

int run_settings_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flag_and_key_agree),
		cmocka_unit_test(test_switches_agree),
		cmocka_unit_test(test_former_drifts),
		cmocka_unit_test(test_defaults_from_rows),
		cmocka_unit_test(test_help_fits),
	};

	return cmocka_run_group_tests_name("settings", tests, NULL, NULL);
}
