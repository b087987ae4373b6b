/* SPDX-License-Identifier: GPL-2.0 */
/* Leveled logging to stderr; library output is routed through it too. */
#ifndef RR_LOG_H
#define RR_LOG_H

enum rr_log_level {
	RR_LOG_WARN,
	RR_LOG_INFO,
	RR_LOG_DEBUG,
};

void rr_log_set_level(enum rr_log_level level);
/* The name every line starts with ("NAME: "); reqrouter's by default. */
void rr_log_set_prog(const char *prog);
void rr_log(enum rr_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Sends libbpf's and libxdp's messages through rr_log. */
void rr_log_route_libraries(void);

#define pr_warn(fmt, ...) rr_log(RR_LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) rr_log(RR_LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) rr_log(RR_LOG_DEBUG, fmt, ##__VA_ARGS__)

#endif /* RR_LOG_H */
