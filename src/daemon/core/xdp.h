/* SPDX-License-Identifier: GPL-2.0 */
/* The XDP program's life: load, configure its maps, attach, read, detach. */
#ifndef RR_XDP_H
#define RR_XDP_H

#include <stdbool.h>
#include <net/if.h>
#include <stdint.h>

#include "config.h"
#include "shared/cache.h"
#include "shared/canary.h"
#include "shared/port.h"
#include "shared/rl.h"
#include "shared/validate.h"

struct reqrouter;

struct bpf_object;
struct rr_xdp_impl;

struct rr_xdp {
	struct reqrouter *skel;
	int ifindex;
	uint32_t flags; /* XDP_FLAGS_* it was attached with */
	uint32_t prog_id;
	bool attached;
	char ifname[IF_NAMESIZE]; /* names the record of prog_id, see xdp.c */
	/* The functions' XDP programs, by slot, once loaded. */
	struct bpf_object *fn_objs[RR_MAX_SLOTS];
	/* The same, loaded as cpumap programs for xdp_spread; NULL where
	 * the kernel refused that copy. */
	struct bpf_object *fn_objs_cpumap[RR_MAX_SLOTS];
	/* The slots with a tap (rr_xdp_set_tap()), a bit each. */
	uint32_t taps;
	/* xdp_spread's CPUs with an entry in spread_cpus (a thread each),
	 * below spread_ncpus, the possible CPUs. */
	bool spread_on[RR_MAX_CPUS];
	uint32_t spread_ncpus;
	/* The reply cache, mapped: cache_queues * cache_groups partitions
	 * of cache_queue_entries each, one per (RX queue served, cell group)
	 * (shared/cache.h; rr_xdp_cache_of()). */
	struct rr_cache_entry *cache;
	size_t cache_size;
	uint32_t cache_queues;
	uint32_t cache_groups;
	uint32_t cache_queue_entries;
	/* The heavy-hitter sketches (RR_MAX_SLOTS) and the pool of Exp(1)
	 * variables, mapped by rr_xdp_map_hh(), and the hash's seed the
	 * program was loaded with. */
	struct rr_hh_sketch *hh;
	size_t hh_size;
	struct rr_hh_pool *hh_pool;
	size_t hh_pool_size;
	uint64_t hh_seed;
	/* The rate limiter's generation of each slot (rr_rl_seed()), and
	 * the last one given: a new one starts the function's buckets
	 * full. */
	uint32_t rl_gen[RR_MAX_SLOTS];
	uint32_t rl_gens;
	/* The workers' load (worker_load, a page per queue served), mapped by
	 * rr_xdp_map_load(); NULL: the program steers in turn only. */
	struct rr_queue_load *load;
	size_t load_size;
	/* What the source prefixes cost their functions (rl_cost_table,
	 * rate_limit_us), mapped by rr_xdp_map_rl_cost() for the workers,
	 * cells included, to charge; NULL: no function's cost is charged. */
	struct rr_rl_set *rl_cost;
	size_t rl_cost_size;
	/* The validated sources (validate_table), mapped by
	 * rr_xdp_map_validate() for the TCP loop and the workers, cells
	 * included, to mark; NULL: only a valid cookie validates. */
	struct rr_validate_set *validate;
	size_t validate_size;
	/* Gathers (docs/DESIGN.md, "Gathers"): the gathers map, mapped by
	 * rr_xdp_map_gathers() (ngathers entries, RR_SG_PER_WORKER per
	 * worker index), and the scatter program on the egress, if put
	 * there (with the clsact qdisc, if this made it). */
	uint32_t ngathers;
	uint32_t ngroups;
	struct rr_gather_entry *gathers;
	size_t gathers_size;
	/* The ways to the targets the program learned (sg_paths), read
	 * only; mapped with the gathers. */
	const struct rr_sg_path *sg_paths;
	size_t sg_paths_size;
	bool scatter_attached;
	bool scatter_qdisc;
};

/* The oldest kernel the XDP program loads on: bpf_xdp_load_bytes() and
 * bpf_xdp_store_bytes() came in 5.18. */
#define RR_MIN_KERNEL "5.18"
/* 0 if the running kernel is new enough, else -ENOTSUP with a line in why. */
int rr_xdp_check_kernel(char *why, size_t len);

/* Loads the program; frames not for @mac (6 bytes) go to the kernel, and
 * the in-kernel tier's replies fit @mtu. */
int rr_xdp_load(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu);
/* The interface's MAC and MTU the loaded program goes by from now on
 * (shared/link.h): what link.c learned changed. */
void rr_xdp_set_link(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu);
/* The VLAN IDs the program answers tagged frames for (RR_VLAN_WORDS
 * words, a bit per ID), or NULL: any tag. Loaded, it answers any. */
void rr_xdp_set_vlans(struct rr_xdp *x, const uint64_t *vlans);
/* rr_xdp_load() with a reply cache partition for each of @nqueues RX
 * queues and @cell_groups cell groups, and room for @ngathers
 * outstanding gathers and @ngroups groups of targets (0, 0: none); the
 * scatter program (TC egress, rr_xdp_attach_scatter()) loaded only if
 * @scatter. rr_xdp_load() is for one queue and one cell group, without
 * it. */
int rr_xdp_load_sized(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu,
		      uint32_t nqueues, uint32_t cell_groups, uint32_t ngathers,
		      uint32_t ngroups, bool scatter);

/* Queue @queue's partition of the reply cache for cell group @group,
 * mapped (NULL if not, or if the group came after load). */
static inline struct rr_cache_entry *
rr_xdp_cache_of(const struct rr_xdp *x, uint32_t queue, uint32_t group)
{
	if (!x->cache || queue >= x->cache_queues || group >= x->cache_groups)
		return NULL;
	return x->cache + ((size_t)queue * x->cache_groups + group) *
				  x->cache_queue_entries;
}
/* Maps the gathers map into this process and the cells it forks; 0 or
 * -errno. */
int rr_xdp_map_gathers(struct rr_xdp *x);
/* Writes group @group's @n targets (struct rr_endpoint) into sg_targets,
 * the rest of its room emptied; 0 or -errno. */
struct rr_endpoint;
int rr_xdp_set_targets(struct rr_xdp *x, uint32_t group,
		       const struct rr_endpoint *t, uint32_t n);
/* Puts the scatter program on @ifindex's egress (TC, a clsact qdisc made
 * if there is none), or takes it off; 0 or -errno. */
int rr_xdp_attach_scatter(struct rr_xdp *x, int ifindex);
void rr_xdp_detach_scatter(struct rr_xdp *x, int ifindex);
/* The sockets' RX ring size the program judges a full worker by. */
#define RR_XDP_RX_RING 2048
/* Frames a cpumap thread of xdp_spread may have queued. */
#define RR_SPREAD_QSIZE 2048
/*
 * Loads a function's XDP implementation, sharing the steering program's
 * maps, and puts it in slot @slot of fn_progs. -errno with the reason in
 * @why (the verifier's refusal, usually).
 */
int rr_xdp_load_function(struct rr_xdp *x, uint32_t slot,
			 const struct rr_xdp_impl *impl, char *why, size_t len);
/* The maps of the host's own destinations (local_v4, local_v6 and the
 * table in front of them, local_tab), for localaddr.c to keep current. */
void rr_xdp_local_maps(const struct rr_xdp *x, int *fd_v4, int *fd_v6,
		       int *fd_tab);
/* Maps the reply cache into this process; 0 or -errno. */
int rr_xdp_map_cache(struct rr_xdp *x);
/* Maps the heavy-hitter sketches and pool into this process, never into
 * a process it forks (a cell); 0 or -errno. */
int rr_xdp_map_hh(struct rr_xdp *x);
/* Maps the workers' load of queues 0..@nqueues-1 into this process, and
 * into the cells it forks (each keeps its own queue's page); 0 or -errno. */
int rr_xdp_map_load(struct rr_xdp *x, uint32_t nqueues);
/* Maps rl_cost_table into this process and the cells it forks, which
 * charge it (rate_limit_us); 0 or -errno. */
int rr_xdp_map_rl_cost(struct rr_xdp *x);
/* Maps validate_table into x->validate, shared with the cells; 0 or
 * -errno. */
int rr_xdp_map_validate(struct rr_xdp *x);
/* Every CPU's sampling state of @slot back to "sample the next request". */
int rr_xdp_hh_reset_cpu(struct rr_xdp *x, uint32_t slot);
/* Attaches to ifindex in the given mode, replacing a stale program of
 * ours; a foreign program is an error. */
int rr_xdp_attach(struct rr_xdp *x, int ifindex, enum rr_xdp_mode mode);
/* Detaches, but only while the program on the interface is still ours. */
void rr_xdp_detach(struct rr_xdp *x);
void rr_xdp_destroy(struct rr_xdp *x);

/* Whether our program is still the one attached (someone may detach it). */
bool rr_xdp_still_attached(const struct rr_xdp *x);
const char *rr_xdp_mode_name(const struct rr_xdp *x);

/* Socket @fd as (queue, thread, slot) in the XSKMAP. */
int rr_xdp_set_socket(struct rr_xdp *x, uint32_t queue, uint32_t thread,
		      uint32_t slot, int fd);
/* The XSKMAP entry of (queue, thread, slot) out again. */
int rr_xdp_clear_socket(struct rr_xdp *x, uint32_t queue, uint32_t thread,
			uint32_t slot);
/* Writes @port's entry, and its bit in served_ports (whether it has
 * sockets): the two together, by this alone. */
int rr_xdp_set_port(struct rr_xdp *x, uint16_t port,
		    const struct rr_port_conf *conf);
/* @port's canary (kern/lib/canary.h): written before the port's entry
 * says it has one, deleted after it stops saying so. */
int rr_xdp_set_canary(struct rr_xdp *x, uint16_t port,
		      const struct rr_canary *c);
int rr_xdp_del_canary(struct rr_xdp *x, uint16_t port);
/* Function slot @slot's deadline in ns (0: none), for the program's
 * deadline_ns (kern/lib/deadline.h). */
void rr_xdp_set_deadline(struct rr_xdp *x, uint32_t slot, uint64_t ns);
/* Function slot @slot's trace_sample (0: none), for the program to mark
 * one request in that many while a trace runs (kern/lib/capture.h). */
void rr_xdp_set_trace(struct rr_xdp *x, uint32_t slot, uint32_t sample);
/* Function slot @slot's tap (rr_fn_tap()): one request in @sample marked
 * RR_MARK_TAP, 0 none; capture_on has RR_MARK_TAP while a slot taps. */
void rr_xdp_set_tap(struct rr_xdp *x, uint32_t slot, uint32_t sample);
/* Sets or clears @port's bit in @served, the program's served_ports
 * (the BPF tests write port_map themselves and call this). */
void rr_xdp_mark_served(volatile __u64 *served, uint16_t port, bool on);
/* Adds a prefix to the allow-list of function @slot. */
/* Takes @port out: its packets go to the kernel again. */
int rr_xdp_del_port(struct rr_xdp *x, uint16_t port);
int rr_xdp_spread_cpu(struct rr_xdp *x, uint32_t cpu, bool on);
int rr_xdp_allow(struct rr_xdp *x, uint32_t slot, const struct rr_cidr *c);
/*
 * Sums the per-CPU counters: out[row * RR_XDP_STAT_MAX + stat] for rows
 * 0..nrows-1; row q is RX queue q, row RR_MAX_QUEUES every queue beyond.
 */
int rr_xdp_read_stats(struct rr_xdp *x, uint64_t *out, uint32_t nrows);
/* Sums the in-kernel tier's per-CPU counters of (queue, slot):
 * out[enum rr_fn_stat], RR_FN_STAT_MAX of them. */
int rr_xdp_read_fn_stats(struct rr_xdp *x, uint32_t queue, uint32_t slot,
			 uint64_t *out);
/* The rows an interface with nrxqueues RX queues can have counted. */
uint32_t rr_xdp_stat_rows(uint32_t nrxqueues);

#endif /* RR_XDP_H */
