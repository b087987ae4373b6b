/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capture and per-request traces from the in-kernel tier (docs/DESIGN.md,
 * "Capture and traces"): the record a marked request leaves in the
 * capture ring, and how it is written. Part of the ABI between a
 * function's XDP object and reqrouter's steering program (rr_xdp.h), as
 * a reply built in a function's program is captured there, before
 * XDP_TX; reqrouter's workers write the same records for the user tier.
 * Plain fixed-width types only: user space compiles the structs too.
 */
#ifndef RR_XDP_CAPTURE_H
#define RR_XDP_CAPTURE_H

#include <linux/types.h>

/* The most bytes of a frame a record carries (--snaplen). */
#define RR_CAPTURE_SNAP_MAX 1024

/* What a request is marked for (struct rr_xdp_req's mark, the workers'
 * RR_RX_META_CAPTURE and RR_RX_META_TRACE): its frames written into the
 * capture, its path into a trace record. */
#define RR_MARK_CAPTURE 0x1
#define RR_MARK_TRACE 0x2
/* One in its function's tap sample (rr_fn_tap(), dnstap): what the
 * in-kernel tier answers of it (the reply cache, the function's program)
 * is written whole, request and reply, for the function's tap. The
 * workers never see this mark: the function sees those requests itself. */
#define RR_MARK_TAP 0x4
/* The marks a worker acts on (through rr_steer()'s flags). */
#define RR_MARK_WORKERS (RR_MARK_CAPTURE | RR_MARK_TRACE)

/* A record's kind: the request with what became of it, the reply sent
 * for it, or a copy its gather sent. */
#define RR_CAPTURE_REQUEST 1
#define RR_CAPTURE_REPLY 2
/* A copy of a marked request's gather, built in the UMEM for a target
 * (gather_scatter = umem: it never passes the kernel's stack). */
#define RR_CAPTURE_COPY 3

/* Which tier the verdict is from. */
#define RR_CAPTURE_TIER_XDP 0
#define RR_CAPTURE_TIER_USER 1

/*
 * One record, followed by caplen bytes of the frame. A request's record
 * says what became of it: the XDP program's verdict (xdp_stat, its enum
 * rr_xdp_stat), and for one a tier dropped, why (drop, its enum rr_drop;
 * 0 for none); for a reply its size. 64 bytes, so that the frame's bytes
 * follow without a gap.
 */
struct rr_capture_rec {
	__u64 ts_ns;	  /* CLOCK_MONOTONIC: when written */
	__u64 arrival_ns; /* the request's arrival in XDP */
	__u64 delay_ns;	  /* user tier: its queuing delay */
	__u64 fn_ns;	  /* user tier: its function's time */
	__u32 len;	  /* the frame's length */
	__u32 caplen;	  /* of its bytes, those that follow */
	__u32 reply_len;  /* a request's reply, its frame's length (0: none) */
	__u16 kind;	  /* RR_CAPTURE_REQUEST, RR_CAPTURE_REPLY */
	__u8 mark;	  /* RR_MARK_* */
	__u8 tier;	  /* RR_CAPTURE_TIER_* */
	__u16 xdp_stat;	  /* enum rr_xdp_stat */
	__u16 drop;	  /* enum rr_drop, 0: none */
	__u16 queue;
	__u16 thread; /* user tier: the worker's thread in its queue */
	__u16 slot;
	__u16 pad;
};

/*
 * The in-kernel tier's scratch, per CPU: the marked request's record and
 * bytes, copied before anything changes the frame, then the reply's; how
 * many bytes to keep; and the records the ring had no room for.
 */
struct rr_capture_scratch {
	__u64 lost;
	__u32 snap; /* bytes of a frame to keep, at most RR_CAPTURE_SNAP_MAX */
	__u32 pad;
	struct rr_capture_rec rec;
	__u8 data[RR_CAPTURE_SNAP_MAX];
};

#ifdef __BPF__
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* Copies the frame's first bytes, up to @sc->snap, after @sc->rec: for
 * a capture, and for a tap (whole, snap RR_CAPTURE_SNAP_MAX). */
static __always_inline void rr_capture_load(struct xdp_md *ctx,
					    struct rr_capture_scratch *sc)
{
	__u32 len = (__u32)(ctx->data_end - ctx->data);
	__u64 cap = len;

	sc->rec.len = len;
	sc->rec.caplen = 0;
	if (cap > sc->snap)
		cap = sc->snap;
	/* Bounds the verifier follows, in a 64-bit register. */
	asm volatile("" : "+r"(cap));
	if (!(sc->rec.mark & (RR_MARK_CAPTURE | RR_MARK_TAP)) || cap < 1 ||
	    cap > RR_CAPTURE_SNAP_MAX)
		return;
	if (!bpf_xdp_load_bytes(ctx, 0, sc->data, cap))
		sc->rec.caplen = (__u32)cap;
}

/* @sc's record into @ring, or counted as lost: the ring is read at the
 * main thread's tick, never woken for a record. */
static __always_inline void rr_capture_out(void *ring,
					   struct rr_capture_scratch *sc)
{
	__u64 cap = sc->rec.caplen;

	asm volatile("" : "+r"(cap));
	if (cap > RR_CAPTURE_SNAP_MAX)
		cap = 0;
	sc->rec.ts_ns = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(ring, &sc->rec, sizeof(sc->rec) + cap,
			       BPF_RB_NO_WAKEUP))
		sc->lost++;
}

/*
 * A marked request answered with XDP_TX from the frame in @ctx: its
 * record (copied into @sc when it was marked, with the verdict since
 * set), then, if captured or tapped, the reply's.
 */
static __always_inline void rr_capture_answered(struct xdp_md *ctx, void *ring,
						struct rr_capture_scratch *sc)
{
	sc->rec.reply_len = (__u32)(ctx->data_end - ctx->data);
	rr_capture_out(ring, sc);
	if (!(sc->rec.mark & (RR_MARK_CAPTURE | RR_MARK_TAP)))
		return;
	sc->rec.kind = RR_CAPTURE_REPLY;
	rr_capture_load(ctx, sc);
	rr_capture_out(ring, sc);
}
#endif

#endif /* RR_XDP_CAPTURE_H */
