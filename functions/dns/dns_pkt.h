/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dns function's response writer: puts whole RRsets into a reply
 * after the question, with name compression, the way libknot's
 * knot_pkt_put() does. The aim is the same bytes as knotd, not only the
 * same records, so that a reply is truncated exactly where knotd's is:
 * compression decides how much fits.
 *
 * How knotd compresses: every name is compared with one "suffix" name
 * already in the message (at first the QNAME, then the last name written
 * with more than a pointer), label by label from the right; an RRset
 * written as the first answer points its owner at the QNAME; the other
 * records of an RRset point at their first owner; and each RDATA's first
 * name leaves a hint (its offset) that additional records use as their
 * owner. Only NS, CNAME, SOA, PTR, MINFO and MX RDATA names are
 * compressed (RFC 3597).
 */
#ifndef RR_DNS_PKT_H
#define RR_DNS_PKT_H

#include <stddef.h>
#include <stdint.h>

#include "dns_wire.h"

#define DNS_HINTS 16	  /* owner + the first name of 15 RDATAs */
#define DNS_PKT_RRSETS 40 /* answer and authority RRsets kept for hints */

/* An RRset to write: the zone's, or one made for the reply. */
struct dns_rrview {
	const uint8_t *owner; /* uncompressed, written as given */
	const uint8_t *rdata; /* count x (16-bit length, bytes) */
	const void *id;	      /* identity for duplicate checks */
	const void *src;      /* the zone RRset it is (additional records) */
	uint32_t ttl;
	uint16_t type;
	uint16_t count;
};

/* Where an RRset's names went: [0] its owner, [1 + i] RDATA i's first
 * name (0: none). */
struct dns_rrinfo {
	const void *id;
	const void *src;
	uint16_t type;
	uint16_t hints[DNS_HINTS];
};

enum dns_section {
	DNS_SEC_ANSWER,
	DNS_SEC_AUTHORITY,
	DNS_SEC_ADDITIONAL,
};

/* dns_pkt_put() flags, as libknot's KNOT_PF_*. */
#define DNS_PF_NOTRUNC 0x1   /* no room: leave TC alone */
#define DNS_PF_CHECKDUP 0x2  /* already there: put nothing, succeed */
#define DNS_PF_SOAMINTTL 0x4 /* SOA TTL: min(TTL, SOA MINIMUM) */
#define DNS_PF_ORIGTTL 0x8   /* RRSIG TTL: its original TTL field */

struct dns_pkt {
	uint8_t *wire;
	size_t size; /* written so far */
	size_t max;  /* limit, less what the OPT record will need */
	uint16_t suffix_pos;
	uint8_t suffix_labels;
	uint8_t qlabels;
	uint8_t section;
	uint8_t tc;
	uint16_t count[3];
	uint16_t nrr; /* info[] entries: answer and authority RRsets */
	struct dns_rrinfo info[DNS_PKT_RRSETS];
};

/*
 * Starts a reply in @wire, whose header and question (a name of
 * @qname_len bytes with @qlabels labels) are in place; RRsets go after
 * the question, up to @max bytes in all.
 */
void dns_pkt_init(struct dns_pkt *p, uint8_t *wire, size_t qname_len,
		  unsigned int qlabels, size_t max);

/*
 * Puts @rr into the current section with @hint as its owner's pointer (0:
 * compress it as knotd would). Returns 0, or -1 when it does not fit:
 * nothing of it is left in the message, and TC is set unless
 * DNS_PF_NOTRUNC. *@info (may be NULL) gets its hints, also kept in
 * p->info for answer and authority RRsets.
 */
int dns_pkt_put(struct dns_pkt *p, const struct dns_rrview *rr, uint16_t hint,
		unsigned int flags, const struct dns_rrinfo **info);

/*
 * The fast path for the first answer RRset whose owner is the QNAME: the
 * bytes dns_pkt_put() would write there, made at load time
 * (dns_pkt_image()), with the hints and compression state it would leave.
 */
struct dns_image {
	const uint8_t *bytes;
	uint32_t len;
	uint16_t suffix_pos;
	uint8_t suffix_labels;
	uint16_t hints[DNS_HINTS];
};

int dns_pkt_put_image(struct dns_pkt *p, const struct dns_rrview *rr,
		      const struct dns_image *img);

/*
 * Makes @img->bytes (malloc()ed, the caller frees it) for @rr, whose owner
 * is in its canonical lower-case form, put with DNS_PF_ORIGTTL as answers
 * are. Returns 0 or -errno; an RRset that can never fit in 64 KiB gets no
 * image (bytes NULL).
 */
int dns_pkt_image(const struct dns_rrview *rr, struct dns_image *img);

/* The options knotd puts in its OPT record, in this order (COOKIE last,
 * as mod-cookies adds it when the reply is done). */
struct dns_opt {
	uint16_t payload; /* its UDP payload size */
	uint16_t flags;	  /* DO */
	uint8_t ext_rcode;
	uint8_t has_expire;
	uint16_t ede; /* an Extended DNS Error code, 0: none */
	uint32_t expire;
	const uint8_t *nsid; /* the server's NSID, or NULL: none */
	uint16_t nsid_len;
	const uint8_t *cookie; /* the reply's COOKIE option, or NULL */
	uint16_t cookie_len;
};

#define DNS_OPT_LEN 11	     /* an OPT record without options */
#define DNS_OPT_HDR_LEN 4    /* an option's code and length */
#define DNS_OPT_EDE_LEN 6    /* one EDE option with no text */
#define DNS_OPT_EXPIRE_LEN 8 /* EXPIRE with its 4 bytes */

/* Writes it at @dst (the caller kept the room); returns its size. */
size_t dns_pkt_put_opt(uint8_t *dst, const struct dns_opt *o);

/*
 * The TSIG record knotd appends when it refuses a signed query (it has no
 * key: BADKEY): the query's key name and algorithm, its time signed, a
 * fudge of 300, no MAC, the ID @id. Returns its size, or 0 if it does not
 * fit in @room.
 */
size_t dns_put_tsig_badkey(uint8_t *dst, size_t room, const struct dns_query *q,
			   uint16_t id);

#endif /* RR_DNS_PKT_H */
