/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers every part of reqrouter, its tools and tests use. */
#ifndef RR_UTIL_H
#define RR_UTIL_H

/* The number of elements of an array (not of a pointer). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* RR_UTIL_H */
