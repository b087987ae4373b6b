// SPDX-License-Identifier: GPL-2.0
/*
 * work's XDP program: answers nothing, classifies (RR_FN_XDP_CLASSIFIER).
 * A request that asks for WORK_LONG_US microseconds or more is class 1,
 * the rest class 0, so that under steering = groups with
 * workers = 0 | 1 the long calls keep to their own workers and the short
 * ones never queue behind them (the paper's core separation, seed 003).
 * What is no request (no digit first) is class 0: user space refuses it.
 * Leading zeros are skipped, as user space reads "0006" as 6.
 */
#include <reqrouter/rr_xdp.h>

#define WORK_LONG_US 20
/* What is read of a request: its number has nine digits at most
 * (work.c), leading zeros included. */
#define WORK_HEAD 10

static __always_inline int work_classify(struct xdp_md *ctx,
					 struct rr_xdp_req *req)
{
	__u32 len = req->payload_len, us = 0, digits = 0, k;
	__u8 head[WORK_HEAD] = {};
	int lead = 1;

	if (len > WORK_HEAD)
		len = WORK_HEAD;
	if (!len || bpf_xdp_load_bytes(ctx, req->payload_off, head, len))
		return RR_XDP_PUNT_CLASS(0);
	for (k = 0; k < WORK_HEAD; k++) {
		if (k >= len || head[k] < '0' || head[k] > '9')
			break;
		/* Leading zeros count for nothing: "0006" is 6. */
		if (lead && head[k] == '0')
			continue;
		lead = 0;
		us = us * 10 + (head[k] - '0');
		/* Three digits that count: 100 or more. */
		if (++digits == 3)
			break;
	}
	return RR_XDP_PUNT_CLASS(us >= WORK_LONG_US ? 1 : 0);
}

RR_XDP_FUNCTION(work, work_classify);
