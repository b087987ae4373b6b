/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capture and traces (docs/DESIGN.md, "Capture and traces"; capture.c):
 * reqrouterctl capture and trace, one session of each at a time. The XDP
 * program marks the requests (kern/lib/capture.h) and writes the records
 * of what it answers or drops into its ring; a worker writes those of the
 * marked requests it serves into its own ring, in its report, which the
 * main thread drains at its tick into the session's stream: pcapng for a
 * capture, JSON lines for a trace.
 */
#ifndef RR_CAPTURE_H
#define RR_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shared/capture.h"

struct rr_invoker;

/* Records a worker holds for the main thread between two of its ticks;
 * past that they are counted lost. */
#define RR_CAPTURE_WRING 32

struct rr_capture_wslot {
	struct rr_capture_rec rec;
	uint8_t data[RR_CAPTURE_SNAP_MAX];
};

/*
 * A worker's ring, in its report: it writes slot[head % RR_CAPTURE_WRING]
 * and moves head on; the main thread reads up to head and moves tail.
 * Each on a line of its own.
 */
struct rr_capture_wring {
	uint64_t head;
	uint64_t lost; /* records it had no room for */
	uint8_t pad0[48];
	uint64_t tail;
	uint8_t pad1[56];
	struct rr_capture_wslot slot[RR_CAPTURE_WRING];
};

/* The slot for the next record, NULL if the ring is full (counted). */
static inline struct rr_capture_wslot *
rr_capture_wnext(struct rr_capture_wring *r)
{
	uint64_t head = r->head;

	if (head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >=
	    RR_CAPTURE_WRING) {
		__atomic_store_n(&r->lost, r->lost + 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return &r->slot[head % RR_CAPTURE_WRING];
}

/* The slot rr_capture_wnext() gave is the main thread's. */
static inline void rr_capture_wput(struct rr_capture_wring *r)
{
	__atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
}

/* @len bytes of the frame at @data into @s, up to @snap. */
static inline void rr_capture_wbytes(struct rr_capture_wslot *s,
				     const uint8_t *data, uint32_t len,
				     uint32_t snap)
{
	uint32_t cap = len < snap ? len : snap;

	if (cap > RR_CAPTURE_SNAP_MAX)
		cap = RR_CAPTURE_SNAP_MAX;
	s->rec.len = len;
	s->rec.caplen = s->rec.mark & RR_MARK_CAPTURE ? cap : 0;
	memcpy(s->data, data, s->rec.caplen);
}

/*
 * A worker's record of @kind (RR_CAPTURE_REPLY, RR_CAPTURE_COPY) for the
 * frame of @len bytes at @data it sends for a request marked @mark of
 * function slot @slot, outside the request's own call (a gather's copy,
 * a gathered reply): into @r, its bytes up to @snap. Counted lost if the
 * ring is full.
 */
static inline void rr_capture_wframe(struct rr_capture_wring *r, uint16_t kind,
				     uint8_t mark, uint16_t queue,
				     uint16_t thread, uint16_t slot,
				     const uint8_t *data, uint32_t len,
				     uint32_t snap, uint64_t now)
{
	struct rr_capture_wslot *s = rr_capture_wnext(r);

	if (!s)
		return;
	memset(&s->rec, 0, sizeof(s->rec));
	s->rec.ts_ns = now;
	s->rec.kind = kind;
	s->rec.mark = mark;
	s->rec.tier = RR_CAPTURE_TIER_USER;
	s->rec.queue = queue;
	s->rec.thread = thread;
	s->rec.slot = slot;
	s->rec.reply_len = kind == RR_CAPTURE_REPLY ? len : 0;
	rr_capture_wbytes(s, data, len, snap);
	rr_capture_wput(r);
}

/* The kinds of session, one each at a time. */
enum rr_capture_kind { RR_CAPTURE_PCAP, RR_CAPTURE_TRACE, RR_CAPTURE_KINDS };

struct rr_capture;

/*
 * Starts a session of @kind with the control request's arguments @args
 * (capture: PORT SOURCE COUNT SECONDS SNAPLEN SAMPLE, "-" for no source;
 * trace: COUNT SECONDS): the XDP program marks requests from now on. 0, or
 * -errno with one line in @err (one of that kind under way, a filter
 * that does not parse).
 */
int rr_capture_start(struct rr_capture **cp, struct rr_invoker *inv,
		     enum rr_capture_kind kind, const char *args, char *err,
		     size_t errlen);
/* Ends the session of @kind, if any: nothing is marked for it any more.
 * Safe to call on one not started. */
void rr_capture_stop(struct rr_capture *c, enum rr_capture_kind kind);
/* Ends every session and frees @c (before the invoker is destroyed). */
void rr_capture_free(struct rr_capture *c);
/* Whether a session of @kind is under way. */
bool rr_capture_on(const struct rr_capture *c, enum rr_capture_kind kind);
/* Moves the records written since into the sessions' streams, and hands
 * the taps theirs (rr_fn_tap(); *@cp made for them if need be); ends a
 * session at its count or its time (rr_capture_done()). Every tick. */
void rr_capture_tick(struct rr_capture **cp, struct rr_invoker *inv);
/* The records the rings could not take, all told: the XDP program's
 * (per CPU), the workers', and the tapped answers not handed whole. */
uint64_t rr_capture_lost(struct rr_invoker *inv);
/* Session @kind's bytes to send: *@buf, the count returned; @sent of them
 * were sent. */
size_t rr_capture_pending(struct rr_capture *c, enum rr_capture_kind kind,
			  const char **buf);
void rr_capture_sent(struct rr_capture *c, enum rr_capture_kind kind,
		     size_t sent);
/* Whether session @kind has ended (its count, its time) with all of its
 * bytes sent: its client is closed. */
bool rr_capture_done(const struct rr_capture *c, enum rr_capture_kind kind);

#endif /* RR_CAPTURE_H */
