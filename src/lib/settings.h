/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reqrouter's own settings as one typed table: each row names the
 * [reqrouter] key, the flag, the type and its limits, the default, the
 * unit and the help once. The config file's parser, getopt and --help
 * (src/daemon/ops/options.c), docs/CONFIGURATION.md's and the man page's tables
 * and the bash completion all come from it, so a flag and its key accept
 * exactly the same values. Adding a setting is one row here and its use
 * where it is read. The [function NAME] keys are a second table of the
 * same rows.
 */
#ifndef RR_SETTINGS_H
#define RR_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

enum rr_setting_type {
	RR_SETTING_U32,	   /* a number from min to max */
	RR_SETTING_BOOL,   /* key: yes/no; flag: a switch that sets it */
	RR_SETTING_STRING, /* not empty, shorter than its field */
	RR_SETTING_ENUM,   /* one of names[], stored as its index */
	RR_SETTING_CHOICE, /* flag only, a switch: the enum field := def */
	RR_SETTING_COUNT,  /* flag only, a switch counted each time given */
	RR_SETTING_CPUS,   /* a CPU list, "0-3,6", into the field and count */
	RR_SETTING_PORTS,  /* a port list, "7,1232", into the field and count */
	RR_SETTING_CIDRS,  /* an allow-list, appended to the field and count */
	RR_SETTING_VLANS,  /* "host", "any" or VLAN IDs: struct rr_vlans */
	RR_SETTING_NONE,   /* flag only, read by the command line itself */
};

/* What the completion offers as a flag's value. */
enum rr_setting_complete {
	RR_COMPLETE_NONE, /* the user's own (a number, a list, an address) */
	RR_COMPLETE_FILE,
	RR_COMPLETE_DIR,
	RR_COMPLETE_IFACE,
	RR_COMPLETE_USER,
	RR_COMPLETE_GROUP,
};

/* Checks a string's form beyond empty and length: 0 or -EINVAL after one
 * sentence in @err. */
typedef int (*rr_setting_check_fn)(const char *s, char *err, size_t errlen);

struct rr_setting {
	const char *key;  /* in [reqrouter]; NULL: a flag only */
	const char *flag; /* long flag; NULL: a key only */
	char letter;	  /* short flag, or 0 */
	const char *arg;  /* the flag's metavariable; NULL: a switch */
	enum rr_setting_type type;
	size_t off;	   /* the field in struct rr_config or rr_service */
	size_t size;	   /* its size (a string's room, with the NUL) */
	size_t count;	   /* a list's count field, a --tier's "was given" */
	uint32_t min, max; /* a number's range, a list's room */
	uint32_t def;	   /* a number's or an enum's default */
	const char *const *names; /* an enum's values, NULL-terminated */
	const char *unit;	  /* of a number, or NULL */
	const char *def_text;	  /* default in words, instead of def */
	rr_setting_check_fn check;
	enum rr_setting_complete complete;
	/* A reload applies a change of it while serving (src/daemon/slots/reload.c); any
	 * other key's change needs a restart. */
	bool live;
	/* A string whose repeated lines add up, separated by spaces. */
	bool append;
	const char *help;
};

extern const struct rr_setting rr_settings[];
extern const size_t rr_nsettings;

/* The keys of a [function NAME] section that are reqrouter's, in the
 * same style: keys only, fields of struct rr_service. */
extern const struct rr_setting rr_fn_settings[];
extern const size_t rr_fn_nsettings;

/* The row of [reqrouter] key @key, or NULL. */
const struct rr_setting *rr_setting_by_key(const char *key);

/* The row of [function NAME] key @key, or NULL. */
const struct rr_setting *rr_fn_setting_by_key(const char *key);

/* The defaults of every row into @cfg, and into @svc (whose fn is set). */
void rr_settings_defaults(struct rr_config *cfg);
void rr_fn_settings_defaults(struct rr_service *svc);

/*
 * Parses @val (NULL for a switch) for row @s into @base (the struct
 * rr_config, or for a function's row its struct rr_service), from the file
 * (@as_flag false: errors name the key) or the command line (errors name
 * the flag). Same row, same rules: 0, or -EINVAL with one sentence.
 */
int rr_setting_set(const struct rr_setting *s, void *base, const char *val,
		   bool as_flag, char *err, size_t errlen);

/* Checks a string row's value without storing it (a flag read early). */
int rr_setting_check(const struct rr_setting *s, const char *val, bool as_flag,
		     char *err, size_t errlen);

/* The values row @s takes, in words ("1-256", "auto, soft or offload"). */
void rr_setting_value_text(const struct rr_setting *s, char *buf, size_t len);
/* Its default in words, or "" where there is none worth saying. */
void rr_setting_default_text(const struct rr_setting *s, char *buf, size_t len);

/* The --help line of row @s: its help, the range or values, the default. */
void rr_setting_help(const struct rr_setting *s, char *buf, size_t len);
/* The room --help gives each option's line of rr_setting_help(). */
#define RR_SETTING_HELP_MAX 320

/* docs/CONFIGURATION.md's table of [reqrouter] keys (Markdown), and of a
 * function's. */
void rr_settings_dump_readme(FILE *f);
void rr_fn_settings_dump_readme(FILE *f);
/* The man page's list of them (roff, for man/reqrouter.h2m). */
void rr_settings_dump_man(FILE *f);
/* The bash completion's case over reqrouter's flags that take a value. */
void rr_settings_dump_completion(FILE *f);
/* configs/reqrouter.conf: every key of both tables, commented out under
 * its help; and its man page, reqrouter.conf(5) (settings_doc.c). */
void rr_settings_dump_conf(FILE *f);
void rr_settings_dump_conf_man(FILE *f);

#endif /* RR_SETTINGS_H */
