/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The system calls a cell may make: an allow-list under seccomp, built by
 * the main thread (its own list and the served functions' `syscalls`) and
 * loaded by each cell before it serves. See seccomp.c.
 */
#ifndef RR_SECCOMP_H
#define RR_SECCOMP_H

#include "invoker.h"

/*
 * Builds the filters for the cells forked from now on, one per cell
 * group, from the allow-list and the `syscalls` of the functions the
 * group serves (and the TCP loops', of those served over TCP). 0, or
 * -errno with the reason logged; the filters built before, if any, then
 * stay.
 */
int rr_seccomp_prepare(struct rr_invoker *inv);

/* Confines the calling cell (capabilities already dropped, no_new_privs
 * set), a worker of cell group @group, with the filter
 * rr_seccomp_prepare() built for it; 0 or -errno. */
int rr_cell_seccomp(const struct rr_invoker *inv, uint32_t group);

/* The same for the TCP loop's cell (tcp.c), whose filter adds the calls
 * of a TCP server to a cell's. */
int rr_tcp_cell_seccomp(const struct rr_invoker *inv);

/*
 * The number of system call @name on this machine; -ENOENT if no system
 * call has that name, -ENOSYS if this machine has no such call. The config
 * checks a function's `syscalls` with it (src/lib/config.c).
 */
int rr_seccomp_syscall_nr(const char *name);

/* A cell's gather socket, at this descriptor: the one its system call
 * filter lets it send data on (features/gather.c moves it there). */
#define RR_SG_CELL_FD 1023

#endif /* RR_SECCOMP_H */
