// SPDX-License-Identifier: GPL-2.0
/*
 * dns: an authoritative DNS server over UDP and TCP, answering from zone
 * files loaded at start-up (and again on SIGHUP).
 *
 *	[function dns]
 *	zone = example.com configs/example.zone
 *	zone = /etc/reqrouter/example.net.zone   ; origin: the SOA's owner
 *	udp_max_payload = 1232
 *	identity = ns1.example.com   ; CHAOS TXT id.server (default: refused)
 *	version = 1.0                ; CHAOS TXT version.bind (default: refused)
 *	nsid = ns1                   ; EDNS NSID, or 0xHEX (default: none)
 *	dnstap = /var/log/dns.tap    ; dnstap messages (dnstap.c)
 *
 * It answers as Knot DNS 3.2 answers from the same files with its default
 * settings, down to the bytes (same records, same order, same name
 * compression, so the same truncation): the answer logic below follows
 * knotd's internet.c step by step (CNAME chains of at most 5 inside the
 * zone, DNAME, wildcards, empty non-terminals, referrals with glue, NS/MX/
 * SRV targets in the additional section, SOA with the negative TTL in
 * negative answers, EDNS(0), CHAOS TXT and NSID as its chaos.c and
 * process_query.c give them). docs/FUNCTIONS.md lists what it leaves out
 * (DNSSEC records beyond asking for them by type, TSIG, transfers).
 *
 * Over UDP a reply is cut (TC) to what the client offers: 512 bytes, or
 * its EDNS size up to udp_max_payload, which so bounds what a forged
 * query can reflect (the function is RR_FN_CLIENT_SIZED: reqrouter's
 * max_amplification defaults to 0 for it). Over TCP (RR_FN_TCP, RFC
 * 7766) the answer is whole, up to 64 KiB, as knotd's.
 *
 * The request path allocates nothing and takes no lock: the zones are
 * read-only once loaded (dns_zone.h), names are found through one hash
 * lookup, and the usual answer (the first RRset for the QNAME) is one copy
 * of bytes made at load time.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "dns_answer.h"
#include "dns_cookie.h"
#include "dns_pkt.h"
#include "dns_wire.h"
#include "dns_zone.h"
#include "dnstap.h"
#include <reqrouter/rr_function.h>

#define DNS_UDP_DEFAULT 1232 /* knotd's udp-max-payload */
#define DNS_UDP_MAX 4096
#define DNS_TCP_MAX 65535 /* a message's length prefix */
/* A CHAOS TXT answer is one character-string (knotd cuts it there). */
#define DNS_TEXT_MAX 255
/* Ours: with it, every CHAOS answer fits 512 bytes with its OPT. */
#define DNS_NSID_MAX 128

enum dns_counter {
	C_NOERROR,
	C_NXDOMAIN,
	C_REFERRAL,
	C_REFUSED,
	C_FORMERR,
	C_NOTIMP,
	C_OTHER,
	C_TRUNCATED,
	C_IGNORED,
	C_COOKIE_CLIENT,
	C_COOKIE_VALID,
	C_COOKIE_MALFORMED,
	C_COOKIE_UNKNOWN,
	C_COOKIE_EXPIRED,
	C_COOKIE_WRONG,
	C_BADCOOKIE,
	C_COUNT
};

static const char *const counter_names[C_COUNT][2] = {
	{ "dns_noerror", "DNS answers with RCODE NOERROR (data or none)." },
	{ "dns_nxdomain", "DNS answers with RCODE NXDOMAIN." },
	{ "dns_referral", "DNS answers that refer to a delegated zone." },
	{ "dns_refused", "DNS queries refused (no zone for the name)." },
	{ "dns_formerr", "DNS queries answered FORMERR." },
	{ "dns_notimp", "DNS queries answered NOTIMP." },
	{ "dns_other_rcode",
	  "DNS answers with another RCODE (NOTAUTH, BADVERS, YXDOMAIN, BADCOOKIE)." },
	{ "dns_truncated", "DNS answers truncated (TC) to fit." },
	{ "dns_ignored",
	  "DNS messages not answered: responses, or malformed before the question ended." },
	/* One of the six per query with a COOKIE option (RFC 7873). */
	{ "dns_cookie_client", "DNS queries with a client cookie alone." },
	{ "dns_cookie_valid",
	  "DNS queries with a valid server cookie of ours (renewed past half an hour)." },
	{ "dns_cookie_malformed",
	  "DNS queries with a COOKIE option not 8 or 16 to 40 bytes long: FORMERR." },
	{ "dns_cookie_unknown",
	  "DNS queries with a server cookie not of RFC 9018's form (version 1, 16 bytes)." },
	{ "dns_cookie_expired",
	  "DNS queries with a server cookie of ours made over an hour ago, or over 5 minutes ahead." },
	{ "dns_cookie_wrong",
	  "DNS queries with a server cookie that no secret of ours made for this client (forged, another server's, a secret rotated out)." },
	{ "dns_badcookie",
	  "DNS replies BADCOOKIE: over UDP, to a query without a valid server cookie." },
};

struct dns_state {
	struct dns_zone **zones;
	size_t nzones;
	/* Zones by apex: the apex name's hash, and zone index + 1. */
	struct dns_slot *table;
	uint32_t mask;
	uint64_t label_counts[2]; /* bit n: a zone apex has n labels */
	uint16_t udp_max;
	/* CHAOS TXT answers and the NSID; length 0: none (refused, or no
	 * option), as knotd's identity, version and nsid set to "". */
	uint8_t identity_len, version_len, nsid_len;
	char identity[DNS_TEXT_MAX];
	char version[DNS_TEXT_MAX];
	uint8_t nsid[DNS_NSID_MAX];
	struct dns_cookie_keys cookie;
	int counter[C_COUNT];
	struct dnstap *dt; /* NULL: dnstap off */
};

static void dns_free(void *state)
{
	struct dns_state *st = state;
	size_t i;

	if (!st)
		return;
	dnstap_free(st->dt);
	for (i = 0; i < st->nzones; i++)
		dns_zone_free(st->zones[i]);
	free(st->zones);
	free(st->table);
	free(st);
}

static const struct dns_zone *zone_by_apex(const struct dns_state *st,
					   const uint8_t *name, size_t len)
{
	uint32_t hash = dns_name_hash(name, len), i;

	for (i = hash & st->mask; st->table[i].node; i = (i + 1) & st->mask) {
		const struct dns_zone *z = st->zones[st->table[i].node - 1];

		if (st->table[i].hash == hash && z->name_len == len &&
		    !memcmp(z->name, name, len))
			return z;
	}
	return NULL;
}

/* The zone with the longest apex that @q's QNAME, less @skip labels, is
 * in. */
static const struct dns_zone *find_zone(const struct dns_state *st,
					const struct dns_query *q,
					unsigned int skip)
{
	int k;

	if (skip > q->qlabels)
		return NULL;
	for (k = q->qlabels - (int)skip; k >= 0; k--) {
		const struct dns_zone *z;
		size_t off;

		if (!(st->label_counts[k >> 6] >> (k & 63) & 1))
			continue;
		off = k == q->qlabels ? 0
		      : k	      ? q->label_off[q->qlabels - k]
				      : (size_t)q->qname_len - 1;
		z = zone_by_apex(st, q->lname + off, q->qname_len - off);
		if (z)
			return z;
	}
	return NULL;
}

/* What knotd's query_type() calls a query. */
enum qkind { Q_NORMAL, Q_AXFR, Q_IXFR, Q_NOTIFY, Q_UPDATE, Q_INVALID };

static enum qkind query_kind(const struct dns_query *q)
{
	switch (q->opcode) {
	case DNS_OP_QUERY:
		switch (q->qtype) {
		case 0:
			return Q_INVALID;
		case DNS_T_AXFR:
			return Q_AXFR;
		case DNS_T_IXFR:
			return Q_IXFR;
		default:
			return Q_NORMAL;
		}
	case DNS_OP_NOTIFY:
		return Q_NOTIFY;
	case DNS_OP_UPDATE:
		return Q_UPDATE;
	default:
		return Q_INVALID;
	}
}

static void count_rcode(const struct rr_request *req,
			const struct dns_state *st, unsigned int rcode)
{
	enum dns_counter c;

	switch (rcode) {
	case DNS_R_NOERROR:
		c = C_NOERROR;
		break;
	case DNS_R_NXDOMAIN:
		c = C_NXDOMAIN;
		break;
	case DNS_R_REFUSED:
		c = C_REFUSED;
		break;
	case DNS_R_FORMERR:
		c = C_FORMERR;
		break;
	case DNS_R_NOTIMP:
		c = C_NOTIMP;
		break;
	default:
		c = C_OTHER;
		break;
	}
	rr_fn_count(req, st->counter[c], 1);
}

/* The header of a reply: the query's ID, opcode and RD; QR; AA and TC as
 * given; CD, AD, RA and Z clear (knot_pkt_init_response()). */
static void put_header(uint8_t *m, const struct dns_query *q, int aa, int tc,
		       unsigned int rcode, uint16_t an, uint16_t ns,
		       uint16_t ar)
{
	uint16_t flags = DNS_F_QR | (q->flags & (DNS_F_OPCODE | DNS_F_RD));

	if (aa)
		flags |= DNS_F_AA;
	if (tc)
		flags |= DNS_F_TC;
	dns_put16(m + 2, flags | (rcode & 0xf));
	dns_put16(m + 4, q->has_question);
	dns_put16(m + 6, an);
	dns_put16(m + 8, ns);
	dns_put16(m + 10, ar);
}

/* The SOA's EXPIRE field, which knotd sends in EDNS EXPIRE for a zone it
 * loaded from a file. */
static uint32_t soa_expire(const struct dns_zone *z)
{
	const uint8_t *rd = z->soa->v.rdata;

	return dns_get32(rd + 2 + dns_get16(rd) - 8);
}

/*
 * The OPT record of a reply to @q, with what fits of EXPIRE in the @left
 * bytes after it; @nsid: with our NSID, which the room was kept for.
 */
static void reply_opt(const struct dns_state *st, const struct dns_query *q,
		      const struct dns_zone *z, unsigned int rcode, size_t left,
		      bool nsid, struct dns_opt *o)
{
	o->payload = st->udp_max;
	o->flags = q->edns_flags & DNS_EDNS_DO;
	o->ext_rcode = (uint8_t)(rcode >> 4);
	o->ede = 0;
	o->has_expire = q->edns_expire && z && left >= DNS_OPT_EXPIRE_LEN;
	o->expire = o->has_expire ? soa_expire(z) : 0;
	o->nsid = nsid ? st->nsid : NULL;
	o->nsid_len = nsid ? st->nsid_len : 0;
	o->cookie = q->reply_cookie_len ? q->reply_cookie : NULL;
	o->cookie_len = q->reply_cookie_len;
}

/*
 * The OPT record's size in a reply to @q before EDE and EXPIRE, which go
 * in only if there is room left: with the reply's cookie if it has one,
 * and with the NSID when the query has the option and we have one
 * (knotd keeps its room first), if the header, question and cookie still
 * fit @max with it. 0 without EDNS.
 */
static size_t opt_size(const struct dns_state *st, const struct dns_query *q,
		       size_t max, bool *nsid)
{
	size_t cookie = q->reply_cookie_len
				? DNS_OPT_HDR_LEN + (size_t)q->reply_cookie_len
				: 0;
	size_t need = DNS_HDR_LEN + q->qname_len + 4U + DNS_OPT_LEN + cookie;
	size_t nlen = DNS_OPT_HDR_LEN + (size_t)st->nsid_len;

	*nsid = false;
	if (!q->edns)
		return 0;
	*nsid = q->edns_nsid && st->nsid_len && max >= need + nlen;
	return DNS_OPT_LEN + (*nsid ? nlen : 0) + cookie;
}

/*
 * How long a reply to @q may be, its OPT record left out (*@optlen bytes;
 * *@nsid: with our NSID). Over UDP 512 bytes, or what EDNS offers up to
 * our own limit, never more than the room the reply has (*@room_bound:
 * the room was less). Over TCP everything the room has (RFC 7766: no
 * truncation for size but past 64 KiB, where knotd cuts too).
 */
static size_t reply_max(const struct rr_request *req,
			const struct dns_state *st, const struct dns_query *q,
			size_t room, size_t *optlen, bool *nsid,
			bool *room_bound)
{
	size_t max;

	if (req->transport == RR_TRANSPORT_TCP) {
		max = room < DNS_TCP_MAX ? room : DNS_TCP_MAX;
		*room_bound = false;
	} else {
		max = DNS_MIN_UDP;
		if (q->edns && q->edns_payload > max)
			max = q->edns_payload < st->udp_max ? q->edns_payload
							    : st->udp_max;
		*room_bound = max > room;
		if (max > room)
			max = room;
	}
	*optlen = opt_size(st, q, max, nsid);
	return max > *optlen ? max - *optlen : 0;
}

/*
 * An answer without records (knotd's process_query_err()): the header,
 * the question if there was one, and an OPT if the query had one and got
 * as far as EDNS (@opt), with the Extended DNS Error @ede if it fits and
 * EXPIRE if asked for and a zone @z was found. A query signed with a key
 * (there are none) gets its TSIG record back with BADKEY (@badkey).
 */
static int error_reply(const struct rr_request *req, const struct dns_state *st,
		       uint8_t *m, size_t room, const struct dns_query *q,
		       unsigned int rcode, int opt, uint16_t ede,
		       const struct dns_zone *z, int badkey)
{
	size_t len = DNS_HDR_LEN, left;
	uint16_t ar = 0;
	struct dns_opt o;
	bool nsid;

	if (q->has_question)
		len += q->qname_len + 4U;
	if (len > room)
		return -EMSGSIZE; /* not reached: room >= the query */
	left = room - len;
	opt = opt && q->edns;
	if (opt) {
		size_t optlen = opt_size(st, q, room, &nsid);

		if (left < optlen)
			return -EMSGSIZE; /* not reached: the query's OPT */
		left -= optlen;
		reply_opt(st, q, NULL, rcode, 0, nsid, &o);
		if (ede && left >= DNS_OPT_EDE_LEN) {
			o.ede = ede;
			left -= DNS_OPT_EDE_LEN;
		}
		o.has_expire =
			q->edns_expire && z && left >= DNS_OPT_EXPIRE_LEN;
		o.expire = o.has_expire ? soa_expire(z) : 0;
		len += dns_pkt_put_opt(m + len, &o);
		ar++;
	}
	if (badkey && q->tsig) {
		size_t n = dns_put_tsig_badkey(m + len, room - len, q,
					       dns_get16(m));

		len += n;
		ar += n > 0;
	}
	put_header(m, q, 0, 0, rcode, 0, 0, ar);
	count_rcode(req, st, rcode);
	return (int)len;
}

/*
 * A query for zone @z that gets an answer: built in place in @buf within
 * the size the client offers and the @room the reply has, with its OPT
 * record, header and counters. Returns the reply's length.
 */
static int answer(const struct rr_request *req, const struct dns_state *st,
		  uint8_t *buf, size_t room, const struct dns_query *q,
		  const struct dns_zone *z)
{
	enum dns_solve final;
	struct dns_answer a;
	struct dns_pkt p;
	struct dns_opt o;
	bool room_bound, nsid;
	size_t max, len, optlen;
	int aa;

	/* A reply cut to the room offered (the MTU, max_amplification)
	 * depends on more than the query: the reply cache must not answer
	 * another query with it. */
	max = reply_max(req, st, q, room, &optlen, &nsid, &room_bound);
	if (max < DNS_HDR_LEN + q->qname_len + 4U)
		return -EMSGSIZE; /* not reached: room >= the query */

	dns_pkt_init(&p, buf, q->qname_len, q->qlabels, max);
	a.z = z;
	a.p = &p;
	a.qtype = q->qtype;
	a.rcode = DNS_R_NOERROR;
	a.exact = 0;
	a.name = q->lname;
	a.node = a.encloser = NULL;
	a.chain = 0;
	a.nsynth = 0;
	a.nvisited = 0;
	a.nfresh = 0;
	dns_answer_query(&a, &aa, &final);

	len = p.size;
	if (q->edns) {
		reply_opt(st, q, z, a.rcode, p.max - p.size, nsid, &o);
		len += dns_pkt_put_opt(buf + len, &o);
	}
	put_header(buf, q, aa, p.tc, a.rcode, p.count[DNS_SEC_ANSWER],
		   p.count[DNS_SEC_AUTHORITY],
		   (uint16_t)(p.count[DNS_SEC_ADDITIONAL] + q->edns));
	count_rcode(req, st, a.rcode);
	if (p.tc)
		rr_fn_count(req, st->counter[C_TRUNCATED], 1);
	if (room_bound && (p.tc || q->edns))
		rr_fn_no_cache(req);
	if (final == S_DELEG)
		rr_fn_count(req, st->counter[C_REFERRAL], 1);
	return (int)len;
}

/*
 * A CHAOS class query (RFC 4892), as knotd's chaos.c answers it: TXT for
 * id.server and hostname.bind (identity), version.server and
 * version.bind (version); REFUSED for anything else, and for those while
 * the setting is off. The answer is one TXT record, class CH, TTL 0, its
 * owner a pointer to the question; AA clear.
 */
static int chaos(const struct rr_request *req, const struct dns_state *st,
		 uint8_t *buf, size_t room, const struct dns_query *q)
{
	/* Wire form, lower case: two names for the identity, then two for
	 * the version. */
	static const char names[][17] = { "\2id\6server", "\10hostname\4bind",
					  "\7version\6server",
					  "\7version\4bind" };
	size_t max, optlen, len = DNS_HDR_LEN + q->qname_len + 4U, rrlen;
	size_t tlen = 0, i;
	bool nsid, room_bound, tc;
	const char *text = NULL;
	struct dns_opt o;
	uint8_t *rr;

	for (i = 0; q->qtype == DNS_T_TXT && i < sizeof(names) / sizeof(*names);
	     i++) {
		const uint8_t *name = (const uint8_t *)names[i];

		if (q->qname_len != dns_name_len(name) ||
		    memcmp(q->lname, name, q->qname_len))
			continue;
		text = i < 2 ? st->identity : st->version;
		tlen = i < 2 ? st->identity_len : st->version_len;
		break;
	}
	if (!tlen)
		return error_reply(req, st, buf, room, q, DNS_R_REFUSED, 1, 0,
				   NULL, 0);

	max = reply_max(req, st, q, room, &optlen, &nsid, &room_bound);
	if (max < len)
		return -EMSGSIZE; /* not reached: room >= the query */
	rrlen = 2 + 10 + 1 + tlen;
	/* Never for want of the client's size (see DNS_NSID_MAX): only when
	 * the room offered (the MTU, max_amplification) is less. */
	tc = len + rrlen > max;
	if (!tc) {
		rr = buf + len;
		dns_put16(rr, 0xc000 | DNS_HDR_LEN);
		dns_put16(rr + 2, DNS_T_TXT);
		dns_put16(rr + 4, DNS_C_CH);
		dns_put32(rr + 6, 0);
		dns_put16(rr + 10, (uint16_t)(1 + tlen));
		rr[12] = (uint8_t)tlen;
		memcpy(rr + 13, text, tlen);
		len += rrlen;
	}
	if (q->edns) {
		reply_opt(st, q, NULL, DNS_R_NOERROR, 0, nsid, &o);
		len += dns_pkt_put_opt(buf + len, &o);
	}
	put_header(buf, q, 0, tc, DNS_R_NOERROR, !tc, 0, q->edns);
	count_rcode(req, st, DNS_R_NOERROR);
	if (tc) {
		rr_fn_count(req, st->counter[C_TRUNCATED], 1);
		if (room_bound)
			rr_fn_no_cache(req);
	}
	return (int)len;
}

/*
 * A query's COOKIE option (RFC 7873 5.2, RFC 9018), as Knot's mod-cookies
 * judges it with its defaults: the reply carries the client cookie and
 * our server cookie (the query's own while it is valid and less than half
 * an hour old, else a new one); a query without a valid one gets BADCOOKIE
 * over UDP, which costs a spoofed source its answer and a real client one
 * more round trip, and its normal answer over TCP. Every judgement is
 * counted. @tail: the cookie is the query's last bytes. Returns -1 to
 * answer the query, or the error reply's length.
 */
static int cookie_step(const struct rr_request *req, const struct dns_state *st,
		       uint8_t *buf, size_t room, struct dns_query *q,
		       bool tail)
{
	static const enum dns_counter counted[] = {
		[DNS_COOKIE_CLIENT] = C_COOKIE_CLIENT,
		[DNS_COOKIE_VALID] = C_COOKIE_VALID,
		[DNS_COOKIE_RENEW] = C_COOKIE_VALID,
		[DNS_COOKIE_MALFORMED] = C_COOKIE_MALFORMED,
		[DNS_COOKIE_UNKNOWN] = C_COOKIE_UNKNOWN,
		[DNS_COOKIE_EXPIRED] = C_COOKIE_EXPIRED,
		[DNS_COOKIE_WRONG] = C_COOKIE_WRONG,
	};
	int ipv6 = req->family == AF_INET6;
	const uint8_t *ip = ipv6 ? req->src.v6.s6_addr
				 : (const uint8_t *)&req->src.v4.s_addr;
	uint32_t now = (uint32_t)time(NULL);
	enum dns_cookie_kind kind;

	kind = dns_cookie_check(&st->cookie, q->cookie, q->cookie_len, ip, ipv6,
				now);
	rr_fn_count(req, st->counter[counted[kind]], 1);
	/* The reply depends on the client and the time: cached only where
	 * it echoes a valid cookie that ends the query over UDP, which the
	 * reply cache puts back for each client (rr_fn_cache_cookie()). */
	if (kind == DNS_COOKIE_VALID && tail &&
	    req->transport == RR_TRANSPORT_UDP)
		rr_fn_cache_cookie(req);
	else
		rr_fn_no_cache(req);
	if (kind == DNS_COOKIE_MALFORMED)
		return error_reply(req, st, buf, room, q, DNS_R_FORMERR, 1, 0,
				   NULL, 0);
	/* A room cut below the query and our cookie (max_amplification
	 * near 1) leaves the cookie out: answered as without one. */
	if (room < DNS_HDR_LEN + q->qname_len + 4U + DNS_OPT_LEN +
			   DNS_OPT_HDR_LEN + RR_COOKIE_CLIENT_LEN +
			   RR_COOKIE_SERVER_LEN) {
		rr_fn_no_cache(req);
		return -1;
	}
	memcpy(q->reply_cookie, q->cookie, RR_COOKIE_CLIENT_LEN);
	if (kind == DNS_COOKIE_VALID)
		memcpy(q->reply_cookie + RR_COOKIE_CLIENT_LEN,
		       q->cookie + RR_COOKIE_CLIENT_LEN, RR_COOKIE_SERVER_LEN);
	else
		dns_cookie_make(&st->cookie, q->cookie, ip, ipv6, now,
				q->reply_cookie + RR_COOKIE_CLIENT_LEN);
	q->reply_cookie_len = RR_COOKIE_CLIENT_LEN + RR_COOKIE_SERVER_LEN;
	if (kind == DNS_COOKIE_VALID || kind == DNS_COOKIE_RENEW ||
	    req->transport == RR_TRANSPORT_TCP)
		return -1;
	rr_fn_count(req, st->counter[C_BADCOOKIE], 1);
	return error_reply(req, st, buf, room, q, DNS_R_BADCOOKIE, 1, 0, NULL,
			   0);
}

/* The reply to the message in @buf, written over it. */
static int respond(const struct rr_request *req, const struct dns_state *st,
		   uint8_t *buf, size_t len, size_t room)
{
	const struct dns_zone *z = NULL;
	struct dns_query q;
	enum qkind kind;

	/* An answer over TCP may be longer than any over UDP: not one for
	 * the reply cache, which answers datagrams. */
	if (req->transport == RR_TRANSPORT_TCP)
		rr_fn_no_cache(req);
	switch (dns_parse_query(buf, len, &q)) {
	case DNS_IGNORE:
		rr_fn_count(req, st->counter[C_IGNORED], 1);
		return RR_NO_REPLY;
	case DNS_FORMERR:
		return error_reply(req, st, buf, room, &q, DNS_R_FORMERR, 0, 0,
				   NULL, 0);
	case DNS_ANSWER:
		break;
	}
	if (q.edns && q.edns_version != 0)
		return error_reply(req, st, buf, room, &q, DNS_R_BADVERS, 1, 0,
				   NULL, 0);
	if (!q.has_question)
		return error_reply(req, st, buf, room, &q,
				   q.opcode == DNS_OP_QUERY ||
						   q.opcode == DNS_OP_NOTIFY ||
						   q.opcode == DNS_OP_UPDATE
					   ? DNS_R_FORMERR
					   : DNS_R_NOTIMP,
				   1, 0, NULL, 0);
	if (q.cookie_len) {
		const size_t c = RR_COOKIE_CLIENT_LEN + RR_COOKIE_SERVER_LEN;
		int n = cookie_step(
			req, st, buf, room, &q,
			q.cookie_len == c && len >= c &&
				!memcmp(buf + len - c, q.cookie, c));

		if (n >= 0)
			return n;
	}

	/* The zone, as knotd's answer_zone_find(): for DS (whatever the
	 * opcode) the longest apex above the QNAME's parent if there is one;
	 * else the longest above the QNAME, or for anything but a plain
	 * query only the QNAME's own. */
	kind = query_kind(&q);
	if (q.qclass == DNS_C_IN || q.qclass == DNS_C_ANY) {
		if (q.qtype == DNS_T_DS)
			z = find_zone(st, &q, 1);
		if (!z)
			z = kind == Q_NORMAL
				    ? find_zone(st, &q, 0)
				    : zone_by_apex(st, q.lname, q.qname_len);
	} else if (q.qclass == DNS_C_CH) {
		if (kind == Q_NORMAL)
			return chaos(req, st, buf, room, &q);
		return error_reply(req, st, buf, room, &q, DNS_R_NOTIMP, 1, 0,
				   NULL, 0);
	} else {
		return error_reply(req, st, buf, room, &q, DNS_R_REFUSED, 1, 0,
				   NULL, 0);
	}
	switch (kind) {
	case Q_NORMAL:
		break;
	case Q_AXFR: /* knotd: NOTIMP over UDP; over TCP, as IXFR, refused */
		if (req->transport != RR_TRANSPORT_TCP)
			return error_reply(req, st, buf, room, &q, DNS_R_NOTIMP,
					   1, 0, z, 0);
		return error_reply(req, st, buf, room, &q, DNS_R_NOTAUTH, 1, 0,
				   z, z != NULL);
	case Q_UPDATE:
		if (q.qtype != DNS_T_SOA)
			return error_reply(req, st, buf, room, &q,
					   DNS_R_FORMERR, 1, 0, z, 0);
		/* fall through */
	case Q_NOTIFY:
	case Q_IXFR: /* nobody may transfer, notify or update */
		return error_reply(req, st, buf, room, &q, DNS_R_NOTAUTH, 1, 0,
				   z, z != NULL);
	default: /* opcodes knotd does not know, QTYPE 0 */
		return error_reply(req, st, buf, room, &q, DNS_R_NOTIMP, 1, 0,
				   z, 0);
	}
	if (!z)
		return error_reply(req, st, buf, room, &q, DNS_R_REFUSED, 1,
				   DNS_EDE_NOT_AUTHORITATIVE, NULL, 0);
	if (q.tsig) /* there are no keys: no signed query passes */
		return error_reply(req, st, buf, room, &q, DNS_R_NOTAUTH, 1, 0,
				   z, 1);

	return answer(req, st, buf, room, &q, z);
}

static int dns_handler(const struct rr_request *req, uint8_t *buf, size_t len,
		       size_t room)
{
	const struct dns_state *st = req->state;
	struct dnstap_times t;
	int ret;

	if (!st)
		return RR_NO_REPLY; /* a caller that made no state */
	if (!st->dt)		    /* dnstap off: this test is all it costs */
		return respond(req, st, buf, len, room);
	/* What reaches a worker; the reply cache's answers in XDP come
	 * through the tap (dnstap_tap(), docs/OPERATIONS.md, "dnstap"). */
	if (!dnstap_query(st->dt, req->worker_state, req, buf, len, &t))
		return respond(req, st, buf, len, room);
	ret = respond(req, st, buf, len, room);
	if (ret > 0)
		dnstap_response(st->dt, req->worker_state, req, buf,
				(size_t)ret, &t);
	return ret;
}

/* "zone = [ORIGIN] FILE" */
static int add_zone(const struct rr_fn_config *cfg,
		    const struct rr_fn_setting *s, struct dns_state *st)
{
	char *copy = strdup(s->value), *tok[3], *save = NULL, err[512];
	struct dns_zone *z = NULL, **zones;
	int n = 0, ret;

	if (!copy)
		return -ENOMEM;
	for (tok[n] = strtok_r(copy, " \t", &save); tok[n] && n < 2;)
		tok[++n] = strtok_r(NULL, " \t", &save);
	if (n < 1 || n > 2 || tok[n]) {
		free(copy);
		return rr_fn_error(cfg, s, "zone takes [ORIGIN] FILE, not '%s'",
				   s->value);
	}
	ret = dns_zone_load(n == 2 ? tok[1] : tok[0], n == 2 ? tok[0] : NULL,
			    &z, err, sizeof(err));
	free(copy);
	if (ret)
		return rr_fn_error(cfg, s, "%s", err);
	if (zone_by_apex(st, z->name, z->name_len)) {
		char name[DNS_MAX_NAME * 4 + 2];

		dns_name_str(z->name, name, sizeof(name));
		dns_zone_free(z);
		return rr_fn_error(cfg, s, "zone %s is given twice", name);
	}
	zones = realloc(st->zones, (st->nzones + 1) * sizeof(*zones));
	if (!zones) {
		dns_zone_free(z);
		return -ENOMEM;
	}
	st->zones = zones;
	st->zones[st->nzones++] = z;
	st->label_counts[z->labels >> 6] |= 1ULL << (z->labels & 63);
	return 0;
}

/* "identity = TEXT", "version = TEXT": empty turns the answer off. */
static int set_text(const struct rr_fn_config *cfg,
		    const struct rr_fn_setting *s, char *text, uint8_t *len)
{
	size_t n = strlen(s->value);

	if (n > DNS_TEXT_MAX)
		return rr_fn_error(cfg, s,
				   "%s takes at most %d bytes (one TXT string)",
				   s->key, DNS_TEXT_MAX);
	memcpy(text, s->value, n);
	*len = (uint8_t)n;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "nsid = TEXT" or "nsid = 0xHEX", as knotd's nsid; empty: none. */
static int set_nsid(const struct rr_fn_config *cfg,
		    const struct rr_fn_setting *s, struct dns_state *st)
{
	const char *v = s->value;
	size_t n = strlen(v), i;

	if (n >= 2 && v[0] == '0' && v[1] == 'x') { /* "0x" alone: none */
		v += 2;
		n -= 2;
		if (n % 2 || n / 2 > DNS_NSID_MAX)
			goto bad;
		for (i = 0; i < n / 2; i++) {
			int hi = hex_digit(v[2 * i]),
			    lo = hex_digit(v[2 * i + 1]);

			if (hi < 0 || lo < 0)
				goto bad;
			st->nsid[i] = (uint8_t)(hi << 4 | lo);
		}
		st->nsid_len = (uint8_t)(n / 2);
		return 0;
	}
	if (n > DNS_NSID_MAX)
		goto bad;
	memcpy(st->nsid, v, n);
	st->nsid_len = (uint8_t)n;
	return 0;
bad:
	return rr_fn_error(
		cfg, s,
		"nsid takes text or 0x and an even number of hex digits, at most %d bytes, not '%s'",
		DNS_NSID_MAX, s->value);
}

/* The cookie secrets reqrouter keeps for us (cookie_secret); where there
 * are none (a tool), one of our own. */
static int cookie_keys(const struct rr_fn_config *cfg,
		       struct dns_cookie_keys *k)
{
	struct rr_fn_cookie_secrets s;

	if (rr_fn_cookie_secrets(cfg, &s)) {
		memset(&s, 0, sizeof(s));
		if (getrandom(s.current, sizeof(s.current), 0) !=
		    sizeof(s.current))
			return rr_fn_error(
				cfg, NULL,
				"no random bytes for a cookie secret");
	}
	dns_cookie_key(s.current, &k->k0[0], &k->k1[0]);
	dns_cookie_key(s.previous, &k->k0[1], &k->k1[1]);
	k->has_prev = s.has_previous;
	k->prev_until = s.previous_until;
	return 0;
}

/* The apex table, rebuilt as zones are added (there are few). */
static int index_zones(struct dns_state *st)
{
	uint32_t mask = 15, i;

	while ((size_t)mask + 1 < 2 * st->nzones + 2)
		mask = mask * 2 + 1;
	free(st->table);
	st->table = calloc((size_t)mask + 1, sizeof(*st->table));
	if (!st->table)
		return -ENOMEM;
	st->mask = mask;
	for (i = 0; i < st->nzones; i++) {
		const struct dns_zone *z = st->zones[i];
		uint32_t h = dns_name_hash(z->name, z->name_len), j;

		for (j = h & mask; st->table[j].node; j = (j + 1) & mask)
			;
		st->table[j].hash = h;
		st->table[j].node = i + 1;
	}
	return 0;
}

static int dns_init(const struct rr_fn_config *cfg, void **state)
{
	struct dnstap_conf dtc = { 0 };
	struct dns_state *st;
	size_t i;
	int ret = 0;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->udp_max = DNS_UDP_DEFAULT;
	ret = index_zones(st);
	for (i = 0; !ret && i < cfg->nsettings; i++) {
		const struct rr_fn_setting *s = &cfg->settings[i];

		if (!strcmp(s->key, "zone")) {
			ret = add_zone(cfg, s, st);
			if (!ret)
				ret = index_zones(st);
		} else if (!strcmp(s->key, "udp_max_payload")) {
			uint64_t v;

			ret = rr_fn_setting_uint(cfg, s, DNS_MIN_UDP,
						 DNS_UDP_MAX, &v);
			if (!ret)
				st->udp_max = (uint16_t)v;
		} else if (!strcmp(s->key, "identity")) {
			ret = set_text(cfg, s, st->identity, &st->identity_len);
		} else if (!strcmp(s->key, "version")) {
			ret = set_text(cfg, s, st->version, &st->version_len);
		} else if (!strcmp(s->key, "nsid")) {
			ret = set_nsid(cfg, s, st);
		} else {
			ret = dnstap_setting(cfg, s, &dtc);
			if (ret == 1)
				ret = 0;
			else if (!ret)
				ret = rr_fn_error(
					cfg, s,
					"unknown key '%s' (dns takes: zone, udp_max_payload, identity, version, nsid, dnstap, dnstap_sample, dnstap_identity, dnstap_version)",
					s->key);
		}
	}
	if (!ret && !st->nzones)
		ret = rr_fn_error(cfg, NULL,
				  "needs at least one 'zone = [ORIGIN] FILE'");
	if (!ret)
		ret = cookie_keys(cfg, &st->cookie);
	for (i = 0; !ret && i < C_COUNT; i++) {
		st->counter[i] = rr_fn_counter(cfg, counter_names[i][0],
					       counter_names[i][1]);
		if (st->counter[i] < 0)
			ret = st->counter[i];
	}
	if (!ret)
		ret = dnstap_new(cfg, &dtc, &st->dt);
	dnstap_conf_free(&dtc);
	if (ret) {
		dns_free(st);
		return ret;
	}
	*state = st;
	return 0;
}

/* A worker's dnstap ring, when dnstap is on. */
static int dns_init_worker(void *state, uint32_t worker, void **worker_state)
{
	struct dns_state *st = state;

	*worker_state = st->dt ? dnstap_ring_take(st->dt) : NULL;
	return 0;
}

RR_FUNCTION_DEF(dns, 53,
		"authoritative DNS from zone files (reloaded on SIGHUP)",
		.handler = dns_handler, .init = dns_init, .fini = dns_free,
		.init_worker = dns_init_worker,
		.flags = RR_FN_OPT_IN | RR_FN_PURE | RR_FN_TCP |
			 RR_FN_CLIENT_SIZED | RR_FN_RATE_LIMITED |
			 RR_FN_LATE_USELESS | RR_FN_SLIP_TC | RR_FN_DNS_COOKIES,
		.id_bytes = 2, .tcp_framing = RR_TCP_LEN16);
