// SPDX-License-Identifier: GPL-2.0
/*
 * kv: answers a key with its value from a table loaded at start-up and
 * re-loaded on SIGHUP, and stores what it is sent where the config lets
 * it: the example of a function with settings, state that every worker
 * shares, and counters (function API 2).
 *
 *	[function kv]
 *	table = /etc/reqrouter/kv.txt
 *	writable = no	; yes: SET and DEL requests change the table
 *	capacity = 4096	; keys it holds at most (default: 4096, or twice
 *			; the table file's lines if that is more)
 *
 * The table file has one "KEY VALUE" per line (the value is the rest of
 * the line; '#' starts a comment line). A request is a key; the reply is
 * its value, or empty for a key that is not there. An empty request is not
 * answered. With writable = yes, "SET KEY VALUE" stores a value (the reply
 * is "OK", or "ERR full", "ERR too long", "ERR no key") and "DEL KEY"
 * deletes one ("OK"); a key holds no blank, so neither can be a key. The
 * table file may then be left out: the table starts empty. Without
 * writable, SET and DEL requests are keys like any other that are not
 * there. Replies depend on the table, so the function is not pure.
 *
 * The table lives in rr_fn_shared_alloc() memory, so that what one worker
 * writes every worker reads, cells included, under one robust
 * process-shared lock (which reads skip when nothing may write). A reload (or a deploy of kv) builds a new table
 * from the file: writes made since are dropped, and nothing is ever
 * written to the file. Cells forked anew for other reasons keep the table.
 *
 * Layout: an index of record numbers (open addressing, linear probing,
 * tombstones), with twice as many slots as keys, and a pool of records
 * that hold key and value inline. A record is filled while nothing points
 * at it, published by one store into the index and retired by another, so
 * a cell killed in the middle of a write leaves the old value or the new
 * one, never a mix. What else it may leave (a record lost to the pool,
 * counts off by one) the next taker of the lock recounts from the index.
 * Tombstones are swept by rebuilding the index into a spare one and
 * switching to it with one store.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <reqrouter/rr_function.h>

#define KV_MAX_KEY 255
#define KV_MAX_VALUE 1024
#define KV_MIN_CAPACITY 4096
#define KV_MAX_CAPACITY (1U << 20)

/* @n rounded up to whole cache lines. */
#define KV_LINE(n) (((n) + 63) & ~(size_t)63)

/* kv_slot.rec of a deleted key; 0 is a slot never used. */
#define KV_TOMB UINT32_MAX
/* kv_table.link[] of a record in use, while the pool is recounted. */
#define KV_IN_USE UINT32_MAX

/* An index slot: 0, KV_TOMB, or a record number + 1, with 32 bits of the
 * key's hash (the low ones say where its probe starts). */
struct kv_slot {
	uint32_t rec;
	uint32_t hash;
};

struct kv_rec {
	uint16_t klen, vlen;
	char key[KV_MAX_KEY];
	char value[KV_MAX_VALUE];
};

/* The part of the shared memory that changes, under lock. */
struct kv_shared {
	rr_fn_lock_t lock;
	uint32_t active;      /* the index in use: 0 or 1 */
	uint32_t used, tombs; /* keys and tombstones in it */
	uint32_t free;	      /* first free record + 1; 0: none */
};

/* init()'s own memory, never written after: where the shared parts are.
 * Each cell has a copy, pointing at the same shared memory. */
struct kv_table {
	struct kv_shared *sh;
	struct kv_slot *index[2]; /* [mask + 1] each */
	uint32_t *link;		  /* [nrecs]: free record's next + 1 */
	struct kv_rec *recs;	  /* [nrecs] */
	uint32_t mask, nrecs, capacity;
	bool writable;
	int hits, misses, sets, deletes; /* counter indexes */
};

static uint32_t kv_hash(const void *key, size_t len)
{
	const uint8_t *p = key;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	while (len--) {
		h ^= *p++;
		h *= 1099511628211ULL;
	}
	return (uint32_t)(h ^ (h >> 32));
}

static struct kv_rec *kv_rec(const struct kv_table *t, uint32_t rec)
{
	return &t->recs[rec - 1];
}

/*
 * Under the lock: the slot of @key in the active index, or NULL with
 * *room (if given) the first slot on its probe that a new key may take
 * (NULL if none: the index is never that full).
 */
static struct kv_slot *kv_find(const struct kv_table *t, const void *key,
			       size_t klen, uint32_t hash,
			       struct kv_slot **room)
{
	struct kv_slot *ix = t->index[t->sh->active], *first = NULL;
	const struct kv_rec *r;
	uint32_t i = hash & t->mask, n;

	for (n = 0; n <= t->mask; n++, i = (i + 1) & t->mask) {
		if (!ix[i].rec || ix[i].rec == KV_TOMB) {
			if (!first)
				first = &ix[i];
			if (!ix[i].rec)
				break;
			continue;
		}
		r = kv_rec(t, ix[i].rec);
		if (ix[i].hash == hash && r->klen == klen &&
		    !memcmp(r->key, key, klen))
			return &ix[i];
	}
	if (room)
		*room = first;
	return NULL;
}

static uint32_t kv_rec_take(const struct kv_table *t)
{
	uint32_t rec = t->sh->free;

	if (rec)
		t->sh->free = t->link[rec - 1];
	return rec;
}

static void kv_rec_put(const struct kv_table *t, uint32_t rec)
{
	t->link[rec - 1] = t->sh->free;
	t->sh->free = rec;
}

/*
 * The lock's last holder died: the active index is right (it changes by
 * single stores), the rest is made from it again. No record is touched.
 */
static void kv_repair(const struct kv_table *t)
{
	const struct kv_slot *ix = t->index[t->sh->active];
	uint32_t i, rec;

	memset(t->link, 0, t->nrecs * sizeof(*t->link));
	t->sh->used = 0;
	t->sh->tombs = 0;
	for (i = 0; i <= t->mask; i++) {
		rec = ix[i].rec;
		if (rec == KV_TOMB) {
			t->sh->tombs++;
		} else if (rec) {
			t->link[rec - 1] = KV_IN_USE;
			t->sh->used++;
		}
	}
	t->sh->free = 0;
	for (rec = t->nrecs; rec > 0; rec--)
		if (t->link[rec - 1] != KV_IN_USE)
			kv_rec_put(t, rec);
}

static int kv_lock(const struct kv_table *t)
{
	int ret = rr_fn_lock(&t->sh->lock);

	if (ret == RR_FN_LOCK_RECOVERED) {
		kv_repair(t);
		ret = 0;
	}
	return ret;
}

static void kv_unlock(const struct kv_table *t)
{
	rr_fn_unlock(&t->sh->lock);
}

/* The live keys into the spare index, which then serves. Under lock. */
static void kv_sweep(const struct kv_table *t)
{
	uint32_t from = t->sh->active, i, j;
	const struct kv_slot *old = t->index[from];
	struct kv_slot *ix = t->index[!from];

	memset(ix, 0, (t->mask + 1) * sizeof(*ix));
	for (i = 0; i <= t->mask; i++) {
		if (!old[i].rec || old[i].rec == KV_TOMB)
			continue;
		j = old[i].hash & t->mask;
		while (ix[j].rec)
			j = (j + 1) & t->mask;
		ix[j] = old[i];
	}
	__atomic_store_n(&t->sh->active, !from, __ATOMIC_RELEASE);
	t->sh->tombs = 0;
}

/* Under the lock: @key = @value. Returns NULL, or the reply that says why
 * not. */
static const char *kv_store(const struct kv_table *t, const void *key,
			    size_t klen, const void *value, size_t vlen)
{
	uint32_t hash = kv_hash(key, klen), rec, old;
	struct kv_slot *s, *room = NULL;
	struct kv_rec *r;

	s = kv_find(t, key, klen, hash, &room);
	if (!s && (t->sh->used >= t->capacity || !room))
		return "ERR full";
	/* One record more than capacity: a replaced value has room. */
	rec = kv_rec_take(t);
	if (!rec)
		return "ERR full";
	r = kv_rec(t, rec);
	memcpy(r->key, key, klen);
	r->klen = (uint16_t)klen;
	memcpy(r->value, value, vlen);
	r->vlen = (uint16_t)vlen;
	if (s) {
		old = s->rec;
		__atomic_store_n(&s->rec, rec, __ATOMIC_RELEASE);
		kv_rec_put(t, old);
		return NULL;
	}
	if (room->rec == KV_TOMB)
		t->sh->tombs--;
	room->hash = hash;
	__atomic_store_n(&room->rec, rec, __ATOMIC_RELEASE);
	t->sh->used++;
	return NULL;
}

/* Under the lock. Returns whether @key was there. */
static bool kv_delete(const struct kv_table *t, const void *key, size_t klen)
{
	struct kv_slot *s = kv_find(t, key, klen, kv_hash(key, klen), NULL);
	uint32_t rec;

	if (!s)
		return false;
	rec = s->rec;
	__atomic_store_n(&s->rec, KV_TOMB, __ATOMIC_RELEASE);
	t->sh->tombs++;
	t->sh->used--;
	kv_rec_put(t, rec);
	/* Keys fill at most half the slots, tombstones a quarter: a probe
	 * always meets an empty slot. */
	if (t->sh->tombs > (t->mask + 1) / 4)
		kv_sweep(t);
	return true;
}

/* The shared memory for @capacity keys, empty. */
static int kv_alloc(const struct rr_fn_config *cfg, struct kv_table *t,
		    uint32_t capacity)
{
	size_t slots, off_ix, off_link, off_recs, size;
	uint8_t *mem;
	int ret;

	t->capacity = capacity;
	t->nrecs = capacity + 1;
	t->mask = 15;
	while (t->mask + 1 < 2 * capacity)
		t->mask = t->mask * 2 + 1;
	slots = (size_t)t->mask + 1;
	off_ix = KV_LINE(sizeof(struct kv_shared));
	off_link = off_ix + 2 * slots * sizeof(struct kv_slot);
	off_recs = off_link + KV_LINE(t->nrecs * sizeof(uint32_t));
	size = off_recs + t->nrecs * sizeof(struct kv_rec);
	mem = rr_fn_shared_alloc(cfg, size);
	if (!mem)
		return -ENOMEM;
	t->sh = (struct kv_shared *)mem;
	t->index[0] = (struct kv_slot *)(mem + off_ix);
	t->index[1] = t->index[0] + slots;
	t->link = (uint32_t *)(mem + off_link);
	t->recs = (struct kv_rec *)(mem + off_recs);
	ret = rr_fn_lock_init(&t->sh->lock);
	if (ret)
		return rr_fn_error(cfg, NULL, "cannot make its lock: %s",
				   strerror(-ret));
	kv_repair(t); /* every record into the pool */
	return 0;
}

/* One "KEY VALUE" line into t. */
static int kv_add(const struct rr_fn_config *cfg, const struct rr_fn_setting *s,
		  struct kv_table *t, char *line, unsigned int lineno)
{
	char *key = line, *value;
	size_t klen, vlen;

	klen = strcspn(key, " \t");
	value = key + klen + strspn(key + klen, " \t");
	vlen = strlen(value);
	if (klen > KV_MAX_KEY || vlen > KV_MAX_VALUE)
		return rr_fn_error(cfg, s, "%s:%u: key or value too long",
				   s->value, lineno);
	if (kv_find(t, key, klen, kv_hash(key, klen), NULL))
		return rr_fn_error(cfg, s, "%s:%u: key '%.*s' given twice",
				   s->value, lineno, (int)klen, key);
	if (kv_store(t, key, klen, value, vlen))
		return rr_fn_error(cfg, s,
				   "%s:%u: more keys than capacity = %u",
				   s->value, lineno, t->capacity);
	return 0;
}

/* The table file, or none, into a table of @capacity keys (0: as many
 * as the default for the file's size). */
static int kv_load(const struct rr_fn_config *cfg,
		   const struct rr_fn_setting *s, struct kv_table *t,
		   uint32_t capacity)
{
	char line[KV_MAX_KEY + KV_MAX_VALUE + 8];
	unsigned int lineno = 0;
	size_t lines = 0;
	FILE *f = NULL;
	int ret = 0;

	if (s) {
		f = fopen(s->value, "r");
		if (!f)
			return rr_fn_error(cfg, s, "cannot open table %s: %s",
					   s->value, strerror(errno));
		while (fgets(line, sizeof(line), f))
			lines++;
		rewind(f);
	}
	if (!capacity)
		capacity = lines > KV_MIN_CAPACITY / 2 ? 2 * lines
						       : KV_MIN_CAPACITY;
	if (capacity > KV_MAX_CAPACITY)
		ret = rr_fn_error(cfg, s, "%s: more than %u lines", s->value,
				  KV_MAX_CAPACITY / 2);
	if (!ret)
		ret = kv_alloc(cfg, t, capacity);
	while (f && !ret && fgets(line, sizeof(line), f)) {
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
	if (f)
		fclose(f);
	return ret;
}

static int kv_parse_capacity(const struct rr_fn_config *cfg,
			     const struct rr_fn_setting *s, uint32_t *out)
{
	uint64_t v;
	int ret;

	ret = rr_fn_setting_uint(cfg, s, 1, KV_MAX_CAPACITY, &v);
	if (!ret)
		*out = (uint32_t)v;
	return ret;
}

static int kv_counter(const struct rr_fn_config *cfg, int *idx,
		      const char *name, const char *help)
{
	*idx = rr_fn_counter(cfg, name, help);
	return *idx < 0 ? *idx : 0;
}

static void kv_fini(void *state)
{
	free(state); /* the shared memory is reqrouter's to unmap */
}

static int kv_init(const struct rr_fn_config *cfg, void **state)
{
	const struct rr_fn_setting *s, *table = NULL;
	uint32_t capacity = 0;
	bool writable = false;
	struct kv_table *t;
	size_t i;
	int ret = 0;

	for (i = 0; i < cfg->nsettings && !ret; i++) {
		s = &cfg->settings[i];
		if (!strcmp(s->key, "table"))
			table = s;
		else if (!strcmp(s->key, "writable"))
			ret = rr_fn_setting_bool(cfg, s, &writable);
		else if (!strcmp(s->key, "capacity"))
			ret = kv_parse_capacity(cfg, s, &capacity);
		else
			ret = rr_fn_error(
				cfg, s,
				"unknown key '%s' (kv takes: table, writable, capacity)",
				s->key);
	}
	if (ret)
		return ret;
	if (!table && !writable)
		return rr_fn_error(cfg, NULL,
				   "needs 'table = FILE' (or writable = yes)");
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->writable = writable;
	ret = kv_load(cfg, table, t, capacity);
	if (!ret)
		ret = kv_counter(cfg, &t->hits, "kv_hits",
				 "Keys found in the table.");
	if (!ret)
		ret = kv_counter(cfg, &t->misses, "kv_misses",
				 "Keys not in the table.");
	if (!ret && writable)
		ret = kv_counter(cfg, &t->sets, "kv_sets",
				 "Values stored by SET requests.");
	if (!ret && writable)
		ret = kv_counter(cfg, &t->deletes, "kv_deletes",
				 "Keys deleted by DEL requests.");
	if (ret) {
		kv_fini(t);
		return ret;
	}
	*state = t;
	return 0;
}

/* What splits a key from its value, as in the table file. */
static bool kv_blank(uint8_t c)
{
	return c == ' ' || c == '\t';
}

/* "SET KEY VALUE" or "DEL KEY" (@len >= 4): the reply, in @buf. */
static int kv_write(const struct rr_request *req, const struct kv_table *t,
		    uint8_t *buf, size_t len, size_t room)
{
	bool set = buf[0] == 'S';
	const uint8_t *key = buf + 4, *value, *end = buf + len;
	const char *why = NULL;
	size_t klen, vlen, n;
	int ret;

	klen = 0;
	while (key + klen < end && !kv_blank(key[klen]))
		klen++;
	value = key + klen;
	while (value < end && kv_blank(*value))
		value++;
	vlen = (size_t)(end - value);
	if (!klen)
		why = "ERR no key";
	else if (klen > KV_MAX_KEY || vlen > KV_MAX_VALUE)
		why = "ERR too long";
	else if (!set && vlen)
		why = "ERR DEL takes a key alone";
	if (!why) {
		ret = kv_lock(t);
		if (ret < 0)
			return ret;
		if (set)
			why = kv_store(t, key, klen, value, vlen);
		else if (kv_delete(t, key, klen))
			rr_fn_count(req, t->deletes, 1);
		kv_unlock(t);
		if (set && !why)
			rr_fn_count(req, t->sets, 1);
	}
	if (!why)
		why = "OK";
	n = strlen(why);
	if (n > room)
		return -EMSGSIZE;
	memcpy(buf, why, n);
	return (int)n;
}

/* The value of @key into @buf: its length, -ENOENT for a key not there,
 * or another -errno. Read-only, the table needs no lock: nobody writes to it. */
static int kv_get(const struct kv_table *t, uint8_t *buf, size_t len,
		  size_t room)
{
	const struct kv_slot *s;
	const struct kv_rec *r;
	int ret;

	if (t->writable) {
		ret = kv_lock(t);
		if (ret < 0)
			return ret;
	}
	s = kv_find(t, buf, len, kv_hash(buf, len), NULL);
	if (!s) {
		ret = -ENOENT;
	} else {
		r = kv_rec(t, s->rec);
		ret = r->vlen > room ? -EMSGSIZE : r->vlen;
		if (ret > 0)
			memcpy(buf, r->value, r->vlen);
	}
	if (t->writable)
		kv_unlock(t);
	return ret;
}

static int kv_handler(const struct rr_request *req, uint8_t *buf, size_t len,
		      size_t room)
{
	const struct kv_table *t = req->state;
	int ret;

	if (!len)
		return RR_NO_REPLY;
	if (t->writable && len >= 4 &&
	    (!memcmp(buf, "SET ", 4) || !memcmp(buf, "DEL ", 4)))
		return kv_write(req, t, buf, len, room);
	ret = len > KV_MAX_KEY ? -ENOENT : kv_get(t, buf, len, room);
	if (ret == -ENOENT) {
		rr_fn_count(req, t->misses, 1);
		return 0;
	}
	if (ret >= 0)
		rr_fn_count(req, t->hits, 1);
	return ret;
}

RR_FUNCTION_DEF(kv, 7379, "look a key up in a table (reloaded on SIGHUP)",
		.handler = kv_handler, .init = kv_init, .fini = kv_fini,
		.flags = RR_FN_OPT_IN);
