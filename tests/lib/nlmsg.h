/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hand-built rtnetlink messages for the tests of reqrouter's parsers
 * (tests/unit/guard_netlink.c: routes; tests/unit/link.c: links).
 */
#ifndef RR_TEST_NLMSG_H
#define RR_TEST_NLMSG_H

#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

/* One message, and room for its attributes. */
union t_nlmsg {
	struct nlmsghdr nh;
	uint8_t bytes[512];
};

/*
 * Appends an attribute of @type with @len bytes of @data to @m's message.
 * Built in bytes and copied in, which also keeps GCC's object-size checks
 * (with -fsanitize) from taking the buffer for its 16-byte header. Aborts
 * if it does not fit: the test itself would be wrong.
 */
void t_nl_attr(union t_nlmsg *m, uint16_t type, const void *data, size_t len);

#endif /* RR_TEST_NLMSG_H */
