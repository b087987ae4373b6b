/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DNS wire format for the dns function (functions/dns/dns.c): record types and
 * their RDATA layouts, domain names, and the query parser.
 *
 * The parser decides what Knot DNS decides for the same bytes, because the
 * dns function is compared with knotd answer by answer: which messages get
 * no reply at all (shorter than a header, a response, a malformed or extra
 * question), which get FORMERR (a malformed record after the question,
 * trailing bytes, a misplaced or second OPT) and which are answered. It
 * reads the message and never writes to it, and it is safe on any bytes
 * (tests/fuzz/fuzz_dns.c).
 */
#ifndef RR_DNS_WIRE_H
#define RR_DNS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define DNS_HDR_LEN 12
#define DNS_MAX_NAME 255 /* wire length, the root label included */
#define DNS_MAX_LABEL 63
#define DNS_MAX_LABELS 128
#define DNS_MIN_UDP 512
#define DNS_PTR_MAX 16383 /* largest offset a compression pointer reaches */

enum dns_type {
	DNS_T_A = 1,
	DNS_T_NS = 2,
	DNS_T_MD = 3,
	DNS_T_MF = 4,
	DNS_T_CNAME = 5,
	DNS_T_SOA = 6,
	DNS_T_MB = 7,
	DNS_T_MG = 8,
	DNS_T_MR = 9,
	DNS_T_NULL = 10,
	DNS_T_PTR = 12,
	DNS_T_HINFO = 13,
	DNS_T_MINFO = 14,
	DNS_T_MX = 15,
	DNS_T_TXT = 16,
	DNS_T_RP = 17,
	DNS_T_AFSDB = 18,
	DNS_T_RT = 21,
	DNS_T_SIG = 24,
	DNS_T_KEY = 25,
	DNS_T_AAAA = 28,
	DNS_T_LOC = 29,
	DNS_T_NXT = 30,
	DNS_T_SRV = 33,
	DNS_T_NAPTR = 35,
	DNS_T_KX = 36,
	DNS_T_CERT = 37,
	DNS_T_DNAME = 39,
	DNS_T_OPT = 41,
	DNS_T_APL = 42,
	DNS_T_DS = 43,
	DNS_T_SSHFP = 44,
	DNS_T_IPSECKEY = 45,
	DNS_T_RRSIG = 46,
	DNS_T_NSEC = 47,
	DNS_T_DNSKEY = 48,
	DNS_T_DHCID = 49,
	DNS_T_NSEC3 = 50,
	DNS_T_NSEC3PARAM = 51,
	DNS_T_TLSA = 52,
	DNS_T_SMIMEA = 53,
	DNS_T_CDS = 59,
	DNS_T_CDNSKEY = 60,
	DNS_T_OPENPGPKEY = 61,
	DNS_T_CSYNC = 62,
	DNS_T_ZONEMD = 63,
	DNS_T_SVCB = 64,
	DNS_T_HTTPS = 65,
	DNS_T_SPF = 99,
	DNS_T_NID = 104,
	DNS_T_L32 = 105,
	DNS_T_L64 = 106,
	DNS_T_LP = 107,
	DNS_T_EUI48 = 108,
	DNS_T_EUI64 = 109,
	DNS_T_TKEY = 249,
	DNS_T_TSIG = 250,
	DNS_T_IXFR = 251,
	DNS_T_AXFR = 252,
	DNS_T_ANY = 255,
	DNS_T_URI = 256,
	DNS_T_CAA = 257,
};

enum dns_class {
	DNS_C_IN = 1,
	DNS_C_CH = 3,
	DNS_C_ANY = 255,
};

enum dns_opcode {
	DNS_OP_QUERY = 0,
	DNS_OP_NOTIFY = 4,
	DNS_OP_UPDATE = 5,
};

enum dns_rcode {
	DNS_R_NOERROR = 0,
	DNS_R_FORMERR = 1,
	DNS_R_SERVFAIL = 2,
	DNS_R_NXDOMAIN = 3,
	DNS_R_NOTIMP = 4,
	DNS_R_REFUSED = 5,
	DNS_R_YXDOMAIN = 6,
	DNS_R_NOTAUTH = 9,
	DNS_R_BADVERS = 16,   /* extended: 1 in the OPT, 0 in the header */
	DNS_R_BADCOOKIE = 23, /* extended: 1 in the OPT, 7 in the header */
};

/* Header flag bits, in the 16-bit flags word. */
#define DNS_F_QR 0x8000
#define DNS_F_AA 0x0400
#define DNS_F_TC 0x0200
#define DNS_F_RD 0x0100
#define DNS_F_OPCODE 0x7800

#define DNS_EDNS_DO 0x8000
#define DNS_OPT_NSID 3	  /* Name Server Identifier (RFC 5001) */
#define DNS_OPT_EXPIRE 9  /* EDNS EXPIRE (RFC 7314) */
#define DNS_OPT_COOKIE 10 /* DNS Cookies (RFC 7873) */
#define DNS_OPT_EDE 15	  /* Extended DNS Error option */
#define DNS_EDE_NOT_AUTHORITATIVE 20

/*
 * The blocks an RDATA is made of, as Knot describes them: a positive
 * number is a fixed-size block; the rest are below. Arrays end with 0.
 */
enum dns_block {
	DNS_B_END = 0,
	DNS_B_CNAME = -1,     /* a name that answers may compress */
	DNS_B_NAME = -2,      /* a name written as it is */
	DNS_B_NAPTR_HDR = -3, /* NAPTR's order, preference and 3 strings */
	DNS_B_REST = -4,      /* everything that is left */
};

/*
 * The layout of @type's RDATA. With @obsolete, types that only Knot's
 * table of obsolete types knows (MD, MF, MB, MG, MR, PX, NXT) are
 * described too; answers are written with the main table alone, where
 * those are opaque. *@known says whether the type has a description of
 * its own (an unknown type is one opaque block, and may be empty).
 */
const int8_t *dns_rdata_blocks(uint16_t type, int obsolete, int *known);

/* Knot lower-cases the names inside these types' RDATA (RFC 4034 6.2). */
int dns_type_lowercased(uint16_t type);

/* Where the name that additional processing follows starts in an RDATA
 * of @type (NS, MX, SRV, SVCB, HTTPS), or -1 for other types. */
int dns_additional_name_off(uint16_t type);

/* Size of NAPTR's fixed header at @p, or -1 if it overruns @end. */
int dns_naptr_header_len(const uint8_t *p, const uint8_t *end);

extern const uint8_t dns_lower[256];

/*
 * Checks a name at @p in a message that starts at @msg and ends at @end
 * (@msg NULL: no compression allowed), as knot_dname_wire_check() does:
 * pointers only backwards, labels of 63 or less, 255 bytes at most.
 * Returns its length in the message (up to and with the first pointer, or
 * the root label) or -1.
 */
int dns_name_check(const uint8_t *p, const uint8_t *end, const uint8_t *msg);

/* Copies the name at @p in @msg, which dns_name_check() accepted, without
 * its compression; returns its length. */
size_t dns_name_unpack(uint8_t *dst, const uint8_t *p, const uint8_t *msg);

/* Length of an uncompressed name, the root label included. */
size_t dns_name_len(const uint8_t *name);

/* Length of the uncompressed name at @p if it ends before @end, else 0. */
size_t dns_name_len_in(const uint8_t *p, const uint8_t *end);

/* Labels of an uncompressed name, the root not counted. */
unsigned int dns_name_labels(const uint8_t *name);

/* Copies an uncompressed name of @len bytes, lower-cased. */
void dns_name_lower(uint8_t *dst, const uint8_t *src, size_t len);

/*
 * @name (uncompressed) is @zone or below it, compared without regard to
 * case: returns the number of labels @name has beyond @zone, or -1.
 */
int dns_name_under(const uint8_t *name, const uint8_t *zone);

/* A name for people: "www.example.com." (at least 2 bytes of @out). */
void dns_name_str(const uint8_t *name, char *out, size_t outlen);

/* What the parser concluded about a message. */
enum dns_verdict {
	DNS_ANSWER,  /* a well-formed message to answer */
	DNS_IGNORE,  /* no reply at all */
	DNS_FORMERR, /* FORMERR with the question, no OPT */
};

struct dns_query {
	uint16_t flags; /* the query's flags word */
	uint8_t opcode;
	uint8_t has_question; /* QDCOUNT was 1 and the question parsed */
	uint16_t qname_len;   /* wire length of the name at offset 12 */
	uint16_t qtype;
	uint16_t qclass;
	uint16_t nscount; /* records in the authority section */
	uint8_t edns;	  /* an OPT record was there */
	uint8_t edns_version;
	uint16_t edns_payload;
	uint16_t edns_flags; /* DO and Z */
	uint8_t edns_expire; /* the OPT asked for EDNS EXPIRE */
	uint8_t edns_nsid;   /* the OPT carried an NSID option */
	uint8_t tsig;	     /* a TSIG record was there */
	uint8_t qlabels;
	/* The OPT's first COOKIE option: its length (0: none; it may be
	 * any, for dns_cookie_check() to judge), its first 40 bytes in
	 * cookie[]. */
	uint16_t cookie_len;
	/* What the reply's COOKIE option says (0: none), set by the
	 * handler: the client cookie and our server cookie. */
	uint8_t reply_cookie_len;
	/* From here on, only what the fields above say is there is set
	 * (the parser clears the fields above only). The QNAME lower-cased,
	 * and where each label starts in it: */
	uint8_t lname[DNS_MAX_NAME];
	uint8_t label_off[DNS_MAX_LABELS];
	/* The TSIG record, for the one knotd sends back: its owner
	 * (lower-case), algorithm and time signed. */
	uint8_t tsig_time[6];
	uint8_t tsig_owner[DNS_MAX_NAME];
	uint8_t tsig_alg[DNS_MAX_NAME];
	uint8_t cookie[40];
	uint8_t reply_cookie[24];
};

/* Reads the message @msg of @len bytes into @q. */
enum dns_verdict dns_parse_query(const uint8_t *msg, size_t len,
				 struct dns_query *q);

static inline uint16_t dns_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t dns_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void dns_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void dns_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#endif /* RR_DNS_WIRE_H */
