// SPDX-License-Identifier: GPL-2.0
/*
 * Cells: a serving loop (a worker, a TCP loop) in a process of its own,
 * forked from the main thread once everything is set up (rr_cell_fork()).
 * A cell keeps, of what is shared, only what its loop uses, and of the
 * descriptors only its own sockets; the rest it unmaps or closes before
 * it runs a function. Its copy of everything else, the supervisor's state
 * included, is its own and frozen at the fork, so a change of functions
 * (reload, deploy, threads) replaces every cell with a fresh fork.
 *
 * And the overrun watch every serving loop is under, cell or thread
 * (rr_call_watch(), watch.h). Who forks which cell and what happens when
 * one ends is supervise.c's (workers) and tcp_loops.c's (TCP loops).
 */
#include <dirent.h>
#include <grp.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/if_xdp.h>

#include "cell.h"
#include "invoker.h"
#include "owner.h"
#include "util.h"
#include "validate.h"
#include "worker.h"

/*
 * Whether the main thread's descriptor @fd is of no use to the cell: the
 * BPF maps, programs and links (one function could rewrite another's
 * allow-list, port or cached replies through them), netlink, the other
 * workers' AF_XDP sockets, the module copies and struct rr_live's memfd,
 * the interface's sysfs knobs, and every stream socket (a control or HTTP
 * client waits for the end of its connection, which a cell holding it
 * would delay). A function's own descriptors, from its init(), stay.
 */
static bool unused(bool (*own)(const void *ctx, int fd), const void *ctx,
		   int fd)
{
	char path[32], link[64];
	int type, domain;
	socklen_t len;
	ssize_t n;

	len = sizeof(domain);
	if (!getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len)) {
		len = sizeof(type);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len))
			type = 0;
		return domain == AF_NETLINK ||
		       ((domain == AF_XDP || type == SOCK_STREAM ||
			 type == SOCK_SEQPACKET) &&
			!own(ctx, fd));
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return !strncmp(link, "anon_inode:bpf", 14) ||
	       !strncmp(link, "anon_inode:btf", 14) ||
	       !strncmp(link, "anon_inode:[bpf", 15) ||
	       !strncmp(link, "/memfd:rr-module:", 17) ||
	       !strncmp(link, "/memfd:reqrouter-live", 21) ||
	       !strncmp(link, "/sys/", 5);
}

static void close_unused(bool (*own)(const void *ctx, int fd), const void *ctx)
{
	int fds[1024], n = 0, fd;
	struct dirent *e;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((e = readdir(d)) && n < (int)ARRAY_SIZE(fds)) {
		fd = atoi(e->d_name);
		if (fd > 2 && fd != dirfd(d) && unused(own, ctx, fd))
			fds[n++] = fd;
	}
	closedir(d);
	while (n--)
		close(fds[n]);
}

/* The mapping of ring @r, whose descriptors start @desc bytes into it. */
static void unmap_ring(void *ring, uint64_t desc, uint32_t size, size_t entry)
{
	if (ring)
		munmap((char *)ring - desc, desc + (size_t)size * entry);
}

/* Whether a function of cell group @g charges its calls' time
 * (rate_limit_us) as the cell starts. */
static bool group_charges(const struct rr_invoker *inv, uint32_t g)
{
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++)
		if (inv->slots[slot].cell_group == g &&
		    inv->slots[slot].svc->rate_limit_us)
			return true;
	return false;
}

/* Whether a function of cell group @g validates with tokens. */
static bool group_tokens(const struct rr_invoker *inv, uint32_t g)
{
	uint32_t slot;

	for (slot = 0; slot < inv->nslots; slot++)
		if (inv->slots[slot].cell_group == g && inv->slots[slot].svc &&
		    inv->slots[slot].svc->fn->flags & RR_FN_TOKENS)
			return true;
	return false;
}

/* Every worker's shared memory but @w's (NULL: all): the sockets' rings,
 * the other queues' UMEMs, rings and locks, the reports; the rate
 * limiter's cost table but for a cell whose functions charge it. */
int rr_unmap_workers(struct rr_invoker *inv, const struct rr_worker *w)
{
	struct xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	struct rr_cache_entry *part;
	struct rr_umem *u;
	struct rr_sock *s;
	uint32_t q, i, g;
	int fd = -1;

	for (i = 0; i < RR_NWORKERS(inv) * RR_MAX_SLOTS && fd < 0; i++)
		if (inv->socks[i].xsk)
			fd = inv->socks[i].fd;
	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen))
		return -errno;
	for (i = 0; i < RR_NWORKERS(inv) * RR_MAX_SLOTS; i++) {
		s = &inv->socks[i];
		if (!s->xsk ||
		    (w && s >= w->socks && s < w->socks + RR_MAX_SLOTS))
			continue;
		unmap_ring(s->rx.ring, off.rx.desc, s->rx.size,
			   sizeof(struct xdp_desc));
		unmap_ring(s->tx.ring, off.tx.desc, s->tx.size,
			   sizeof(struct xdp_desc));
	}
	for (q = 0; q < inv->nqueues; q++) {
		u = &inv->umems[q];
		if (w && q == w->queue)
			continue;
		unmap_ring(u->fill.ring, off.fr.desc, u->fill.size,
			   sizeof(uint64_t));
		unmap_ring(u->comp.ring, off.cr.desc, u->comp.size,
			   sizeof(uint64_t));
		if (u->area)
			munmap(u->area, u->size);
		munmap(u->sh, sizeof(*u->sh));
		if (inv->xdp.load)
			munmap(&inv->xdp.load[q], sizeof(inv->xdp.load[q]));
	}
	/* Another queue's cached answers are not the cell's, nor another
	 * cell group's on its own queue. */
	for (q = 0; q < inv->nqueues; q++)
		for (g = 0; g < inv->xdp.cache_groups; g++) {
			part = rr_xdp_cache_of(&inv->xdp, q, g);
			if (part && (!w || q != w->queue || g != w->cell_group))
				munmap(part,
				       sizeof(struct rr_cache_entry) *
					       inv->xdp.cache_queue_entries);
		}
	for (i = 0; i < RR_NWORKERS(inv); i++)
		if (!w || i != w->index)
			munmap(&inv->reports[i], sizeof(inv->reports[i]));
	/* A cell that can write the cost table can have XDP limit any
	 * function's clients: only the cells of a function with
	 * rate_limit_us keep it (one set by a reload charges from the
	 * cells forked after it), and no TCP loop, whose calls are not
	 * charged. */
	if (inv->xdp.rl_cost && (!w || !group_charges(inv, w->cell_group))) {
		munmap(inv->xdp.rl_cost, inv->xdp.rl_cost_size);
		inv->xdp.rl_cost = NULL;
	}
	/* A cell that can write the validated sources can lift any
	 * address's prefix budgets, for every function: only the cells of
	 * a function that validates with tokens keep them, and the TCP
	 * loop, which marks a source at accept. */
	if (w && !group_tokens(inv, w->cell_group))
		rr_validate_cell_unmap(inv);
	return 0;
}

/* A freshly forked cell's first step: signals left to the main thread,
 * none blocked, death with the main thread (gone already: exits). */
static void cell_begin(pid_t parent)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigset_t none;

	/* The main thread stops cells through the shared stop flag; a
	 * terminal's ^C or a service manager's SIGTERM to the group is the
	 * main thread's to handle. A dead main thread takes the cells along. */
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGTERM, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
}

static uid_t cell_uid;
static gid_t cell_gid;
static bool cell_rtprio;

void rr_cell_identity(uid_t uid, gid_t gid, bool rtprio)
{
	cell_uid = uid;
	cell_gid = gid;
	cell_rtprio = rtprio;
}

/*
 * A cell of a root reqrouter becomes cell_uid: with no capability it
 * could still open and change whatever root owns. Its bounding set goes
 * first, while it still may drop it. With realtime priority asked for it
 * keeps CAP_SYS_NICE alone across the change, for the worker to raise
 * itself before it drops every capability (serve/worker.c).
 */
static int become(pid_t parent)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct nice[_LINUX_CAPABILITY_U32S_3] = {};

	if (!cell_uid)
		return 0;
	rr_worker_drop_bounding();
	if (cell_rtprio && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -errno;
	if (setgroups(0, NULL) || setresgid(cell_gid, cell_gid, cell_gid) ||
	    setresuid(cell_uid, cell_uid, cell_uid))
		return -errno;
	if (cell_rtprio) {
		nice[0].effective = nice[0].permitted = 1U << CAP_SYS_NICE;
		if (syscall(SYS_capset, &hdr, nice) ||
		    prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
			return -errno;
	}
	/* A change of credentials clears the parent-death signal. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	return 0;
}

/* The child's side of rr_cell_fork(): confined, or it serves nothing. */
static void cell_main(const struct rr_cell *c, pid_t parent)
{
	struct rlimit nocore = { 0, 0 };
	cpu_set_t set;

	cell_begin(parent);
	if (c->keep_memory(c->ctx))
		_exit(RR_CELL_UNCONFINED);
	close_unused(c->own, c->ctx);
	rr_owner_forget();
	/* A crash dump of the shared UMEM would slow the restart. */
	setrlimit(RLIMIT_CORE, &nocore);
	prctl(PR_SET_NAME, c->name);
	if (c->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(c->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (become(parent) || (c->confine && c->confine(c->ctx)))
		_exit(RR_CELL_UNCONFINED);
	c->run(c->ctx);
	_exit(0);
}

pid_t rr_cell_fork(const struct rr_cell *c)
{
	pid_t parent = getpid(), pid;

	/* Nothing buffered may be written twice. */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		cell_main(c, parent);
	return pid;
}

/* The CPU time cell @pid has used, in ns; 0 if it cannot be read. */
uint64_t rr_cell_cpu_ns(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) || clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Whether a call seen since @since_ns (the cell's CPU time then
 * @since_cpu_ns) has run out of @limit ns: see rr_call_watch(). */
#define OVERRUN_WALL_TIMES 10
#define OVERRUN_WALL_MIN_NS 100000000ULL
static bool ran_out(pid_t pid, uint64_t since_ns, uint64_t since_cpu_ns,
		    uint64_t limit, uint64_t now)
{
	uint64_t wall = limit * OVERRUN_WALL_TIMES, cpu;

	if (wall < OVERRUN_WALL_MIN_NS)
		wall = OVERRUN_WALL_MIN_NS;
	if (now - since_ns >= wall)
		return true;
	cpu = rr_cell_cpu_ns(pid);
	return !cpu || !since_cpu_ns || cpu - since_cpu_ns >= limit;
}

enum rr_overrun rr_call_watch(struct rr_call_watch *cw, uint64_t seq,
			      uint64_t limit_ns, pid_t pid, uint64_t now)
{
	if (seq != cw->seq) {
		cw->seq = seq;
		cw->since_ns = now;
		cw->since_cpu_ns = pid ? rr_cell_cpu_ns(pid) : 0;
		cw->warned = false;
		return RR_IN_TIME;
	}
	if (!(seq & 1) || !limit_ns || now - cw->since_ns < limit_ns)
		return RR_IN_TIME;
	if (pid)
		return ran_out(pid, cw->since_ns, cw->since_cpu_ns, limit_ns,
			       now)
			       ? RR_OVERRUN_KILL
			       : RR_IN_TIME;
	if (cw->warned)
		return RR_IN_TIME;
	cw->warned = true;
	return RR_OVERRUN_WARN;
}
