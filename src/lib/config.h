/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Settings, from the config file and the command line (flags override the
 * file). Every parser writes one human sentence to err and returns -EINVAL.
 */
#ifndef RR_CONFIG_H
#define RR_CONFIG_H

#include <limits.h>
#include <net/if.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse.h"
#include <reqrouter/rr_function.h>
#include <reqrouter/rr_xdp_req.h>
#include "shared/common.h"
#include "shared/gather.h"
#include "shared/spread.h"

#define RR_MAX_CPUS 1024
#define RR_MAX_BATCH 256
#define RR_MAX_COALESCE_US 1000
#define RR_ERRLEN 256

enum rr_xdp_mode {
	RR_MODE_AUTO, /* native, falling back to SKB with a warning */
	RR_MODE_NATIVE,
	RR_MODE_SKB,
};

/* Who computes the replies' UDP checksum. */
enum rr_tx_csum {
	RR_TX_CSUM_AUTO,    /* the kernel if it can (TX metadata), else we */
	RR_TX_CSUM_SOFT,    /* always we, in software */
	RR_TX_CSUM_OFFLOAD, /* the kernel, or no start */
};

/* How a gather's copies are made (docs/DESIGN.md, "Gathers"). */
enum rr_scatter {
	RR_SCATTER_TC,	   /* cloned at TC egress from one template */
	RR_SCATTER_SOCKET, /* each sent through the worker's socket */
	RR_SCATTER_UMEM,   /* built in the UMEM, sent from its AF_XDP socket */
};

#define RR_DEFAULT_AMPLIFICATION 3 /* QUIC's anti-amplification factor */
#define RR_MAX_AMPLIFICATION 1000
#define RR_MAX_ALLOW_PER_FN 64
#define RR_MAX_FN_SETTINGS 64
/* Rows the settings tables may have, [reqrouter]'s and a function's
 * (settings.c asserts it): a line number each, key_line[]. */
#define RR_SETTING_ROWS 64
#define RR_FN_SETTING_ROWS 48

/* Where a function's requests are answered. */
enum rr_tier {
	RR_TIER_AUTO, /* in XDP where the function has an implementation */
	RR_TIER_XDP,  /* in XDP, or refuse to start */
	RR_TIER_USER, /* always by the C function, in user space */
};

/* Which of a queue's workers the XDP program hands a request to
 * (docs/DESIGN.md, "Steering"). */
enum rr_steering {
	RR_STEER_ROUND_ROBIN,  /* the next in turn */
	RR_STEER_LEAST_LOADED, /* the one with the least backlog */
	RR_STEER_GROUPS,       /* the least loaded of its own workers */
};

/* own_cells: whether a function's requests are served by workers of its
 * own, each a cell that serves nothing else (docs/DESIGN.md, "Cell
 * groups"); auto: those from a module and those with `syscalls`. */
enum rr_own_cells {
	RR_OWN_CELLS_AUTO,
	RR_OWN_CELLS_YES,
	RR_OWN_CELLS_NO,
};

/* rate_limit_mode: what the limiter does with a request over the limit
 * (docs/DESIGN.md, "Rate limiting in XDP"): drop (or slip) it, or only
 * count it as one it would limit and let it by (a dry run). */
enum rr_rl_mode {
	RR_RL_MODE_DROP,
	RR_RL_MODE_LOG,
};

#define RR_WORKERS_LEN 64 /* a function's `workers` list */
#define RR_SPREAD_LEN 64  /* a function's `xdp_spread` CPU list */

#define RR_DRAIN_TIMEOUT_S 30 /* a drain ends after this at the latest */
#define RR_DRAIN_QUIET_S 2    /* ... or after this long without requests */
/* TCP (src/daemon/serve/tcp.c): connections in all, per source address and
 * per source prefix, and how long one may idle, or take over a message or a
 * reply. Knot DNS's tcp-idle-timeout and tcp-io-timeout are 10 s and
 * 500 ms. A prefix is a /24 or a /56, a site; 128 is four addresses' full
 * share, more than a /24 of resolvers keeps open to one server. Past half
 * the pool, the idle time-out shrinks towards 500 ms (NSD gives a new
 * connection 200 ms once half its pool is taken). */
#define RR_MAX_TCP_CONNECTIONS 65536
#define RR_DEFAULT_TCP_CONNECTIONS 1024
#define RR_DEFAULT_TCP_PER_SOURCE 32
#define RR_DEFAULT_TCP_PER_PREFIX 128
#define RR_DEFAULT_TCP_V4_PREFIX 24
#define RR_DEFAULT_TCP_V6_PREFIX 56
#define RR_DEFAULT_TCP_IDLE_MS 10000
#define RR_DEFAULT_TCP_IDLE_FULL_MS 500
#define RR_DEFAULT_TCP_IO_MS 2000
#define RR_DEFAULT_CACHE_TTL 60 /* seconds a cached reply answers */
#define RR_MAX_CACHE_TTL 86400

/* The VLAN tags answered (`vlans`): zeroed, the host's VLAN devices on
 * the interface, followed while serving. */
#define RR_VLAN_IDS 4096
struct rr_vlans {
	bool any;     /* every tag */
	bool no_host; /* only the IDs listed, not the host's devices */
	uint64_t ids[RR_VLAN_IDS / 64]; /* listed, a bit per VLAN ID */
};

/* An address prefix of an allow-list. */
struct rr_cidr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint8_t len; /* prefix length in bits */
};

/* A registered function and how it is served. */
enum rr_isolation { RR_ISOLATION_THREAD, RR_ISOLATION_CELL };

/* The workers' scheduling (src/daemon/core/priority.c). */
enum rr_worker_priority {
	RR_PRIORITY_REALTIME,
	RR_PRIORITY_NORMAL,
	RR_PRIORITY_AUTO,
};

/* Which destination addresses are answered: the host's own (its local
 * routes, followed through netlink), or any the frame carries. */
enum rr_answer_for { RR_ANSWER_LOCAL, RR_ANSWER_ANY };

/* What a per-socket counter is summed over before it is exported
 * (metrics_detail, src/daemon/ops/metrics.c). */
enum rr_metrics_detail {
	RR_DETAIL_SOCKET,   /* nothing: per (queue, thread, function) */
	RR_DETAIL_QUEUE,    /* a queue's threads: per (queue, function) */
	RR_DETAIL_FUNCTION, /* every queue and thread: per function */
};

/* Below this source port are the well-known services, which answer
 * whatever reaches them: a request from one is refused (a loop guard). */
#define RR_DEFAULT_MIN_SOURCE_PORT 1024

/* Heavy hitters (src/daemon/features/hh.c): one request in this many sampled. */
#define RR_DEFAULT_HH_SAMPLE 100
#define RR_MAX_HH_SAMPLE 65536

/*
 * Response rate limiting (docs/DESIGN.md, "Rate limiting in XDP"): every
 * function's default, a rate no normal client of one /24 (/64) meets and
 * a third of what one worker answers on the test bed, and
 * RR_FN_RATE_LIMITED's (dns), NSD's.
 */
#define RR_DEFAULT_RATE_LIMIT 100000 /* replies/s per prefix */
#define RR_RRL_RATE_LIMIT 200	     /* likewise, RR_FN_RATE_LIMITED's */
#define RR_MAX_RATE_LIMIT 100000000
/* rate_limit_us: at most 100 CPU-seconds a second. */
#define RR_MAX_RATE_LIMIT_US 100000000
/* Whether service @svc's requests are rate-limited at all: by replies
 * (rate_limit) or by the time they cost (rate_limit_us). */
#define RR_RATE_LIMITED(svc) ((svc)->rate_limit || (svc)->rate_limit_us)
#define RR_DEFAULT_V4_PREFIX 24 /* the prefixes it counts by */
#define RR_DEFAULT_V6_PREFIX 64
#define RR_DEFAULT_SLIP 2
/* Validated sources (docs/DESIGN.md, "Validated sources"): how long one
 * stays validated, and its budget as a multiple of rate_limit when
 * rate_limit_validated is 0. */
#define RR_DEFAULT_VALIDATED_FOR 3600
#define RR_MAX_VALIDATED_FOR 604800
#define RR_VALIDATED_RATE_FACTOR 8

/* Deadlines (docs/DESIGN.md, "Deadlines"): RR_FN_LATE_USELESS's default
 * (dns's), and the range a deadline_us may take (0 is none). */
#define RR_DEADLINE_US_LATE_USELESS 300000
#define RR_MIN_DEADLINE_US 100
#define RR_MAX_DEADLINE_US 10000000
/* trace_sample: one in this many at most. */
#define RR_MAX_TRACE_SAMPLE 1000000000
#define RR_MAX_SLIP 1000

/* Gathers' budgets (src/daemon/features/gather_budget.c): the copies a
 * second a gathering function may send, and those the requests of one
 * source prefix may cause. */
#define RR_DEFAULT_GATHER_RATE 10000
#define RR_DEFAULT_GATHER_SOURCE_RATE 1000
#define RR_MAX_GATHER_RATE 100000000

#define RR_DEFAULT_MAX_RUN_US 10000
#define RR_MAX_MAX_RUN_US 60000000
/* canary_rollback's figures (docs/DESIGN.md, "Canaries"). */
#define RR_CANARY_FAULTS (1U << 0) /* crashes and time-outs a request */
#define RR_CANARY_ERRORS (1U << 1) /* function errors a request */
#define RR_CANARY_P99 (1U << 2)	   /* the 99th percentile service time */
#define RR_CANARY_ROLLBACK_LEN 32
#define RR_CANARY_LEN 256
#define RR_DEFAULT_CANARY_MARGIN 50 /* percent */
#define RR_DEFAULT_CANARY_WINDOW 10 /* seconds */
#define RR_DEFAULT_QUARANTINE_FAULTS 5
#define RR_DEFAULT_QUARANTINE_WINDOW 10 /* seconds */
#define RR_MAX_QUARANTINE_FAULTS 64
/* A function's `syscalls` (one config line fits in less). */
#define RR_SYSCALLS_LEN 256
#define RR_COOKIE_PATH_LEN 256 /* cookie_secret's file */

struct rr_service {
	const struct rr_function *fn;
	uint16_t port;
	bool enabled;
	/* A reply's IP packet may be at most this many times the request's
	 * (spoofed sources make a server an amplifier); 0: no limit. */
	uint32_t max_amplification;
	/* Sources allowed to call it; none listed: every source. */
	struct rr_cidr allow[RR_MAX_ALLOW_PER_FN];
	uint32_t nallow;
	enum rr_tier tier;
	/* A pure function's replies answer repeated requests from the
	 * in-kernel cache: for requests up to cache_max_payload bytes, for
	 * cache_ttl seconds (0: until the function's settings change). */
	bool cache;
	uint32_t cache_ttl;
	uint32_t cache_max_payload;
	/* Requests with longer payloads skip the XDP implementation. */
	uint32_t xdp_max_payload;
	/* A call may run this long (0: no limit); a cell that overruns it is
	 * killed and restarted (isolation = cell), a thread only reported. */
	uint32_t max_run_us;
	/* quarantine_faults crashes or time-outs within quarantine_window
	 * seconds quarantine the function (0: never): its port drops its
	 * requests in XDP, or with quarantine_pass hands them to the kernel. */
	uint32_t quarantine_faults;
	uint32_t quarantine_window;
	bool quarantine_pass;
	/* A quarantine lifts itself after this many seconds; 0: never. */
	uint32_t quarantine_expire;
	/* A canary of it is rolled back when these figures (RR_CANARY_*
	 * bits, from the words of canary_rollback) pass the running
	 * version's by canary_margin percent over canary_window seconds. */
	char canary_rollback[RR_CANARY_ROLLBACK_LEN];
	/* "PATH PERCENT": the module run beside it as a canary, applied
	 * at start and by a reload (slots/canary.c); "" for none. */
	char canary[RR_CANARY_LEN];
	uint32_t canary_margin;
	uint32_t canary_window;
	/* Requests from lower source ports are dropped in XDP. */
	uint32_t min_source_port;
	enum rr_steering steering;
	/* steering = groups: the threads of each queue that serve it (""
	 * for all), and the queuing delay past which the group grows into
	 * the others, one worker at a time (0: it never does). */
	char workers[RR_WORKERS_LEN];
	uint32_t group_delay_us;
	/* Its XDP program runs on these CPUs, in turn (a CPU list, "" for
	 * the CPU that received the request): src/daemon/features/spread.c. */
	char xdp_spread[RR_SPREAD_LEN];
	/* System calls a cell may make for this function beyond its own
	 * allow-list (src/daemon/core/seccomp.c): names separated by spaces, ""
	 * for none. Every cell allows those of all the served functions. */
	char syscalls[RR_SYSCALLS_LEN];
	enum rr_own_cells own_cells;
	/* RR_FN_GATHER: gathers it may have outstanding per worker, and
	 * their age at which they complete with what came. */
	uint32_t gather_limit;
	uint32_t gather_deadline_us;
	/* RR_FN_GATHER: copies a second its gathers may send, all workers
	 * together, and those one source prefix's requests may cause
	 * (/rate_limit_v4_prefix, /rate_limit_v6_prefix); 0: no limit. */
	uint32_t gather_rate;
	uint32_t gather_source_rate;
	/* A target of gathers: a request that starts with struct
	 * rr_sg_hdr has it taken off before the handler and put back in
	 * front of the reply. */
	bool gather_target;
	/* Served over TCP too (src/daemon/serve/tcp.c); default: RR_FN_TCP. */
	bool tcp;
	/* Its requests sampled into a sketch of who calls it, one in
	 * heavy_hitters_sample, in XDP (src/daemon/features/hh.c). */
	bool heavy_hitters;
	uint32_t heavy_hitters_sample;
	/* Replies per second per source prefix (/rate_limit_v4_prefix,
	 * /rate_limit_v6_prefix), limited in XDP; 0: off. A quiet prefix
	 * may send rate_limit_burst at once (0: rate_limit); every slip-th
	 * limited request gets the function's slip reply (0: none). */
	uint32_t rate_limit;
	/* How old a request may be, from its arrival in XDP, and still be
	 * served: older ones are dropped as expired, by the worker or
	 * already in XDP (docs/DESIGN.md, "Deadlines"); 0: no deadline. */
	uint32_t deadline_us;
	/* One request in this many is traced for reqrouterctl trace
	 * (features/capture.c); 0: none. */
	uint32_t trace_sample;
	uint32_t rate_limit_burst;
	uint32_t rate_limit_v4_prefix;
	uint32_t rate_limit_v6_prefix;
	uint32_t slip;
	enum rr_rl_mode rate_limit_mode;
	/* Microseconds of the function's time a second per source prefix,
	 * charged by the workers and limited in XDP; 0: off. */
	uint32_t rate_limit_us;
	/* Replies per second to one validated source (0: 8 x rate_limit),
	 * and how long a source stays validated, seconds (0: none is). */
	uint32_t rate_limit_validated;
	uint32_t validated_for;
	struct rr_cidr rate_limit_exempt[RR_MAX_ALLOW_PER_FN];
	uint32_t nrate_limit_exempt;
	/* cookie_secret: the file of an RR_FN_DNS_COOKIES function's
	 * secret, "": one made at start. The secrets themselves, kept by
	 * src/daemon/features/cookie.c for init() and the XDP program
	 * (cookie_ready: they are there; cookie_made: made, not read). */
	char cookie_secret[RR_COOKIE_PATH_LEN];
	struct rr_fn_cookie_secrets cookie;
	bool cookie_ready;
	bool cookie_made;
	/* The config has a [function NAME] section (an RR_FN_OPT_IN
	 * function is served only then). */
	bool configured;
	/* The section's keys that are not reqrouter's, for the function's
	 * init() (API 2); strings owned here, see rr_config_free(). */
	struct rr_fn_setting settings[RR_MAX_FN_SETTINGS];
	uint32_t nsettings;
	/* By row of rr_fn_settings[]: the config file's line that gave
	 * the value, 0 if none did (a message's FILE:LINE). */
	unsigned int key_line[RR_FN_SETTING_ROWS];
};

/* Where the control sockets and the XDP program records live. */
#define RR_RUN_DIR "/run/reqrouter"

/* A gather's target: a UDP endpoint of a [group NAME] section. */
struct rr_endpoint {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port; /* host order */
};

#define RR_GROUP_NAME_LEN 32

/* [group NAME]: the targets a gathering function may ask (docs/DESIGN.md,
 * "Gathers"), in the order of its `targets` lines: their indexes. */
struct rr_sg_group {
	char name[RR_GROUP_NAME_LEN];
	struct rr_endpoint *targets; /* [RR_SG_MAX_TARGETS], malloc'ed */
	uint32_t ntargets;
	const char *file; /* where it was defined, for messages */
	unsigned int line;
};

struct rr_config {
	char ifname[IF_NAMESIZE];
	uint32_t queues; /* 0: all of the interface's RX queues */
	uint32_t threads;
	uint32_t batch;
	enum rr_xdp_mode mode;
	bool busy_poll;
	enum rr_worker_priority worker_priority;
	uint32_t coalesce_us; /* 0: a worker sleeps in poll() alone */
	/* Workers as threads of this process, or as cells: processes that
	 * a crash or an overrun function takes down alone. */
	enum rr_isolation isolation;
	enum rr_answer_for answer_for;
	struct rr_vlans vlans;
	bool tier_set; /* --tier: every function's tier */
	enum rr_tier tier;
	bool no_cache; /* --no-cache: no function's replies are cached */
	enum rr_tx_csum tx_csum;
	enum rr_scatter gather_scatter;
	int cpus[RR_MAX_CPUS];
	uint32_t ncpus; /* 0: every CPU the process may run on */
	char metrics_file[PATH_MAX];
	/* --metrics-listen: "ADDR:PORT" for GET /metrics and /healthz, or "" */
	char metrics_listen[64];
	enum rr_metrics_detail metrics_detail;
	/* One entry per registered function, in registry order. */
	struct rr_service services[RR_MAX_SLOTS * 4];
	uint32_t nservices;
	/* -p: serve only these ports (0 entries: all enabled services). */
	uint16_t only_ports[RR_MAX_SLOTS];
	uint32_t n_only_ports;
	char user[64];	    /* --user: drop to this user after set-up */
	bool drain_on_term; /* SIGTERM drains first (see reqrouterctl drain) */
	/* TCP for the functions that have it (src/daemon/serve/tcp.c). */
	uint32_t tcp_max_connections;
	uint32_t tcp_max_per_source;
	uint32_t tcp_max_per_prefix;
	uint32_t tcp_v4_prefix, tcp_v6_prefix; /* bits */
	uint32_t tcp_idle_timeout_ms;
	uint32_t tcp_idle_timeout_full_ms;
	uint32_t tcp_io_timeout_ms;
	char config_file[PATH_MAX];   /* -c, re-read on a reload; "" if none */
	char functions_dir[PATH_MAX]; /* function modules loaded at start */
	/* The control socket: "" for the default path, "none" for none. */
	char control[108];
	char control_group[64];
	bool list;
	int verbose;
	/* [group NAME] sections, in file order: their numbers. */
	struct rr_sg_group groups[RR_SG_MAX_GROUPS];
	uint32_t ngroups;
	/* By row of rr_settings[]: the config file's line that gave the
	 * value, 0 if none did or a flag overrode it (rr_config_where()). */
	unsigned int key_line[RR_SETTING_ROWS];
};

/* Defaults, and one service per registered function on its own port. */
int rr_config_init(struct rr_config *cfg, char *err, size_t errlen);

/* Reads an INI file over cfg (see configs/reqrouter.conf). */
int rr_config_load(struct rr_config *cfg, const char *path, char *err,
		   size_t errlen);

/* Its [reqrouter] section alone, over cfg: what a client reads to find
 * the instance (reqrouterctl -c), which registers no function to check
 * the other sections against. */
int rr_config_load_main(struct rr_config *cfg, const char *path, char *err,
			size_t errlen);

/* Frees the strings of @svc's own settings; none are left. */
void rr_service_drop_settings(struct rr_service *svc);
/* The function's own settings of @from into @svc, as copies whose file
 * is @file (@svc's own are freed first). 0 or -ENOMEM, @svc unchanged. */
int rr_service_keep_settings(struct rr_service *svc,
			     const struct rr_service *from, const char *file);
/* Frees what loading allocated (the functions' settings). */
void rr_config_free(struct rr_config *cfg);

/*
 * The config as read again after start-up (a reload, a deploy, a tool's
 * --fn-config): defaults, then @path unless it is NULL or "". NULL with one
 * line in @err. rr_config_destroy() frees it.
 */
struct rr_config *rr_config_read(const char *path, char *err, size_t errlen);
void rr_config_destroy(struct rr_config *cfg);

struct rr_setting;

/*
 * The keys whose values differ between two configs, for a reload to
 * apply or refuse: the rows of rr_settings[] that have a key (between
 * two struct rr_config), or of rr_fn_settings[] (between two services),
 * in table order into @out, which has room for every row of the table.
 * Returns how many. Rows of flags alone (-p, --tier, --no-cache) are
 * not compared: they are the command line's, which a reload keeps.
 */
size_t rr_config_diff(const struct rr_config *a, const struct rr_config *b,
		      const struct rr_setting **out);
size_t rr_service_diff(const struct rr_service *a, const struct rr_service *b,
		       const struct rr_setting **out);

/* The service of function @fn in @cfg, or NULL. */
struct rr_service *rr_config_service_of(const struct rr_config *cfg,
					const struct rr_function *fn);
/* The service of the function called @name in @cfg, or NULL. */
struct rr_service *rr_config_service_named(const struct rr_config *cfg,
					   const char *name);

/*
 * How a message names [reqrouter] key @key as the config has it: "FILE:LINE:
 * key" where a line of the config file gave its value, else its flag
 * ("--user"), into @buf.
 */
void rr_config_where(const struct rr_config *cfg, const char *key, char *buf,
		     size_t len);

/*
 * Applies -p and checks the result: services exist, fit RR_MAX_SLOTS, no
 * port served twice. Called once, after file and flags.
 */
int rr_config_finish(struct rr_config *cfg, char *err, size_t errlen);

/* Value parsers shared by the file and the flags (config_values.c; the
 * generic ones are in parse.h). */

/* The words of each enum, NULL-terminated, indexed by its values. */
extern const char *const rr_mode_names[];
extern const char *const rr_tier_names[];
extern const char *const rr_tx_csum_names[];
extern const char *const rr_scatter_names[];
extern const char *const rr_isolation_names[];
extern const char *const rr_answer_for_names[];
extern const char *const rr_worker_priority_names[];
extern const char *const rr_quarantine_action_names[];
extern const char *const rr_steering_names[];
extern const char *const rr_own_cells_names[];
extern const char *const rr_rl_mode_names[];

int rr_parse_cpus(const char *s, int *cpus, uint32_t *ncpus, char *err,
		  size_t errlen);
/* A function's `workers`: per class, threads of each queue as "0-1,3",
 * the classes' groups separated by '|' ("0 | 1-3"), into a bit each in
 * masks[class]; a class not listed (all of them for "") is left 0, every
 * thread. 0 or -EINVAL with why. */
int rr_parse_workers(const char *s, uint32_t masks[RR_XDP_CLASSES], char *err,
		     size_t errlen);
int rr_check_workers(const char *s, char *err, size_t errlen);
/* deadline_us, already in 0..RR_MAX_DEADLINE_US: 0, or at least
 * RR_MIN_DEADLINE_US. */
int rr_check_deadline(const char *s, char *err, size_t errlen);
int rr_parse_spread(const char *s, int cpus[RR_MAX_SPREAD], uint32_t *n,
		    char *err, size_t errlen);
int rr_check_spread(const char *s, char *err, size_t errlen);
/* A canary's PERCENT, 1-99 with one decimal at most, as per mille in
 * *@permille: 0, or -EINVAL with one line in @err. */
int rr_parse_canary_share(const char *arg, unsigned int *permille, char *err,
			  size_t errlen);
/* A function's `canary`: "PATH PERCENT" into @path and *@permille; 0 or
 * -EINVAL with why. */
int rr_parse_canary(const char *s, char *path, size_t pathlen,
		    unsigned int *permille, char *err, size_t errlen);
int rr_check_canary(const char *s, char *err, size_t errlen);
/* A function's `canary_rollback`: "none", or faults, errors and p99
 * separated by commas, as RR_CANARY_* bits in *@mask ("": all three). 0
 * or -EINVAL with why. */
int rr_parse_canary_rollback(const char *s, uint32_t *mask, char *err,
			     size_t errlen);
int rr_check_canary_rollback(const char *s, char *err, size_t errlen);
/*
 * A group's `targets`: ADDR:PORT entries ([ADDR]:PORT for IPv6)
 * separated by ',' or blanks, and IPv4 ranges FIRST-LAST:PORT, appended
 * to out[*n...] (room for @max in all). 0 or -EINVAL with why.
 */
int rr_parse_targets(const char *s, struct rr_endpoint *out, uint32_t max,
		     uint32_t *n, char *err, size_t errlen);
/* The group called @name in @cfg, or -1. */
int rr_config_group(const struct rr_config *cfg, const char *name);
int rr_parse_ports(const char *s, uint16_t *ports, uint32_t max,
		   uint32_t *nports, char *err, size_t errlen);
/* `vlans`: "host", "any", or VLAN IDs and ranges 1-4094 separated by ','
 * with "host" among them or not. 0 or -EINVAL with why, naming @what. */
int rr_parse_vlans(const char *s, struct rr_vlans *v, const char *what,
		   char *err, size_t errlen);
int rr_parse_mode(const char *s, enum rr_xdp_mode *mode, char *err,
		  size_t errlen);
int rr_parse_tier(const char *s, enum rr_tier *tier, char *err, size_t errlen);
/* "thread" or "cell". */
int rr_parse_isolation(const char *s, enum rr_isolation *iso, char *err,
		       size_t errlen);
int rr_parse_tx_csum(const char *s, enum rr_tx_csum *csum, char *err,
		     size_t errlen);
/* "198.51.100.0/24, 2001:db8::/32": IPv4 and IPv6 prefixes, appended to
 * the *n already in out (repeated and continued 'allow' lines add up); a
 * bare address is a full-length prefix. On error *n is unchanged. */
int rr_parse_cidrs(const char *s, struct rr_cidr *out, uint32_t max,
		   uint32_t *n, char *err, size_t errlen);
/* The checks of a string setting's form (the settings table, settings.c,
 * adds the empty and length rules): an interface name; an absolute socket
 * path or "none"; an address for rr_parse_listen(). */
int rr_check_ifname(const char *s, char *err, size_t errlen);
int rr_check_control(const char *s, char *err, size_t errlen);
/*
 * "198.51.100.7:9464" or "[2001:db8::7]:9464": a literal address (no
 * names to resolve at start-up) and a port, 1-65535. Fills @sa (a struct
 * sockaddr_in or sockaddr_in6) and @salen.
 */
int rr_parse_listen(const char *s, struct sockaddr_storage *sa,
		    socklen_t *salen, char *err, size_t errlen);
int rr_check_listen(const char *s, char *err, size_t errlen);
/*
 * A function's `syscalls`: names separated by spaces, each a system call
 * of this machine. The names are looked up where reqrouter confines
 * cells (src/daemon/core/seccomp.c); a program without that (reqrouterctl,
 * the tools) checks their form only.
 */
int rr_check_syscalls(const char *s, char *err, size_t errlen);

/* Reads a cookie secret, 16 bytes in 32 hex digits (a "0x" before them
 * and white space around them allowed), from the file @path into @out:
 * 0, or -errno with the reason in @err. */
int rr_cookie_secret_read(const char *path, uint8_t *out, char *err,
			  size_t errlen);

/* cookie_secret's check: the file can be read and holds a secret. */
int rr_check_cookie_secret(const char *s, char *err, size_t errlen);

#endif /* RR_CONFIG_H */
