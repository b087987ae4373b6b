// SPDX-License-Identifier: GPL-2.0
/* echo in XDP: the reply is the request (RFC 862), so the handler has
 * nothing to do but say how long it is. */
#include <reqrouter/rr_xdp.h>

static __always_inline int echo_xdp(struct xdp_md *ctx, struct rr_xdp_req *req)
{
	return req->payload_len;
}

RR_XDP_FUNCTION(echo, echo_xdp);
