/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DNS Cookies in XDP (docs/DESIGN.md, "DNS Cookies in XDP"): the secrets
 * user space writes for each function flagged RR_FN_DNS_COOKIES, by slot,
 * for the program to check a query's server cookie with
 * (<reqrouter/rr_cookie.h> has the hash).
 */
#ifndef RR_SHARED_COOKIE_H
#define RR_SHARED_COOKIE_H

#include <linux/types.h>

/* cookie_keys' value: the current secret and, after a rotation, the
 * previous one, each as SipHash's two key words (rr_le64() of its
 * halves). */
struct rr_cookie_keys {
	__u64 k0[2], k1[2]; /* [0] current, [1] previous */
	__u64 prev_until;   /* Unix time the previous is good until; 0: none */
	__s64 tai_off;	    /* CLOCK_TAI less CLOCK_REALTIME, seconds */
	__u32 ready;	    /* 0: no secret yet, no cookie is valid */
	__u32 pad;
};

/* What cookie_check() found in a request (kern/lib/cookie.h). */
#define RR_COOKIE_NONE (-1) /* no COOKIE option it could read */
#define RR_COOKIE_OTHER 0   /* a cookie, not a valid server cookie */
#define RR_COOKIE_VALID 1   /* a server cookie valid for its source */
/* One valid, young enough to be echoed (RR_COOKIE_RENEW_S) and the
 * query's last bytes: the reply cache may answer it (RR_CACHE_COOKIE). */
#define RR_COOKIE_ECHO 2

#endif /* RR_SHARED_COOKIE_H */
