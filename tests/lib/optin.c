// SPDX-License-Identifier: GPL-2.0
/* t_check_opt_in() (testutil.h): an object of its own, so that the test
 * programs that never call it need not link the daemon's options. */
#include <stdint.h>
#include <unistd.h>

#include "config.h"
#include "options.h"
#include "testutil.h"

static struct rr_config cfg; /* large: not on the stack */

int t_check_opt_in(const char *name, uint16_t port, const char *conf,
		   uint32_t nsettings)
{
	char *argv[6] = { (char *)"reqrouter", (char *)"-i", (char *)"lo",
			  (char *)"-c",	       NULL,	     NULL };
	const struct rr_service *svc;
	char err[RR_ERRLEN];
	int bad = 0;

	if (rr_options_parse(3, argv, &cfg, err, sizeof(err)))
		return 1;
	svc = rr_config_service_named(&cfg, name);
	bad |= !svc || svc->enabled;
	rr_config_free(&cfg);
	argv[4] = t_write_file("/tmp/rr-test-optin", conf);
	if (rr_options_parse(5, argv, &cfg, err, sizeof(err))) {
		unlink(argv[4]);
		return 1;
	}
	svc = rr_config_service_named(&cfg, name);
	bad |= !svc || !svc->enabled || svc->port != port ||
	       svc->nsettings != nsettings;
	rr_config_free(&cfg);
	unlink(argv[4]);
	return bad;
}
