// SPDX-License-Identifier: GPL-2.0
/*
 * Setting the invoker up and tearing it down: check the interface, attach
 * the XDP program, create one UMEM per RX queue and on it one socket per
 * (queue, thread, slot) (core/xsk.c), publish the sockets and ports to
 * the program (slots/slots.c), start the pinned workers, as threads or as
 * cells (cells/supervise.c). Teardown runs the same steps backwards and
 * copes with a setup that stopped half-way. What changes while serving is
 * in slots/ (reload, deploy, remove) and threads.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <linux/if_ether.h>
#include <net/if.h>

#include "busypoll.h"
#include "cell.h"
#include "priority.h"
#include "slots.h"
#include "supervise.h"
#include "clock.h"
#include "follow.h"
#include "gather.h"
#include "invoker.h"
#include "log.h"
#include "tcp_loops.h"
#include "seccomp.h"
#include "validate.h"
#include "cookie.h"
#include "hh.h"
#include "worker.h"
#include "xsk.h"

/* What this link lets reqrouter serve: once attached, so that a start
 * that fails before has its one line. */
static void say_link(const struct rr_invoker *inv)
{
	const struct rr_link_state *l = &inv->link_now;
	char mac[18];

	pr_info("%s: MTU %u, MAC address %s: serving requests up to %u bytes (a UMEM frame holds %u bytes of Ethernet frame)\n",
		inv->cfg->ifname, l->mtu, rr_link_mac_str(l->mac, mac),
		rr_serve_limit(l->mtu), RR_FRAME_DATA_MAX);
	rr_say_frame_limit(inv->cfg->ifname, l->mtu);
}

static int check_interface(struct rr_invoker *inv, const struct rr_config *cfg)
{
	int nrx, ret;

	inv->ifindex = (int)if_nametoindex(cfg->ifname);
	if (!inv->ifindex) {
		pr_warn("no network interface named '%s'\n", cfg->ifname);
		return -ENODEV;
	}
	ret = rr_link_open(&inv->link, inv->ifindex, &inv->link_now);
	if (ret) {
		pr_warn("cannot read %s through netlink: %s\n", cfg->ifname,
			ret == -EPROTONOSUPPORT
				? "it has no Ethernet (6-byte) MAC address"
				: strerror(-ret));
		return ret;
	}
	nrx = (int)inv->link_now.rx_queues;
	if (nrx <= 0) {
		pr_warn("cannot count the RX queues of %s\n", cfg->ifname);
		return -ENODEV;
	}
	inv->nrxqueues = (uint32_t)nrx;
	inv->nqueues = cfg->queues ? cfg->queues : (uint32_t)nrx;
	if (inv->nqueues > (uint32_t)nrx) {
		pr_warn("%s has %d RX queue%s; -q %u asks for more\n",
			cfg->ifname, nrx, nrx == 1 ? "" : "s", inv->nqueues);
		return -EINVAL;
	}
	if (inv->nqueues < (uint32_t)nrx)
		pr_warn("serving %u of %s's %d RX queues: requests arriving on the others go to the kernel\n",
			inv->nqueues, cfg->ifname, nrx);
	if (inv->nqueues > RR_MAX_QUEUES) {
		pr_warn("%s has %u RX queues; serving the first %u\n",
			cfg->ifname, inv->nqueues, RR_MAX_QUEUES);
		inv->nqueues = RR_MAX_QUEUES;
	}
	return 0;
}

/* Zeroed, page aligned and shared with cells forked later: the queues'
 * locks and the workers' reports. */
static void *zalloc_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void free_shared(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

#define QUEUE_SH_SIZE(inv) (sizeof(*(inv)->queue_sh) * (inv)->nqueues)
#define REPORTS_SIZE(inv) (sizeof(*(inv)->reports) * RR_NWORKERS(inv))

/*
 * struct rr_live, shared and sealed: the main thread's mapping stays
 * writable, and no other can become so (F_SEAL_FUTURE_WRITE), so a cell
 * that maps the memfd read-only (cells/cell.c) cannot make it writable again.
 */
static int live_create(struct rr_invoker *inv)
{
	int fd, ret;
	void *p;

	fd = memfd_create("reqrouter-live", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, RR_LIVE_SIZE))
		goto fail;
	p = mmap(NULL, RR_LIVE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	if (fcntl(fd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
			  F_SEAL_SEAL)) {
		munmap(p, RR_LIVE_SIZE);
		goto fail;
	}
	inv->live = p;
	inv->live_fd = fd;
	return 0;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

/*
 * The destination check's addresses (answer_for = local): without them
 * every request would pass to the kernel, so a failure stops the start.
 */
static int watch_local(struct rr_invoker *inv)
{
	int fd4, fd6, fdtab, ret;

	if (inv->cfg->answer_for != RR_ANSWER_LOCAL)
		return 0;
	rr_xdp_local_maps(&inv->xdp, &fd4, &fd6, &fdtab);
	ret = rr_localaddr_open(&inv->local, fd4, fd6);
	if (!ret)
		ret = rr_localaddr_set_table(inv->local, fdtab);
	if (ret) {
		pr_warn("cannot read the host's local addresses through netlink: %s\n",
			strerror(-ret));
		return ret;
	}
	pr_info("answering requests for the host's own addresses: %u IPv4 and %u IPv6 local routes (answer_for = any answers every destination)\n",
		rr_localaddr_count(inv->local, AF_INET),
		rr_localaddr_count(inv->local, AF_INET6));
	return 0;
}

int rr_invoker_setup(struct rr_invoker *inv, const struct rr_config *cfg)
{
	uint32_t i, slot;
	bool gathering;
	char why[128], err[RR_ERRLEN];
	int ret;

	memset(inv, 0, sizeof(*inv));
	inv->cfg = cfg;
	inv->live_fd = -1;
	inv->group_threads = cfg->threads;
	inv->nthreads = cfg->threads;
	inv->ngroups = 1;
	inv->quiesce = rr_cells_quiesce;
	rr_tcp_init(inv);
	for (i = 0; i < cfg->nservices; i++)
		if (cfg->services[i].enabled)
			inv->slots[inv->nslots++].svc = &cfg->services[i];

	ret = check_interface(inv, cfg);
	if (ret)
		return ret;
	ret = rr_slots_assign_groups(inv);
	if (ret)
		return ret;
	/* The functions' cookie secrets, for their init(). */
	ret = rr_cookie_prepare((struct rr_config *)cfg, NULL, err,
				sizeof(err));
	if (ret) {
		pr_warn("%s\n", err);
		return ret;
	}
	ret = rr_instances_create(inv);
	if (ret)
		return ret;

	/* The supervisor's own, of which a cell gets a copy at its fork;
	 * what is shared with cells is what they report and what they are
	 * told (struct rr_live, read-only to them). */
	inv->umems = calloc(inv->nqueues, sizeof(*inv->umems));
	inv->workers = calloc(RR_NWORKERS(inv), sizeof(*inv->workers));
	inv->socks = calloc((size_t)RR_NWORKERS(inv) * RR_MAX_SLOTS,
			    sizeof(*inv->socks));
	inv->queue_sh = zalloc_shared(QUEUE_SH_SIZE(inv));
	inv->reports = zalloc_shared(REPORTS_SIZE(inv));
	ret = live_create(inv);
	if (ret || !inv->umems || !inv->workers || !inv->socks ||
	    !inv->queue_sh || !inv->reports) {
		pr_warn("cannot allocate the queues', workers' and sockets' state: %s\n",
			strerror(ret ? -ret : ENOMEM));
		return ret ? ret : -ENOMEM;
	}
	for (i = 0; i < inv->nqueues; i++)
		inv->umems[i].sh = &inv->queue_sh[i];
	for (i = 0; i < RR_NWORKERS(inv); i++) {
		inv->workers[i].rep = &inv->reports[i];
		for (slot = 0; slot < RR_MAX_SLOTS; slot++)
			inv->socks[i * RR_MAX_SLOTS + slot].stats =
				&inv->reports[i].stats[slot];
	}

	/* Room for the gathers only where a function gathers; for every
	 * group a reload may bring. The scatter program only for them, with
	 * gather_scatter = tc. */
	gathering = rr_gather_needed(inv);
	inv->live->mtu = inv->link_now.mtu;
	ret = rr_xdp_load_sized(
		&inv->xdp, inv->link_now.mac, inv->link_now.mtu, inv->nqueues,
		inv->ngroups,
		gathering ? RR_NWORKERS(inv) * RR_SG_PER_WORKER : 0,
		gathering ? RR_SG_MAX_GROUPS : 0,
		gathering && inv->cfg->gather_scatter == RR_SCATTER_TC);
	if (ret)
		return ret;
	/* Without it the program steers in turn and cannot tell a full
	 * worker: what it did before there was a load to read. */
	ret = rr_xdp_map_load(&inv->xdp, inv->nqueues);
	if (ret)
		pr_warn("cannot map the workers' load, every function is steered round-robin: %s\n",
			strerror(-ret));
	/* For the workers to charge rate_limit_us, cells included. */
	ret = rr_xdp_map_rl_cost(&inv->xdp);
	if (ret)
		pr_warn("cannot map the rate limiter's cost table: rate_limit_us limits nothing: %s\n",
			strerror(-ret));
	/* For the TCP loops and the workers to mark validated sources,
	 * cells included, and the tokens' key. */
	ret = rr_validate_open(inv);
	if (ret)
		pr_warn("cannot map the validated sources: only a valid DNS cookie validates a source: %s\n",
			strerror(-ret));
	/* Before any port opens: a port samples only with the pool drawn. */
	rr_hh_open(inv);
	ret = rr_xdp_attach(&inv->xdp, inv->ifindex, cfg->mode);
	if (ret)
		return ret;
	say_link(inv);
	/* Before any port opens: a tagged request is answered only then. */
	rr_follow_vlans(inv, false);
	/* Before any port opens, after the attach that a user's mistake
	 * (a foreign program) stops with its one line. */
	ret = watch_local(inv);
	if (ret)
		return ret;
	ret = rr_xsk_create_all(inv, rr_gather_stock_seed(inv));
	if (ret)
		return ret;
	rr_busy_poll_setup(inv);
	if (gathering) {
		ret = rr_gather_setup(inv);
		if (ret)
			return ret;
	}
	/* Ports last: until now every packet went to the kernel. Which
	 * tier answers depends on the peer, so it is known first. */
	rr_look_at_peer(inv, why, sizeof(why));
	for (slot = 0; slot < inv->nslots; slot++) {
		ret = rr_open_port(inv, slot);
		if (ret)
			return ret;
	}
	rr_say_peer(inv, why);
	/* Still privileged: a port below 1024 can be bound. */
	ret = rr_tcp_sync(inv, &(bool){ false });
	if (ret)
		return ret;
	inv->ready = true;
	return 0;
}

int rr_worker_cpu(const struct rr_invoker *inv, const int *cpus, int ncpus,
		  uint32_t q, uint32_t t)
{
	uint32_t i = q * inv->group_threads + t % inv->group_threads;

	return cpus[i % (uint32_t)ncpus];
}

int rr_allowed_cpus(const struct rr_config *cfg, int *cpus)
{
	cpu_set_t set;
	int n = 0, c;

	if (cfg->ncpus) {
		memcpy(cpus, cfg->cpus, sizeof(int) * cfg->ncpus);
		return (int)cfg->ncpus;
	}
	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (c = 0; c < CPU_SETSIZE && n < RR_MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

/*
 * Waits for worker @w to end, once it was told to stop or retire. A thread
 * still inside a function after JOIN_TIMEOUT_S is left behind (a cell
 * would have been killed long before): inv->stuck keeps its rings and
 * frames mapped until the process exits.
 */
#define JOIN_TIMEOUT_S 3
void rr_join_worker(struct rr_invoker *inv, struct rr_worker *w)
{
	struct timespec until;
	uint32_t si;

	if (!w->started)
		return;
	if (inv->cfg->isolation == RR_ISOLATION_CELL) {
		rr_cell_join(inv, w);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += JOIN_TIMEOUT_S;
	if (pthread_timedjoin_np(w->tid, NULL, &until) == ETIMEDOUT) {
		si = __atomic_load_n(&w->rep->batch.sock, __ATOMIC_ACQUIRE);
		pr_warn("the worker of queue %u, thread %u is stuck in function '%s' for %d s: left behind\n",
			w->queue, w->thread,
			si >= w->nsocks ? "?" : w->socks[si].svc->fn->name,
			JOIN_TIMEOUT_S);
		inv->stuck = true;
	}
	__atomic_store_n(&w->started, false, __ATOMIC_RELEASE);
}

/* Starts worker (q, t) pinned to @cpu; signals blocked by the caller. */
int rr_start_worker(struct rr_invoker *inv, uint32_t q, uint32_t t, int cpu)
{
	struct rr_worker *w = rr_worker_at(inv, q, t);
	cpu_set_t set;
	int ret;

	w->inv = inv;
	w->umem = &inv->umems[q];
	w->socks = rr_sock_at(inv, q, t, 0);
	w->load = inv->xdp.load ? &inv->xdp.load[q].w[t] : NULL;
	w->nsocks = inv->nslots;
	w->queue = q;
	w->thread = t;
	w->cell_group = t / inv->group_threads;
	w->index = q * RR_MAX_THREADS + t;
	w->cpu = cpu;
	w->retire = false;
	w->sys_tid = 0;
	w->rt_lowered = false;
	__atomic_store_n(&inv->live->retire[w->index], false, __ATOMIC_RELEASE);
	/* It starts its first round in the current epoch. */
	w->rep->seen_epoch = __atomic_load_n(&inv->epoch, __ATOMIC_SEQ_CST);
	__atomic_store_n(&w->rep->serving, 0, __ATOMIC_RELEASE);
	w->rep->batch.sock = RR_NO_BATCH;
	if (inv->xdp.gathers) {
		ret = rr_gathers_new(w);
		if (ret)
			return ret;
	}
	if (inv->cfg->isolation == RR_ISOLATION_CELL) {
		/* A cell pins itself, where a failure would go unheard:
		 * a CPU this process may not run on is refused here. */
		if (sched_getaffinity(0, sizeof(set), &set) || cpu < 0 ||
		    cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set)) {
			pr_warn("cannot pin worker %u/%u to CPU %d: %s\n", q, t,
				cpu, strerror(EINVAL));
			return -EINVAL;
		}
		return rr_cell_start(w);
	}
	ret = -pthread_create(&w->tid, NULL, rr_worker_run, w);
	if (ret) {
		pr_warn("cannot start a worker: %s\n", strerror(-ret));
		return ret;
	}
	__atomic_store_n(&w->started, true, __ATOMIC_RELEASE);
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	ret = -pthread_setaffinity_np(w->tid, sizeof(set), &set);
	if (ret) {
		pr_warn("cannot pin worker %u/%u to CPU %d: %s\n", q, t, w->cpu,
			strerror(-ret));
		return ret;
	}
	pr_debug("worker queue %u thread %u on CPU %d\n", q, t, w->cpu);
	return 0;
}

/*
 * Cells of a reqrouter still root (no --user) run as nobody: with no
 * capability a uid-0 process still owns every file root owns. Looked up
 * here, before any fork, not in a cell.
 */
#define NOBODY 65534
static void cells_identity(struct rr_invoker *inv)
{
	const struct passwd *pw;
	uid_t uid = NOBODY;
	gid_t gid = NOBODY;

	if (geteuid() != 0)
		return;
	pw = getpwnam("nobody");
	if (pw && pw->pw_uid) {
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	rr_cell_identity(uid, gid, inv->live->realtime);
	pr_info("cells run as uid %u, gid %u (nobody), with no capability\n",
		(unsigned int)uid, (unsigned int)gid);
}

int rr_invoker_start(struct rr_invoker *inv)
{
	int cpus[RR_MAX_CPUS], ncpus;
	uint32_t q, t, i = 0;
	char co[32] = "";
	sigset_t all, old;
	int ret = 0;

	/* Before the first fork: a cell loads what is built here. */
	if (inv->cfg->isolation == RR_ISOLATION_CELL) {
		ret = rr_seccomp_prepare(inv);
		if (ret)
			return ret;
		cells_identity(inv);
	}
	ncpus = rr_allowed_cpus(inv->cfg, cpus);
	if (ncpus <= 0) {
		pr_warn("cannot find a CPU this process may run on: %s\n",
			ncpus ? strerror(-ncpus)
			      : "the affinity mask is empty");
		return ncpus ? ncpus : -EINVAL;
	}
	/* Workers leave signals to the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (q = 0; q < inv->nqueues; q++) {
		for (t = 0; t < inv->nthreads; t++, i++) {
			ret = rr_start_worker(
				inv, q, t,
				rr_worker_cpu(inv, cpus, ncpus, q, t));
			if (ret)
				goto out;
		}
	}
	if (inv->cfg->coalesce_us && !inv->cfg->busy_poll)
		snprintf(co, sizeof(co), ", coalescing %u us",
			 inv->cfg->coalesce_us);
	pr_info("%u worker%s started%s (%s%s; %s%s%s)\n", i, i == 1 ? "" : "s",
		inv->cfg->isolation == RR_ISOLATION_CELL ? " as cells" : "",
		!inv->cfg->busy_poll	      ? "sleeping in poll()"
		: inv->live->prefer_busy_poll ? "busy-polling, preferred"
					      : "busy-polling, plain spinning",
		co, rr_priority_name(inv),
		rr_priority_why_normal(inv) ? ": " : "",
		rr_priority_why_normal(inv) ?: "");
	if (inv->cfg->coalesce_us && inv->cfg->busy_poll)
		pr_warn("coalesce_us = %u: no effect with busy_poll (a busy-polling worker never sleeps)\n",
			inv->cfg->coalesce_us);
	if (inv->cfg->busy_poll && i > (uint32_t)ncpus)
		pr_warn("%u busy-polling workers share %d CPU%s: they take turns, and latency suffers; use fewer queues or threads, or more CPUs\n",
			i, ncpus, ncpus == 1 ? "" : "s");
	/* The TCP loop, if a function has TCP: serving when ready is said. */
	rr_tcp_supervise(inv, rr_now_ns());
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

const char *rr_invoker_not_ready(struct rr_invoker *inv)
{
	uint32_t q, t;

	if (!inv->ready)
		return "starting";
	if (inv->draining)
		return "draining";
	if (inv->stopping)
		return "stopping";
	if (!inv->xdp.attached)
		return "the XDP program is not attached";
	if (!inv->link_now.up)
		return "the link is down";
	if (inv->restart_why[0])
		return inv->restart_why;
	for (q = 0; q < inv->nqueues; q++)
		for (t = 0; t < inv->nthreads; t++)
			if (!rr_worker_at(inv, q, t)->started)
				return "a worker is not running";
	return NULL;
}

void rr_invoker_stop(struct rr_invoker *inv)
{
	uint32_t i;

	if (!inv->workers || !inv->live)
		return;
	inv->stopping = true;
	__atomic_store_n(&inv->live->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < RR_NWORKERS(inv); i++)
		rr_join_worker(inv, &inv->workers[i]);
	rr_tcp_stop(inv);
}

void rr_invoker_destroy(struct rr_invoker *inv)
{
	uint32_t i, nsocks;

	if (!inv)
		return;
	rr_invoker_stop(inv);
	/* No new packets for sockets that are about to go. */
	rr_xdp_detach(&inv->xdp);
	rr_gather_teardown(inv);
	if (inv->cfg)
		rr_busy_poll_restore(inv);
	/* A thread left in a function would touch them if it came back. */
	if (inv->stuck)
		return;
	nsocks = RR_NWORKERS(inv) * RR_MAX_SLOTS;
	for (i = 0; inv->socks && i < nsocks; i++)
		if (inv->socks[i].xsk)
			xsk_socket__delete(inv->socks[i].xsk);
	for (i = 0; inv->umems && i < inv->nqueues; i++) {
		if (inv->umems[i].umem) {
			xsk_umem__delete(inv->umems[i].umem);
			pthread_spin_destroy(&inv->umems[i].sh->lock);
		}
		if (inv->umems[i].area)
			munmap(inv->umems[i].area, inv->umems[i].size);
	}
	rr_hh_close(inv);
	rr_validate_close();
	rr_gathers_free(inv);
	rr_xdp_destroy(&inv->xdp);
	rr_localaddr_close(inv->local);
	inv->local = NULL;
	rr_link_close(inv->link);
	inv->link = NULL;
	for (i = 0; i < RR_MAX_SLOTS; i++) {
		rr_instance_release(inv->slots[i].inst);
		inv->slots[i].inst = NULL;
		/* A canary's service is its slot's own (slots/canary.c). */
		if (inv->slots[i].canary_of)
			rr_canary_service_free(inv->slots[i].svc);
	}
	free(inv->socks);
	free(inv->workers);
	free(inv->umems);
	free_shared(inv->queue_sh, QUEUE_SH_SIZE(inv));
	free_shared(inv->reports, REPORTS_SIZE(inv));
	if (inv->live) {
		munmap(inv->live, RR_LIVE_SIZE);
		close(inv->live_fd);
	}
	inv->socks = NULL;
	inv->workers = NULL;
	inv->umems = NULL;
	inv->queue_sh = NULL;
	inv->reports = NULL;
	inv->live = NULL;
	inv->live_fd = -1;
}
