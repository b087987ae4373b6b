/* SPDX-License-Identifier: GPL-2.0 */
/* The command line, from one table that also yields --help. */
#ifndef RR_OPTIONS_H
#define RR_OPTIONS_H

#include <stdio.h>

#include "config.h"

enum rr_opts_result {
	RR_OPTS_RUN,
	RR_OPTS_EXIT, /* --help printed: exit 0 */
};

/*
 * Parses argv into cfg: defaults, then the -c file, then the other flags
 * (flags win), then rr_config_finish(). Returns RR_OPTS_RUN/RR_OPTS_EXIT
 * or -EINVAL with one sentence in err.
 */
int rr_options_parse(int argc, char **argv, struct rr_config *cfg, char *err,
		     size_t errlen);

void rr_options_usage(FILE *out);

#endif /* RR_OPTIONS_H */
