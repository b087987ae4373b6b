// SPDX-License-Identifier: GPL-2.0
/* echo in XDP: the reply is the request (RFC 862), so the handler has
 * nothing to do but say how long it is, and that its sum is the
 * request's. */
#include <reqrouter/rr_xdp.h>

static __always_inline int echo_xdp(struct xdp_md *ctx, struct rr_xdp_req *req)
{
	rr_xdp_reply_sum_same(req);
	return req->payload_len;
}

RR_XDP_FUNCTION(echo, echo_xdp);
