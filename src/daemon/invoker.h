/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The invoker's state: per RX queue one UMEM shared by all the queue's
 * sockets, per (queue, thread) one worker, per (queue, thread, slot) one
 * AF_XDP socket. A slot is the invoker's number for a function it serves;
 * function, service, slot, port, worker and cell are defined in
 * docs/DESIGN.md, with the path of a request through these structs.
 *
 * What every floor of the daemon needs and nothing else: the structs
 * every part reads, the UMEM lock and the counters. Each floor's
 * functions are declared in its own headers (core/xsk.h, features/
 * gather.h, slots/slots.h, serve/worker.h, cells/supervise.h,
 * invoker/lifecycle.h, ...); a feature's own structs live with it
 * (features/steer.h, spread.h, gather.h, hh.h; serve/tcp.h).
 */
#ifndef RR_INVOKER_H
#define RR_INVOKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <xdp/xsk.h>

#include "capture.h"
#include "config.h"
#include "function.h"
#include "latency.h"
#include "link.h"
#include "netlink.h"
#include "rl.h"
#include "packet.h"
#include "shared/link.h" /* RR_FRAME_SIZE */
#include "shared/port.h"
#include "spread.h"
#include "steer.h"
#include "tcp.h"
#include "watch.h"
#include "xdp.h"

#define RR_CACHELINE 64
/* The fill ring holds every frame of its UMEM, so returning a frame to it
 * can never fail for lack of room. */
#define RR_NUM_FRAMES 4096
#define RR_FILL_SIZE RR_NUM_FRAMES
#define RR_COMP_SIZE RR_NUM_FRAMES
#define RR_RX_SIZE \
	RR_XDP_RX_RING /* what the XDP program judges a full worker by */
#define RR_TX_SIZE 2048
/*
 * Bytes in front of each TX frame's data for a struct xsk_tx_metadata (24
 * bytes since 6.14, 16 before; a multiple of 8 below 256, as the kernel
 * wants). RX data lands XDP_PACKET_HEADROOM (256) bytes into a frame and
 * replies are built in place, so the room is always there.
 */
#define RR_TX_META_LEN 24

/* Written by the owning worker only, read by the main thread. */
struct rr_sock_stats {
	uint64_t rx;
	uint64_t tx;
	uint64_t drops[RR_DROP_MAX];
	uint64_t tx_ring_full;	/* batches held back: TX had no room */
	uint64_t kick_errors;	/* sendto() failures other than backpressure */
	uint64_t cache_inserts; /* replies stored in the reply cache */
	uint64_t cache_evictions; /* ... over a live entry of another request */
	uint64_t cache_skips;	  /* not stored: entry busy, or reply unfit */
	uint64_t gathers;	  /* started (gather.c) */
	uint64_t gathers_timed_out; /* ... completed by their deadline */
	uint64_t gather_missed;	    /* targets asked that did not answer */
	uint64_t gather_umem;	    /* copies built in the UMEM */
	struct rr_latency latency;  /* of its replies (latency.h) */
	/* Of its requests, from the XDP program's stamp to their batch
	 * taken off RX (latency.h, rr_queue_delay()). */
	struct rr_latency queue_delay;
	/* Requests whose arrival stamp was later than their batch: a clock
	 * that went backwards; served as if they had not waited. */
	uint64_t stamp_skewed;
};

/*
 * A socket, in the main thread's memory: a cell works on its own copy,
 * made at its fork, so nothing here can be changed under the supervisor.
 * The ring structs are each user's own view of rings the kernel shares
 * (their indices live in the rings' mapped pages).
 */
struct rr_sock {
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_socket *xsk;
	const struct rr_service *svc;
	uint32_t slot;
	int fd;
	/* In its worker's report (struct rr_worker_report). */
	struct rr_sock_stats *stats;
} __attribute__((aligned(RR_CACHELINE)));

/*
 * What the workers of a queue share, cells included: the lock that
 * serialises the workers producing to its fill ring and consuming from
 * its completion ring. A page of its own, so that a cell maps only its
 * own queue's (see cells/cell.c).
 */
struct rr_queue_shared {
	pthread_spinlock_t lock; /* process-shared */
	/* The worker index + 1 of the lock's holder, RR_LOCK_MAIN, or 0
	 * when free: a cell that dies holding it is known, and its half-done
	 * step undone. Like everything here, a cell can write it: the
	 * supervisor trusts it only as far as it checks it. */
	uint32_t owner;
	/* The fill ring's producer and the completion ring's consumer
	 * when it was taken. */
	uint32_t fill_prod;
	uint32_t comp_cons;
	/* Of the completions released, the first @divert went to the
	 * holder's stock (its report's stock[] from @stock_before on), the
	 * rest to the fill ring (worker.c, recycle_frames()). */
	uint32_t stock_before;
	uint32_t divert;
	uint64_t tx_outstanding; /* submitted to TX, not yet completed */
} __attribute__((aligned(4096)));

/*
 * One per RX queue, in the main thread's memory (a cell has its copy).
 * The fill and completion rings are shared by all the queue's sockets
 * (the kernel allows only one UMEM per queue); sh->lock serialises the
 * workers that produce to and consume from them.
 */
struct rr_umem {
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	struct xsk_umem *umem;
	void *area;
	size_t size;
	struct rr_queue_shared *sh;
	bool tx_metadata; /* registered with RR_TX_META_LEN bytes of it */
	uint32_t
		lock_misses; /* the supervisor's looks in vain (cells/supervise.c) */
	uint64_t lock_missed_ns; /* since the first of them */
} __attribute__((aligned(RR_CACHELINE)));

struct rr_invoker;

/*
 * The batch a worker is in, written as it goes so that the supervisor can
 * account for every frame of a cell that died in it: RX descriptors
 * rx_cons..rx_cons+n-1 of socks[sock] were taken (the ring's consumer stays
 * at rx_cons until all are served), the request at cur is the one being
 * served, and tx[0..ntx-1] hold the replies made so far.
 */
struct rr_batch_mark {
	uint32_t sock; /* index into the worker's socks; RR_NO_BATCH: none */
	uint32_t rx_cons;
	uint32_t tx_prod; /* the TX ring's producer before the replies */
	uint32_t n;
	uint32_t cur;
	uint32_t ntx;
	uint32_t recycle_start; /* recycle[] entries of earlier batches */
	uint32_t kept; /* requests of it kept by their gathers (gather.c) */
};

#define RR_NO_BATCH UINT32_MAX

/*
 * What the main thread changes while workers run, in memory shared with
 * the cells (a cell's copy of struct rr_invoker is frozen at its fork).
 * Written by the main thread only: a cell maps it read-only, from a
 * sealed memfd that cannot be mapped writable again (cells/supervise.c).
 */
struct rr_live {
	int stop;
	/* By worker index: end the round and exit (a cell, for a fresh one
	 * to take over), or retire (fewer threads). Copies of struct
	 * rr_worker's, which are the truth. */
	bool restart[RR_MAX_QUEUES * RR_MAX_THREADS];
	bool retire[RR_MAX_QUEUES * RR_MAX_THREADS];
	/* -B with SO_PREFER_BUSY_POLL on every socket: the workers drive
	 * NAPI themselves, the interface's IRQs stay deferred. Cleared by
	 * the main thread if the sockets have no NAPI to poll after all. */
	bool prefer_busy_poll;
	/* worker_priority = realtime or auto, and the main thread found it
	 * allowed: each worker raises itself (realtime), or the supervisor
	 * raises it while its requests wait (auto; priority.c). */
	bool realtime;
	/* By slot: drop what is queued. A copy of slots[].quarantined that
	 * a cell can see, written only by rr_slot_sync(). */
	bool quarantined[RR_MAX_SLOTS];
	/* By slot: the generation replies are cached under, likewise a copy
	 * of slots[].cache_gen: a cell forked before a reload moved it
	 * would otherwise cache replies the XDP program never matches. */
	uint32_t cache_gen[RR_MAX_SLOTS];
	/* By TCP loop: stop accepting, finish, exit (tcp.c). */
	bool tcp_retire[RR_TCP_LOOPS];
	/* The interface's MTU now: the longest reply a worker sends. */
	uint32_t mtu;
	/* What a marked request's records are written for (RR_MARK_*, 0:
	 * nothing, the workers look no further), and how many bytes of its
	 * frames (features/capture.c). */
	uint32_t capture;
	uint32_t capture_snap;
	/* By slot: what its workers charge a call's time to (rate_limit_us,
	 * features/rl.c), written only by rr_slot_sync(). */
	struct rr_rl_cost rl_cost[RR_MAX_SLOTS];
};

#define RR_LIVE_SIZE ((sizeof(struct rr_live) + 4095) & ~(size_t)4095)

/* A function's faults (crashes and overruns), counted for quarantine. */
struct rr_faults {
	uint64_t crashes;
	uint64_t timeouts;
	uint64_t at_ns[RR_MAX_QUARANTINE_FAULTS]; /* the latest, a ring */
	uint32_t next;
	uint64_t quarantined_ns; /* CLOCK_MONOTONIC: when quarantined */
	/* How long the quarantine lasts (0: until lifted by hand), and the
	 * back-off that made it so: quarantined again soon after lifting
	 * itself, a function stays out twice as long (quarantine.c). */
	uint32_t quarantine_s;
	uint32_t backoff;
	uint64_t lifted_ns; /* when it last lifted itself, or 0 */
};

/*
 * A function the invoker serves: everything about it, found by its slot
 * number (0..nslots-1), which is also its number in the XDP program's
 * maps and in each worker's sockets. A slot number is called `slot` in
 * the code, a struct rr_slot pointer `s` (where `s` is a socket, the
 * slot is reached through its number: inv->slots[s->slot]).
 */

struct rr_slot {
	/* Read by the workers every batch, so together on one line. The
	 * function's state (API 2), swapped by a reload or a deploy while
	 * the workers run; an old one is freed once every worker has
	 * started a round after the swap (the epoch went up past it). */
	struct rr_fn_instance *inst;
	/* Replies cached in the XDP program's reply_cache (mapped at
	 * xdp.cache). */
	bool cached;
	/* The main thread's. The generation they are cached under; the
	 * workers read its copy in struct rr_live, which a cell sees. */
	uint32_t cache_gen;
	const struct rr_service *svc;
	/* Its cell group (docs/DESIGN.md, "Cell groups"): 0, the workers
	 * every function shares, or one of its own (own_cells), whose
	 * workers serve it alone. Its workers in each queue are threads
	 * cell_group * group_threads on (rr_first_thread()). */
	uint32_t cell_group;
	bool tier_xdp; /* answered in XDP first */
	/* Taken out by reqrouterctl remove: its port passes. */
	bool removed;
	/* Too many faults: its port drops or passes its requests until
	 * unquarantined. The truth; what the XDP map and the workers see
	 * of it is made from it by rr_slot_sync(). */
	bool quarantined;
	/* Its XDP map entry but for the quarantine flag, which
	 * rr_slot_sync() adds. */
	struct rr_port_conf port_conf;
	struct rr_fn_counters fn_ctrs; /* the function's own, as registered */
	struct rr_group group;	       /* steering = groups (steer.c) */
	struct rr_spread spread;       /* xdp_spread (spread.c) */
	/* Canaries (slots/canary.c): in a function's slot, 1 + the slot of
	 * the canary beside it (0: none), its share of the sources in per
	 * mille and the key of their hash; in a canary's slot, 1 + the
	 * slot of the function it is the canary of (0: not a canary). A
	 * canary's slot outlives it, removed, for the function's next. */
	uint32_t canary;
	bool canary_configured; /* started by its `canary` key */
	uint32_t canary_permille;
	uint64_t canary_seed;
	uint32_t canary_of;
	/* A canary's slot: its version (its metrics' label), kept while
	 * the slot stays removed after it. */
	char canary_version[48];
	/* Last, off the workers' line: written at every fault. */
	struct rr_faults faults;
} __attribute__((aligned(RR_CACHELINE)));

#define RR_MAX_RECYCLE (RR_MAX_BATCH * RR_MAX_SLOTS)
/* One more than a round fills: the supervisor puts a dead cell's last
 * request on top of what its report named, and hands the list to the
 * next cell if it cannot return it at once (cells/supervise.c). */
#define RR_RECYCLE_ROOM (RR_MAX_RECYCLE + 1)
/* Frames a worker keeps to build its gathers' copies in (gather_scatter =
 * umem), taken from the completions as they come back. */
#define RR_SG_STOCK 256

/*
 * What a worker tells the supervisor, in memory shared with the cells: one
 * page-aligned block per worker, of which a cell keeps only its own
 * mapped. Written by the worker alone; the supervisor reads it, and checks
 * every value it acts on (a function can write here too).
 */
struct rr_worker_report {
	/* Odd while inside a function: the supervisor's clock for max_run_us
	 * and how a dead cell's last request is found (batch.cur). */
	uint64_t call_seq;
	struct rr_batch_mark batch;
	/* Copies of the worker's own tx[] and recycle[] (which it works
	 * on, out of a function's reach but for its own cell): where a dead
	 * cell's frames are. Each entry is written before the count. */
	uint32_t nrecycle;
	uint64_t frames_held; /* taken off RX, not yet on TX or fill */
	/* The reload epoch this worker had seen when it last started a
	 * round: it holds no function state older than that epoch. */
	uint64_t seen_epoch;
	/* Set at its first round, 0 until then: a new cell group's requests
	 * are sent its way only once it serves (rr_invoker_add_group()). */
	uint32_t serving;
	struct rr_sock_stats stats[RR_MAX_SLOTS]; /* its sockets', by slot */
	/* Its copies of the functions' own counters, by slot. */
	uint64_t fn_counters[RR_MAX_SLOTS][RR_FN_MAX_COUNTERS];
	struct xdp_desc tx[RR_MAX_BATCH];
	uint64_t recycle[RR_RECYCLE_ROOM];
	/* The requests its outstanding gathers keep, by gather: their
	 * descriptors' addresses, inside their frames (0: none). */
	uint64_t gather_frames[RR_SG_PER_WORKER];
	/* Its stock of frames for copies (part of frames_held). */
	uint32_t nstock;
	uint64_t stock[RR_SG_STOCK];
	/* The records of the marked requests it served (capture.h). */
	struct rr_capture_wring capture;
} __attribute__((aligned(4096)));

/*
 * A worker, in the main thread's memory: the supervisor's own state of it
 * (a cell runs on its copy, made at its fork, and reports through rep).
 */
struct rr_worker {
	struct rr_invoker *inv;
	struct rr_umem *umem;
	struct rr_sock *socks; /* one per slot */
	struct rr_worker_report *rep;
	/* Its load as the XDP program steers by (struct rr_worker_load),
	 * in its queue's page of worker_load; NULL where that could not be
	 * mapped. */
	struct rr_worker_load *load;
	uint32_t nsocks; /* grows when a function is deployed */
	uint32_t queue;
	uint32_t thread;     /* index within the queue, 0..nthreads-1 */
	uint32_t cell_group; /* thread / group_threads: whose functions */
	bool retire; /* reqrouterctl threads: finish what is queued, exit */
	int cpu;
	bool cpu_lost; /* its CPU went offline and the kernel moved it */
	pthread_t tid;
	bool started;
	/* Isolation = cell: the process running it (told to end its round
	 * and exit, for a fresh one to take over, through
	 * live->restart[index]). */
	pid_t pid;
	bool fork_failed;      /* said once, retried every tick */
	bool unconfined;       /* a cell could not confine itself: said once */
	uint64_t next_fork_ns; /* CLOCK_MONOTONIC: not before */
	/* The supervisor's: the call_seq it saw last (any calls since?),
	 * and its overrun watch. */
	uint64_t sv_last_seq;
	struct rr_call_watch sv;
	uint32_t index; /* queue * RR_MAX_THREADS + thread */
	/* A thread's id, written by itself (a cell's is pid), and whether
	 * the supervisor took its realtime priority for the call with
	 * call_seq rt_lowered_seq (priority.c). */
	pid_t sys_tid;
	bool rt_lowered;
	uint64_t rt_lowered_seq;
	/* worker_priority = auto, the supervisor's (priority.c): raised
	 * now; until when, before it tries the normal priority again; how
	 * long the next raise lasts; when it last went back; raises since
	 * the last line said so, and when that was. */
	bool rt_raised;
	pid_t rt_tid; /* the thread or cell raised: a new cell is not */
	uint64_t rt_until_ns;
	uint64_t rt_hold_ns;
	uint64_t rt_back_ns;
	uint32_t rt_raises;
	uint64_t rt_said_ns;
	/* The worker's own, reported in rep. */
	uint64_t call_seq;
	uint64_t done; /* load->done, as this worker keeps it */
	uint64_t frames_held;
	uint32_t nrecycle; /* recycle[] entries of this round */
	/* Its gathers (gather.c), if a function it serves gathers. */
	struct rr_gathers *gathers;
	/* Its stock of frames for copies, up to stock_want (RR_SG_STOCK
	 * with gather_scatter = umem, else 0); also in its report. */
	uint32_t stock_want;
	uint32_t nstock;
	uint64_t stock[RR_SG_STOCK];
	/* Scratch for one round over the sockets. */
	struct rr_keep keep; /* a request's payload, for the reply cache */
	/* A batch's calls' time by source, to charge (rate_limit_us). */
	struct rr_rl_charge charges[RR_MAX_BATCH];
	/* A frame served out of other cells' reach (serve_private()). */
	uint8_t priv[RR_FRAME_SIZE] __attribute__((aligned(RR_CACHELINE)));
	/* A marked request's record while its call runs, put into the
	 * capture ring after it: what the call itself captures (a
	 * gather's copies) goes in meanwhile (serve/worker.c). */
	struct rr_capture_wslot capture_req;
	struct xdp_desc tx[RR_MAX_BATCH];
	uint64_t recycle[RR_RECYCLE_ROOM];
} __attribute__((aligned(RR_CACHELINE)));

/*
 * One of the interface's NAPI settings in sysfs, changed for preferred busy
 * polling. The file stays open so that the old value can be written back
 * even after --user took away the right to open it (the write itself
 * needs CAP_NET_ADMIN, which is kept).
 */
struct rr_sysfs_knob {
	const char *attr;
	char old[32];
	int fd;
	bool changed;
};

/*
 * What became of the clients of the control socket (ops/control.c) and
 * of the metrics listener (ops/http.c): counted, never logged one by one.
 */
enum rr_control_event {
	RR_CONTROL_EV_ACCEPTED,
	RR_CONTROL_EV_REFUSED_UID,  /* its uid held RR_CONTROL_PER_UID slots */
	RR_CONTROL_EV_REFUSED_FULL, /* every slot was taken */
	RR_CONTROL_EV_EVICTED,	    /* its slot went to root or the service */
	RR_CONTROL_EV_TIMED_OUT,    /* its exchange outlasted the deadline */
	RR_CONTROL_EV_MAX
};
enum rr_http_event {
	RR_HTTP_EV_ACCEPTED,
	RR_HTTP_EV_EVICTED_ADDRESS, /* for a newer one from its address */
	RR_HTTP_EV_EVICTED_FULL,    /* for a newer one, every slot taken */
	RR_HTTP_EV_HEADER_TIMEOUT,  /* no whole request head in time */
	RR_HTTP_EV_MAX
};

struct rr_invoker {
	const struct rr_config *cfg;
	struct rr_xdp xdp;
	int ifindex;
	/* The interface as it is now, followed (core/link.c); the MTU the
	 * workers size replies by is live->mtu. */
	struct rr_link *link;
	struct rr_link_state link_now;
	/* Changes followed, by enum rr_link_change (metrics). */
	uint64_t link_changes[RR_LINK_CHANGE_MAX];
	/* A change that only a restart can follow, in words ("" if none):
	 * health fails with it, and under systemd reqrouter exits for the
	 * unit to start it again (main.c). */
	char restart_why[160];
	uint64_t watch_rounds; /* rr_invoker_watch()'s looks */
	uint32_t nqueues;      /* served: 0..nqueues-1 */
	uint32_t nrxqueues; /* the interface's now; the program sees them all */
	/* Workers per queue, running now: group_threads (-t, threads) for
	 * each of the ngroups cell groups, group g's threads g *
	 * group_threads on. */
	uint32_t nthreads;
	uint32_t group_threads;
	uint32_t ngroups;
	uint32_t threads_made; /* sockets exist for threads 0..threads_made-1 */
	uint32_t nslots;
	/* The functions served, by slot. A cell's copy is its own, frozen
	 * at its fork. */
	struct rr_slot slots[RR_MAX_SLOTS];
	uint64_t epoch;		/* of the instances: see rr_slot.inst */
	struct rr_live *live;	/* shared: see struct rr_live */
	int live_fd;		/* its sealed memfd, for cells to map */
	bool stopping;		/* the truth of live->stop */
	uint64_t cell_restarts; /* cells that died and were forked again */
	struct rr_umem *umems;	/* [nqueues] */
	/* Laid out for RR_MAX_THREADS per queue, so threads come and go
	 * (reqrouterctl threads N) without anything moving. */
	struct rr_worker *workers; /* [nqueues][RR_MAX_THREADS] */
	struct rr_sock *socks;	   /* [nqueues][RR_MAX_THREADS][RR_MAX_SLOTS] */
	/* Shared with the cells, one mapping each: */
	struct rr_queue_shared *queue_sh; /* [nqueues] */
	struct rr_worker_report *reports; /* [nqueues][RR_MAX_THREADS] */
	bool zerocopy;
	/* Replies leave with a partial UDP checksum and a TX metadata request
	 * for the kernel (or NIC) to complete it. */
	bool tx_csum_offload;
	/* Preferred busy polling (live->prefer_busy_poll) is undone unless
	 * every queue's sockets turn out to have a NAPI to poll. */
	uint64_t napi_checked; /* bit q: queue q's sockets have a NAPI ID */
	int rt_refused; /* errno of the realtime priority's trial, or 0 */
	struct rr_sysfs_knob napi_defer_hard_irqs;
	struct rr_sysfs_knob gro_flush_timeout;
	/* The host's own destinations, mirrored from the kernel's local
	 * routes into the XDP program (answer_for = local); NULL with any. */
	struct rr_localaddr *local;
	/*
	 * Whether replies may leave from XDP (the in-kernel tier, the reply
	 * cache): not on a veth whose peer would drop them (no XDP program
	 * there). Followed while serving; a function with tier = xdp is
	 * answered there whatever this says.
	 */
	enum rr_peer peer;
	bool xdp_tx_ok;
	uint64_t next_watch_ms;	    /* CLOCK_MONOTONIC: netlink's next look */
	uint64_t next_lock_look_ms; /* the queues' locks' (cells/supervise.c) */
	/* A worker was in a function, or made calls, since the last tick:
	 * the supervisor looks again within 1 ms. */
	bool in_calls;
	bool ready; /* set-up completed: every socket exists */
	bool stuck; /* a worker thread did not come back from a function */
	/* Draining (reqrouterctl drain, or SIGTERM with drain_on_term):
	 * health fails so that routers move traffic away, requests are
	 * still answered, and the main loop exits once none has come for
	 * drain_quiet_ms or drain_timeout_ms have passed. */
	bool draining;
	uint32_t drain_quiet_ms;
	uint32_t drain_timeout_ms;
	/* The functions served over TCP too (tcp.c). */
	struct rr_tcp tcp;
	/* A reload under way (slots/reload.c), or NULL. */
	struct rr_reload *reload;
	/* Has every serving loop pass a quiescent point after an instance
	 * swap: true once none can still use an instance swapped out before
	 * @epoch, false if one has not come back from a function within
	 * ~5 s. The cells' rr_cells_quiesce(), set at set-up: the slots,
	 * which swap, sit below the loops and the cells that run them. */
	bool (*quiesce)(struct rr_invoker *inv, uint64_t epoch);
	/* Starts the workers of one more cell group, threads nthreads on
	 * (a deployed function with cells of its own): invoker/threads.c's
	 * rr_invoker_add_group(), set by main.c once set up; NULL before.
	 * 0, or -errno with @msg set. */
	int (*add_group)(struct rr_invoker *inv, char *msg, size_t msglen);
	/* Heavy hitters, followed from the XDP program's sketches (hh.c);
	 * NULL if they could not be set up. */
	struct rr_hh *hh;
	/* The main loop's longest stretch between two waits, in which it
	 * answered nobody (main.c): since start, and since the last GET
	 * /metrics. */
	uint64_t stall_max_ns;
	uint64_t stall_scrape_ns;
	/* By enum rr_control_event and enum rr_http_event (metrics). */
	uint64_t control_events[RR_CONTROL_EV_MAX];
	/* The functions' counters their taps count (rr_fn_tap(), on the
	 * main thread: features/capture.c), by slot. */
	uint64_t tap_counters[RR_MAX_SLOTS][RR_FN_MAX_COUNTERS];
	/* Tapped answers not handed whole to their tap (capture.c). */
	uint64_t tap_lost;
	uint64_t http_events[RR_HTTP_EV_MAX];
};

static inline struct rr_sock *rr_sock_at(struct rr_invoker *inv, uint32_t q,
					 uint32_t t, uint32_t slot)
{
	return &inv->socks[(q * RR_MAX_THREADS + t) * RR_MAX_SLOTS + slot];
}

static inline struct rr_worker *rr_worker_at(struct rr_invoker *inv, uint32_t q,
					     uint32_t t)
{
	return &inv->workers[q * RR_MAX_THREADS + t];
}

/* The first of slot @s's workers in each queue: its cell group's. */
static inline uint32_t rr_first_thread(const struct rr_invoker *inv,
				       const struct rr_slot *s)
{
	return s->cell_group * inv->group_threads;
}

/*
 * A worker's index (worker->index) is queue * RR_MAX_THREADS + thread:
 * laid out for RR_MAX_THREADS per queue, so threads come and go without
 * anything moving. Every worker index of an invoker, running or not, is
 * below RR_NWORKERS(inv); function instances hold a state for each.
 */
#define RR_MAX_WORKERS (RR_MAX_QUEUES * RR_MAX_THREADS)
#define RR_NWORKERS(inv) ((inv)->nqueues * RR_MAX_THREADS)

/* The start of the UMEM frame that @addr points into. */
static inline uint64_t rr_frame_of(uint64_t addr)
{
	return addr & ~(uint64_t)(RR_FRAME_SIZE - 1);
}

/* The queue's fill/completion lock, with its holder recorded: worker
 * index + 1, or RR_LOCK_MAIN for the main thread. */
#define RR_LOCK_MAIN UINT32_MAX

/*
 * Taken: every holder has its own view of the two rings (a cell's copy
 * of struct rr_umem), so it first catches up with what the last holder
 * did to them.
 */
static inline void rr_umem_locked(struct rr_umem *u, uint32_t owner)
{
	u->fill.cached_prod =
		__atomic_load_n(u->fill.producer, __ATOMIC_ACQUIRE);
	u->fill.cached_cons =
		__atomic_load_n(u->fill.consumer, __ATOMIC_ACQUIRE) +
		u->fill.size;
	u->comp.cached_prod =
		__atomic_load_n(u->comp.producer, __ATOMIC_ACQUIRE);
	u->comp.cached_cons =
		__atomic_load_n(u->comp.consumer, __ATOMIC_ACQUIRE);
	u->sh->fill_prod = u->fill.cached_prod;
	u->sh->comp_cons = u->comp.cached_cons;
	u->sh->divert = 0;
	__atomic_store_n(&u->sh->owner, owner, __ATOMIC_RELEASE);
}

/* For the workers, whose rounds wait for it. The main thread never
 * waits for a lock a cell can hold: rr_umem_trylock(), core/frame.c. */
static inline void rr_umem_lock(struct rr_umem *u, uint32_t owner)
{
	pthread_spin_lock(&u->sh->lock);
	rr_umem_locked(u, owner);
}

static inline void rr_umem_unlock(struct rr_umem *u)
{
	__atomic_store_n(&u->sh->owner, 0, __ATOMIC_RELEASE);
	pthread_spin_unlock(&u->sh->lock);
}

/* Single-writer counters: a relaxed store is a plain move on x86, and the
 * main thread's relaxed loads then never see a torn value. */
static inline void rr_stat_add(uint64_t *ctr, uint64_t n)
{
	__atomic_store_n(ctr, *ctr + n, __ATOMIC_RELAXED);
}

static inline uint64_t rr_stat_read(const uint64_t *ctr)
{
	return __atomic_load_n(ctr, __ATOMIC_RELAXED);
}

/* A worker entering (odd) or leaving (even) a function's call: the
 * supervisor times the odd stretches against max_run_us (cells/watch.h). */
static inline void rr_call_step(struct rr_worker *w)
{
	__atomic_store_n(&w->rep->call_seq, ++w->call_seq, __ATOMIC_RELEASE);
}

/* How often the main thread follows the host (rr_invoker_watch()) and
 * looks at the queues' locks (cells/supervise.c), in ms. */
#define RR_WATCH_MS 100

#endif /* RR_INVOKER_H */
