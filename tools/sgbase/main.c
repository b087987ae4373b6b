// SPDX-License-Identifier: GPL-2.0
/*
 * sgbase: the scatter-gather baselines for issue 26 and their client.
 *
 *   sgbase serve    a coordinator: each client request becomes a gather
 *                   over --targets, answered once all replied or at the
 *                   deadline; --engine epoll (a plain epoll loop) or
 *                   uring (io_uring), single-threaded either way
 *   sgbase client   a closed loop against any coordinator (this one, or
 *                   reqrouter's fan-out function): rate, p50, p99
 *   sgbase respond  a target: echoes the datagram, header and body
 *
 * This file only picks the subcommand (serve.c, client.c, respond.c);
 * what they share is beneath them (setup.c, targets.c).
 */
#include <stdio.h>
#include <string.h>

#include "opttable.h"
#include "sgbase.h"
#include "toolargs.h"

#define TOP_USAGE                                                               \
	"Usage: sgbase serve|client|respond [options]   (sgbase CMD --help)\n"  \
	"The scatter-gather baselines of issue 26 and their client:\n"          \
	"  serve    a coordinator on kernel sockets, --engine epoll or uring\n" \
	"  client   a closed loop against a coordinator: rate, p50, p99\n"      \
	"  respond  a target that echoes each datagram, header and body\n"

int main(int argc, char **argv)
{
	if (argc < 2)
		return rr_opt_fail(
			SG_PROG,
			"a command is needed: serve, client or respond (see --help)");
	if (!strcmp(argv[1], "serve"))
		return sg_serve_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "client"))
		return sg_client_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "respond"))
		return sg_respond_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(TOP_USAGE, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		rr_opt_version(SG_PROG);
		return 0;
	}
	return rr_opt_fail(
		SG_PROG,
		"unknown command '%s': serve, client or respond (see --help)",
		argv[1]);
}
