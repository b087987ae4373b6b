/* SPDX-License-Identifier: GPL-2.0 */
/* The registry: every function linked in through RR_FUNCTION(). */
#ifndef RR_REGISTRY_H
#define RR_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "rr_function.h"

size_t rr_registry_count(void);
const struct rr_function *rr_registry_at(size_t i);
const struct rr_function *rr_registry_find(const char *name);
const struct rr_function *rr_registry_by_port(uint16_t port);

/*
 * Checks what the linker collected: names set, unique and printable, a
 * handler, a port in 1..65535 and no two functions on one default port.
 * Returns 0, or -EINVAL with the first problem written to err.
 */
int rr_registry_check(char *err, size_t errlen);

#endif /* RR_REGISTRY_H */
