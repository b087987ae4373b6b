/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command-line arguments that the tools (tools/rrload, tools/sockserver,
 * ...) take the same way, with the same one-line complaints: "PROG:
 * sentence" on stderr and 2, the usage exit code, returned.
 */
#ifndef RR_TOOLARGS_H
#define RR_TOOLARGS_H

#include <stdint.h>

#include <reqrouter/rr_function.h>

/* Prints "PROG: " and the formatted sentence on stderr; returns 2. */
int rr_opt_fail(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* -p PORT[,PORT...]: at most @max ports into @ports, their count into
 * *@nports. Returns 0, or 2 after saying why. */
int rr_opt_ports(const char *prog, const char *arg, uint16_t *ports,
		 uint32_t max, int *nports);

/* -f NAME: the function linked in under that name. Returns 0, or 2 after
 * saying why. */
int rr_opt_function(const char *prog, const char *arg,
		    const struct rr_function **fn);

/* --cpus LIST into @cpus and *@ncpus. Returns 0, or 2 after saying why. */
int rr_opt_cpus(const char *prog, const char *arg, int *cpus, uint32_t *ncpus);

/* Pins the calling thread, the @idx-th, to the (@idx mod @ncpus)-th CPU
 * of a --cpus list; without a list, or if that fails (said on stderr),
 * it runs where it is. */
void rr_opt_pin_thread(const char *prog, const int *cpus, uint32_t ncpus,
		       unsigned int idx);

/* The registry of linked-in functions is sound (rr_registry_check());
 * else says why and returns -EINVAL. */
int rr_opt_registry(const char *prog);

#endif /* RR_TOOLARGS_H */
