// SPDX-License-Identifier: GPL-2.0
/* The BPF program tests' shared checks and set-up (xdptest.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

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

int t_xdp_load(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu)
{
	int ret;

	if (geteuid()) {
		printf("SKIP: loading the XDP program needs root\n");
		return 77;
	}
	libbpf_set_print(NULL);
	ret = rr_xdp_load(x, mac, mtu);
	if (ret) {
		printf("SKIP: cannot load the XDP program: %s\n",
		       strerror(-ret));
		return 77;
	}
	return 0;
}
