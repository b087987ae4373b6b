/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A zone as the dns function serves it: read once from an RFC 1035 master
 * file by Knot's libzscanner, then laid out for lookups that allocate
 * nothing and take no lock. Read-only once loaded.
 *
 * Nodes are every owner name and every empty non-terminal between an
 * owner and the apex, as in Knot's zone tree, found through one hash table
 * of their lower-case wire names. A node's RRsets are sorted by type, an
 * RRset's records by their canonical RDATA (which is Knot's order), and
 * every RRset carries the bytes of its answer when it is the first answer
 * to a query for its owner (dns_pkt_image()).
 */
#ifndef RR_DNS_ZONE_H
#define RR_DNS_ZONE_H

#include <stddef.h>
#include <stdint.h>

#include "dns_pkt.h"

#define DNS_NODE_DELEG 0x01   /* NS below the apex: a zone cut */
#define DNS_NODE_NONAUTH 0x02 /* below a zone cut: glue */

struct dns_node;

/* Where additional processing goes from one RDATA of an RRset. */
struct dns_glue {
	const struct dns_node *node;
	uint16_t rdata;	  /* which RDATA of the RRset */
	uint8_t optional; /* not glue a referral needs */
};

struct dns_rrset {
	struct dns_rrview v; /* owner: the node's name */
	struct dns_image img;
	const struct dns_glue *glue; /* NS, MX, SRV, SVCB, HTTPS */
	uint16_t nglue;
	uint32_t line; /* of its first record, for messages */
};

struct dns_node {
	const uint8_t *name; /* lower-case wire */
	const struct dns_rrset *rrsets;
	const struct dns_node *parent;	 /* NULL at the apex */
	const struct dns_node *wildcard; /* the child "*", if there is one */
	uint16_t nrrsets;
	uint8_t name_len;
	uint8_t flags;
};

struct dns_zone {
	const struct dns_node *apex;
	const struct dns_rrset *soa;
	const uint8_t *name; /* the apex's name */
	uint8_t name_len;
	uint8_t labels;
	struct dns_node *nodes;
	uint32_t nnodes;
	struct dns_rrset *rrsets;
	uint32_t nrrsets;
	struct dns_glue *glue;
	/* Open addressing, at most half full: the name's hash and its node
	 * (index + 1; 0 is an empty slot). */
	struct dns_slot {
		uint32_t hash;
		uint32_t node;
	} * table;
	uint32_t mask;
	uint8_t *blob; /* names and RDATA */
};

/* The hash of a lower-case wire name, as the table keys it. */
uint32_t dns_name_hash(const uint8_t *name, size_t len);

/* The node named @name (lower-case wire, @len bytes), or NULL. */
const struct dns_node *dns_zone_find(const struct dns_zone *z,
				     const uint8_t *name, size_t len,
				     uint32_t hash);

/* @n's RRset of @type, or NULL. */
static inline const struct dns_rrset *dns_node_rrset(const struct dns_node *n,
						     uint16_t type)
{
	uint16_t i;

	for (i = 0; i < n->nrrsets; i++)
		if (n->rrsets[i].v.type == type)
			return &n->rrsets[i];
	return NULL;
}

/*
 * Loads @file as the zone @origin ("example.com", the final dot optional;
 * NULL: the owner of the file's first SOA record, read with the root as
 * the origin). Returns 0, or -errno with one line in @err: what is wrong,
 * with the zone file's own line where there is one ("FILE:LINE: ...").
 * In dns_zone_file.c, which reads the file, then has dns_zone.c build it.
 */
int dns_zone_load(const char *file, const char *origin, struct dns_zone **out,
		  char *err, size_t errlen);

void dns_zone_free(struct dns_zone *z);

#endif /* RR_DNS_ZONE_H */
