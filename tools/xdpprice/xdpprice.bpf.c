// SPDX-License-Identifier: GPL-2.0
/*
 * xdpprice's harness: BPF_PROG_TEST_RUN with repeat runs a program again
 * and again on the same buffer, so a program that answers (XDP_TX) would
 * see its own reply from the second run on, and the reply is no request
 * (its source port is a served port: a loop, dropped). Before each run
 * the harness puts the request's first bytes back (the payload is a
 * palindrome, which reverse leaves as it was) and takes any metadata a
 * redirect stamped in front of the frame off again, then tail-calls the
 * program under test (price_target). price_nop in its place measures the
 * harness alone, which xdpprice subtracts; price_ktime and price_coarse
 * price a helper call, for scale.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "price_hdr.h"

/* One entry: the headers to put back before every run. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct price_hdr);
	__uint(max_entries, 1);
} price_hdr SEC(".maps");

/* One entry: the program under test. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} price_target SEC(".maps");

/* Runs of a spread row so far. */
__u32 spread_runs;

/*
 * The next source of a spread row: the address's first 16 bits set to
 * h->spread_base + the run's number (mod PRICE_SPREAD_SOURCES), the next
 * 16 bits less as much, so that the address's sum, and with it the IPv4
 * header's and the UDP checksum, stay right.
 */
static __always_inline void spread_source(struct xdp_md *ctx,
					  const struct price_hdr *h)
{
	__u8 *p = (void *)(long)ctx->data;
	__u32 n = spread_runs++ % PRICE_SPREAD_SOURCES, w0, w1, s;
	__u32 off = h->spread_off;

	if (off > PRICE_HDR_MAX - 4)
		return;
	p += off;
	if ((void *)(p + 4) > (void *)(long)ctx->data_end)
		return;
	s = (__u32)(p[0] << 8 | p[1]) + (p[2] << 8 | p[3]);
	w0 = h->spread_base + n;
	w1 = s + (0xffff - w0);
	w1 = (w1 & 0xffff) + (w1 >> 16);
	w1 = (w1 & 0xffff) + (w1 >> 16);
	p[0] = w0 >> 8;
	p[1] = w0;
	p[2] = w1 >> 8;
	p[3] = w1;
}

SEC("xdp")
int price_harness(struct xdp_md *ctx)
{
	long meta = ctx->data_meta, data = ctx->data;
	__u64 *dst, *end;
	struct price_hdr *h;
	__u32 zero = 0, i;

	/* Always called, with 0 where there is no metadata, so that the
	 * baseline (price_nop) pays for the call as every row does. */
	if (bpf_xdp_adjust_meta(ctx, (int)(data - meta)))
		return XDP_ABORTED;
	h = bpf_map_lookup_elem(&price_hdr, &zero);
	if (!h)
		return XDP_ABORTED;
	/* PRICE_HDR_MAX bytes, whatever the headers' length: past them
	 * they are the payload's as it was, which the program under test
	 * leaves as it found it (a palindrome reversed). Plain stores,
	 * cheaper than bpf_xdp_store_bytes(). */
	dst = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if ((void *)(dst + PRICE_HDR_MAX / 8) > (void *)end)
		return XDP_ABORTED;
#pragma unroll
	for (i = 0; i < PRICE_HDR_MAX / 8; i++)
		dst[i] = h->words[i];
	if (h->spread_off)
		spread_source(ctx, h);
	bpf_tail_call(ctx, &price_target, 0);
	return XDP_ABORTED;
}

/* The baseline's target: nothing but a verdict. */
SEC("xdp")
int price_nop(struct xdp_md *ctx)
{
	return XDP_TX;
}

/* Prices for scale, one helper call each: the clock the rate limiter
 * and the steering read, and the coarse one the reply cache reads. */
SEC("xdp")
int price_ktime(struct xdp_md *ctx)
{
	bpf_ktime_get_ns();
	return XDP_TX;
}

SEC("xdp")
int price_coarse(struct xdp_md *ctx)
{
	bpf_ktime_get_coarse_ns();
	return XDP_TX;
}

SEC("xdp")
int price_jiffies(struct xdp_md *ctx)
{
	bpf_jiffies64();
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
