/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How reqrouter's figures are written out, whoever owns them: a Prometheus
 * metric family's header (ops/metrics.c and the features that export
 * their own families: features/hh.c, serve/tcp.c) and a JSON string
 * (reqrouterctl's answers). One writer each, so every family is typed
 * and every string quoted the same way.
 */
#ifndef RR_EXPO_H
#define RR_EXPO_H

#include <stdio.h>

/* The "# HELP" and "# TYPE" lines of family @name (@type: counter, gauge,
 * histogram) before its samples. */
void rr_metric_family(FILE *out, const char *name, const char *type,
		      const char *help);
struct rr_slot;
/* The labels of function slot @s's samples: its port, name and version
 * (its module's, or reqrouter's for a built-in; a canary's marked
 * "+canary": docs/DESIGN.md, "Canaries"); the caller adds the rest and
 * the braces. */
void rr_metric_fn_labels(FILE *out, const struct rr_slot *s);
/* The version rr_metric_fn_labels() gives slot @s, into @buf. */
const char *rr_fn_version(const struct rr_slot *s, char *buf, size_t len);
/* @s as a JSON string: quoted, with what JSON forbids raw escaped. */
void rr_json_str(FILE *f, const char *s);

#endif /* RR_EXPO_H */
