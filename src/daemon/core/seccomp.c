// SPDX-License-Identifier: GPL-2.0
/*
 * The system calls a cell may make (isolation = cell). A cell runs user
 * code with no capability (worker.c, rr_worker_drop_caps); on top of that
 * it confines itself, before its first request, to an allow-list of the
 * calls a worker and a function need. Anything else kills the cell
 * (SECCOMP_RET_KILL_PROCESS): the supervisor sees it die of SIGSYS ("Bad
 * system call"), charges the function that was in a call with a crash
 * and forks a new cell (cells/supervise.c). A function that needs more says so in
 * its section, `syscalls = openat read`; the cells of a cell group allow
 * the lists of the group's functions only, since they serve no other
 * (docs/DESIGN.md, "Cell groups"), and such a function has a group of
 * its own by default.
 * Worker threads (isolation = thread) share the main thread's process and
 * get no filter.
 *
 * The main thread builds the filter with libseccomp, at start-up (a bad
 * name stops reqrouter with one line) and again before the cells are
 * renewed (a deploy may add a function with calls of its own), and keeps
 * it as a classic BPF program. A cell, a fork of the main thread, then
 * loads its copy with one seccomp() call: no libseccomp state, no
 * allocation, nothing to fail halfway, and a fork stays as cheap as it
 * was.
 *
 * One condition depends on the cell itself: the signals abort() and
 * raise() send (tgkill) must go to the cell's own pid, never to the main
 * thread or another cell, which run as the same user. A second filter of
 * a few instructions, made by the cell with its pid, says so; a function's
 * `syscalls` cannot lift it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <seccomp.h>

#include "log.h"
#include "seccomp.h"
#include "util.h"

/* One rule: system call @name, allowed when all of @cmp hold. */
struct allowed {
	const char *name;
	unsigned int ncmp;
	struct scmp_arg_cmp cmp[2];
};

/* The sanitizers' build (make SAN=1): see the list. */
#if defined(__SANITIZE_ADDRESS__)
#define RR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RR_ASAN 1
#endif
#endif

/*
 * The allow-list. Found by running echo, reverse, kv, dns and sockperf and
 * the test module faulty.so in cells, as root and as --user nobody,
 * sleeping in poll() and busy-polling (-B), under rrload, sockperf and
 * kdig, through crashes, aborts, overruns, a reload, `threads 2` and a
 * deploy, first with the filter's default action set to log (the kernel's
 * audit lines, type 1326, name each call the list lacked: only faulty's
 * openat and close), then under strace -ff: once confined, a cell makes
 * poll, sendto, recvfrom and sched_yield while serving, exit_group at its
 * end, and rt_sigprocmask, gettid, getpid and tgkill in abort(). The other
 * entries are for what those runs cannot show: a function's malloc(), a
 * clock without vDSO, a lock that sleeps, a message to stderr. A call
 * this machine does not have (ppoll or poll on some) is left out.
 */
static const struct allowed allowed[] = {
	/* The worker's round (worker.c): poll() while idle (ppoll() where
	 * glibc has no poll); sendto() kicks TX and recvfrom() wakes RX or
	 * drives busy polling, both with no data (length 0), so no socket
	 * the cell inherited (netlink, say) carries a byte; sched_yield()
	 * after an idle busy-polling round; clock_nanosleep() (below) with
	 * coalesce_us. */
	{ .name = "poll" },
	{ .name = "ppoll" },
	{ .name = "sendto", .ncmp = 1, .cmp = { SCMP_A2(SCMP_CMP_EQ, 0, 0) } },
	{ .name = "recvfrom",
	  .ncmp = 1,
	  .cmp = { SCMP_A2(SCMP_CMP_EQ, 0, 0) } },
	{ .name = "sched_yield" },
	/* A poll() with a time-out, stopped and continued (the supervisor
	 * stops a cell to check an overrun, and lets it go on if the call
	 * ended meanwhile), resumes through restart_syscall. */
	{ .name = "restart_syscall" },
	/* The end of a cell (_exit() once told to stop, restart or
	 * retire). */
	{ .name = "exit_group" },
	/* abort() and raise() (a failed assert(), glibc's heap checks): the
	 * signal mask, gettid, getpid and a tgkill() to the cell itself
	 * (the second filter checks the pid), so that the cell dies of the
	 * function's own signal and the log says so. A handler a function's
	 * init() installed returns through rt_sigreturn. */
	{ .name = "rt_sigprocmask" },
	{ .name = "gettid" },
	{ .name = "getpid" },
	{ .name = "tgkill" },
	{ .name = "rt_sigreturn" },
	/* Messages: a log line or a function's fprintf() (write), glibc's
	 * "double free detected" before it aborts (writev). To stderr and
	 * stdout only, no other descriptor the cell inherited (the interface's
	 * sysfs knobs, say). */
	{ .name = "write",
	  .ncmp = 1,
	  .cmp = { SCMP_A0(SCMP_CMP_EQ, STDERR_FILENO, 0) } },
	{ .name = "write",
	  .ncmp = 1,
	  .cmp = { SCMP_A0(SCMP_CMP_EQ, STDOUT_FILENO, 0) } },
	{ .name = "writev",
	  .ncmp = 1,
	  .cmp = { SCMP_A0(SCMP_CMP_EQ, STDERR_FILENO, 0) } },
	{ .name = "writev",
	  .ncmp = 1,
	  .cmp = { SCMP_A0(SCMP_CMP_EQ, STDOUT_FILENO, 0) } },
	/* A function's malloc(), realloc() and free() (the bundled ones
	 * allocate in init(), before the fork, but a function may in a
	 * call): the heap, anonymous mappings, growing, trimming and
	 * guarding them. Never executable memory (no code but what was
	 * loaded before the fork), and no mapping of an inherited
	 * descriptor (a BPF map, a module's memfd). */
	{ .name = "brk" },
	{ .name = "mmap",
	  .ncmp = 2,
	  .cmp = { SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0),
		   SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS,
			   MAP_ANONYMOUS) } },
	{ .name = "mprotect",
	  .ncmp = 1,
	  .cmp = { SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0) } },
	{ .name = "munmap" },
	{ .name = "mremap" },
	{ .name = "madvise" },
	/* Time: rr_now_ns() (a cached reply's expiry) and a function's
	 * clocks are vDSO calls, which fall back to the system call where
	 * the clock source has no vDSO access (some VMs). Sleeping is
	 * harmless, and max_run_us bounds a call anyway. */
	{ .name = "clock_gettime" },
	{ .name = "gettimeofday" },
	{ .name = "nanosleep" },
	{ .name = "clock_nanosleep" },
	/* A lock that sleeps: a process-shared mutex in a function's
	 * rr_fn_shared_alloc() memory, contended by two cells. */
	{ .name = "futex" },
	/* Random numbers (a function's IDs or keys; arc4random()). */
	{ .name = "getrandom" },
#ifdef RR_ASAN
	/* ASan's runtime clears its signal stack as a cell ends. */
	{ .name = "sigaltstack" },
#endif
};

/*
 * What the TCP loop's cell (tcp.c) adds: an event loop over its
 * listeners and connections (epoll; ppoll is on the list already),
 * accepting, reading and writing them with recv() and send() of any
 * length, the address a connection came to, what its send queue holds,
 * closing one.
 */
static const struct allowed tcp_allowed[] = {
	{ .name = "epoll_wait" },
	{ .name = "epoll_pwait" },
	{ .name = "epoll_ctl" },
	{ .name = "accept4" },
	{ .name = "getsockname" },
	/* SIOCOUTQ alone: whether replies are still in the kernel's queue
	 * before an idle connection is closed. */
	{ .name = "ioctl",
	  .ncmp = 1,
	  .cmp = { SCMP_A1(SCMP_CMP_EQ, SIOCOUTQ, 0) } },
	{ .name = "recvfrom" },
	{ .name = "sendto" },
	{ .name = "close" },
};

/* The filters the next cells load, the main thread's (see
 * rr_seccomp_prepare()), by cell group: a group's cells serve its
 * functions alone, so only their syscalls are added. */
static struct sock_fprog filters[RR_MAX_THREADS];
/* The TCP loops' cell's, for the functions served over TCP. */
static struct sock_fprog tcp_filter;
/* The architecture it was built for (AUDIT_ARCH_*), for the second one. */
static uint32_t filter_arch;

int rr_seccomp_syscall_nr(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return -ENOENT;
	/* libseccomp knows it, from another architecture. */
	if (nr < 0)
		return -ENOSYS;
	return nr;
}

/* The rules of list @list (@n) into @ctx; 0 or a libseccomp -errno. */
static int add_allowed(scmp_filter_ctx ctx, const struct allowed *list,
		       size_t n)
{
	const struct allowed *a;
	int nr, ret;

	for (a = list; a < list + n; a++) {
		nr = rr_seccomp_syscall_nr(a->name);
		if (nr < 0)
			continue;
		ret = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, a->ncmp,
					     a->cmp);
		/* An unconditional rule over a conditional one of the
		 * cells' list (sendto): libseccomp keeps the wider. */
		if (ret && ret != -EEXIST)
			return ret;
	}
	return 0;
}

/*
 * The `syscalls` of every served function into @ctx, their names also in
 * @names for the log. 0, or -errno with the reason logged (the config
 * checked the names already; a deploy's too).
 */
static int add_functions(const struct rr_invoker *inv, int group,
			 scmp_filter_ctx ctx, char *names, size_t len)
{
	const struct rr_service *svc;
	const char *p;
	char name[64];
	size_t n, at = 0;
	uint32_t slot;
	int nr, ret;

	names[0] = '\0';
	for (slot = 0; slot < inv->nslots; slot++) {
		svc = inv->slots[slot].svc;
		if (group < 0 ? !svc->tcp
			      : inv->slots[slot].cell_group != (uint32_t)group)
			continue;
		for (p = svc->syscalls + strspn(svc->syscalls, " \t"); *p;
		     p += strspn(p, " \t")) {
			n = strcspn(p, " \t");
			snprintf(name, sizeof(name), "%.*s", (int)n, p);
			p += n;
			nr = rr_seccomp_syscall_nr(name);
			if (nr < 0) {
				pr_warn("function '%s': syscalls: '%s' is not a system call of this machine\n",
					svc->fn->name, name);
				return -EINVAL;
			}
			/* Unconditional: it also lifts a condition the list
			 * puts on the call (mmap of a file, say). */
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
			if (ret && ret != -EEXIST) {
				pr_warn("function '%s': syscalls: cannot allow '%s': %s\n",
					svc->fn->name, name, strerror(-ret));
				return ret;
			}
			if (at < len)
				at += (size_t)snprintf(names + at, len - at,
						       " %s", name);
		}
	}
	return 0;
}

/* @ctx as a classic BPF program into @out (its filter malloc()ed). */
static int export(scmp_filter_ctx ctx, struct sock_fprog *out)
{
	struct sock_filter *insns = NULL;
	struct stat st;
	ssize_t got;
	int fd, ret;

	/* libseccomp of Debian 12 (2.5.4) writes the program to a file
	 * descriptor only. */
	fd = memfd_create("rr-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = seccomp_export_bpf(ctx, fd);
	if (ret)
		goto out;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if (!st.st_size || st.st_size % sizeof(*insns) ||
	    st.st_size / sizeof(*insns) > BPF_MAXINSNS) {
		ret = -E2BIG;
		goto out;
	}
	insns = malloc((size_t)st.st_size);
	if (!insns) {
		ret = -ENOMEM;
		goto out;
	}
	got = pread(fd, insns, (size_t)st.st_size, 0);
	if (got != st.st_size) {
		ret = got < 0 ? -errno : -EIO;
		free(insns);
		goto out;
	}
	out->filter = insns;
	out->len = (unsigned short)(st.st_size / sizeof(*insns));
out:
	close(fd);
	return ret;
}

/*
 * Builds a filter into @out: the cells' list and the syscalls (named in
 * @extra) of cell group @group's functions, or with @group -1 the TCP
 * loop's list too and the syscalls of the functions served over TCP. 0,
 * or -errno with the reason logged.
 */
static int build(struct rr_invoker *inv, int group, struct sock_fprog *out,
		 char *extra, size_t len)
{
	bool tcp = group < 0;
	scmp_filter_ctx ctx;
	int ret;

	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx) {
		pr_warn("cannot build the cells' system call filter: %s\n",
			strerror(ENOMEM));
		return -ENOMEM;
	}
	/* Another architecture's calls (i386's on x86_64, and x32's, which
	 * share x86_64's token) mean other calls by the same numbers: they
	 * kill too. */
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
			       SCMP_ACT_KILL_PROCESS);
	if (!ret)
		ret = add_allowed(ctx, allowed, ARRAY_SIZE(allowed));
	if (!ret && tcp)
		ret = add_allowed(ctx, tcp_allowed, ARRAY_SIZE(tcp_allowed));
	/* A gather's template, and its copies to the targets the scatter
	 * program could not reach: sent on the cell's gather socket alone. */
	if (!ret && inv->xdp.gathers)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendto), 1,
				       SCMP_A0(SCMP_CMP_EQ, RR_SG_CELL_FD, 0));
	if (!ret && inv->xdp.gathers)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmmsg),
				       1,
				       SCMP_A0(SCMP_CMP_EQ, RR_SG_CELL_FD, 0));
	/* A concatenation's replies that came in on another queue: the
	 * kernel's, read from that socket. */
	if (!ret && inv->xdp.gathers)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmmsg),
				       1,
				       SCMP_A0(SCMP_CMP_EQ, RR_SG_CELL_FD, 0));
	if (ret) {
		pr_warn("cannot build the cells' system call filter: %s\n",
			strerror(-ret));
		goto out;
	}
	/* A tree of comparisons: a call is found in a few, not one per rule
	 * (an optimisation only, so a libseccomp without it is fine). */
	seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	ret = add_functions(inv, group, ctx, extra, len);
	if (ret)
		goto out;
	ret = export(ctx, out);
	if (ret)
		pr_warn("cannot build the cells' system call filter: %s\n",
			strerror(-ret));
out:
	seccomp_release(ctx);
	return ret;
}

int rr_seccomp_prepare(struct rr_invoker *inv)
{
	struct sock_fprog built[RR_MAX_THREADS] = { 0 }, tcp_built = { 0 };
	char extra[RR_MAX_THREADS][RR_SYSCALLS_LEN], tcp_extra[RR_SYSCALLS_LEN];
	uint32_t g, n = inv->ngroups ? inv->ngroups : 1, slot;
	bool changed[RR_MAX_THREADS];
	int ret = 0;

	if (n > RR_MAX_THREADS)
		return -E2BIG;
	for (g = 0; g < n && !ret; g++)
		ret = build(inv, (int)g, &built[g], extra[g], sizeof(extra[g]));
	if (!ret)
		ret = build(inv, -1, &tcp_built, tcp_extra, sizeof(tcp_extra));
	if (ret) {
		for (g = 0; g < n; g++)
			free(built[g].filter);
		return ret;
	}
	for (g = 0; g < n; g++) {
		changed[g] = built[g].len != filters[g].len ||
			     memcmp(built[g].filter, filters[g].filter,
				    built[g].len * sizeof(*built[g].filter));
		free(filters[g].filter);
		filters[g] = built[g];
	}
	free(tcp_filter.filter);
	tcp_filter = tcp_built;
	filter_arch = seccomp_arch_native();
	/* Said at start-up, and when a deploy changes one. */
	if (changed[0])
		pr_info("cells run under a system call filter (%u instructions)%s%s\n",
			filters[0].len,
			extra[0][0] ? "; the functions' syscalls add" : "",
			extra[0]);
	for (g = 1; g < n; g++) {
		if (!changed[g])
			continue;
		for (slot = 0; slot < inv->nslots; slot++)
			if (inv->slots[slot].cell_group == g)
				break;
		pr_info("the cells of '%s' (cell group %u) run under a filter of their own (%u instructions)%s%s\n",
			slot < inv->nslots ? inv->slots[slot].svc->fn->name
					   : "?",
			g, filters[g].len,
			extra[g][0] ? "; its syscalls add" : "", extra[g]);
	}
	return 0;
}

/*
 * Loads @prog on the calling process. SECCOMP_FILTER_FLAG_SPEC_ALLOW:
 * kernels before 5.16 otherwise also turn on the speculative store bypass
 * mitigation for a filtered process, which slows it down and protects
 * nothing here (the filter limits what a cell asks of the kernel; its
 * memory is all the function's to read anyway). A kernel without the
 * flag is asked without it.
 */
static int load(const struct sock_fprog *prog)
{
	if (!syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_SPEC_ALLOW, prog))
		return 0;
	if (errno == EINVAL &&
	    !syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog))
		return 0;
	return -errno;
}

/* The low 32 bits of argument @n: a pid_t is an int to the kernel. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

/* Loads @main after the cell's own rules. */
static int confine(const struct sock_fprog *main)
{
	/*
	 * tgkill(tgid, tid, sig) only with the cell's own pid as tgid; any
	 * other call goes on to the allow-list, which kills what it does not
	 * allow (x32's calls too). A call of another architecture, whose
	 * numbers mean other calls, kills here already.
	 */
	struct sock_filter own[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, filter_arch, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)getpid(), 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(own), .filter = own };
	int ret;

	/* Built by rr_invoker_start() before the first fork. */
	if (!main->len)
		return -ENOENT;
	/* This one first: the allow-list has no seccomp() for a second. */
	ret = load(&prog);
	if (ret)
		return ret;
	return load(main);
}

int rr_cell_seccomp(const struct rr_invoker *inv, uint32_t group)
{
	(void)inv;
	if (group >= RR_MAX_THREADS)
		return -EINVAL;
	return confine(&filters[group]);
}

int rr_tcp_cell_seccomp(const struct rr_invoker *inv)
{
	(void)inv;
	return confine(&tcp_filter);
}
