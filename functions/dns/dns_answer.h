/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dns function's answer logic (dns_answer.c), a part of the dns
 * function: how one query is answered from one zone, as knotd's
 * internet.c works it out (CNAME chains, DNAME, wildcards, referrals,
 * additional records). dns.c parses the query, finds the zone and builds
 * the message around it.
 */
#ifndef RR_DNS_ANSWER_H
#define RR_DNS_ANSWER_H

#include <stdint.h>

#include "dns_pkt.h"
#include "dns_zone.h"

#define DNS_CHAIN_MAX 5 /* knotd's CNAME_CHAIN_MAX */

/* The answer to one query, as knotd's internet.c works it out. */
enum dns_solve {
	S_BEGIN,
	S_HIT,
	S_MISS,
	S_NODATA,
	S_DELEG,
	S_FOLLOW,
	S_TRUNC,
};

struct synth {
	struct dns_rrview v;
	uint8_t owner[DNS_MAX_NAME];
	uint8_t rdata[2 + DNS_MAX_NAME];
};

struct dns_answer {
	const struct dns_zone *z;
	struct dns_pkt *p;
	uint16_t qtype;
	uint8_t rcode;
	uint8_t exact;	     /* node is the name's own, not a wildcard's */
	const uint8_t *name; /* the name being solved, lower-case */
	const struct dns_node *node, *encloser;
	int chain;
	int nsynth;
	int nvisited;
	/* Wildcards a CNAME chain went through (knotd's loop check). */
	const struct dns_node *visited[2 * DNS_CHAIN_MAX + 2];
	/* Identities of RRsets made for this answer, which knotd never
	 * finds twice in a message. */
	uint8_t fresh[4 * DNS_CHAIN_MAX + 4];
	unsigned int nfresh;
	struct synth synth[DNS_CHAIN_MAX];
};

/* knotd's answer_query(): answer, authority, additional into @a's
 * message. Returns the RCODE; the header's AA comes back in *@aa and
 * the last step of the solving in *@final. */
uint8_t dns_answer_query(struct dns_answer *a, int *aa, enum dns_solve *final);

#endif /* RR_DNS_ANSWER_H */
