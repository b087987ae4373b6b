/* SPDX-License-Identifier: GPL-2.0 */
/* The XDP program's life: load, configure its maps, attach, read, detach. */
#ifndef RR_XDP_H
#define RR_XDP_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct reqrouter;

struct rr_xdp {
	struct reqrouter *skel;
	int ifindex;
	uint32_t flags; /* XDP_FLAGS_* it was attached with */
	uint32_t prog_id;
	bool attached;
};

/* Loads the program; frames not for @mac (6 bytes) go to the kernel. */
int rr_xdp_load(struct rr_xdp *x, const uint8_t *mac);
/* Attaches to ifindex in the given mode, replacing a stale program of
 * ours; a foreign program is an error. */
int rr_xdp_attach(struct rr_xdp *x, int ifindex, enum rr_xdp_mode mode);
/* Detaches, but only while the program on the interface is still ours. */
void rr_xdp_detach(struct rr_xdp *x);
void rr_xdp_destroy(struct rr_xdp *x);

/* Whether our program is still the one attached (someone may detach it). */
bool rr_xdp_still_attached(const struct rr_xdp *x);
const char *rr_xdp_mode_name(const struct rr_xdp *x);

int rr_xdp_set_socket(struct rr_xdp *x, uint32_t queue, uint32_t slot,
		      uint32_t thread, int fd);
int rr_xdp_set_port(struct rr_xdp *x, uint16_t port, uint32_t slot,
		    uint32_t nsocks, uint32_t flags);
/* Adds a prefix to the allow-list of function @slot. */
int rr_xdp_allow(struct rr_xdp *x, uint32_t slot, const struct rr_cidr *c);
/*
 * Sums the per-CPU counters: out[row * RR_XDP_STAT_MAX + stat] for rows
 * 0..nrows-1; row q is RX queue q, row RR_MAX_QUEUES every queue beyond.
 */
int rr_xdp_read_stats(struct rr_xdp *x, uint64_t *out, uint32_t nrows);
/* The rows an interface with nrxqueues RX queues can have counted. */
uint32_t rr_xdp_stat_rows(uint32_t nrxqueues);

#endif /* RR_XDP_H */
