/* SPDX-License-Identifier: GPL-2.0 */
/* Reading a per-CPU BPF array of counters: each key's values summed over
 * the CPUs. Used by the invoker, the tools and the BPF tests alike. */
#ifndef RR_PERCPU_H
#define RR_PERCPU_H

#include <stdint.h>

/* out[i] = the sum over every possible CPU of key @first + i of the
 * per-CPU array @map_fd, for i < @n (64-bit values). 0 or -errno. */
int rr_percpu_sum(int map_fd, uint32_t first, uint32_t n, uint64_t *out);

#endif /* RR_PERCPU_H */
