// SPDX-License-Identifier: GPL-2.0
/*
 * The interface's owner. A reqrouter that starts on an interface where a
 * reqrouter program is attached must know whether the instance that
 * attached it lives: a live one is left alone and the start refused; a
 * dead one's program is replaced (core/xdp.c). A program id or a pid in
 * a file cannot tell (the id stays after a SIGKILL, a pid is reused), so
 * the owner holds an flock(2) on RR_RUN_DIR/IFACE.lock for as long as it
 * lives and the kernel lets it go when the process ends, however it ends.
 *
 * The file goes when its owner stops cleanly, while still locked. A
 * start that locked a file which was removed meanwhile (it opened it
 * before the removal) holds a lock nobody else can see, so it checks that
 * the path still names the file it locked, and tries again if not. The
 * pid in it is only for the refusal's words. Its name is the interface's,
 * as the control socket's and the program record's are: an interface of
 * the same name in another network namespace sharing /run is refused too,
 * said so, rather than let the three names clash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <net/if.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "config.h"
#include "log.h"
#include "owner.h"

static int lock_fd = -1;
static char lock_path[sizeof(RR_RUN_DIR) + IF_NAMESIZE + 48];

/* The network namespace of @pid (0: this process), or 0. */
static unsigned long netns_of(long pid)
{
	char path[48];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/net");
	return stat(path, &st) ? 0 : (unsigned long)st.st_ino;
}

/* The pid written in the lock file, or 0. */
static long holder_pid(int fd)
{
	char buf[32];
	ssize_t n;
	long pid;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%ld", &pid) == 1 ? pid : 0;
}

/* Says who serves @ifname, the holder of the lock @fd is open on. */
static int refuse(const char *ifname, int fd)
{
	long other = holder_pid(fd);
	unsigned long theirs = other > 0 ? netns_of(other) : 0;

	close(fd);
	if (theirs && theirs != netns_of(0))
		pr_warn("%s: reqrouter (pid %ld) serves an interface of this name in another network namespace, and the two would share their names in %s (lock, control socket, program record); refused before touching anything\n",
			ifname, other, RR_RUN_DIR);
	else if (other > 0)
		pr_warn("%s: reqrouter (pid %ld) already serves it; refused before touching anything (stop that one first)\n",
			ifname, other);
	else
		pr_warn("%s: another reqrouter already serves it (%s is locked); refused before touching anything\n",
			ifname, lock_path);
	return -EBUSY;
}

int rr_owner_claim(const char *ifname)
{
	struct stat locked, named;
	int fd, ret, n, tries;
	char pid[32];

	snprintf(lock_path, sizeof(lock_path), "%s/%s.lock", RR_RUN_DIR,
		 ifname);
	if (mkdir(RR_RUN_DIR, 0755) && errno != EEXIST) {
		ret = -errno;
		goto unlocked;
	}
	for (tries = 0;; tries++) {
		fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			  0644);
		if (fd < 0) {
			ret = -errno;
			goto unlocked;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			ret = -errno;
			if (ret == -EWOULDBLOCK)
				return refuse(ifname, fd);
			close(fd);
			goto unlocked;
		}
		/* Still the file at the path: then it is the lock. */
		if (!fstat(fd, &locked) && !stat(lock_path, &named) &&
		    locked.st_ino == named.st_ino &&
		    locked.st_dev == named.st_dev)
			break;
		close(fd);
		if (tries == 3) {
			ret = -EAGAIN;
			goto unlocked;
		}
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n)
		pr_debug("cannot write the pid into %s: %s\n", lock_path,
			 strerror(errno));
	lock_fd = fd;
	return 0;
unlocked:
	pr_debug("cannot lock %s: %s\n", lock_path, strerror(-ret));
	return ret;
}

void rr_owner_release(void)
{
	if (lock_fd < 0)
		return;
	/* Before the lock goes: nobody can be waiting on this file then. */
	unlink(lock_path); /* fails harmlessly after --user */
	close(lock_fd);
	lock_fd = -1;
}

void rr_owner_forget(void)
{
	/* The lock is the open file's: the owner's descriptor keeps it. */
	if (lock_fd >= 0)
		close(lock_fd);
	lock_fd = -1;
}

bool rr_owner_held(void)
{
	return lock_fd >= 0;
}

const char *rr_owner_path(void)
{
	return lock_path;
}
