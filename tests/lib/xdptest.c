// SPDX-License-Identifier: GPL-2.0
/* The BPF program tests' shared checks (xdptest.h). */
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "xdp.h"
#include "xdptest.h"

bool t_xdp_can_run(void)
{
	char why[RR_ERRLEN];

	if (geteuid()) {
		printf("SKIP: needs root (BPF)\n");
		return false;
	}
	if (rr_xdp_check_kernel(why, sizeof(why))) {
		printf("SKIP: %s\n", why);
		return false;
	}
	return true;
}
