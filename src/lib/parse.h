/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Value parsing for the configuration file, the command lines and the
 * tools: numbers (strtoull with an end-pointer check and a range),
 * booleans, a word of a list, and the one helper that writes an error sentence into the
 * caller's buffer.
 */
#ifndef RR_PARSE_H
#define RR_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Formats an error sentence into @err (@errlen bytes); returns -EINVAL,
 * so that a parser can say "return rr_errf(err, errlen, ...)". */
int rr_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* strtoull in @base (0: C prefixes) with an end check and a range: 0,
 * -EINVAL (not a number: empty, a sign, a leading space, trailing
 * characters) or -ERANGE (outside min..max). */
int rr_parse_ull(const char *s, int base, unsigned long long min,
		 unsigned long long max, unsigned long long *out);

/* rr_parse_ull() in base 10 for an unsigned long. The one number parser,
 * tools included. */
int rr_parse_ulong(const char *s, unsigned long min, unsigned long max,
		   unsigned long *out);

/* Value parsers shared by the file and the flags. @what names the setting
 * in the error sentence. */
int rr_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out,
		 const char *what, char *err, size_t errlen);
/* yes/no, true/false, on/off, 1/0, in any case. */
int rr_parse_bool(const char *s, bool *out, const char *what, char *err,
		  size_t errlen);

/* "a, b or c" of a NULL-terminated list of names. */
void rr_enum_names(const char *const *names, char *buf, size_t len);

/* Looks @val up in @names (NULL-terminated): its index, or -EINVAL with
 * "WHAT must be a, b or c, not 'VAL'" in @err. */
int rr_parse_enum(const char *const *names, const char *val, const char *what,
		  char *err, size_t errlen);

#endif /* RR_PARSE_H */
