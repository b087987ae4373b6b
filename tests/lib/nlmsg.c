// SPDX-License-Identifier: GPL-2.0
/* Hand-built rtnetlink messages (nlmsg.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/rtnetlink.h>

#include "nlmsg.h"

void t_nl_attr(union t_nlmsg *m, uint16_t type, const void *data, size_t len)
{
	size_t off = NLMSG_ALIGN(m->nh.nlmsg_len);
	struct rtattr rta = { .rta_len = (unsigned short)RTA_LENGTH(len),
			      .rta_type = type };

	if (off + RTA_SPACE(len) > sizeof(m->bytes)) {
		fprintf(stderr, "t_nl_attr: attribute %u does not fit\n", type);
		abort();
	}
	memcpy(m->bytes + off, &rta, sizeof(rta));
	memcpy(m->bytes + off + RTA_LENGTH(0), data, len);
	m->nh.nlmsg_len = (uint32_t)(off + RTA_SPACE(len));
}
