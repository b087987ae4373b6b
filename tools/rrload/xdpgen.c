// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP engine: offers requests from the kernel at 1+ Mpps, counts the
 * replies in XDP (see rrload_gen.bpf.c). A socket client tops out near
 * 270 kpps here, too slow to load the invoker; this engine needs nothing
 * from the server and works against any UDP server on the other end of
 * the interface.
 *
 * User space builds one request frame (addresses from the interface and
 * the neighbour table), runs the function on its payload to know the
 * reply, loads both programs with that in read-only data, attaches the
 * counter and calls the generator in chunks: as fast as it goes, or paced
 * to -r. There is no per-request latency here; that is the socket
 * engine's job.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "packet.h"
#include "registry.h"
#include "rrload.h"
#include "rrload_gen.h"
#include "rrload_gen.skel.h"

/* The requests' source port: one per run, so replies a slow server still
 * sends to an earlier run are not counted (as wrong) by this one. */
#define GEN_PORT_BASE 40000
#define GEN_PORT_SPAN 20000
static uint16_t gen_port;
#define GEN_FIRST_CHUNK 65536	 /* frames (or paced drops) in the first run */
#define GEN_RUN_NS 1000000000ull /* how long later runs should take */
#define GEN_STALL_NS \
	10000000000ull /* give up after this long sending nothing */

static struct {
	struct rrload_gen *skel;
	int ifindex;
	bool attached;
	/* Two bytes in, so the IP header after the 14-byte Ethernet header
	 * is 4-byte aligned for the header structs. */
	uint8_t buf[GEN_FRAME_MAX + 2] __attribute__((aligned(8)));
	uint8_t *frame;
	uint32_t flen;
} gen;

static int quiet_print(enum libbpf_print_level level, const char *fmt,
		       va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int parse_mac(const char *s, uint8_t mac[ETH_ALEN])
{
	unsigned int b[ETH_ALEN];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5]) != ETH_ALEN)
		return -EINVAL;
	for (i = 0; i < ETH_ALEN; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static int own_mac(const char *ifname, uint8_t mac[ETH_ALEN])
{
	char path[128], buf[64];
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fgets(buf, sizeof(buf), f))
		err = parse_mac(buf, mac);
	fclose(f);
	return err;
}

/* The server's MAC from the neighbour table (the test bed makes static
 * entries; elsewhere, ping the server once or pass --dst-mac). */
static int neigh_mac(const struct rl_config *cfg, const char *addr,
		     uint8_t mac[ETH_ALEN])
{
	char cmd[256], line[512], *p;
	FILE *f;
	int err = -ENOENT;

	snprintf(cmd, sizeof(cmd), "ip %s neigh show %s dev %s 2>/dev/null",
		 cfg->family == AF_INET6 ? "-6" : "-4", addr, cfg->ifname);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		p = strstr(line, "lladdr ");
		if (p)
			err = parse_mac(p + 7, mac);
	}
	pclose(f);
	return err;
}

static int own_addr(const struct rl_config *cfg, void *out)
{
	struct ifaddrs *ifa, *i;
	int err = -EADDRNOTAVAIL;
	struct in6_addr *a6;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i && err; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, cfg->ifname) ||
		    i->ifa_addr->sa_family != cfg->family)
			continue;
		if (cfg->family == AF_INET) {
			memcpy(out,
			       &((struct sockaddr_in *)i->ifa_addr)->sin_addr,
			       4);
			err = 0;
		} else {
			a6 = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
			if (IN6_IS_ADDR_LINKLOCAL(a6))
				continue;
			memcpy(out, a6, 16);
			err = 0;
		}
	}
	freeifaddrs(ifa);
	return err;
}

/*
 * The IPv4 header checksum (if any) and the UDP checksum of the frame @f
 * whose lengths are set, computed by src/packet.c as the server does;
 * a UDP checksum of 0 goes on the wire as 0xffff.
 */
static void frame_csums(uint8_t *f, int family)
{
	struct rr_pkt pkt = { .l3_off = ETH_HLEN, .family = family };
	struct udphdr *udp;
	uint16_t csum;

	if (family == AF_INET) {
		struct iphdr *ip4 = (struct iphdr *)(f + ETH_HLEN);

		ip4->check = 0;
		csum = rr_csum_fold(rr_csum_partial(ip4, sizeof(*ip4), 0));
		memcpy(&ip4->check, &csum, 2);
		pkt.l4_off = ETH_HLEN + sizeof(*ip4);
	} else {
		pkt.l4_off = ETH_HLEN + sizeof(struct ipv6hdr);
	}
	udp = (struct udphdr *)(f + pkt.l4_off);
	udp->check = 0;
	csum = rr_udp_csum(f, &pkt);
	udp->check = csum ? csum : 0xffff;
}

/* Builds the request frame; fills @req as the server's function sees it. */
static int build_frame(const struct rl_config *cfg, struct rr_request *req,
		       uint8_t *payload_out, uint32_t *plen_out,
		       uint32_t *hlen_out)
{
	uint8_t *f, *pl;
	struct ethhdr *eth;
	uint32_t hlen, plen = cfg->len_min, i, edge;
	char addr[INET6_ADDRSTRLEN];
	uint64_t rnd = 0x8badf00ddeadbeefull;
	struct udphdr *udp;
	struct ipv6hdr *ip6;
	struct iphdr *ip4;
	const void *dst;
	int err;

	gen_port = (uint16_t)(GEN_PORT_BASE + getpid() % GEN_PORT_SPAN);
	gen.frame = gen.buf + 2;
	f = gen.frame;
	eth = (struct ethhdr *)f;
	hlen = sizeof(*eth) + sizeof(*udp) +
	       (cfg->family == AF_INET ? sizeof(*ip4) : sizeof(*ip6));
	if (hlen + plen > GEN_FRAME_MAX) {
		fprintf(stderr,
			"rrload: the xdp engine sends at most %u payload bytes here\n",
			GEN_FRAME_MAX - hlen);
		return -EMSGSIZE;
	}
	memset(f, 0, GEN_FRAME_MAX);
	memset(req, 0, sizeof(*req));
	req->family = cfg->family;
	req->src_port = gen_port;
	req->dst_port = cfg->ports[0];
	dst = cfg->family == AF_INET
		      ? (const void *)&((struct sockaddr_in *)&cfg->addr)
				->sin_addr
		      : (const void *)&((struct sockaddr_in6 *)&cfg->addr)
				->sin6_addr;
	inet_ntop(cfg->family, dst, addr, sizeof(addr));

	err = own_mac(cfg->ifname, eth->h_source);
	if (err) {
		fprintf(stderr, "rrload: cannot read the MAC of %s\n",
			cfg->ifname);
		return err;
	}
	err = cfg->dst_mac ? parse_mac(cfg->dst_mac, eth->h_dest)
			   : neigh_mac(cfg, addr, eth->h_dest);
	if (err) {
		fprintf(stderr,
			cfg->dst_mac
				? "rrload: --dst-mac needs aa:bb:cc:dd:ee:ff\n"
				: "rrload: no neighbour entry for the server; give --dst-mac\n");
		return err;
	}

	udp = (struct udphdr *)(f + hlen - sizeof(*udp));
	if (cfg->family == AF_INET) {
		eth->h_proto = htons(ETH_P_IP);
		ip4 = (struct iphdr *)(eth + 1);
		err = own_addr(cfg, &ip4->saddr);
		memcpy(&ip4->daddr, dst, 4);
		ip4->version = 4;
		ip4->ihl = 5;
		ip4->ttl = 64;
		ip4->protocol = IPPROTO_UDP;
		ip4->frag_off = htons(0x4000); /* DF */
		ip4->tot_len =
			htons((uint16_t)(sizeof(*ip4) + sizeof(*udp) + plen));
		memcpy(&req->src.v4, &ip4->saddr, 4);
		memcpy(&req->dst.v4, &ip4->daddr, 4);
	} else {
		eth->h_proto = htons(ETH_P_IPV6);
		ip6 = (struct ipv6hdr *)(eth + 1);
		err = own_addr(cfg, &ip6->saddr);
		memcpy(&ip6->daddr, dst, 16);
		ip6->version = 6;
		ip6->hop_limit = 64;
		ip6->nexthdr = IPPROTO_UDP;
		ip6->payload_len = htons((uint16_t)(sizeof(*udp) + plen));
		memcpy(&req->src.v6, &ip6->saddr, 16);
		memcpy(&req->dst.v6, &ip6->daddr, 16);
	}
	if (err) {
		fprintf(stderr, "rrload: %s has no %s address\n", cfg->ifname,
			cfg->family == AF_INET ? "IPv4" : "IPv6");
		return err;
	}
	udp->source = htons(gen_port);
	udp->dest = htons(cfg->ports[0]);
	udp->len = htons((uint16_t)(sizeof(*udp) + plen));

	/* Random edges around a palindrome: reversing the payload in place
	 * leaves the middle, and so the checksum, as it was. */
	pl = f + hlen;
	edge = plen < GEN_EDGE ? plen : GEN_EDGE;
	for (i = 0; i < plen; i++) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		pl[i] = (uint8_t)rnd;
	}
	for (i = edge; i < plen / 2; i++)
		pl[plen - 1 - i] = pl[i];

	frame_csums(f, cfg->family);

	memcpy(payload_out, pl, plen);
	*plen_out = plen;
	*hlen_out = hlen;
	gen.flen = hlen + plen;
	return 0;
}

/*
 * --payloads: request frame i is the one build_frame() made, with payload
 * i behind its headers and i in the payload's first two bytes; the reply
 * expected for it is what @fn answers. The largest frame becomes the
 * test run's input, so the generator only ever shrinks frames.
 */
static struct gen_req *req_frames;
static struct gen_reply *req_replies;

static int indexed_requests(const struct rl_config *cfg,
			    const struct rr_function *fn,
			    struct rr_request *req, uint32_t hlen)
{
	uint32_t i, plen, room = GEN_FRAME_MAX - hlen, big = 0;
	uint8_t *f, *pl, *hdr = gen.frame;
	struct udphdr *udp;
	int r;

	if (cfg->npayloads > GEN_MAX_REQS) {
		fprintf(stderr,
			"rrload: the xdp engine takes at most %d payloads\n",
			GEN_MAX_REQS);
		return -E2BIG;
	}
	req_frames = calloc(cfg->npayloads, sizeof(*req_frames));
	req_replies = calloc(cfg->npayloads, sizeof(*req_replies));
	if (!req_frames || !req_replies) {
		fprintf(stderr, "rrload: out of memory\n");
		return -ENOMEM;
	}
	for (i = 0; i < cfg->npayloads; i++) {
		plen = cfg->payloads[i].len;
		if (plen < 2 || hlen + plen > GEN_REQ_FRAME_MAX) {
			fprintf(stderr,
				"rrload: payload %u: the xdp engine sends 2-%u bytes (the first two carry the request's number)\n",
				i + 1, GEN_REQ_FRAME_MAX - hlen);
			return -EMSGSIZE;
		}
		f = req_frames[i].frame;
		memcpy(f, hdr, hlen);
		pl = f + hlen;
		memcpy(pl, cfg->payloads[i].data, plen);
		pl[0] = (uint8_t)(i >> 8);
		pl[1] = (uint8_t)i;
		udp = (struct udphdr *)(f + hlen - sizeof(*udp));
		udp->len = htons((uint16_t)(sizeof(*udp) + plen));
		if (cfg->family == AF_INET)
			((struct iphdr *)(f + ETH_HLEN))->tot_len =
				htons((uint16_t)(sizeof(struct iphdr) +
						 sizeof(*udp) + plen));
		else
			((struct ipv6hdr *)(f + ETH_HLEN))->payload_len =
				htons((uint16_t)(sizeof(*udp) + plen));
		frame_csums(f, cfg->family);
		req_frames[i].len = hlen + plen;

		memcpy(req_replies[i].payload, pl, plen);
		r = fn->handler(req, req_replies[i].payload, plen,
				room < GEN_REPLY_MAX ? room : GEN_REPLY_MAX);
		if (r < 2) {
			fprintf(stderr,
				"rrload: %s gives payload %u no reply of at least 2 bytes (%d)\n",
				fn->name, i + 1, r);
			return -EINVAL;
		}
		req_replies[i].len = (uint32_t)r;
		if (req_frames[i].len > req_frames[big].len)
			big = i;
	}
	memcpy(gen.frame, req_frames[big].frame, req_frames[big].len);
	gen.flen = req_frames[big].len;
	return 0;
}

static int load_indexed(uint32_t n)
{
	uint32_t i;
	int err = 0;

	for (i = 0; !err && i < n; i++)
		err = bpf_map_update_elem(bpf_map__fd(gen.skel->maps.reqs), &i,
					  &req_frames[i], BPF_ANY) ||
		      bpf_map_update_elem(bpf_map__fd(gen.skel->maps.replies),
					  &i, &req_replies[i], BPF_ANY);
	return err ? -errno : 0;
}

int xdp_engine_init(struct rl_config *cfg, struct rl_thread *th)
{
	const struct rr_function *fn;
	struct rr_request req;
	uint8_t payload[GEN_FRAME_MAX * 2];
	uint32_t plen, hlen, edge, i;
	int r, err;

	(void)th;
	if (cfg->len_min != cfg->len_max && !cfg->npayloads) {
		fprintf(stderr,
			"rrload: the xdp engine sends one size: give -l SIZE\n");
		return -EINVAL;
	}
	if (cfg->nports > 1)
		fprintf(stderr, "rrload: the xdp engine uses port %u only\n",
			cfg->ports[0]);
	fn = cfg->fn_override ? cfg->fn_override
			      : rr_registry_by_port(cfg->ports[0]);
	if (!fn) {
		fprintf(stderr,
			"rrload: no function registered on port %u (use -f NAME)\n",
			cfg->ports[0]);
		return -ENOENT;
	}
	gen.ifindex = (int)if_nametoindex(cfg->ifname);
	if (!gen.ifindex) {
		fprintf(stderr, "rrload: no interface '%s'\n", cfg->ifname);
		return -ENODEV;
	}
	err = build_frame(cfg, &req, payload, &plen, &hlen);
	if (err)
		return err;
	rr_fn_request_bind(&req, rl_fn_instance(fn), 0, NULL);
	if (cfg->npayloads) {
		err = indexed_requests(cfg, fn, &req, hlen);
		if (err)
			return err;
		/* Head and tail below are unused: whole frames are sent. */
		plen = 2;
		r = 2;
	} else {
		r = fn->handler(&req, payload, plen, sizeof(payload));
	}
	if (r < 0) {
		fprintf(stderr, "rrload: %s refuses the request (%s)\n",
			fn->name, strerror(-r));
		return r;
	}
	if (hlen + (uint32_t)r > GEN_FRAME_MAX) {
		fprintf(stderr,
			"rrload: %s's reply (%d bytes) does not fit the xdp engine's frames (%u payload bytes at most)\n",
			fn->name, r, GEN_FRAME_MAX - hlen);
		return -EMSGSIZE;
	}
	edge = plen < GEN_EDGE ? plen : GEN_EDGE;
	if ((uint32_t)r < edge)
		edge = (uint32_t)r;
	if (!edge) {
		fprintf(stderr,
			"rrload: the xdp engine needs a payload and a reply\n");
		return -EINVAL;
	}

	libbpf_set_print(quiet_print);
	gen.skel = rrload_gen__open();
	if (!gen.skel) {
		err = errno ? -errno : -ENOMEM;
		fprintf(stderr, "rrload: cannot open the XDP engine: %s\n",
			strerror(-err));
		return err;
	}
	gen.skel->rodata->frame_len = gen.flen;
	gen.skel->rodata->hdr_len = hlen;
	gen.skel->rodata->edge_len = edge;
	gen.skel->rodata->reply_len = hlen + (uint32_t)r;
	gen.skel->rodata->srv_port = htons(cfg->ports[0]);
	gen.skel->rodata->cli_port = htons(gen_port);
	gen.skel->rodata->nreqs = cfg->npayloads;
	gen.skel->rodata->interval_ns =
		cfg->rate > 0 ? (uint64_t)(1e9 / cfg->rate) : 0;
	if (cfg->rate > 1e9)
		gen.skel->rodata->interval_ns = 1;
	for (i = 0; i < hlen + edge; i++)
		gen.skel->rodata->head[i] = gen.frame[i];
	for (i = 0; i < edge; i++) {
		gen.skel->rodata->tail[i] = gen.frame[gen.flen - edge + i];
		gen.skel->rodata->reply_head[i] = payload[i];
		gen.skel->rodata->reply_tail[i] = payload[r - edge + i];
	}
	err = rrload_gen__load(gen.skel);
	if (err) {
		fprintf(stderr, "rrload: cannot load the XDP engine: %s\n",
			strerror(-err));
		return err;
	}
	err = load_indexed(cfg->npayloads);
	if (err) {
		fprintf(stderr, "rrload: cannot fill the request table: %s\n",
			strerror(-err));
		return err;
	}
	err = bpf_xdp_attach(
		gen.ifindex, bpf_program__fd(gen.skel->progs.count),
		XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		fprintf(stderr,
			"rrload: cannot attach the reply counter to %s: %s%s\n",
			cfg->ifname, strerror(-err),
			err == -EBUSY || err == -EEXIST
				? " (it already has an XDP program)"
				: "");
		return err;
	}
	gen.attached = true;
	return 0;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull),
			       .tv_nsec = (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
		       EINTR &&
	       !rl_stop)
		;
}

/* Frames the generator has sent, from its counter. */
static uint64_t gen_sent(void)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	__u32 k = GEN_STAT_SENT;
	uint64_t *vals, sum = 0;

	if (ncpu <= 0)
		return 0;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(gen.skel->maps.gen_stats), &k,
				 vals))
		for (i = 0; i < ncpu; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

void *xdp_engine_run(void *arg)
{
	struct rl_thread *th = arg;
	const struct rl_config *cfg = th->cfg;
	struct xdp_md ctx = { .data_end = gen.flen,
			      .ingress_ifindex = (__u32)gen.ifindex };
	uint64_t start, end_send, sent = 0, t0, t1, left, last_progress;
	double per_frame = 0;
	int fd = bpf_program__fd(gen.skel->progs.gen), err;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = gen.frame,
		    .data_size_in = gen.flen, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx),
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64,
		    .repeat = GEN_FIRST_CHUNK);

	rl_pin(cfg, 0);
	if (th->budget != UINT64_MAX)
		gen.skel->data->budget = th->budget;
	start = rl_now_ns();
	th->t_start = start;
	last_progress = start;
	gen.skel->bss->next_ns = 0;
	end_send = cfg->duration > 0 ? start + (uint64_t)(cfg->duration * 1e9)
				     : UINT64_MAX;
	gen.skel->data->stop_ns = end_send;
	/*
	 * Starting a test run costs tens of milliseconds here (the frame
	 * pool is set up and torn down each time), so runs are sized to
	 * last ~GEN_RUN_NS each, from the time per frame seen so far, and
	 * cut short to end on time. The program paces to -r and stops at
	 * -n; a signal ends a run early.
	 */
	while (!rl_stop && sent < th->budget) {
		t0 = rl_now_ns();
		if (t0 >= end_send)
			break;
		if (per_frame > 0) {
			left = end_send - t0 < GEN_RUN_NS ? end_send - t0
							  : GEN_RUN_NS;
			opts.repeat = (__u32)((double)left / per_frame) + 1;
		}
		err = bpf_prog_test_run_opts(fd, &opts);
		if (err && errno != EINTR) {
			th->err = -errno;
			break;
		}
		t1 = rl_now_ns();
		per_frame = (double)(t1 - t0) / opts.repeat;
		if (gen_sent() > sent)
			last_progress = t1;
		sent = gen_sent();
		__atomic_store_n(&th->c.sent, sent, __ATOMIC_RELAXED);
		/* -n alone has no deadline: never spin on a generator that
		 * cannot send (every frame aborted). */
		if (t1 - last_progress > GEN_STALL_NS) {
			fprintf(stderr,
				"rrload: the generator sent nothing for %llu s\n",
				GEN_STALL_NS / 1000000000ull);
			th->err = -EIO;
			break;
		}
	}
	th->t_send_end = rl_now_ns();
	/* Let the last replies come in; nothing tracks them one by one. */
	if (!rl_stop)
		sleep_until(th->t_send_end + 100000000ull);
	__atomic_store_n(&th->done, true, __ATOMIC_RELEASE);
	return NULL;
}

void xdp_engine_poll(struct rl_config *cfg, struct rl_thread *th)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint64_t sum[GEN_STAT_MAX] = { 0 }, *vals, done_sent;
	__u32 k;

	(void)cfg;
	if (!gen.skel || ncpu <= 0)
		return;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return;
	for (k = 0; k < GEN_STAT_MAX; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(gen.skel->maps.gen_stats),
					&k, vals))
			continue;
		for (i = 0; i < ncpu; i++)
			sum[k] += vals[i];
	}
	free(vals);
	__atomic_store_n(&th->c.answered, sum[GEN_STAT_ANSWERED],
			 __ATOMIC_RELAXED);
	__atomic_store_n(&th->c.wrong, sum[GEN_STAT_WRONG], __ATOMIC_RELAXED);
	/* Once sending is over, what never came back counts as timed out
	 * (after the 100 ms grace), or as in flight when interrupted. */
	if (__atomic_load_n(&th->done, __ATOMIC_ACQUIRE)) {
		done_sent = th->c.sent;
		done_sent = done_sent > sum[0] + sum[1]
				    ? done_sent - sum[0] - sum[1]
				    : 0;
		if (rl_stop)
			th->c.in_flight = done_sent;
		else
			th->c.timeouts = done_sent;
	}
}

void xdp_engine_fini(struct rl_config *cfg, struct rl_thread *th)
{
	(void)cfg;
	(void)th;
	if (gen.attached)
		bpf_xdp_detach(gen.ifindex, XDP_FLAGS_DRV_MODE, NULL);
	gen.attached = false;
	rrload_gen__destroy(gen.skel);
	gen.skel = NULL;
	free(req_frames);
	free(req_replies);
	req_frames = NULL;
	req_replies = NULL;
}
