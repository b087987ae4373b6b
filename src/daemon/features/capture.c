// SPDX-License-Identifier: GPL-2.0
/*
 * Capture and traces (capture.h; docs/DESIGN.md, "Capture and traces"):
 * a session is turned on in the XDP program's .data (which requests to
 * mark) and in the workers' shared state (what to write of them); every
 * tick the records in the XDP program's ring (mapped here, read without a
 * system call) and in the workers' rings are turned into the session's
 * stream, which the control socket sends to reqrouterctl: pcapng blocks
 * for a capture, a packet a block with what became of it as its comment;
 * JSON lines for a trace. A stream that its reader does not keep up with
 * is not grown past RR_CAPTURE_STREAM_MAX: what does not fit is counted
 * lost, as what did not fit in a ring is.
 *
 * The same ring carries what a function's tap asked for (rr_fn_tap():
 * dnstap): the requests the in-kernel tier answered of one in its
 * sample, and their replies, whole. Each pair is handed to the tap of
 * the slot's instance as it is then, at the tick, while any slot taps,
 * with or without a session.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "clock.h"
#include "function.h"
#include "invoker.h"
#include "log.h"
#include "packet.h"
#include "parse.h"
#include "reqrouter.skel.h"
#include "shared/port.h"
#include "shared/stats.h"
#include "xdp.h"

/* What a stream holds at most, unsent. */
#define RR_CAPTURE_STREAM_MAX (8U << 20)
/* A capture's default bytes of a frame. */
#define RR_CAPTURE_SNAP_DEFAULT 256
/* Tapped requests waiting for their replies' records. */
#define RR_CAPTURE_TAP_WAIT 16

/* pcapng (draft-ietf-opsawg-pcapng): the blocks and options used. */
#define PCAPNG_SHB 0x0A0D0D0AU
#define PCAPNG_IDB 1U
#define PCAPNG_ISB 5U
#define PCAPNG_EPB 6U
#define PCAPNG_OPT_END 0
#define PCAPNG_OPT_COMMENT 1
#define PCAPNG_IF_NAME 2
#define PCAPNG_IF_TSRESOL 9
#define PCAPNG_ISB_IFDROP 5
#define PCAPNG_LINKTYPE_ETHERNET 1

struct stream {
	char *buf;
	size_t len, off, size;
};

struct session {
	bool on;
	uint32_t snap;	/* a capture's bytes of a frame */
	bool ended;	/* its count or its time: nothing more is added */
	uint64_t count; /* records (capture: packets) to end at; 0: none */
	uint64_t seen;
	uint64_t end_ns;    /* CLOCK_MONOTONIC; 0: none */
	uint64_t lost;	    /* what did not fit in its stream */
	uint64_t lost_base; /* the rings' lost records at its start */
	struct stream out;
};

struct rr_capture {
	struct rr_invoker *inv;
	struct session s[RR_CAPTURE_KINDS];
	/* The XDP program's ring, mapped: its consumer page, and its
	 * producer page with the data after it (twice, back to back). */
	unsigned long *cons;
	const unsigned long *prod;
	const uint8_t *data;
	size_t page;
	int64_t real_off; /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	/* Tapped requests whose replies' records are still to come (the
	 * CPUs' records interleave in the ring). */
	struct tap_wait {
		bool used;
		struct rr_capture_rec rec;
		uint8_t data[RR_CAPTURE_SNAP_MAX];
	} tap[RR_CAPTURE_TAP_WAIT];
	bool tap_said; /* the ring could not be mapped for the taps */
};

#define XDP_STAT_VERDICT(name, verdict, reason) verdict,
#define XDP_STAT_REASON(name, verdict, reason) reason,
static const char *const xdp_verdicts[] = { RR_XDP_STATS(XDP_STAT_VERDICT) };
static const char *const xdp_reasons[] = { RR_XDP_STATS(XDP_STAT_REASON) };
#define DROP_LABEL(name, label) label,
static const char *const drop_labels[] = { "", RR_DROPS(DROP_LABEL) };

static const char *xdp_verdict(uint32_t stat)
{
	return stat < RR_XDP_STAT_MAX ? xdp_verdicts[stat] : "?";
}

static const char *xdp_reason(uint32_t stat)
{
	return stat < RR_XDP_STAT_MAX ? xdp_reasons[stat] : "?";
}

static const char *drop_label(uint32_t drop)
{
	return drop < RR_DROP_MAX ? drop_labels[drop] : "?";
}

/* Room for @n more bytes in @st, or false (counted by the caller). */
static bool stream_room(struct stream *st, size_t n)
{
	size_t want;
	char *p;

	if (st->off && st->off == st->len)
		st->off = st->len = 0;
	if (st->len + n <= st->size)
		return true;
	/* What was sent goes first. */
	if (st->off) {
		memmove(st->buf, st->buf + st->off, st->len - st->off);
		st->len -= st->off;
		st->off = 0;
		if (st->len + n <= st->size)
			return true;
	}
	if (st->len + n > RR_CAPTURE_STREAM_MAX)
		return false;
	want = st->size ? st->size : 65536;
	while (want < st->len + n)
		want *= 2;
	p = realloc(st->buf, want);
	if (!p)
		return false;
	st->buf = p;
	st->size = want;
	return true;
}

static void put(struct stream *st, const void *p, size_t n)
{
	memcpy(st->buf + st->len, p, n);
	st->len += n;
}

static void put32(struct stream *st, uint32_t v)
{
	put(st, &v, sizeof(v));
}

static void put_pad(struct stream *st, size_t n)
{
	static const uint8_t zero[4];

	put(st, zero, (4 - n % 4) % 4);
}

/* A pcapng option of @len bytes at @p, padded, into @st. */
static void put_opt(struct stream *st, uint16_t code, const void *p,
		    uint16_t len)
{
	uint16_t h[2] = { code, len };

	put(st, h, sizeof(h));
	put(st, p, len);
	put_pad(st, len);
}

static size_t opt_size(size_t len)
{
	return 4 + (len + 3) / 4 * 4;
}

/* The section's header and its one interface: Ethernet, ns stamps. */
static bool pcap_head(struct stream *st, const char *ifname, uint32_t snap)
{
	uint32_t shb_len = 28, idb_len, magic = 0x1A2B3C4DU;
	uint16_t ver[2] = { 1, 0 }, lt[2] = { PCAPNG_LINKTYPE_ETHERNET, 0 };
	uint64_t section = UINT64_MAX;
	size_t name = strlen(ifname);
	uint8_t res = 9;

	idb_len = (uint32_t)(20 + opt_size(name) + opt_size(1) + 4);
	if (!stream_room(st, shb_len + idb_len))
		return false;
	put32(st, PCAPNG_SHB);
	put32(st, shb_len);
	put32(st, magic);
	put(st, ver, sizeof(ver));
	put(st, &section, sizeof(section));
	put32(st, shb_len);
	put32(st, PCAPNG_IDB);
	put32(st, idb_len);
	put(st, lt, sizeof(lt));
	put32(st, snap);
	put_opt(st, PCAPNG_IF_NAME, ifname, (uint16_t)name);
	put_opt(st, PCAPNG_IF_TSRESOL, &res, 1);
	put32(st, PCAPNG_OPT_END);
	put32(st, idb_len);
	return true;
}

/* A packet: @caplen bytes at @data of a frame of @len, at @ts (ns since
 * the epoch), with @comment. */
static bool pcap_packet(struct stream *st, uint64_t ts, const uint8_t *data,
			uint32_t caplen, uint32_t len, const char *comment)
{
	size_t clen = strlen(comment);
	uint32_t blen =
		(uint32_t)(28 + (caplen + 3) / 4 * 4 + opt_size(clen) + 4 + 4);

	if (!stream_room(st, blen))
		return false;
	put32(st, PCAPNG_EPB);
	put32(st, blen);
	put32(st, 0);
	put32(st, (uint32_t)(ts >> 32));
	put32(st, (uint32_t)ts);
	put32(st, caplen);
	put32(st, len);
	put(st, data, caplen);
	put_pad(st, caplen);
	put_opt(st, PCAPNG_OPT_COMMENT, comment, (uint16_t)clen);
	put32(st, PCAPNG_OPT_END);
	put32(st, blen);
	return true;
}

/* The interface's statistics at the end: the records lost. */
static void pcap_stats(struct stream *st, uint64_t ts, uint64_t lost)
{
	uint32_t blen = (uint32_t)(20 + opt_size(8) + 4 + 4);

	if (!stream_room(st, blen))
		return;
	put32(st, PCAPNG_ISB);
	put32(st, blen);
	put32(st, 0);
	put32(st, (uint32_t)(ts >> 32));
	put32(st, (uint32_t)ts);
	put_opt(st, PCAPNG_ISB_IFDROP, &lost, 8);
	put32(st, PCAPNG_OPT_END);
	put32(st, blen);
}

/* A line of text into @st. */
static bool put_line(struct stream *st, const char *line, size_t n)
{
	if (!stream_room(st, n))
		return false;
	put(st, line, n);
	return true;
}

uint64_t rr_capture_lost(struct rr_invoker *inv)
{
	int ncpus = libbpf_num_possible_cpus(), i;
	struct rr_capture_scratch *v;
	uint32_t zero = 0, w;
	uint64_t lost = 0;

	if (ncpus > 0 && inv->xdp.skel) {
		v = calloc((size_t)ncpus, sizeof(*v));
		if (v &&
		    !bpf_map__lookup_elem(inv->xdp.skel->maps.capture_scratch,
					  &zero, sizeof(zero), v,
					  sizeof(*v) * (size_t)ncpus, 0))
			for (i = 0; i < ncpus; i++)
				lost += v[i].lost;
		free(v);
	}
	for (w = 0; inv->reports && w < RR_NWORKERS(inv); w++)
		lost += __atomic_load_n(&inv->reports[w].capture.lost,
					__ATOMIC_RELAXED);
	return lost + inv->tap_lost;
}

/* The function of slot @slot's name and port, if it has one. */
static const struct rr_service *service_of(struct rr_invoker *inv,
					   uint32_t slot)
{
	return slot < inv->nslots ? inv->slots[slot].svc : NULL;
}

/* What became of the request of @r, in words, into @buf. */
static void fate(const struct rr_capture_rec *r, char *buf, size_t len)
{
	if (r->tier == RR_CAPTURE_TIER_XDP && r->drop)
		snprintf(buf, len, "XDP: %s %s, reason %s",
			 xdp_verdict(r->xdp_stat), xdp_reason(r->xdp_stat),
			 drop_label(r->drop));
	else if (r->tier == RR_CAPTURE_TIER_XDP)
		snprintf(buf, len, "XDP: %s %s", xdp_verdict(r->xdp_stat),
			 xdp_reason(r->xdp_stat));
	else if (r->drop)
		snprintf(buf, len, "worker %u.%u: drop, reason %s", r->queue,
			 r->thread, drop_label(r->drop));
	else if (r->reply_len)
		snprintf(buf, len, "worker %u.%u: reply, %u bytes", r->queue,
			 r->thread, r->reply_len);
	else
		snprintf(buf, len, "worker %u.%u: no reply yet (a gather's)",
			 r->queue, r->thread);
}

/* Whether XDP verdict @stat is on a reply to a worker's gather. */
static bool gather_stat(uint32_t stat)
{
	switch (stat) {
	case RR_XDP_GATHER_MERGED:
	case RR_XDP_REDIRECT_GATHER:
	case RR_XDP_GATHER_LATE:
	case RR_XDP_GATHER_DUPLICATE:
	case RR_XDP_GATHER_WRONG_SOURCE:
	case RR_XDP_GATHER_MALFORMED:
	case RR_XDP_GATHER_NO_VALUE:
	case RR_XDP_GATHER_OTHER_QUEUE:
		return true;
	}
	return false;
}

/* Record @r, with @data, into the capture. */
static void to_pcap(struct rr_capture *c, struct rr_invoker *inv,
		    const struct rr_capture_rec *r, const uint8_t *data)
{
	struct session *se = &c->s[RR_CAPTURE_PCAP];
	const struct rr_service *svc = service_of(inv, r->slot);
	char comment[192], what[128];

	if (!se->on || se->ended)
		return;
	if (r->kind != RR_CAPTURE_REQUEST) {
		if (r->tier == RR_CAPTURE_TIER_XDP)
			snprintf(what, sizeof(what), "XDP");
		else
			snprintf(what, sizeof(what), "worker %u.%u", r->queue,
				 r->thread);
	} else {
		fate(r, what, sizeof(what));
	}
	snprintf(comment, sizeof(comment), "%s: %s; %s",
		 svc ? svc->fn->name : "?",
		 r->kind == RR_CAPTURE_REPLY  ? "reply"
		 : r->kind == RR_CAPTURE_COPY ? "gather copy"
		 : r->tier == RR_CAPTURE_TIER_XDP && gather_stat(r->xdp_stat)
			 ? "a target's reply"
			 : "request",
		 what);
	/* Tapped too, a frame comes whole: the capture's snap length. */
	if (!pcap_packet(&se->out, r->ts_ns + (uint64_t)c->real_off, data,
			 r->caplen < se->snap ? r->caplen : se->snap, r->len,
			 comment)) {
		se->lost++;
		return;
	}
	if (se->count && ++se->seen >= se->count)
		se->ended = true;
}

/* Record @r, a request's, into the trace: a JSON line. */
static void to_trace(struct rr_capture *c, struct rr_invoker *inv,
		     const struct rr_capture_rec *r)
{
	struct session *se = &c->s[RR_CAPTURE_TRACE];
	const struct rr_service *svc = service_of(inv, r->slot);
	uint64_t ts = r->ts_ns + (uint64_t)c->real_off;
	char line[640];
	int n;

	if (!se->on || se->ended || r->kind != RR_CAPTURE_REQUEST)
		return;
	n = snprintf(
		line, sizeof(line),
		"{\"time\":%llu.%06llu,\"function\":\"%s\",\"port\":%u,\"tier\":\"%s\",\"xdp\":\"%s %s\",\"queue\":%u,",
		(unsigned long long)(ts / 1000000000ULL),
		(unsigned long long)(ts % 1000000000ULL / 1000),
		svc ? svc->fn->name : "?", svc ? svc->port : 0,
		r->tier == RR_CAPTURE_TIER_XDP ? "xdp" : "user",
		xdp_verdict(r->xdp_stat), xdp_reason(r->xdp_stat), r->queue);
	if (r->tier == RR_CAPTURE_TIER_USER)
		n += snprintf(
			line + n, sizeof(line) - (size_t)n,
			"\"thread\":%u,\"queue_delay_us\":%.3f,\"function_us\":%.3f,",
			r->thread, (double)r->delay_ns / 1e3,
			(double)r->fn_ns / 1e3);
	n += snprintf(
		line + n, sizeof(line) - (size_t)n,
		"\"arrival_ns\":%llu,\"reply_bytes\":%u,\"verdict\":\"%s\"",
		(unsigned long long)r->arrival_ns, r->reply_len,
		r->reply_len				    ? "reply"
		: r->drop || r->xdp_stat != RR_XDP_REDIRECT ? "drop"
							    : "none");
	if (r->drop)
		n += snprintf(line + n, sizeof(line) - (size_t)n,
			      ",\"reason\":\"%s\"", drop_label(r->drop));
	else if (!r->reply_len && r->tier == RR_CAPTURE_TIER_XDP)
		n += snprintf(line + n, sizeof(line) - (size_t)n,
			      ",\"reason\":\"%s\"", xdp_reason(r->xdp_stat));
	n += snprintf(line + n, sizeof(line) - (size_t)n, "}\n");
	if (n <= 0 || (size_t)n >= sizeof(line) ||
	    !put_line(&se->out, line, (size_t)n)) {
		se->lost++;
		return;
	}
	if (se->count && ++se->seen >= se->count)
		se->ended = true;
}

/* The payload of the frame @len bytes at @data, parsed: NULL if it is
 * not a whole UDP datagram's. */
static const uint8_t *tap_payload(const uint8_t *data, uint32_t len,
				  struct rr_pkt *pkt)
{
	if (rr_parse_headers(data, len, pkt) ||
	    pkt->payload_off + pkt->payload_len > len)
		return NULL;
	return data + pkt->payload_off;
}

/* Tapped request @q, @qd its frame, answered with @r, @rd: to the tap of
 * the slot's instance as it is now. One it cannot be handed whole is
 * counted lost. */
static void tap_hand(struct rr_capture *c, struct rr_invoker *inv,
		     const struct rr_capture_rec *q, const uint8_t *qd,
		     const struct rr_capture_rec *r, const uint8_t *rd)
{
	struct rr_fn_instance *inst;
	struct rr_tap_answer a = { 0 };
	struct rr_request req;
	struct rr_pkt qp, rp;

	if (q->slot >= inv->nslots)
		return;
	inst = inv->slots[q->slot].inst;
	if (!inst || !inst->tap)
		return;
	a.query = q->caplen == q->len ? tap_payload(qd, q->caplen, &qp) : NULL;
	a.reply = r->caplen == r->len ? tap_payload(rd, r->caplen, &rp) : NULL;
	if (!a.query || !a.reply) {
		inv->tap_lost++;
		return;
	}
	rr_request_init(&req, qd, &qp, q->queue, 0);
	req.state = inst->state;
	req.counters = inv->tap_counters[q->slot];
	a.req = &req;
	a.query_len = qp.payload_len;
	a.reply_len = rp.payload_len;
	a.arrival_ns = q->arrival_ns + (uint64_t)c->real_off;
	a.sent_ns = r->ts_ns + (uint64_t)c->real_off;
	a.from = q->xdp_stat == RR_XDP_TX_CACHE ? RR_TAP_CACHE : RR_TAP_PROGRAM;
	inst->tap(inst->tap_arg, &a);
}

/* Record @r, of a request marked for a tap, with @data: a request's
 * waits for its reply's, which hands both to the tap. */
static void to_tap(struct rr_capture *c, struct rr_invoker *inv,
		   const struct rr_capture_rec *r, const uint8_t *data)
{
	struct tap_wait *w, *free_w = NULL;

	for (w = c->tap; w < c->tap + RR_CAPTURE_TAP_WAIT; w++) {
		if (!w->used) {
			free_w = free_w ? free_w : w;
			continue;
		}
		if (r->kind != RR_CAPTURE_REPLY ||
		    w->rec.arrival_ns != r->arrival_ns ||
		    w->rec.queue != r->queue || w->rec.slot != r->slot)
			continue;
		w->used = false;
		tap_hand(c, inv, &w->rec, w->data, r, data);
		return;
	}
	/* A reply whose request is not here, or a request answered by
	 * neither the cache nor a program (none is written). */
	if (r->kind != RR_CAPTURE_REQUEST ||
	    (r->xdp_stat != RR_XDP_TX_CACHE &&
	     r->xdp_stat != RR_XDP_TX_FUNCTION))
		return;
	if (!free_w) {
		/* Its reply never came: the oldest gives way. */
		inv->tap_lost++;
		free_w = c->tap;
		for (w = c->tap; w < c->tap + RR_CAPTURE_TAP_WAIT; w++)
			if (w->rec.ts_ns < free_w->rec.ts_ns)
				free_w = w;
	}
	free_w->used = true;
	free_w->rec = *r;
	memcpy(free_w->data, data, r->caplen);
}

/* One record, @len bytes at @p (a record and its frame's bytes), from
 * a ring: checked, then to the sessions its mark names. */
static void dispatch(struct rr_capture *c, struct rr_invoker *inv,
		     const uint8_t *p, size_t len)
{
	struct rr_capture_rec r;

	if (len < sizeof(r))
		return;
	memcpy(&r, p, sizeof(r));
	if (r.caplen > RR_CAPTURE_SNAP_MAX || r.caplen > len - sizeof(r) ||
	    r.caplen > r.len)
		return;
	if (r.mark & RR_MARK_CAPTURE)
		to_pcap(c, inv, &r, p + sizeof(r));
	if (r.mark & RR_MARK_TRACE)
		to_trace(c, inv, &r);
	if (r.mark & RR_MARK_TAP && r.tier == RR_CAPTURE_TIER_XDP)
		to_tap(c, inv, &r, p + sizeof(r));
}

/* The XDP program's ring, mapped (and kept from the cells), or -errno. */
static int ring_map(struct rr_capture *c, struct rr_invoker *inv)
{
	int fd = bpf_map__fd(inv->xdp.skel->maps.capture_ring);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *cons, *prod;

	if (c->cons)
		return 0;
	cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, page + 2 * (size_t)RR_CAPTURE_RING_SIZE, PROT_READ,
		    MAP_SHARED, fd, (off_t)page);
	if (prod == MAP_FAILED) {
		munmap(cons, page);
		return -errno;
	}
	/* No cell inherits another function's traffic. */
	madvise(cons, page, MADV_DONTFORK);
	madvise(prod, page + 2 * (size_t)RR_CAPTURE_RING_SIZE, MADV_DONTFORK);
	c->page = page;
	c->cons = cons;
	c->prod = prod;
	c->data = (const uint8_t *)prod + page;
	return 0;
}

static void ring_unmap(struct rr_capture *c)
{
	if (!c->cons)
		return;
	munmap(c->cons, c->page);
	munmap((void *)c->prod, c->page + 2 * (size_t)RR_CAPTURE_RING_SIZE);
	c->cons = NULL;
}

/* Every record the XDP program's ring holds, to the sessions (or away,
 * with none). Its records are laid out as the kernel's BPF ring buffer
 * lays them out (an 8-byte header, the length with a busy and a discard
 * bit, then the record, 8-aligned). */
static void ring_drain(struct rr_capture *c, struct rr_invoker *inv, bool keep)
{
	unsigned long cons, prod;
	const uint32_t *hdr;
	uint32_t len;

	if (!c->cons)
		return;
	cons = __atomic_load_n(c->cons, __ATOMIC_ACQUIRE);
	prod = __atomic_load_n(c->prod, __ATOMIC_ACQUIRE);
	while (cons < prod) {
		hdr = (const uint32_t *)(c->data +
					 (cons & (RR_CAPTURE_RING_SIZE - 1)));
		len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		if (len & BPF_RINGBUF_BUSY_BIT)
			break;
		if (keep && !(len & BPF_RINGBUF_DISCARD_BIT))
			dispatch(c, inv,
				 (const uint8_t *)hdr + BPF_RINGBUF_HDR_SZ,
				 len & ~BPF_RINGBUF_DISCARD_BIT);
		len &= ~BPF_RINGBUF_DISCARD_BIT;
		cons += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
		__atomic_store_n(c->cons, cons, __ATOMIC_RELEASE);
	}
}

/* Every record the workers' rings hold, likewise. A cell writes its own,
 * whatever a function there made of it: head is trusted no further than
 * a ring's length, each record is checked. */
static void workers_drain(struct rr_capture *c, struct rr_invoker *inv,
			  bool keep)
{
	struct rr_capture_wring *r;
	struct rr_capture_wslot slot;
	uint64_t head, tail;
	uint32_t w;

	for (w = 0; inv->reports && w < RR_NWORKERS(inv); w++) {
		r = &inv->reports[w].capture;
		head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		tail = r->tail;
		if (head - tail > RR_CAPTURE_WRING)
			tail = head - RR_CAPTURE_WRING;
		for (; keep && tail != head; tail++) {
			memcpy(&slot, &r->slot[tail % RR_CAPTURE_WRING],
			       sizeof(slot));
			dispatch(c, inv, (const uint8_t *)&slot, sizeof(slot));
		}
		__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
	}
}

/* What is marked, in the XDP program and for the workers: the sessions
 * under way and not ended. */
static void marks_set(struct rr_capture *c, struct rr_invoker *inv)
{
	uint32_t on = 0;

	if (c->s[RR_CAPTURE_PCAP].on && !c->s[RR_CAPTURE_PCAP].ended)
		on |= RR_MARK_CAPTURE;
	if (c->s[RR_CAPTURE_TRACE].on && !c->s[RR_CAPTURE_TRACE].ended)
		on |= RR_MARK_TRACE;
	__atomic_store_n(&inv->live->capture, on, __ATOMIC_RELAXED);
	/* The taps' mark is rr_xdp_set_tap()'s. */
	if (inv->xdp.taps)
		on |= RR_MARK_TAP;
	__atomic_store_n(&inv->xdp.skel->data->capture_on, on,
			 __ATOMIC_RELEASE);
}

/*
 * @arg, an address or a prefix ("192.0.2.0/24", "2001:db8::/32"), into
 * the XDP program's filter: its words and their masks, in memory order.
 * 0, or -EINVAL.
 */
static int source_parse(const char *arg, struct reqrouter *skel)
{
	char addr[INET6_ADDRSTRLEN + 8], *slash;
	uint8_t bytes[16] = { 0 }, mask[16] = { 0 };
	unsigned long plen;
	uint32_t i, family, w;

	if (strlen(arg) >= sizeof(addr))
		return -EINVAL;
	strcpy(addr, arg);
	slash = strchr(addr, '/');
	if (slash)
		*slash++ = '\0';
	if (inet_pton(AF_INET, addr, bytes) == 1)
		family = 4;
	else if (inet_pton(AF_INET6, addr, bytes) == 1)
		family = 6;
	else
		return -EINVAL;
	plen = family == 4 ? 32 : 128;
	if (slash && rr_parse_ulong(slash, 0, plen, &plen))
		return -EINVAL;
	for (i = 0; i < plen; i++)
		mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
	for (i = 0; i < 4; i++) {
		memcpy(&w, mask + 4 * i, 4);
		skel->data->capture_mask[i] = w;
		memcpy(&w, bytes + 4 * i, 4);
		skel->data->capture_addr[i] = w & skel->data->capture_mask[i];
	}
	skel->data->capture_family = family;
	return 0;
}

/*
 * A capture's request: PORT SOURCE COUNT SECONDS SNAPLEN SAMPLE, into
 * the XDP program's filter and @se. 0, or -EINVAL with one line.
 */
static int capture_args(struct session *se, struct rr_invoker *inv,
			const char *args, uint32_t *snap, char *err,
			size_t errlen)
{
	struct reqrouter *skel = inv->xdp.skel;
	unsigned long port, count, secs, snaplen, sample;
	char source[128];

	if (sscanf(args, "%lu %127s %lu %lu %lu %lu", &port, source, &count,
		   &secs, &snaplen, &sample) != 6 ||
	    port > 65535 || snaplen < 1 || snaplen > RR_CAPTURE_SNAP_MAX ||
	    secs > 86400 * 365) {
		snprintf(
			err, errlen,
			"capture takes PORT SOURCE COUNT SECONDS SNAPLEN SAMPLE (a port 0-65535, a snap length 1-%d), not '%.64s'",
			RR_CAPTURE_SNAP_MAX, args);
		return -EINVAL;
	}
	/* Only a served port's requests are ever marked: a capture of
	 * another would wait for nothing. */
	if (port && !(skel->data->served_ports[RR_SERVED_WORD(port)] &
		      RR_SERVED_BIT(port))) {
		snprintf(
			err, errlen,
			"capture: no function is served on port %lu, so none of its datagrams reach reqrouter (reqrouterctl status lists the ports)",
			port);
		return -ENOENT;
	}
	skel->data->capture_family = 0;
	if (strcmp(source, "-") && source_parse(source, skel)) {
		snprintf(
			err, errlen,
			"capture: source '%.64s' is no address or prefix (192.0.2.0/24, 2001:db8::/32)",
			source);
		return -EINVAL;
	}
	skel->data->capture_port = (uint32_t)port;
	skel->data->capture_sample = (uint32_t)sample;
	skel->data->capture_snap = (uint32_t)snaplen;
	__atomic_store_n(&inv->live->capture_snap, (uint32_t)snaplen,
			 __ATOMIC_RELAXED);
	se->count = count;
	se->end_ns = secs ? rr_now_ns() + secs * 1000000000ULL : 0;
	*snap = (uint32_t)snaplen;
	se->snap = (uint32_t)snaplen;
	return 0;
}

/* Whether any function served has trace_sample set. */
static bool traced_any(const struct rr_invoker *inv)
{
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++)
		if (inv->slots[slot].svc && !inv->slots[slot].removed &&
		    inv->slots[slot].svc->trace_sample)
			return true;
	return false;
}

bool rr_capture_on(const struct rr_capture *c, enum rr_capture_kind kind)
{
	return c && c->s[kind].on;
}

int rr_capture_start(struct rr_capture **cp, struct rr_invoker *inv,
		     enum rr_capture_kind kind, const char *args, char *err,
		     size_t errlen)
{
	static const char *const names[] = { "capture", "trace" };
	struct rr_capture *c = *cp;
	struct session *se;
	struct timespec rt;
	unsigned long count, secs;
	uint32_t snap = 0;
	char extra;
	int ret;

	if (!inv->xdp.skel || !inv->live) {
		snprintf(err, errlen, "%s: no XDP program to mark requests",
			 names[kind]);
		return -ENODEV;
	}
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			snprintf(err, errlen, "%s: out of memory", names[kind]);
			return -ENOMEM;
		}
		*cp = c;
	}
	c->inv = inv;
	se = &c->s[kind];
	if (se->on) {
		snprintf(
			err, errlen,
			"a %s is already under way (one at a time): end it first",
			names[kind]);
		return -EBUSY;
	}
	if (kind == RR_CAPTURE_TRACE && !traced_any(inv)) {
		snprintf(
			err, errlen,
			"trace: no function has trace_sample set, so no record would come (set it in a [function NAME] section and reload)");
		return -ENOENT;
	}
	ret = ring_map(c, inv);
	if (ret) {
		snprintf(err, errlen, "%s: cannot map the capture ring: %s",
			 names[kind], strerror(-ret));
		return ret;
	}
	/* What a session before this one left is no one's (but the
	 * taps'). */
	if (!c->s[!kind].on) {
		ring_drain(c, inv, true);
		workers_drain(c, inv, false);
	}
	memset(se, 0, sizeof(*se));
	if (kind == RR_CAPTURE_PCAP) {
		ret = capture_args(se, inv, args, &snap, err, errlen);
		if (ret)
			return ret;
	} else {
		if (sscanf(args, "%lu %lu%c", &count, &secs, &extra) != 2 ||
		    secs > 86400 * 365) {
			snprintf(
				err, errlen,
				"trace takes COUNT SECONDS, the records to send and for how long (0: no end), not '%.64s'",
				args);
			return -EINVAL;
		}
		se->count = count;
		se->end_ns = secs ? rr_now_ns() + secs * 1000000000ULL : 0;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	c->real_off = (int64_t)((uint64_t)rt.tv_sec * 1000000000ULL +
				(uint64_t)rt.tv_nsec) -
		      (int64_t)rr_now_ns();
	if (kind == RR_CAPTURE_PCAP &&
	    !pcap_head(&se->out, inv->cfg->ifname, snap)) {
		snprintf(err, errlen, "capture: out of memory");
		return -ENOMEM;
	}
	se->lost_base = rr_capture_lost(inv);
	se->on = true;
	marks_set(c, inv);
	pr_info("%s started from the control socket\n", names[kind]);
	return 0;
}

void rr_capture_stop(struct rr_capture *c, enum rr_capture_kind kind)
{
	struct session *se;

	if (!c || !c->s[kind].on)
		return;
	se = &c->s[kind];
	se->on = false;
	marks_set(c, c->inv);
	free(se->out.buf);
	memset(se, 0, sizeof(*se));
	if (!c->s[!kind].on && !c->inv->xdp.taps)
		ring_unmap(c);
}

void rr_capture_free(struct rr_capture *c)
{
	if (!c)
		return;
	rr_capture_stop(c, RR_CAPTURE_PCAP);
	rr_capture_stop(c, RR_CAPTURE_TRACE);
	ring_unmap(c);
	free(c);
}

/* Session @kind has ended (@now): nothing more is marked for it, and a
 * capture's last block says how many records were lost. */
static void session_end(struct rr_capture *c, struct rr_invoker *inv,
			enum rr_capture_kind kind, uint64_t now)
{
	struct session *se = &c->s[kind];
	uint64_t lost = rr_capture_lost(inv) - se->lost_base + se->lost;

	se->ended = true;
	marks_set(c, inv);
	if (kind == RR_CAPTURE_PCAP)
		pcap_stats(&se->out, now + (uint64_t)c->real_off, lost);
	se->end_ns = 0;
	se->count = 0;
}

/* Each slot's tap in the XDP program as its instance asks now: a start,
 * a reload, a deploy, threads N or a canary may have put another one. */
static void taps_follow(struct rr_invoker *inv)
{
	const struct rr_fn_instance *inst;
	uint32_t slot, want;

	for (slot = 0; slot < inv->nslots && slot < RR_MAX_SLOTS; slot++) {
		inst = __atomic_load_n(&inv->slots[slot].inst,
				       __ATOMIC_ACQUIRE);
		want = inst && inst->tap ? inst->tap_sample : 0;
		if (want != inv->xdp.skel->data->tap_sample[slot])
			rr_xdp_set_tap(&inv->xdp, slot, want);
	}
}

/* The taps' part of a tick: each slot's followed, the ring mapped while
 * a slot taps, what the clocks differ by now. Whether anything is to be
 * read. */
static bool taps_tick(struct rr_capture **cp, struct rr_invoker *inv)
{
	struct rr_capture *c = *cp;
	struct timespec rt;
	bool sessions = c && (c->s[0].on || c->s[1].on);
	int ret;

	if (inv->xdp.skel)
		taps_follow(inv);

	if (!inv->xdp.taps || !inv->xdp.skel) {
		if (c && c->cons && !sessions)
			ring_unmap(c);
		return sessions;
	}
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return false;
		c->inv = inv;
		*cp = c;
	}
	if (!c->cons) {
		ret = ring_map(c, inv);
		if (ret) {
			if (!c->tap_said)
				pr_warn("cannot map the capture ring: %s; the in-kernel tier's answers are not tapped (dnstap misses them)\n",
					strerror(-ret));
			c->tap_said = true;
			return sessions;
		}
	}
	if (!sessions) {
		clock_gettime(CLOCK_REALTIME, &rt);
		c->real_off = (int64_t)((uint64_t)rt.tv_sec * 1000000000ULL +
					(uint64_t)rt.tv_nsec) -
			      (int64_t)rr_now_ns();
	}
	return true;
}

void rr_capture_tick(struct rr_capture **cp, struct rr_invoker *inv)
{
	struct rr_capture *c;
	uint64_t now;
	int k;

	if (!taps_tick(cp, inv))
		return;
	c = *cp;
	ring_drain(c, inv, true);
	workers_drain(c, inv, true);
	now = rr_now_ns();
	for (k = 0; k < RR_CAPTURE_KINDS; k++) {
		struct session *se = &c->s[k];

		if (!se->on)
			continue;
		/* Reached its count in this drain, or its time. */
		if ((se->ended && (se->count || se->end_ns)) ||
		    (!se->ended && se->end_ns && now >= se->end_ns))
			session_end(c, inv, (enum rr_capture_kind)k, now);
	}
}

size_t rr_capture_pending(struct rr_capture *c, enum rr_capture_kind kind,
			  const char **buf)
{
	struct stream *st;

	if (!c || !c->s[kind].on)
		return 0;
	st = &c->s[kind].out;
	*buf = st->buf + st->off;
	return st->len - st->off;
}

void rr_capture_sent(struct rr_capture *c, enum rr_capture_kind kind,
		     size_t sent)
{
	if (c && c->s[kind].on)
		c->s[kind].out.off += sent;
}

bool rr_capture_done(const struct rr_capture *c, enum rr_capture_kind kind)
{
	const struct session *se;

	if (!c || !c->s[kind].on)
		return true;
	se = &c->s[kind];
	return se->ended && !se->count && !se->end_ns &&
	       se->out.off == se->out.len;
}
