/* SPDX-License-Identifier: GPL-2.0 */
/* The one clock reqrouter reads: CLOCK_MONOTONIC in ns, the clock of
 * bpf_ktime_get_ns() (the reply cache's expiry is compared in XDP). */
#ifndef RR_CLOCK_H
#define RR_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t rr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* RR_CLOCK_H */
