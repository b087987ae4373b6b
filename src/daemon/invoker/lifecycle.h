/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The invoker's life (invoker.c, threads.c): set up, started, followed,
 * its workers changed while serving, stopped and torn down. What main.c
 * and the operations call.
 */
#ifndef RR_LIFECYCLE_H
#define RR_LIFECYCLE_H

#include <stdint.h>

#include "invoker.h"

/* Loads, attaches and creates every UMEM and socket; -errno on failure
 * with the reason logged. */
int rr_invoker_setup(struct rr_invoker *inv, const struct rr_config *cfg);
int rr_invoker_start(struct rr_invoker *inv);
/*
 * Changes the workers (and so the sockets) per queue to @n while serving.
 * Up: sockets made on the queues' UMEMs and put into the XSKMAP, workers
 * started, then the round-robin widened. Down: the round-robin narrowed
 * and the sockets taken out of the XSKMAP first, then each retiring worker
 * empties its rings and exits; its sockets stay for a later increase.
 * Returns 0 or -errno; @msg says what happened.
 */
/* One more cell group's workers, group_threads per queue, started (its
 * sockets made for every slot); 0 or -errno with @msg set. */
int rr_invoker_add_group(struct rr_invoker *inv, char *msg, size_t msglen);
int rr_invoker_set_threads(struct rr_invoker *inv, uint32_t n, char *msg,
			   size_t msglen);
/*
 * Why the instance is not ready to serve ("starting", "stopping", ...), or
 * NULL while it is: set up, its program attached, every worker running.
 * The one readiness test behind reqrouterctl health, /healthz and the
 * systemd watchdog.
 */
const char *rr_invoker_not_ready(struct rr_invoker *inv);
/*
 * Follows the host while serving (the main thread, every tick, netlink
 * asked at most every RR_WATCH_MS; follow.c): the interface's MTU, MAC,
 * RX queues and carrier, the local routes into the destination check,
 * and the veth peer's XDP program into the choice of tier.
 */
void rr_invoker_watch(struct rr_invoker *inv);
/* Stops and joins the workers. */
void rr_invoker_stop(struct rr_invoker *inv);
/* NULL-safe, and safe after a failed setup: frees what exists. */
void rr_invoker_destroy(struct rr_invoker *inv);
/* The CPUs workers may be pinned to, or -errno. */
int rr_allowed_cpus(const struct rr_config *cfg, int *cpus);
/* The CPU of worker (@q, @t) among the @ncpus @cpus: thread t of every
 * cell group on the same one, so that a queue's groups share its CPUs. */
int rr_worker_cpu(const struct rr_invoker *inv, const int *cpus, int ncpus,
		  uint32_t q, uint32_t t);
/* Starts worker (q, t), a thread or a cell, pinned to @cpu. */
int rr_start_worker(struct rr_invoker *inv, uint32_t q, uint32_t t, int cpu);
/* Waits for worker @w to end, once told to stop or retire. */
void rr_join_worker(struct rr_invoker *inv, struct rr_worker *w);

#endif /* RR_LIFECYCLE_H */
