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
	/* A byte at i is now at len - 1 - i: of the same parity when the
	 * length is odd, of the other when even. */
	if (req->payload_len & 1)
		rr_xdp_reply_sum_same(req);
	else
		rr_xdp_reply_sum_swapped(req);
	return req->payload_len;
}

RR_XDP_FUNCTION(reverse, reverse_xdp);
