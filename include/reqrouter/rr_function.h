/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The function API: what a file in functions/ sees.
 *
 * A function answers one UDP request. It is handed the request payload in
 * the frame the request arrived in and writes its reply over it, in place:
 * buf holds len bytes of request and has room for at most room bytes of
 * reply. It returns the reply length (0..room), RR_NO_REPLY to answer
 * nothing on purpose, or a negative errno, in which case nothing is sent
 * and the drop is counted.
 *
 * Handlers are called concurrently from several workers. They must not
 * block: a worker serves a whole batch of requests between two system
 * calls. A worker is a thread of reqrouter or, with isolation = cell, a
 * process of its own forked after init(): what init() allocated is then a
 * copy per cell, and a write to it is seen by that cell alone. State that
 * the handler changes and every worker must see lives in memory from
 * rr_fn_shared_alloc().
 *
 * A file registers its function with one line:
 *
 *	RR_FUNCTION(reverse, 1232, "reverse the payload", reverse_handler);
 *
 * or, for a pure function (see RR_FN_PURE):
 *
 *	RR_FUNCTION_FLAGS(reverse, 1232, "reverse the payload",
 *			  reverse_handler, RR_FN_PURE);
 *
 * A function with settings and state of its own (API version 2) names its
 * lifecycle hooks; every one is optional:
 *
 *	RR_FUNCTION_DEF(kv, 7379,
 *			"look a key up in a table (reloaded on SIGHUP)",
 *			.handler = kv_handler, .init = kv_init,
 *			.fini = kv_fini, .flags = RR_FN_OPT_IN);
 *
 * The build links every .c file of functions/ into reqrouter and the tools, so
 * dropping a file here is all it takes. A function may also ship an XDP
 * implementation in functions/NAME.bpf.c (see rr_xdp.h).
 */
#ifndef RR_FUNCTION_H
#define RR_FUNCTION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include <reqrouter/rr_gather.h>

/* The version of this API; struct rr_function records the one a function
 * was built against. */
#define RR_FUNCTION_API 4

/* A handler's return value: the request gets no reply, on purpose (a
 * protocol that ignores some messages); counted as "no_reply", not as an
 * error. Outside the range of -errno. */
#define RR_NO_REPLY (-65536)

/* Counters a function may register (rr_fn_counter()). */
#define RR_FN_MAX_COUNTERS 32

/* Context of one request; ports in host byte order. */
struct rr_request {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} src, dst;
	uint16_t src_port;
	uint16_t dst_port;
	uint32_t queue;	 /* RX queue the request arrived on */
	uint32_t thread; /* worker index within that queue */
	/* API 2. What init() made (NULL without init), and what
	 * init_worker() made for the calling worker (NULL without it):
	 * nobody else uses it while the handler runs, so no lock. */
	void *state;
	void *worker_state;
	/* The calling worker's copy of the function's counters, indexed by
	 * what rr_fn_counter() returned; see rr_fn_count(). */
	uint64_t *counters;
	/* Where the handler says more about this reply: RR_REPLY_* bits
	 * (see rr_fn_no_cache()). */
	uint32_t *reply_flags;
	/* API 3. How the request came: RR_TRANSPORT_UDP, or RR_TRANSPORT_TCP
	 * for an RR_FN_TCP function, one framed message of a connection.
	 * Over TCP, room is the framing's limit (65535 bytes) and the reply
	 * is never cut to fit a datagram; queue and thread are 0. */
	uint32_t transport;
	/* API 4. reqrouter's, for rr_gather_start(): the worker and the
	 * frame the request is in. NULL where the request cannot wait for
	 * a gather (over TCP, in the tools). */
	struct rr_gather_ctx *gather;
};

#define RR_TRANSPORT_UDP 0
#define RR_TRANSPORT_TCP 1

/* This reply must not be cached although the function is pure: it was
 * shaped by the room offered (a truncated DNS answer), not by the request
 * alone. */
#define RR_REPLY_NO_CACHE (1U << 0)
/* This reply to a DNS query whose valid server cookie ends it ends with
 * the same cookie: see rr_fn_cache_cookie(). */
#define RR_REPLY_CACHE_COOKIE (1U << 1)

typedef int (*rr_handler_t)(const struct rr_request *req, uint8_t *buf,
			    size_t len, size_t room);

/* One "key = value" line of the function's [function NAME] section that
 * is not one of reqrouter's own keys (port, enabled, tier, ...). */
struct rr_fn_setting {
	const char *key;
	const char *value;
	const char *file; /* the config file it came from */
	unsigned int line;
};

struct rr_fn_env;	 /* reqrouter's side of an init() call */
struct rr_gather_ctx;	 /* reqrouter's side of a gather */
struct rr_gather_result; /* a completed gather (below) */

/* What init() is given. */
struct rr_fn_config {
	const char *name; /* the function's name */
	uint16_t port;	  /* the port it is served on */
	/* Every setting of its section, in file order. init() must refuse a
	 * key it does not know (rr_fn_error()), as reqrouter does for its
	 * own sections. */
	const struct rr_fn_setting *settings;
	size_t nsettings;
	uint32_t workers; /* worker threads that will call the handler */
	struct rr_fn_env *env;
};

/*
 * The lifecycle of a function with state, all optional, all called from
 * reqrouter's main thread, never concurrently with each other:
 *
 * init(cfg, &state) runs before the first request, and again on every
 * reload (SIGHUP) into a new state while the old one keeps serving; it
 * returns 0 or a negative errno after saying why with rr_fn_error(). A
 * failing init stops start-up; a failing reload keeps the old state.
 *
 * init_worker(state, worker, &worker_state) runs once per worker for
 * each new state (worker 0..cfg->workers-1): per-worker scratch that the
 * handler may use without locks. An instance whose init_worker() left
 * every worker's state NULL keeps serving when threads are added (the new
 * workers get NULL too); else threads added make a new instance, init()
 * included.
 *
 * fini_worker() and fini() free them, once no worker can still be inside
 * the handler with that state: at exit, or after every worker has moved
 * on to the state a reload made. Then reqrouter unmaps what init() got
 * from rr_fn_shared_alloc().
 */
struct rr_function {
	const char *name;
	const char *description;
	rr_handler_t handler;
	uint16_t port;	/* default port; the config may move it */
	uint32_t flags; /* RR_FN_* */
	uint32_t api;	/* RR_FUNCTION_API it was built against */
	/* A pure function's requests start with this many bytes (0-8) of
	 * transaction ID, which its reply echoes at the same place and which
	 * change nothing else in it (a DNS message ID: 2). The reply cache
	 * then answers a request that differs from a cached one only there,
	 * with the new ID in the reply. */
	uint8_t id_bytes;
	/* API 3. How an RR_FN_TCP function's messages are delimited on a
	 * connection: RR_TCP_LEN16 (the only one so far). */
	uint8_t tcp_framing;
	int (*init)(const struct rr_fn_config *cfg, void **state);
	void (*fini)(void *state);
	int (*init_worker)(void *state, uint32_t worker, void **worker_state);
	void (*fini_worker)(void *state, void *worker_state);
	/* API 4, with RR_FN_GATHER: writes the reply of a request whose
	 * handler started a gather, once the gather is complete (see
	 * "Gathers" below); NULL: rr_gather_format(). */
	int (*gathered)(const struct rr_request *req,
			const struct rr_gather_result *res, uint8_t *buf,
			size_t room);
};

/*
 * The function is pure: the same request payload always gets the same
 * reply, whoever sends it, whenever, and whatever room it is offered (a
 * function that shortens its reply to fit room is not pure). Its replies
 * may then be answered from a cache inside the XDP program (config:
 * cache, cache_ttl); the cache sends a stored reply only where it fits the
 * new request's room. A function whose replies depend on its settings is
 * pure only between reloads; a reload empties its cache entries.
 */
#define RR_FN_PURE (1U << 0)
/* Served only where the config has a [function NAME] section for it (a
 * function that cannot work without settings, such as a zone file). */
#define RR_FN_OPT_IN (1U << 1)

/*
 * Served over TCP as well, on the same port, through the kernel's TCP
 * (reqrouter's own threads or cell, never the AF_XDP workers): the same
 * handler gets each message of a connection, framed as tcp_framing says,
 * and its reply goes back framed the same way, in the order the messages
 * came. The config's "tcp = no" turns it off; "tcp = yes" turns it on for
 * a function without the flag (which must then speak RR_TCP_LEN16).
 */
#define RR_FN_TCP (1U << 2)
/*
 * The function sizes its UDP replies itself, to what the client says it
 * accepts (DNS: 512 bytes, or the EDNS UDP size it offers): its
 * max_amplification then defaults to 0, no limit beyond that size, so
 * that a reply the client asked for is never cut. The config can still
 * set one.
 */
#define RR_FN_CLIENT_SIZED (1U << 3)
/*
 * Its replies are rate-limited per source prefix with NSD's RRL defaults
 * (API 3, compatible: a flag): rate_limit = 200 replies a second per /24
 * or /64, slip 2. The limiter runs in reqrouter's XDP program, before
 * either tier; without the flag a function has every function's default,
 * 100000 replies a second per prefix, unless the config sets rate_limit
 * (0: off).
 */
#define RR_FN_RATE_LIMITED (1U << 4)
/*
 * Its slip reply is DNS's: the header and question echoed with QR and TC
 * set and every other count zero, which sends a real client to TCP. Built
 * in XDP, or by a worker where replies from XDP would be lost (a veth
 * whose peer runs no XDP program); a rate-limited function without it
 * drops where it would slip.
 */
#define RR_FN_SLIP_TC (1U << 5)
/*
 * Its XDP program (functions/NAME.bpf.c) answers nothing: it only looks
 * at each request and punts it with a class (RR_XDP_PUNT_CLASS,
 * rr_xdp.h), which steering = groups sends to that class's workers. Such
 * a program never sends a reply from XDP, so it runs where those would be
 * lost too (a veth whose peer has no XDP program).
 */
#define RR_FN_XDP_CLASSIFIER (1U << 6)

/*
 * The handler may start a gather (rr_gather_start()) and leave the reply
 * for later: reqrouter then opens a gather port per worker, and with
 * gather_scatter = tc puts the scatter program on the interface's egress
 * (docs/DESIGN.md, "Gathers").
 */
#define RR_FN_GATHER (1U << 7)

/*
 * An answer late by more than a moment is of no use to its client, who
 * has asked again by then (API 3, compatible: a flag): deadline_us
 * defaults to RR_DEADLINE_US_LATE_USELESS, 300 ms, below the first
 * retransmission of common DNS resolvers (Unbound's 376 ms), after which
 * a late answer is discarded. A request older than that when its worker
 * reaches it is dropped, counted as expired, without a call; without the
 * flag a function has no deadline unless the config sets deadline_us
 * (docs/DESIGN.md, "Deadlines").
 */
#define RR_FN_LATE_USELESS (1U << 8)

/*
 * A DNS function that speaks DNS Cookies (RFC 7873; server cookies as
 * <reqrouter/rr_cookie.h> makes them): reqrouter keeps its cookie secret
 * (the config's cookie_secret, or one made at start; the previous one
 * still handed over for an hour after a reload changed it), which init()
 * gets from rr_fn_cookie_secrets(), and its XDP program checks a query's
 * server cookie with the same secrets: a query with a valid one skips the
 * rate limit, one with any cookie the reply cache (docs/DESIGN.md,
 * "DNS Cookies in XDP"). API 4, compatible: a flag.
 */
#define RR_FN_DNS_COOKIES (1U << 9)

/*
 * Validates its clients with tokens (rr_token_make(), rr_token_check()):
 * a cell running it keeps the table of validated sources mapped, to mark
 * a source whose token is valid. Without the flag, rr_token_check() in a
 * cell still tells a valid token from a bad one, but cannot validate its
 * source: a cell that can write the table could lift any address's
 * prefix budgets, for every function (docs/DESIGN.md, "Validated
 * sources"). Threads need no flag. API 4, compatible: a flag.
 */
#define RR_FN_TOKENS (1U << 10)

/* Framings for tcp_framing: each message is preceded by its length,
 * two bytes in network order (DNS over TCP, RFC 1035 4.2.2, RFC 7766). */
#define RR_TCP_LEN16 0

/*
 * For init(): says why it failed, as one line that names the function and,
 * when @s is given, the file and line of that setting. Returns -EINVAL, so
 * that "return rr_fn_error(cfg, s, ...);" reads naturally.
 */
int rr_fn_error(const struct rr_fn_config *cfg, const struct rr_fn_setting *s,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * For init(): the one reader of a number in a setting. Reads setting @s
 * as a whole number from @min to @max into *@out: decimal digits alone,
 * no sign, blank or unit; leading zeros are allowed. A size or a duration
 * is such a number in the unit its key names (work's max_us, dns's
 * udp_max_payload). Returns 0; or -EINVAL, *@out untouched (so it may hold
 * the default), after saying as rr_fn_error() does
 * "KEY must be a number from MIN to MAX, not 'VALUE'":
 *
 *	uint64_t v;
 *
 *	if (!strcmp(s->key, "capacity")) {
 *		ret = rr_fn_setting_uint(cfg, s, 1, 1000000, &v);
 *		if (!ret)
 *			capacity = (uint32_t)v;
 *	}
 */
int rr_fn_setting_uint(const struct rr_fn_config *cfg,
		       const struct rr_fn_setting *s, uint64_t min,
		       uint64_t max, uint64_t *out);

/*
 * For init(): reads setting @s as yes or no into *@out, as reqrouter reads
 * its own: yes, true, on or 1; no, false, off or 0; in any case. Returns
 * 0; or -EINVAL, *@out untouched, after saying as rr_fn_error() does
 * "KEY must be yes or no, not 'VALUE'".
 */
int rr_fn_setting_bool(const struct rr_fn_config *cfg,
		       const struct rr_fn_setting *s, bool *out);

/*
 * From init(), fini() or a thread of the function's own, never from the
 * handler (count there, rr_fn_count()): one line in reqrouter's log,
 * "function NAME: ...", a warning (@warn) or a notice. For what the
 * operator must hear of while serving: an output that cannot be written,
 * a reader gone and back.
 */
void rr_fn_log(const char *name, bool warn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * For init(): registers a counter, exported as
 * reqrouter_function_events_total{function="FUNCTION",counter="NAME",...}
 * (@name: lower case letters, digits and '_'; @help is for the reader of
 * the code: it is not exported). Returns its index for rr_fn_count(), or
 * -errno with the reason said. Registering the same name again (on a
 * reload) returns the same index, so the count goes on.
 */
int rr_fn_counter(const struct rr_fn_config *cfg, const char *name,
		  const char *help);

/* The cookie secrets of an RR_FN_DNS_COOKIES function (16 bytes each). */
struct rr_fn_cookie_secrets {
	uint8_t current[16];
	uint8_t previous[16]; /* the one before a rotation */
	int has_previous;
	uint64_t previous_until; /* Unix time: good until then */
};

/*
 * For init(): the secrets reqrouter keeps for this RR_FN_DNS_COOKIES
 * function into *@out; 0, or -ENOENT where there are none (a tool that
 * runs the function outside reqrouter: it may make one of its own).
 */
int rr_fn_cookie_secrets(const struct rr_fn_config *cfg,
			 struct rr_fn_cookie_secrets *out);

/*
 * Tokens (docs/FUNCTIONS.md, "Tokens: proving a source"), as QUIC's
 * Retry: a function that wants to know that a request's source is not
 * spoofed answers a first request with a token made for its source
 * address (rr_token_make()) and asks the client to echo it; a request
 * that brings it back (rr_token_check()) came from that address, which is
 * then validated: reqrouter's XDP program holds it to the function's
 * rate_limit_validated instead of its prefixes' budgets, for
 * validated_for (docs/DESIGN.md, "Validated sources"). A token is
 * RR_TOKEN_LEN opaque bytes, good for RR_TOKEN_LIFE_S seconds, for the
 * address and the function's port it was made for, made under a key
 * reqrouter draws at start (a restart makes the tokens before it
 * invalid). Both may be called from the handler, over UDP and TCP.
 * API 4, compatible: new calls.
 */
#define RR_TOKEN_LEN 16
#define RR_TOKEN_LIFE_S 300

/* For the handler: a token for @req's source into @buf (@room bytes).
 * Returns RR_TOKEN_LEN, or -ENOSPC (room too small), -EINVAL. */
int rr_token_make(const struct rr_request *req, uint8_t *buf, size_t room);

/*
 * For the handler: whether @token (@len bytes, as the client echoed it)
 * is one rr_token_make() made for @req's source and port within
 * RR_TOKEN_LIFE_S; a valid one validates the source. Returns 0 (valid),
 * or -EINVAL (not a token: a wrong length, version or reserved bytes),
 * -EACCES (not made here for this source: another address's, tampered),
 * -ETIMEDOUT (expired, or ahead of now). Each result is counted
 * (reqrouter_tokens_total{result=...}); none is an error to log.
 */
int rr_token_check(const struct rr_request *req, const uint8_t *token,
		   size_t len);

/*
 * For init(): @size bytes of zeroed memory shared by every worker of this
 * instance, threads and cells alike (an anonymous MAP_SHARED mapping,
 * made before the cells are forked, so it is at the same address in each:
 * pointers into it may be stored in it). reqrouter unmaps it after fini()
 * ran, so fini() must not free it. A reload's init() gets new memory; the
 * old stays with the old state until that is freed. Returns NULL with the
 * reason said, as by rr_fn_error(), if the memory cannot be had.
 *
 * What the handler changes there is changed under workers that may be
 * other processes: guard it with atomics or with a lock that works across
 * processes (rr_fn_lock_t below; a plain pthread mutex does not), and
 * expect that a cell may be killed at any point of a call.
 */
void *rr_fn_shared_alloc(const struct rr_fn_config *cfg, size_t size);

/*
 * A lock for memory from rr_fn_shared_alloc(): a process-shared, robust
 * mutex. rr_fn_lock_init() it in init(), in that memory; it needs no
 * destroy (it goes with the memory).
 */
typedef struct {
	pthread_mutex_t mutex;
} rr_fn_lock_t;

/* Returns 0 or -errno. */
int rr_fn_lock_init(rr_fn_lock_t *l);

/* rr_fn_lock() took a lock whose holder died holding it. */
#define RR_FN_LOCK_RECOVERED 1

/*
 * Takes the lock. Returns 0; or RR_FN_LOCK_RECOVERED when a cell died
 * (was killed) holding it: the lock is now the caller's and usable again,
 * but what it guards may be half changed, for the caller to repair or to
 * accept; or -errno, the lock not taken. Hold it briefly: handlers must
 * not block.
 */
int rr_fn_lock(rr_fn_lock_t *l);

void rr_fn_unlock(rr_fn_lock_t *l);

/* For the handler: adds @n to counter @idx; the worker's own copy, so a
 * plain add. */
static inline void rr_fn_count(const struct rr_request *req, int idx,
			       uint64_t n)
{
	uint64_t *c;

	if (idx < 0 || idx >= RR_FN_MAX_COUNTERS)
		return;
	/* Read by the metrics thread: a relaxed store is a plain move. */
	c = &req->counters[idx];
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

/*
 * A tap (API 4, compatible): the requests the in-kernel tier answers for
 * the function (the reply cache's answers, its XDP program's), which no
 * handler sees, one in a sample, handed to the function whole. What the
 * tap gets for one answer, all of it valid during the call only:
 */
struct rr_tap_answer {
	/* The request as a handler would see it: family, addresses,
	 * ports, queue (thread 0), state (worker_state NULL), and counters
	 * of the main thread's for rr_fn_count(). */
	const struct rr_request *req;
	const uint8_t *query; /* the request's payload, as it came */
	size_t query_len;
	const uint8_t *reply; /* the reply's payload, as it left */
	size_t reply_len;
	uint64_t arrival_ns; /* CLOCK_REALTIME: the request in XDP */
	uint64_t sent_ns;    /* CLOCK_REALTIME: its reply built */
	uint32_t from;	     /* RR_TAP_CACHE, RR_TAP_PROGRAM */
};

#define RR_TAP_CACHE 1	 /* answered by the reply cache */
#define RR_TAP_PROGRAM 2 /* answered by the function's XDP program */

typedef void (*rr_tap_t)(void *arg, const struct rr_tap_answer *a);

/*
 * For init(): hands one in @sample (1: all) of what the in-kernel tier
 * answers for this instance to @tap, with @arg (the instance's state,
 * or a part of it, which must live until fini()). Called in reqrouter's
 * main process, on its main thread, some milliseconds after the answer,
 * never concurrently with itself: it must not block. What the XDP
 * program's ring had no room for is never seen, and counted
 * (reqrouter_capture_lost_total). 0, or -errno with the reason said.
 */
int rr_fn_tap(const struct rr_fn_config *cfg, uint32_t sample, rr_tap_t tap,
	      void *arg);

/* For the handler: keep this reply out of the reply cache. */
static inline void rr_fn_no_cache(const struct rr_request *req)
{
	if (req->reply_flags)
		*req->reply_flags |= RR_REPLY_NO_CACHE;
}

/*
 * For a handler of DNS Cookies (RR_FN_DNS_COOKIES): this reply answers a
 * query whose COOKIE option, last in it, holds a server cookie valid for
 * its source, and it ends with the same 24 bytes (the client's cookie
 * echoed). The reply cache keeps it without them and answers the same
 * query from any client whose cookie the XDP program finds valid and
 * young enough to echo (RR_COOKIE_RENEW_S), with that client's cookie in
 * their place. rr_fn_no_cache() wins over it.
 */
static inline void rr_fn_cache_cookie(const struct rr_request *req)
{
	if (req->reply_flags)
		*req->reply_flags |= RR_REPLY_CACHE_COOKIE;
}

/*
 * Gathers (API 4): a handler asks a group of UDP endpoints, its targets,
 * and answers its request once from what they answered, without waiting
 * for them. The wire format and the reductions are in rr_gather.h.
 *
 *	static int group;	// from rr_fn_group() in init()
 *
 *	static int handler(const struct rr_request *req, uint8_t *buf,
 *			   size_t len, size_t room)
 *	{
 *		struct rr_gather_spec g = {
 *			.group = group, .payload = buf, .len = len,
 *			.reduce = RR_REDUCE_SUM,
 *		};
 *
 *		return rr_gather_start(req, &g);
 *	}
 *
 * The request is kept (its frame stays with the worker) and its reply is
 * written by the function's gathered() hook once the gather completes:
 * when every target it was sent to answered (or `need` of them), or at
 * its deadline with what came by then. A target's reply counts once, from
 * the target's own address and port, while the gather is open; late,
 * duplicate and stray ones are dropped in XDP and counted.
 */
/* A handler's return value: its reply comes from gathered(). What
 * rr_gather_start() returns when it started one. */
#define RR_GATHER_PENDING (-65537)

/* Bytes of its own a function may keep with a gather (rr_gather_spec's
 * cookie), handed back to gathered(). */
#define RR_SG_COOKIE_MAX 64

/* One target's own payload (rr_gather_spec.payloads). */
struct rr_gather_payload {
	const void *data;
	size_t len; /* at most 1200 bytes */
};

struct rr_gather_spec {
	int group; /* rr_fn_group()'s number */
	/* Sent to every target, behind the header (at most 1200 bytes). */
	const void *payload;
	size_t len;
	/* Or a payload per target, sent instead: payloads[i] to the i-th
	 * target asked (targets[i], or the group's target i when targets
	 * is NULL); NULL: payload to all. Sent before rr_gather_start()
	 * returns, so they need not outlive the call. */
	const struct rr_gather_payload *payloads;
	/* The group's targets to ask, by index; NULL: all of them. */
	const uint16_t *targets;
	uint32_t ntargets;
	/* Complete after this many replies; 0: all that were asked. */
	uint32_t need;
	/* Complete at this age with what came; 0: the function's
	 * gather_deadline_us. */
	uint32_t deadline_us;
	enum rr_reduce reduce;
	uint32_t k; /* RR_REDUCE_TOPK: how many values (1..16) */
	const void *cookie;
	size_t cookie_len; /* at most RR_SG_COOKIE_MAX */
};

/* One target's reply body in a CONCAT result, in arrival order; the
 * next part starts at the next 2-byte boundary. */
struct rr_gather_part {
	uint16_t target;
	uint16_t len;
	uint8_t body[];
};

struct rr_gather_result {
	uint32_t asked;	   /* targets the gather was sent to */
	uint32_t answered; /* of those, whose replies are in the result */
	/* RR_SG_MAX_TARGETS bits each, by target index: asked, and
	 * answered (in the result). */
	const uint64_t *asked_bits;
	const uint64_t *answered_bits;
	int timed_out; /* completed by its deadline */
	enum rr_reduce reduce;
	uint64_t value; /* SUM, MIN, MAX, COUNT, OR (MIN of none: 0) */
	/* TOPK: the k largest values, descending; ntopk may be fewer. */
	uint32_t ntopk;
	uint32_t topk[16];
	/* CONCAT: struct rr_gather_part records, len bytes in all; parts
	 * that did not fit RR_SG_CONCAT_ROOM are not answered. */
	const uint8_t *data;
	size_t len;
	const void *cookie;
	size_t cookie_len;
};

/* The room for a CONCAT result's parts. */
#define RR_SG_CONCAT_ROOM 3072

/*
 * For init(): the number of the config's group [group @name], its target
 * count in *ntargets (if not NULL). -errno with the reason said, as by
 * rr_fn_error(), when there is none or the function is not RR_FN_GATHER.
 */
int rr_fn_group(const struct rr_fn_config *cfg, const char *name,
		uint32_t *ntargets);

/*
 * For the handler: starts gather @g for @req. Returns RR_GATHER_PENDING,
 * for the handler to return; or -EBUSY when the function has
 * gather_limit gathers outstanding on this worker, -EINVAL for a bad
 * spec, -EOPNOTSUPP where the request cannot wait (over TCP),
 * -EALREADY when this request started one already, -errno when the
 * template could not be sent: for the handler to return (the request is
 * counted unanswered) or to answer otherwise. A request whose gather
 * started is answered by the gather, whatever the handler returns.
 */
int rr_gather_start(const struct rr_request *req,
		    const struct rr_gather_spec *g);

/*
 * The default reply of a gather (gathered() NULL), text: for a
 * reduction "VALUE ANSWERED/ASKED", for TOPK the values separated by
 * ',' ("-" for none), for CONCAT each part's body and '\n', then the
 * line "ANSWERED/ASKED"; and when some missed, " missed I,J" (their
 * indexes: the first 32, or as many as @room leaves space for, then
 * ",..."), then '\n'. Without a gathered() hook, @room is cut to the
 * function's amplification limit. Returns the length, or -EMSGSIZE.
 */
int rr_gather_format(const struct rr_gather_result *res, uint8_t *buf,
		     size_t room);

/* Registration collects pointers in the "rr_functions" section; the linker
 * provides __start_/__stop_ symbols around it. Pointers rather than the
 * structs themselves keep the section a dense array whatever padding or
 * sanitizer redzones the compiler adds to the structs. The variadic part
 * is designated initializers of struct rr_function. */
#define RR_FUNCTION_DEF(_name, _port, _desc, ...)                      \
	static const struct rr_function rr_function_##_name = {        \
		.name = #_name,                                        \
		.description = _desc,                                  \
		.port = _port,                                         \
		.api = RR_FUNCTION_API,                                \
		__VA_ARGS__                                            \
	};                                                             \
	static const struct rr_function *const rr_function_ptr_##_name \
		__attribute__((used, section("rr_functions"))) =       \
			&rr_function_##_name

#define RR_FUNCTION_FLAGS(_name, _port, _desc, _handler, _flags)  \
	RR_FUNCTION_DEF(_name, _port, _desc, .handler = _handler, \
			.flags = _flags)

#define RR_FUNCTION(_name, _port, _desc, _handler) \
	RR_FUNCTION_FLAGS(_name, _port, _desc, _handler, 0)

#endif /* RR_FUNCTION_H */
