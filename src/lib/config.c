// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration: defaults, the INI file (parsed by libinih) and the
 * checks once file and flags are in. The [reqrouter] keys are rows of the
 * settings table (settings.c), which the command line shares; the values'
 * parsers are in config_values.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>
#include <sys/stat.h>

#include <ini.h>

#include "config.h"
#include "parse.h"
#include "registry.h"
#include "settings.h"
#include "shared/guard.h"
#include "util.h"

int rr_config_init(struct rr_config *cfg, char *err, size_t errlen)
{
	size_t i, n = rr_registry_count();
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	rr_settings_defaults(cfg);
	ret = rr_registry_check(err, errlen);
	if (ret)
		return ret;
	if (n > ARRAY_SIZE(cfg->services))
		return rr_errf(err, errlen,
			       "too many registered functions (%zu)", n);
	for (i = 0; i < n; i++) {
		cfg->services[i].fn = rr_registry_at(i);
		rr_fn_settings_defaults(&cfg->services[i]);
	}
	cfg->nservices = (uint32_t)n;
	return 0;
}

struct rr_service *rr_config_service_named(const struct rr_config *cfg,
					   const char *name)
{
	uint32_t i;

	for (i = 0; i < cfg->nservices; i++)
		if (!strcmp(cfg->services[i].fn->name, name))
			return (struct rr_service *)&cfg->services[i];
	return NULL;
}

struct ini_ctx {
	struct rr_config *cfg;
	const char *path;
	char *err;
	size_t errlen;
	int failed;
	FILE *f;
	unsigned int line;	  /* of the line inih last read */
	unsigned int failed_line; /* of a failure inih does not see */
	/* [reqrouter] alone (rr_config_load_main()): the other sections
	 * name functions a client has not registered. */
	bool main_only;
};

/* Group @name of the config, made at its first mention; NULL with why. */
static struct rr_sg_group *group_named(struct ini_ctx *c, const char *name,
				       char *err, size_t errlen)
{
	struct rr_config *cfg = c->cfg;
	struct rr_sg_group *g;
	int i = rr_config_group(cfg, name);

	if (i >= 0)
		return &cfg->groups[i];
	if (!*name || strlen(name) >= RR_GROUP_NAME_LEN) {
		rr_errf(err, errlen,
			"[group %s]: a group's name has 1 to %d characters",
			name, RR_GROUP_NAME_LEN - 1);
		return NULL;
	}
	if (cfg->ngroups == RR_SG_MAX_GROUPS) {
		rr_errf(err, errlen, "[group %s]: more than %d groups", name,
			RR_SG_MAX_GROUPS);
		return NULL;
	}
	g = &cfg->groups[cfg->ngroups];
	memset(g, 0, sizeof(*g));
	g->targets = calloc(RR_SG_MAX_TARGETS, sizeof(*g->targets));
	if (!g->targets) {
		rr_errf(err, errlen, "[group %s]: out of memory", name);
		return NULL;
	}
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->file = c->path;
	g->line = c->line;
	cfg->ngroups++;
	return g;
}

/*
 * A [function NAME] header: the function is configured even if no key
 * follows (inih reports keys only), which serves an opt-in function
 * that needs no settings. A [group NAME] header makes the group, so that
 * one without a targets line is said to have none.
 */
static void section_line(struct ini_ctx *c, const char *buf)
{
	char name[128];
	struct rr_service *svc;
	bool group;
	size_t n;

	if (c->main_only)
		return;
	buf += strspn(buf, " \t");
	group = !strncmp(buf, "[group ", 7);
	if (strncmp(buf, "[function ", 10) && !group)
		return;
	buf += group ? 7 : 10;
	buf += strspn(buf, " \t");
	n = strcspn(buf, "]");
	if (buf[n] != ']' || n >= sizeof(name))
		return;
	while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	memcpy(name, buf, n);
	name[n] = '\0';
	/* A group without a targets line is there, and said empty. */
	if (group) {
		if (!group_named(c, name, c->err, c->errlen) && !c->failed) {
			c->failed = 1;
			c->failed_line = c->line;
		}
		return;
	}
	svc = rr_config_service_named(c->cfg, name);
	if (svc) {
		svc->configured = true;
	} else if (!c->failed) {
		snprintf(c->err, c->errlen,
			 "no function named '%s' is registered", name);
		c->failed = 1;
		c->failed_line = c->line;
	}
}

/* inih's reader, counting lines: a function's settings carry theirs. */
static char *read_line(char *buf, int size, void *user)
{
	struct ini_ctx *c = user;

	if (!fgets(buf, size, c->f))
		return NULL;
	c->line++;
	section_line(c, buf);
	return buf;
}

/* A key of a function's own (API 2), kept for its init(). */
static int add_setting(struct ini_ctx *c, struct rr_service *svc,
		       const char *key, const char *val, char *err,
		       size_t errlen)
{
	struct rr_fn_setting *s;

	if (svc->nsettings == RR_MAX_FN_SETTINGS)
		return rr_errf(err, errlen,
			       "more than %d settings in [function %s]",
			       RR_MAX_FN_SETTINGS, svc->fn->name);
	s = &svc->settings[svc->nsettings];
	s->key = strdup(key);
	s->value = strdup(val);
	s->file = c->path;
	s->line = c->line;
	if (!s->key || !s->value) {
		free((char *)s->key);
		free((char *)s->value);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	svc->nsettings++;
	return 0;
}

void rr_service_drop_settings(struct rr_service *svc)
{
	uint32_t j;

	for (j = 0; j < svc->nsettings; j++) {
		free((char *)svc->settings[j].key);
		free((char *)svc->settings[j].value);
	}
	svc->nsettings = 0;
}

int rr_service_keep_settings(struct rr_service *svc,
			     const struct rr_service *from, const char *file)
{
	struct rr_fn_setting copy[RR_MAX_FN_SETTINGS];
	uint32_t i, j;

	for (i = 0; i < from->nsettings; i++) {
		copy[i] = from->settings[i];
		copy[i].key = strdup(from->settings[i].key);
		copy[i].value = strdup(from->settings[i].value);
		copy[i].file = file;
		if (!copy[i].key || !copy[i].value) {
			for (j = 0; j <= i; j++) {
				free((char *)copy[j].key);
				free((char *)copy[j].value);
			}
			return -ENOMEM;
		}
	}
	rr_service_drop_settings(svc);
	memcpy(svc->settings, copy, i * sizeof(copy[0]));
	svc->nsettings = i;
	return 0;
}

void rr_config_free(struct rr_config *cfg)
{
	uint32_t i;

	for (i = 0; i < cfg->ngroups; i++) {
		free(cfg->groups[i].targets);
		cfg->groups[i].targets = NULL;
	}
	cfg->ngroups = 0;

	for (i = 0; i < cfg->nservices; i++)
		rr_service_drop_settings(&cfg->services[i]);
}

/* A [reqrouter] key: its row in the settings table says how to read it. */
static int main_key(struct ini_ctx *c, const char *key, const char *val,
		    char *err, size_t errlen)
{
	const struct rr_setting *s = rr_setting_by_key(key);

	if (!s)
		return rr_errf(err, errlen, "unknown key '%s' in [reqrouter]",
			       key);
	c->cfg->key_line[s - rr_settings] = c->line;
	return rr_setting_set(s, c->cfg, val, false, err, errlen);
}

static int function_key(struct ini_ctx *c, const char *name, const char *key,
			const char *val, char *err, size_t errlen)
{
	struct rr_service *svc = rr_config_service_named(c->cfg, name);
	const struct rr_setting *s;

	if (!svc)
		return rr_errf(err, errlen,
			       "no function named '%s' is registered", name);
	svc->configured = true;
	s = rr_fn_setting_by_key(key);
	if (s) {
		svc->key_line[s - rr_fn_settings] = c->line;
		if (rr_setting_set(s, svc, val, false, err, errlen))
			return -EINVAL;
		if (svc->cache && !(svc->fn->flags & RR_FN_PURE))
			return rr_errf(
				err, errlen,
				"function '%s' is not declared pure (RR_FN_PURE): its replies cannot be cached",
				name);
		return 0;
	}
	/* Any other key is the function's own, if it takes settings. */
	if (svc->fn->init)
		return add_setting(c, svc, key, val, err, errlen);
	return rr_errf(err, errlen, "unknown key '%s' in [function %s]", key,
		       name);
}

int rr_config_group(const struct rr_config *cfg, const char *name)
{
	uint32_t i;

	for (i = 0; i < cfg->ngroups; i++)
		if (!strcmp(cfg->groups[i].name, name))
			return (int)i;
	return -1;
}

/* A [group NAME] key: only targets, which lines add to. */
static int group_key(struct ini_ctx *c, const char *name, const char *key,
		     const char *val, char *err, size_t errlen)
{
	struct rr_sg_group *g;

	if (strcmp(key, "targets"))
		return rr_errf(
			err, errlen,
			"unknown key '%s' in [group %s] (it takes targets)",
			key, name);
	g = group_named(c, name, err, errlen);
	if (!g)
		return -EINVAL;
	if (rr_parse_targets(val, g->targets, RR_SG_MAX_TARGETS, &g->ntargets,
			     err, errlen))
		return -EINVAL;
	return 0;
}

static int on_ini_line(void *user, const char *section, const char *key,
		       const char *val)
{
	struct ini_ctx *c = user;
	char msg[RR_ERRLEN];
	int ret;

	if (!strcmp(section, "reqrouter"))
		ret = main_key(c, key, val, msg, sizeof(msg));
	else if (c->main_only)
		ret = 0;
	else if (!strncmp(section, "function ", 9))
		ret = function_key(c, section + 9, key, val, msg, sizeof(msg));
	else if (!strncmp(section, "group ", 6))
		ret = group_key(c, section + 6, key, val, msg, sizeof(msg));
	else {
		ret = rr_errf(msg, sizeof(msg), "unknown section [%s]",
			      section);
	}
	if (ret && !c->failed) {
		/* inih reports the line; keep our sentence for it. */
		snprintf(c->err, c->errlen, "%s", msg);
		c->failed = 1;
	}
	return !ret;
}

/*
 * libinih reads lines of at most INI_MAX_LINE - 2 characters and would cut
 * a longer one in two without a word; say so, with the line, instead.
 */
static int check_lines(FILE *f, const char *path, char *err, size_t errlen)
{
	size_t len = 0, lineno = 1;
	int c;

	while ((c = getc(f)) != EOF) {
		if (c == '\n') {
			lineno++;
			len = 0;
		} else if (++len > INI_MAX_LINE - 2) {
			return rr_errf(
				err, errlen,
				"%s:%zu: line longer than %d characters; split it (an allow-list may take several 'allow =' lines)",
				path, lineno, INI_MAX_LINE - 2);
		}
	}
	rewind(f);
	return 0;
}

static int load(struct rr_config *cfg, const char *path, bool main_only,
		char *err, size_t errlen)
{
	struct ini_ctx c = { cfg, path, err, errlen, 0, NULL, 0, 0, main_only };
	char msg[RR_ERRLEN];
	struct stat st;
	int line, ret;
	FILE *f;

	/* Named as given even if it cannot be read: --check's verdict. */
	if (path != cfg->config_file)
		snprintf(cfg->config_file, sizeof(cfg->config_file), "%s",
			 path);
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot open config file %s: %s", path,
			 strerror(errno));
		return -ENOENT;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return rr_errf(err, errlen,
			       "config file %s is not a regular file", path);
	}
	ret = check_lines(f, path, err, errlen);
	if (ret) {
		fclose(f);
		return ret;
	}
	/* The settings point at the path: use the copy that lives on. */
	c.path = cfg->config_file;
	c.f = f;
	line = ini_parse_stream(read_line, &c, on_ini_line, &c);
	fclose(f);
	if (!line && c.failed)
		line = (int)c.failed_line;
	if (line) {
		snprintf(msg, sizeof(msg), "%s",
			 c.failed ? err : "syntax error");
		return rr_errf(err, errlen, "%s:%d: %s", path, line, msg);
	}
	return 0;
}

void rr_config_where(const struct rr_config *cfg, const char *key, char *buf,
		     size_t len)
{
	const struct rr_setting *s = rr_setting_by_key(key);
	unsigned int line = s ? cfg->key_line[s - rr_settings] : 0;

	if (line)
		snprintf(buf, len, "%s:%u: %s", cfg->config_file, line, key);
	else
		snprintf(buf, len, "--%s", s && s->flag ? s->flag : key);
}

/* Two functions on one port: said at the line that put the later there. */
static int port_clash(const struct rr_config *cfg, const struct rr_service *a,
		      const struct rr_service *b, char *err, size_t errlen)
{
	size_t row = (size_t)(rr_fn_setting_by_key("port") - rr_fn_settings);
	unsigned int la = a->key_line[row], lb = b->key_line[row];

	if (!la && !lb)
		return rr_errf(err, errlen,
			       "functions '%s' and '%s' are both on port %u",
			       a->fn->name, b->fn->name, b->port);
	return rr_errf(err, errlen,
		       "%s:%u: functions '%s' and '%s' are both on port %u",
		       cfg->config_file, la > lb ? la : lb, a->fn->name,
		       b->fn->name, b->port);
}

int rr_config_load(struct rr_config *cfg, const char *path, char *err,
		   size_t errlen)
{
	return load(cfg, path, false, err, errlen);
}

int rr_config_load_main(struct rr_config *cfg, const char *path, char *err,
			size_t errlen)
{
	return load(cfg, path, true, err, errlen);
}

int rr_config_finish(struct rr_config *cfg, char *err, size_t errlen)
{
	uint32_t i, j, served = 0, allow4 = 0, allow6 = 0;
	bool found;

	for (i = 0; i < cfg->ngroups; i++)
		if (!cfg->groups[i].ntargets)
			return rr_errf(
				err, errlen, "%s:%u: [group %s] has no targets",
				cfg->groups[i].file ? cfg->groups[i].file
						    : "config",
				cfg->groups[i].line, cfg->groups[i].name);
	/* A function that needs settings is served only with them. */
	for (i = 0; i < cfg->nservices; i++)
		if ((cfg->services[i].fn->flags & RR_FN_OPT_IN) &&
		    !cfg->services[i].configured)
			cfg->services[i].enabled = false;
	/* -p picks among the enabled functions; it never revives one. */
	for (i = 0; i < cfg->n_only_ports; i++) {
		found = false;
		for (j = 0; j < cfg->nservices; j++)
			if (cfg->services[j].enabled &&
			    cfg->services[j].port == cfg->only_ports[i])
				found = true;
		if (!found)
			return rr_errf(
				err, errlen,
				"no enabled function is on port %u (see --list)",
				cfg->only_ports[i]);
	}
	for (i = 0; i < cfg->nservices; i++) {
		struct rr_service *svc = &cfg->services[i];

		if (svc->enabled && cfg->n_only_ports) {
			svc->enabled = false;
			for (j = 0; j < cfg->n_only_ports; j++)
				if (svc->port == cfg->only_ports[j])
					svc->enabled = true;
		}
		if (!svc->enabled)
			continue;
		if (cfg->tier_set)
			svc->tier = cfg->tier;
		if (cfg->no_cache)
			svc->cache = false;
		if (svc->tier == RR_TIER_XDP && !rr_registry_xdp(svc->fn->name))
			return rr_errf(
				err, errlen,
				"function '%s' has no XDP implementation (functions/%s.bpf.c), so tier = xdp cannot serve it",
				svc->fn->name, svc->fn->name);
		if (svc->cookie_secret[0] &&
		    !(svc->fn->flags & RR_FN_DNS_COOKIES))
			return rr_errf(
				err, errlen,
				"[function %s] cookie_secret: '%s' speaks no DNS Cookies (only a function flagged RR_FN_DNS_COOKIES, as dns, has a cookie secret)",
				svc->fn->name, svc->fn->name);
		for (j = 0; j < i; j++) {
			if (cfg->services[j].enabled &&
			    cfg->services[j].port == svc->port)
				return port_clash(cfg, &cfg->services[j], svc,
						  err, errlen);
		}
		for (j = 0; j < svc->nallow; j++) {
			if (svc->allow[j].family == AF_INET)
				allow4++;
			else
				allow6++;
		}
		served++;
	}
	if (!served)
		return rr_errf(err, errlen, "no function to serve");
	if (served > RR_MAX_SLOTS)
		return rr_errf(err, errlen,
			       "at most %u functions can be served",
			       RR_MAX_SLOTS);
	if (allow4 > RR_MAX_ALLOW || allow6 > RR_MAX_ALLOW)
		return rr_errf(
			err, errlen,
			"the allow-lists hold %u IPv4 and %u IPv6 prefixes; at most %u of each fit",
			allow4, allow6, RR_MAX_ALLOW);
	return 0;
}

struct rr_config *rr_config_read(const char *path, char *err, size_t errlen)
{
	struct rr_config *cfg = calloc(1, sizeof(*cfg));

	if (!cfg) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (rr_config_init(cfg, err, errlen) ||
	    (path && *path && rr_config_load(cfg, path, err, errlen))) {
		rr_config_destroy(cfg);
		return NULL;
	}
	return cfg;
}

void rr_config_destroy(struct rr_config *cfg)
{
	if (!cfg)
		return;
	rr_config_free(cfg);
	free(cfg);
}

struct rr_service *rr_config_service_of(const struct rr_config *cfg,
					const struct rr_function *fn)
{
	uint32_t i;

	for (i = 0; i < cfg->nservices; i++)
		if (cfg->services[i].fn == fn)
			return (struct rr_service *)&cfg->services[i];
	return NULL;
}

/* Whether lists @a and @b of @n elements of row @s's type are the same. */
static bool same_list(const struct rr_setting *s, const void *a, const void *b,
		      uint32_t n)
{
	const struct rr_cidr *ca = a, *cb = b;
	uint32_t i;

	switch (s->type) {
	case RR_SETTING_CPUS:
		return !memcmp(a, b, n * sizeof(int));
	case RR_SETTING_PORTS:
		return !memcmp(a, b, n * sizeof(uint16_t));
	default:
		break;
	}
	/* Prefixes field by field: a struct's padding is no value. */
	for (i = 0; i < n; i++)
		if (ca[i].family != cb[i].family || ca[i].len != cb[i].len ||
		    memcmp(ca[i].addr, cb[i].addr, sizeof(ca[i].addr)))
			return false;
	return true;
}

/* Whether row @s's value differs between @a and @b, the structs its
 * offsets are into. */
static bool setting_differs(const struct rr_setting *s, const void *a,
			    const void *b)
{
	const char *fa = (const char *)a + s->off,
		   *fb = (const char *)b + s->off;
	uint32_t na, nb;

	switch (s->type) {
	case RR_SETTING_STRING:
		return strncmp(fa, fb, s->size) != 0;
	case RR_SETTING_CPUS:
	case RR_SETTING_PORTS:
	case RR_SETTING_CIDRS:
		na = *(const uint32_t *)((const char *)a + s->count);
		nb = *(const uint32_t *)((const char *)b + s->count);
		return na != nb || !same_list(s, fa, fb, na);
	case RR_SETTING_U32:
	case RR_SETTING_BOOL:
	case RR_SETTING_ENUM:
	case RR_SETTING_VLANS:
		return memcmp(fa, fb, s->size) != 0;
	default:
		return false; /* a switch or a flag of the command line's */
	}
}

static size_t diff_rows(const struct rr_setting *t, size_t n, const void *a,
			const void *b, const struct rr_setting **out)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (t[i].key && setting_differs(&t[i], a, b))
			out[k++] = &t[i];
	return k;
}

size_t rr_config_diff(const struct rr_config *a, const struct rr_config *b,
		      const struct rr_setting **out)
{
	return diff_rows(rr_settings, rr_nsettings, a, b, out);
}

size_t rr_service_diff(const struct rr_service *a, const struct rr_service *b,
		       const struct rr_setting **out)
{
	return diff_rows(rr_fn_settings, rr_fn_nsettings, a, b, out);
}
