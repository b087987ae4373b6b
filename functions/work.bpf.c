// SPDX-License-Identifier: GPL-2.0
/*
 * work's XDP program: answers nothing, classifies (RR_FN_XDP_CLASSIFIER).
 * A request that asks for WORK_LONG_US microseconds or more is class 1,
 * the rest class 0, so that under steering = groups with
 * workers = 0 | 1 the long calls keep to their own workers and the short
 * ones never queue behind them (the paper's core separation, seed 003).
 * What is no request (no digit first) is class 0: user space refuses it.
 */
#include <reqrouter/rr_xdp.h>

#define WORK_LONG_US 20
/* Digits looked at: two decide between below 20 and at least 20. */
#define WORK_DIGITS 3

static __always_inline int work_classify(struct xdp_md *ctx,
					 struct rr_xdp_req *req)
{
	__u32 us = 0, i, n = req->payload_len;
	__u8 *d;

	if (n > WORK_DIGITS)
		n = WORK_DIGITS;
	for (i = 0; i < WORK_DIGITS; i++) {
		if (i >= n)
			break;
		d = rr_xdp_bytes(ctx, req, i, 1);
		if (!d || *d < '0' || *d > '9')
			break;
		us = us * 10 + (*d - '0');
	}
	/* More digits than looked at: a number of at least 100. */
	if (i == WORK_DIGITS && req->payload_len > WORK_DIGITS) {
		d = rr_xdp_bytes(ctx, req, WORK_DIGITS, 1);
		if (d && *d >= '0' && *d <= '9')
			us = WORK_LONG_US;
	}
	return RR_XDP_PUNT_CLASS(i && us >= WORK_LONG_US ? 1 : 0);
}

RR_XDP_FUNCTION(work, work_classify);
