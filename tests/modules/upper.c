// SPDX-License-Identifier: GPL-2.0
/* A test module with a function reqrouter does not have: deployed while
 * serving, it gets a port of its own. Counts what it answers. */
#include <reqrouter/rr_function.h>

static int upper_init(const struct rr_fn_config *cfg, void **state)
{
	static int counter;

	if (cfg->nsettings)
		return rr_fn_error(cfg, &cfg->settings[0], "takes no settings");
	counter = rr_fn_counter(cfg, "upper_answers", "Requests upper-cased.");
	if (counter < 0)
		return counter;
	*state = &counter;
	return 0;
}

static int upper(const struct rr_request *req, uint8_t *buf, size_t len,
		 size_t room)
{
	size_t i;

	(void)room;
	for (i = 0; i < len; i++)
		if (buf[i] >= 'a' && buf[i] <= 'z')
			buf[i] = (uint8_t)(buf[i] - 32);
	rr_fn_count(req, *(const int *)req->state, 1);
	return (int)len;
}

RR_FUNCTION_DEF(upper, 9009, "upper-case the payload (a test module)",
		.handler = upper, .init = upper_init);
