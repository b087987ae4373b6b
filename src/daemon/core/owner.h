/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who serves an interface (owner.c): one reqrouter per interface, known
 * by a lock it holds for as long as it lives. The lock is what tells a
 * live instance's XDP program from one a dead instance left behind.
 */
#ifndef RR_OWNER_H
#define RR_OWNER_H

#include <stdbool.h>

/*
 * Takes the lock of @ifname (RR_RUN_DIR/IFACE.lock, flock(2), with the
 * holder's pid in it), before
 * anything else is touched. 0: ours until the process exits. -EBUSY: a
 * live reqrouter serves @ifname, said in one line. Another -errno: the
 * lock could not be made (no /run/reqrouter for this user, a read-only
 * /run), said in a debug line; the start goes on, but no program found
 * on the interface counts as stale then (rr_owner_held()).
 */
int rr_owner_claim(const char *ifname);

/* Removes the lock file and lets the lock go: at a clean exit, once the
 * interface is as it was found. */
void rr_owner_release(void);

/* In a forked child (a cell): closes its copy of the lock's descriptor,
 * so that the lock goes with the owner, not with the last cell to die. */
void rr_owner_forget(void);

/* Whether this process holds the lock: then any reqrouter program on its
 * interface was left by an instance that is gone. */
bool rr_owner_held(void);

/* Where the lock is, for the log line that cannot make it. */
const char *rr_owner_path(void);

#endif /* RR_OWNER_H */
