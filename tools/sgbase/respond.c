// SPDX-License-Identifier: GPL-2.0
/*
 * sgbase respond: a target for tests without reqrouter. It answers each
 * datagram with the datagram itself (the header unchanged, the body
 * echoed: a sum of payload "1" is the number of targets) from the address
 * it was sent to, so that one wildcard socket can stand for a thousand
 * targets on as many addresses (IP_PKTINFO / IPV6_PKTINFO both ways), and
 * the coordinator's check of the reply's source holds. --dup sends every
 * reply twice, to see duplicates ignored.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "opttable.h"
#include "parse.h"
#include "sgbase.h"
#include "toolargs.h"

#define RS_MAX_SOCKS 64
#define RS_BATCH 64
#define RS_CTL 64 /* room for one in6_pktinfo control message */

enum { OPT_BIND = 256, OPT_CPU, OPT_DUP };

static const struct rr_opt respond_opts[] = {
	{ "port", 'p', "PORT", "the UDP port to answer on (default 7)" },
	{ "bind", OPT_BIND, "ADDR",
	  "answer on ADDR only; repeat for more, up to 64 (default: every address, each reply from the address its request was sent to)" },
	{ "cpu", OPT_CPU, "N", "pin to CPU N" },
	{ "dup", OPT_DUP, NULL, "send every reply twice" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ NULL, 0, NULL, NULL },
};

#define RESPOND_SYNOPSIS \
	"sgbase respond [--port PORT] [--bind ADDR]... [--cpu N] [--dup]"
#define RESPOND_ABOUT                                                         \
	"A scatter-gather target: echoes each datagram, the 16-byte header\n" \
	"and the body, from the address it was sent to. Stops on SIGINT or\n" \
	"SIGTERM."

struct respond_cfg {
	uint16_t port;
	const char *bind[RS_MAX_SOCKS];
	uint32_t nbind;
	int cpu;
	bool dup;
};

static int respond_apply(int key, const char *arg, void *ctx)
{
	struct respond_cfg *c = ctx;

	switch (key) {
	case 'p':
		return sg_port_option(arg, &c->port);
	case OPT_BIND:
		if (c->nbind == RS_MAX_SOCKS)
			return rr_opt_fail(SG_PROG, "--bind: at most %d",
					   RS_MAX_SOCKS);
		c->bind[c->nbind++] = arg;
		return 0;
	case OPT_CPU:
		return sg_parse_cpu(arg, &c->cpu);
	case OPT_DUP:
		c->dup = true;
		return 0;
	}
	return 0;
}

struct rs_batch {
	struct mmsghdr msg[RS_BATCH];
	struct iovec iov[RS_BATCH];
	struct sockaddr_storage addr[RS_BATCH];
	uint8_t ctl[RS_BATCH][RS_CTL];
	uint8_t buf[RS_BATCH][SG_BUF_SIZE];
};

/* A wildcard socket that learns each request's destination. */
static int open_any(int family, uint16_t port)
{
	struct sockaddr_storage sa;
	int fd, one = 1;

	memset(&sa, 0, sizeof(sa));
	if (family == AF_INET) {
		((struct sockaddr_in *)&sa)->sin_family = AF_INET;
		((struct sockaddr_in *)&sa)->sin_port = htons(port);
	} else {
		((struct sockaddr_in6 *)&sa)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&sa)->sin6_port = htons(port);
	}
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	sg_sock_buffers(fd);
	if (setsockopt(fd, family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6,
		       family == AF_INET ? IP_PKTINFO : IPV6_RECVPKTINFO, &one,
		       sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa,
		 family == AF_INET ? sizeof(struct sockaddr_in)
				   : sizeof(struct sockaddr_in6))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* The request's destination as the reply's source: ipi_spec_dst is what
 * sendmsg takes it from; no interface, so routing picks the way out. */
static void reply_control(struct msghdr *m)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo *pi = (void *)CMSG_DATA(c);

			pi->ipi_spec_dst = pi->ipi_addr;
			pi->ipi_ifindex = 0;
			return;
		}
		if (c->cmsg_level == IPPROTO_IPV6 &&
		    c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo *pi = (void *)CMSG_DATA(c);

			pi->ipi6_ifindex = 0;
			return;
		}
	}
	m->msg_control = NULL;
	m->msg_controllen = 0;
}

static void serve_fd(int fd, struct rs_batch *b, bool dup, uint64_t *req,
		     uint64_t *rep)
{
	int n, i, sent, k;

	for (i = 0; i < RS_BATCH; i++) {
		b->iov[i].iov_len = SG_BUF_SIZE;
		b->msg[i].msg_hdr.msg_namelen = sizeof(b->addr[i]);
		b->msg[i].msg_hdr.msg_control = b->ctl[i];
		b->msg[i].msg_hdr.msg_controllen = RS_CTL;
	}
	n = recvmmsg(fd, b->msg, RS_BATCH, MSG_DONTWAIT, NULL);
	if (n <= 0)
		return;
	*req += (uint64_t)n;
	for (i = 0; i < n; i++) {
		b->iov[i].iov_len = b->msg[i].msg_len;
		reply_control(&b->msg[i].msg_hdr);
	}
	for (k = 0; k < (dup ? 2 : 1); k++) {
		for (i = 0; i < n; i += sent) {
			sent = sendmmsg(fd, b->msg + i, (unsigned int)(n - i),
					0);
			if (sent <= 0) {
				sent = 1; /* that one is lost; on to the next */
				continue;
			}
			*rep += (uint64_t)sent;
		}
	}
}

int sg_respond_main(int argc, char **argv)
{
	static const struct rr_opt_prog prog = { "sgbase respond",
						 RESPOND_SYNOPSIS,
						 RESPOND_ABOUT, respond_opts };
	struct respond_cfg cfg = { .port = 7, .cpu = -1 };
	struct pollfd pfd[RS_MAX_SOCKS];
	uint64_t req = 0, rep = 0;
	struct rs_batch *b;
	uint32_t nfd = 0, i;
	int ret, fd;

	ret = rr_opt_parse(&prog, argc, argv, respond_apply, &cfg);
	if (ret)
		return ret;
	if (optind < argc)
		return rr_opt_fail(SG_PROG, "respond: unexpected argument '%s'",
				   argv[optind]);
	for (i = 0; i < cfg.nbind; i++) {
		struct sockaddr_storage sa;
		socklen_t len;

		if (sg_parse_addr(cfg.bind[i], cfg.port, &sa, &len))
			return rr_opt_fail(
				SG_PROG,
				"--bind takes an IPv4 or IPv6 address, not '%s'",
				cfg.bind[i]);
		fd = sg_udp_socket(sa.ss_family, (struct sockaddr *)&sa, len,
				   true);
		if (fd < 0) {
			fprintf(stderr,
				"%s: respond: cannot bind %s port %u: %s\n",
				SG_PROG, cfg.bind[i], cfg.port, strerror(-fd));
			ret = 1;
			goto out;
		}
		pfd[nfd++].fd = fd;
	}
	if (!cfg.nbind) {
		fd = open_any(AF_INET, cfg.port);
		if (fd < 0) {
			fprintf(stderr,
				"%s: respond: cannot bind port %u: %s\n",
				SG_PROG, cfg.port, strerror(-fd));
			return 1;
		}
		pfd[nfd++].fd = fd;
		/* IPv6 where the host has it; IPv4 alone otherwise. */
		fd = open_any(AF_INET6, cfg.port);
		if (fd >= 0)
			pfd[nfd++].fd = fd;
	}
	for (i = 0; i < nfd; i++)
		pfd[i].events = POLLIN;
	b = calloc(1, sizeof(*b));
	if (!b) {
		ret = 1;
		goto out;
	}
	for (i = 0; i < RS_BATCH; i++) {
		b->iov[i].iov_base = b->buf[i];
		b->msg[i].msg_hdr.msg_iov = &b->iov[i];
		b->msg[i].msg_hdr.msg_iovlen = 1;
		b->msg[i].msg_hdr.msg_name = &b->addr[i];
	}
	sg_pin(cfg.cpu);
	sg_signals();
	fprintf(stderr, "%s: respond: port %u, %u sockets: ready\n", SG_PROG,
		cfg.port, nfd);
	while (!sg_stop) {
		if (poll(pfd, nfd, 1000) <= 0)
			continue;
		for (i = 0; i < nfd; i++)
			if (pfd[i].revents & POLLIN)
				serve_fd(pfd[i].fd, b, cfg.dup, &req, &rep);
	}
	fprintf(stderr, "%s: respond: requests=%llu replies=%llu\n", SG_PROG,
		(unsigned long long)req, (unsigned long long)rep);
	free(b);
	ret = 0;
out:
	for (i = 0; i < nfd; i++)
		close(pfd[i].fd);
	return ret;
}
