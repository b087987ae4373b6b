// SPDX-License-Identifier: GPL-2.0
/*
 * Zone loading for the dns function (dns_zone.h). libzscanner reads the
 * master file; what is done with its records follows Knot DNS's zone
 * loader, so that knotd and this function serve the same data from the
 * same file:
 *
 * - owners, and the names inside the RDATA of the types RFC 4034 6.2
 *   lists, are lower-cased;
 * - records outside the zone are left out (knotd warns), a second SOA is
 *   ignored, identical records are kept once, and an RRset's TTL is the
 *   one its last record in the file gave (knotd says "TTL mismatch");
 * - a zone without an SOA at its apex, a CNAME beside other data or more
 *   than one CNAME at a name, and DNAME misuse (a second DNAME, NS beside
 *   it below the apex, names below it) are refused, as knotd's mandatory
 *   semantic checks refuse them;
 * - NS below the apex makes a zone cut, and what is below it is glue.
 *
 * SOA records below the apex are refused here (knotd's handling of them
 * is of no use to anyone); libzscanner itself reads class IN only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns_zone.h"
#include "dns_zone_file.h"

#define NONE UINT32_MAX

/* A node or RRset while the zone is built: offsets, not pointers, since
 * the blob still moves. */
struct bnode {
	uint32_t name;
	uint32_t parent;
	uint32_t wildcard;
	uint32_t rrsets;
	uint32_t children;
	uint16_t nrrsets;
	uint8_t len;
	uint8_t labels;
	uint8_t flags;
};

struct brrset {
	uint32_t node;
	uint32_t rdata;
	uint32_t ttl;
	uint32_t line;
	uint32_t glue;
	uint16_t nglue;
	uint16_t type;
	uint16_t count;
};

struct builder {
	struct dns_buf blob;
	struct bnode *nodes;
	size_t nnodes, node_cap;
	struct brrset *rrsets;
	size_t nrrsets, rrset_cap;
	struct dns_glue *glue; /* node pointers hold indexes until the end */
	size_t nglue, glue_cap;
	struct dns_slot *table;
	uint32_t mask;
	uint32_t apex;
};

/* Records in one order: owner, type, canonical RDATA, then file order. */
static int rec_cmp(const void *a, const void *b, void *arg)
{
	const struct rec *x = a, *y = b;
	const uint8_t *data = arg;
	size_t n;
	int c;

	n = x->owner_len < y->owner_len ? x->owner_len : y->owner_len;
	c = memcmp(data + x->owner, data + y->owner, n);
	if (c || x->owner_len != y->owner_len)
		return c ? c : (x->owner_len < y->owner_len ? -1 : 1);
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	n = x->rdlen < y->rdlen ? x->rdlen : y->rdlen;
	c = memcmp(data + x->rdata, data + y->rdata, n);
	if (c || x->rdlen != y->rdlen)
		return c ? c : (x->rdlen < y->rdlen ? -1 : 1);
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

uint32_t dns_name_hash(const uint8_t *p, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
		p += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, p, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	return (uint32_t)h;
}

const struct dns_node *dns_zone_find(const struct dns_zone *z,
				     const uint8_t *name, size_t len,
				     uint32_t hash)
{
	uint32_t i = hash & z->mask;

	for (; z->table[i].node; i = (i + 1) & z->mask) {
		const struct dns_node *n = &z->nodes[z->table[i].node - 1];

		if (z->table[i].hash == hash && n->name_len == len &&
		    !memcmp(n->name, name, len))
			return n;
	}
	return NULL;
}

static uint32_t bfind(const struct builder *b, const uint8_t *name, size_t len,
		      uint32_t hash)
{
	uint32_t i = hash & b->mask;

	if (!b->table)
		return NONE;
	for (; b->table[i].node; i = (i + 1) & b->mask) {
		const struct bnode *n = &b->nodes[b->table[i].node - 1];

		if (b->table[i].hash == hash && n->len == len &&
		    !memcmp(b->blob.p + n->name, name, len))
			return b->table[i].node - 1;
	}
	return NONE;
}

static void table_put(struct dns_slot *t, uint32_t mask, uint32_t hash,
		      uint32_t node)
{
	uint32_t i = hash & mask;

	while (t[i].node)
		i = (i + 1) & mask;
	t[i].hash = hash;
	t[i].node = node + 1;
}

/* Keeps the build table at most half full. */
static int table_grow(struct builder *b)
{
	struct dns_slot *t;
	uint32_t mask, i;

	if ((b->nnodes + 1) * 2 <= (size_t)b->mask + 1)
		return 0;
	mask = b->mask ? b->mask * 2 + 1 : 1023;
	t = calloc((size_t)mask + 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; b->table && i <= b->mask; i++)
		if (b->table[i].node)
			table_put(t, mask, b->table[i].hash,
				  b->table[i].node - 1);
	free(b->table);
	b->table = t;
	b->mask = mask;
	return 0;
}

/* The node for @name (under the apex, lower-case), made with its
 * ancestors if need be. Returns its index, or NONE without memory. */
static uint32_t get_node(struct builder *b, const uint8_t *name, size_t len)
{
	uint32_t hash = dns_name_hash(name, len), idx, parent = NONE;
	struct bnode *n;
	long off;

	idx = bfind(b, name, len, hash);
	if (idx != NONE)
		return idx;
	if (b->nnodes) { /* every node but the apex has a parent */
		parent = get_node(b, name + *name + 1, len - *name - 1);
		if (parent == NONE)
			return NONE;
	}
	if (table_grow(b) || dns_grow((void **)&b->nodes, &b->node_cap,
				      b->nnodes + 1, sizeof(*b->nodes)))
		return NONE;
	off = dns_buf_add(&b->blob, name, len);
	if (off < 0)
		return NONE;
	n = &b->nodes[b->nnodes];
	memset(n, 0, sizeof(*n));
	n->name = (uint32_t)off;
	n->len = (uint8_t)len;
	n->labels = (uint8_t)dns_name_labels(name);
	n->parent = parent;
	n->wildcard = NONE;
	if (parent != NONE) {
		b->nodes[parent].children++;
		if (name[0] == 1 && name[1] == '*')
			b->nodes[parent].wildcard = (uint32_t)b->nnodes;
	}
	table_put(b->table, b->mask, hash, (uint32_t)b->nnodes);
	return (uint32_t)b->nnodes++;
}

/* The sorted records with one owner and type, [from, to), as an RRset of
 * @node: identical RDATA once, the TTL of the last record in the file. */
static int add_rrset(struct builder *b, const struct loader *ld, size_t from,
		     size_t to, uint32_t node)
{
	const struct rec *r = &ld->recs[from];
	struct brrset *rs;
	uint32_t last = r->seq, line = r->line;
	size_t i;
	long off;

	if (dns_grow((void **)&b->rrsets, &b->rrset_cap, b->nrrsets + 1,
		     sizeof(*b->rrsets)))
		return -ENOMEM;
	rs = &b->rrsets[b->nrrsets];
	memset(rs, 0, sizeof(*rs));
	rs->node = node;
	rs->type = r->type;
	rs->ttl = r->ttl;
	rs->rdata = (uint32_t)b->blob.len;
	for (i = from; i < to; i++) {
		const struct rec *x = &ld->recs[i];
		uint8_t len[2];

		if (x->seq > last) {
			last = x->seq;
			rs->ttl = x->ttl;
		}
		if (x->line < line)
			line = x->line;
		if (i > from && x->rdlen == x[-1].rdlen &&
		    !memcmp(ld->data.p + x->rdata, ld->data.p + x[-1].rdata,
			    x->rdlen))
			continue;
		if (rs->count == UINT16_MAX)
			return -E2BIG;
		dns_put16(len, (uint16_t)x->rdlen);
		off = dns_buf_add(&b->blob, len, 2);
		if (off < 0 ||
		    dns_buf_add(&b->blob, ld->data.p + x->rdata, x->rdlen) < 0)
			return -ENOMEM;
		rs->count++;
	}
	rs->line = line;
	b->nrrsets++;
	return 0;
}

static const struct brrset *brrset_of(const struct builder *b,
				      const struct bnode *n, uint16_t type)
{
	uint16_t i;

	for (i = 0; i < n->nrrsets; i++)
		if (b->rrsets[n->rrsets + i].type == type)
			return &b->rrsets[n->rrsets + i];
	return NULL;
}

/* Zone cuts, top down: NS below the apex is one, and what is below a cut
 * is not authoritative (Knot's adjust_cb_flags()). */
static int set_flags(struct builder *b)
{
	uint32_t *order, *count, i, pos = 0;

	order = malloc(b->nnodes * sizeof(*order));
	count = calloc(DNS_MAX_LABELS + 1, sizeof(*count));
	if (!order || !count) {
		free(order);
		free(count);
		return -ENOMEM;
	}
	for (i = 0; i < b->nnodes; i++)
		count[b->nodes[i].labels]++;
	for (i = 0; i <= DNS_MAX_LABELS; i++) {
		uint32_t c = count[i];

		count[i] = pos;
		pos += c;
	}
	for (i = 0; i < b->nnodes; i++)
		order[count[b->nodes[i].labels]++] = i;
	for (i = 0; i < b->nnodes; i++) {
		struct bnode *n = &b->nodes[order[i]];

		if (n->parent != NONE && (b->nodes[n->parent].flags &
					  (DNS_NODE_DELEG | DNS_NODE_NONAUTH)))
			n->flags |= DNS_NODE_NONAUTH;
		else if (order[i] != b->apex && brrset_of(b, n, DNS_T_NS))
			n->flags |= DNS_NODE_DELEG;
	}
	free(order);
	free(count);
	return 0;
}

static int refuse(const struct loader *ld, const struct builder *b,
		  const struct bnode *n, uint32_t line, const char *what)
{
	char name[DNS_MAX_NAME * 4 + 2];

	dns_name_str(b->blob.p + n->name, name, sizeof(name));
	snprintf(ld->err, ld->errlen, "%s:%u: %s at %s", ld->file, line, what,
		 name);
	return -EINVAL;
}

/* Knot's mandatory semantic checks, those that make knotd refuse a zone. */
static int check_zone(const struct loader *ld, const struct builder *b)
{
	size_t i;

	for (i = 0; i < b->nnodes; i++) {
		const struct bnode *n = &b->nodes[i];
		const struct brrset *cname = brrset_of(b, n, DNS_T_CNAME);
		const struct brrset *dname = brrset_of(b, n, DNS_T_DNAME);

		if (cname) {
			unsigned int others = n->nrrsets - 1U;

			others -= brrset_of(b, n, DNS_T_RRSIG) != NULL;
			others -= brrset_of(b, n, DNS_T_NSEC) != NULL;
			if (others)
				return refuse(ld, b, n, cname->line,
					      "another record beside CNAME");
			if (cname->count != 1)
				return refuse(ld, b, n, cname->line,
					      "more than one CNAME record");
		}
		if (dname) {
			if (i != b->apex && brrset_of(b, n, DNS_T_NS))
				return refuse(ld, b, n, dname->line,
					      "NS record beside DNAME");
			if (n->children)
				return refuse(ld, b, n, dname->line,
					      "names below a DNAME");
			if (dname->count != 1)
				return refuse(ld, b, n, dname->line,
					      "more than one DNAME record");
		}
	}
	return 0;
}

/* The node of @name (lower-case, under the apex), or of the wildcard
 * that covers it (Knot's zone_contents_find_node_or_wildcard()). */
static uint32_t find_or_wildcard(const struct builder *b, const uint8_t *name,
				 size_t len)
{
	uint32_t n;

	n = bfind(b, name, len, dns_name_hash(name, len));
	if (n != NONE)
		return n;
	while (*name) {
		len -= *name + 1U;
		name += *name + 1;
		n = bfind(b, name, len, dns_name_hash(name, len));
		if (n != NONE)
			return b->nodes[n].wildcard;
	}
	return NONE;
}

/* Where additional records come from, per RDATA: mandatory glue (an NS
 * target under a cut at or below the NS owner) first, as Knot orders it. */
static int add_glue(struct builder *b, struct brrset *rs)
{
	const uint8_t *apex = b->blob.p + b->nodes[b->apex].name;
	const uint8_t *owner = b->blob.p + b->nodes[rs->node].name;
	int off = dns_additional_name_off(rs->type), pass;
	uint8_t target[DNS_MAX_NAME];
	size_t start = b->nglue;

	if (off < 0)
		return 0;
	for (pass = 0; pass < 2; pass++) {
		const uint8_t *rd = b->blob.p + rs->rdata;
		uint16_t i;

		for (i = 0; i < rs->count; rd += 2 + dns_get16(rd), i++) {
			size_t rdlen = dns_get16(rd), len;
			const struct bnode *gn;
			uint32_t g;
			int mandatory;

			if ((size_t)off >= rdlen)
				continue;
			len = dns_name_len_in(rd + 2 + off, rd + 2 + rdlen);
			if (!len)
				continue;
			dns_name_lower(target, rd + 2 + off, len);
			if (dns_name_under(target, apex) < 0)
				continue;
			g = find_or_wildcard(b, target, len);
			if (g == NONE)
				continue;
			gn = &b->nodes[g];
			mandatory = (gn->flags &
				     (DNS_NODE_DELEG | DNS_NODE_NONAUTH)) &&
				    rs->type == DNS_T_NS &&
				    dns_name_under(b->blob.p + gn->name,
						   owner) >= 0;
			if (mandatory != !pass)
				continue;
			if (dns_grow((void **)&b->glue, &b->glue_cap,
				     b->nglue + 1, sizeof(*b->glue)))
				return -ENOMEM;
			b->glue[b->nglue].node = (const void *)(uintptr_t)g;
			b->glue[b->nglue].rdata = i;
			b->glue[b->nglue].optional = (uint8_t)pass;
			b->nglue++;
		}
	}
	rs->glue = (uint32_t)start;
	rs->nglue = (uint16_t)(b->nglue - start);
	return 0;
}

static void builder_free(struct builder *b)
{
	free(b->blob.p);
	free(b->nodes);
	free(b->rrsets);
	free(b->glue);
	free(b->table);
}

void dns_zone_free(struct dns_zone *z)
{
	uint32_t i;

	if (!z)
		return;
	for (i = 0; z->rrsets && i < z->nrrsets; i++)
		free((void *)z->rrsets[i].img.bytes);
	free(z->rrsets);
	free(z->nodes);
	free(z->glue);
	free(z->table);
	free(z->blob);
	free(z);
}

/* The built zone, with pointers now that nothing moves. */
static int finish(struct builder *b, struct dns_zone **out)
{
	struct dns_zone *z;
	size_t i;
	int ret;

	z = calloc(1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->nodes = calloc(b->nnodes, sizeof(*z->nodes));
	z->rrsets = calloc(b->nrrsets ? b->nrrsets : 1, sizeof(*z->rrsets));
	z->glue = calloc(b->nglue ? b->nglue : 1, sizeof(*z->glue));
	if (!z->nodes || !z->rrsets || !z->glue) {
		dns_zone_free(z);
		return -ENOMEM;
	}
	z->blob = b->blob.p;
	b->blob.p = NULL;
	z->table = b->table;
	b->table = NULL;
	z->mask = b->mask;
	z->nnodes = (uint32_t)b->nnodes;
	z->nrrsets = (uint32_t)b->nrrsets;
	for (i = 0; i < b->nnodes; i++) {
		const struct bnode *bn = &b->nodes[i];
		struct dns_node *n = &z->nodes[i];

		n->name = z->blob + bn->name;
		n->name_len = bn->len;
		n->flags = bn->flags;
		n->rrsets = &z->rrsets[bn->nrrsets ? bn->rrsets : 0];
		n->nrrsets = bn->nrrsets;
		n->parent = bn->parent == NONE ? NULL : &z->nodes[bn->parent];
		n->wildcard =
			bn->wildcard == NONE ? NULL : &z->nodes[bn->wildcard];
	}
	for (i = 0; i < b->nglue; i++) {
		z->glue[i] = b->glue[i];
		z->glue[i].node = &z->nodes[(uintptr_t)b->glue[i].node];
	}
	for (i = 0; i < b->nrrsets; i++) {
		const struct brrset *br = &b->rrsets[i];
		struct dns_rrset *rs = &z->rrsets[i];

		rs->v.owner = z->nodes[br->node].name;
		rs->v.rdata = z->blob + br->rdata;
		rs->v.id = rs;
		rs->v.src = rs;
		rs->v.ttl = br->ttl;
		rs->v.type = br->type;
		rs->v.count = br->count;
		rs->glue = &z->glue[br->nglue ? br->glue : 0];
		rs->nglue = br->nglue;
		rs->line = br->line;
		ret = dns_pkt_image(&rs->v, &rs->img);
		if (ret) {
			dns_zone_free(z);
			return ret;
		}
	}
	z->apex = &z->nodes[b->apex];
	z->name = z->apex->name;
	z->name_len = z->apex->name_len;
	z->labels = (uint8_t)dns_name_labels(z->name);
	z->soa = dns_node_rrset(z->apex, DNS_T_SOA);
	*out = z;
	return 0;
}

int dns_zone_build(struct loader *ld, struct dns_zone **out)
{
	struct builder b = { 0 };
	size_t i, j, k, olen = dns_name_len(ld->origin);
	int ret = -ENOMEM;

	b.apex = get_node(&b, ld->origin, olen);
	if (b.apex == NONE)
		goto out;
	if (ld->nrecs)
		qsort_r(ld->recs, ld->nrecs, sizeof(*ld->recs), rec_cmp,
			ld->data.p);
	for (i = 0; i < ld->nrecs; i = j) {
		const struct rec *r = &ld->recs[i];
		uint32_t node;

		for (j = i + 1;
		     j < ld->nrecs && ld->recs[j].owner_len == r->owner_len &&
		     !memcmp(ld->data.p + ld->recs[j].owner,
			     ld->data.p + r->owner, r->owner_len);
		     j++)
			;
		node = get_node(&b, ld->data.p + r->owner, r->owner_len);
		if (node == NONE)
			goto out;
		b.nodes[node].rrsets = (uint32_t)b.nrrsets;
		for (k = i; k < j;) {
			size_t m = k + 1;

			while (m < j && ld->recs[m].type == ld->recs[k].type)
				m++;
			ret = add_rrset(&b, ld, k, m, node);
			if (ret)
				goto out;
			b.nodes[node].nrrsets++;
			k = m;
		}
		ret = -ENOMEM;
	}
	ret = set_flags(&b);
	if (!ret)
		ret = check_zone(ld, &b);
	for (i = 0; !ret && i < b.nrrsets; i++)
		ret = add_glue(&b, &b.rrsets[i]);
	if (!ret)
		ret = finish(&b, out);
out:
	if (ret == -ENOMEM)
		snprintf(ld->err, ld->errlen, "zone %s: out of memory",
			 ld->file);
	else if (ret == -E2BIG)
		snprintf(ld->err, ld->errlen,
			 "zone %s: more than 65535 records in one RRset",
			 ld->file);
	builder_free(&b);
	return ret;
}
