// SPDX-License-Identifier: GPL-2.0
/*
 * shards: one key asked of every kv instance of a group, their values
 * summed or united: a sharded counter or a sharded set, the example of a
 * function that gathers and writes its own reply (gathered(), API 4).
 * Opt-in: served only where the config names the group.
 *
 *	[group kvs]
 *	targets = 10.0.0.1:7379, 10.0.0.2:7379, 10.0.0.3:7379
 *
 *	[function shards]
 *	group = kvs
 *
 * and on each shard, kv with `gather_target = yes` (its requests then
 * come with a gather's header, which reqrouter takes off and puts back).
 *
 * A request is "sum KEY" or "union KEY". For sum, each shard's value
 * (its leading decimal digits; a shard without the key, or with a value
 * that is no number, adds 0) is added up: "TOTAL ANSWERED/ASKED". For
 * union, each value is a list of items separated by ',' and the reply
 * is every item once, in the order the shards' replies came, then the
 * count: "a,b,c ANSWERED/ASKED" ("-" for none). A shard that did not
 * answer by gather_deadline_us is named: " missed I,J" (its index in
 * the group). Anything else gets no reply (counter shards_invalid).
 *
 * The values are gathered whole (RR_REDUCE_CONCAT) and added here, not
 * in XDP: a shard without the key answers an empty value, which counts
 * as 0, where the XDP reductions would count it missing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <reqrouter/rr_function.h>

#define SHARDS_PORT 9015
#define SHARDS_SUM 1
#define SHARDS_UNION 2

struct shards_state {
	int group;
	int invalid; /* counter */
};

static int shards_init(const struct rr_fn_config *cfg, void **state)
{
	const struct rr_fn_setting *s, *group = NULL;
	struct shards_state *st;
	size_t i;

	for (i = 0; i < cfg->nsettings; i++) {
		s = &cfg->settings[i];
		if (strcmp(s->key, "group"))
			return rr_fn_error(
				cfg, s, "unknown key '%s' (shards takes group)",
				s->key);
		group = s;
	}
	if (!group)
		return rr_fn_error(cfg, NULL,
				   "no group: shards needs one (group = NAME)");
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->group = rr_fn_group(cfg, group->value, NULL);
	st->invalid = rr_fn_counter(cfg, "shards_invalid",
				    "requests neither sum KEY nor union KEY");
	if (st->group < 0 || st->invalid < 0) {
		free(st);
		return -EINVAL;
	}
	*state = st;
	return 0;
}

static void shards_fini(void *state)
{
	free(state);
}

static int shards_handler(const struct rr_request *req, uint8_t *buf,
			  size_t len, size_t room)
{
	const struct shards_state *st = req->state;
	struct rr_gather_spec g = { .reduce = RR_REDUCE_CONCAT };
	uint8_t mode;
	size_t skip;

	(void)room;
	if (!st)
		return RR_NO_REPLY;
	if (len > 4 && !memcmp(buf, "sum ", 4)) {
		mode = SHARDS_SUM;
		skip = 4;
	} else if (len > 6 && !memcmp(buf, "union ", 6)) {
		mode = SHARDS_UNION;
		skip = 6;
	} else {
		rr_fn_count(req, st->invalid, 1);
		return RR_NO_REPLY;
	}
	g.group = st->group;
	g.payload = buf + skip;
	g.len = len - skip;
	g.cookie = &mode;
	g.cookie_len = sizeof(mode);
	return rr_gather_start(req, &g);
}

/* Whether @item (@n bytes) is among the items already in @out[0..at). */
static int seen(const uint8_t *out, size_t at, const uint8_t *item, size_t n)
{
	size_t i = 0, e;

	while (i < at) {
		e = i;
		while (e < at && out[e] != ',')
			e++;
		if (e - i == n && !memcmp(out + i, item, n))
			return 1;
		i = e + 1;
	}
	return 0;
}

/* The union of the parts' items into @buf; its length, or -EMSGSIZE. */
static int unite(const struct rr_gather_result *res, uint8_t *buf, size_t room)
{
	const struct rr_gather_part *p;
	size_t off = 0, at = 0, i, e;

	while (off + sizeof(*p) <= res->len) {
		p = (const void *)(res->data + off);
		for (i = 0; i < p->len; i = e + 1) {
			e = i;
			while (e < p->len && p->body[e] != ',')
				e++;
			if (e == i || seen(buf, at, p->body + i, e - i))
				continue;
			if (at + (at ? 1 : 0) + (e - i) > room)
				return -EMSGSIZE;
			if (at)
				buf[at++] = ',';
			memcpy(buf + at, p->body + i, e - i);
			at += e - i;
		}
		off += (sizeof(*p) + p->len + 1) & ~(size_t)1;
	}
	return (int)at;
}

static uint64_t sum(const struct rr_gather_result *res)
{
	const struct rr_gather_part *p;
	uint64_t total = 0, v;
	size_t off = 0, i;

	while (off + sizeof(*p) <= res->len) {
		p = (const void *)(res->data + off);
		v = 0;
		for (i = 0; i < p->len && i < RR_SG_VALUE_DIGITS &&
			    p->body[i] >= '0' && p->body[i] <= '9';
		     i++)
			v = v * 10 + (uint64_t)(p->body[i] - '0');
		total += v;
		off += (sizeof(*p) + p->len + 1) & ~(size_t)1;
	}
	return total;
}

static int shards_gathered(const struct rr_request *req,
			   const struct rr_gather_result *res, uint8_t *buf,
			   size_t room)
{
	struct rr_gather_result counts = *res;
	uint8_t mode = 0;
	int n, m;

	(void)req;
	if (res->cookie_len == 1)
		mode = *(const uint8_t *)res->cookie;
	/* rr_gather_format() writes "VALUE ANSWERED/ASKED missed ...". */
	if (mode == SHARDS_SUM) {
		counts.reduce = RR_REDUCE_SUM;
		counts.value = sum(res);
		return rr_gather_format(&counts, buf, room);
	}
	n = unite(res, buf, room);
	if (n < 0)
		return n;
	if (!n) {
		if (room < 1)
			return -EMSGSIZE;
		buf[n++] = '-';
	}
	if ((size_t)n + 1 > room)
		return -EMSGSIZE;
	buf[n++] = ' ';
	/* The counts line alone: a CONCAT result with no parts. */
	counts.len = 0;
	m = rr_gather_format(&counts, buf + n, room - (size_t)n);
	return m < 0 ? m : n + m;
}

RR_FUNCTION_DEF(shards, SHARDS_PORT,
		"sum or unite one key's values over a group of kv shards",
		.handler = shards_handler, .init = shards_init,
		.fini = shards_fini, .gathered = shards_gathered,
		.flags = RR_FN_OPT_IN | RR_FN_GATHER);
