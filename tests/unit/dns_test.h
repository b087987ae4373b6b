/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the tests/unit/dns program share: the function's instance
 * and counters (dns.c), queries built by hand and replies read apart
 * from the function's code (dns_msg.c).
 */
#ifndef RR_UNIT_DNS_TEST_H
#define RR_UNIT_DNS_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "function.h"
#include <reqrouter/rr_function.h>

#define ZONE "configs/example.zone"
#define QID 0xbeef

/* The dns function, its instance (load()) and its counters. */
extern const struct rr_function *fn;
extern struct rr_fn_instance *inst;
extern struct rr_fn_counters ctrs;
extern uint64_t counters[RR_FN_MAX_COUNTERS];
extern char err[512]; /* what the last load() refused */

struct q {
	uint8_t b[1024];
	size_t len;
};

struct rr {
	char owner[300];
	unsigned int type, rclass;
	uint32_t ttl;
	char data[1100]; /* names decompressed, A/AAAA/TXT/MX/SOA as text */
};

struct reply {
	int len;	  /* > 0: a reply; else the request path's result */
	uint8_t b[65536]; /* up to a reply over TCP */
	int no_cache;	  /* ask_tcp(): the function said RR_REPLY_NO_CACHE */
	unsigned int id, flags, rcode, qd, an, ns, ar;
	char qname[300];
	unsigned int qtype, qclass;
	struct rr rr[64]; /* answer, authority, additional in order */
	int opt;	  /* index in rr[] of the OPT record, or -1 */
};

#define QR 0x8000
#define AA 0x0400
#define TC 0x0200
#define RD 0x0100

void put16(uint8_t *p, unsigned int v);
/* A query for @qname @qtype @qclass with header @flags, ID QID. */
void query(struct q *q, const char *qname, unsigned int qtype,
	   unsigned int qclass, unsigned int flags);
/* An OPT record: UDP @payload, EDNS @version, DO, and @optlen bytes of
 * options. */
void add_opt(struct q *q, unsigned int payload, unsigned int version,
	     int dnssec_ok, const uint8_t *opts, size_t optlen);
/*
 * Sends @q as a worker would: in an Ethernet/IPv4/UDP frame through
 * rr_serve_keep(), with an interface MTU of @mtu. Fills @r with the
 * reply, or sets r->len to the request path's (negative) result.
 */
void ask_mtu(const struct q *q, uint32_t mtu, struct reply *r);
void ask(const struct q *q, struct reply *r);
/* Sends @q as one message of a TCP connection: the handler alone, with
 * transport RR_TRANSPORT_TCP and 65535 bytes of room, as reqrouter's TCP
 * server calls it. */
void ask_tcp(const struct q *q, struct reply *r);
/* One answer/authority/additional record as "owner type ttl data". */
void check_rr(const struct rr *rr, const char *owner, unsigned int type,
	      uint32_t ttl, const char *data);
void check_counts(const struct reply *r, unsigned int rcode, unsigned int flags,
		  unsigned int an, unsigned int ns, unsigned int ar);

/* One query and the reply it must get: the header's RCODE, flags (AA,
 * TC, RD) and counts, then the first records in order ("owner type ttl
 * data"; data NULL: any; owner NULL ends them). */
struct exchange {
	struct {
		const char *name;
		unsigned int type, qclass, flags;
	} q;
	struct {
		unsigned int rcode, flags, an, ns, ar;
	} want;
	struct want_rr {
		const char *owner;
		unsigned int type;
		uint32_t ttl;
		const char *data;
	} rr[5];
};
/* Asks each query of @x in turn and checks its reply. */
void check_exchanges(const struct exchange *x, size_t n);

/* A new instance with the settings @kv (@n key/value pairs); the
 * function's init() result. */
int load(const char *const *kv, size_t n);
/* The instance with configs/example.zone. */
void load_example(void);
/* The counter called @name. */
uint64_t counter(const char *name);
int setup(void **state);
int teardown(void **state);

/* The other parts' tests; each returns the number that failed. */
int run_proto_tests(void);  /* dns_proto.c */
int run_zone_tests(void);   /* dns_zone.c */
int run_tcp_tests(void);    /* dns_tcp.c */
int run_cookie_tests(void); /* dns_cookie.c */

#endif /* RR_UNIT_DNS_TEST_H */
