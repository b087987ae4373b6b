// SPDX-License-Identifier: GPL-2.0
/* Metric family headers and JSON strings (expo.h). */
#include <stdio.h>

#include "expo.h"

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
