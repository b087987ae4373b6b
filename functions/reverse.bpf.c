// SPDX-License-Identifier: GPL-2.0
/* reverse in XDP: the payload's bytes in reverse order, in place, over
 * the whole payload (anything longer than the in-kernel tier takes never
 * gets here: the steering program hands it to user space). */
#include <reqrouter/rr_xdp.h>

static __always_inline int reverse_xdp(struct xdp_md *ctx,
				       struct rr_xdp_req *req)
{
	if (rr_xdp_reverse(ctx, req->payload_off, req->payload_len))
		/* Only a frame shorter than its UDP length fails here, and
		 * the steering program refuses those before the call. */
		return -EINVAL;
	return req->payload_len;
}

RR_XDP_FUNCTION(reverse, reverse_xdp);
