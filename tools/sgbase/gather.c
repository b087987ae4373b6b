// SPDX-License-Identifier: GPL-2.0
/*
 * The gather table the engines share: which gathers are out, matching a
 * reply to its gather and target, the reduction, the deadlines, and the
 * reply to the client in the format reqrouter's fan-out function answers
 * with (the contract the client checks):
 *
 *   sum:    "VALUE ANSWERED/TARGETS[ missed I,J,K]\n"
 *   concat: each body and "\n", in order of arrival, then the same line
 *           without VALUE: "ANSWERED/TARGETS[ missed I,J,K]\n"
 *
 * The missed list names at most SG_MISSED_LISTED targets, ascending, then
 * ",...". A sum counts a reply only if its body starts with a value
 * (rr_gather.h: 1-19 ASCII digits); one without is seen (its duplicates
 * are ignored) but missed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "sgbase.h"

static void list_del(struct sg_slot *s)
{
	s->prev->next = s->next;
	s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void list_add_tail(struct sg_slot *head, struct sg_slot *s)
{
	s->prev = head->prev;
	s->next = head;
	head->prev->next = s;
	head->prev = s;
}

int sg_table_init(struct sg_table *t, const struct sg_serve_cfg *cfg)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->cfg = cfg;
	t->slots = calloc(cfg->max_gathers, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->active.prev = t->active.next = &t->active;
	/* Slot 0 on top of the free list: a light load reuses few slots. */
	for (i = cfg->max_gathers; i-- > 0;) {
		t->slots[i].idx = i;
		t->slots[i].gen = 1;
		t->slots[i].next = t->free_list;
		t->free_list = &t->slots[i];
	}
	return 0;
}

void sg_table_free(struct sg_table *t)
{
	uint32_t i;

	if (!t->slots)
		return;
	for (i = 0; i < t->cfg->max_gathers; i++) {
		free(t->slots[i].cat);
		free(t->slots[i].reply);
		free(t->slots[i].out);
	}
	free(t->slots);
	t->slots = NULL;
}

struct sg_slot *sg_start(struct sg_table *t, const void *payload, size_t len,
			 const struct sockaddr *client, socklen_t client_len,
			 uint64_t now)
{
	uint32_t words = (t->cfg->targets.n + 63) / 64;
	struct sg_slot *s = t->free_list;

	t->st.requests++;
	if (!s || len > SG_MAX_PAYLOAD || client_len > sizeof(s->client)) {
		t->st.refused++;
		return NULL;
	}
	/* Buffers are made on a slot's first use and kept: only as many
	 * slots as gathers ever out at once cost memory. */
	if (!s->reply) {
		s->reply = malloc(SG_MAX_REPLY);
		if (!s->reply) {
			t->st.refused++;
			return NULL;
		}
	}
	if (t->cfg->reduce == SG_CONCAT && !s->cat) {
		s->cat = malloc(SG_MAX_REPLY);
		if (!s->cat) {
			t->st.refused++;
			return NULL;
		}
	}
	t->free_list = s->next;
	s->active = true;
	s->seen = s->answered = 0;
	s->sum = 0;
	s->cat_len = 0;
	s->reply_len = 0;
	s->next_send = 0;
	s->deadline_ns = now + t->cfg->deadline_ns;
	memcpy(&s->client, client, client_len);
	s->client_len = client_len;
	memcpy(s->payload, payload, len);
	s->plen = (uint16_t)len;
	memset(s->seen_map, 0, words * sizeof(uint64_t));
	memset(s->answered_map, 0, words * sizeof(uint64_t));
	list_add_tail(&t->active, s);
	t->nactive++;
	return s;
}

void sg_hdr_fill(struct rr_sg_hdr *h, const struct sg_slot *s, uint32_t i)
{
	h->magic = htonl(RR_SG_MAGIC);
	h->gather = htonl(s->idx);
	h->gen = htonl(s->gen);
	h->target = htons((uint16_t)i);
	h->flags = 0;
}

/* Did @from send it: the target's own address and port? */
static bool from_target(const struct sg_targets *tg, uint32_t i,
			const struct sockaddr *from, socklen_t fromlen)
{
	const struct sockaddr_storage *want = &tg->sa[i];

	if (from->sa_family != tg->family || fromlen < tg->salen)
		return false;
	if (tg->family == AF_INET) {
		const struct sockaddr_in *a = (const void *)from;
		const struct sockaddr_in *b = (const void *)want;

		return a->sin_addr.s_addr == b->sin_addr.s_addr &&
		       a->sin_port == b->sin_port;
	}
	const struct sockaddr_in6 *a = (const void *)from;
	const struct sockaddr_in6 *b = (const void *)want;

	return a->sin6_port == b->sin6_port &&
	       !memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(a->sin6_addr));
}

/* The body's value as rr_gather.h defines it; false without one. */
static bool body_value(const uint8_t *p, size_t len, uint64_t *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < len && i < RR_SG_VALUE_DIGITS; i++) {
		if (p[i] < '0' || p[i] > '9')
			break;
		*v = *v * 10 + (uint64_t)(p[i] - '0');
	}
	return i > 0;
}

struct sg_slot *sg_reply(struct sg_table *t, const uint8_t *buf, size_t len,
			 const struct sockaddr *from, socklen_t fromlen)
{
	const struct sg_targets *tg = &t->cfg->targets;
	const struct rr_sg_hdr *h = (const void *)buf;
	uint32_t gather, target, word;
	uint64_t bit, v;
	struct sg_slot *s;

	t->st.replies++;
	if (len < SG_HDR_LEN || h->magic != htonl(RR_SG_MAGIC)) {
		t->st.bad++;
		return NULL;
	}
	gather = ntohl(h->gather);
	target = ntohs(h->target);
	if (gather >= t->cfg->max_gathers || target >= tg->n) {
		t->st.bad++;
		return NULL;
	}
	if (!from_target(tg, target, from, fromlen)) {
		t->st.foreign++;
		return NULL;
	}
	s = &t->slots[gather];
	if (!s->active || s->gen != ntohl(h->gen)) {
		t->st.late++;
		return NULL;
	}
	word = target / 64;
	bit = 1ULL << (target % 64);
	if (s->seen_map[word] & bit) {
		t->st.dup++;
		return NULL;
	}
	s->seen_map[word] |= bit;
	s->seen++;
	buf += SG_HDR_LEN;
	len -= SG_HDR_LEN;
	if (t->cfg->reduce == SG_SUM) {
		if (body_value(buf, len, &v)) {
			s->sum += v;
			s->answered++;
			s->answered_map[word] |= bit;
		}
	} else {
		s->answered++;
		s->answered_map[word] |= bit;
		if (s->cat_len + len + 1 <= SG_MAX_REPLY - SG_LINE_ROOM) {
			memcpy(s->cat + s->cat_len, buf, len);
			s->cat_len += (uint32_t)len;
			s->cat[s->cat_len++] = '\n';
		} else {
			t->st.truncated++;
		}
	}
	return s->seen == tg->n ? s : NULL;
}

struct sg_slot *sg_expired(struct sg_table *t, uint64_t now)
{
	struct sg_slot *s = t->active.next;

	if (s == &t->active || s->deadline_ns > now)
		return NULL;
	return s;
}

int64_t sg_next_deadline(const struct sg_table *t, uint64_t now)
{
	const struct sg_slot *s = t->active.next;

	if (s == &t->active)
		return -1;
	return s->deadline_ns > now ? (int64_t)(s->deadline_ns - now) : 0;
}

/* " missed I,J,K" for the targets the reduction did not count. */
static int missed_list(const struct sg_slot *s, uint32_t n, char *p,
		       size_t room)
{
	uint32_t i, listed = 0;
	int len = 0;

	if (s->answered == n)
		return 0;
	len += snprintf(p, room, " missed ");
	for (i = 0; i < n; i++) {
		if (s->answered_map[i / 64] & (1ULL << (i % 64)))
			continue;
		if (listed == SG_MISSED_LISTED) {
			len += snprintf(p + len, room - (size_t)len, ",...");
			break;
		}
		len += snprintf(p + len, room - (size_t)len, "%s%u",
				listed ? "," : "", i);
		listed++;
	}
	return len;
}

void sg_finish(struct sg_table *t, struct sg_slot *s)
{
	uint32_t n = t->cfg->targets.n;
	char *p = s->reply;
	size_t len = 0;

	if (t->cfg->reduce == SG_SUM) {
		len += (size_t)snprintf(p, SG_LINE_ROOM, "%llu ",
					(unsigned long long)s->sum);
	} else {
		memcpy(p, s->cat, s->cat_len);
		len = s->cat_len;
	}
	len += (size_t)snprintf(p + len, SG_MAX_REPLY - len, "%u/%u",
				s->answered, n);
	len += (size_t)missed_list(s, n, p + len, SG_MAX_REPLY - len - 1);
	p[len++] = '\n';
	s->reply_len = (uint32_t)len;
	if (s->seen == n)
		t->st.complete++;
	else
		t->st.partial++;
	list_del(s);
	t->nactive--;
	s->active = false;
	s->gen++;
}

void sg_release(struct sg_table *t, struct sg_slot *s)
{
	s->next = t->free_list;
	t->free_list = s;
}

void sg_stats_print(const struct sg_table *t, const char *engine)
{
	const struct sg_stats *st = &t->st;

	fprintf(stderr,
		"%s: %s: requests=%llu refused=%llu complete=%llu partial=%llu replies=%llu late=%llu dup=%llu foreign=%llu bad=%llu send_errors=%llu truncated=%llu\n",
		SG_PROG, engine, (unsigned long long)st->requests,
		(unsigned long long)st->refused,
		(unsigned long long)st->complete,
		(unsigned long long)st->partial,
		(unsigned long long)st->replies, (unsigned long long)st->late,
		(unsigned long long)st->dup, (unsigned long long)st->foreign,
		(unsigned long long)st->bad,
		(unsigned long long)st->send_errors,
		(unsigned long long)st->truncated);
}
