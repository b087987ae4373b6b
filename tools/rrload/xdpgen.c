// SPDX-License-Identifier: GPL-2.0
/* XDP engine: placeholder until the generator lands. */
#include <errno.h>

#include "rrload.h"

int xdp_engine_init(struct rl_config *cfg, struct rl_thread *th)
{
	(void)cfg;
	(void)th;
	return -EOPNOTSUPP;
}

void *xdp_engine_run(void *arg)
{
	return arg;
}

void xdp_engine_poll(struct rl_config *cfg, struct rl_thread *th)
{
	(void)cfg;
	(void)th;
}

void xdp_engine_fini(struct rl_config *cfg, struct rl_thread *th)
{
	(void)cfg;
	(void)th;
}
