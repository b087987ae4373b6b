// SPDX-License-Identifier: GPL-2.0
/*
 * A part of the dns function (functions/dns/dns.c): the answer to one query
 * from one zone, step by step as knotd's internet.c (dns_answer.h).
 */
#include <stdbool.h>
#include <string.h>

#include "dns_answer.h"
#include "dns_wire.h"

static int is_wildcard(const uint8_t *name)
{
	return name[0] == 1 && name[1] == '*';
}

/* Puts an RRset in the current section, a wildcard's with the owner it
 * has in answers: the name it answers for. */
static int put_view(struct dns_answer *a, const struct dns_rrview *v,
		    uint16_t hint, unsigned int flags)
{
	struct dns_rrview exp;

	if (a->p->section == DNS_SEC_ANSWER && !hint && is_wildcard(v->owner)) {
		/* knotd copies the RRset to give it the name: the copy is
		 * never a duplicate of anything. */
		exp = *v;
		exp.owner = a->name;
		exp.id = &a->fresh[a->nfresh++ % sizeof(a->fresh)];
		v = &exp;
	}
	return dns_pkt_put(a->p, v, hint, flags, NULL);
}

static int put_rrset(struct dns_answer *a, const struct dns_rrset *rs,
		     uint16_t hint, unsigned int flags)
{
	/* The first answer, for the QNAME's own node: bytes made at load. */
	if (hint == DNS_HDR_LEN && a->exact && !a->p->nrr && rs->img.bytes)
		return dns_pkt_put_image(a->p, &rs->v, &rs->img);
	return put_view(a, &rs->v, hint, flags);
}

/* knotd's put_answer(): the RRset the query asks for, or for ANY the
 * node's first (by type), as knotd gives one RRset to ANY. */
static int put_answer(struct dns_answer *a)
{
	const struct dns_node *n = a->node;
	const struct dns_rrset *rs;

	if (a->qtype == DNS_T_ANY)
		rs = n->nrrsets ? &n->rrsets[0] : NULL;
	else
		rs = dns_node_rrset(n, a->qtype);
	if (!rs)
		return 0;
	return put_rrset(a, rs, a->p->nrr ? 0 : DNS_HDR_LEN, DNS_PF_ORIGTTL);
}

/* A DNAME's CNAME for the name being solved (RFC 6672): NULL when the
 * result would be too long (YXDOMAIN). */
static const struct dns_rrview *dname_synth(struct dns_answer *a,
					    const struct dns_rrset *dname)
{
	const uint8_t *target = dname->v.rdata + 2;
	unsigned int nl = dns_name_labels(a->name);
	unsigned int ol = dns_name_labels(dname->v.owner);
	unsigned int tl = dns_name_labels(target), i;
	size_t nlen = dns_name_len(a->name),
	       olen = dns_name_len(dname->v.owner);
	size_t tlen = dns_name_len(target), plen;
	const uint8_t *p = a->name;
	struct synth *s;

	if (nl - ol + tl > DNS_MAX_LABELS - 1 ||
	    nlen - olen + tlen > DNS_MAX_NAME || a->nsynth == DNS_CHAIN_MAX)
		return NULL;
	for (i = 0; i < nl - ol; i++)
		p += *p + 1;
	plen = (size_t)(p - a->name);
	s = &a->synth[a->nsynth++];
	memcpy(s->owner, a->name, nlen);
	dns_put16(s->rdata, (uint16_t)(plen + tlen));
	memcpy(s->rdata + 2, a->name, plen);
	memcpy(s->rdata + 2 + plen, target, tlen);
	s->v.owner = s->owner;
	s->v.rdata = s->rdata;
	s->v.id = s;
	s->v.src = NULL;
	s->v.ttl = dname->v.ttl;
	s->v.type = DNS_T_CNAME;
	s->v.count = 1;
	return &s->v;
}

static int visited(const struct dns_answer *a, const struct dns_node *n)
{
	int i;

	for (i = 0; i < a->nvisited; i++)
		if (a->visited[i] == n)
			return 1;
	return 0;
}

static void visit(struct dns_answer *a, const struct dns_node *n)
{
	if (!(n->flags & DNS_NODE_NONAUTH) &&
	    a->nvisited < (int)(sizeof(a->visited) / sizeof(a->visited[0])))
		a->visited[a->nvisited++] = n;
}

/* knotd's follow_cname(), for CNAME and DNAME. */
static enum dns_solve follow(struct dns_answer *a, uint16_t type)
{
	const struct dns_node *cname_node = a->node;
	const struct dns_rrset *rs = dns_node_rrset(a->node, type);
	uint16_t before = a->p->count[DNS_SEC_ANSWER];
	const uint8_t *next = rs->v.rdata + 2;

	if (++a->chain > DNS_CHAIN_MAX) {
		a->node = NULL;
		return S_HIT;
	}
	if (put_view(a, &rs->v, 0, DNS_PF_CHECKDUP))
		return S_TRUNC;
	if (type == DNS_T_DNAME) {
		const struct dns_rrview *cname = dname_synth(a, rs);

		if (!cname) {
			a->rcode = DNS_R_YXDOMAIN;
		} else {
			if (dns_pkt_put(a->p, cname, 0, 0, NULL))
				return S_TRUNC;
			if (a->qtype == DNS_T_CNAME)
				return S_HIT;
			next = cname->rdata + 2;
		}
	}
	if (a->p->count[DNS_SEC_ANSWER] <= before) {
		a->node = NULL; /* a loop: the name leads nowhere */
		return S_HIT;
	}
	/* A wildcard's RRset is never a duplicate: a loop through one
	 * ends the second time round. */
	if (is_wildcard(cname_node->name)) {
		if (visited(a, cname_node)) {
			a->node = NULL;
			visit(a, cname_node);
			return S_HIT;
		}
		visit(a, cname_node);
	}
	a->name = next;
	return S_FOLLOW;
}

static enum dns_solve name_found(struct dns_answer *a)
{
	const struct dns_node *n = a->node;
	uint16_t before = a->p->count[DNS_SEC_ANSWER];

	if (((n->flags & DNS_NODE_DELEG) && a->qtype != DNS_T_DS) ||
	    (n->flags & DNS_NODE_NONAUTH))
		return S_DELEG;
	if (a->qtype != DNS_T_CNAME && a->qtype != DNS_T_RRSIG &&
	    a->qtype != DNS_T_NSEC && a->qtype != DNS_T_ANY &&
	    dns_node_rrset(n, DNS_T_CNAME))
		return follow(a, DNS_T_CNAME);
	if (put_answer(a))
		return S_TRUNC;
	return a->p->count[DNS_SEC_ANSWER] == before ? S_NODATA : S_HIT;
}

static enum dns_solve name_not_found(struct dns_answer *a)
{
	const struct dns_node *e = a->encloser, *n;

	if (e->wildcard) {
		enum dns_solve state;

		a->node = e->wildcard;
		a->exact = 0;
		state = name_found(a);
		if (!visited(a, e->wildcard))
			visit(a, e->wildcard);
		return state;
	}
	if (!(e->flags & (DNS_NODE_NONAUTH | DNS_NODE_DELEG)) &&
	    dns_node_rrset(e, DNS_T_DNAME)) {
		a->node = e;
		return follow(a, DNS_T_DNAME);
	}
	/* The closest encloser with data, past empty non-terminals: a cut
	 * above the name makes a referral. */
	for (n = e; n->parent && (!n->nrrsets || (n->flags & DNS_NODE_NONAUTH));
	     n = n->parent)
		;
	if (n->flags & DNS_NODE_DELEG) {
		a->node = n;
		return S_DELEG;
	}
	return S_MISS;
}

static enum dns_solve solve_name(struct dns_answer *a, enum dns_solve state)
{
	const struct dns_zone *z = a->z;
	const uint8_t *name = a->name;
	size_t len = dns_name_len(name);
	const struct dns_node *n;

	/* A chain leaves the zone: knotd follows it no further. */
	if (state == S_FOLLOW && dns_name_under(name, z->name) < 0)
		return S_HIT;
	n = dns_zone_find(z, name, len, dns_name_hash(name, len));
	if (n) {
		a->node = n;
		a->exact = 1;
		return name_found(a);
	}
	do { /* the apex, at the latest, is there */
		len -= *name + 1U;
		name += *name + 1;
		n = dns_zone_find(z, name, len, dns_name_hash(name, len));
	} while (!n && *name);
	if (!n)
		return S_MISS; /* not reached: the name is in the zone */
	a->encloser = n;
	a->node = NULL;
	return name_not_found(a);
}

/* Additional records for one answer or authority RRset (knotd's
 * put_additional(), whose return value it keeps from the last put). */
static int put_additional(struct dns_answer *a, const struct dns_rrinfo *info,
			  enum dns_solve state)
{
	const struct dns_rrset *rs = info->src;
	uint16_t types[3] = { DNS_T_A, DNS_T_AAAA, rs->v.type };
	int ntypes =
		rs->v.type == DNS_T_SVCB || rs->v.type == DNS_T_HTTPS ? 3 : 2;
	int ret = 0, k;
	uint16_t i;

	for (i = 0; i < rs->nglue; i++) {
		const struct dns_glue *g = &rs->glue[i];
		unsigned int flags =
			state != S_DELEG || g->optional ? DNS_PF_NOTRUNC : 0;
		uint16_t hint = 1U + g->rdata < DNS_HINTS
					? info->hints[1 + g->rdata]
					: 0;

		for (k = 0; k < ntypes; k++) {
			const struct dns_rrset *r =
				dns_node_rrset(g->node, types[k]);

			if (!r)
				continue;
			ret = dns_pkt_put(a->p, &r->v, hint, flags, NULL);
			if (ret)
				break;
		}
	}
	return ret;
}

/* knotd's answer_query(): answer, authority, additional. Returns the
 * RCODE; the header's AA comes back in *aa. */
uint8_t dns_answer_query(struct dns_answer *a, int *aa, enum dns_solve *final)
{
	struct dns_pkt *p = a->p;
	enum dns_solve state;
	uint16_t i, nrr;

	state = solve_name(a, S_BEGIN);
	*aa = state != S_DELEG;
	while (state == S_FOLLOW)
		state = solve_name(a, S_FOLLOW);
	*final = state;
	if (state == S_TRUNC)
		return a->rcode;

	p->section = DNS_SEC_AUTHORITY;
	switch (state) {
	case S_MISS:
		a->rcode = DNS_R_NXDOMAIN;
		/* fall through */
	case S_NODATA:
		if (dns_pkt_put(p, &a->z->soa->v, 0,
				DNS_PF_NOTRUNC | DNS_PF_SOAMINTTL, NULL))
			return a->rcode;
		break;
	case S_DELEG: {
		const struct dns_node *n = a->node;

		while (!(n->flags & DNS_NODE_DELEG) && n->parent)
			n = n->parent;
		if (dns_pkt_put(p, &dns_node_rrset(n, DNS_T_NS)->v, 0, 0, NULL))
			return a->rcode;
		break;
	}
	default:
		break;
	}

	p->section = DNS_SEC_ADDITIONAL;
	nrr = p->nrr;
	for (i = 0; i < nrr; i++)
		if (dns_additional_name_off(p->info[i].type) >= 0 &&
		    p->info[i].src &&
		    ((const struct dns_rrset *)p->info[i].src)->nglue &&
		    put_additional(a, &p->info[i], state))
			break;
	return a->rcode;
}
