// SPDX-License-Identifier: GPL-2.0
/* A test module: "echo", upper-cased. Loaded over the built-in echo, it
 * shows that a module replaces a function while its port stays. */
#include <reqrouter/rr_function.h>

static int shout(const struct rr_request *req, uint8_t *buf, size_t len,
		 size_t room)
{
	size_t i;

	(void)req;
	(void)room;
	for (i = 0; i < len; i++)
		if (buf[i] >= 'a' && buf[i] <= 'z')
			buf[i] = (uint8_t)(buf[i] - 32);
	return (int)len;
}

RR_FUNCTION(echo, 7, "echo, upper-cased (a test module)", shout);
