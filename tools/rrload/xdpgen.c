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
 * engine's job. With --spoof, a table of source addresses (spoof.c) goes
 * with them, and the replies to those addresses are counted apart.
 */
#include <errno.h>
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

#include "clock.h"
#include "log.h"
#include "packet.h"
#include "percpu.h"
#include "registry.h"
#include "rrload.h"
#include "rrload_gen.h"
#include "rrload_gen.skel.h"
#include "xdpgen.h"

/* How long a server takes to notice the counter on its veth peer. */
#define RL_PEER_SETTLE_US 300000

#define GEN_FIRST_CHUNK 65536	 /* frames (or paced drops) in the first run */
#define GEN_RUN_NS 1000000000ull /* how long later runs should take */
#define GEN_STALL_NS \
	10000000000ull /* give up after this long sending nothing */

static struct {
	struct rrload_gen *skel;
	int ifindex;
	bool attached;
	struct gen_frames f;
} gen;

static int quiet_print(enum libbpf_print_level level, const char *fmt,
		       va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int load_indexed(uint32_t n)
{
	uint32_t i;
	int err = 0;

	for (i = 0; !err && i < n; i++)
		err = bpf_map_update_elem(bpf_map__fd(gen.skel->maps.reqs), &i,
					  &gen.f.reqs[i], BPF_ANY) ||
		      bpf_map_update_elem(bpf_map__fd(gen.skel->maps.replies),
					  &i, &gen.f.replies[i], BPF_ANY);
	return err ? -errno : 0;
}

/* --spoof: the source addresses and their checksum sums, against the
 * frame's own source address. */
static int load_spoofed(const struct rl_spoof *sp)
{
	size_t alen = sp->family == AF_INET ? 4 : 16;
	const uint8_t *own =
		gen.f.frame + ETH_HLEN + (sp->family == AF_INET ? 12 : 8);
	struct gen_spoof *vals;
	uint32_t *keys, i, n = sp->n;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int err;

	keys = calloc(n, sizeof(*keys));
	vals = calloc(n, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		keys[i] = i;
		rl_spoof_addr(sp, i, vals[i].addr);
		vals[i].csum_delta = rl_spoof_delta(own, vals[i].addr, alen);
	}
	err = bpf_map_update_batch(bpf_map__fd(gen.skel->maps.spoof_srcs), keys,
				   vals, &n, &opts);
	err = err ? -errno : 0;
	free(keys);
	free(vals);
	return err;
}

/* The function whose replies are checked, and the interface; 0, or
 * -errno after saying why. */
static int engine_check(const struct rl_config *cfg,
			const struct rr_function **fn)
{
	if (cfg->len_min != cfg->len_max && !cfg->npayloads) {
		pr_warn("the xdp engine sends one size: give -l SIZE\n");
		return -EINVAL;
	}
	if (cfg->nports > 1)
		pr_warn("the xdp engine uses port %u only\n", cfg->ports[0]);
	*fn = cfg->fn_override ? cfg->fn_override
			       : rr_registry_by_port(cfg->ports[0]);
	if (!*fn) {
		pr_warn("no function registered on port %u (use -f NAME)\n",
			cfg->ports[0]);
		return -ENOENT;
	}
	gen.ifindex = (int)if_nametoindex(cfg->ifname);
	if (!gen.ifindex) {
		pr_warn("no interface '%s'\n", cfg->ifname);
		return -ENODEV;
	}
	return 0;
}

/*
 * Loads the generator and the counter with the frame's first @hlen +
 * @edge and last @edge bytes and the expected reply's (@payload, @r
 * bytes) in read-only data, fills the --payloads tables and attaches the
 * counter to the interface.
 */
static int engine_load(const struct rl_config *cfg, uint32_t hlen,
		       uint32_t edge, const uint8_t *payload, int r)
{
	uint32_t i;
	int err;

	libbpf_set_print(quiet_print);
	gen.skel = rrload_gen__open();
	if (!gen.skel) {
		err = errno ? -errno : -ENOMEM;
		pr_warn("cannot open the XDP engine: %s\n", strerror(-err));
		return err;
	}
	gen.skel->rodata->frame_len = gen.f.flen;
	gen.skel->rodata->hdr_len = hlen;
	gen.skel->rodata->edge_len = edge;
	gen.skel->rodata->reply_len = hlen + (uint32_t)r;
	gen.skel->rodata->srv_port = htons(cfg->ports[0]);
	gen.skel->rodata->cli_port = htons(gen.f.port);
	gen.skel->rodata->nreqs = cfg->npayloads;
	gen.skel->rodata->interval_ns =
		cfg->rate > 0 ? (uint64_t)(1e9 / cfg->rate) : 0;
	if (cfg->rate > 1e9)
		gen.skel->rodata->interval_ns = 1;
	for (i = 0; i < hlen + edge; i++)
		gen.skel->rodata->head[i] = gen.f.frame[i];
	for (i = 0; i < edge; i++) {
		gen.skel->rodata->tail[i] = gen.f.frame[gen.f.flen - edge + i];
		gen.skel->rodata->reply_head[i] = payload[i];
		gen.skel->rodata->reply_tail[i] = payload[r - edge + i];
	}
	gen.skel->rodata->nspoof = cfg->spoof.n;
	memcpy((void *)gen.skel->rodata->own_addr,
	       gen.f.frame + ETH_HLEN + (cfg->family == AF_INET ? 12 : 8),
	       cfg->family == AF_INET ? 4 : 16);
	err = bpf_map__set_max_entries(gen.skel->maps.spoof_srcs,
				       cfg->spoof.n ? cfg->spoof.n : 1);
	if (err) {
		pr_warn("cannot size the source table: %s\n", strerror(-err));
		return err;
	}
	err = rrload_gen__load(gen.skel);
	if (err) {
		pr_warn("cannot load the XDP engine: %s\n", strerror(-err));
		return err;
	}
	err = load_indexed(cfg->npayloads);
	if (err) {
		pr_warn("cannot fill the request table: %s\n", strerror(-err));
		return err;
	}
	err = cfg->spoof.n ? load_spoofed(&cfg->spoof) : 0;
	if (err) {
		pr_warn("cannot fill the source table: %s\n", strerror(-err));
		return err;
	}
	err = bpf_xdp_attach(
		gen.ifindex, bpf_program__fd(gen.skel->progs.count),
		XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		pr_warn("cannot attach the reply counter to %s: %s%s\n",
			cfg->ifname, strerror(-err),
			err == -EBUSY || err == -EEXIST
				? " (it already has an XDP program)"
				: "");
		return err;
	}
	gen.attached = true;
	/*
	 * A server on the other end of a veth may answer from XDP only
	 * while this end runs a program (reqrouter looks every 100 ms): let
	 * it see the counter before the first request, or the first part of
	 * the run would measure its other tier.
	 */
	usleep(RL_PEER_SETTLE_US);
	return 0;
}

int xdp_engine_init(struct rl_config *cfg, struct rl_thread *th)
{
	const struct rr_function *fn;
	struct rr_request req;
	uint8_t payload[GEN_FRAME_MAX * 2];
	uint32_t plen, hlen, edge;
	int r, err;

	(void)th;
	err = engine_check(cfg, &fn);
	if (err)
		return err;
	err = gen_build_frame(cfg, &gen.f, &req, payload, &plen, &hlen);
	if (err)
		return err;
	rr_fn_request_bind(&req, rl_fn_instance(cfg, fn), 0, NULL);
	if (cfg->npayloads) {
		err = gen_indexed_requests(cfg, &gen.f, fn, &req, hlen);
		if (err)
			return err;
		/* Head and tail below are unused: whole frames are sent. */
		plen = 2;
		r = 2;
	} else {
		r = fn->handler(&req, payload, plen, sizeof(payload));
	}
	if (r < 0) {
		pr_warn("%s refuses the request (%s)\n", fn->name,
			strerror(-r));
		return r;
	}
	if (hlen + (uint32_t)r > GEN_FRAME_MAX) {
		pr_warn("%s's reply (%d bytes) does not fit the xdp engine's frames (%u payload bytes at most)\n",
			fn->name, r, GEN_FRAME_MAX - hlen);
		return -EMSGSIZE;
	}
	/* A frame comes back to the engine's pool with the length the
	 * server's reply left in it, and a live test run puts that length
	 * back only if the program moved the frame's bounds, which this one
	 * does not (kernel/bpf/test_run.c): a reply of another length would
	 * send the next request cut or padded. */
	if (cfg->payload && (uint32_t)r != plen) {
		pr_warn("%s answers '%s' with %d bytes: --payload needs a request whose reply is as long (%u bytes)\n",
			fn->name, cfg->payload, r, plen);
		return -EINVAL;
	}
	edge = plen < GEN_EDGE ? plen : GEN_EDGE;
	if ((uint32_t)r < edge)
		edge = (uint32_t)r;
	if (!edge) {
		pr_warn("the xdp engine needs a payload and a reply\n");
		return -EINVAL;
	}

	return engine_load(cfg, hlen, edge, payload, r);
}

static void sleep_until(const struct rl_thread *th, uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull),
			       .tv_nsec = (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
		       EINTR &&
	       !*th->stop)
		;
}

/* Frames the generator has sent, from its counter. */
static uint64_t gen_sent(void)
{
	uint64_t sum;

	if (rr_percpu_sum(bpf_map__fd(gen.skel->maps.gen_stats), GEN_STAT_SENT,
			  1, &sum))
		return 0;
	return sum;
}

void *xdp_engine_run(void *arg)
{
	struct rl_thread *th = arg;
	const struct rl_config *cfg = th->cfg;
	struct xdp_md ctx = { .data_end = gen.f.flen,
			      .ingress_ifindex = (__u32)gen.ifindex };
	uint64_t start, end_send, sent = 0, t0, t1, left, last_progress;
	double per_frame = 0;
	int fd = bpf_program__fd(gen.skel->progs.gen), err;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = gen.f.frame,
		    .data_size_in = gen.f.flen, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx),
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64,
		    .repeat = GEN_FIRST_CHUNK);

	rl_pin(cfg, 0);
	if (th->budget != UINT64_MAX)
		gen.skel->data->budget = th->budget;
	start = rr_now_ns();
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
	while (!*th->stop && sent < th->budget) {
		t0 = rr_now_ns();
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
		t1 = rr_now_ns();
		per_frame = (double)(t1 - t0) / opts.repeat;
		if (gen_sent() > sent)
			last_progress = t1;
		sent = gen_sent();
		__atomic_store_n(&th->c.sent, sent, __ATOMIC_RELAXED);
		/* -n alone has no deadline: never spin on a generator that
		 * cannot send (every frame aborted). */
		if (t1 - last_progress > GEN_STALL_NS) {
			pr_warn("the generator sent nothing for %llu s\n",
				GEN_STALL_NS / 1000000000ull);
			th->err = -EIO;
			break;
		}
	}
	th->t_send_end = rr_now_ns();
	/* Let the last replies come in; nothing tracks them one by one. */
	if (!*th->stop)
		sleep_until(th, th->t_send_end + 100000000ull);
	__atomic_store_n(&th->done, true, __ATOMIC_RELEASE);
	return NULL;
}

void xdp_engine_poll(struct rl_config *cfg, struct rl_thread *th)
{
	uint64_t sum[GEN_STAT_MAX] = { 0 }, done_sent, replies;

	(void)cfg;
	if (!gen.skel || rr_percpu_sum(bpf_map__fd(gen.skel->maps.gen_stats), 0,
				       GEN_STAT_MAX, sum))
		return;
	__atomic_store_n(&th->c.answered, sum[GEN_STAT_ANSWERED],
			 __ATOMIC_RELAXED);
	__atomic_store_n(&th->c.wrong, sum[GEN_STAT_WRONG], __ATOMIC_RELAXED);
	__atomic_store_n(&th->c.flood_answered, sum[GEN_STAT_FLOOD_ANSWERED],
			 __ATOMIC_RELAXED);
	__atomic_store_n(&th->c.flood_slipped, sum[GEN_STAT_FLOOD_SLIPPED],
			 __ATOMIC_RELAXED);
	/* Once sending is over, what never came back counts as timed out
	 * (after the 100 ms grace), or as in flight when interrupted; with
	 * --spoof, the flood's requests dropped on the way. */
	if (__atomic_load_n(&th->done, __ATOMIC_ACQUIRE)) {
		replies = sum[GEN_STAT_ANSWERED] + sum[GEN_STAT_WRONG] +
			  sum[GEN_STAT_FLOOD_ANSWERED] +
			  sum[GEN_STAT_FLOOD_SLIPPED];
		done_sent = th->c.sent;
		done_sent = done_sent > replies ? done_sent - replies : 0;
		if (*th->stop)
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
	free(gen.f.reqs);
	free(gen.f.replies);
	gen.f.reqs = NULL;
	gen.f.replies = NULL;
}
