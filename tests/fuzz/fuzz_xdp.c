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
 *     rr_parse() accepts it, its port has a function and the source is
 *     allowed: the kernel and user-space parsers agree; and it drops
 *     exactly the requests from sources that are not allowed or from
 *     ports that could loop. Checksums are the exception: user space
 *     checks them as a second line, the program does not, so the frame
 *     is judged with its checksums put right;
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
 *     space drops for the same reason, and always there;
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
#include "invoker.h"
#include "log.h"
#include "packet.h"
#include "parse.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "rr_shared.h"
#include "xdp.h"

#define MAX_FRAME 3500 /* a test run takes one page minus head/tailroom */
#define MAX_REPORTS 5
#define FULL_SUM_EVERY 65536
#define MTU 1500     /* both instances' if_mtu */
#define ROOM 4096    /* a UMEM frame: the buffer user space serves in */
#define BATCH_MAX 32 /* counters read in one system call */

#define ALLOW RR_PORT_ALLOWLIST
#define SLOT_ACL 5   /* an allow-list port's slot */
#define SLOT_OPEN 30 /* a slot every source may call, and no port uses */

/* What the tier instance does with a port's requests. */
enum tier_kind {
	TIER_USER,  /* user space only: steered to the sockets */
	TIER_XDP,   /* the function's XDP program answers */
	TIER_EMPTY, /* RR_PORT_XDP, no program in the slot (being replaced) */
	TIER_CACHE, /* served in user space, repeats from the reply cache */
};

struct port {
	uint16_t port;
	struct rr_port_conf conf;
	int has_function;
	const char *fn; /* tier instance: the function, as registered */
	enum tier_kind kind;
};

struct port_table {
	const struct port *p;
	size_t n;
};

/* The steering instance: no port has the in-kernel tier. */
static const struct port ports[] = {
	{ .port = 7, .conf = { .slot = 0, .nsocks = 1 }, .has_function = 1 },
	{ .port = 1232, .conf = { .slot = 1, .nsocks = 4 }, .has_function = 1 },
	/* more sockets than threads */
	{ .port = 65535,
	  .conf = { .slot = 2, .nsocks = 100 },
	  .has_function = 1 },
	{ .port = 0, .conf = { .slot = 3, .nsocks = 1 }, .has_function = 1 },
	/* no function */
	{ .port = 8080, .conf = { .slot = 4, .nsocks = 0 } },
	/* bad slot */
	{ .port = 9999, .conf = { .slot = RR_MAX_PORTS, .nsocks = 2 } },
	{ .port = 53,
	  .conf = { .slot = SLOT_ACL, .nsocks = 2, .flags = ALLOW },
	  .has_function = 1 },
	/* Allow-listed, no entry for its slot: nobody may call it. */
	{ .port = 5353,
	  .conf = { .slot = RR_MAX_PORTS - 1,
		    .nsocks = RR_MAX_THREADS,
		    .flags = ALLOW },
	  .has_function = 1 },
};

#define XDP_ANY RR_XDP_MAX_PAYLOAD
/*
 * The tier instance: the same port numbers, so the mutator's port picks
 * reach it as often, each in a slot of its own.
 */
static const struct port tier_ports[] = {
	{ .port = 7,
	  .conf = { .slot = 0,
		    .nsocks = 1,
		    .flags = RR_PORT_XDP,
		    .max_amplification = 3,
		    .xdp_max_payload = XDP_ANY },
	  .has_function = 1,
	  .fn = "echo",
	  .kind = TIER_XDP },
	{ .port = 1232,
	  .conf = { .slot = 1,
		    .nsocks = 4,
		    .flags = RR_PORT_XDP,
		    .max_amplification = 3,
		    .xdp_max_payload = XDP_ANY },
	  .has_function = 1,
	  .fn = "reverse",
	  .kind = TIER_XDP },
	/* Longer requests go on to user space. */
	{ .port = 8080,
	  .conf = { .slot = 2,
		    .nsocks = 1,
		    .flags = RR_PORT_XDP,
		    .max_amplification = 3,
		    .xdp_max_payload = 33 },
	  .has_function = 1,
	  .fn = "reverse",
	  .kind = TIER_XDP },
	/* The tightest amplification limit a same-size reply passes. */
	{ .port = 9999,
	  .conf = { .slot = 3,
		    .nsocks = 2,
		    .flags = RR_PORT_XDP,
		    .max_amplification = 1,
		    .xdp_max_payload = XDP_ANY },
	  .has_function = 1,
	  .fn = "echo",
	  .kind = TIER_XDP },
	/* No amplification limit, and an allow-list. */
	{ .port = 53,
	  .conf = { .slot = SLOT_ACL,
		    .nsocks = 2,
		    .flags = RR_PORT_XDP | ALLOW,
		    .xdp_max_payload = XDP_ANY },
	  .has_function = 1,
	  .fn = "reverse",
	  .kind = TIER_XDP },
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
	{ .port = 5353,
	  .conf = { .slot = 7,
		    .nsocks = 1,
		    .flags = RR_PORT_XDP,
		    .max_amplification = 3,
		    .xdp_max_payload = XDP_ANY },
	  .has_function = 1,
	  .fn = "echo",
	  .kind = TIER_EMPTY },
	{ .port = 0,
	  .conf = { .slot = 8, .nsocks = 1, .max_amplification = 3 },
	  .has_function = 1,
	  .fn = "echo",
	  .kind = TIER_USER },
};

static const struct port_table steer_table = {
	ports, sizeof(ports) / sizeof(ports[0])
};
static const struct port_table tier_table = {
	tier_ports, sizeof(tier_ports) / sizeof(tier_ports[0])
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

static void mutate(uint8_t *f, uint32_t *len, const struct frame_layout *lay,
		   int family)
{
	uint32_t n = *len, l3 = lay->l3_off, l4 = lay->l4_off, off, k;
	uint32_t hdr_end = l4 + F_UDP_HLEN < n ? l4 + F_UDP_HLEN : n;

	switch (below(14)) {
	case 0: /* a bit, mostly in the headers */
		off = below(4) ? below(hdr_end) : below(n);
		f[off] ^= (uint8_t)(1u << below(8));
		break;
	case 1: /* a byte */
		f[below(n)] = (uint8_t)rnd();
		break;
	case 2: /* cut short, often inside the headers */
		*len = F_ETH_HLEN +
		       below((below(2) ? hdr_end : n) - F_ETH_HLEN + 1);
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
		off = 12 + 4 * below((l3 - F_ETH_HLEN) / F_VLAN_HLEN + 1);
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
	struct frame_spec s = { 0 };
	struct frame_layout lay;
	uint32_t kind = below(100), len, i, n;

	if (kind < 10) { /* noise with a plausible EtherType */
		len = F_ETH_HLEN + below(below(8) ? 200 : MAX_FRAME - 13);
		for (i = 0; i < len; i++)
			f[i] = (uint8_t)rnd();
		if (below(2))
			put16(f, len, 12,
			      ethertypes[below(sizeof(ethertypes) / 2)]);
		return len;
	}

	s.family = below(5) < 3 ? AF_INET : AF_INET6;
	s.csum = CSUM_VALID;
	s.vlans = (int)below(3);
	s.opt_words = below(3) ? 0 : below(11);
	s.sport = (uint16_t)rnd();
	s.dport = below(4) ? ports[below(sizeof(ports) / sizeof(ports[0]))].port
			   : (uint16_t)rnd();
	switch (below(8)) {
	case 0:
		s.plen = below(MAX_FRAME - 120);
		break;
	case 1:
		s.plen = below(1500);
		break;
	case 2: /* around the longest payload a reply under the MTU takes */
		s.plen = MTU - F_UDP_HLEN - 2 + below(5) -
			 (s.family == AF_INET ? F_IP4_HLEN + 4 * s.opt_words
					      : F_IP6_HLEN);
		break;
	default:
		s.plen = below(65);
		break;
	}
	for (i = 0; i < s.plen; i++)
		payload[i] = (uint8_t)rnd();
	s.payload = payload;
	len = build_frame(f, MAX_FRAME, &s, &lay);
	if (!len)
		abort(); /* MAX_FRAME leaves room for every spec above */

	if (kind < 30)
		return len;
	for (n = 1 + below(4); n; n--)
		mutate(f, &len, &lay, s.family);
	return len;
}

/*
 * The frame as it goes to the tier instance: mostly with the checksums
 * rr_parse() checks put right, so mutations reach the functions, then
 * sometimes one checksum spoilt the ways senders spoil them, or trailing
 * padding. Returns the new length.
 */
static uint32_t tier_variant(uint8_t *f, uint32_t len)
{
	struct rr_pkt p;
	uint32_t k, off, sum;
	uint8_t *ip, *udp;

	if (below(4))
		fix_checksums(f, len);
	if (rr_parse(f, len, &p))
		return len;
	ip = f + p.l3_off;
	udp = f + p.l4_off;
	switch (below(12)) {
	case 0: /* a bad IPv4 header checksum; over IPv6, a zero UDP one */
		if (p.family == AF_INET)
			ip[10 + below(2)] ^= (uint8_t)(1 + below(255));
		else
			udp[6] = udp[7] = 0;
		break;
	case 1: /* no UDP checksum: fine over IPv4, malformed over IPv6 */
		udp[6] = udp[7] = 0;
		break;
	case 2: /* partial: the pseudo-header's sum, as offload leaves it */
		sum = ref_fold(
			ref_pseudo(ip, p.family, p.payload_len + F_UDP_HLEN));
		put16(f, len, p.l4_off + 6, sum);
		break;
	case 3: /* garbage */
		put16(f, len, p.l4_off + 6, (uint32_t)rnd());
		break;
	case 4: /* Ethernet padding, or junk after the IP packet */
		k = 1 + below(60);
		if (len + k > MAX_FRAME)
			k = MAX_FRAME - len;
		for (off = len; off < len + k; off++)
			f[off] = below(2) ? 0 : (uint8_t)rnd();
		return len + k;
	default:
		break;
	}
	return len;
}

struct stats {
	int fd;
	int ncpus;
	uint64_t *percpu;	      /* BATCH_MAX counters' per-CPU values */
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

/*
 * Sums @n (<= BATCH_MAX) consecutive per-CPU counters of map @fd from key
 * @first, in one system call: an array's batch starts after in_batch.
 */
static int read_range(int fd, const struct stats *st, uint32_t first,
		      uint32_t n, uint64_t *sums)
{
	uint32_t in = first - 1, out, keys[BATCH_MAX], count = n, i;
	int c, ret;

	if (n > BATCH_MAX)
		return -EINVAL;
	ret = bpf_map_lookup_batch(fd, first ? &in : NULL, &out, keys,
				   st->percpu, &count, NULL);
	if (ret && ret != -ENOENT)
		return ret;
	if (count != n || keys[0] != first)
		return -EIO;
	for (i = 0; i < n; i++) {
		sums[i] = 0;
		for (c = 0; c < st->ncpus; c++)
			sums[i] += st->percpu[(size_t)i * st->ncpus + c];
	}
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
	int stat;	  /* the last counter that moved, or -1 */
};

/* Adds up what the counters of one queue row gained since last read. */
static int row_delta(struct stats *st, uint32_t row, struct delta *dl)
{
	uint64_t v[RR_XDP_STAT_MAX], d;
	uint32_t s, key = row * RR_XDP_STAT_MAX;
	int ret;

	memset(dl, 0, sizeof(*dl));
	dl->stat = -1;
	ret = read_range(st->fd, st, key, RR_XDP_STAT_MAX, v);
	if (ret)
		return ret;
	for (s = 0; s < RR_XDP_STAT_MAX; s++, key++) {
		d = v[s] - st->seen[key];
		st->seen[key] = v[s];
		dl->total += d;
		if (d)
			dl->stat = (int)s;
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
static void print_mix(const char *who, const struct stats *st)
{
	uint64_t by_stat[RR_XDP_STAT_MAX] = { 0 };
	uint32_t key;

	for (key = 0; key < RR_STATS_SIZE; key++)
		by_stat[key % RR_XDP_STAT_MAX] += st->seen[key];
	printf("fuzz_xdp: %s counted", who);
	for (key = 0; key < RR_XDP_STAT_MAX; key++)
		printf(" %s:%s=%" PRIu64, stat_verdicts[key], stat_labels[key],
		       by_stat[key]);
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
static int loop_port(const struct port_table *t, uint16_t port)
{
	size_t i;

	if (port == 0 || port == 7 || port == 13 || port == 19 || port == 37)
		return 1;
	for (i = 0; i < t->n; i++)
		if (t->p[i].port == port && t->p[i].conf.nsocks)
			return 1;
	return 0;
}

/*
 * What the program should do with table @t's ports: steer what user space
 * would serve (rr_parse() accepts it, the port has a function) unless it
 * comes from a loop port or the port's allow-list leaves the source out,
 * which is dropped; pass everything else. *port is the frame's entry in
 * @t when it is steered.
 */
static enum expect expect_verdict(const struct port_table *t,
				  const uint8_t *frame, uint32_t len,
				  uint32_t queue, int loop_rule,
				  const struct port **port)
{
	static uint8_t f[MAX_FRAME];
	struct rr_pkt p;
	uint16_t dport;
	size_t i;

	*port = NULL;
	if (queue >= RR_MAX_QUEUES || memcmp(frame, f_dst_mac, 6))
		return EXPECT_PASS;
	memcpy(f, frame, len);
	fix_checksums(f, len);
	if (rr_parse(f, len, &p))
		return EXPECT_PASS;
	dport = get16(f, len, p.l4_off + 2);
	for (i = 0; i < t->n; i++) {
		if (t->p[i].port != dport)
			continue;
		if (!t->p[i].has_function)
			return EXPECT_PASS;
		if (loop_rule && loop_port(t, get16(f, len, p.l4_off)))
			return EXPECT_DROP;
		if (!(t->p[i].conf.flags & ALLOW) ||
		    source_allowed(p.family,
				   f + p.l3_off +
					   (p.family == AF_INET ? 12 : 8),
				   t->p[i].conf.slot)) {
			*port = &t->p[i];
			return EXPECT_STEER;
		}
		return EXPECT_DROP;
	}
	return EXPECT_PASS;
}

static int configure(struct reqrouter *skel, const struct port_table *t)
{
	struct rr_allow_v4 k4;
	struct rr_allow_v6 k6;
	uint8_t one = 1;
	uint32_t key;
	size_t i;
	int ret;

	for (i = 0; i < t->n; i++) {
		key = t->p[i].port;
		ret = bpf_map__update_elem(skel->maps.port_map, &key,
					   sizeof(key), &t->p[i].conf,
					   sizeof(t->p[i].conf), BPF_ANY);
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

/* The tier instance and what went through it. */
struct tier {
	struct rr_xdp x;
	int prog_fd;
	int fn_fd;
	struct stats st;		    /* its xdp_stats */
	uint64_t fn_seen[RR_FN_STATS_SIZE]; /* fn_stats already accounted */
	uint64_t runs;			    /* test runs, re-runs included */
	uint64_t frames, steered, tx, hits, punts, inserts;
	uint64_t at_mtu;	     /* answers whose IP packet fills the MTU */
	uint64_t drops[RR_DROP_MAX]; /* agreed drops, by reason */
	uint64_t fails;
};

/* What the tier instance must do with a steered request. */
enum outcome {
	OUT_PASS, /* go on to the (missing) sockets, untouched */
	OUT_TX,	  /* the function's XDP program answers */
	OUT_HIT,  /* the reply cache answers */
	OUT_MISS, /* the cache has nothing: on to the sockets */
	OUT_PUNT, /* past xdp_max_payload: on to the sockets */
	OUT_DROP, /* dropped for user space's reason */
};

static const char *const outcome_names[] = {
	[OUT_PASS] = "go on to the sockets",
	[OUT_TX] = "be answered in XDP",
	[OUT_HIT] = "be answered from the cache",
	[OUT_MISS] = "miss the cache",
	[OUT_PUNT] = "be punted",
	[OUT_DROP] = "be dropped",
};

static const char *const kind_names[] = {
	[TIER_USER] = "user space only",
	[TIER_XDP] = "XDP",
	[TIER_EMPTY] = "XDP, empty slot",
	[TIER_CACHE] = "cached",
};

#define FN_LABEL(name, label) [RR_FN_##name] = label,
static const char *const fn_labels[RR_FN_XDP_DROP + 1] = { RR_FN_STATS(
	FN_LABEL) };
#undef FN_LABEL

/* One frame through the tier instance, and what it was compared with. */
struct tier_case {
	const uint8_t *f;
	uint32_t len;
	uint32_t queue;
	const struct port *p; /* its port when steered, else NULL */
	enum outcome want;
	int user;		     /* rr_serve(): reply length or -drop */
	uint8_t reply[ROOM];	     /* user space's frame */
	uint8_t out[ROOM];	     /* XDP's frame */
	uint32_t out_len, retval;    /* XDP's */
	struct delta dl;	     /* its xdp_stats row */
	uint64_t fn[RR_FN_STAT_MAX]; /* its port's fn_stats */
};

static int tier_load(struct tier *t, int ncpus)
{
	const struct rr_xdp_impl *impl;
	char why[RR_ERRLEN];
	const struct port *p;
	size_t i;
	int ret;

	ret = rr_xdp_load(&t->x, f_dst_mac, MTU);
	if (ret)
		return ret;
	for (i = 0; i < tier_table.n; i++) {
		p = &tier_table.p[i];
		if (p->kind != TIER_XDP)
			continue;
		impl = rr_registry_xdp(p->fn);
		if (!impl) {
			fprintf(stderr, "fuzz_xdp: no XDP program for %s\n",
				p->fn);
			return -ENOENT;
		}
		ret = rr_xdp_load_function(&t->x, p->conf.slot, impl, why,
					   sizeof(why));
		if (ret) {
			fprintf(stderr, "fuzz_xdp: cannot load %s in XDP: %s\n",
				p->fn, why);
			return ret;
		}
	}
	ret = configure(t->x.skel, &tier_table);
	if (!ret)
		ret = rr_xdp_map_cache(&t->x);
	if (ret)
		return ret;
	t->prog_fd = bpf_program__fd(t->x.skel->progs.reqrouter_xdp);
	t->fn_fd = bpf_map__fd(t->x.skel->maps.fn_stats);
	t->st.fd = bpf_map__fd(t->x.skel->maps.xdp_stats);
	t->st.ncpus = ncpus;
	t->st.percpu = calloc((size_t)ncpus * BATCH_MAX, sizeof(uint64_t));
	return t->st.percpu ? 0 : -ENOMEM;
}

/* Runs c->f through the tier instance and reads what it counted. */
static int tier_run(struct tier *t, struct tier_case *c, struct xdp_md *ctx)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = c->f,
		    .data_size_in = c->len, .data_out = c->out,
		    .data_size_out = sizeof(c->out), .repeat = 1);
	uint32_t key, s;
	uint64_t v[RR_FN_STAT_MAX];
	int ret;

	if (ctx) {
		ctx->rx_queue_index = c->queue;
		ctx->data_end = c->len;
		o.ctx_in = ctx;
		o.ctx_size_in = sizeof(*ctx);
	}
	ret = bpf_prog_test_run_opts(t->prog_fd, &o);
	if (ret)
		return ret;
	t->runs++;
	c->retval = o.retval;
	c->out_len = o.data_size_out;
	ret = row_delta(&t->st,
			c->queue < RR_MAX_QUEUES ? c->queue : RR_MAX_QUEUES,
			&c->dl);
	if (ret || !c->p)
		return ret;
	key = RR_FN_STATS_KEY(c->queue, c->p->conf.slot, 0);
	ret = read_range(t->fn_fd, &t->st, key, RR_FN_STAT_MAX, v);
	if (ret)
		return ret;
	for (s = 0; s < RR_FN_STAT_MAX; s++) {
		c->fn[s] = v[s] - t->fn_seen[key + s];
		t->fn_seen[key + s] = v[s];
	}
	return 0;
}

/* Whether the reply cache holds an answer to @payload on @p's port, looked
 * up as the XDP program looks it up. */
static int cache_holds(const struct tier *t, const struct port *p,
		       const uint8_t *payload, uint32_t len)
{
	__u64 w[RR_CACHE_WORDS] = { 0 }, h;
	const struct rr_cache_entry *e;

	if (len > p->conf.cache_max_payload || len > RR_CACHE_MAX_PAYLOAD)
		return 0;
	memcpy(w, payload, len);
	h = rr_cache_hash(w, (len + 7) / 8, p->port, len);
	e = &t->x.cache[h & (RR_CACHE_ENTRIES - 1)];
	return !(e->seq & 1) && e->hash == h && e->port == p->port &&
	       e->req_len == len && e->gen == p->conf.cache_gen &&
	       !e->expires_ns && !memcmp(e->req, w, sizeof(w));
}

static const char *user_said(const struct tier_case *c, char *buf, size_t n)
{
	if (c->user >= 0)
		snprintf(buf, n, "answers (%d bytes)", c->user);
	else
		snprintf(buf, n, "drops (%s)", rr_drop_label(-c->user));
	return buf;
}

/*
 * Compares what the tier instance did with a steered request with user
 * space's answer and c->want; NULL when they agree, else why not.
 */
static const char *judge_steered(const struct tier_case *c, char *buf, size_t n)
{
	uint64_t want_fn[RR_FN_STAT_MAX] = { 0 };
	uint32_t want_act = XDP_PASS, reason = 0, i;
	int want_stat = RR_XDP_PASS_NO_SOCKET;
	char user[64];

	switch (c->want) {
	case OUT_TX:
		want_act = XDP_TX;
		want_stat = RR_XDP_TX_FUNCTION;
		want_fn[RR_FN_XDP_RX] = want_fn[RR_FN_XDP_TX] = 1;
		break;
	case OUT_HIT:
		want_act = XDP_TX;
		want_stat = RR_XDP_TX_CACHE;
		want_fn[RR_FN_CACHE_HIT] = 1;
		break;
	case OUT_MISS:
		want_fn[RR_FN_CACHE_MISS] = 1;
		break;
	case OUT_PUNT:
		want_fn[RR_FN_XDP_RX] = want_fn[RR_FN_XDP_PUNT] = 1;
		break;
	case OUT_DROP:
		want_act = XDP_DROP;
		want_stat = RR_XDP_DROP_FUNCTION;
		want_fn[RR_FN_XDP_RX] = 1;
		want_fn[RR_FN_XDP_DROP - c->user] = 1;
		break;
	case OUT_PASS:
		break;
	}
	user_said(c, user, sizeof(user));

	/* What a user would notice first: the reply, the drop reason. */
	if (c->retval == XDP_TX) {
		if (c->user < 0) {
			snprintf(buf, n, "XDP answered, user space %s", user);
			return buf;
		}
		if (c->out_len != (uint32_t)c->user) {
			snprintf(buf, n,
				 "XDP's reply is %u bytes, user space's %d",
				 c->out_len, c->user);
			return buf;
		}
		for (i = 0; i < c->out_len && c->out[i] == c->reply[i]; i++)
			;
		if (i < c->out_len) {
			snprintf(buf, n,
				 "XDP's reply differs from user space's at "
				 "byte %u of %u (xdp %02x, user %02x)",
				 i, c->out_len, c->out[i], c->reply[i]);
			return buf;
		}
	} else if (c->retval == XDP_DROP) {
		for (i = 1; i < RR_DROP_MAX; i++)
			if (c->fn[RR_FN_XDP_DROP + i])
				reason = i;
		if (!reason || (c->user >= 0 || (uint32_t)-c->user != reason)) {
			snprintf(buf, n, "XDP dropped it (%s), user space %s",
				 reason ? rr_drop_label(reason)
					: "no function-tier reason",
				 user);
			return buf;
		}
	} else if (c->retval == XDP_PASS) {
		if (c->out_len != c->len || memcmp(c->out, c->f, c->len)) {
			snprintf(buf, n, "XDP passed it on changed");
			return buf;
		}
	}
	if (c->retval != want_act) {
		snprintf(buf, n,
			 "user space %s, so it should %s; XDP gave "
			 "verdict %u (counted %s:%s)",
			 user, outcome_names[c->want], c->retval,
			 c->dl.stat >= 0 ? stat_verdicts[c->dl.stat] : "-",
			 c->dl.stat >= 0 ? stat_labels[c->dl.stat] : "-");
		return buf;
	}
	if (c->dl.total != 1 || c->dl.stat != want_stat) {
		snprintf(buf, n,
			 "%" PRIu64 " counters moved, last %s:%s; want "
			 "%s:%s once",
			 c->dl.total,
			 c->dl.stat >= 0 ? stat_verdicts[c->dl.stat] : "-",
			 c->dl.stat >= 0 ? stat_labels[c->dl.stat] : "-",
			 stat_verdicts[want_stat], stat_labels[want_stat]);
		return buf;
	}
	for (i = 0; i < RR_FN_STAT_MAX; i++) {
		if (c->fn[i] == want_fn[i])
			continue;
		snprintf(buf, n,
			 "fn_stats %s%s%s moved by %" PRIu64 ", want %" PRIu64
			 " (it should %s)",
			 fn_labels[i < RR_FN_XDP_DROP ? i : RR_FN_XDP_DROP],
			 i < RR_FN_XDP_DROP ? "" : ":",
			 i < RR_FN_XDP_DROP ? ""
					    : rr_drop_label(i - RR_FN_XDP_DROP),
			 c->fn[i], want_fn[i], outcome_names[c->want]);
		return buf;
	}
	return NULL;
}

/* The steering instance's rules, for what is not the function's. */
static const char *judge_other(const struct tier_case *c, enum expect want)
{
	if (c->retval != (want == EXPECT_DROP ? XDP_DROP : XDP_PASS))
		return want == EXPECT_DROP ? "a request to drop was not dropped"
					   : "verdict is not XDP_PASS";
	if (c->out_len != c->len || memcmp(c->out, c->f, c->len))
		return "the frame was changed";
	if (c->dl.total != 1)
		return "not counted exactly once on its queue";
	if (c->dl.steered)
		return "XDP steered it, user space would not serve it";
	if (c->dl.dropped != (want == EXPECT_DROP))
		return "counted as a drop wrongly";
	return NULL;
}

static void tier_report(struct tier *t, uint64_t no, const struct tier_case *c,
			const char *why)
{
	if (t->fails++ >= MAX_REPORTS)
		return;
	fprintf(stderr,
		"fuzz_xdp: frame %" PRIu64 " (%u bytes, queue %u), in-kernel "
		"tier",
		no, c->len, c->queue);
	if (c->p)
		fprintf(stderr, ", port %u (%s, %s)", c->p->port, c->p->fn,
			kind_names[c->p->kind]);
	fprintf(stderr, ": %s\n", why);
	hexdump(c->f, c->len);
	if (c->retval == XDP_TX && c->user >= 0 &&
	    (c->out_len != (uint32_t)c->user ||
	     memcmp(c->out, c->reply, c->out_len))) {
		fprintf(stderr, "XDP's reply:\n");
		hexdump(c->out, c->out_len);
		fprintf(stderr, "user space's reply:\n");
		hexdump(c->reply, (uint32_t)c->user);
	}
}

/*
 * One frame through the tier instance and, when it is steered to a
 * function, through rr_serve() on a copy; a cached port's miss that user
 * space answers is cached as a worker would, and the frame run again.
 */
static void tier_check(struct tier *t, uint64_t no, const uint8_t *f,
		       uint32_t len, uint32_t queue, struct xdp_md *ctx,
		       int loop_rule)
{
	static struct tier_case c;
	const struct rr_function *fn;
	const struct port *p;
	enum expect want;
	struct rr_pkt pkt;
	const char *why;
	char buf[256];
	int ret, within;

	t->frames++;
	want = expect_verdict(&tier_table, f, len, queue, loop_rule, &p);
	c.f = f;
	c.len = len;
	c.queue = queue;
	c.p = p;
	c.user = 0;
	ret = tier_run(t, &c, ctx);
	if (ret) {
		snprintf(buf, sizeof(buf), "test run or counters: %s",
			 strerror(-ret));
		tier_report(t, no, &c, buf);
		return;
	}
	if (want != EXPECT_STEER) {
		why = judge_other(&c, want);
		if (why)
			tier_report(t, no, &c, why);
		return;
	}

	t->steered++;
	fn = rr_registry_find(p->fn);
	memcpy(c.reply, f, len);
	c.user = rr_serve(c.reply, len, ROOM, MTU, p->conf.max_amplification,
			  fn, queue, 0);
	within = !rr_parse(f, len, &pkt) &&
		 pkt.payload_len <= p->conf.xdp_max_payload &&
		 pkt.payload_len <= RR_XDP_MAX_PAYLOAD &&
		 len <= RR_XDP_MAX_FRAME;
	switch (p->kind) {
	case TIER_XDP:
		c.want = c.user < 0 ? OUT_DROP : within ? OUT_TX : OUT_PUNT;
		break;
	case TIER_EMPTY:
		c.want = c.user < 0 ? OUT_DROP : within ? OUT_PASS : OUT_PUNT;
		break;
	case TIER_CACHE:
		c.want = c.user < 0 ? OUT_PASS
			 : cache_holds(t, p, f + pkt.payload_off,
				       pkt.payload_len)
				 ? OUT_HIT
				 : OUT_MISS;
		break;
	default:
		c.want = OUT_PASS;
		break;
	}
	why = judge_steered(&c, buf, sizeof(buf));
	if (why) {
		tier_report(t, no, &c, why);
		return;
	}
	t->tx += c.want == OUT_TX;
	t->hits += c.want == OUT_HIT;
	t->punts += c.want == OUT_PUNT;
	if (c.want == OUT_DROP)
		t->drops[-c.user]++;
	if (c.want == OUT_TX && (uint32_t)c.user == pkt.l3_off + MTU)
		t->at_mtu++;
	if (c.want != OUT_MISS || pkt.payload_len > p->conf.cache_max_payload)
		return;

	if (rr_cache_insert(t->x.cache, p->port, p->conf.cache_gen, 0,
			    f + pkt.payload_off, pkt.payload_len,
			    c.reply + pkt.payload_off,
			    (uint32_t)c.user - pkt.payload_off,
			    0) == RR_CACHE_SKIPPED) {
		tier_report(t, no, &c, "cache insert skipped");
		return;
	}
	t->inserts++;
	c.want = OUT_HIT;
	ret = tier_run(t, &c, ctx);
	if (ret) {
		snprintf(buf, sizeof(buf), "test run or counters: %s",
			 strerror(-ret));
		tier_report(t, no, &c, buf);
		return;
	}
	why = judge_steered(&c, buf, sizeof(buf));
	if (why) {
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 " (run again after caching user space's reply)");
		tier_report(t, no, &c, buf);
		return;
	}
	t->hits++;
}

/* No fn_stats counter moved that a frame did not account for (one for
 * another slot or queue than the request's, say). */
static int tier_fn_leftovers(struct tier *t)
{
	uint64_t v[BATCH_MAX];
	uint32_t key, n, i;
	int ret, bad = 0;

	for (key = 0; key < RR_FN_STATS_SIZE; key += n) {
		n = RR_FN_STATS_SIZE - key < BATCH_MAX ? RR_FN_STATS_SIZE - key
						       : BATCH_MAX;
		ret = read_range(t->fn_fd, &t->st, key, n, v);
		if (ret)
			return ret;
		for (i = 0; i < n; i++) {
			if (v[i] == t->fn_seen[key + i])
				continue;
			if (bad++ < MAX_REPORTS)
				fprintf(stderr,
					"fuzz_xdp: fn_stats of queue %u slot "
					"%u, counter %u, moved by %" PRIu64
					" outside the frames' own ports\n",
					(key + i) / RR_FN_STAT_MAX /
						RR_MAX_PORTS,
					(key + i) / RR_FN_STAT_MAX %
						RR_MAX_PORTS,
					(key + i) % RR_FN_STAT_MAX,
					v[i] - t->fn_seen[key + i]);
		}
	}
	return bad;
}

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
	rng_state = seed;
	printf("fuzz_xdp: seed %" PRIu64 ", %" PRIu64 " frames, %" PRIu64
	       "%% also through the in-kernel tier%s\n",
	       seed, frames, tier_pct,
	       loop_rule ? ", loop source ports dropped" : "");

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
	memcpy((void *)skel->rodata->if_mac, f_dst_mac, 6);
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
					 tier_sum != tier.runs)) {
				fprintf(stderr,
					"fuzz_xdp: after %" PRIu64
					" runs the tier's counters add up to "
					"%" PRIu64 "\n",
					tier.runs, tier_sum);
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
		       tier.frames, tier.runs, tier_sum, tier.steered, tier.tx,
		       tier.at_mtu, tier.hits, tier.inserts, tier.punts,
		       tier.fails);
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
