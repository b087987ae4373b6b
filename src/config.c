// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration: defaults, the INI file (parsed by libinih) and the
 * value parsers the command line shares with it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <ini.h>

#include "config.h"
#include "parse.h"
#include "registry.h"

/* "0-3,6": ranges and single CPUs, each below RR_MAX_CPUS, no repeats. */
int rr_parse_cpus(const char *s, int *cpus, uint32_t *ncpus, char *err,
		  size_t errlen)
{
	char *buf, *tok, *save, *dash;
	uint32_t lo, hi, c, n = 0, i;
	int ret = -EINVAL;

	if (!*s)
		return rr_errf(err, errlen, "empty CPU list");
	buf = strdup(s);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (rr_parse_u32(tok, 0, RR_MAX_CPUS - 1, &lo, "a CPU", err,
				 errlen))
			goto out;
		hi = lo;
		if (dash && rr_parse_u32(dash + 1, lo, RR_MAX_CPUS - 1, &hi,
					 "a CPU range's end", err, errlen))
			goto out;
		for (c = lo; c <= hi; c++) {
			for (i = 0; i < n; i++) {
				if (cpus[i] == (int)c) {
					rr_errf(err, errlen,
						"CPU %u is listed twice", c);
					goto out;
				}
			}
			cpus[n++] = (int)c;
		}
	}
	if (!n) {
		rr_errf(err, errlen, "bad CPU list '%s'", s);
		goto out;
	}
	*ncpus = n;
	ret = 0;
out:
	free(buf);
	return ret;
}

int rr_parse_ports(const char *s, uint16_t *ports, uint32_t max,
		   uint32_t *nports, char *err, size_t errlen)
{
	char buf[512], *tok, *save;
	uint32_t port, n = 0, i;

	if (strlen(s) >= sizeof(buf) || !*s)
		return rr_errf(err, errlen, "bad port list '%s'", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (rr_parse_u32(tok, 1, 65535, &port, "a port", err, errlen))
			return -EINVAL;
		for (i = 0; i < n; i++) {
			if (ports[i] == port)
				return rr_errf(err, errlen,
					       "port %u is listed twice", port);
		}
		if (n == max)
			return rr_errf(err, errlen,
				       "at most %u ports may be listed", max);
		ports[n++] = (uint16_t)port;
	}
	if (!n)
		return rr_errf(err, errlen, "bad port list '%s'", s);
	*nports = n;
	return 0;
}

int rr_parse_mode(const char *s, enum rr_xdp_mode *mode, char *err,
		  size_t errlen)
{
	if (!strcmp(s, "auto"))
		*mode = RR_MODE_AUTO;
	else if (!strcmp(s, "native"))
		*mode = RR_MODE_NATIVE;
	else if (!strcmp(s, "skb"))
		*mode = RR_MODE_SKB;
	else
		return rr_errf(err, errlen,
			       "mode must be auto, native or skb, not '%s'", s);
	return 0;
}

static const char *const tier_names[] = {
	[RR_TIER_AUTO] = "auto",
	[RR_TIER_XDP] = "xdp",
	[RR_TIER_USER] = "user",
};

int rr_parse_tier(const char *s, enum rr_tier *tier, char *err, size_t errlen)
{
	uint32_t i;

	for (i = 0; i <= RR_TIER_USER; i++)
		if (!strcmp(s, tier_names[i])) {
			*tier = i;
			return 0;
		}
	return rr_errf(err, errlen, "tier must be auto, xdp or user, not '%s'",
		       s);
}

int rr_parse_tx_csum(const char *s, enum rr_tx_csum *csum, char *err,
		     size_t errlen)
{
	if (!strcmp(s, "auto"))
		*csum = RR_TX_CSUM_AUTO;
	else if (!strcmp(s, "soft"))
		*csum = RR_TX_CSUM_SOFT;
	else if (!strcmp(s, "offload"))
		*csum = RR_TX_CSUM_OFFLOAD;
	else
		return rr_errf(
			err, errlen,
			"tx-csum must be auto, soft or offload, not '%s'", s);
	return 0;
}

int rr_parse_cidrs(const char *s, struct rr_cidr *out, uint32_t max,
		   uint32_t *n, char *err, size_t errlen)
{
	char buf[4096], *tok, *save, *slash;
	uint32_t len, count = *n, maxlen;
	struct rr_cidr c;
	int i;

	if (strlen(s) >= sizeof(buf))
		return rr_errf(err, errlen, "allow-list is too long");
	strcpy(buf, s);
	for (tok = strtok_r(buf, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		memset(&c, 0, sizeof(c));
		slash = strchr(tok, '/');
		if (slash)
			*slash = '\0';
		if (inet_pton(AF_INET, tok, c.addr) == 1) {
			c.family = AF_INET;
			maxlen = 32;
		} else if (inet_pton(AF_INET6, tok, c.addr) == 1) {
			c.family = AF_INET6;
			maxlen = 128;
		} else {
			return rr_errf(err, errlen,
				       "'%s' is not an IPv4 or IPv6 address",
				       tok);
		}
		len = maxlen;
		if (slash && rr_parse_u32(slash + 1, 0, maxlen, &len,
					  "a prefix length", err, errlen))
			return -EINVAL;
		c.len = (uint8_t)len;
		/* Host bits set would never match as written: refuse them. */
		for (i = 0; i < 16; i++) {
			int keep = (int)len - i * 8;
			uint8_t mask = keep >= 8 ? 0xff
				       : keep <= 0
					       ? 0
					       : (uint8_t)(0xff << (8 - keep));

			if (c.addr[i] & ~mask)
				return rr_errf(err, errlen,
					       "%s/%u has host bits set", tok,
					       len);
		}
		if (count >= max)
			return rr_errf(err, errlen,
				       "at most %u prefixes per allow-list",
				       max);
		out[count++] = c;
	}
	if (count == *n)
		return rr_errf(err, errlen, "empty allow-list");
	*n = count;
	return 0;
}

int rr_set_ifname(struct rr_config *cfg, const char *s, char *err,
		  size_t errlen)
{
	if (!*s || strlen(s) >= sizeof(cfg->ifname) || strchr(s, '/'))
		return rr_errf(err, errlen,
			       "'%s' is not a valid interface name", s);
	strcpy(cfg->ifname, s);
	return 0;
}

int rr_set_control(struct rr_config *cfg, const char *s, char *err,
		   size_t errlen)
{
	if (!*s || strlen(s) >= sizeof(cfg->control) ||
	    (strcmp(s, "none") && s[0] != '/'))
		return rr_errf(
			err, errlen,
			"control socket '%s' must be an absolute path shorter than %zu bytes, or none",
			s, sizeof(cfg->control));
	strcpy(cfg->control, s);
	return 0;
}

int rr_parse_listen(const char *s, struct sockaddr_storage *sa,
		    socklen_t *salen, char *err, size_t errlen)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
	struct sockaddr_in *in = (struct sockaddr_in *)sa;
	const char *colon = strrchr(s, ':');
	char addr[INET6_ADDRSTRLEN + 2];
	unsigned long port;
	size_t alen;

	memset(sa, 0, sizeof(*sa));
	if (!colon || rr_parse_ulong(colon + 1, 1, 65535, &port))
		goto bad;
	alen = (size_t)(colon - s);
	if (alen >= sizeof(addr))
		goto bad;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (alen > 2 && addr[0] == '[' && addr[alen - 1] == ']') {
		addr[alen - 1] = '\0';
		if (inet_pton(AF_INET6, addr + 1, &in6->sin6_addr) != 1)
			goto bad;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*salen = sizeof(*in6);
		return 0;
	}
	if (inet_pton(AF_INET, addr, &in->sin_addr) != 1)
		goto bad;
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	*salen = sizeof(*in);
	return 0;
bad:
	return rr_errf(
		err, errlen,
		"bad metrics listen address '%s': want IPv4:PORT or [IPv6]:PORT, e.g. 127.0.0.1:9464",
		s);
}

int rr_set_metrics_listen(struct rr_config *cfg, const char *s, char *err,
			  size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t salen;

	if (rr_parse_listen(s, &sa, &salen, err, errlen))
		return -EINVAL;
	if (strlen(s) >= sizeof(cfg->metrics_listen))
		return rr_errf(err, errlen,
			       "metrics listen address '%s' is too long", s);
	strcpy(cfg->metrics_listen, s);
	return 0;
}

int rr_set_control_group(struct rr_config *cfg, const char *s, char *err,
			 size_t errlen)
{
	if (!*s || strlen(s) >= sizeof(cfg->control_group))
		return rr_errf(err, errlen, "bad control group '%s'", s);
	strcpy(cfg->control_group, s);
	return 0;
}

int rr_config_init(struct rr_config *cfg, char *err, size_t errlen)
{
	size_t i, n = rr_registry_count();
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->threads = 1;
	cfg->batch = RR_DEFAULT_BATCH;
	cfg->mode = RR_MODE_AUTO;
	ret = rr_registry_check(err, errlen);
	if (ret)
		return ret;
	if (n > sizeof(cfg->services) / sizeof(cfg->services[0]))
		return rr_errf(err, errlen,
			       "too many registered functions (%zu)", n);
	for (i = 0; i < n; i++) {
		cfg->services[i].fn = rr_registry_at(i);
		cfg->services[i].port = cfg->services[i].fn->port;
		cfg->services[i].enabled = true;
		cfg->services[i].max_amplification = RR_DEFAULT_AMPLIFICATION;
		cfg->services[i].tier = RR_TIER_AUTO;
		cfg->services[i].cache =
			cfg->services[i].fn->flags & RR_FN_PURE;
		cfg->services[i].cache_ttl = RR_DEFAULT_CACHE_TTL;
		cfg->services[i].cache_max_payload = RR_CACHE_MAX_PAYLOAD;
		cfg->services[i].xdp_max_payload = RR_XDP_MAX_PAYLOAD;
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
	unsigned int line; /* of the line inih last read */
};

/* inih's reader, counting lines: a function's settings carry theirs. */
static char *read_line(char *buf, int size, void *user)
{
	struct ini_ctx *c = user;

	if (!fgets(buf, size, c->f))
		return NULL;
	c->line++;
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

void rr_config_free(struct rr_config *cfg)
{
	uint32_t i, j;

	for (i = 0; i < cfg->nservices; i++) {
		for (j = 0; j < cfg->services[i].nsettings; j++) {
			free((char *)cfg->services[i].settings[j].key);
			free((char *)cfg->services[i].settings[j].value);
		}
		cfg->services[i].nsettings = 0;
	}
}

static int main_key(struct ini_ctx *c, const char *key, const char *val,
		    char *err, size_t errlen)
{
	struct rr_config *cfg = c->cfg;

	if (!strcmp(key, "interface"))
		return rr_set_ifname(cfg, val, err, errlen);
	if (!strcmp(key, "queues"))
		return rr_parse_u32(val, 1, RR_MAX_QUEUES, &cfg->queues,
				    "queues", err, errlen);
	if (!strcmp(key, "threads"))
		return rr_parse_u32(val, 1, RR_MAX_THREADS, &cfg->threads,
				    "threads", err, errlen);
	if (!strcmp(key, "batch"))
		return rr_parse_u32(val, 1, RR_MAX_BATCH, &cfg->batch, "batch",
				    err, errlen);
	if (!strcmp(key, "cpus"))
		return rr_parse_cpus(val, cfg->cpus, &cfg->ncpus, err, errlen);
	if (!strcmp(key, "mode"))
		return rr_parse_mode(val, &cfg->mode, err, errlen);
	if (!strcmp(key, "tx_csum"))
		return rr_parse_tx_csum(val, &cfg->tx_csum, err, errlen);
	if (!strcmp(key, "drain_on_term"))
		return rr_parse_bool(val, &cfg->drain_on_term, "drain_on_term",
				     err, errlen);
	if (!strcmp(key, "busy_poll"))
		return rr_parse_bool(val, &cfg->busy_poll, "busy_poll", err,
				     errlen);
	if (!strcmp(key, "user")) {
		if (!*val || strlen(val) >= sizeof(cfg->user))
			return rr_errf(err, errlen, "bad user '%s'", val);
		strcpy(cfg->user, val);
		return 0;
	}
	if (!strcmp(key, "control"))
		return rr_set_control(cfg, val, err, errlen);
	if (!strcmp(key, "functions_dir")) {
		if (!*val || strlen(val) >= sizeof(cfg->functions_dir))
			return rr_errf(err, errlen, "bad functions_dir '%s'",
				       val);
		strcpy(cfg->functions_dir, val);
		return 0;
	}
	if (!strcmp(key, "control_group"))
		return rr_set_control_group(cfg, val, err, errlen);
	if (!strcmp(key, "metrics_listen"))
		return rr_set_metrics_listen(cfg, val, err, errlen);
	if (!strcmp(key, "metrics_file")) {
		if (strlen(val) >= sizeof(cfg->metrics_file))
			return rr_errf(err, errlen, "metrics_file is too long");
		strcpy(cfg->metrics_file, val);
		return 0;
	}
	return rr_errf(err, errlen, "unknown key '%s' in [reqrouter]", key);
}

static int function_key(struct ini_ctx *c, const char *name, const char *key,
			const char *val, char *err, size_t errlen)
{
	struct rr_service *svc = rr_config_service_named(c->cfg, name);
	uint32_t port;

	if (!svc)
		return rr_errf(err, errlen,
			       "no function named '%s' is registered", name);
	svc->configured = true;
	if (!strcmp(key, "port")) {
		if (rr_parse_u32(val, 1, 65535, &port, "port", err, errlen))
			return -EINVAL;
		svc->port = (uint16_t)port;
		return 0;
	}
	if (!strcmp(key, "enabled"))
		return rr_parse_bool(val, &svc->enabled, "enabled", err,
				     errlen);
	if (!strcmp(key, "max_amplification"))
		return rr_parse_u32(val, 0, RR_MAX_AMPLIFICATION,
				    &svc->max_amplification,
				    "max_amplification", err, errlen);
	if (!strcmp(key, "allow"))
		return rr_parse_cidrs(val, svc->allow, RR_MAX_ALLOW_PER_FN,
				      &svc->nallow, err, errlen);
	if (!strcmp(key, "tier"))
		return rr_parse_tier(val, &svc->tier, err, errlen);
	if (!strcmp(key, "cache")) {
		if (rr_parse_bool(val, &svc->cache, "cache", err, errlen))
			return -EINVAL;
		if (svc->cache && !(svc->fn->flags & RR_FN_PURE))
			return rr_errf(
				err, errlen,
				"function '%s' is not declared pure (RR_FN_PURE): its replies cannot be cached",
				name);
		return 0;
	}
	if (!strcmp(key, "cache_ttl"))
		return rr_parse_u32(val, 0, RR_MAX_CACHE_TTL, &svc->cache_ttl,
				    "cache_ttl (seconds)", err, errlen);
	if (!strcmp(key, "xdp_max_payload"))
		return rr_parse_u32(val, 0, RR_XDP_MAX_PAYLOAD,
				    &svc->xdp_max_payload,
				    "xdp_max_payload (bytes)", err, errlen);
	if (!strcmp(key, "cache_max_payload"))
		return rr_parse_u32(val, 1, RR_CACHE_MAX_PAYLOAD,
				    &svc->cache_max_payload,
				    "cache_max_payload (bytes)", err, errlen);
	/* Any other key is the function's own, if it takes settings. */
	if (svc->fn->init)
		return add_setting(c, svc, key, val, err, errlen);
	return rr_errf(err, errlen, "unknown key '%s' in [function %s]", key,
		       name);
}

static int on_ini_line(void *user, const char *section, const char *key,
		       const char *val)
{
	struct ini_ctx *c = user;
	char msg[RR_ERRLEN];
	int ret;

	if (!strcmp(section, "reqrouter"))
		ret = main_key(c, key, val, msg, sizeof(msg));
	else if (!strncmp(section, "function ", 9))
		ret = function_key(c, section + 9, key, val, msg, sizeof(msg));
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

int rr_config_load(struct rr_config *cfg, const char *path, char *err,
		   size_t errlen)
{
	struct ini_ctx c = { cfg, path, err, errlen, 0, NULL, 0 };
	char msg[RR_ERRLEN];
	struct stat st;
	int line, ret;
	FILE *f;

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
	if (path != cfg->config_file)
		snprintf(cfg->config_file, sizeof(cfg->config_file), "%s",
			 path);
	/* The settings point at the path: use the copy that lives on. */
	c.path = cfg->config_file;
	c.f = f;
	line = ini_parse_stream(read_line, &c, on_ini_line, &c);
	fclose(f);
	if (line) {
		snprintf(msg, sizeof(msg), "%s",
			 c.failed ? err : "syntax error");
		return rr_errf(err, errlen, "%s:%d: %s", path, line, msg);
	}
	return 0;
}

int rr_config_finish(struct rr_config *cfg, char *err, size_t errlen)
{
	uint32_t i, j, served = 0, allow4 = 0, allow6 = 0;
	bool found;

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
		for (j = 0; j < i; j++) {
			if (cfg->services[j].enabled &&
			    cfg->services[j].port == svc->port)
				return rr_errf(
					err, errlen,
					"functions '%s' and '%s' are both on port %u",
					cfg->services[j].fn->name,
					svc->fn->name, svc->port);
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
	if (served > RR_MAX_PORTS)
		return rr_errf(err, errlen,
			       "at most %u functions can be served",
			       RR_MAX_PORTS);
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
