// SPDX-License-Identifier: GPL-2.0
/*
 * DNS wire format for the dns function: RDATA layouts, names and the query
 * parser (dns_wire.h). The layouts and the parser's verdicts follow Knot
 * DNS 3.2 (libknot's descriptor table, knot_pkt_parse() and knotd's UDP
 * handler), so that the same bytes get the same treatment from both.
 */
#include <stdio.h>
#include <string.h>

#include "dns_wire.h"

/* RDATA layouts (enum dns_block), 0-terminated. */
static const int8_t b_4[] = { 4, DNS_B_END };
static const int8_t b_cname[] = { DNS_B_CNAME, DNS_B_END };
static const int8_t b_cname_cname_20[] = { DNS_B_CNAME, DNS_B_CNAME, 20,
					   DNS_B_END };
static const int8_t b_cname_cname[] = { DNS_B_CNAME, DNS_B_CNAME, DNS_B_END };
static const int8_t b_2_cname[] = { 2, DNS_B_CNAME, DNS_B_END };
static const int8_t b_name_name[] = { DNS_B_NAME, DNS_B_NAME, DNS_B_END };
static const int8_t b_2_name[] = { 2, DNS_B_NAME, DNS_B_END };
static const int8_t b_18_name_rest[] = { 18, DNS_B_NAME, DNS_B_REST,
					 DNS_B_END };
static const int8_t b_16[] = { 16, DNS_B_END };
static const int8_t b_6_name[] = { 6, DNS_B_NAME, DNS_B_END };
static const int8_t b_naptr_hdr_name[] = { DNS_B_NAPTR_HDR, DNS_B_NAME,
					   DNS_B_END };
static const int8_t b_name[] = { DNS_B_NAME, DNS_B_END };
static const int8_t b_name_rest[] = { DNS_B_NAME, DNS_B_REST, DNS_B_END };
static const int8_t b_10[] = { 10, DNS_B_END };
static const int8_t b_6[] = { 6, DNS_B_END };
static const int8_t b_8[] = { 8, DNS_B_END };
static const int8_t b_rest[] = { DNS_B_REST, DNS_B_END };
static const int8_t b_2_name_name[] = { 2, DNS_B_NAME, DNS_B_NAME, DNS_B_END };

/* ASCII lower case, as DNS compares names (RFC 4343). */
const uint8_t dns_lower[256] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
	0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23,
	0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f,
	0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x3b,
	0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
	0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73,
	0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f,
	0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b,
	0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77,
	0x78, 0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f, 0x80, 0x81, 0x82, 0x83,
	0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
	0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0x9b,
	0x9c, 0x9d, 0x9e, 0x9f, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
	0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3,
	0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
	0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb,
	0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7,
	0xd8, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xe1, 0xe2, 0xe3,
	0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef,
	0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb,
	0xfc, 0xfd, 0xfe, 0xff,
};

/* libknot's main table: the types it knows by name. */
static const int8_t *main_blocks(uint16_t type)
{
	switch (type) {
	case DNS_T_A:
		return b_4;
	case DNS_T_NS:
	case DNS_T_CNAME:
	case DNS_T_PTR:
		return b_cname;
	case DNS_T_SOA:
		return b_cname_cname_20;
	case DNS_T_MINFO:
		return b_cname_cname;
	case DNS_T_MX:
		return b_2_cname;
	case DNS_T_RP:
		return b_name_name;
	case DNS_T_AFSDB:
	case DNS_T_RT:
	case DNS_T_KX:
	case DNS_T_LP:
		return b_2_name;
	case DNS_T_SIG:
	case DNS_T_RRSIG:
		return b_18_name_rest;
	case DNS_T_AAAA:
	case DNS_T_LOC:
		return b_16;
	case DNS_T_SRV:
		return b_6_name;
	case DNS_T_NAPTR:
		return b_naptr_hdr_name;
	case DNS_T_DNAME:
		return b_name;
	case DNS_T_NSEC:
	case DNS_T_TKEY:
	case DNS_T_TSIG:
		return b_name_rest;
	case DNS_T_NID:
	case DNS_T_L64:
		return b_10;
	case DNS_T_L32:
	case DNS_T_EUI48:
		return b_6;
	case DNS_T_EUI64:
		return b_8;
	case DNS_T_NULL:
	case DNS_T_HINFO:
	case DNS_T_TXT:
	case DNS_T_KEY:
	case DNS_T_CERT:
	case DNS_T_OPT:
	case DNS_T_APL:
	case DNS_T_DS:
	case DNS_T_SSHFP:
	case DNS_T_IPSECKEY:
	case DNS_T_DNSKEY:
	case DNS_T_DHCID:
	case DNS_T_NSEC3:
	case DNS_T_NSEC3PARAM:
	case DNS_T_TLSA:
	case DNS_T_SMIMEA:
	case DNS_T_CDS:
	case DNS_T_CDNSKEY:
	case DNS_T_OPENPGPKEY:
	case DNS_T_CSYNC:
	case DNS_T_ZONEMD:
	case DNS_T_SVCB:
	case DNS_T_HTTPS:
	case DNS_T_SPF:
	case DNS_T_IXFR:
	case DNS_T_AXFR:
	case DNS_T_ANY:
	case DNS_T_URI:
	case DNS_T_CAA:
		return b_rest;
	default:
		return NULL;
	}
}

/* libknot's table of obsolete types. */
static const int8_t *obsolete_blocks(uint16_t type)
{
	switch (type) {
	case DNS_T_MD:
	case DNS_T_MF:
	case DNS_T_MB:
	case DNS_T_MG:
	case DNS_T_MR:
		return b_name;
	case 26: /* PX */
		return b_2_name_name;
	case DNS_T_NXT:
		return b_name_rest;
	default:
		return NULL;
	}
}

const int8_t *dns_rdata_blocks(uint16_t type, int obsolete, int *known)
{
	const int8_t *b = main_blocks(type);

	if (!b && obsolete)
		b = obsolete_blocks(type);
	if (known)
		*known = b != NULL;
	return b ? b : b_rest;
}

int dns_type_lowercased(uint16_t type)
{
	switch (type) {
	case DNS_T_NS:
	case DNS_T_MD:
	case DNS_T_MF:
	case DNS_T_CNAME:
	case DNS_T_SOA:
	case DNS_T_MB:
	case DNS_T_MG:
	case DNS_T_MR:
	case DNS_T_PTR:
	case DNS_T_MINFO:
	case DNS_T_MX:
	case DNS_T_RP:
	case DNS_T_AFSDB:
	case DNS_T_RT:
	case DNS_T_SIG:
	case 26: /* PX */
	case DNS_T_NXT:
	case DNS_T_NAPTR:
	case DNS_T_KX:
	case DNS_T_SRV:
	case DNS_T_DNAME:
	case DNS_T_RRSIG:
		return 1;
	default:
		return 0;
	}
}

int dns_additional_name_off(uint16_t type)
{
	switch (type) {
	case DNS_T_NS:
		return 0;
	case DNS_T_MX:
	case DNS_T_SVCB:
	case DNS_T_HTTPS:
		return 2;
	case DNS_T_SRV:
		return 6;
	default:
		return -1;
	}
}

int dns_naptr_header_len(const uint8_t *p, const uint8_t *end)
{
	size_t off = 4, avail = p < end ? (size_t)(end - p) : 0;
	int i;

	if (avail < off)
		return -1;
	for (i = 0; i < 3; i++) {
		if (off >= avail)
			return -1;
		off += 1 + (size_t)p[off];
		if (off > avail)
			return -1;
	}
	return (int)off;
}

/* knot_dname_wire_check(), also giving the name's uncompressed length. */
static int name_check(const uint8_t *p, const uint8_t *end, const uint8_t *msg,
		      size_t *full)
{
	int wire_len = 0, compressed = 0;
	size_t name_len = 1;

	if (p >= end)
		return -1;
	while (*p) {
		if (p + 2 > end)
			return -1;
		if ((*p & 0xc0) == 0xc0) {
			size_t ptr = (size_t)(p[0] & 0x3f) << 8 | p[1];

			/* Only backwards, so no loop. */
			if (!msg || ptr >= (size_t)(p - msg))
				return -1;
			p = msg + ptr;
			if (!compressed) {
				wire_len += 2;
				compressed = 1;
			}
		} else {
			size_t lblen = (size_t)*p + 1;

			if (*p > DNS_MAX_LABEL ||
			    name_len + lblen > DNS_MAX_NAME)
				return -1;
			name_len += lblen;
			if (!compressed)
				wire_len += (int)lblen;
			p += lblen;
		}
		if (p + 1 > end)
			return -1;
	}
	if (!compressed)
		wire_len++;
	if (full)
		*full = name_len;
	return wire_len;
}

int dns_name_check(const uint8_t *p, const uint8_t *end, const uint8_t *msg)
{
	return name_check(p, end, msg, NULL);
}

size_t dns_name_unpack(uint8_t *dst, const uint8_t *p, const uint8_t *msg)
{
	size_t len = 0;

	for (;;) {
		if ((*p & 0xc0) == 0xc0) {
			p = msg + ((size_t)(p[0] & 0x3f) << 8 | p[1]);
			continue;
		}
		memcpy(dst + len, p, (size_t)*p + 1);
		len += (size_t)*p + 1;
		if (!*p)
			return len;
		p += *p + 1;
	}
}

size_t dns_name_len(const uint8_t *name)
{
	const uint8_t *p = name;

	while (*p)
		p += *p + 1;
	return (size_t)(p - name) + 1;
}

size_t dns_name_len_in(const uint8_t *p, const uint8_t *end)
{
	const uint8_t *s = p;

	while (p < end && *p)
		p += *p + 1;
	return p < end ? (size_t)(p - s) + 1 : 0;
}

unsigned int dns_name_labels(const uint8_t *name)
{
	unsigned int n = 0;

	for (; *name; name += *name + 1)
		n++;
	return n;
}

void dns_name_lower(uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		dst[i] = dns_lower[src[i]];
}

int dns_name_under(const uint8_t *name, const uint8_t *zone)
{
	unsigned int nl = dns_name_labels(name), zl = dns_name_labels(zone);
	size_t i, zlen;
	unsigned int k;

	if (nl < zl)
		return -1;
	for (k = 0; k < nl - zl; k++)
		name += *name + 1;
	zlen = dns_name_len(zone);
	for (i = 0; i < zlen; i++)
		if (dns_lower[name[i]] != dns_lower[zone[i]])
			return -1;
	return (int)(nl - zl);
}

void dns_name_str(const uint8_t *name, char *out, size_t outlen)
{
	size_t o = 0;
	unsigned int i;

	if (outlen < 2)
		return;
	if (!*name) {
		strcpy(out, ".");
		return;
	}
	for (; *name && o + 1 < outlen; name += *name + 1) {
		for (i = 1; i <= *name && o + 5 < outlen; i++) {
			uint8_t c = name[i];

			if (c == '.' || c == '\\')
				o += (size_t)snprintf(out + o, outlen - o,
						      "\\%c", c);
			else if (c > 0x20 && c < 0x7f)
				out[o++] = (char)c;
			else
				o += (size_t)snprintf(out + o, outlen - o,
						      "\\%03u", c);
		}
		if (o + 1 < outlen)
			out[o++] = '.';
	}
	out[o] = '\0';
}

/* knot_tsig_rdata_is_ok() on the uncompressed RDATA layout. */
static int tsig_ok(const uint8_t *rd, size_t len, const uint8_t *msg)
{
	size_t off, mac, other;
	int n = name_check(rd, rd + len, msg, NULL);

	if (n <= 0)
		return 0;
	/* After the algorithm name (compressed here, not in knotd's copy;
	 * the fields after it are the same): time signed (6), fudge (2),
	 * MAC size, MAC, original ID (2), error (2), other length, other. */
	off = (size_t)n + 8;
	if (off + 2 > len)
		return 0;
	mac = dns_get16(rd + off);
	off += 2 + mac + 4;
	if (off + 2 > len)
		return 0;
	other = dns_get16(rd + off);
	off += 2;
	return len - off == other;
}

/* The RDATA of one record: knot's parse_rdata(). */
static int rdata_ok(const uint8_t *msg, const uint8_t *rd, size_t rdlen,
		    uint16_t type, uint16_t rclass)
{
	const uint8_t *src = rd, *end = rd + rdlen;
	size_t real = 0, full;
	const int8_t *b;
	int known, n;

	b = dns_rdata_blocks(type, 1, &known);
	if (!rdlen)
		return rclass != DNS_C_IN || type == DNS_T_APL || !known;
	for (; *b != DNS_B_END; b++) {
		switch (*b) {
		case DNS_B_CNAME:
		case DNS_B_NAME:
			n = name_check(src, end, msg, &full);
			if (n <= 0)
				return 0;
			src += n;
			real += full;
			break;
		case DNS_B_NAPTR_HDR:
			n = dns_naptr_header_len(src, end);
			if (n < 0)
				return 0;
			src += n;
			real += (size_t)n;
			break;
		case DNS_B_REST:
			real += (size_t)(end - src);
			src = end;
			break;
		default:
			if (*b > end - src)
				return 0;
			src += *b;
			real += (size_t)*b;
			break;
		}
		if (real > 65535)
			return 0;
	}
	return real >= rdlen;
}

/* EDNS options: whole (code, length, data) triples, nothing left over. */
static int options_ok(const uint8_t *p, size_t len, struct dns_query *q)
{
	size_t off = 0;

	while (off < len) {
		if (len - off < 4)
			return 0;
		if (dns_get16(p + off) == DNS_OPT_EXPIRE)
			q->edns_expire = 1;
		else if (dns_get16(p + off) == DNS_OPT_NSID)
			q->edns_nsid = 1;
		else if (dns_get16(p + off) == DNS_OPT_COOKIE &&
			 !q->cookie_len && off + 4 <= len) {
			size_t n = dns_get16(p + off + 2);

			/* 0 would read as none: one byte is as malformed */
			q->cookie_len = n ? (uint16_t)n : 1;
			if (n > sizeof(q->cookie))
				n = sizeof(q->cookie);
			if (n <= len - off - 4)
				memcpy(q->cookie, p + off + 4, n);
		}
		off += 4 + (size_t)dns_get16(p + off + 2);
		if (off > len)
			return 0;
	}
	return 1;
}

enum section { ANSWER, AUTHORITY, ADDITIONAL };

/* One record at *pos; moves *pos as far as knot_rrset_rr_from_wire()
 * does, even when it then fails, because that decides between FORMERR
 * and silence. Returns 1 or 0. */
static int parse_rr(const uint8_t *msg, size_t len, size_t *pos,
		    enum section sec, struct dns_query *q, int *after_tsig)
{
	size_t start = *pos, p = start, rdlen;
	uint16_t type, rclass;
	uint32_t ttl;
	int n;

	n = name_check(msg + p, msg + len, msg, NULL);
	if (n <= 0 || len - p < (size_t)n + 10)
		return 0;
	p += (size_t)n;
	type = dns_get16(msg + p);
	rclass = dns_get16(msg + p + 2);
	ttl = dns_get32(msg + p + 4);
	rdlen = dns_get16(msg + p + 8);
	p += 10;
	if (len - p < rdlen)
		return 0;
	*pos = p;
	if (!rdata_ok(msg, msg + p, rdlen, type, rclass))
		return 0;
	*pos = p + rdlen;
	if (*after_tsig)
		return 0; /* TSIG must be the last record */
	if (type == DNS_T_OPT) {
		if (sec != ADDITIONAL || q->edns ||
		    !options_ok(msg + p, rdlen, q))
			return 0;
		q->edns = 1;
		q->edns_payload = rclass;
		q->edns_version = (uint8_t)(ttl >> 16);
		q->edns_flags = (uint16_t)ttl;
	} else if (type == DNS_T_TSIG) {
		if (sec != ADDITIONAL || q->tsig ||
		    !tsig_ok(msg + p, rdlen, msg))
			return 0;
		q->tsig = 1;
		dns_name_unpack(q->tsig_owner, msg + start, msg);
		dns_name_lower(q->tsig_owner, q->tsig_owner,
			       dns_name_len(q->tsig_owner));
		dns_name_unpack(q->tsig_alg, msg + p, msg);
		memcpy(q->tsig_time,
		       msg + p + dns_name_check(msg + p, msg + p + rdlen, msg),
		       6);
		*after_tsig = 1;
	}
	return 1;
}

enum dns_verdict dns_parse_query(const uint8_t *msg, size_t len,
				 struct dns_query *q)
{
	size_t parsed = DNS_HDR_LEN, total, i;
	uint16_t counts[3];
	int after_tsig = 0, n;
	unsigned int s;

	memset(q, 0, offsetof(struct dns_query, lname));
	if (len < DNS_HDR_LEN)
		return DNS_IGNORE;
	q->flags = dns_get16(msg + 2);
	if (q->flags & DNS_F_QR)
		return DNS_IGNORE; /* answering answers makes loops */
	q->opcode = (uint8_t)((q->flags & DNS_F_OPCODE) >> 11);

	/*
	 * knotd drops what fails before anything past the header parsed: a
	 * second question, a bad QNAME, a cut question, and (without a
	 * question) a first record that does not parse.
	 */
	switch (dns_get16(msg + 4)) {
	case 0:
		break;
	case 1:
		n = name_check(msg + DNS_HDR_LEN, msg + len, NULL, NULL);
		if (n <= 0 || len < DNS_HDR_LEN + (size_t)n + 4)
			return DNS_IGNORE;
		q->has_question = 1;
		q->qname_len = (uint16_t)n;
		dns_name_lower(q->lname, msg + DNS_HDR_LEN, (size_t)n);
		for (i = 0; q->lname[i]; i += q->lname[i] + 1U)
			q->label_off[q->qlabels++] = (uint8_t)i;
		q->qtype = dns_get16(msg + DNS_HDR_LEN + n);
		q->qclass = dns_get16(msg + DNS_HDR_LEN + n + 2);
		parsed += (size_t)n + 4;
		break;
	default:
		return DNS_IGNORE;
	}

	counts[ANSWER] = dns_get16(msg + 6);
	counts[AUTHORITY] = q->nscount = dns_get16(msg + 8);
	counts[ADDITIONAL] = dns_get16(msg + 10);
	total = (size_t)counts[0] + counts[1] + counts[2];
	if (total > len / 11) /* a record takes 11 bytes at least */
		goto fail;
	for (s = ANSWER; s <= ADDITIONAL; s++)
		for (i = 0; i < counts[s]; i++)
			if (parsed >= len ||
			    !parse_rr(msg, len, &parsed, (enum section)s, q,
				      &after_tsig))
				goto fail;
	if (parsed < len)
		goto fail; /* trailing bytes */
	return DNS_ANSWER;
fail:
	return parsed > DNS_HDR_LEN ? DNS_FORMERR : DNS_IGNORE;
}
