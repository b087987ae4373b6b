// SPDX-License-Identifier: GPL-2.0
/*
 * reflector: attaches reflector.bpf.c's XDP program to an interface (native
 * mode), waits for SIGINT/SIGTERM, prints its counters and detaches. With
 * --pass it attaches the do-nothing program instead, which the other end of
 * a veth needs before it accepts XDP_TX frames.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "reflector.skel.h"
#include "config.h"
#include "log.h"
#include "opttable.h"
#include "percpu.h"

enum { OPT_PASS = 256, OPT_SKB };

static const struct rr_opt opts[] = {
	{ "iface", 'i', "IFACE", "interface to attach to (required)" },
	{ "reverse-port", 'r', "PORT", "port answered with reverse (1232)" },
	{ "echo-port", 'e', "PORT", "port answered with echo (7)" },
	{ "pass", OPT_PASS, NULL, "attach the XDP_PASS program instead" },
	{ "skb", OPT_SKB, NULL, "generic (skb) mode instead of native" },
	{ "verbose", 'v', NULL, "show libbpf's messages (the verifier log)" },
	RR_OPT_VERSION_ENTRY,
	RR_OPT_HELP_ENTRY,
	{ NULL, 0, NULL, NULL },
};

#define SYNOPSIS "reflector -i IFACE [--pass] [-r PORT] [-e PORT]"
#define ABOUT                                                                 \
	"Answers UDP reverse/echo requests in XDP with XDP_TX until SIGINT\n" \
	"or SIGTERM, then detaches and prints its counters."

static volatile sig_atomic_t stop;
static bool verbose;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int read_stat(struct reflector *skel, __u32 idx, unsigned long long *v)
{
	uint64_t sum;
	int err = rr_percpu_sum(bpf_map__fd(skel->maps.stats), idx, 1, &sum);

	*v = err ? 0 : sum;
	return err;
}

/* What the command line asks for. */
struct refl_opts {
	const char *ifname;
	unsigned long rport, eport;
	__u32 flags;
	bool pass_only;
};

/* One option of the table. */
static int apply(int key, const char *arg, void *ctx)
{
	struct refl_opts *o = ctx;
	unsigned long v;

	switch (key) {
	case 'i':
		o->ifname = arg;
		break;
	case 'r':
	case 'e':
		if (rr_parse_ulong(arg, 1, 65535, &v)) {
			pr_warn("-%c needs a port 1-65535, not '%s'\n", key,
				arg);
			return 2;
		}
		*(key == 'r' ? &o->rport : &o->eport) = v;
		break;
	case OPT_PASS:
		o->pass_only = true;
		break;
	case 'v':
		verbose = true;
		break;
	case OPT_SKB:
		o->flags = XDP_FLAGS_SKB_MODE;
		break;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct rr_opt_prog prog = { "reflector", SYNOPSIS, ABOUT,
						 opts };
	struct refl_opts o = { .rport = 1232,
			       .eport = 7,
			       .flags = XDP_FLAGS_DRV_MODE };
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long long refl = 0, passed = 0;
	struct reflector *skel = NULL;
	int ifindex, err, prog_fd, ret = 1;

	rr_log_set_prog("reflector");
	ifindex = rr_opt_parse_iface(&prog, argc, argv, apply, &o, &o.ifname);
	if (!ifindex)
		return 2;
	rr_log_route_libraries();
	if (verbose)
		rr_log_set_level(RR_LOG_DEBUG);

	skel = reflector__open();
	if (!skel) {
		pr_warn("cannot open the BPF object\n");
		return 1;
	}
	skel->rodata->port_reverse = (__u16)o.rport;
	skel->rodata->port_echo = (__u16)o.eport;
	err = reflector__load(skel);
	if (err) {
		pr_warn("cannot load the XDP program: %s (-v shows why)\n",
			strerror(-err));
		goto out;
	}
	prog_fd = bpf_program__fd(o.pass_only ? skel->progs.pass
					      : skel->progs.reflect);
	err = bpf_xdp_attach(ifindex, prog_fd,
			     o.flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		pr_warn("cannot attach to %s: %s\n", o.ifname, strerror(-err));
		goto out;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pr_info("%s on %s (%s mode)%s\n",
		o.pass_only ? "XDP_PASS" : "reverse/echo reflector", o.ifname,
		o.flags == XDP_FLAGS_SKB_MODE ? "skb" : "native",
		o.pass_only ? "" : ", ready");
	while (!stop)
		pause();
	bpf_xdp_detach(ifindex, o.flags, NULL);
	if (!o.pass_only && !read_stat(skel, 0, &refl) &&
	    !read_stat(skel, 1, &passed))
		pr_info("reflected %llu, passed %llu\n", refl, passed);
	ret = 0;
out:
	reflector__destroy(skel);
	return ret;
}
