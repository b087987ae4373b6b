// SPDX-License-Identifier: GPL-2.0
/*
 * work: burns the CPU time a request asks for, for benchmarks and tests
 * of how reqrouter schedules requests of unequal cost (rrload --mix).
 *
 *	[function work]
 *	enabled = yes
 *	max_us = 1000	; the most a request may ask for, in microseconds
 *			; (0-100000, default 1000)
 *
 * A request is ASCII decimal microseconds at the start of the payload (1
 * to 9 digits), ended by the payload's end or by the first byte that is
 * no digit; everything from that byte on is a tag the reply carries back
 * untouched, so that a client can match replies to requests. The worker
 * spins on CLOCK_MONOTONIC (a busy loop, never a sleep) until that many
 * microseconds have passed, then answers
 *
 *	US SPACE NS TAG
 *
 * US the microseconds asked for (as a number, leading zeros dropped), one
 * space, NS the nanoseconds the spin took, measured with CLOCK_MONOTONIC
 * around it (never below US * 1000), both in ASCII decimal, then the tag
 * as it came. So "60" gets "60 60042", "60 abc" gets "60 60042 abc", and
 * "60\n" gets "60 60042\n".
 *
 * No reply, on purpose (RR_NO_REPLY, reason "no_reply" in the metrics):
 * a request for more than max_us is refused (counter work_refused); a
 * payload that does not start with a digit, or names more than 9 digits,
 * is no request (work_invalid). work_busy_us adds up the microseconds
 * spent spinning.
 *
 * A call holds its worker for the whole spin: a max_us above the
 * section's max_run_us (10000 by default) gets the long requests' cells
 * killed as functions that hang, so raise max_run_us with it.
 *
 * Opt-in: a function that burns CPU on request must never be served by
 * default. Not pure: the reply says how long this call took.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <reqrouter/rr_function.h>

#define WORK_PORT 9010
#define WORK_MAX_DIGITS 9
#define WORK_DEFAULT_MAX_US 1000
#define WORK_LIMIT_US 100000
/* "US NS": two numbers of at most 20 digits each and a space. */
#define WORK_HEAD_MAX 48

struct work_state {
	uint32_t max_us;
	/* Counter indexes (rr_fn_count() ignores -1). */
	int refused, invalid, busy_us;
};

static int work_init(const struct rr_fn_config *cfg, void **state)
{
	uint64_t max_us = WORK_DEFAULT_MAX_US;
	struct work_state *w;
	size_t i;
	int ret;

	for (i = 0; i < cfg->nsettings; i++) {
		const struct rr_fn_setting *s = &cfg->settings[i];

		if (strcmp(s->key, "max_us"))
			return rr_fn_error(
				cfg, s, "unknown key '%s' (work takes: max_us)",
				s->key);
		ret = rr_fn_setting_uint(cfg, s, 0, WORK_LIMIT_US, &max_us);
		if (ret)
			return ret;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->max_us = (uint32_t)max_us;
	w->refused = rr_fn_counter(
		cfg, "work_refused",
		"Requests for more than max_us microseconds (not answered).");
	w->invalid = rr_fn_counter(
		cfg, "work_invalid",
		"Payloads that name no number of microseconds (not answered).");
	w->busy_us = rr_fn_counter(cfg, "work_busy_us",
				   "Microseconds spent spinning, in total.");
	if (w->refused < 0 || w->invalid < 0 || w->busy_us < 0) {
		free(w);
		return -EINVAL;
	}
	*state = w;
	return 0;
}

static void work_fini(void *state)
{
	free(state);
}

/* For a bare call (no init: the tools without a config). */
static const struct work_state work_nostate = { WORK_DEFAULT_MAX_US, -1, -1,
						-1 };

static uint64_t work_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins until @ns have passed; returns the nanoseconds it took. */
static uint64_t work_spin(uint64_t ns)
{
	uint64_t t0 = work_now(), t;

	do
		t = work_now();
	while (t - t0 < ns);
	return t - t0;
}

static int work_handler(const struct rr_request *req, uint8_t *buf, size_t len,
			size_t room)
{
	const struct work_state *w = req->state ? req->state : &work_nostate;
	char head[WORK_HEAD_MAX];
	uint64_t us = 0, spent;
	size_t digits = 0, tag;
	int n;

	while (digits < len && buf[digits] >= '0' && buf[digits] <= '9') {
		if (digits == WORK_MAX_DIGITS)
			goto invalid;
		us = us * 10 + (uint64_t)(buf[digits] - '0');
		digits++;
	}
	if (!digits)
		goto invalid;
	if (us > w->max_us) {
		rr_fn_count(req, w->refused, 1);
		return RR_NO_REPLY;
	}
	tag = len - digits;
	/* The spin takes at least @us: a reply that cannot fit then, never
	 * will. */
	n = snprintf(head, sizeof(head), "%llu %llu", (unsigned long long)us,
		     (unsigned long long)us * 1000);
	if ((size_t)n + tag > room)
		return -EMSGSIZE;
	spent = work_spin(us * 1000);
	rr_fn_count(req, w->busy_us, spent / 1000);
	n = snprintf(head, sizeof(head), "%llu %llu", (unsigned long long)us,
		     (unsigned long long)spent);
	if ((size_t)n + tag > room)
		return -EMSGSIZE;
	memmove(buf + n, buf + digits, tag);
	memcpy(buf, head, (size_t)n);
	return n + (int)tag;

invalid:
	rr_fn_count(req, w->invalid, 1);
	return RR_NO_REPLY;
}

RR_FUNCTION_DEF(work, WORK_PORT,
		"spin for the microseconds a request names (benchmarks)",
		.handler = work_handler, .init = work_init, .fini = work_fini,
		.flags = RR_FN_OPT_IN | RR_FN_XDP_CLASSIFIER);
