/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rrload: the load client. main.c parses options, starts the engine's
 * threads, prints progress and the summary; sock.c is the socket engine
 * (closed and open loop, every reply verified); xdpgen.c offers frames
 * from the kernel for max-rate runs. main.c sits on top: what the engines
 * need of it (the stop flag, the functions' instances) reaches them
 * through struct rl_thread and struct rl_config, never a call up.
 */
#ifndef RRLOAD_H
#define RRLOAD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "hist.h"
#include "config.h"
#include "function.h"
#include "toolargs.h"
#include <reqrouter/rr_function.h>

#define RL_MAX_PORTS 32
#define RL_MAX_CONNS 1024
#define RL_MAX_THREADS 64
#define RL_MAX_PAYLOAD 65507 /* largest IPv4 UDP payload */
#define RL_ROOM 1472 /* reply room assumed for functions (MTU 1500, IPv4) */
#define RL_MIX_MAX 8 /* --mix: classes at most */
#define RL_MIX_MAX_US 100000u /* --mix: the work function's own bound */
#define RL_MIX_PORT 9010      /* --mix: the work function's port */
/* --mix: the shortest request, "100000 " and rrload's 12-byte header. */
#define RL_MIX_MIN_LEN 19

struct rl_payload {
	uint8_t *data;
	uint32_t len;
};

/* --mix: one class of requests to the work function. */
struct rl_mix_class {
	uint32_t weight;
	uint32_t us; /* the microseconds its requests ask for */
};

/* What a class of --mix adds up to; one set per thread, summed for
 * output. */
struct rl_class_stats {
	uint64_t sent;
	uint64_t answered; /* correct replies */
	uint64_t timeouts;
	uint64_t server_ns; /* the time spent the replies reported, summed */
	struct hist hist;   /* latency of the answered */
};

/* --spoof N[@CIDR] (spoof.c): N source addresses spread over the range. */
struct rl_spoof {
	uint32_t n;	  /* 0: no spoofing */
	const char *cidr; /* as given; NULL: the family's default */
	int family;
	uint8_t base[16]; /* the range's first address */
	unsigned int plen;
	char text[64]; /* the range, for the reports */
};

struct rl_config {
	struct sockaddr_storage addr; /* server, port filled per connection */
	socklen_t addrlen;
	int family;
	/* --bind: the sockets' source address (the family's; port 0); 0
	 * bytes: the kernel's choice. */
	struct sockaddr_storage bind;
	socklen_t bindlen;
	uint16_t ports[RL_MAX_PORTS];
	int nports;
	const struct rr_function *fn_override; /* -f: verify as this function */
	const char *fn_config; /* the functions' settings (reqrouter's) */
	/* --payloads: requests to send, cycled through, instead of -l's
	 * numbered pattern. */
	const char *payloads_file;
	/* --payload: the xdp engine's one request, instead of -l's. */
	const char *payload;
	struct rl_payload *payloads;
	unsigned int npayloads;
	/* --mix: requests to the work function, a class picked per request
	 * by weight (mix_weights: their sum). */
	struct rl_mix_class mix[RL_MIX_MAX];
	unsigned int nmix;
	uint64_t mix_weights;
	unsigned int conns;
	unsigned int threads;
	unsigned int len_min, len_max;
	double duration;       /* seconds, 0 = until count */
	uint64_t count;	       /* requests, 0 = until duration */
	double rate;	       /* requests/s in total, 0 = closed loop */
	unsigned int inflight; /* per connection */
	uint64_t timeout_ns;
	bool busy;
	bool quiet;
	const char *json;
	const char *lost_file; /* --lost: when each unanswered request went */
	int cpus[RR_MAX_CPUS]; /* --cpus, as rr_parse_cpus() gives it */
	uint32_t ncpus;
	/* XDP engine */
	bool engine_xdp;
	const char *ifname;
	const char *dst_mac;
	struct rl_spoof spoof;
	/* The instance (state) of each function this run checks replies
	 * with, made by main() from --fn-config (rl_fn_instance()). */
	struct {
		const struct rr_function *fn;
		struct rr_fn_instance *inst;
	} instances[RL_MAX_PORTS + 1];
	unsigned int ninstances;
};

/* What every engine reports; one set per thread, summed for output. */
struct rl_counters {
	uint64_t sent;
	uint64_t answered;
	uint64_t wrong;
	uint64_t timeouts;
	uint64_t late;
	uint64_t duplicates;
	uint64_t send_errors;
	uint64_t in_flight; /* set at the end: still out when interrupted */
	uint64_t refused;   /* ICMP port unreachable: nothing listens */
	/* --spoof: replies to the spoofed sources, the function's answer
	 * or a DNS slip (TC, no answer); other replies count as wrong. */
	uint64_t flood_answered;
	uint64_t flood_slipped;
};

struct rl_conn;

struct rl_thread {
	pthread_t tid;
	unsigned int idx;
	const struct rl_config *cfg;
	/* Set by SIGINT/SIGTERM (main's): the thread stops at its next
	 * turn. */
	const volatile sig_atomic_t *stop;
	struct rl_conn *conns;
	unsigned int nconns;
	uint64_t budget;      /* requests this thread may send (-n), or ~0 */
	double rate;	      /* this thread's share of -r */
	struct rl_counters c; /* owner stores relaxed, main loads relaxed */
	struct hist hist;
	struct rl_class_stats *mix; /* --mix: [cfg->nmix], likewise */
	/* --lost: send (open loop: due) times of the requests given up,
	 * CLOCK_MONOTONIC ns; grown only when one is. */
	uint64_t *lost;
	size_t nlost, lost_cap;
	uint64_t t_start, t_send_end; /* the sending phase, for rates */
	int err;
	bool done;
} __attribute__((aligned(64)));

static inline void rl_inc(uint64_t *v, uint64_t n)
{
	__atomic_store_n(v, *v + n, __ATOMIC_RELAXED);
}

/* Pins engine thread @idx to its CPU of --cpus, if given. */
static inline void rl_pin(const struct rl_config *cfg, unsigned int idx)
{
	rr_opt_pin_thread("rrload", cfg->cpus, cfg->ncpus, idx);
}

/* Socket engine. */
int sock_engine_init(struct rl_config *cfg, struct rl_thread *th);
void *sock_engine_run(void *arg);
void sock_engine_fini(struct rl_config *cfg, struct rl_thread *th);

/* XDP engine: one generator thread; counts land in th[0]. */
int xdp_engine_init(struct rl_config *cfg, struct rl_thread *th);
void *xdp_engine_run(void *arg);
void xdp_engine_poll(struct rl_config *cfg, struct rl_thread *th);
void xdp_engine_fini(struct rl_config *cfg, struct rl_thread *th);

/* The instance (state) of @fn this run verifies with, made in main()
 * from --fn-config; NULL for a function without init(). */
static inline const struct rr_fn_instance *
rl_fn_instance(const struct rl_config *cfg, const struct rr_function *fn)
{
	unsigned int i;

	for (i = 0; i < cfg->ninstances; i++)
		if (cfg->instances[i].fn == fn)
			return cfg->instances[i].inst;
	return NULL;
}

/* args.c: the command line, and --payloads. Return 0, or the exit code
 * after saying why (2: usage). */
int rl_parse_args(int argc, char **argv, struct rl_config *cfg);
int rl_load_payloads(struct rl_config *cfg);

/* spoof.c: --spoof's N (0, or 2 after saying why), its range once -s
 * has given the family (likewise), source address @i of the range (16
 * bytes, IPv4 in the first four), and the one's complement sum that
 * moves a checksum from address @from to @to (@len bytes each). */
int rl_parse_spoof(struct rl_config *cfg, const char *arg);
int rl_check_spoof(struct rl_config *cfg);
void rl_spoof_addr(const struct rl_spoof *sp, uint32_t i, uint8_t out[16]);
uint32_t rl_spoof_delta(const uint8_t *from, const uint8_t *to, size_t len);

/* report.c: what a run adds up to, on stdout, as JSON and as --lost. */
struct rl_total {
	struct rl_counters c;
	struct hist h;
	double elapsed;
	struct rl_class_stats mix[RL_MIX_MAX]; /* [cfg->nmix] */
};

void rl_sum_threads(const struct rl_config *cfg, struct rl_thread *th,
		    struct rl_total *t);
void rl_print_summary(const struct rl_config *cfg, struct rl_total *t);
int rl_write_json(const struct rl_config *cfg, struct rl_total *t);
int rl_write_lost(const struct rl_config *cfg, struct rl_thread *th,
		  unsigned int nth);

static inline double rl_us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

#endif /* RRLOAD_H */
