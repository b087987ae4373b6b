// SPDX-License-Identifier: GPL-2.0
/*
 * An example function module built outside reqrouter's source tree, against
 * the installed function API only (make install puts it in
 * PREFIX/include/reqrouter, pkg-config reqrouter-function names it): ROT13
 * of the payload on UDP port 9013. Build it with make here, then
 * reqrouter --functions-dir . (or reqrouterctl deploy rot13.so) serves it.
 */
#include <reqrouter/rr_function.h>
/* The module's one entry point, defined in exactly one of its files. */
#define RR_MODULE_ENTRY
#include <reqrouter/rr_module.h>

static uint8_t rot13_byte(uint8_t c)
{
	if (c >= 'a' && c <= 'z')
		return 'a' + (c - 'a' + 13) % 26;
	if (c >= 'A' && c <= 'Z')
		return 'A' + (c - 'A' + 13) % 26;
	return c;
}

/* The reply is as long as the request, written over it in place. */
static int rot13(const struct rr_request *req, uint8_t *buf, size_t len,
		 size_t room)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = rot13_byte(buf[i]);
	return (int)len;
}

RR_FUNCTION_FLAGS(rot13, 9013, "ROT13 of the payload (example module)", rot13,
		  RR_FN_PURE);
