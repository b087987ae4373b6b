/* SPDX-License-Identifier: GPL-2.0 */
/* Validated sources, user space's half (validate.c). */
#ifndef RR_VALIDATE_H
#define RR_VALIDATE_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "shared/port.h"
#include "shared/validate.h"
#include "xdp.h"

struct rr_invoker;

/* validate_table mapped for every worker, cell and TCP loop to mark, the
 * tokens' key drawn and their counters made: before any of them is
 * made. 0, or -errno (then only a valid cookie validates a source). */
int rr_validate_open(struct rr_invoker *inv);
/* Undoes rr_validate_open(); NULL-safe, and safe to call twice. */
void rr_validate_close(void);
/* In a cell that must not write the validated sources: the table and
 * the shared counters unmapped, and tokens' sources no longer marked. */
void rr_validate_cell_unmap(struct rr_invoker *inv);

/* @svc's validated sources into @conf, its port entry, once
 * rr_rl_port_conf() said whether it is rate-limited. */
void rr_validate_port_conf(const struct rr_service *svc,
			   struct rr_port_conf *conf);
/* Says @svc's validated budget in one line, for the start-up lines. */
void rr_validate_say(const struct rr_service *svc);

/* A TCP handshake from @family's source @addr (4 or 16 bytes) completed:
 * it is validated now. From the TCP loop, a thread or a cell. */
void rr_validate_tcp(int family, const void *addr);

/* Marks @family's @addr validated in @table (RR_VALIDATE_SETS sets)
 * under @seed at @now (CLOCK_MONOTONIC ns): its entry refreshed, or the
 * set's validated longest ago claimed, as the XDP program claims one. */
void rr_validate_mark(struct rr_validate_set *table, uint64_t seed, int family,
		      const void *addr, uint64_t now);
/* Whether @family's @addr is validated in @table for @for_s seconds at
 * @now. */
int rr_validate_held(const struct rr_validate_set *table, uint64_t seed,
		     int family, const void *addr, uint32_t for_s,
		     uint64_t now);

/* For reqrouterctl top (hh.c): -1 if @family's source @addr is not
 * validated for the function of port entry @conf (its levels judge it),
 * else whether its own budget holds it back at @now (CLOCK_MONOTONIC
 * ns), with the margin rr_rl_held() gives a level. */
int rr_validate_top(struct rr_xdp *x, const struct rr_port_conf *conf,
		    int family, const uint8_t *addr, uint64_t now);

/* The metrics of validated sources and tokens (metrics.c). */
void rr_validate_metrics(struct rr_invoker *inv, FILE *out);

#endif /* RR_VALIDATE_H */
