// SPDX-License-Identifier: GPL-2.0
/*
 * The tables of reqrouter's own settings (see settings.h), [reqrouter]'s
 * and a [function NAME]'s, and what reads them: the defaults, one parser
 * for a key's and a flag's value, the --help line of a row and its value
 * and default in words. The documents made from the tables are
 * settings_doc.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "parse.h"
#include "settings.h"
#include "shared/cache.h"
#include "util.h"

#define FIELD(f)                              \
	.off = offsetof(struct rr_config, f), \
	.size = sizeof(((struct rr_config *)0)->f)
#define COUNT(f) .count = offsetof(struct rr_config, f)

/* An enum field is written as an int: every one of them must be one. */
_Static_assert(sizeof(enum rr_xdp_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum rr_tier) == sizeof(int), "enum size");
_Static_assert(sizeof(enum rr_tx_csum) == sizeof(int), "enum size");
_Static_assert(sizeof(enum rr_isolation) == sizeof(int), "enum size");
_Static_assert(sizeof(enum rr_answer_for) == sizeof(int), "enum size");
_Static_assert(sizeof(enum rr_worker_priority) == sizeof(int), "enum size");

/* The order is --help's. */
const struct rr_setting rr_settings[] = {
	{ .key = "interface",
	  .flag = "interface",
	  .letter = 'i',
	  .arg = "IFACE",
	  .type = RR_SETTING_STRING,
	  FIELD(ifname),
	  .check = rr_check_ifname,
	  .complete = RR_COMPLETE_IFACE,
	  .help = "network interface to serve (required)" },
	{ .key = "queues",
	  .flag = "queues",
	  .letter = 'q',
	  .arg = "N",
	  .type = RR_SETTING_U32,
	  FIELD(queues),
	  .min = 1,
	  .max = RR_MAX_QUEUES,
	  .def = 0,
	  .def_text = "all the interface has",
	  .help = "serve RX queues 0..N-1" },
	{ .key = "threads",
	  .flag = "threads",
	  .letter = 't',
	  .arg = "N",
	  .type = RR_SETTING_U32,
	  FIELD(threads),
	  .min = 1,
	  .max = RR_MAX_THREADS,
	  .def = 1,
	  .help = "worker threads per queue" },
	{ .flag = "ports",
	  .letter = 'p',
	  .arg = "PORT[,PORT...]",
	  .type = RR_SETTING_PORTS,
	  FIELD(only_ports),
	  COUNT(n_only_ports),
	  .max = RR_MAX_SLOTS,
	  .def_text = "all",
	  .help = "serve only the functions on these ports" },
	{ .flag = "config",
	  .letter = 'c',
	  .arg = "FILE",
	  .type = RR_SETTING_NONE,
	  .complete = RR_COMPLETE_FILE,
	  .help = "read settings from FILE; flags override it" },
	{ .key = "mode",
	  .type = RR_SETTING_ENUM,
	  FIELD(mode),
	  .names = rr_mode_names,
	  .def = RR_MODE_AUTO,
	  .help = "XDP mode; auto is native, falling back to SKB with a warning" },
	{ .flag = "native",
	  .letter = 'N',
	  .type = RR_SETTING_CHOICE,
	  FIELD(mode),
	  .def = RR_MODE_NATIVE,
	  .help = "require native (driver) XDP" },
	{ .flag = "skb",
	  .letter = 'S',
	  .type = RR_SETTING_CHOICE,
	  FIELD(mode),
	  .def = RR_MODE_SKB,
	  .help = "use SKB (generic) XDP and copy mode" },
	{ .key = "busy_poll",
	  .flag = "busy-poll",
	  .letter = 'B',
	  .type = RR_SETTING_BOOL,
	  FIELD(busy_poll),
	  .help = "busy-poll the rings instead of sleeping" },
	{ .key = "worker_priority",
	  .flag = "worker-priority",
	  .arg = "PRIORITY",
	  .type = RR_SETTING_ENUM,
	  FIELD(worker_priority),
	  .names = rr_worker_priority_names,
	  .def = RR_PRIORITY_NORMAL,
	  .help = "run each worker beside its CPU's receive work (normal), ahead of it (realtime: SCHED_FIFO 1, for CPUs left to the workers; never with -B), or ahead only while its requests wait over 1 ms (auto)" },
	{ .key = "coalesce_us",
	  .flag = "coalesce-us",
	  .arg = "US",
	  .type = RR_SETTING_U32,
	  FIELD(coalesce_us),
	  .max = RR_MAX_COALESCE_US,
	  .def = 0,
	  .unit = "microseconds",
	  .help = "under load, a worker sleeps this long between rounds instead of being woken per request: fewer wake-ups, a request up to this much later (0: off)" },
	{ .flag = "tier",
	  .arg = "TIER",
	  .type = RR_SETTING_ENUM,
	  FIELD(tier),
	  COUNT(tier_set),
	  .names = rr_tier_names,
	  .def_text = "each function's own, auto",
	  .help = "answer every function in this tier" },
	{ .key = "answer_for",
	  .flag = "answer-for",
	  .arg = "WHICH",
	  .type = RR_SETTING_ENUM,
	  FIELD(answer_for),
	  .names = rr_answer_for_names,
	  .def = RR_ANSWER_LOCAL,
	  .help = "answer requests for the host's own addresses only (local), or for any destination sent to the interface (any: a router's transit traffic too)" },
	{ .key = "vlans",
	  .flag = "vlans",
	  .arg = "WHICH",
	  .type = RR_SETTING_VLANS,
	  FIELD(vlans),
	  .def_text = "host",
	  .help = "the VLAN tags answered: the host's own VLAN devices on the interface, followed (host), every tag (any), or VLAN IDs and ranges, with host among them or not (\"host,100-110\"); a frame with another tag goes to the kernel" },
	{ .flag = "no-cache",
	  .type = RR_SETTING_BOOL,
	  FIELD(no_cache),
	  .help = "never answer from the reply cache, whatever the functions' settings" },
	{ .key = "batch",
	  .flag = "batch",
	  .letter = 'b',
	  .arg = "N",
	  .type = RR_SETTING_U32,
	  FIELD(batch),
	  .min = 1,
	  .max = RR_MAX_BATCH,
	  .def = 64,
	  .help = "descriptors per batch" },
	{ .key = "tx_csum",
	  .flag = "tx-csum",
	  .arg = "MODE",
	  .type = RR_SETTING_ENUM,
	  FIELD(tx_csum),
	  .names = rr_tx_csum_names,
	  .def = RR_TX_CSUM_AUTO,
	  .help = "reply UDP checksums" },
	{ .key = "gather_scatter",
	  .flag = "gather-scatter",
	  .arg = "HOW",
	  .type = RR_SETTING_ENUM,
	  FIELD(gather_scatter),
	  .names = rr_scatter_names,
	  .def = RR_SCATTER_UMEM,
	  .help = "how a gather's copies are made: built in the UMEM and sent from the AF_XDP socket to targets that answered before (umem), through the worker's UDP socket (socket), or cloned from one template at TC egress (tc, as sgbpf does)" },
	{ .key = "cpus",
	  .flag = "cpus",
	  .arg = "LIST",
	  .type = RR_SETTING_CPUS,
	  FIELD(cpus),
	  COUNT(ncpus),
	  .max = RR_MAX_CPUS,
	  .def_text = "all allowed",
	  .help = "pin workers to these CPUs, e.g. 0-3,6" },
	{ .key = "metrics_file",
	  .flag = "metrics-file",
	  .arg = "FILE",
	  .type = RR_SETTING_STRING,
	  FIELD(metrics_file),
	  .complete = RR_COMPLETE_FILE,
	  .help = "rewrite FILE every second in Prometheus text format" },
	{ .key = "metrics_listen",
	  .flag = "metrics-listen",
	  .arg = "ADDR:PORT",
	  .type = RR_SETTING_STRING,
	  FIELD(metrics_listen),
	  .check = rr_check_listen,
	  .help = "serve GET /metrics and /healthz over HTTP on ADDR:PORT" },
	{ .key = "metrics_detail",
	  .flag = "metrics-detail",
	  .arg = "LEVEL",
	  .type = RR_SETTING_ENUM,
	  FIELD(metrics_detail),
	  .names = (const char *const[]){ "socket", "queue", "function", NULL },
	  .def = RR_DETAIL_QUEUE,
	  .help = "what per-socket metrics are summed over before export: nothing (socket), each queue's threads (queue), or every queue and thread (function)" },
	{ .key = "control",
	  .flag = "control",
	  .arg = "PATH",
	  .type = RR_SETTING_STRING,
	  FIELD(control),
	  .check = rr_check_control,
	  .complete = RR_COMPLETE_FILE,
	  .def_text = RR_RUN_DIR "/IFACE.sock",
	  .help = "control socket for reqrouterctl, or none" },
	{ .key = "control_group",
	  .flag = "control-group",
	  .arg = "GROUP",
	  .type = RR_SETTING_STRING,
	  FIELD(control_group),
	  .complete = RR_COMPLETE_GROUP,
	  .def_text = "root only",
	  .help = "let GROUP use the control socket too, for the commands that only read" },
	{ .key = "isolation",
	  .flag = "isolation",
	  .arg = "MODE",
	  .type = RR_SETTING_ENUM,
	  FIELD(isolation),
	  .names = rr_isolation_names,
	  .def = RR_ISOLATION_CELL,
	  .help = "how workers run (a cell is a process that contains a function's crash or overrun)" },
	{ .key = "drain_on_term",
	  .live = true,
	  .flag = "drain-on-term",
	  .type = RR_SETTING_BOOL,
	  FIELD(drain_on_term),
	  .help = "SIGTERM drains first: health fails, requests are answered until none came for " STR(
		  RR_DRAIN_QUIET_S) " s (" STR(RR_DRAIN_TIMEOUT_S) " s at most)" },
	{ .key = "tcp_max_connections",
	  .type = RR_SETTING_U32,
	  FIELD(tcp_max_connections),
	  .min = 1,
	  .max = RR_MAX_TCP_CONNECTIONS,
	  .def = RR_DEFAULT_TCP_CONNECTIONS,
	  .help = "open TCP connections at most, all functions together; past it, the one idle longest is closed for a new one (the new one if every one has a message or a reply under way)" },
	{ .key = "tcp_max_per_source",
	  .type = RR_SETTING_U32,
	  FIELD(tcp_max_per_source),
	  .min = 1,
	  .max = RR_MAX_TCP_CONNECTIONS,
	  .def = RR_DEFAULT_TCP_PER_SOURCE,
	  .help = "open TCP connections at most from one source address; past it, a new one is closed at once" },
	{ .key = "tcp_max_per_prefix",
	  .type = RR_SETTING_U32,
	  FIELD(tcp_max_per_prefix),
	  .min = 1,
	  .max = RR_MAX_TCP_CONNECTIONS,
	  .def = RR_DEFAULT_TCP_PER_PREFIX,
	  .help = "open TCP connections at most from one source prefix (tcp_v4_prefix, tcp_v6_prefix); past it, the prefix's own connection idle longest is closed for a new one (the new one if each of them has a message or a reply under way)" },
	{ .key = "tcp_v4_prefix",
	  .type = RR_SETTING_U32,
	  FIELD(tcp_v4_prefix),
	  .min = 1,
	  .max = 32,
	  .def = RR_DEFAULT_TCP_V4_PREFIX,
	  .unit = "bits",
	  .help = "IPv4 sources share tcp_max_per_prefix by this prefix" },
	{ .key = "tcp_v6_prefix",
	  .type = RR_SETTING_U32,
	  FIELD(tcp_v6_prefix),
	  .min = 1,
	  .max = 128,
	  .def = RR_DEFAULT_TCP_V6_PREFIX,
	  .unit = "bits",
	  .help = "IPv6 sources share tcp_max_per_prefix by this prefix (a /56: one site)" },
	{ .key = "tcp_idle_timeout",
	  .type = RR_SETTING_U32,
	  FIELD(tcp_idle_timeout_ms),
	  .min = 100,
	  .max = 3600000,
	  .def = RR_DEFAULT_TCP_IDLE_MS,
	  .unit = "milliseconds",
	  .help = "a TCP connection with no message under way and no reply unsent is closed after this long" },
	{ .key = "tcp_idle_timeout_full",
	  .type = RR_SETTING_U32,
	  FIELD(tcp_idle_timeout_full_ms),
	  .min = 10,
	  .max = 3600000,
	  .def = RR_DEFAULT_TCP_IDLE_FULL_MS,
	  .unit = "milliseconds",
	  .help = "the idle time-out once tcp_max_connections are open: past half of them, tcp_idle_timeout shrinks in proportion down to this (never above tcp_idle_timeout)" },
	{ .key = "tcp_io_timeout",
	  .type = RR_SETTING_U32,
	  FIELD(tcp_io_timeout_ms),
	  .min = 10,
	  .max = 600000,
	  .def = RR_DEFAULT_TCP_IO_MS,
	  .unit = "milliseconds",
	  .help = "a message begun must arrive whole, and a reply begun must be taken by the client, within this long, or the connection is closed" },
	{ .key = "user",
	  .flag = "user",
	  .arg = "USER",
	  .type = RR_SETTING_STRING,
	  FIELD(user),
	  .complete = RR_COMPLETE_USER,
	  .help = "after set-up, run as USER with only the capabilities still needed" },
	{ .key = "functions_dir",
	  .flag = "functions-dir",
	  .arg = "DIR",
	  .type = RR_SETTING_STRING,
	  FIELD(functions_dir),
	  .complete = RR_COMPLETE_DIR,
	  .help = "load the function modules (*.so) in DIR; they replace built-in functions of the same name" },
	{ .flag = "list",
	  .type = RR_SETTING_BOOL,
	  FIELD(list),
	  .help = "list the registered functions and exit" },
	{ .flag = "check",
	  .type = RR_SETTING_NONE,
	  .help = "check the config file, the flags and the functions' settings as a start would, without touching the interface, and exit" },
	{ .flag = "verbose",
	  .letter = 'v',
	  .type = RR_SETTING_COUNT,
	  FIELD(verbose),
	  .help = "log more (library messages included)" },
};

const size_t rr_nsettings = ARRAY_SIZE(rr_settings);
_Static_assert(ARRAY_SIZE(rr_settings) <= RR_SETTING_ROWS,
	       "struct rr_config's key_line[] has a line per row");

_Static_assert(sizeof(enum rr_steering) == sizeof(int), "enum size");
_Static_assert(sizeof(enum rr_own_cells) == sizeof(int), "enum size");

#define SVC(f)                                 \
	.off = offsetof(struct rr_service, f), \
	.size = sizeof(((struct rr_service *)0)->f)
#define SVC_COUNT(f) .count = offsetof(struct rr_service, f)

/* The keys of a [function NAME] section that are reqrouter's; any other
 * key is the function's own (API 2). */
/* Past a size clang-format stops laying a table out row by row: this one
 * is kept as written, in the layout of rr_settings above. */
/* clang-format off */
const struct rr_setting rr_fn_settings[] = {
	{ .key = "port",
	  .type = RR_SETTING_U32,
	  SVC(port),
	  .min = 1,
	  .max = 65535,
	  .def_text = "the function's own",
	  .help = "the UDP port the function is served on" },
	{ .key = "enabled",
	  .live = true,
	  .type = RR_SETTING_BOOL,
	  SVC(enabled),
	  .def = 1,
	  .help = "serve the function (an opt-in function only with a section)" },
	{ .key = "allow",
	  .live = true,
	  .type = RR_SETTING_CIDRS,
	  SVC(allow),
	  SVC_COUNT(nallow),
	  .max = RR_MAX_ALLOW_PER_FN,
	  .def_text = "every source",
	  .help = "the sources that may call it; the XDP program drops the rest. Repeated lines add up" },
	{ .key = "max_amplification",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(max_amplification),
	  .min = 0,
	  .max = RR_MAX_AMPLIFICATION,
	  .def = RR_DEFAULT_AMPLIFICATION,
	  .def_text = "3; 0 for a function flagged RR_FN_CLIENT_SIZED (dns)",
	  .help = "a reply's IP packet may be at most this many times the request's; 0: no limit" },
	{ .key = "tier",
	  .type = RR_SETTING_ENUM,
	  SVC(tier),
	  .names = rr_tier_names,
	  .def = RR_TIER_AUTO,
	  .help = "where requests are answered: in XDP where the function has an implementation (auto), in XDP or no start (xdp), or by the C function (user)" },
	{ .key = "xdp_max_payload",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(xdp_max_payload),
	  .min = 0,
	  .max = RR_XDP_MAX_PAYLOAD,
	  .def = RR_XDP_MAX_PAYLOAD,
	  .unit = "bytes",
	  .help = "longer requests skip the XDP implementation (counted as punted)" },
	{ .key = "cache",
	  .live = true,
	  .type = RR_SETTING_BOOL,
	  SVC(cache),
	  .def_text = "yes for a pure function",
	  .help = "answer repeated requests from the in-kernel reply cache (pure functions only)" },
	{ .key = "cache_ttl",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(cache_ttl),
	  .min = 0,
	  .max = RR_MAX_CACHE_TTL,
	  .def = RR_DEFAULT_CACHE_TTL,
	  .unit = "seconds",
	  .help = "how long a cached reply answers; 0: until the settings change" },
	{ .key = "cache_max_payload",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(cache_max_payload),
	  .min = 1,
	  .max = RR_CACHE_MAX_PAYLOAD,
	  .def = RR_CACHE_MAX_PAYLOAD,
	  .unit = "bytes",
	  .help = "only requests up to this long are cached" },
	{ .key = "max_run_us",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(max_run_us),
	  .min = 0,
	  .max = RR_MAX_MAX_RUN_US,
	  .def = RR_DEFAULT_MAX_RUN_US,
	  .unit = "microseconds",
	  .help = "how long a call may run (0: no limit); a cell past it is killed" },
	{ .key = "quarantine_faults",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(quarantine_faults),
	  .min = 0,
	  .max = RR_MAX_QUARANTINE_FAULTS,
	  .def = RR_DEFAULT_QUARANTINE_FAULTS,
	  .help = "this many crashes or time-outs within quarantine_window quarantine the function; 0: never" },
	{ .key = "quarantine_window",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(quarantine_window),
	  .min = 1,
	  .max = 3600,
	  .def = RR_DEFAULT_QUARANTINE_WINDOW,
	  .unit = "seconds",
	  .help = "the window quarantine_faults are counted in" },
	{ .key = "min_source_port",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(min_source_port),
	  .min = 0,
	  .max = 65535,
	  .def = RR_DEFAULT_MIN_SOURCE_PORT,
	  .help = "requests from lower source ports (well-known services, which may answer back and loop) are dropped in XDP; source ports 0, 7, 13, 19, 37 and the served ports always are" },
	{ .key = "quarantine_expire",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(quarantine_expire),
	  .min = 0,
	  .max = 86400,
	  .def = 60,
	  .unit = "seconds",
	  .help = "a quarantine lifts itself after this long, twice as long each time the function is quarantined again within twice its last quarantine (up to an hour, or this if longer); 0: never (reqrouterctl unquarantine, a reload or a deploy lift it, and start the doubling over)" },
	{ .key = "canary",
	  .live = true,
	  .arg = "PATH PERCENT",
	  .type = RR_SETTING_STRING,
	  SVC(canary),
	  .check = rr_check_canary,
	  .def_text = "none",
	  .help = "run the function module at PATH (its one function, this one's new version) beside the running version for PERCENT (1-99) of the sources, as reqrouterctl deploy --canary does; at start and by a reload, which also changes its share, or rolls back a canary the config started once the key is gone" },
	{ .key = "canary_rollback",
	  .live = true,
	  .arg = "LIST",
	  .type = RR_SETTING_STRING,
	  SVC(canary_rollback),
	  .check = rr_check_canary_rollback,
	  .def_text = "faults,errors,p99",
	  .help = "a canary of the function (reqrouterctl deploy --canary) is rolled back when these figures of it, faults and errors a request and its p99 service time, pass the running version's by canary_margin over canary_window; none: never" },
	{ .key = "canary_margin",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(canary_margin),
	  .min = 0,
	  .max = 1000,
	  .def = RR_DEFAULT_CANARY_MARGIN,
	  .unit = "percent",
	  .help = "how far a canary's figure may pass the running version's before canary_rollback rolls it back (a rate also by half a percentage point, p99 by 100 us)" },
	{ .key = "canary_window",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(canary_window),
	  .min = 1,
	  .max = 3600,
	  .def = RR_DEFAULT_CANARY_WINDOW,
	  .unit = "seconds",
	  .help = "the window a canary's figures are compared over (longer while it has had fewer than 20 requests)" },
	{ .key = "quarantine_action",
	  .live = true,
	  .type = RR_SETTING_ENUM,
	  SVC(quarantine_pass),
	  .names = rr_quarantine_action_names,
	  .def = 0,
	  .help = "a quarantined function's requests are dropped in XDP, or passed to the kernel" },
	{ .key = "steering",
	  .live = true,
	  .type = RR_SETTING_ENUM,
	  SVC(steering),
	  .names = rr_steering_names,
	  .def = RR_STEER_LEAST_LOADED,
	  .help = "which worker of the receiving queue gets a request: the next in turn (round_robin), the least loaded, a worker inside a slow call last (least_loaded), or the least loaded of its own (groups)" },
	{ .key = "workers",
	  .live = true,
	  .arg = "LIST",
	  .type = RR_SETTING_STRING,
	  SVC(workers),
	  .check = rr_check_workers,
	  .def_text = "every thread",
	  .help = "with steering = groups: the threads of each queue that serve it (e.g. 0 or 1-3), its group; a group per class its XDP program sorts requests into, separated by | (0 | 1-3)" },
	{ .key = "group_delay_us",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(group_delay_us),
	  .min = 0,
	  .max = 1000000,
	  .def = 0,
	  .unit = "microseconds",
	  .help = "with steering = groups: requests waiting longer grow the group by one worker, which it gives back once they wait under half of it for a second; 0: never" },
	{ .key = "gather_limit",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(gather_limit),
	  .min = 1,
	  .max = RR_SG_PER_WORKER,
	  .def = RR_SG_PER_WORKER,
	  .unit = "gathers",
	  .help = "a function that gathers (RR_FN_GATHER): the gathers each worker may have outstanding for it; a request over it is dropped, counted as gather_limit" },
	{ .key = "gather_deadline_us",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(gather_deadline_us),
	  .min = 100,
	  .max = 10000000,
	  .def = 10000,
	  .unit = "microseconds",
	  .help = "a function that gathers: a gather that has not completed this long after its last copy left completes with what came, the missing targets marked (the function may ask for less)" },
	{ .key = "gather_rate",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(gather_rate),
	  .min = 0,
	  .max = RR_MAX_GATHER_RATE,
	  .def = RR_DEFAULT_GATHER_RATE,
	  .unit = "copies/s",
	  .help = "a function that gathers: the copies a second its gathers may send to their targets, all workers together (each keeps an even share; a quiet one may send a second's worth, or one whole group, at once); a request whose gather would pass it is dropped, counted as gather_rate; 0: no limit" },
	{ .key = "gather_source_rate",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(gather_source_rate),
	  .min = 0,
	  .max = RR_MAX_GATHER_RATE,
	  .def = RR_DEFAULT_GATHER_SOURCE_RATE,
	  .unit = "copies/s",
	  .help = "a function that gathers: the copies a second the requests of one source prefix (rate_limit_v4_prefix, rate_limit_v6_prefix) may make it send, all workers together, spread as gather_rate is; the rest are dropped, counted as gather_source_rate; 0: no limit" },
	{ .key = "gather_target",
	  .live = true,
	  .type = RR_SETTING_BOOL,
	  SVC(gather_target),
	  .def = 0,
	  .help = "the function answers the gathers of others (another reqrouter's fanout or shards): a request that starts with the 16-byte gather header has it taken off before the function sees it and put back in front of its reply; such requests skip the in-kernel tier and the reply cache" },
	{ .key = "xdp_spread",
	  .live = true,
	  .arg = "CPU-LIST",
	  .type = RR_SETTING_STRING,
	  SVC(xdp_spread),
	  .check = rr_check_spread,
	  .def_text = "off",
	  .help = "run its XDP program on these CPUs in turn (e.g. 0-3, through a cpumap), not on the CPU that received the request; off where replies cannot leave from there (a veth whose peer runs no XDP program)" },
	{ .key = "tcp",
	  .type = RR_SETTING_BOOL,
	  SVC(tcp),
	  .def_text = "yes for a function flagged RR_FN_TCP",
	  .help = "serve the function over TCP too, on the same port, through the kernel's TCP (src/daemon/serve/tcp.c): each message framed by a two-byte length, as DNS over TCP" },
	{ .key = "heavy_hitters",
	  .live = true,
	  .type = RR_SETTING_BOOL,
	  SVC(heavy_hitters),
	  .def = 1,
	  .help = "count who calls the function, in XDP: a sampled sketch of its requests by source address and source prefix, for reqrouterctl top and the metrics" },
	{ .key = "heavy_hitters_sample",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(heavy_hitters_sample),
	  .min = 1,
	  .max = RR_MAX_HH_SAMPLE,
	  .def = RR_DEFAULT_HH_SAMPLE,
	  .unit = "requests",
	  .help = "one request in this many, on average, is sampled into the heavy-hitter sketch: 100 is 1 %, 1 every request" },
	{ .key = "rate_limit",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(rate_limit),
	  .min = 0,
	  .max = RR_MAX_RATE_LIMIT,
	  .def = RR_DEFAULT_RATE_LIMIT,
	  .def_text = "100000; 200 if flagged RR_FN_RATE_LIMITED (dns)",
	  .unit = "replies/s",
	  .help = "replies per second to one source prefix (rate_limit_v4_prefix, rate_limit_v6_prefix; the source itself gets half of it, the wider prefixes around it more), limited in XDP before either tier; the rest are dropped or slipped. The default is far above what a normal client asks (docs/DESIGN.md, \"Rate limiting in XDP\"); 0: no limit" },
	{ .key = "deadline_us",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(deadline_us),
	  .min = 0,
	  .max = RR_MAX_DEADLINE_US,
	  .def = 0,
	  .def_text = "0; 300000 if flagged RR_FN_LATE_USELESS (dns)",
	  .unit = "microseconds",
	  .check = rr_check_deadline,
	  .help = "how old a request may be, from its arrival in XDP, and still be served: an older one is dropped and counted as expired without a call, by its worker, or in XDP while its worker is further behind than that. 0: none; else 100 to 10000000" },
	{ .key = "trace_sample",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(trace_sample),
	  .min = 0,
	  .max = RR_MAX_TRACE_SAMPLE,
	  .def = 0,
	  .unit = "requests",
	  .help = "one request in this many is traced while reqrouterctl trace runs: a JSON line with its tier, XDP verdict, queuing delay, function time and reply size; 0: none" },
	{ .key = "rate_limit_burst",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(rate_limit_burst),
	  .min = 0,
	  .max = RR_MAX_RATE_LIMIT,
	  .def = 0,
	  .def_text = "0: rate_limit (one second's worth)",
	  .unit = "replies",
	  .help = "how many replies a prefix (rate_limit_v4_prefix, rate_limit_v6_prefix) that was quiet may get at once; the source itself may get half, each wider prefix its share of rate_limit's worth of this time" },
	{ .key = "rate_limit_v4_prefix",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(rate_limit_v4_prefix),
	  .min = 1,
	  .max = 32,
	  .def = RR_DEFAULT_V4_PREFIX,
	  .unit = "bits",
	  .help = "IPv4 sources are limited together by this prefix, whose budget rate_limit is; beside it the limiter keeps the source itself (/32) at half of it and the prefix four bits wider (/20 for /24) at eight times it, and a request goes by only if each has room (docs/DESIGN.md, \"Rate limiting in XDP\")" },
	{ .key = "rate_limit_v6_prefix",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(rate_limit_v6_prefix),
	  .min = 1,
	  .max = 128,
	  .def = RR_DEFAULT_V6_PREFIX,
	  .unit = "bits",
	  .help = "IPv6 sources are limited together by this prefix, whose budget rate_limit is; beside it the limiter keeps the source itself (/128) at half of it and the prefixes 8 and 16 bits wider (/56 and /48 for /64) at 1.5 and 2 times it, and a request goes by only if each has room" },
	{ .key = "slip",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(slip),
	  .min = 0,
	  .max = RR_MAX_SLIP,
	  .def = RR_DEFAULT_SLIP,
	  .help = "every Nth rate-limited request gets the function's slip reply (dns: an empty truncated answer, which sends a real client to TCP) instead of nothing; 0: none; a function without a slip reply drops them all" },
	{ .key = "rate_limit_exempt",
	  .live = true,
	  .type = RR_SETTING_CIDRS,
	  SVC(rate_limit_exempt),
	  SVC_COUNT(nrate_limit_exempt),
	  .max = RR_MAX_ALLOW_PER_FN,
	  .def_text = "none",
	  .help = "sources never rate-limited. Repeated lines add up" },
	{ .key = "rate_limit_us",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(rate_limit_us),
	  .min = 0,
	  .max = RR_MAX_RATE_LIMIT_US,
	  .def = 0,
	  .unit = "microseconds/s",
	  .help = "the function's time a second one source prefix may cost, as rate_limit counts replies: the workers charge each call's time to its source's prefixes (a source half of it, the wider prefixes more, as rate_limit), and XDP limits a prefix over it, this function's alone (another function's clients are not charged); a quiet prefix may spend a second's worth at once; 0: no limit" },
	{ .key = "rate_limit_validated",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(rate_limit_validated),
	  .min = 0,
	  .max = RR_MAX_RATE_LIMIT,
	  .def = 0,
	  .def_text = "0: 8 times rate_limit",
	  .unit = "replies/s",
	  .help = "replies per second to one validated source (one that completed a TCP handshake with reqrouter, brought a valid DNS server cookie or echoed the function's token, within validated_for), which it gets in place of its prefixes' budgets: a spoofed flood from its /24 cannot take its share, and it still cannot ask without bound (docs/DESIGN.md, \"Validated sources\")" },
	{ .key = "validated_for",
	  .live = true,
	  .type = RR_SETTING_U32,
	  SVC(validated_for),
	  .min = 0,
	  .max = RR_MAX_VALIDATED_FOR,
	  .def = RR_DEFAULT_VALIDATED_FOR,
	  .unit = "seconds",
	  .help = "how long a source stays validated after its last TCP handshake, valid cookie or token (an hour: the life of a DNS server cookie); 0: no source is validated, a valid cookie included, and every request meets the prefixes' budgets" },
	{ .key = "rate_limit_mode",
	  .live = true,
	  .type = RR_SETTING_ENUM,
	  SVC(rate_limit_mode),
	  .names = rr_rl_mode_names,
	  .def = RR_RL_MODE_DROP,
	  .help = "drop: requests over rate_limit are dropped or slipped; log: a dry run, they are let by and only counted (reqrouter_rate_limit_would_limit_packets_total), and reqrouterctl top names the prefixes it would limit, to size the limits on real traffic first" },
	{ .key = "cookie_secret",
	  .live = true,
	  .arg = "FILE",
	  .type = RR_SETTING_STRING,
	  SVC(cookie_secret),
	  .check = rr_check_cookie_secret,
	  .def_text = "none: one made at start",
	  .complete = RR_COMPLETE_FILE,
	  .help = "a function that speaks DNS Cookies (dns): the file of its 16-byte cookie secret in hex, read at start and on every reload; the same file on every server of an anycast set makes their cookies good at each other. A reload that changes it keeps the previous one good for an hour (docs/OPERATIONS.md, \"DNS Cookies\")" },
	{ .key = "syscalls",
	  .live = true,
	  .arg = "NAMES",
	  .type = RR_SETTING_STRING,
	  SVC(syscalls),
	  .check = rr_check_syscalls,
	  .append = true,
	  .help = "system calls the function needs beyond a cell's allow-list, separated by spaces (e.g. openat read); repeated lines add up; the cells that serve the function allow them (its own, with own_cells), and any other call kills the cell as a crash. Cells only (isolation = cell): threads have no filter" },
	{ .key = "own_cells",
	  .type = RR_SETTING_ENUM,
	  SVC(own_cells),
	  .names = rr_own_cells_names,
	  .def = RR_OWN_CELLS_AUTO,
	  .def_text = "auto: yes for a function from a module or with syscalls",
	  .help = "serve the function with workers of its own, -t per queue, each a cell that serves nothing else: no other function's code runs in its process, its syscalls widen no other cell's filter, and its cached replies are in a part of the reply cache no other cell maps (docs/DESIGN.md, \"Cell groups\"). Cells only (isolation = cell)" },
};
/* clang-format on */

const size_t rr_fn_nsettings = ARRAY_SIZE(rr_fn_settings);
_Static_assert(ARRAY_SIZE(rr_fn_settings) <= RR_FN_SETTING_ROWS,
	       "struct rr_service's key_line[] has a line per row");

/* A string field: replaced, or for an append row added to what the lines
 * before gave. */
static int set_string(const struct rr_setting *s, char *field, const char *val,
		      const char *what, char *err, size_t errlen)
{
	size_t have = s->append ? strlen(field) : 0, len = strlen(val);

	if (have && have + 1 + len + 1 > s->size)
		return rr_errf(
			err, errlen,
			"%s: too long with the lines before it (%zu bytes at most in all)",
			what, s->size - 1);
	if (have)
		field[have++] = ' ';
	memcpy(field + have, val, len + 1);
	return 0;
}

/* The row of table @t (@n rows) whose key is @key, or NULL. */
static const struct rr_setting *by_key(const struct rr_setting *t, size_t n,
				       const char *key)
{
	const struct rr_setting *s;

	for (s = t; s < t + n; s++)
		if (s->key && !strcmp(s->key, key))
			return s;
	return NULL;
}

const struct rr_setting *rr_setting_by_key(const char *key)
{
	return by_key(rr_settings, rr_nsettings, key);
}

/* A number or an enum into its field, whatever its width. */
static void store(void *field, size_t size, uint32_t v)
{
	if (size == sizeof(uint16_t))
		*(uint16_t *)field = (uint16_t)v;
	else if (size == sizeof(bool))
		*(bool *)field = v;
	else
		*(uint32_t *)field = v;
}

/* The defaults of table @t's rows into @base (a switch's def is what it
 * sets, not a default). */
static void defaults_of(const struct rr_setting *t, size_t n, void *base)
{
	const struct rr_setting *s;

	for (s = t; s < t + n; s++)
		if (s->type == RR_SETTING_U32 || s->type == RR_SETTING_ENUM ||
		    (s->type == RR_SETTING_BOOL && s->key))
			store((char *)base + s->off, s->size, s->def);
}

void rr_settings_defaults(struct rr_config *cfg)
{
	defaults_of(rr_settings, rr_nsettings, cfg);
}

void rr_fn_settings_defaults(struct rr_service *svc)
{
	defaults_of(rr_fn_settings, rr_fn_nsettings, svc);
	/* The defaults that are the function's own. */
	svc->port = svc->fn->port;
	svc->cache = svc->fn->flags & RR_FN_PURE;
	/* One that sizes its replies to what the client offers (DNS's EDNS
	 * size) needs no other bound: 3 would hide answers the client asked
	 * for, and its own cap bounds reflection. */
	if (svc->fn->flags & RR_FN_CLIENT_SIZED)
		svc->max_amplification = 0;
	svc->tcp = svc->fn->flags & RR_FN_TCP;
	if (svc->fn->flags & RR_FN_RATE_LIMITED)
		svc->rate_limit = RR_RRL_RATE_LIMIT;
	if (svc->fn->flags & RR_FN_LATE_USELESS)
		svc->deadline_us = RR_DEADLINE_US_LATE_USELESS;
}

const struct rr_setting *rr_fn_setting_by_key(const char *key)
{
	return by_key(rr_fn_settings, rr_fn_nsettings, key);
}

/*
 * How an error names the setting: the key (with its unit), or the flag in
 * the words reqrouter has always used, which scripts may match: "-b
 * (batch)", a choice by its bare name ("tier must be ..."), else "--user"
 * ("--coalesce-us (microseconds)" with a unit).
 */
static void name_of(const struct rr_setting *s, bool as_flag, char *buf,
		    size_t len)
{
	if (!as_flag && s->unit)
		snprintf(buf, len, "%s (%s)", s->key, s->unit);
	else if (!as_flag)
		snprintf(buf, len, "%s", s->key);
	else if (s->letter)
		snprintf(buf, len, "-%c (%s)", s->letter, s->flag);
	else if (s->type == RR_SETTING_ENUM)
		snprintf(buf, len, "%s", s->flag);
	else if (s->unit)
		snprintf(buf, len, "--%s (%s)", s->flag, s->unit);
	else
		snprintf(buf, len, "--%s", s->flag);
}

int rr_setting_check(const struct rr_setting *s, const char *val, bool as_flag,
		     char *err, size_t errlen)
{
	char what[48];
	int ret;

	if (s->type != RR_SETTING_STRING)
		return 0;
	if (s->check) {
		ret = s->check(val, err, errlen);
		if (ret)
			return ret;
	}
	name_of(s, as_flag, what, sizeof(what));
	if (!*val)
		return rr_errf(err, errlen, "%s must not be empty", what);
	if (strlen(val) >= s->size)
		return rr_errf(err, errlen,
			       "%s is too long: at most %zu bytes, not %zu",
			       what, s->size - 1, strlen(val));
	return 0;
}

int rr_setting_set(const struct rr_setting *s, void *base, const char *val,
		   bool as_flag, char *err, size_t errlen)
{
	char *field = (char *)base + s->off, what[48];
	uint32_t v;
	int ret;

	name_of(s, as_flag, what, sizeof(what));
	switch (s->type) {
	case RR_SETTING_U32:
		ret = rr_parse_u32(val, s->min, s->max, &v, what, err, errlen);
		/* A range with a hole in it (deadline_us: 0, or 100 on). */
		if (!ret && s->check)
			ret = s->check(val, err, errlen);
		if (!ret)
			store(field, s->size, v);
		return ret;
	case RR_SETTING_BOOL:
		if (as_flag) {
			*(bool *)field = true;
			return 0;
		}
		return rr_parse_bool(val, (bool *)field, what, err, errlen);
	case RR_SETTING_STRING:
		ret = rr_setting_check(s, val, as_flag, err, errlen);
		if (ret)
			return ret;
		return set_string(s, (char *)field, val, what, err, errlen);
	case RR_SETTING_ENUM:
		ret = rr_parse_enum(s->names, val, what, err, errlen);
		if (ret < 0)
			return ret;
		store(field, s->size, (uint32_t)ret);
		if (s->count)
			*(bool *)((char *)base + s->count) = true;
		return 0;
	case RR_SETTING_CHOICE:
		store(field, s->size, s->def);
		return 0;
	case RR_SETTING_COUNT:
		(*(int *)field)++;
		return 0;
	case RR_SETTING_CPUS:
		return rr_parse_cpus(val, (int *)field,
				     (uint32_t *)((char *)base + s->count), err,
				     errlen);
	case RR_SETTING_PORTS:
		return rr_parse_ports(val, (uint16_t *)field, s->max,
				      (uint32_t *)((char *)base + s->count),
				      err, errlen);
	case RR_SETTING_CIDRS:
		return rr_parse_cidrs(val, (struct rr_cidr *)field, s->max,
				      (uint32_t *)((char *)base + s->count),
				      err, errlen);
	case RR_SETTING_VLANS:
		return rr_parse_vlans(val, (struct rr_vlans *)field, what, err,
				      errlen);
	case RR_SETTING_NONE:
		return 0;
	}
	return -EINVAL;
}

/* The value a row takes, in words: "1-256", "auto, soft or offload". */
void rr_setting_value_text(const struct rr_setting *s, char *buf, size_t len)
{
	switch (s->type) {
	case RR_SETTING_U32:
		snprintf(buf, len, "%u-%u%s%s", s->min, s->max,
			 s->unit ? " " : "", s->unit ? s->unit : "");
		return;
	case RR_SETTING_ENUM:
		rr_enum_names(s->names, buf, len);
		return;
	case RR_SETTING_BOOL:
		snprintf(buf, len, "yes or no");
		return;
	case RR_SETTING_STRING:
		snprintf(buf, len, "%s, at most %zu bytes",
			 s->arg ? s->arg : "text", s->size - 1);
		return;
	case RR_SETTING_CPUS:
		snprintf(buf, len, "CPUs 0-%u: a list of numbers and ranges",
			 s->max - 1);
		return;
	case RR_SETTING_PORTS:
		snprintf(buf, len, "ports 1-65535, at most %u", s->max);
		return;
	case RR_SETTING_CIDRS:
		snprintf(buf, len,
			 "IPv4 and IPv6 prefixes or addresses, at most %u",
			 s->max);
		return;
	case RR_SETTING_VLANS:
		snprintf(buf, len, "host, any, or VLAN IDs 1-4094 and ranges");
		return;
	default:
		buf[0] = '\0';
	}
}

/* The default in words, or "" where there is none worth saying. */
void rr_setting_default_text(const struct rr_setting *s, char *buf, size_t len)
{
	if (s->def_text)
		snprintf(buf, len, "%s", s->def_text);
	else if (s->type == RR_SETTING_U32)
		snprintf(buf, len, "%u%s%s", s->def, s->unit ? " " : "",
			 s->unit ? s->unit : "");
	else if (s->type == RR_SETTING_ENUM)
		snprintf(buf, len, "%s", s->names[s->def]);
	else
		buf[0] = '\0';
}

void rr_setting_help(const struct rr_setting *s, char *buf, size_t len)
{
	char value[128], def[64];
	size_t at;

	at = (size_t)snprintf(buf, len, "%s", s->help);
	if (at >= len)
		return;
	/* A switch takes no value; a list's form is in its help. */
	if (s->arg &&
	    (s->type == RR_SETTING_U32 || s->type == RR_SETTING_ENUM)) {
		rr_setting_value_text(s, value, sizeof(value));
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       s->type == RR_SETTING_ENUM ? ": " : ", ",
				       value);
	}
	if (at >= len)
		return;
	rr_setting_default_text(s, def, sizeof(def));
	if (s->arg && def[0])
		snprintf(buf + at, len - at, " (default: %s)", def);
}
