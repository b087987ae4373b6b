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
#include <unistd.h>

#include <libzscanner/scanner.h>

#include "dns_zone.h"

#define NONE UINT32_MAX

struct rec {
	uint32_t owner; /* offsets into loader.data */
	uint32_t rdata;
	uint32_t rdlen;
	uint32_t ttl;
	uint32_t line;
	uint32_t seq;
	uint16_t type;
	uint8_t owner_len;
};

struct buf {
	uint8_t *p;
	size_t len, cap;
};

struct loader {
	const char *file;
	struct buf data;
	struct rec *recs;
	size_t nrecs, cap;
	uint8_t origin[DNS_MAX_NAME];
	int have_soa;
	int find_origin; /* only look for the first SOA's owner */
	int found;
	int failed;
	char *err;
	size_t errlen;
};

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
	struct buf blob;
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

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Appends @len bytes; returns their offset, or -1. */
static long buf_add(struct buf *b, const void *data, size_t len)
{
	size_t off = b->len;

	if (grow((void **)&b->p, &b->cap, b->len + len, 1))
		return -1;
	if (len)
		memcpy(b->p + off, data, len);
	b->len += len;
	return (long)off;
}

static int fail(struct loader *ld, const char *file, uint64_t line,
		const char *what)
{
	if (!ld->failed)
		snprintf(ld->err, ld->errlen, "%s:%llu: %s", file,
			 (unsigned long long)line, what);
	ld->failed = 1;
	return -EINVAL;
}

/* Length of the name at @p if it ends before @end, else 0. */
static size_t name_len_in(const uint8_t *p, const uint8_t *end)
{
	const uint8_t *s = p;

	while (p < end && *p)
		p += *p + 1;
	return p < end ? (size_t)(p - s) + 1 : 0;
}

/* Lower-cases the names in one RDATA as Knot's canonical form has them. */
static void rdata_lower(uint16_t type, uint8_t *rd, size_t len)
{
	uint8_t *p = rd, *end = rd + len;
	const int8_t *b;
	size_t n;
	int h;

	if (!dns_type_lowercased(type) || !len)
		return;
	for (b = dns_rdata_blocks(type, 1, NULL); *b != DNS_B_END; b++) {
		switch (*b) {
		case DNS_B_CNAME:
		case DNS_B_NAME:
			n = name_len_in(p, end);
			if (!n)
				return;
			dns_name_lower(p, p, n);
			p += n;
			break;
		case DNS_B_NAPTR_HDR:
			h = dns_naptr_header_len(p, end);
			if (h < 0)
				return;
			p += h;
			break;
		case DNS_B_REST:
			return;
		default:
			if (*b > end - p)
				return;
			p += *b;
			break;
		}
	}
}

static void on_error(zs_scanner_t *s)
{
	struct loader *ld = s->process.data;

	fail(ld, s->file.name ? s->file.name : ld->file, s->line_counter,
	     zs_strerror(s->error.code));
	s->state = ZS_STATE_STOP;
}

static void on_record(zs_scanner_t *s)
{
	struct loader *ld = s->process.data;
	const char *file = s->file.name ? s->file.name : ld->file;
	uint8_t owner[DNS_MAX_NAME];
	size_t olen = s->r_owner_length;
	struct rec *r;
	long off;

	if (ld->failed || olen < 1 || olen > DNS_MAX_NAME) {
		s->state = ZS_STATE_STOP;
		return;
	}
	dns_name_lower(owner, s->r_owner, olen);
	if (ld->find_origin) {
		if (s->r_type == DNS_T_SOA) {
			memcpy(ld->origin, owner, olen);
			ld->found = 1;
			s->state = ZS_STATE_STOP;
		}
		return;
	}
	if (s->r_class != DNS_C_IN) {
		char what[64];

		snprintf(what, sizeof(what),
			 "class %u: only IN records are served", s->r_class);
		fail(ld, file, s->line_counter, what);
		s->state = ZS_STATE_STOP;
		return;
	}
	if (dns_name_under(owner, ld->origin) < 0)
		return; /* out of the zone: knotd leaves it out too */
	if (s->r_type == DNS_T_SOA) {
		if (dns_name_under(owner, ld->origin) > 0) {
			fail(ld, file, s->line_counter,
			     "SOA record below the zone's apex");
			s->state = ZS_STATE_STOP;
			return;
		}
		if (ld->have_soa)
			return; /* knotd ignores a second SOA */
		ld->have_soa = 1;
	}
	if (grow((void **)&ld->recs, &ld->cap, ld->nrecs + 1,
		 sizeof(*ld->recs)))
		goto oom;
	r = &ld->recs[ld->nrecs];
	off = buf_add(&ld->data, owner, olen);
	if (off < 0)
		goto oom;
	r->owner = (uint32_t)off;
	r->owner_len = (uint8_t)olen;
	off = buf_add(&ld->data, s->r_data, s->r_data_length);
	if (off < 0)
		goto oom;
	r->rdata = (uint32_t)off;
	r->rdlen = s->r_data_length;
	rdata_lower(s->r_type, ld->data.p + off, r->rdlen);
	r->type = s->r_type;
	r->ttl = s->r_ttl;
	r->line = (uint32_t)s->line_counter;
	r->seq = (uint32_t)ld->nrecs;
	ld->nrecs++;
	return;
oom:
	fail(ld, file, s->line_counter, "out of memory");
	s->state = ZS_STATE_STOP;
}

/* One pass of libzscanner over the file. */
static int scan(struct loader *ld, const char *origin_text)
{
	zs_scanner_t *s;
	int ret = 0;

	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (zs_init(s, origin_text, DNS_C_IN, 3600) != 0) {
		snprintf(ld->err, ld->errlen, "zone origin '%s': %s",
			 origin_text, zs_strerror(s->error.code));
		ret = -EINVAL;
		goto out;
	}
	if (!ld->find_origin) /* the origin as libzscanner reads it */
		dns_name_lower(ld->origin, s->zone_origin,
			       s->zone_origin_length);
	if (zs_set_input_file(s, ld->file) != 0) {
		snprintf(ld->err, ld->errlen, "cannot read zone file %s: %s",
			 ld->file, zs_strerror(s->error.code));
		ret = -EINVAL;
		goto out;
	}
	if (zs_set_processing(s, on_record, on_error, ld) != 0) {
		ret = -EINVAL;
		goto out;
	}
	if (zs_parse_all(s) != 0 && !ld->failed)
		fail(ld, ld->file, s->line_counter, zs_strerror(s->error.code));
	if (ld->failed)
		ret = -EINVAL;
out:
	zs_deinit(s);
	free(s);
	return ret;
}

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
	if (table_grow(b) || grow((void **)&b->nodes, &b->node_cap,
				  b->nnodes + 1, sizeof(*b->nodes)))
		return NONE;
	off = buf_add(&b->blob, name, len);
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

	if (grow((void **)&b->rrsets, &b->rrset_cap, b->nrrsets + 1,
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
		off = buf_add(&b->blob, len, 2);
		if (off < 0 ||
		    buf_add(&b->blob, ld->data.p + x->rdata, x->rdlen) < 0)
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
			len = name_len_in(rd + 2 + off, rd + 2 + rdlen);
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
			if (grow((void **)&b->glue, &b->glue_cap, b->nglue + 1,
				 sizeof(*b->glue)))
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

static int build(struct loader *ld, struct dns_zone **out)
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

int dns_zone_load(const char *file, const char *origin, struct dns_zone **out,
		  char *err, size_t errlen)
{
	struct loader ld = { 0 };
	char text[DNS_MAX_NAME * 4 + 2];
	int ret;

	*out = NULL;
	ld.file = file;
	ld.err = err;
	ld.errlen = errlen;
	if (access(file, R_OK)) {
		snprintf(err, errlen, "cannot read zone file %s: %s", file,
			 strerror(errno));
		return -EINVAL;
	}
	if (!origin) {
		/* The first SOA's owner, with relative names read from the
		 * root: so the file must name it in full (or set $ORIGIN). */
		ld.find_origin = 1;
		ret = scan(&ld, ".");
		if (ret)
			return ret;
		if (!ld.found) {
			snprintf(
				err, errlen,
				"zone %s has no SOA record to take its origin from",
				file);
			return -EINVAL;
		}
		if (!ld.origin[0]) {
			snprintf(
				err, errlen,
				"zone %s: its SOA's owner is the root; to serve the root zone, or a file with relative names, say 'zone = ORIGIN %s'",
				file, file);
			return -EINVAL;
		}
		ld.find_origin = 0;
		ld.found = 0;
		dns_name_str(ld.origin, text, sizeof(text));
	} else {
		size_t n = strlen(origin);

		snprintf(text, sizeof(text), "%s%s", origin,
			 n && origin[n - 1] == '.' ? "" : ".");
	}
	ret = scan(&ld, text);
	if (ret)
		goto out;
	if (!ld.have_soa) {
		char name[DNS_MAX_NAME * 4 + 2];

		dns_name_str(ld.origin, name, sizeof(name));
		snprintf(err, errlen, "zone %s has no SOA record for %s", file,
			 name);
		ret = -EINVAL;
		goto out;
	}
	ret = build(&ld, out);
out:
	free(ld.data.p);
	free(ld.recs);
	return ret;
}
