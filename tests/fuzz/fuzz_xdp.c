// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzzes the XDP program through bpf_prog_test_run_opts: random frames and
 * mutations of valid UDP requests (IPv4 with options, IPv6, VLAN, QinQ) go
 * through the loaded program one run each, with a few ports configured in
 * port_map and no sockets in xsks_map. Checked for every frame:
 *   - the run succeeds with the frame unchanged and returns XDP_PASS
 *     (redirects fall back to it), or XDP_DROP for a source that a port's
 *     allow-list leaves out;
 *   - exactly one counter of the frame's queue moves by exactly one;
 *   - the program steers the frame to a socket (counted as redirect or
 *     no_socket) exactly when it is for the interface's MAC, user space's
 *     rr_parse() accepts it, its port has a function and the source is
 *     allowed: the kernel and user-space parsers agree; and it drops
 *     exactly the requests from sources that are not allowed or from
 *     ports that could loop. Checksums are the exception: user space
 *     checks them as a second line, the program does not, so the frame
 *     is judged with its checksums put right;
 * and at the end the sum of all counters equals the number of frames.
 *
 * With -i IFNAME (run it inside a network namespace that has the device)
 * each frame arrives on a random RX queue of IFNAME, so queue rows and the
 * queue_out_of_range row are exercised too; without it every frame is on
 * queue 0. The PRNG seed is printed: -s SEED -n N replays the first N
 * frames of a run.
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

#include "frames.h"
#include "log.h"
#include "packet.h"
#include "invoker.h"
#include "reqrouter.skel.h"
#include "rr_shared.h"

#define MAX_FRAME 3500 /* a test run takes one page minus head/tailroom */
#define MAX_REPORTS 5
#define FULL_SUM_EVERY 65536

#define ALLOW RR_PORT_ALLOWLIST
#define SLOT_ACL 5   /* an allow-list port's slot */
#define SLOT_OPEN 30 /* a slot every source may call, and no port uses */

static const struct {
	uint16_t port;
	struct rr_port_conf conf;
	int has_function;
} ports[] = {
	{ 7, { .slot = 0, .nsocks = 1 }, 1 },
	{ 1232, { .slot = 1, .nsocks = 4 }, 1 },
	{ 65535, { .slot = 2, .nsocks = 100 }, 1 }, /* more than threads */
	{ 0, { .slot = 3, .nsocks = 1 }, 1 },
	{ 8080, { .slot = 4, .nsocks = 0 }, 0 },	    /* no function */
	{ 9999, { .slot = RR_MAX_PORTS, .nsocks = 2 }, 0 }, /* bad slot */
	{ 53, { .slot = SLOT_ACL, .nsocks = 2, .flags = ALLOW }, 1 },
	/* Allow-listed, no entry for its slot: nobody may call it. */
	{ 5353,
	  { .slot = RR_MAX_PORTS - 1,
	    .nsocks = RR_MAX_THREADS,
	    .flags = ALLOW },
	  1 },
};

/* Allow-list entries; the frame builder's sources are 10.0.0.2, fd00::2. */
static const struct allow {
	int family;
	uint32_t slot;
	uint32_t len; /* prefix length of the address */
	uint8_t addr[16];
} allows[] = {
	{ AF_INET, SLOT_ACL, 24, { 10, 0, 0, 0 } },
	{ AF_INET, SLOT_ACL, 32, { 192, 168, 1, 1 } },
	{ AF_INET6, SLOT_ACL, 120, { 0xfd } },
	{ AF_INET, SLOT_OPEN, 0, { 0 } },
	{ AF_INET6, SLOT_OPEN, 0, { 0 } },
};

/* Addresses the mutator picks from: in and just out of the allow-list
 * entries, and group addresses. */
static const uint8_t addrs4[][4] = {
	{ 10, 0, 0, 200 },	{ 10, 0, 1, 2 },	{ 192, 168, 1, 1 },
	{ 192, 168, 1, 0 },	{ 11, 0, 0, 2 },	{ 0, 0, 0, 0 },
	{ 224, 0, 0, 1 },	{ 255, 255, 255, 255 }, { 239, 255, 255, 250 },
	{ 127, 0, 0, 1 },	{ 0, 1, 2, 3 },		{ 240, 0, 0, 1 },
	{ 223, 255, 255, 255 },
};
static const uint8_t addr6_last[] = { 0x02, 0xff, 0x00 }; /* fd00::/120 */

/* Source ports a request might come from: services that answer anything
 * (the loop risk), ports with functions, and ordinary ones. */
static const uint16_t sports[] = { 0,	 7,    13,   19,   37,	  53,
				   1232, 5353, 8080, 9999, 40000, 65535 };

static const uint16_t ethertypes[] = { 0x0800, 0x86dd, 0x8100, 0x88a8,
				       0x0806, 0x9100, 0x0000, 0xffff };
static const uint8_t ip_protos[] = { 17, 6,  1,	 58,  0,  43, 44,
				     60, 50, 51, 135, 59, 255 };

static uint64_t rng_state;

/* splitmix64: tiny, seedable, good enough to pick mutations. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static void put16(uint8_t *f, uint32_t len, uint32_t off, uint32_t v)
{
	if (off + 2 <= len) {
		f[off] = (uint8_t)(v >> 8);
		f[off + 1] = (uint8_t)v;
	}
}

static uint16_t get16(const uint8_t *f, uint32_t len, uint32_t off)
{
	return off + 2 <= len ? (uint16_t)(f[off] << 8 | f[off + 1]) : 0;
}

/* A length field nudged the way parsers get wrong: by a little, or to
 * its extremes. */
static uint32_t bad_length(uint32_t v)
{
	switch (below(4)) {
	case 0:
		return v + below(19) - 9;
	case 1:
		return below(2) ? 0 : 0xffff;
	case 2:
		return v + (below(2) ? 1 : -1u);
	default:
		return below(0x10000);
	}
}

static void mutate(uint8_t *f, uint32_t *len, const struct fz_layout *lay,
		   int family)
{
	uint32_t n = *len, l3 = lay->l3_off, l4 = lay->l4_off, off, k;
	uint32_t hdr_end = l4 + FZ_UDP_HLEN < n ? l4 + FZ_UDP_HLEN : n;

	switch (below(14)) {
	case 0: /* a bit, mostly in the headers */
		off = below(4) ? below(hdr_end) : below(n);
		f[off] ^= (uint8_t)(1u << below(8));
		break;
	case 1: /* a byte */
		f[below(n)] = (uint8_t)rnd();
		break;
	case 2: /* cut short, often inside the headers */
		*len = FZ_ETH_HLEN +
		       below((below(2) ? hdr_end : n) - FZ_ETH_HLEN + 1);
		break;
	case 3: /* trailing bytes: Ethernet padding or junk */
		k = below(64);
		if (n + k > MAX_FRAME)
			k = MAX_FRAME - n;
		for (off = n; off < n + k; off++)
			f[off] = below(2) ? 0 : (uint8_t)rnd();
		*len = n + k;
		break;
	case 4: /* the EtherType of any header in the chain */
		off = 12 + 4 * below((l3 - FZ_ETH_HLEN) / FZ_VLAN_HLEN + 1);
		put16(f, n, off, ethertypes[below(sizeof(ethertypes) / 2)]);
		break;
	case 5: /* the L4 protocol */
		if (l3 + 10 <= n)
			f[l3 + (family == AF_INET ? 9 : 6)] =
				ip_protos[below(sizeof(ip_protos))];
		break;
	case 6: /* IP length: total length or payload length */
		off = l3 + (family == AF_INET ? 2 : 4);
		put16(f, n, off, bad_length(get16(f, n, off)));
		break;
	case 7: /* UDP length */
		put16(f, n, l4 + 4, bad_length(get16(f, n, l4 + 4)));
		break;
	case 8: /* IPv4 header length, or version */
		if (l3 < n)
			f[l3] = below(2) ? (uint8_t)((f[l3] & 0xf0) | below(16))
					 : (uint8_t)((below(16) << 4) |
						     (f[l3] & 0xf));
		break;
	case 9: /* IPv4 fragment field */
		if (family == AF_INET)
			put16(f, n, l3 + 6,
			      below(2) ? 0x2000u << below(2) | below(2)
				       : below(0x10000));
		break;
	case 10: /* an IP address: source or destination */
		k = below(2);
		off = l3 + (family == AF_INET ? 12 + 4 * k : 8 + 16 * k);
		if (family == AF_INET && off + 4 <= n)
			memcpy(f + off, addrs4[below(sizeof(addrs4) / 4)], 4);
		else if (family == AF_INET6 && off + 16 <= n && below(2))
			f[off + 15] = addr6_last[below(sizeof(addr6_last))];
		else if (family == AF_INET6 && off + 16 <= n && below(2))
			f[off] = below(2) ? 0xff : 0xfd; /* multicast or not */
		else if (family == AF_INET6 && off + 16 <= n && below(2)) {
			memset(f + off, 0, 15); /* ::, ::1 or ::2 */
			f[off + 15] = (uint8_t)below(3);
		} else if (family == AF_INET6 && off + 16 <= n)
			f[off + below(16)] ^= (uint8_t)(1u << below(8));
		break;
	case 11: /* the source port */
		put16(f, n, l4,
		      below(4) ? sports[below(sizeof(sports) / 2)]
			       : below(0x10000));
		break;
	case 12: /* the group bit of the destination or source MAC */
		f[below(2) * 6] ^= 1;
		break;
	default: /* the destination port */
		put16(f, n, l4 + 2,
		      below(2) ? ports[below(sizeof(ports) / sizeof(ports[0]))]
					 .port
			       : below(0x10000));
		break;
	}
}

/* A random frame: valid, mutated, or noise. Returns its length. */
static uint32_t make_frame(uint8_t *f)
{
	static uint8_t payload[MAX_FRAME];
	struct fz_frame_spec s = { 0 };
	struct fz_layout lay;
	uint32_t kind = below(100), len, i, n;

	if (kind < 10) { /* noise with a plausible EtherType */
		len = FZ_ETH_HLEN + below(below(8) ? 200 : MAX_FRAME - 13);
		for (i = 0; i < len; i++)
			f[i] = (uint8_t)rnd();
		if (below(2))
			put16(f, len, 12,
			      ethertypes[below(sizeof(ethertypes) / 2)]);
		return len;
	}

	s.family = below(5) < 3 ? AF_INET : AF_INET6;
	s.vlans = (int)below(3);
	s.ip_opts = below(3) ? 0 : 4 * below(11);
	s.sport = (uint16_t)rnd();
	s.dport = below(4) ? ports[below(sizeof(ports) / sizeof(ports[0]))].port
			   : (uint16_t)rnd();
	switch (below(8)) {
	case 0:
		s.payload_len = below(MAX_FRAME - 120);
		break;
	case 1:
		s.payload_len = below(1500);
		break;
	default:
		s.payload_len = below(65);
		break;
	}
	for (i = 0; i < s.payload_len; i++)
		payload[i] = (uint8_t)rnd();
	s.payload = payload;
	len = fz_build_frame(f, MAX_FRAME, &s, &lay);
	if (!len)
		abort(); /* MAX_FRAME leaves room for every spec above */

	if (kind < 30)
		return len;
	for (n = 1 + below(4); n; n--)
		mutate(f, &len, &lay, s.family);
	return len;
}

struct stats {
	int fd;
	int ncpus;
	uint64_t *percpu;
	uint64_t seen[RR_STATS_SIZE]; /* counter values already accounted */
};

static int stat_read(struct stats *st, uint32_t key, uint64_t *sum)
{
	int i, ret;

	ret = bpf_map_lookup_elem(st->fd, &key, st->percpu);
	if (ret)
		return -errno;
	*sum = 0;
	for (i = 0; i < st->ncpus; i++)
		*sum += st->percpu[i];
	return 0;
}

#define STAT_LABEL(name, verdict, reason) [RR_XDP_##name] = reason,
static const char *const stat_labels[RR_XDP_STAT_MAX] = { RR_XDP_STATS(
	STAT_LABEL) };
#undef STAT_LABEL
#define STAT_VERDICT(name, verdict, reason) [RR_XDP_##name] = verdict,
static const char *const stat_verdicts[RR_XDP_STAT_MAX] = { RR_XDP_STATS(
	STAT_VERDICT) };
#undef STAT_VERDICT

struct delta {
	uint64_t total;	  /* every counter of the row */
	uint64_t steered; /* redirect + no_socket: sent towards a socket */
	uint64_t dropped; /* counters whose verdict is "drop" */
};

/* Adds up what the counters of one queue row gained since last read. */
static int row_delta(struct stats *st, uint32_t row, struct delta *dl)
{
	uint64_t v, d;
	uint32_t s, key;
	int ret;

	memset(dl, 0, sizeof(*dl));
	for (s = 0; s < RR_XDP_STAT_MAX; s++) {
		key = row * RR_XDP_STAT_MAX + s;
		ret = stat_read(st, key, &v);
		if (ret)
			return ret;
		d = v - st->seen[key];
		st->seen[key] = v;
		dl->total += d;
		if (s == RR_XDP_REDIRECT || s == RR_XDP_PASS_NO_SOCKET)
			dl->steered += d;
		if (!strcmp(stat_verdicts[s], "drop"))
			dl->dropped += d;
	}
	return 0;
}

static int full_sum(struct stats *st, uint64_t *sum)
{
	uint64_t v;
	uint32_t key;
	int ret;

	*sum = 0;
	for (key = 0; key < RR_STATS_SIZE; key++) {
		ret = stat_read(st, key, &v);
		if (ret)
			return ret;
		*sum += v;
	}
	return 0;
}

/* One line of what the frames turned out to be, to show the mix is good. */
static void print_mix(const struct stats *st)
{
	uint64_t by_stat[RR_XDP_STAT_MAX] = { 0 };
	uint32_t key;

	for (key = 0; key < RR_STATS_SIZE; key++)
		by_stat[key % RR_XDP_STAT_MAX] += st->seen[key];
	printf("fuzz_xdp: counted");
	for (key = 0; key < RR_XDP_STAT_MAX; key++)
		printf(" %s=%" PRIu64, stat_labels[key], by_stat[key]);
	printf("\n");
}

static int prefix_match(const uint8_t *a, const uint8_t *b, uint32_t bits)
{
	uint32_t i;

	for (i = 0; i < bits; i++)
		if ((a[i / 8] ^ b[i / 8]) & (0x80 >> (i % 8)))
			return 0;
	return 1;
}

static int source_allowed(int family, const uint8_t *src, uint32_t slot)
{
	size_t i;

	for (i = 0; i < sizeof(allows) / sizeof(allows[0]); i++)
		if (allows[i].family == family && allows[i].slot == slot &&
		    prefix_match(allows[i].addr, src, allows[i].len))
			return 1;
	return 0;
}

enum expect { EXPECT_PASS, EXPECT_STEER, EXPECT_DROP };

/*
 * Whether the program drops requests from ports that could make two
 * servers answer each other forever: it does if it has the counter.
 */
static int has_loop_rule(void)
{
	int s;

	for (s = 0; s < RR_XDP_STAT_MAX; s++)
		if (!strcmp(stat_labels[s], "loop_source_port"))
			return 1;
	return 0;
}

/* Port 0, services that answer anything (echo, daytime, chargen, time)
 * and any port that has sockets. */
static int loop_port(uint16_t port)
{
	size_t i;

	if (port == 0 || port == 7 || port == 13 || port == 19 || port == 37)
		return 1;
	for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		if (ports[i].port == port && ports[i].conf.nsocks)
			return 1;
	return 0;
}

/*
 * What the program should do: steer what user space would serve (rr_parse()
 * accepts it, the port has a function) unless it comes from a loop port
 * or the port's allow-list leaves the source out, which is dropped; pass
 * everything else.
 */
static enum expect expect_verdict(const uint8_t *frame, uint32_t len,
				  uint32_t queue, int loop_rule)
{
	static uint8_t f[MAX_FRAME];
	struct rr_pkt p;
	uint16_t port;
	size_t i;

	if (queue >= RR_MAX_QUEUES || memcmp(frame, fz_server_mac, 6))
		return EXPECT_PASS;
	memcpy(f, frame, len);
	fz_fix_checksums(f, len);
	if (rr_parse(f, len, &p))
		return EXPECT_PASS;
	port = get16(f, len, p.l4_off + 2);
	for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		if (ports[i].port != port)
			continue;
		if (!ports[i].has_function)
			return EXPECT_PASS;
		if (loop_rule && loop_port(get16(f, len, p.l4_off)))
			return EXPECT_DROP;
		if (!(ports[i].conf.flags & ALLOW) ||
		    source_allowed(p.family,
				   f + p.l3_off +
					   (p.family == AF_INET ? 12 : 8),
				   ports[i].conf.slot))
			return EXPECT_STEER;
		return EXPECT_DROP;
	}
	return EXPECT_PASS;
}

static int configure(struct reqrouter *skel)
{
	struct rr_allow_v4 k4;
	struct rr_allow_v6 k6;
	uint8_t one = 1;
	uint32_t key;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		key = ports[i].port;
		ret = bpf_map__update_elem(skel->maps.port_map, &key,
					   sizeof(key), &ports[i].conf,
					   sizeof(ports[i].conf), BPF_ANY);
		if (ret)
			return ret;
	}
	for (i = 0; i < sizeof(allows) / sizeof(allows[0]); i++) {
		if (allows[i].family == AF_INET) {
			memset(&k4, 0, sizeof(k4));
			k4.prefixlen = 32 + allows[i].len;
			k4.slot = allows[i].slot;
			memcpy(k4.addr, allows[i].addr, sizeof(k4.addr));
			ret = bpf_map__update_elem(skel->maps.acl_v4, &k4,
						   sizeof(k4), &one,
						   sizeof(one), BPF_ANY);
		} else {
			memset(&k6, 0, sizeof(k6));
			k6.prefixlen = 32 + allows[i].len;
			k6.slot = allows[i].slot;
			memcpy(k6.addr, allows[i].addr, sizeof(k6.addr));
			ret = bpf_map__update_elem(skel->maps.acl_v6, &k6,
						   sizeof(k6), &one,
						   sizeof(one), BPF_ANY);
		}
		if (ret)
			return ret;
	}
	return 0;
}

static void hexdump(const uint8_t *f, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		fprintf(stderr, "%02x%s", f[i], i % 32 == 31 ? "\n" : "");
	if (len % 32)
		fputc('\n', stderr);
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *end || *out > max)
		return -EINVAL;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fuzz_xdp [-n FRAMES] [-s SEED] [-i IFNAME] [-v]\n"
		"  -n FRAMES  frames to run (default 200000)\n"
		"  -s SEED    PRNG seed (default: from the clock)\n"
		"  -i IFNAME  spread frames over IFNAME's RX queues\n"
		"  -v         libbpf's messages too\n");
}

int main(int argc, char **argv)
{
	uint64_t frames = 200000, seed, i, done = 0;
	uint64_t sum = 0, fails = 0;
	uint8_t in[MAX_FRAME], out[MAX_FRAME];
	struct xdp_md ctx = { 0 };
	struct reqrouter *skel;
	struct stats st = { 0 };
	const char *ifname = NULL;
	int opt, prog_fd, nq = 1, ret, loop_rule = has_loop_rule();
	uint32_t len, queue, key;
	struct timespec t0, t1;
	uint32_t want_act;
	enum expect want;
	struct delta dl;

	seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	while ((opt = getopt(argc, argv, "n:s:i:vh")) != -1) {
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
	rng_state = seed;
	printf("fuzz_xdp: seed %" PRIu64 ", %" PRIu64 " frames%s\n", seed,
	       frames, loop_rule ? ", loop source ports dropped" : "");

	if (ifname) {
		ctx.ingress_ifindex = if_nametoindex(ifname);
		nq = rr_count_rx_queues(ifname);
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
	memcpy((void *)skel->rodata->if_mac, fz_server_mac, 6);
	ret = reqrouter__load(skel);
	if (ret) {
		fprintf(stderr, "fuzz_xdp: cannot load the XDP program: %s\n",
			strerror(-ret));
		ret = 1;
		goto out;
	}
	prog_fd = bpf_program__fd(skel->progs.reqrouter_xdp);
	ret = configure(skel);
	if (ret) {
		fprintf(stderr, "fuzz_xdp: cannot configure ports: %s\n",
			strerror(-ret));
		ret = 1;
		goto out;
	}

	st.fd = bpf_map__fd(skel->maps.xdp_stats);
	st.ncpus = libbpf_num_possible_cpus();
	st.percpu =
		calloc((size_t)(st.ncpus > 0 ? st.ncpus : 1), sizeof(uint64_t));
	if (st.ncpus <= 0 || !st.percpu) {
		fprintf(stderr, "fuzz_xdp: cannot size per-CPU values\n");
		ret = 1;
		goto out;
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
		want = expect_verdict(in, len, queue, loop_rule);
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
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	printf("fuzz_xdp: %" PRIu64
	       " frames in %.1f s, counters add up to %" PRIu64 ", %" PRIu64
	       " failures\n",
	       done,
	       (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       sum, fails);
	print_mix(&st);
	if (fails)
		printf("fuzz_xdp: replay with -s %" PRIu64 " -n %" PRIu64
		       "%s%s\n",
		       seed, done, ifname ? " -i " : "", ifname ? ifname : "");
	ret = fails ? 1 : 0;
out:
	free(st.percpu);
	reqrouter__destroy(skel);
	return ret;
}
