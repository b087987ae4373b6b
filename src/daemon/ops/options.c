// SPDX-License-Identifier: GPL-2.0
/*
 * Command-line options. They are the flags of the settings table
 * (src/lib/settings.c): the getopt string, the long options and the
 * --help text (docs/CONFIGURATION.md reproduces it; a test checks) are all
 * generated from its rows, and each flag's value goes through its row.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <ini.h>

#include "module.h"
#include "options.h"
#include "parse.h"
#include "opttable.h"
#include "settings.h"
#include "util.h"
#include "version.h"

/* getopt's value for a row without a letter: OPT_ROW + its index. */
#define OPT_ROW 256
/* --dump-settings readme|readme-function|man|completion|conf|conf-man:
 * what the drift test compares with docs/CONFIGURATION.md,
 * man/reqrouter.h2m, the bash completion, configs/reqrouter.conf and
 * man/reqrouter.conf.5; --help leaves it out. */
#define OPT_DUMP (RR_OPT_VERSION - 1)
#define MAX_OPTS 64

static struct rr_opt rr_options[MAX_OPTS];
static char rr_option_help[MAX_OPTS][RR_SETTING_HELP_MAX];

/* The option table: the settings' flags in the table's order, then the
 * entries every program has. Built once; NULL if the table outgrew it. */
static const struct rr_opt *options(void)
{
	static const struct rr_opt tail[] = {
		{ "dump-settings", OPT_DUMP, "WHAT", NULL },
		RR_OPT_VERSION_ENTRY,
		RR_OPT_HELP_ENTRY,
	};
	static size_t n;
	const struct rr_setting *s;
	size_t i;

	if (n)
		return rr_options;
	if (rr_nsettings + ARRAY_SIZE(tail) >= MAX_OPTS)
		return NULL;
	for (i = 0; i < rr_nsettings; i++) {
		s = &rr_settings[i];
		if (!s->flag)
			continue;
		rr_setting_help(s, rr_option_help[n],
				sizeof(rr_option_help[n]));
		rr_options[n] = (struct rr_opt){ s->flag,
						 s->letter ? s->letter
							   : OPT_ROW + (int)i,
						 s->arg, rr_option_help[n] };
		n++;
	}
	for (i = 0; i < ARRAY_SIZE(tail); i++)
		rr_options[n++] = tail[i];
	rr_options[n] = (struct rr_opt){ 0 };
	return rr_options;
}

/* The row of getopt's @key, or NULL. */
static const struct rr_setting *row_of(int key)
{
	size_t i;

	if (key >= OPT_ROW && (size_t)(key - OPT_ROW) < rr_nsettings)
		return &rr_settings[key - OPT_ROW];
	for (i = 0; i < rr_nsettings; i++)
		if (rr_settings[i].flag && rr_settings[i].letter == key)
			return &rr_settings[i];
	return NULL;
}

void rr_options_usage(FILE *out)
{
	rr_opt_usage(out, "reqrouter -i IFACE [options]",
		     "Serve the registered UDP functions on IFACE over AF_XDP.",
		     options());
}

static int dump(const char *what, char *err, size_t errlen)
{
	if (!strcmp(what, "readme"))
		rr_settings_dump_readme(stdout);
	else if (!strcmp(what, "readme-function"))
		rr_fn_settings_dump_readme(stdout);
	else if (!strcmp(what, "man"))
		rr_settings_dump_man(stdout);
	else if (!strcmp(what, "completion"))
		rr_settings_dump_completion(stdout);
	else if (!strcmp(what, "conf"))
		rr_settings_dump_conf(stdout);
	else if (!strcmp(what, "conf-man"))
		rr_settings_dump_conf_man(stdout);
	else
		return rr_errf(
			err, errlen,
			"--dump-settings takes readme, readme-function, man, completion, conf or conf-man");
	return RR_OPTS_EXIT;
}

/* functions_dir from the config file, read ahead of the rest. */
static int peek_key(void *user, const char *section, const char *key,
		    const char *val)
{
	char *dir = user;

	if (!strcmp(section, "reqrouter") && !strcmp(key, "functions_dir"))
		snprintf(dir, PATH_MAX, "%s", val);
	return 1;
}

/*
 * Modules come first: the config's [function NAME] sections and -p may
 * name their functions. The flag wins over the file; a directory is
 * loaded once per process.
 */
static int load_modules(const char *flag_dir, const char *config_file,
			char *err, size_t errlen)
{
	static char loaded[PATH_MAX];
	char dir[PATH_MAX] = "";

	if (flag_dir)
		snprintf(dir, sizeof(dir), "%s", flag_dir);
	else if (config_file)
		ini_parse(config_file, peek_key, dir); /* errors: later */
	if (!dir[0] || !strcmp(dir, loaded))
		return 0;
	snprintf(loaded, sizeof(loaded), "%s", dir);
	return rr_modules_load_dir(dir, err, errlen);
}

int rr_options_parse(int argc, char **argv, struct rr_config *cfg, char *err,
		     size_t errlen)
{
	const struct rr_setting *dir_row = rr_setting_by_key("functions_dir");
	const char *config_file = NULL, *functions_dir = NULL,
		   *dump_what = NULL;
	const struct rr_opt *t = options();
	int key, ret, help = 0, native = 0, skb = 0;
	char shortopts[RR_OPT_SHORT_LEN(MAX_OPTS)];
	struct option longopts[MAX_OPTS];

	if (!t)
		return rr_errf(err, errlen,
			       "too many settings for the options");
	rr_opt_build(t, shortopts, longopts);

	/* Pass 1: syntax, --help and the config file. */
	opterr = 0;
	optind = 0;
	while ((key = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	       -1) {
		if (key == '?' || key == ':') {
			rr_opt_error(key, argv, err, errlen);
			return -EINVAL;
		}
		if (key == 'h')
			help = 1;
		if (key == RR_OPT_VERSION && !help)
			help = 2;
		if (key == OPT_DUMP)
			dump_what = optarg;
		native |= key == 'N';
		skb |= key == 'S';
		if (key == 'c')
			config_file = optarg;
		if (row_of(key) == dir_row)
			functions_dir = optarg;
	}
	if (help == 1) {
		rr_options_usage(stdout);
		return RR_OPTS_EXIT;
	}
	if (help == 2) {
		printf("reqrouter %s\n", RR_VERSION);
		return RR_OPTS_EXIT;
	}
	if (dump_what)
		return dump(dump_what, err, errlen);
	if (native && skb)
		return rr_errf(err, errlen, "-N and -S exclude each other");
	if (optind < argc)
		return rr_errf(err, errlen, "unexpected argument '%s'",
			       argv[optind]);
	/* The modules are loaded before the rest is read: check the flag
	 * as its pass-2 self would, not after the fact. */
	if (functions_dir &&
	    rr_setting_check(dir_row, functions_dir, true, err, errlen))
		return -EINVAL;
	ret = load_modules(functions_dir, config_file, err, errlen);
	if (!ret)
		ret = rr_config_init(cfg, err, errlen);
	if (ret)
		return ret;
	if (config_file) {
		ret = rr_config_load(cfg, config_file, err, errlen);
		if (ret)
			return ret;
	}

	/* Pass 2: the flags, over the file, each through its row. */
	optind = 0;
	while ((key = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	       -1) {
		const struct rr_setting *s = row_of(key);

		if (!s)
			continue;
		cfg->key_line[s - rr_settings] = 0; /* the flag's now */
		ret = rr_setting_set(s, cfg, optarg, true, err, errlen);
		if (ret)
			return ret;
	}

	if (!cfg->list && !cfg->ifname[0])
		return rr_errf(err, errlen,
			       "no interface given: use -i IFACE (see --help)");
	/* --list finishes the config itself (main.c), to list what is
	 * built in even where it could not run. */
	if (cfg->list)
		return RR_OPTS_RUN;
	ret = rr_config_finish(cfg, err, errlen);
	return ret ? ret : RR_OPTS_RUN;
}
