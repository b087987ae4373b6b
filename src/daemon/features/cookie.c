// SPDX-License-Identifier: GPL-2.0
/*
 * DNS Cookies, user space's half (docs/DESIGN.md, "DNS Cookies in XDP"):
 * the secret of each function flagged RR_FN_DNS_COOKIES (dns), read from
 * its cookie_secret file or made at start, kept across reloads with the
 * one before a change, for the function's init() (through the config it
 * is made from: rr_fn_cookie_secrets()) and for the XDP program, which
 * checks a query's server cookie before the rate limit (kern/lib/cookie.h)
 * with the secrets written here into cookie_keys.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include <bpf/libbpf.h>
#include <reqrouter/rr_cookie.h>

#include "cookie.h"
#include "invoker.h"
#include "log.h"
#include "parse.h"
#include "reqrouter.skel.h"
#include "shared/cookie.h"
#include "xdp.h"

static int prepare_one(struct rr_service *svc, const struct rr_service *was,
		       char *err, size_t errlen)
{
	uint8_t secret[RR_COOKIE_SECRET_LEN];
	bool had = was && was->cookie_ready;
	int ret;

	if (svc->cookie_secret[0]) {
		ret = rr_cookie_secret_read(svc->cookie_secret, secret, err,
					    errlen);
		if (ret)
			return ret;
		svc->cookie_made = false;
	} else if (had && was->cookie_made) {
		memcpy(secret, was->cookie.current, sizeof(secret));
		svc->cookie_made = true;
	} else {
		if (getrandom(secret, sizeof(secret), 0) != sizeof(secret))
			return rr_errf(
				err, errlen,
				"[function %s]: no random bytes for its cookie secret",
				svc->fn->name);
		svc->cookie_made = true;
	}
	memset(&svc->cookie, 0, sizeof(svc->cookie));
	if (had)
		svc->cookie = was->cookie;
	if (had && memcmp(was->cookie.current, secret, sizeof(secret))) {
		uint64_t now = (uint64_t)time(NULL);

		/* Rotated again within the hour: the secret two back, still
		 * in its clients' cookies, is dropped. */
		if (was->cookie.has_previous &&
		    was->cookie.previous_until > now)
			pr_warn("'%s': the secret before the previous one, good for %lu s more, is dropped: its clients' cookies get BADCOOKIE once (rotate no sooner than an hour apart)\n",
				svc->fn->name,
				(unsigned long)(was->cookie.previous_until -
						now));
		memcpy(svc->cookie.previous, was->cookie.current,
		       sizeof(secret));
		svc->cookie.has_previous = 1;
		svc->cookie.previous_until = now + RR_COOKIE_PAST_S;
		pr_notice(
			"'%s': a new cookie secret; the previous one stays good for %d s, as the cookies it made\n",
			svc->fn->name, RR_COOKIE_PAST_S);
	}
	memcpy(svc->cookie.current, secret, sizeof(secret));
	svc->cookie_ready = true;
	return 0;
}

int rr_cookie_prepare(struct rr_config *next, const struct rr_config *cur,
		      char *err, size_t errlen)
{
	struct rr_service *svc;
	uint32_t i;
	int ret;

	for (i = 0; i < next->nservices; i++) {
		svc = &next->services[i];
		/* A cookie_secret elsewhere: refused by rr_config_finish(). */
		if (!(svc->fn->flags & RR_FN_DNS_COOKIES))
			continue;
		ret = prepare_one(
			svc, cur ? rr_config_service_of(cur, svc->fn) : NULL,
			err, errlen);
		if (ret)
			return ret;
		if (!cur && svc->enabled)
			pr_info("'%s': DNS Cookies with a secret %s%s; a query with a valid server cookie validates its source in XDP (rate_limit_validated)\n",
				svc->fn->name,
				svc->cookie_made ? "made at start" : "from ",
				svc->cookie_made
					? " (cookie_secret = FILE keeps one across restarts, and shares it with other servers)"
					: svc->cookie_secret);
	}
	return 0;
}

/* CLOCK_TAI less CLOCK_REALTIME: the program reads the first. */
static int64_t tai_offset(void)
{
	struct timespec tai, real;

	if (clock_gettime(CLOCK_TAI, &tai) ||
	    clock_gettime(CLOCK_REALTIME, &real))
		return 0;
	return (int64_t)tai.tv_sec - real.tv_sec +
	       (tai.tv_nsec - real.tv_nsec + 500000000L) / 1000000000L;
}

static void write_keys(struct rr_invoker *inv, uint32_t slot,
		       const struct rr_service *svc)
{
	struct rr_cookie_keys k = { 0 };
	const struct rr_fn_cookie_secrets *s = &svc->cookie;

	if (!inv->xdp.skel || slot >= RR_MAX_SLOTS)
		return;
	if (svc->cookie_ready) {
		k.k0[0] = rr_le64(s->current);
		k.k1[0] = rr_le64(s->current + 8);
		if (s->has_previous) {
			k.k0[1] = rr_le64(s->previous);
			k.k1[1] = rr_le64(s->previous + 8);
			k.prev_until = s->previous_until;
		}
		k.tai_off = tai_offset();
		k.ready = 1;
	}
	/* A reader between two words takes a valid cookie for a wrong one
	 * once: that query meets the rate limit, as any. */
	if (bpf_map__update_elem(inv->xdp.skel->maps.cookie_keys, &slot,
				 sizeof(slot), &k, sizeof(k), 0))
		pr_warn("'%s': cannot write its cookie secrets for XDP: cookies are checked by its workers only\n",
			svc->fn->name);
}

void rr_cookie_port_conf(struct rr_invoker *inv, uint32_t slot,
			 const struct rr_service *svc,
			 struct rr_port_conf *conf)
{
	conf->flags &= ~RR_PORT_COOKIE;
	if (!(svc->fn->flags & RR_FN_DNS_COOKIES))
		return;
	write_keys(inv, slot, svc);
	conf->flags |= RR_PORT_COOKIE;
}

bool rr_cookie_adopt(struct rr_invoker *inv, uint32_t slot,
		     struct rr_service *svc, const struct rr_service *to)
{
	bool changed;

	if (!to->cookie_ready)
		return false;
	changed = svc->cookie_ready &&
		  memcmp(svc->cookie.current, to->cookie.current,
			 sizeof(to->cookie.current));
	memcpy(svc->cookie_secret, to->cookie_secret,
	       sizeof(svc->cookie_secret));
	svc->cookie = to->cookie;
	svc->cookie_made = to->cookie_made;
	svc->cookie_ready = true;
	write_keys(inv, slot, svc);
	return changed;
}
