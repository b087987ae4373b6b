/* SPDX-License-Identifier: GPL-2.0 */
/* Leveled logging to stderr; library output is routed through it too. */
#ifndef RR_LOG_H
#define RR_LOG_H

#include <stdbool.h>

/* In syslog's order, and with its numbers (rr_log_journal()). */
enum rr_log_level {
	RR_LOG_ERR = 3,	   /* reqrouter cannot go on, or did not start */
	RR_LOG_WARN = 4,   /* something is wrong: a crash, a quarantine */
	RR_LOG_NOTICE = 5, /* a change an operator made or should know */
	RR_LOG_INFO = 6,
	RR_LOG_DEBUG = 7,
};

void rr_log_set_level(enum rr_log_level level);
/* The name every line starts with ("NAME: "); reqrouter's by default. */
void rr_log_set_prog(const char *prog);
/*
 * Where stderr is the journal (systemd sets JOURNAL_STREAM to its device
 * and inode), lines carry their priority as a "<N>" prefix, which
 * journald reads (journalctl -p warning), instead of the program name,
 * which the journal records anyway. Returns whether it is.
 */
bool rr_log_journal(void);
void rr_log(enum rr_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The last warning or error logged, without its newline ("" if none):
 * what a failed start-up ends with. */
const char *rr_log_last_problem(void);
/* Sends libbpf's and libxdp's messages through rr_log. */
void rr_log_route_libraries(void);

#define pr_err(fmt, ...) rr_log(RR_LOG_ERR, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) rr_log(RR_LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_notice(fmt, ...) rr_log(RR_LOG_NOTICE, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) rr_log(RR_LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) rr_log(RR_LOG_DEBUG, fmt, ##__VA_ARGS__)

#endif /* RR_LOG_H */
