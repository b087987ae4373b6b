// SPDX-License-Identifier: GPL-2.0
/* reverse: answers with the payload's bytes in reverse order (the thesis'
 * benchmark function). */
#include "rr_function.h"

static int reverse_handler(const struct rr_request *req, uint8_t *buf,
			   size_t len, size_t room)
{
	size_t i, j;
	uint8_t tmp;

	(void)req;
	(void)room; /* the reply is as long as the request */
	for (i = 0, j = len; i + 1 < j; i++) {
		j--;
		tmp = buf[i];
		buf[i] = buf[j];
		buf[j] = tmp;
	}
	return (int)len;
}

RR_FUNCTION_FLAGS(reverse, 1232, "reverse the payload", reverse_handler,
		  RR_FN_PURE);
