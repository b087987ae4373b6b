// SPDX-License-Identifier: GPL-2.0
/*
 * A function's XDP program for tests/bpf/tier_verdict.c: its verdict is
 * chosen by the request's first payload byte, so that the test can take
 * every way a handler has back to the steering program (punt, -errno, a
 * reply longer than the room). Built with the public API alone, as
 * functions/NAME.bpf.c are.
 */
#include <reqrouter/rr_xdp.h>

static __always_inline int verdict(struct xdp_md *ctx, struct rr_xdp_req *req)
{
	__u8 *p = rr_xdp_bytes(ctx, req, 0, 1);

	if (!p)
		return req->payload_len;
	switch (*p) {
	case 'P':
		return RR_XDP_PUNT;
	case 'C':
		return RR_XDP_PUNT_CLASS(1);
	case 'M':
		return -EMSGSIZE;
	case 'E':
		return -EINVAL;
	case 'B':
		return req->room + 1;
	}
	return req->payload_len;
}

RR_XDP_FUNCTION(verdict_fn, verdict);
