/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers every part of reqrouter, its tools and tests use. */
#ifndef RR_UTIL_H
#define RR_UTIL_H

/* The number of elements of an array (not of a pointer). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A macro's value as a string literal: STR(RR_CONTROL_MAX_LINE) "256". */
#define STR_(x) #x
#define STR(x) STR_(x)

#endif /* RR_UTIL_H */
