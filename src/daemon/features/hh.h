/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Heavy hitters per function (docs/DESIGN.md, "Who is calling"): the XDP
 * program samples requests into a count sketch per function; this reads
 * the sketches, finds their keys through the ring of sampled sources, and
 * keeps each function's top sources and source prefixes current for
 * reqrouterctl top and the metrics. The estimator (struct rr_hh_fn) is
 * apart from the invoker so that a test can run it on a replayed trace.
 */
#ifndef RR_HH_H
#define RR_HH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/hh.h"
#include "shared/port.h"

struct rr_invoker;
struct rr_service;

#define RR_HH_TOPK 10	 /* top keys shown and exported, per kind */
#define RR_HH_TRACK 64	 /* keys followed per kind: the top's candidates */
#define RR_HH_TAU_S 10.0 /* the rates' time constant */
#define RR_HH_INTERVAL_MS 1000 /* the sketches are read this often */
#define RR_HH_COLLECT_MS 50    /* and the ring of sampled sources this often */

/* A source, or a prefix with its host bits zero; AF_INET: addr[0..3]. */
struct rr_hh_key {
	uint32_t family;
	uint8_t addr[16];
};

/* A key followed: its hash (of its kind) and its decayed requests. */
struct rr_hh_entry {
	struct rr_hh_key key;
	uint64_t hash;
	double count;
};

/*
 * One function's sketch as user space follows it. Every interval the
 * sketch's growth since the last (@prev) is added, scaled to requests by
 * the sampling rate, into @dec, whose old contents decay by
 * e^(-dt/tau): an estimate from @dec is a key's requests with the recent
 * ones counting most, and divided by @time (the interval lengths decayed
 * alike) its requests per second. With tau = 0 nothing decays: the counts
 * are since the reset.
 */
struct rr_hh_fn {
	uint32_t sample;       /* 1 in N: the last interval's scale */
	uint64_t read_to;      /* the candidates' ring is read up to here */
	uint64_t prev_samples; /* the sketch's samples at the last interval */
	uint64_t lost; /* candidates overwritten before they were read */
	double total;  /* the function's requests, decayed */
	double time;   /* seconds, decayed alike */
	double f2[RR_HH_KINDS]; /* residual F2 of @dec (rr_hh_bound()) */
	struct rr_hh_entry track[RR_HH_KINDS][RR_HH_TRACK];
	uint32_t ntrack[RR_HH_KINDS];
	int32_t prev[RR_HH_KINDS][RR_HH_ROWS][RR_HH_WIDTH];
	float dec[RR_HH_KINDS][RR_HH_ROWS][RR_HH_WIDTH];
};

/* Follows @sk from now on: what it counted so far is not counted. */
struct rr_hh_fn *rr_hh_fn_new(const struct rr_hh_sketch *sk);
void rr_hh_fn_reset(struct rr_hh_fn *f, const struct rr_hh_sketch *sk);
/* The sources sampled since the last call: each kind's key is followed
 * if there is room, or if it outweighs the lightest one followed. */
void rr_hh_collect(struct rr_hh_fn *f, const struct rr_hh_sketch *sk,
		   uint64_t seed);
/* An interval of @dt seconds ended: the sketch's growth into the decayed
 * one at one sample per @sample requests, the followed keys estimated
 * again and sorted. @tau 0: no decay. */
void rr_hh_interval(struct rr_hh_fn *f, const struct rr_hh_sketch *sk,
		    uint32_t sample, double dt, double tau);
/* The heaviest keys of @kind above the error bound, at most @k, heaviest
 * first; how many. */
size_t rr_hh_top(const struct rr_hh_fn *f, enum rr_hh_kind kind,
		 struct rr_hh_entry *out, size_t k);
/* @key's decayed requests, as the sketch estimates them. */
double rr_hh_estimate(const struct rr_hh_fn *f, enum rr_hh_kind kind,
		      const struct rr_hh_key *key, uint64_t seed);
/* The additive error bound of an estimate of @kind, in decayed requests:
 * 3 * sqrt(F2res / RR_HH_WIDTH) (see docs/DESIGN.md). */
double rr_hh_bound(const struct rr_hh_fn *f, enum rr_hh_kind kind);
/* How far off an estimate of @count decayed requests may be, about 95 %
 * of the time: the sketch's bound plus twice the sampling's standard
 * error, sqrt(count * sample). */
double rr_hh_error(const struct rr_hh_fn *f, enum rr_hh_kind kind,
		   double count);
/* @key as text: an address, or a prefix "ADDR/LEN". */
void rr_hh_key_str(const struct rr_hh_key *key, enum rr_hh_kind kind, char *buf,
		   size_t len);
/* @key's @kind (a prefix: host bits zero) of a sampled source. */
void rr_hh_key_of(const struct rr_hh_cand *c, enum rr_hh_kind kind,
		  struct rr_hh_key *key);
/* The port entry's factor for one sample in @sample requests. */
uint32_t rr_hh_scale(uint32_t sample);
/* Fresh Exp(1) variables into the whole pool; 0 or -errno. */
int rr_hh_fill_pool(struct rr_hh_pool *pool);

/* The invoker's: set up after the program is loaded (a failure only
 * turns heavy hitters off), and gone with it. */
int rr_hh_open(struct rr_invoker *inv);
void rr_hh_close(struct rr_invoker *inv);
/* The port entry's heavy-hitter flag and scale, as @svc says. */
void rr_hh_port_conf(const struct rr_invoker *inv, const struct rr_service *svc,
		     struct rr_port_conf *conf);
/* Every tick of the main loop: never waits, does its work at its own
 * pace (RR_HH_COLLECT_MS, RR_HH_INTERVAL_MS). */
void rr_hh_tick(struct rr_invoker *inv);
/* reqrouterctl top [FUNCTION]: one JSON object on @f. */
void rr_hh_json(struct rr_invoker *inv, const char *name, FILE *f);
/* The heavy hitters' families, at most RR_HH_TOPK series per function
 * and kind. */
void rr_hh_write_metrics(struct rr_invoker *inv, FILE *out);

#endif /* RR_HH_H */
