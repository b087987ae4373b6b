// SPDX-License-Identifier: GPL-2.0
/* echo: RFC 862, the reply is the request unchanged. */
#include <reqrouter/rr_function.h>

static int echo_handler(const struct rr_request *req, uint8_t *buf, size_t len,
			size_t room)
{
	(void)req;
	(void)buf;
	(void)room;
	return (int)len;
}

RR_FUNCTION_FLAGS(echo, 7, "echo the payload back (RFC 862)", echo_handler,
		  RR_FN_PURE);
