// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzzes the XDP program through bpf_prog_test_run_opts: random frames and
 * mutations of valid UDP requests (IPv4 with options, IPv6, VLAN, QinQ) go
 * through two loaded instances of it, one run each.
 *
 * The steering instance has a few ports configured in port_map, none with
 * an in-kernel function, and no sockets in xsks_map. Checked for every
 * frame:
 *   - the run succeeds with the frame unchanged and returns XDP_PASS
 *     (redirects fall back to it), or XDP_DROP for a source that a port's
 *     allow-list leaves out;
 *   - exactly one counter of the frame's queue moves by exactly one;
 *   - the program steers the frame to a socket (counted as redirect or
 *     no_socket) exactly when it is for the interface's MAC, user space's
 *     rr_parse() accepts it, its port has a function, the destination is
 *     the host's own where the port asks for that (RR_PORT_LOCAL_DST),
 *     and the source is allowed: the kernel and user-space parsers agree;
 *     and it drops exactly the requests from sources that are not allowed,
 *     from ports that could loop, or from below the port's min_src_port.
 *     Checksums are the exception: user space checks them (the IPv4
 *     header's, the UDP one) as a second line, the program does not for
 *     the user tier, so the frame is judged with its checksums put right;
 * and at the end the sum of all counters equals the number of frames.
 *
 * The tier instance is loaded as reqrouter loads it (rr_xdp_load(), the
 * bundled echo and reverse XDP programs through rr_xdp_load_function()),
 * on the same port numbers with other settings: in-kernel functions
 * (RR_PORT_XDP) with and without an amplification limit, a low
 * xdp_max_payload and an allow-list, a slot with no program, a cached
 * port (RR_PORT_CACHE) and a user-space-only one. A share of the frames
 * (-x, all by default), most with the checksums put right and some then
 * spoilt on purpose (IPv4 header, UDP zero, partial or garbage) or given
 * trailing padding, also run through it, and each one through rr_serve()
 * on a copy (the port's function, MTU and amplification limit). The
 * in-kernel tier must do what user space does:
 *   - XDP_TX only with exactly user space's reply frame (length, bytes);
 *   - a function-tier drop (fn_stats xdp_drop + reason) only where user
 *     space drops for the same reason, and always there, but for a bad
 *     UDP checksum on a request too long for the program, which it
 *     punts unverified (a cached port looks it up: a miss);
 *   - a request user space answers, steered to a port whose program is
 *     loaded and within xdp_max_payload, is answered (not passed); a
 *     longer one is punted untouched; a cached port answers exactly when
 *     the reply cache holds the payload (user space fills it as a worker
 *     does after a miss, and the same frame is run again for a hit);
 *   - whatever is not the function's (not ours, other ports, loop source
 *     ports) comes back unchanged as in the steering instance;
 *   - one xdp_stats counter and the expected fn_stats counters move, and
 *     at the end no fn_stats counter moved that a frame did not account.
 *
 * With -i IFNAME (run it inside a network namespace that has the device)
 * each frame arrives on a random RX queue of IFNAME, so queue rows and the
 * queue_out_of_range row are exercised too; without it every frame is on
 * queue 0. The PRNG seed is printed: -s SEED -n N (and the same -x)
 * replays the first N frames of a run.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "cache.h"
#include "frames.h"
#include "fuzz_xdp.h"
#include "invoker.h"
#include "link.h"
#include "log.h"
#include "packet.h"
#include "parse.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "shared/cache.h"
#include "shared/common.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "util.h"
#include "xdp.h"

/*
 * Who is calling and the rate limit, on ports that must not notice them:
 * every request sampled into the sketch (hh_scale 0), and a limit no
 * fuzzing run reaches (a nanosecond an interval, a burst of 2^32 - 1:
 * the bucket would have to run seconds ahead), so the verdicts stay the
 * oracle's while the program hashes every level of every source's
 * prefixes (/32, /24, /20; /128, /64, /56, /48).
 */
#define HH_RL (RR_PORT_HH | RR_PORT_RL)
#define HH_RL_CONF                                         \
	.hh_scale = 0, .rl_burst_ns = ~0ULL,               \
	.rl_interval_ns = { { 1, 1, 1 }, { 1, 1, 1, 1 } }, \
	.rl_len = { { 32, 24, 20 }, { 128, 64, 56, 48 } }

/* The steering instance: no port has the in-kernel tier. */
static const struct port ports[] = {
	{ .port = 7,
	  .conf = { .slot = 0, .nsocks = 1, .flags = HH_RL, HH_RL_CONF },
	  .has_function = 1 },
	/* no requests from the well-known ports */
	{ .port = 1232,
	  .conf = { .slot = 1, .nsocks = 4, .min_src_port = 1024 },
	  .has_function = 1 },
	/* more sockets than threads; the host's destinations only */
	{ .port = 65535,
	  .conf = { .slot = 2, .nsocks = 100, .flags = RR_PORT_LOCAL_DST },
	  .has_function = 1 },
	{ .port = 0, .conf = { .slot = 3, .nsocks = 1 }, .has_function = 1 },
	/* no function */
	{ .port = 8080, .conf = { .slot = 4, .nsocks = 0 } },
	/* bad slot */
	{ .port = 9999, .conf = { .slot = RR_MAX_SLOTS, .nsocks = 2 } },
	{ .port = 53,
	  .conf = { .slot = SLOT_ACL, .nsocks = 2, .flags = ALLOW },
	  .has_function = 1 },
	/* Allow-listed, no entry for its slot: nobody may call it. */
	{ .port = 5353,
	  .conf = { .slot = RR_MAX_SLOTS - 1,
		    .nsocks = RR_MAX_THREADS,
		    .flags = ALLOW },
	  .has_function = 1 },
};

#define XDP_ANY RR_XDP_MAX_PAYLOAD
/* A tier port whose requests an XDP program answers (kind TIER_XDP or,
 * with no program in the slot, TIER_EMPTY): amplification @amp (0: no
 * limit), requests up to @max bytes, @flags beside RR_PORT_XDP. */
#define XDP_PORT(num, sl, socks, amp, max, more, name, k) \
	{                                                 \
		.port = num,                              \
		.conf = { .slot = sl,                     \
			  .nsocks = socks,                \
			  .flags = RR_PORT_XDP | (more),  \
			  .max_amplification = amp,       \
			  .xdp_max_payload = max },       \
		.has_function = 1, .fn = name, .kind = k  \
	}
/*
 * The tier instance: the same port numbers, so the mutator's port picks
 * reach it as often, each in a slot of its own.
 */
static const struct port tier_ports[] = {
	{ .port = 7,
	  .conf = { .slot = 0,
		    .nsocks = 1,
		    .flags = RR_PORT_XDP | HH_RL,
		    .max_amplification = 3,
		    .xdp_max_payload = XDP_ANY,
		    HH_RL_CONF },
	  .has_function = 1,
	  .fn = "echo",
	  .kind = TIER_XDP },
	XDP_PORT(1232, 1, 4, 3, XDP_ANY, 0, "reverse", TIER_XDP),
	/* Longer requests go on to user space. */
	XDP_PORT(8080, 2, 1, 3, 33, 0, "reverse", TIER_XDP),
	/* The tightest amplification limit a same-size reply passes; the
	 * host's destinations only, none from the well-known ports. */
	{ .port = 9999,
	  .conf = { .slot = 3,
		    .nsocks = 2,
		    .flags = RR_PORT_XDP | RR_PORT_LOCAL_DST,
		    .max_amplification = 1,
		    .xdp_max_payload = XDP_ANY,
		    .min_src_port = 1024 },
	  .has_function = 1,
	  .fn = "echo",
	  .kind = TIER_XDP },
	/* No amplification limit, and an allow-list. */
	XDP_PORT(53, SLOT_ACL, 2, 0, XDP_ANY, ALLOW, "reverse", TIER_XDP),
	{ .port = 65535,
	  .conf = { .slot = 6,
		    .nsocks = 1,
		    .flags = RR_PORT_CACHE,
		    .max_amplification = 3,
		    .cache_gen = 1,
		    .cache_max_payload = RR_CACHE_MAX_PAYLOAD },
	  .has_function = 1,
	  .fn = "reverse",
	  .kind = TIER_CACHE },
	XDP_PORT(5353, 7, 1, 3, XDP_ANY, 0, "echo", TIER_EMPTY),
	{ .port = 0,
	  .conf = { .slot = 8, .nsocks = 1, .max_amplification = 3 },
	  .has_function = 1,
	  .fn = "echo",
	  .kind = TIER_USER },
};

const struct port_table steer_table = { ports, ARRAY_SIZE(ports) };
const struct port_table tier_table = { tier_ports, ARRAY_SIZE(tier_ports) };

const struct allow allows[] = {
	{ AF_INET, SLOT_ACL, 24, { 10, 0, 0, 0 } },
	{ AF_INET, SLOT_ACL, 32, { 192, 168, 1, 1 } },
	{ AF_INET6, SLOT_ACL, 120, { 0xfd } },
	{ AF_INET, SLOT_OPEN, 0, { 0 } },
	{ AF_INET6, SLOT_OPEN, 0, { 0 } },
};
const size_t nallows = ARRAY_SIZE(allows);

/* The mutator's destinations fall in and out of these. */
const struct local locals[] = {
	{ AF_INET, 32, { 10, 0, 0, 2 } },
	{ AF_INET, 24, { 192, 168, 1, 0 } }, /* an "AnyIP" prefix */
	{ AF_INET6,
	  128,
	  { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0xab, 0, 0, 0, 0, 0, 0, 2 } },
};
const size_t nlocals = ARRAY_SIZE(locals);

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;

	if (rr_parse_ull(s, 0, 0, max, &v))
		return -EINVAL;
	*out = v;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fuzz_xdp [-n FRAMES] [-s SEED] [-x PERCENT] [-i IFNAME] "
		"[-v]\n"
		"  -n FRAMES   frames to run (default 200000)\n"
		"  -s SEED     PRNG seed (default: from the clock)\n"
		"  -x PERCENT  share of frames also compared between the "
		"in-kernel tier\n"
		"              and user space (default 100, 0: none)\n"
		"  -i IFNAME   spread frames over IFNAME's RX queues\n"
		"  -v          libbpf's messages too\n");
}

int main(int argc, char **argv)
{
	uint64_t frames = 200000, seed, i, done = 0, tier_pct = 100;
	uint64_t sum = 0, fails = 0, tier_sum = 0;
	uint8_t in[MAX_FRAME], out[MAX_FRAME], tf[MAX_FRAME];
	static struct tier tier;
	struct xdp_md ctx = { 0 };
	struct reqrouter *skel;
	struct stats st = { 0 };
	const char *ifname = NULL;
	int opt, prog_fd, nq = 1, ret, loop_rule = has_loop_rule();
	uint32_t len, tlen, queue, key;
	struct timespec t0, t1;
	uint32_t want_act;
	const struct port *port;
	enum expect want;
	struct delta dl;

	seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	while ((opt = getopt(argc, argv, "n:s:x:i:vh")) != -1) {
		switch (opt) {
		case 'n':
			if (parse_u64(optarg, UINT64_MAX, &frames) || !frames) {
				fprintf(stderr, "fuzz_xdp: bad -n '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 's':
			if (parse_u64(optarg, UINT64_MAX, &seed)) {
				fprintf(stderr, "fuzz_xdp: bad -s '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'x':
			if (parse_u64(optarg, 100, &tier_pct)) {
				fprintf(stderr, "fuzz_xdp: bad -x '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'i':
			ifname = optarg;
			break;
		case 'v':
			rr_log_set_level(RR_LOG_DEBUG);
			break;
		default:
			usage();
			return opt == 'h' ? 0 : 2;
		}
	}
	if (geteuid() != 0) {
		printf("fuzz_xdp: needs root to load and test-run BPF "
		       "programs\n");
		return 77;
	}
	rr_log_route_libraries();
	fuzz_seed(seed);
	printf("fuzz_xdp: seed %" PRIu64 ", %" PRIu64 " frames, %" PRIu64
	       "%% also through the in-kernel tier%s\n",
	       seed, frames, tier_pct,
	       loop_rule ? ", loop source ports dropped" : "");

	if (ifname) {
		ctx.ingress_ifindex = if_nametoindex(ifname);
		nq = rr_link_rx_queues(ifname);
		if (!ctx.ingress_ifindex || nq <= 0) {
			fprintf(stderr, "fuzz_xdp: no device '%s'\n", ifname);
			return 1;
		}
		printf("fuzz_xdp: %s has %d RX queues\n", ifname, nq);
	}

	/* Frames for another MAC are the kernel's: the builder's is ours. */
	skel = reqrouter__open();
	if (!skel) {
		fprintf(stderr, "fuzz_xdp: cannot open the XDP program: %s\n",
			strerror(errno));
		return 1;
	}
	memcpy((void *)&skel->data->link_mac, f_dst_mac, 6);
	ret = reqrouter__load(skel);
	if (ret) {
		fprintf(stderr, "fuzz_xdp: cannot load the XDP program: %s\n",
			strerror(-ret));
		ret = 1;
		goto out;
	}
	prog_fd = bpf_program__fd(skel->progs.reqrouter_xdp);
	ret = configure(skel, &steer_table);
	if (ret) {
		fprintf(stderr, "fuzz_xdp: cannot configure ports: %s\n",
			strerror(-ret));
		ret = 1;
		goto out;
	}

	st.fd = bpf_map__fd(skel->maps.xdp_stats);
	st.ncpus = libbpf_num_possible_cpus();
	st.percpu = calloc((size_t)(st.ncpus > 0 ? st.ncpus : 1) * BATCH_MAX,
			   sizeof(uint64_t));
	if (st.ncpus <= 0 || !st.percpu) {
		fprintf(stderr, "fuzz_xdp: cannot size per-CPU values\n");
		ret = 1;
		goto out;
	}
	/* The second instance, with the in-kernel tier on its ports. */
	if (tier_pct) {
		ret = tier_load(&tier, st.ncpus);
		if (ret) {
			fprintf(stderr,
				"fuzz_xdp: cannot load the in-kernel tier: "
				"%s\n",
				strerror(-ret));
			ret = 1;
			goto out;
		}
	}
	for (key = 0; key < RR_STATS_SIZE; key++) {
		ret = stat_read(&st, key, &st.seen[key]);
		if (ret || st.seen[key]) {
			fprintf(stderr,
				"fuzz_xdp: counters not zero at start\n");
			ret = 1;
			goto out;
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < frames; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = in,
			    .data_out = out, .data_size_out = sizeof(out),
			    .repeat = 1);
		const char *why = NULL;

		len = make_frame(in);
		queue = ifname ? below((uint32_t)nq) : 0;
		topts.data_size_in = len;
		if (ifname) {
			ctx.rx_queue_index = queue;
			ctx.data_end = len;
			topts.ctx_in = &ctx;
			topts.ctx_size_in = sizeof(ctx);
		}
		want = expect_verdict(&steer_table, in, len, queue, loop_rule,
				      &port);
		want_act = want == EXPECT_DROP ? XDP_DROP : XDP_PASS;

		ret = bpf_prog_test_run_opts(prog_fd, &topts);
		if (ret) {
			fprintf(stderr,
				"fuzz_xdp: frame %" PRIu64
				": test run failed: %s\n",
				i, strerror(-ret));
			ret = 1;
			goto out;
		}
		ret = row_delta(&st,
				queue < RR_MAX_QUEUES ? queue : RR_MAX_QUEUES,
				&dl);
		if (ret) {
			fprintf(stderr, "fuzz_xdp: xdp_stats: %s\n",
				strerror(-ret));
			ret = 1;
			goto out;
		}
		if (topts.retval != want_act)
			why = want == EXPECT_DROP ? "a request to drop passed"
						  : "verdict is not XDP_PASS";
		else if (topts.data_size_out != len || memcmp(in, out, len))
			why = "the frame was changed";
		else if (dl.total != 1)
			why = "not counted exactly once on its queue";
		else if (dl.steered != (want == EXPECT_STEER))
			why = want == EXPECT_STEER ? "user space serves it, "
						     "XDP did not steer it"
						   : "XDP steered it, user "
						     "space would not serve it";
		else if (dl.dropped != (want == EXPECT_DROP))
			why = "counted as a drop wrongly";
		if (why) {
			if (fails++ < MAX_REPORTS) {
				fprintf(stderr,
					"fuzz_xdp: frame %" PRIu64
					" (%u bytes, queue %u): %s (verdict %u,"
					" counted %" PRIu64 ", steered %" PRIu64
					")\n",
					i, len, queue, why, topts.retval,
					dl.total, dl.steered);
				hexdump(in, len);
			}
		}
		if (tier_pct && below(100) < tier_pct) {
			memcpy(tf, in, len);
			tlen = tier_variant(tf, len);
			tier_check(&tier, i, tf, tlen, queue,
				   ifname ? &ctx : NULL, loop_rule);
		}
		done = i + 1;
		if ((i + 1) % FULL_SUM_EVERY == 0 || i + 1 == frames) {
			ret = full_sum(&st, &sum);
			if (ret || sum != i + 1) {
				fprintf(stderr,
					"fuzz_xdp: after %" PRIu64
					" frames the counters add up to "
					"%" PRIu64 "\n",
					i + 1, sum);
				fails++;
				break;
			}
			if (tier_pct && (full_sum(&tier.st, &tier_sum) ||
					 tier_sum + tier.fn_tx != tier.runs)) {
				fprintf(stderr,
					"fuzz_xdp: after %" PRIu64
					" runs the tier's counters add up to "
					"%" PRIu64 "\n",
					tier.runs, tier_sum + tier.fn_tx);
				tier.fails++;
				break;
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (tier_pct && tier_fn_leftovers(&tier))
		tier.fails++;

	printf("fuzz_xdp: %" PRIu64
	       " frames in %.1f s, counters add up to %" PRIu64 ", %" PRIu64
	       " failures\n",
	       done,
	       (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       sum, fails);
	print_mix("steering instance", &st);
	if (tier_pct) {
		printf("fuzz_xdp: in-kernel tier: %" PRIu64 " frames (%" PRIu64
		       " runs, counters add up to %" PRIu64 "), %" PRIu64
		       " steered to a function: %" PRIu64
		       " answered in XDP as in user space (%" PRIu64
		       " filling the MTU), %" PRIu64 " from the cache (%" PRIu64
		       " replies cached), %" PRIu64 " punted; %" PRIu64
		       " failures\n",
		       tier.frames, tier.runs, tier_sum + tier.fn_tx,
		       tier.steered, tier.tx, tier.at_mtu, tier.hits,
		       tier.inserts, tier.punts, tier.fails);
		printf("fuzz_xdp: in-kernel tier dropped for user space's "
		       "reason:");
		for (key = 1; key < RR_DROP_MAX; key++)
			printf(" %s=%" PRIu64, rr_drop_label(key),
			       tier.drops[key]);
		printf("\n");
		print_mix("in-kernel tier", &tier.st);
	}
	if (fails || tier.fails)
		printf("fuzz_xdp: replay with -s %" PRIu64 " -n %" PRIu64
		       " -x %" PRIu64 "%s%s\n",
		       seed, done, tier_pct, ifname ? " -i " : "",
		       ifname ? ifname : "");
	ret = fails || tier.fails ? 1 : 0;
out:
	free(st.percpu);
	free(tier.st.percpu);
	rr_xdp_destroy(&tier.x);
	reqrouter__destroy(skel);
	return ret;
}
