// SPDX-License-Identifier: GPL-2.0
/*
 * What sgbase's three subcommands (serve.c, client.c, respond.c) and the
 * engines share, beneath them all: stopping on SIGINT/SIGTERM, --cpu and
 * pinning to it, and the UDP sockets' set-up.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <netinet/in.h>

#include "parse.h"
#include "sgbase.h"
#include "toolargs.h"

volatile int sg_stop;

static void on_signal(int sig)
{
	(void)sig;
	sg_stop = 1;
}

void sg_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	/* No SA_RESTART: a blocking wait returns EINTR and the loop ends. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void sg_pin(int cpu)
{
	if (cpu >= 0)
		rr_opt_pin_thread(SG_PROG, &cpu, 1, 0);
}

void sg_sock_buffers(int fd)
{
	/* Bursts of a thousand datagrams must not overflow the default
	 * buffers (208 KiB): FORCE, as root may, else as much as allowed. */
	int sz = 8 << 20;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

int sg_udp_socket(int family, const struct sockaddr *bind_to,
		  socklen_t bind_len, bool nonblock)
{
	int fd, zero = 0, err;

	fd = socket(family,
		    SOCK_DGRAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0),
		    0);
	if (fd < 0)
		return -errno;
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	sg_sock_buffers(fd);
	if (bind_to && bind(fd, bind_to, bind_len)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int sg_parse_cpu(const char *arg, int *cpu)
{
	unsigned long v;

	if (rr_parse_ulong(arg, 0, CPU_SETSIZE - 1, &v))
		return rr_opt_fail(SG_PROG,
				   "--cpu takes a CPU number, not '%s'", arg);
	*cpu = (int)v;
	return 0;
}
