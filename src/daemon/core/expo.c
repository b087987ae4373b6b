// SPDX-License-Identifier: GPL-2.0
/* Metric family headers and JSON strings (expo.h). */
#include <stdio.h>

#include "expo.h"
#include "invoker.h"
#include "registry.h"

void rr_metric_family(FILE *out, const char *name, const char *type,
		      const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void rr_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

const char *rr_fn_version(const struct rr_slot *s, char *buf, size_t len)
{
	if (s->canary_of)
		snprintf(buf, len, "%s+canary", s->canary_version);
	else
		snprintf(buf, len, "%s", rr_registry_version(s->svc->fn));
	return buf;
}

void rr_metric_fn_labels(FILE *out, const struct rr_slot *s)
{
	char v[64];

	fprintf(out, "port=\"%u\",function=\"%s\",version=\"%s\"", s->svc->port,
		s->svc->fn->name, rr_fn_version(s, v, sizeof(v)));
}
