/* SPDX-License-Identifier: GPL-2.0 */
/* DNS Cookies' secrets, user space's half (cookie.c). */
#ifndef RR_COOKIE_FEATURE_H
#define RR_COOKIE_FEATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <reqrouter/rr_cookie.h>

#include "config.h"
#include "shared/port.h"

struct rr_invoker;

/*
 * The cookie secrets of every RR_FN_DNS_COOKIES function of @next, a
 * config read at start (@cur NULL) or on a reload (@cur the one served):
 * its cookie_secret file read, or, without one, the secret made at start
 * kept (made now at start). A secret that changed leaves the one before
 * good for RR_COOKIE_PAST_S more seconds, the life of the cookies it
 * made. Before the functions' init(), which takes them
 * (rr_fn_cookie_secrets()). 0, or -errno with the reason in @err.
 */
int rr_cookie_prepare(struct rr_config *next, const struct rr_config *cur,
		      char *err, size_t errlen);

/* @svc's cookies into @conf, slot @slot's port entry, and its secrets
 * into the program's cookie_keys, as they are now. */
void rr_cookie_port_conf(struct rr_invoker *inv, uint32_t slot,
			 const struct rr_service *svc,
			 struct rr_port_conf *conf);

/* A reload applied: the secrets @to was prepared with become those of
 * @svc, served in slot @slot, and the program's. Whether the secret
 * changed. */
bool rr_cookie_adopt(struct rr_invoker *inv, uint32_t slot,
		     struct rr_service *svc, const struct rr_service *to);

#endif /* RR_COOKIE_FEATURE_H */
