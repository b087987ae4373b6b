// SPDX-License-Identifier: GPL-2.0
/*
 * The documents made from the settings tables (settings.c), each written
 * by `reqrouter --dump-settings WHAT`: docs/CONFIGURATION.md's key
 * tables, reqrouter(8)'s list of keys, the bash completion's values, the
 * reference configs/reqrouter.conf and its man page reqrouter.conf(5).
 * tests/lint/config_drift.sh compares each with what the tree has, so a
 * key added to a table and not to them fails there.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "settings.h"

/* The formats a flag is written in: a short and a long one, a long one. */
struct flag_style {
	const char *both, *lone;
};

static const struct flag_style md_flags = { "`-%c`, `--%s`", "`--%s`" };
/* roff(): every hyphen is a minus to copy and paste. */
static const struct flag_style roff_flags = { "-%c, --%s", "--%s" };

/* "-B, --busy-poll", and for a key set by switches of its own, those. */
static void flags_text(const struct rr_setting *s, const struct flag_style *st,
		       char *buf, size_t len)
{
	const struct rr_setting *o;
	size_t at = 0;

	buf[0] = '\0';
	/* A function's keys have no flags (and their offsets are into
	 * another struct). */
	if (s < rr_settings || s >= rr_settings + rr_nsettings)
		return;
	for (o = rr_settings; o < rr_settings + rr_nsettings && at < len; o++) {
		if (o != s &&
		    (o->type != RR_SETTING_CHOICE || o->off != s->off))
			continue;
		if (!o->flag)
			continue;
		if (at)
			at += (size_t)snprintf(buf + at, len - at, ", ");
		if (at >= len)
			break;
		if (o->letter)
			at += (size_t)snprintf(buf + at, len - at, st->both,
					       o->letter, o->flag);
		else
			at += (size_t)snprintf(buf + at, len - at, st->lone,
					       o->flag);
		if (o->type == RR_SETTING_CHOICE && at < len)
			at += (size_t)snprintf(buf + at, len - at, " (%s)",
					       s->names[o->def]);
	}
}

/* The default of a key as its tables say it. */
static void key_default(const struct rr_setting *s, char *buf, size_t len)
{
	rr_setting_default_text(s, buf, len);
	if (buf[0])
		return;
	if (s->type == RR_SETTING_BOOL)
		snprintf(buf, len, "%s", s->def ? "yes" : "no");
	else
		snprintf(buf, len, "none");
}

/* A Markdown table of table @t's keys; @flags: with a flag column. */
static void dump_table(FILE *f, const struct rr_setting *t, size_t n,
		       bool with_flags)
{
	const struct rr_setting *s;
	char value[128], def[64], flags[160];

	fprintf(f, "| key |%s value | default | meaning |\n",
		with_flags ? " flag |" : "");
	fprintf(f, "|---|%s---|---|---|\n", with_flags ? "---|" : "");
	for (s = t; s < t + n; s++) {
		if (!s->key)
			continue;
		rr_setting_value_text(s, value, sizeof(value));
		key_default(s, def, sizeof(def));
		fprintf(f, "| `%s` |", s->key);
		if (with_flags) {
			flags_text(s, &md_flags, flags, sizeof(flags));
			fprintf(f, " %s |", flags);
		}
		fprintf(f, " %s | %s | %s |\n", value, def, s->help);
	}
}

void rr_settings_dump_readme(FILE *f)
{
	dump_table(f, rr_settings, rr_nsettings, true);
}

void rr_fn_settings_dump_readme(FILE *f)
{
	dump_table(f, rr_fn_settings, rr_fn_nsettings, false);
}

/* Writes @s for roff: a hyphen as \-. */
static void roff(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '-')
			fputs("\\-", f);
		else if (*s == '\\')
			fputs("\\e", f);
		else
			fputc(*s, f);
	}
}

/* The man pages' .TP list of table @t's keys; @reload: each says whether
 * a reload applies it. */
static void man_keys(FILE *f, const struct rr_setting *t, size_t n, bool reload)
{
	const struct rr_setting *s;
	char value[128], def[64], flags[256];

	for (s = t; s < t + n; s++) {
		if (!s->key)
			continue;
		rr_setting_value_text(s, value, sizeof(value));
		key_default(s, def, sizeof(def));
		flags_text(s, &roff_flags, flags, sizeof(flags));
		fprintf(f, ".TP\n\\fB%s\\fR = ", s->key);
		roff(f, value);
		if (flags[0]) {
			fputs(" (", f);
			roff(f, flags);
			fputs(")", f);
		}
		fputs("\n", f);
		roff(f, s->help);
		fputs("; default: ", f);
		roff(f, def);
		fputs(".", f);
		if (reload)
			fputs(s->live ? " Applied by a reload."
				      : " A change needs a restart.",
			      f);
		fputs("\n", f);
	}
}

void rr_settings_dump_man(FILE *f)
{
	man_keys(f, rr_settings, rr_nsettings, false);
}

/* "-b | --batch" of row @s, after @sep. */
static void print_pattern(FILE *f, const struct rr_setting *s, bool *first)
{
	if (s->letter)
		fprintf(f, "%s-%c | --%s", *first ? "\t" : " | ", s->letter,
			s->flag);
	else
		fprintf(f, "%s--%s", *first ? "\t" : " | ", s->flag);
	*first = false;
}

/* One case of the rows that complete as @how (RR_SETTING_ENUM rows have
 * one each, @only). */
static void complete_case(FILE *f, enum rr_setting_complete how,
			  const struct rr_setting *only, const char *action)
{
	const struct rr_setting *s;
	bool first = true;

	for (s = rr_settings; s < rr_settings + rr_nsettings; s++) {
		if (!s->flag || !s->arg)
			continue;
		if (only ? s != only
			 : s->complete != how || s->type == RR_SETTING_ENUM)
			continue;
		print_pattern(f, s, &first);
	}
	if (first)
		return;
	/* "return # why" is a case of its own: nothing to offer. */
	fprintf(f, ")\n\t\t%s\n%s\t\t;;\n", action,
		strncmp(action, "return", 6) ? "\t\treturn\n" : "");
}

void rr_settings_dump_completion(FILE *f)
{
	const struct rr_setting *s;
	char words[256], action[320];
	size_t i, at;

	fprintf(f, "\tcase $prev in\n");
	complete_case(
		f, RR_COMPLETE_IFACE, NULL,
		"mapfile -t COMPREPLY < <(compgen -W \"$(ls /sys/class/net 2>/dev/null)\" -- \"$cur\")");
	complete_case(f, RR_COMPLETE_FILE, NULL,
		      "mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")");
	complete_case(f, RR_COMPLETE_DIR, NULL,
		      "mapfile -t COMPREPLY < <(compgen -d -- \"$cur\")");
	for (s = rr_settings; s < rr_settings + rr_nsettings; s++) {
		if (s->type != RR_SETTING_ENUM || !s->flag)
			continue;
		words[0] = '\0';
		for (i = 0, at = 0; s->names[i] && at < sizeof(words); i++)
			at += (size_t)snprintf(words + at, sizeof(words) - at,
					       "%s%s", i ? " " : "",
					       s->names[i]);
		snprintf(
			action, sizeof(action),
			"mapfile -t COMPREPLY < <(compgen -W '%s' -- \"$cur\")",
			words);
		complete_case(f, RR_COMPLETE_NONE, s, action);
	}
	complete_case(f, RR_COMPLETE_USER, NULL,
		      "mapfile -t COMPREPLY < <(compgen -u -- \"$cur\")");
	complete_case(f, RR_COMPLETE_GROUP, NULL,
		      "mapfile -t COMPREPLY < <(compgen -g -- \"$cur\")");
	complete_case(f, RR_COMPLETE_NONE, NULL,
		      "return # a value of the user's own");
	fprintf(f, "\tesac\n");
}

/* ---- configs/reqrouter.conf and reqrouter.conf(5) ---- */

/* What both say of the file before the keys. */
#define CONF_NOTE_FILE                                                        \
	"reqrouter -c FILE reads the file, and a flag given as well wins "    \
	"over its key. Lines are \"key = value\"; a line that begins with "   \
	"\";\" is a comment. Booleans take yes/no, true/false, on/off or "    \
	"1/0. The lines of a list key (allow, rate_limit_exempt, syscalls) "  \
	"add up. A reload (SIGHUP, reqrouterctl reload) applies a change of " \
	"the keys marked \"Applied by a reload\" while serving; any other "   \
	"change needs a restart."
#define CONF_NOTE_FN                                                        \
	"A [function NAME] section configures one registered function "     \
	"(reqrouter --list names them, with the port and rate limit each "  \
	"has by default). One named in no section is served with these "    \
	"defaults, but for those --list says are served once configured, "  \
	"which need a section. Any key not listed here is the function's "  \
	"own (function API 2: dns's zone, kv's table; docs/FUNCTIONS.md), " \
	"and the function refuses those it does not know."

/* @text as comment lines of at most 76 columns, broken at spaces. */
static void conf_comment(FILE *f, const char *text)
{
	const size_t room = 76 - 2;
	const char *p = text, *q, *brk;

	while (strlen(p) > room) {
		brk = NULL;
		for (q = p; q <= p + room; q++)
			if (*q == ' ')
				brk = q;
		if (!brk)
			brk = strchr(p + room, ' ');
		if (!brk)
			break;
		fprintf(f, "; %.*s\n", (int)(brk - p), p);
		p = brk + 1;
	}
	fprintf(f, "; %s\n", p);
}

/* A default that the key takes as it is written, or "". */
static void conf_literal(const struct rr_setting *s, char *buf, size_t len)
{
	buf[0] = '\0';
	if (s->type == RR_SETTING_U32 && s->def >= s->min && s->def <= s->max)
		snprintf(buf, len, "%u", s->def);
	else if (s->type == RR_SETTING_ENUM)
		snprintf(buf, len, "%s", s->names[s->def]);
	else if (s->type == RR_SETTING_BOOL)
		snprintf(buf, len, "%s", s->def ? "yes" : "no");
}

/* The line under a key's help: its values, default, flags and whether a
 * reload applies it. */
static void key_facts(const struct rr_setting *s, char *buf, size_t len)
{
	char value[128], def[64], flags[256];

	rr_setting_value_text(s, value, sizeof(value));
	key_default(s, def, sizeof(def));
	flags_text(s, &roff_flags, flags, sizeof(flags));
	snprintf(buf, len, "Values: %s. Default: %s.%s%s%s %s.", value, def,
		 flags[0] ? " Flag: " : "", flags, flags[0] ? "." : "",
		 s->live ? "Applied by a reload" : "A change needs a restart");
}

/* Table @t's keys, each commented out under its help. */
static void conf_keys(FILE *f, const struct rr_setting *t, size_t n)
{
	const struct rr_setting *s;
	char facts[512], lit[64];

	for (s = t; s < t + n; s++) {
		if (!s->key)
			continue;
		fputs("\n", f);
		snprintf(facts, sizeof(facts), "%s%s", s->help,
			 s->help[strlen(s->help) - 1] == '.' ? "" : ".");
		conf_comment(f, facts);
		key_facts(s, facts, sizeof(facts));
		conf_comment(f, facts);
		conf_literal(s, lit, sizeof(lit));
		fprintf(f, ";%s =%s%s\n", s->key, lit[0] ? " " : "", lit);
	}
}

void rr_settings_dump_conf(FILE *f)
{
	conf_comment(
		f,
		"reqrouter.conf: every key reqrouter reads, under its help, the "
		"values it takes and its default, each commented out: a "
		"reference, not a configuration to run. Generated by "
		"`reqrouter --dump-settings conf` from the settings table "
		"(src/lib/settings.c): edit the table, then run "
		"tests/lint/config_drift.sh --update. reqrouter.conf(5) says "
		"the same.");
	fputs(";\n", f);
	conf_comment(
		f, "A real host starts from configs/service.conf, installed as "
		   "/etc/reqrouter/reqrouter.conf, which every "
		   "reqrouter@IFACE.service reads.");
	fputs(";\n", f);
	conf_comment(f, CONF_NOTE_FILE);
	fputs("\n[reqrouter]\n", f);
	conf_keys(f, rr_settings, rr_nsettings);
	fputs("\n", f);
	conf_comment(f, CONF_NOTE_FN);
	fputs("\n;[function NAME]\n", f);
	conf_keys(f, rr_fn_settings, rr_fn_nsettings);
}

/* @text as roff text: a paragraph. */
static void man_para(FILE *f, const char *text)
{
	fputs(".PP\n", f);
	roff(f, text);
	fputs("\n", f);
}

void rr_settings_dump_conf_man(FILE *f)
{
	fputs(".\\\" Generated by `reqrouter --dump-settings conf-man` from the settings\n"
	      ".\\\" table (src/lib/settings.c); tests/lint/config_drift.sh checks it.\n"
	      ".TH REQROUTER.CONF 5 \"\" \"reqrouter\" \"File Formats\"\n"
	      ".SH NAME\n"
	      "reqrouter.conf \\- configuration file of reqrouter\n"
	      ".SH SYNOPSIS\n"
	      "/etc/reqrouter/reqrouter.conf\n"
	      ".SH DESCRIPTION\n",
	      f);
	man_para(f, "reqrouter(8) serves C functions over UDP through AF_XDP. "
		    "The file is in INI form, read by libinih: a [reqrouter] "
		    "section for reqrouter itself, and a [function NAME] "
		    "section for each function configured. Every "
		    "reqrouter@IFACE.service reads "
		    "/etc/reqrouter/reqrouter.conf (reqrouter -i IFACE "
		    "-c /etc/reqrouter/reqrouter.conf).");
	man_para(f, CONF_NOTE_FILE);
	man_para(f, "reqrouter --check -c FILE checks a file as a start "
		    "would, without touching the interface.");
	fputs(".SH \"THE [reqrouter] SECTION\"\n", f);
	man_keys(f, rr_settings, rr_nsettings, true);
	fputs(".SH \"[function NAME] SECTIONS\"\n", f);
	man_para(f, CONF_NOTE_FN);
	man_keys(f, rr_fn_settings, rr_fn_nsettings, true);
	fputs(".SH EXAMPLE\n"
	      ".PP\n"
	      ".nf\n"
	      "[reqrouter]\n"
	      "metrics_listen = 127.0.0.1:9464\n"
	      "\n"
	      "[function reverse]\n"
	      "allow = 192.0.2.0/24, 2001:db8::/32\n"
	      "rate_limit = 1000\n"
	      "\n"
	      "[function dns]\n"
	      "zone = example.com /etc/reqrouter/example.zone\n"
	      ".fi\n"
	      ".SH FILES\n"
	      ".TP\n"
	      "/etc/reqrouter/reqrouter.conf\n"
	      "the configuration of every reqrouter@IFACE.service\n"
	      ".TP\n"
	      "/etc/reqrouter/IFACE.env\n"
	      "REQROUTER_ARGS=, flags for the instance on IFACE alone\n"
	      ".SH \"SEE ALSO\"\n"
	      ".BR reqrouter (8),\n"
	      ".BR reqrouterctl (8);\n"
	      "docs/CONFIGURATION.md and docs/FUNCTIONS.md (each function's own keys)\n"
	      "in reqrouter's documentation, share/doc/reqrouter/docs/ once installed;\n"
	      "share/doc/reqrouter/examples/reqrouter.conf, every key commented out.\n",
	      f);
}
