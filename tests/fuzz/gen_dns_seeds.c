// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of fuzz_dns (tests/fuzz/fuzz_dns.c) into the
 * directory given: queries for the fuzzer's zone names and types, with and
 * without EDNS, other opcodes and classes, and a few malformed messages.
 * Each seed is fuzz_dns's knob byte followed by the message.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static const char *const names[] = {
	"fz",	       "www.fz",       "WwW.Fz",
	"c1.fz",       "out.fz",       "loop1.fz",
	"dangling.fz", "a.dn.fz",      "x.x.dn.fz",
	"q.w.fz",      "a.w2.fz",      "q.w3.fz",
	"b.ent.fz",    "a.b.ent.fz",   "_s._udp.fz",
	"svc.fz",      "web.fz",       "x.del.fz",
	"del.fz",      "long.fz",      "many.fz",
	"child.fz",    "www.child.fz", "z.child.fz",
	"nope.fz",     "example.org",  ".",
};
static const uint16_t types[] = { 1,  28,  2,  15, 16, 6, 5,
				  33, 255, 43, 64, 65, 39 };

static size_t name(uint8_t *out, const char *n)
{
	size_t len = 0;

	while (*n && strcmp(n, ".")) {
		const char *dot = strchr(n, '.');
		size_t l = dot ? (size_t)(dot - n) : strlen(n);

		out[len++] = (uint8_t)l;
		memcpy(out + len, n, l);
		len += l;
		n += l + (dot ? 1 : 0);
	}
	out[len++] = 0;
	return len;
}

static size_t query(uint8_t *m, const char *qname, uint16_t qtype,
		    uint16_t qclass, uint16_t flags, int edns, int do_bit)
{
	size_t len = 13;

	memset(m, 0, 13);
	m[0] = (uint8_t)(edns == 2); /* the knob: 4096-byte instance */
	m[1] = 0x12;
	m[2] = 0x34;
	m[3] = (uint8_t)(flags >> 8);
	m[4] = (uint8_t)flags;
	m[6] = 1;
	len += name(m + len, qname);
	m[len++] = (uint8_t)(qtype >> 8);
	m[len++] = (uint8_t)qtype;
	m[len++] = (uint8_t)(qclass >> 8);
	m[len++] = (uint8_t)qclass;
	if (edns) {
		static const uint8_t opt[] = { 0, 0, 41, 0x10, 0, 0,
					       0, 0, 0,	 0,    0 };

		m[12] = 1;
		memcpy(m + len, opt, sizeof(opt));
		if (do_bit)
			m[len + 7] = 0x80;
		len += sizeof(opt);
	}
	return len;
}

static int put(const char *dir, int *n, const uint8_t *m, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%04d", dir, (*n)++);
	f = fopen(path, "wb");
	if (!f || fwrite(m, 1, len, f) != len) {
		perror(path);
		return 1;
	}
	return fclose(f) != 0;
}

int main(int argc, char **argv)
{
	uint8_t m[1024];
	size_t i, j, len;
	int n = 0, err = 0, e;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (i = 0; i < ARRAY_SIZE(names); i++)
		for (j = 0; j < ARRAY_SIZE(types); j++)
			for (e = 0; e < 3; e++)
				err |= put(argv[1], &n, m,
					   query(m, names[i], types[j], 1,
						 0x0100, e, e == 2));
	/* Opcodes, classes, QTYPEs the parser and dispatch branch on. */
	for (i = 0; i < 16; i++)
		err |= put(argv[1], &n, m,
			   query(m, "fz", 6, 1, (uint16_t)(i << 11), 1, 0));
	for (i = 0; i < 5; i++) {
		static const uint16_t classes[] = { 3, 4, 254, 255, 2 };

		err |= put(argv[1], &n, m,
			   query(m, "www.fz", 16, classes[i], 0, 0, 0));
	}
	err |= put(argv[1], &n, m, query(m, "fz", 0, 1, 0, 0, 0));
	err |= put(argv[1], &n, m, query(m, "fz", 251, 1, 0, 1, 0));
	err |= put(argv[1], &n, m, query(m, "fz", 252, 1, 0, 0, 0));
	/* EDNS version 1, no question, two questions, trailing bytes. */
	len = query(m, "www.fz", 1, 1, 0, 1, 0);
	m[len - 5] = 1;
	err |= put(argv[1], &n, m, len);
	len = query(m, "www.fz", 1, 1, 0, 0, 0);
	m[6] = 0;
	err |= put(argv[1], &n, m, 13);
	m[6] = 2;
	err |= put(argv[1], &n, m, len);
	m[6] = 1;
	m[len++] = 0;
	err |= put(argv[1], &n, m, len);
	/* EDNS options: EXPIRE, NSID, a cookie; and records after the
	 * question, so the mutator starts from well-formed ones. */
	for (i = 0; i < 3; i++) {
		static const uint8_t opts[3][12] = {
			{ 0, 9, 0, 0 },
			{ 0, 3, 0, 0 },
			{ 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8 },
		};
		static const uint8_t optlen[3] = { 4, 4, 12 };

		len = query(m, i ? "www.fz" : "del.fz", i ? 1 : 43, 1,
			    i ? 0 : 4 << 11, 1, 0);
		m[len - 1] = optlen[i];
		memcpy(m + len, opts[i], optlen[i]);
		err |= put(argv[1], &n, m, len + optlen[i]);
	}
	{
		/* TSIG (no key will do), on a query and a NOTIFY. */
		static const uint8_t tsig[] = {
			3,   'k', 'e',	'y',  0,   0,	250, 0,	  255, 0,
			0,   0,	  0,	0,    33,  11,	'h', 'm', 'a', 'c',
			'-', 's', 'h',	'a',  '2', '5', '6', 0,	  0,   0,
			0,   0,	  0,	1,    1,   44,	0,   4,	  1,   2,
			3,   4,	  0x12, 0x34, 0,   0,	0,   0,
		};

		for (j = 0; j < 2; j++) {
			len = query(m, "fz", 6, 1, (uint16_t)(j ? 4 << 11 : 0),
				    0, 0);
			m[12] = 1;
			memcpy(m + len, tsig, sizeof(tsig));
			err |= put(argv[1], &n, m, len + sizeof(tsig));
		}
	}
	{
		/* IXFR with the SOA in authority; a NAPTR and an A with a
		 * compressed owner in the answer section. */
		static const uint8_t soa[] = { 0xc0, 0x0c, 0, 6, 0,  1, 0,
					       0,    0,	   0, 0, 22, 0, 0 };
		static const uint8_t naptr[] = { 0xc0, 0x0c, 0, 35,   0,   1,
						 0,    0,    0, 0,    0,   11,
						 0,    1,    0, 2,    1,   'u',
						 1,    's',  0, 0xc0, 0x0c };
		static const uint8_t a[] = { 1, 'x', 0xc0, 0x0c, 0, 1,
					     0, 1,   0,	   0,	 0, 1,
					     0, 4,   192,  0,	 2, 1 };

		len = query(m, "fz", 251, 1, 0, 0, 0);
		m[10] = 1;
		memcpy(m + len, soa, sizeof(soa));
		memset(m + len + sizeof(soa), 0, 20);
		err |= put(argv[1], &n, m, len + sizeof(soa) + 20);
		len = query(m, "www.fz", 1, 1, 0, 0, 0);
		m[8] = 2;
		memcpy(m + len, naptr, sizeof(naptr));
		memcpy(m + len + sizeof(naptr), a, sizeof(a));
		err |= put(argv[1], &n, m, len + sizeof(naptr) + sizeof(a));
	}
	/* A response, and a short one. */
	len = query(m, "www.fz", 1, 1, 0x8000, 0, 0);
	err |= put(argv[1], &n, m, len);
	err |= put(argv[1], &n, m, 8);
	return err;
}
