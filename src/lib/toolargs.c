// SPDX-License-Identifier: GPL-2.0
/* The tools' shared arguments (toolargs.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>

#include "config.h"
#include "registry.h"
#include "toolargs.h"

int rr_opt_fail(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

int rr_opt_ports(const char *prog, const char *arg, uint16_t *ports,
		 uint32_t max, int *nports)
{
	char err[RR_ERRLEN];
	uint32_t n;

	if (rr_parse_ports(arg, ports, max, &n, err, sizeof(err)))
		return rr_opt_fail(prog, "-p: %s", err);
	*nports = (int)n;
	return 0;
}

int rr_opt_function(const char *prog, const char *arg,
		    const struct rr_function **fn)
{
	*fn = rr_registry_find(arg);
	if (!*fn)
		return rr_opt_fail(prog, "no function '%s' is linked in", arg);
	return 0;
}

int rr_opt_cpus(const char *prog, const char *arg, int *cpus, uint32_t *ncpus)
{
	char err[RR_ERRLEN];

	if (rr_parse_cpus(arg, cpus, ncpus, err, sizeof(err)))
		return rr_opt_fail(prog, "--cpus: %s", err);
	return 0;
}

int rr_opt_registry(const char *prog)
{
	char err[RR_ERRLEN];

	if (!rr_registry_check(err, sizeof(err)))
		return 0;
	fprintf(stderr, "%s: %s\n", prog, err);
	return -EINVAL;
}

void rr_opt_pin_thread(const char *prog, const int *cpus, uint32_t ncpus,
		       unsigned int idx)
{
	cpu_set_t set;

	if (!ncpus)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpus[idx % ncpus], &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "%s: cannot pin thread %u to CPU %d\n", prog,
			idx, cpus[idx % ncpus]);
}
