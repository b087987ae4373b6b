// SPDX-License-Identifier: GPL-2.0
/*
 * kv: answers a key with its value from a table loaded at start-up and
 * re-loaded on SIGHUP: the example of a function with settings, state
 * and counters (function API 2).
 *
 *	[function kv]
 *	table = /etc/reqrouter/kv.txt
 *
 * The table has one "KEY VALUE" per line (the value is the rest of the
 * line; '#' starts a comment line). A request is a key; the reply is its
 * value, or empty for a key that is not there. An empty request is not
 * answered. Replies depend on the table, so the function is not pure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <reqrouter/rr_function.h>

#define KV_MAX_KEY 255
#define KV_MAX_VALUE 1024

struct kv_entry {
	char *key;
	char *value;
	size_t klen, vlen;
};

/* Open addressing, at most half full; read-only once built. */
struct kv_table {
	struct kv_entry *slots;
	size_t mask;
	size_t n;
	int hits, misses; /* counter indexes */
};

static uint64_t kv_hash(const uint8_t *p, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	while (len--) {
		h ^= *p++;
		h *= 1099511628211ULL;
	}
	return h;
}

static struct kv_entry *kv_slot(const struct kv_table *t, const uint8_t *key,
				size_t len)
{
	size_t i = kv_hash(key, len) & t->mask;

	while (t->slots[i].key &&
	       (t->slots[i].klen != len || memcmp(t->slots[i].key, key, len)))
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

static void kv_free(void *state)
{
	struct kv_table *t = state;
	size_t i;

	if (!t)
		return;
	for (i = 0; t->slots && i <= t->mask; i++)
		free(t->slots[i].key); /* value shares the allocation */
	free(t->slots);
	free(t);
}

/* One "KEY VALUE" line into t (which has room: see kv_load). */
static int kv_add(const struct rr_fn_config *cfg, const struct rr_fn_setting *s,
		  struct kv_table *t, char *line, unsigned int lineno)
{
	char *key = line, *value, *copy;
	struct kv_entry *e;
	size_t klen, vlen;

	klen = strcspn(key, " \t");
	value = key + klen + strspn(key + klen, " \t");
	vlen = strlen(value);
	if (klen > KV_MAX_KEY || vlen > KV_MAX_VALUE)
		return rr_fn_error(cfg, s, "%s:%u: key or value too long",
				   s->value, lineno);
	e = kv_slot(t, (const uint8_t *)key, klen);
	if (e->key)
		return rr_fn_error(cfg, s, "%s:%u: key '%.*s' given twice",
				   s->value, lineno, (int)klen, key);
	copy = malloc(klen + vlen + 2);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, key, klen);
	copy[klen] = '\0';
	memcpy(copy + klen + 1, value, vlen + 1);
	e->key = copy;
	e->klen = klen;
	e->value = copy + klen + 1;
	e->vlen = vlen;
	t->n++;
	return 0;
}

static int kv_load(const struct rr_fn_config *cfg,
		   const struct rr_fn_setting *s, struct kv_table *t)
{
	char line[KV_MAX_KEY + KV_MAX_VALUE + 8];
	unsigned int lineno = 0;
	size_t lines = 0;
	FILE *f;
	int ret = 0;

	f = fopen(s->value, "r");
	if (!f)
		return rr_fn_error(cfg, s, "cannot open table %s: %s", s->value,
				   strerror(errno));
	while (fgets(line, sizeof(line), f))
		lines++;
	t->mask = 15;
	while (t->mask + 1 < 2 * lines)
		t->mask = t->mask * 2 + 1;
	t->slots = calloc(t->mask + 1, sizeof(*t->slots));
	if (!t->slots) {
		fclose(f);
		return -ENOMEM;
	}
	rewind(f);
	while (!ret && fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			ret = rr_fn_error(cfg, s, "%s:%u: line too long",
					  s->value, lineno);
			break;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		ret = kv_add(cfg, s, t, line, lineno);
	}
	fclose(f);
	return ret;
}

static int kv_init(const struct rr_fn_config *cfg, void **state)
{
	const struct rr_fn_setting *table = NULL;
	struct kv_table *t;
	size_t i;
	int ret;

	for (i = 0; i < cfg->nsettings; i++) {
		if (strcmp(cfg->settings[i].key, "table"))
			return rr_fn_error(cfg, &cfg->settings[i],
					   "unknown key '%s' (kv takes: table)",
					   cfg->settings[i].key);
		table = &cfg->settings[i];
	}
	if (!table)
		return rr_fn_error(cfg, NULL, "needs 'table = FILE'");
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	ret = kv_load(cfg, table, t);
	if (!ret) {
		t->hits = rr_fn_counter(cfg, "kv_hits",
					"Keys found in the table.");
		t->misses = rr_fn_counter(cfg, "kv_misses",
					  "Keys not in the table.");
		if (t->hits < 0 || t->misses < 0)
			ret = -EINVAL;
	}
	if (ret) {
		kv_free(t);
		return ret;
	}
	*state = t;
	return 0;
}

static int kv_handler(const struct rr_request *req, uint8_t *buf, size_t len,
		      size_t room)
{
	const struct kv_table *t = req->state;
	const struct kv_entry *e;

	if (!len)
		return RR_NO_REPLY;
	if (len > KV_MAX_KEY) {
		rr_fn_count(req, t->misses, 1);
		return 0;
	}
	e = kv_slot(t, buf, len);
	if (!e->key) {
		rr_fn_count(req, t->misses, 1);
		return 0;
	}
	if (e->vlen > room)
		return -EMSGSIZE;
	memcpy(buf, e->value, e->vlen);
	rr_fn_count(req, t->hits, 1);
	return (int)e->vlen;
}

RR_FUNCTION_DEF(kv, 7379, "look a key up in a table (reloaded on SIGHUP)",
		.handler = kv_handler, .init = kv_init, .fini = kv_free,
		.flags = RR_FN_OPT_IN);
