/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the tests/unit/packet program share: packet.c
 * (replies), packet_limits.c (room and drops), packet_csum.c
 * (checksums), packet_parse.c (what is dropped before the function
 * is called) and packet_guards.c (the request's UDP checksum and
 * IPv4 options). The test functions registered by packet.c, the
 * checks' context and the helpers that build a request and check its
 * reply.
 */
#ifndef RR_UNIT_PACKET_TEST_H
#define RR_UNIT_PACKET_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "frames.h"
#include <reqrouter/rr_function.h>

/* Test functions, on ports no bundled function uses. */
#define PORT_RECORD 40001
#define PORT_GROW 40002
#define PORT_FAIL 40003
#define PORT_OVERCLAIM 40004
#define PORT_FILL 40005
#define PORT_SHRINK 40006

/* What rrtest_record was last given. */
struct seen {
	int calls;
	struct rr_request req;
	size_t len, room;
};
extern struct seen seen;

/* What the checks are about, for their messages. */
extern char where[256];

#define CHECK(c)                                                \
	do {                                                    \
		if (!(c))                                       \
			fail_msg("%s: %s is false", where, #c); \
	} while (0)

#define CHECK_EQ(a, b)                                                        \
	do {                                                                  \
		long long a_ = (long long)(a), b_ = (long long)(b);           \
		if (a_ != b_)                                                 \
			fail_msg("%s: %s is %lld, expected %s = %lld", where, \
				 #a, a_, #b, b_);                             \
	} while (0)

/* The registered function @name; fails the test if there is none. */
const struct rr_function *fn(const char *name);
/* @s in words, for messages. */
const char *spec_name(const struct frame_spec *s);
/*
 * Checks @reply (@ret from rr_serve_unlimited) as the answer to @req, whose
 * function wrote @payload (@plen bytes); @mtu was the limit.
 */
void check_reply(const uint8_t *req, const struct frame_layout *lay, int family,
		 const uint8_t *reply, int ret, const uint8_t *payload,
		 uint32_t plen, uint32_t mtu);
/* Builds @s into an exactly @room-byte buffer, and a copy of the frame
 * into *@copy; the caller frees both. */
uint8_t *make(const struct frame_spec *s, uint32_t room,
	      struct frame_layout *lay, uint8_t **copy);
/* @n bytes of @in, last first, into @out. */
void reversed(const uint8_t *in, uint8_t *out, uint32_t n);
/* Runs reverse (or echo) on @s and checks the reply. */
void roundtrip(const struct frame_spec *s, const char *name, uint32_t room,
	       uint32_t mtu);

/* The other parts' tests; each returns the number that failed. */
int run_limit_tests(void); /* packet_limits.c */
int run_csum_tests(void);  /* packet_csum.c */
int run_parse_tests(void); /* packet_parse.c */
int run_guard_tests(void); /* packet_guards.c */

#endif /* RR_UNIT_PACKET_TEST_H */
