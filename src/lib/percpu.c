// SPDX-License-Identifier: GPL-2.0
/* Per-CPU BPF counters summed over the CPUs (see percpu.h). */
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "percpu.h"

int rr_percpu_sum(int map_fd, uint32_t first, uint32_t n, uint64_t *out)
{
	int ncpus = libbpf_num_possible_cpus(), c, ret = 0;
	uint64_t *vals;
	uint32_t key, i;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	vals = calloc((size_t)ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		key = first + i;
		if (bpf_map_lookup_elem(map_fd, &key, vals)) {
			ret = -errno;
			break;
		}
		out[i] = 0;
		for (c = 0; c < ncpus; c++)
			out[i] += vals[c];
	}
	free(vals);
	return ret;
}
