// SPDX-License-Identifier: GPL-2.0
/*
 * The heavy-hitter sketch on known traffic: requests run through the XDP
 * program (kern/lib/hh.h, hh_count) with bpf_prog_test_run_opts(),
 * and are read back as reqrouter reads them (src/daemon/features/hh.c), against
 * exact counts kept here.
 * - Small cases: a port without heavy hitters samples nothing; 1 in 1
 *   samples every request, and the sketch gives three sources' counts
 *   and their /24s' exactly; a request the program refuses (a low source
 *   port) is not counted; two IPv6 sources of one /64 add up in it;
 *   1 in 100 samples 1 % of the requests.
 * - Accuracy: a Zipf trace (s = 1) over 100 000 sources (three in four
 *   IPv4, in 4096 /24s; the rest IPv6, in 4096 /64s), 96 M requests in
 *   bursts of 1 to 32, sampled 1 in 100 as by default: every source and
 *   every prefix that carries at least 1 % of the requests must be in
 *   the top RR_HH_TOPK (recall at least 0.95), its count within 5 %.
 * `hh_sketch cost` instead measures the program's time per 64-byte
 * request with the sketch off, on at 1 in 100 and on at 1 in 1.
 * Needs root; exits 77 (skip) otherwise.
 */
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>

#include "frames.h"
#include "reqrouter.skel.h"
#include "shared/hh.h"
#include "shared/port.h"
#include "testutil.h"
#include "hh.h"
#include "xdp.h"
#include "xdptest.h"

#define SKIP 77
#define PORT 5300
#define SLOT 2
#define SPORT 40000
#define NSOURCES 100000
#define NPREFIXES 4096
#define TRACE_REQUESTS 96000000ULL
#define MAX_BURST 32
#define HEAVY 0.01   /* a heavy hitter's share, at least */
#define MAX_ERR 0.05 /* its count's error, at most */
#define MIN_RECALL 0.95

static struct rr_xdp x;
static int prog_fd;
static struct rr_hh_sketch *sk;

/* A frame of each family, whose source address a test rewrites. */
struct tmpl {
	uint8_t buf[128];
	uint32_t len;
	uint32_t saddr_off;
};
static struct tmpl t4, t6;

static int make_templates(void)
{
	static const uint8_t payload[18] = "who is calling?";
	struct frame_spec s = { .family = AF_INET,
				.sport = SPORT,
				.dport = PORT,
				.payload = payload,
				.plen = sizeof(payload) };
	struct frame_layout lay;

	t4.len = build_frame(t4.buf, sizeof(t4.buf), &s, &lay);
	t4.saddr_off = lay.l3_off + 12;
	s.family = AF_INET6;
	t6.len = build_frame(t6.buf, sizeof(t6.buf), &s, &lay);
	t6.saddr_off = lay.l3_off + 8;
	return t4.len && t6.len ? 0 : -EINVAL;
}

/* Runs @n requests from @c (source port @sport) through the program;
 * its verdict, or -errno. */
static int send_from(const struct rr_hh_cand *c, uint16_t sport, uint32_t n,
		     uint32_t *ns)
{
	struct tmpl *t = c->family == AF_INET ? &t4 : &t6;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = t->buf,
		    .data_size_in = t->len, .repeat = n);

	memcpy(t->buf + t->saddr_off, c->addr, c->family == AF_INET ? 4 : 16);
	f_put16(t->buf + t->saddr_off + (c->family == AF_INET ? 8 : 32), sport);
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	if (ns)
		*ns = opts.duration;
	return (int)opts.retval;
}

/* Port PORT as function SLOT, sampling one in @sample (0: off). */
static int set_port(uint32_t sample, uint32_t min_src_port)
{
	struct rr_port_conf conf = { .slot = SLOT,
				     .nsocks = 1,
				     .min_src_port = min_src_port };

	if (sample) {
		conf.flags |= RR_PORT_HH;
		conf.hh_scale = rr_hh_scale(sample);
	}
	if (rr_xdp_set_port(&x, PORT, &conf))
		return -EIO;
	return rr_xdp_hh_reset_cpu(&x, SLOT);
}

static struct rr_hh_cand v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	struct rr_hh_cand k = { .family = AF_INET, .addr = { a, b, c, d } };

	return k;
}

static bool key_eq(const struct rr_hh_key *a, const struct rr_hh_key *b)
{
	return a->family == b->family && !memcmp(a->addr, b->addr, 16);
}

/* The estimate of @c's @kind, after an interval without decay. */
static double est(const struct rr_hh_fn *f, const struct rr_hh_cand *c,
		  enum rr_hh_kind kind)
{
	struct rr_hh_key k;

	rr_hh_key_of(c, kind, &k);
	return rr_hh_estimate(f, kind, &k, x.hh_seed);
}

static void check_near(const char *what, double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		t_fail("%s: %.1f, not %.1f (+-%.1f)", what, got, want, tol);
}

/* Requests of a port without RR_PORT_HH, and refused ones, are not
 * counted; with 1 in 1, every other one is, exactly. */
static void small_cases(void)
{
	struct rr_hh_cand a = v4(192, 0, 2, 10), b = v4(192, 0, 2, 11),
			  c = v4(198, 51, 100, 7);
	struct rr_hh_cand s6a = { .family = AF_INET6,
				  .addr = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1,
					    0, 0, 0, 0, 0, 0, 0, 0xa } },
			  s6b = s6a;
	struct rr_hh_entry top[RR_HH_TOPK];
	struct rr_hh_fn *f;
	uint64_t before;
	size_t n;

	s6b.addr[15] = 0xb;
	f = rr_hh_fn_new(&x.hh[SLOT]);
	if (!f) {
		t_fail("out of memory");
		return;
	}
	t_at("heavy hitters off");
	before = sk->samples;
	set_port(0, 0);
	if (send_from(&a, SPORT, 1000, NULL) != XDP_PASS)
		t_fail("the request was not passed (no socket)");
	if (sk->samples != before)
		t_fail("%lu sampled", (unsigned long)(sk->samples - before));

	t_at("1 in 1, a refused request");
	set_port(1, 1024);
	send_from(&a, 53, 100, NULL);
	if (sk->samples != before)
		t_fail("%lu of 100 requests from port 53 sampled",
		       (unsigned long)(sk->samples - before));

	t_at("1 in 1: three IPv4 sources, two IPv6 of one /64");
	/* The ring holds the last RR_HH_CANDS: read after each source. */
	send_from(&a, SPORT, 250, NULL);
	rr_hh_collect(f, sk, x.hh_seed);
	send_from(&b, SPORT, 200, NULL);
	rr_hh_collect(f, sk, x.hh_seed);
	send_from(&c, SPORT, 100, NULL);
	send_from(&s6a, SPORT, 70, NULL);
	send_from(&s6b, SPORT, 30, NULL);
	rr_hh_collect(f, sk, x.hh_seed);
	if (sk->samples - before != 650)
		t_fail("%lu of 650 sampled",
		       (unsigned long)(sk->samples - before));
	if (f->lost)
		t_fail("%lu sampled sources unread", (unsigned long)f->lost);
	rr_hh_interval(f, sk, 1, 1, 0);
	check_near("192.0.2.10", est(f, &a, RR_HH_SOURCE), 250, 0.5);
	check_near("192.0.2.11", est(f, &b, RR_HH_SOURCE), 200, 0.5);
	check_near("198.51.100.7", est(f, &c, RR_HH_SOURCE), 100, 0.5);
	check_near("192.0.2.0/24", est(f, &a, RR_HH_PREFIX), 450, 0.5);
	check_near("198.51.100.0/24", est(f, &c, RR_HH_PREFIX), 100, 0.5);
	check_near("2001:db8:0:1::a", est(f, &s6a, RR_HH_SOURCE), 70, 0.5);
	check_near("2001:db8:0:1::/64", est(f, &s6b, RR_HH_PREFIX), 100, 0.5);
	n = rr_hh_top(f, RR_HH_SOURCE, top, RR_HH_TOPK);
	if (n < 1 || top[0].key.family != AF_INET ||
	    memcmp(top[0].key.addr, a.addr, 4))
		t_fail("192.0.2.10 is not the top source (%zu found)", n);
	n = rr_hh_top(f, RR_HH_PREFIX, top, RR_HH_TOPK);
	if (n < 1 || memcmp(top[0].key.addr, (uint8_t[]){ 192, 0, 2, 0 }, 4))
		t_fail("192.0.2.0/24 is not the top prefix (%zu found)", n);

	t_at("1 in 100");
	set_port(100, 0);
	rr_hh_fn_reset(f, sk);
	before = sk->samples;
	send_from(&c, SPORT, 200000, NULL);
	/* 2000 expected, sigma 44.5. */
	check_near("samples of 200000 requests", (double)(sk->samples - before),
		   2000, 200);
	rr_hh_interval(f, sk, 100, 1, 0);
	check_near("198.51.100.7's estimate", est(f, &c, RR_HH_SOURCE), 200000,
		   20000);
	free(f);
}

/* Source @r of the trace, heaviest first: in /24 (or /64) number
 * (r * odd) mod 4096, host r / 4096 + 1, so every source is its own. */
static struct rr_hh_cand source(uint32_t r)
{
	uint32_t p = (r * 2654435761u) & (NPREFIXES - 1), h = r / NPREFIXES + 1;
	struct rr_hh_cand c = { 0 };

	if (r % 4 == 3) {
		c.family = AF_INET6;
		c.addr[0] = 0xfd;
		c.addr[6] = (uint8_t)(p >> 8);
		c.addr[7] = (uint8_t)p;
		c.addr[15] = (uint8_t)h;
	} else {
		c = v4(10, (uint8_t)(p >> 8), (uint8_t)p, (uint8_t)h);
	}
	return c;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* A rank drawn from Zipf(1) over the cumulative weights @cdf. */
static uint32_t zipf(const double *cdf)
{
	double u =
		(double)(rng() >> 11) / 9007199254740992.0 * cdf[NSOURCES - 1];
	uint32_t lo = 0, hi = NSOURCES - 1, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How the top of @kind found the keys with at least HEAVY of @total:
 * checked against the exact @count of each key (@nkeys, @key_of). */
static void judge(const struct rr_hh_fn *f, enum rr_hh_kind kind,
		  const uint64_t *count, uint32_t nkeys,
		  struct rr_hh_cand (*key_of)(uint32_t), uint64_t total)
{
	struct rr_hh_entry top[RR_HH_TOPK];
	size_t n = rr_hh_top(f, kind, top, RR_HH_TOPK), i;
	uint32_t k, heavy = 0, found = 0, close = 0;
	char name[64];
	double e, worst = 0;
	struct rr_hh_key key;
	struct rr_hh_cand c;

	printf("%s: %zu in the top; error bound %.0f requests\n",
	       kind == RR_HH_SOURCE ? "sources" : "prefixes", n,
	       rr_hh_bound(f, kind));
	for (k = 0; k < nkeys; k++) {
		if (count[k] < HEAVY * (double)total)
			continue;
		heavy++;
		c = key_of(k);
		rr_hh_key_of(&c, kind, &key);
		rr_hh_key_str(&key, kind, name, sizeof(name));
		for (i = 0; i < n && !key_eq(&top[i].key, &key); i++)
			;
		e = i < n ? top[i].count / (double)count[k] - 1 : NAN;
		printf("  %-28s %5.2f %%  %s", name,
		       100.0 * (double)count[k] / (double)total,
		       i < n ? "found" : "MISSED");
		if (i < n) {
			printf(", rank %zu, error %+.2f %%", i + 1, 100 * e);
			found++;
			close += fabs(e) <= MAX_ERR;
			/* What top says it may be off by, it is not. */
			if (fabs(top[i].count - (double)count[k]) >
			    rr_hh_error(f, kind, top[i].count))
				t_fail("%s: off by more than the %.0f requests stated",
				       name,
				       rr_hh_error(f, kind, top[i].count));
			if (fabs(e) > worst)
				worst = fabs(e);
		}
		putchar('\n');
	}
	printf("  recall %u/%u, within %.0f %%: %u, worst error %.2f %%\n",
	       found, heavy, 100 * MAX_ERR, close, 100 * worst);
	if (!heavy)
		t_fail("the trace has no heavy hitter");
	else if ((double)found / heavy < MIN_RECALL)
		t_fail("recall %u/%u", found, heavy);
	if (close < found)
		t_fail("%u estimates off by more than %.0f %%", found - close,
		       100 * MAX_ERR);
}

static struct rr_hh_cand prefix_rep(uint32_t p)
{
	/* Prefix p's first source: IPv4 ranks are those not 3 mod 4. */
	uint32_t r;

	for (r = 0; r < NPREFIXES * 4; r++)
		if (((r * 2654435761u) & (NPREFIXES - 1)) == p % NPREFIXES &&
		    (r % 4 == 3) == (p >= NPREFIXES))
			return source(r);
	return source(0);
}

static void accuracy(void)
{
	uint64_t *count = calloc(NSOURCES, sizeof(*count));
	uint64_t *pcount = calloc(2 * NPREFIXES, sizeof(*pcount));
	double *cdf = malloc(NSOURCES * sizeof(*cdf)), sum = 0, secs;
	uint64_t total = 0, calls = 0, before, start, drawn;
	struct rr_hh_fn *f = rr_hh_fn_new(&x.hh[SLOT]);
	struct rr_hh_cand c;
	uint32_t r, b, p;

	t_at("Zipf trace");
	if (!count || !pcount || !cdf || !f) {
		t_fail("out of memory");
		goto out;
	}
	for (r = 0; r < NSOURCES; r++)
		cdf[r] = sum += 1.0 / (r + 1);
	set_port(RR_DEFAULT_HH_SAMPLE, 0);
	before = drawn = sk->samples;
	start = (uint64_t)time(NULL);
	while (total < TRACE_REQUESTS) {
		r = zipf(cdf);
		b = 1 + (uint32_t)(rng() % MAX_BURST);
		c = source(r);
		if (send_from(&c, SPORT, b, NULL) != XDP_PASS) {
			t_fail("a request was not passed");
			goto out;
		}
		count[r] += b;
		p = (r * 2654435761u) & (NPREFIXES - 1);
		pcount[p + (r % 4 == 3 ? NPREFIXES : 0)] += b;
		total += b;
		/* reqrouter reads the ring every 50 ms: far more often, in
		 * requests, than this; and draws the pool again every
		 * second, before it is used up. */
		if (!(++calls % 64))
			rr_hh_collect(f, sk, x.hh_seed);
		/* And ends an interval every second (1 M requests here): a
		 * source's weight, which decides whether it is followed,
		 * is known from then on. Without decay the counts add up. */
		if (!(calls % 65536))
			rr_hh_interval(f, sk, RR_DEFAULT_HH_SAMPLE, 1, 0);
		if (sk->samples - drawn > RR_HH_POOL / 2) {
			drawn = sk->samples;
			rr_hh_fill_pool(x.hh_pool);
		}
	}
	rr_hh_collect(f, sk, x.hh_seed);
	secs = (double)((uint64_t)time(NULL) - start);
	rr_hh_interval(f, sk, RR_DEFAULT_HH_SAMPLE, 1, 0);
	printf("%lu requests from %u sources in %lu runs (%.0f s): %lu sampled (%.3f %%), %lu unread\n",
	       (unsigned long)total, NSOURCES, (unsigned long)calls, secs,
	       (unsigned long)(sk->samples - before),
	       100.0 * (double)(sk->samples - before) / (double)total,
	       (unsigned long)f->lost);
	check_near("sampled share, %",
		   100.0 * (double)(sk->samples - before) / (double)total,
		   100.0 / RR_DEFAULT_HH_SAMPLE, 0.02);
	judge(f, RR_HH_SOURCE, count, NSOURCES, source, total);
	judge(f, RR_HH_PREFIX, pcount, 2 * NPREFIXES, prefix_rep, total);
	printf("memory per function: %zu bytes in the kernel, %zu per CPU, %zu in reqrouter\n",
	       sizeof(struct rr_hh_sketch), sizeof(struct rr_hh_cpu),
	       sizeof(struct rr_hh_fn));
out:
	free(f);
	free(cdf);
	free(pcount);
	free(count);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The program's time per request, off, at 1 in 100 and 1 in 1: rounds
 * interleaved, the median of each. */
static int cost(void)
{
	static const uint32_t samples[] = { 0, RR_DEFAULT_HH_SAMPLE, 1 };
	enum { ROUNDS = 15, REPEAT = 1000000 };
	uint32_t ns[3][ROUNDS], i, k;
	struct rr_hh_cand c = v4(192, 0, 2, 10);

	for (i = 0; i < ROUNDS; i++)
		for (k = 0; k < 3; k++) {
			set_port(samples[k], 0);
			if (send_from(&c, SPORT, REPEAT, &ns[k][i]) < 0)
				return 1;
		}
	/* The fastest run is the one nothing else got in the way of: on a
	 * busy machine it stays put where the median wanders. */
	for (k = 0; k < 3; k++) {
		qsort(ns[k], ROUNDS, sizeof(ns[k][0]), cmp_u32);
		printf("heavy hitters %-9s %3u ns per 64-byte request at the fastest of %d runs of %d (%+d ns; median %u, slowest %u)\n",
		       !samples[k]	 ? "off:"
		       : samples[k] == 1 ? "1 in 1:"
					 : "1 in 100:",
		       ns[k][0], ROUNDS, REPEAT, (int)ns[k][0] - (int)ns[0][0],
		       ns[k][ROUNDS / 2], ns[k][ROUNDS - 1]);
	}
	return 0;
}

/*
 * A run with repeat > 1 installs the program in the kernel's XDP
 * dispatcher and takes it out again, tens of ms each, unless it is there
 * already: attached to a device in driver mode. So it is attached to a
 * veth of a private network namespace, where no packet comes.
 */
static int dispatch_once(char *why, size_t len)
{
	int ifindex, ret;

	if (unshare(CLONE_NEWNET)) {
		snprintf(why, len, "unshare(CLONE_NEWNET): %s",
			 strerror(errno));
		return -errno;
	}
	ret = system("ip link add rrhh0 type veth peer name rrhh1");
	ifindex = (int)if_nametoindex("rrhh0");
	if (ret || !ifindex) {
		snprintf(why, len, "cannot make a veth pair");
		return -ENODEV;
	}
	ret = bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE, NULL);
	if (ret)
		snprintf(why, len, "cannot attach in driver mode: %s",
			 strerror(-ret));
	return ret;
}

int main(int argc, char **argv)
{
	char why[160];
	static const uint8_t no_mac[6];
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = t_xdp_load(&x, no_mac, 1500);
	if (ret)
		return ret;
	ret = rr_xdp_map_hh(&x);
	if (!ret)
		ret = rr_hh_fill_pool(x.hh_pool);
	if (!ret)
		ret = make_templates();
	if (ret) {
		fprintf(stderr, "cannot set the test up: %s\n", strerror(-ret));
		rr_xdp_destroy(&x);
		return 1;
	}
	prog_fd = bpf_program__fd(x.skel->progs.reqrouter_xdp);
	sk = &x.hh[SLOT];
	ret = dispatch_once(why, sizeof(why));
	if (ret) {
		/* Every run of a burst would take tens of ms. */
		printf("SKIP: %s\n", why);
		rr_xdp_destroy(&x);
		return SKIP;
	}
	if (argc > 1 && !strcmp(argv[1], "cost")) {
		ret = cost();
		rr_xdp_destroy(&x);
		return ret;
	}
	small_cases();
	accuracy();
	rr_xdp_destroy(&x);
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("the heavy-hitter sketch found what it must\n");
	return 0;
}
