// SPDX-License-Identifier: GPL-2.0
/*
 * A part of fuzz_xdp (fuzz_xdp.c): the steering instance's side. Its
 * per-CPU counters read and summed, what the program should do with a
 * frame (as user space's parser and the port tables say), and the maps
 * both instances are configured with.
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
#include "log.h"
#include "packet.h"
#include "parse.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "shared/common.h"
#include "shared/guard.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "xdp.h"

int stat_read(struct stats *st, uint32_t key, uint64_t *sum)
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
int read_range(int fd, const struct stats *st, uint32_t first, uint32_t n,
	       uint64_t *sums)
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
const char *const stat_labels[RR_XDP_STAT_MAX] = { RR_XDP_STATS(STAT_LABEL) };
#undef STAT_LABEL
#define STAT_VERDICT(name, verdict, reason) [RR_XDP_##name] = verdict,
const char *const stat_verdicts[RR_XDP_STAT_MAX] = { RR_XDP_STATS(
	STAT_VERDICT) };
#undef STAT_VERDICT

/* Adds up what the counters of one queue row gained since last read. */
_Static_assert(RR_XDP_STAT_MAX <= BATCH_MAX,
	       "a row of xdp_stats is read in one system call");

int row_delta(struct stats *st, uint32_t row, struct delta *dl)
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

int full_sum(struct stats *st, uint64_t *sum)
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
void print_mix(const char *who, const struct stats *st)
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

/* Whether @dst is one of the host's destinations (locals[]). */
static int dest_local(int family, const uint8_t *dst)
{
	size_t i;

	for (i = 0; i < nlocals; i++)
		if (locals[i].family == family &&
		    prefix_match(locals[i].addr, dst, locals[i].len))
			return 1;
	return 0;
}

static int source_allowed(int family, const uint8_t *src, uint32_t slot)
{
	size_t i;

	for (i = 0; i < nallows; i++)
		if (allows[i].family == family && allows[i].slot == slot &&
		    prefix_match(allows[i].addr, src, allows[i].len))
			return 1;
	return 0;
}

/*
 * Whether the program drops requests from ports that could make two
 * servers answer each other forever: it does if it has the counter.
 */
int has_loop_rule(void)
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
 * would serve (rr_parse() accepts it, the port has a function) unless its
 * port answers only the host's own destinations and it is for another
 * (passed), or it comes from a loop port or one below the port's
 * min_src_port, or the port's allow-list leaves the source out (each
 * dropped); pass everything else. *port is the frame's entry in @t when
 * it is steered.
 */
enum expect expect_verdict(const struct port_table *t, const uint8_t *frame,
			   uint32_t len, uint32_t queue, int loop_rule,
			   const struct port **port)
{
	static uint8_t f[MAX_FRAME];
	struct rr_pkt p;
	uint16_t dport, sport;
	int v4;
	size_t i;

	*port = NULL;
	if (queue >= RR_MAX_QUEUES || memcmp(frame, f_dst_mac, 6))
		return EXPECT_PASS;
	memcpy(f, frame, len);
	fix_checksums(f, len);
	if (rr_parse(f, len, &p))
		return EXPECT_PASS;
	dport = get16(f, len, p.l4_off + 2);
	sport = get16(f, len, p.l4_off);
	v4 = p.family == AF_INET;
	for (i = 0; i < t->n; i++) {
		if (t->p[i].port != dport)
			continue;
		if (!t->p[i].has_function)
			return EXPECT_PASS;
		/* Not for this host: the kernel's, before any drop. */
		if (t->p[i].conf.flags & RR_PORT_LOCAL_DST &&
		    !dest_local(p.family, f + p.l3_off + (v4 ? 16 : 24)))
			return EXPECT_PASS;
		if (loop_rule && loop_port(t, sport))
			return EXPECT_DROP;
		if (sport < t->p[i].conf.min_src_port)
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

/* One local route into the trie of its family. */
static int add_local(struct reqrouter *skel, const struct local *l)
{
	struct rr_local_v4 k4 = { .prefixlen = l->len };
	struct rr_local_v6 k6 = { .prefixlen = l->len };
	uint8_t one = 1;

	if (l->family == AF_INET) {
		memcpy(k4.addr, l->addr, 4);
		return bpf_map__update_elem(skel->maps.local_v4, &k4,
					    sizeof(k4), &one, sizeof(one),
					    BPF_ANY);
	}
	memcpy(k6.addr, l->addr, 16);
	return bpf_map__update_elem(skel->maps.local_v6, &k6, sizeof(k6), &one,
				    sizeof(one), BPF_ANY);
}

/* One allow-list entry into the trie of its family: the key is the slot,
 * then the address, and the prefix length counts the slot's 32 bits. */
static int add_allow(struct reqrouter *skel, const struct allow *a)
{
	union {
		struct rr_allow_v4 v4;
		struct rr_allow_v6 v6;
	} k;
	int v4 = a->family == AF_INET;
	uint8_t one = 1;

	memset(&k, 0, sizeof(k));
	k.v4.prefixlen = 32 + a->len; /* the same layout in both */
	k.v4.slot = a->slot;
	memcpy(v4 ? k.v4.addr : k.v6.addr, a->addr, v4 ? 4 : 16);
	return bpf_map__update_elem(v4 ? skel->maps.acl_v4 : skel->maps.acl_v6,
				    &k, v4 ? sizeof(k.v4) : sizeof(k.v6), &one,
				    sizeof(one), BPF_ANY);
}

int configure(struct reqrouter *skel, const struct port_table *t)
{
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
		rr_xdp_mark_served(skel->data->served_ports, t->p[i].port,
				   t->p[i].conf.nsocks);
	}
	for (i = 0; i < nallows; i++) {
		ret = add_allow(skel, &allows[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < nlocals; i++) {
		ret = add_local(skel, &locals[i]);
		if (ret)
			return ret;
	}
	return 0;
}

void hexdump(const uint8_t *f, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		fprintf(stderr, "%02x%s", f[i], i % 32 == 31 ? "\n" : "");
	if (len % 32)
		fputc('\n', stderr);
}
