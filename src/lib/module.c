// SPDX-License-Identifier: GPL-2.0
/*
 * Function modules (see module.h): the trusted private copy, dlopen(),
 * the API check, and the walk over a directory of them. Below the
 * registry (registry.c), which checks a module's functions, adopts them
 * and loads a directory through rr_module_dir_each().
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "module.h"

/* Whether others than root, us and root's (or our) group may write
 * into the directory @st. */
static bool others_write(const struct stat *st)
{
	return st->st_mode & S_IWOTH ||
	       (st->st_mode & S_IWGRP && st->st_gid != 0 &&
		st->st_gid != getegid());
}

static bool ours(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

/*
 * Whether @st (of @what, a module or its directory) is one only its owner
 * can change, and that owner root or us: code loaded from it runs with
 * reqrouter's privileges. Group write is allowed to root's group only.
 */
static int trusted(const struct stat *st, const char *what, const char *path,
		   char *err, size_t errlen)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(
			err, errlen,
			"module %s: its %s belongs to uid %u, not root: refused",
			path, what, (unsigned int)st->st_uid);
		return -EPERM;
	}
	if (others_write(st)) {
		snprintf(
			err, errlen,
			"module %s: its %s is writable by others (mode %03o): refused",
			path, what, (unsigned int)(st->st_mode & 0777));
		return -EPERM;
	}
	return 0;
}

#define MAX_LINKS 40

/*
 * Opens directory @dir from the root down, one component at a time,
 * never through a place others could change: a directory others may
 * write into is passed only if it is sticky (/tmp) and the entry taken
 * from it is root's or ours, which others then cannot rename or remove;
 * a symbolic link is followed only where it lies in a directory others
 * cannot write (or a sticky one, the link root's or ours), as /lib ->
 * usr/lib does. Returns an O_RDONLY descriptor of the directory, or
 * -errno with one line in @err.
 */
static int open_dir(const char *dir, const char *path, char *err, size_t errlen)
{
	char buf[PATH_MAX], link[PATH_MAX], rest[PATH_MAX], *comp, *slash;
	int cur, next, links = 0, ret;
	struct stat dst, cst;
	ssize_t n;

	if (dir[0] == '/') {
		snprintf(rest, sizeof(rest), "%s", dir);
	} else {
		if (!getcwd(buf, sizeof(buf)))
			return -errno;
		if ((size_t)snprintf(rest, sizeof(rest), "%s/%s", buf, dir) >=
		    sizeof(rest))
			return -ENAMETOOLONG;
	}
	cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	comp = rest;
	for (;;) {
		while (*comp == '/')
			comp++;
		if (!*comp)
			break;
		slash = strchr(comp, '/');
		if (slash)
			*slash = '\0';
		if (fstat(cur, &dst)) {
			ret = -errno;
			goto fail;
		}
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &cst)) {
			ret = -errno;
			if (next >= 0)
				close(next);
			goto fail;
		}
		if (others_write(&dst) &&
		    (!(dst.st_mode & S_ISVTX) || !ours(&cst))) {
			close(next);
			snprintf(
				err, errlen,
				"module %s: '%s' is in a directory others can write (mode %03o): refused",
				path, comp,
				(unsigned int)(dst.st_mode & 07777));
			ret = -EPERM;
			goto fail_said;
		}
		if (S_ISLNK(cst.st_mode)) {
			close(next);
			if (++links > MAX_LINKS) {
				ret = -ELOOP;
				goto fail;
			}
			n = readlinkat(cur, comp, link, sizeof(link) - 1);
			if (n < 0) {
				ret = -errno;
				goto fail;
			}
			link[n] = '\0';
			/* The link's target, then what was left after it. */
			if ((size_t)snprintf(buf, sizeof(buf), "%s%s%s", link,
					     slash ? "/" : "",
					     slash ? slash + 1 : "") >=
			    sizeof(buf)) {
				ret = -ENAMETOOLONG;
				goto fail;
			}
			strcpy(rest, buf);
			comp = rest;
			if (rest[0] == '/') {
				close(cur);
				cur = open("/",
					   O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (cur < 0)
					return -errno;
			}
			continue;
		}
		if (!S_ISDIR(cst.st_mode)) {
			close(next);
			ret = -ENOTDIR;
			goto fail;
		}
		close(cur);
		cur = next;
		if (!slash)
			break;
		comp = slash + 1;
	}
	next = openat(cur, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = next < 0 ? -errno : next;
	close(cur);
	if (ret < 0)
		snprintf(err, errlen, "cannot load module %s: %s", path,
			 strerror(-ret));
	return ret;
fail:
	snprintf(err, errlen, "cannot load module %s: %s", path,
		 strerror(-ret));
fail_said:
	close(cur);
	return ret;
}

/*
 * The module at @path as a private copy to load: the file opened without
 * following a link, checked on the open descriptor (and its directory
 * too), then copied into a memfd, which is what dlopen() maps. So every
 * load is a fresh file: a module rebuilt at the same path runs its new
 * code (dlopen() would hand back the mapping it has by name or inode),
 * and the file may be replaced, or even overwritten in place, while it
 * is loaded. Returns the memfd or -errno with one line in @err.
 */
static int private_copy(const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX], name[256];
	const char *base;
	int dfd = -1, fd = -1, mfd = -1, ret;
	struct stat st;
	off_t off = 0;
	ssize_t n;

	base = strrchr(path, '/');
	if (base) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(base - path), path);
		if (!dir[0])
			strcpy(dir, "/");
		base++;
	} else {
		strcpy(dir, ".");
		base = path;
	}
	dfd = open_dir(dir, path, err, errlen);
	if (dfd < 0) {
		ret = dfd;
		goto out;
	}
	if (fstat(dfd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot load module %s: %s", path,
			 strerror(-ret));
		goto out;
	}
	ret = trusted(&st, "directory", path, err, errlen);
	if (ret)
		goto out;
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot load module %s: %s%s", path,
			 strerror(-ret),
			 ret == -ELOOP ? " (a symbolic link is not followed)"
				       : "");
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "module %s is not a regular file", path);
		ret = -EINVAL;
		goto out;
	}
	ret = trusted(&st, "file", path, err, errlen);
	if (ret)
		goto out;
	/* The original path in the name: /proc/PID/maps shows where the
	 * code came from. */
	snprintf(name, sizeof(name), "rr-module:%s", path);
	mfd = memfd_create(name, MFD_CLOEXEC);
	if (mfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot load module %s: memfd: %s", path,
			 strerror(-ret));
		goto out;
	}
	while (off < st.st_size) {
		n = sendfile(mfd, fd, &off, (size_t)(st.st_size - off));
		if (n <= 0) {
			ret = n ? -errno : -EIO;
			snprintf(err, errlen, "cannot read module %s: %s", path,
				 strerror(-ret));
			goto out;
		}
	}
	ret = mfd;
	mfd = -1;
out:
	if (mfd >= 0)
		close(mfd);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return ret;
}

/*
 * A module built against a newer function API calls what this reqrouter
 * lacks, so RTLD_NOW fails on an undefined symbol before its API could be
 * read. Loaded lazily (no call made), the API it names is readable: if it
 * is not ours, that replaces the loader's message in @err.
 */
static void api_mismatch(const char *self, const char *path, char *err,
			 size_t errlen)
{
	void *h = dlopen(self, RTLD_LAZY | RTLD_LOCAL);
	rr_module_list_t list;
	uint32_t api = 0;
	size_t n;

	if (!h)
		return;
	list = (rr_module_list_t)dlsym(h, RR_MODULE_SYMBOL);
	if (list) {
		list(&n, &api);
		if (api != RR_FUNCTION_API)
			snprintf(
				err, errlen,
				"module %s was built against function API %u; this reqrouter has API %d: rebuild it",
				path, api, RR_FUNCTION_API);
	}
	dlclose(h);
}

/* m->version: the module's RR_MODULE_VERSION if it declares a usable
 * one, else "so-" and 12 hex digits of an FNV-1a hash of its copy. */
static void module_version(struct rr_module *m)
{
	const char *v = dlsym(m->handle, RR_MODULE_VERSION_SYMBOL);
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned char buf[4096];
	off_t off = 0;
	ssize_t n, i;

	if (v && *v && strlen(v) <= 40 &&
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		      "0123456789._+-~") == strlen(v)) {
		snprintf(m->version, sizeof(m->version), "%s", v);
		return;
	}
	while ((n = pread(m->copy_fd, buf, sizeof(buf), off)) > 0) {
		for (i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ULL;
		off += n;
	}
	snprintf(m->version, sizeof(m->version), "so-%012llx",
		 (unsigned long long)(h & 0xffffffffffffULL));
}

int rr_module_open(struct rr_module *m, const char *path, char *err,
		   size_t errlen)
{
	char self[32];
	rr_module_list_t list;
	uint32_t api = 0;
	int fd;

	memset(m, 0, sizeof(*m));
	if (strlen(path) >= sizeof(m->path)) {
		snprintf(err, errlen, "module path too long: %s", path);
		return -ENAMETOOLONG;
	}
	fd = private_copy(path, err, errlen);
	if (fd < 0)
		return fd;
	/* RTLD_LOCAL: two versions of one module must not see each other's
	 * symbols; RTLD_NOW: a missing symbol is an error now, not a crash
	 * on the first request. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	m->handle = dlopen(self, RTLD_NOW | RTLD_LOCAL);
	m->copy_fd = fd;
	if (!m->handle) {
		const char *why = dlerror();
		size_t n = strlen(self);

		/* dlerror() names the private copy; the user named @path. */
		if (why && !strncmp(why, self, n) && why[n] == ':')
			why += n + 1 + (why[n + 1] == ' ');
		snprintf(err, errlen, "cannot load module %s: %s", path,
			 why ? why : "unknown error");
		api_mismatch(self, path, err, errlen);
		rr_module_close(m);
		return -ENOEXEC;
	}
	list = (rr_module_list_t)dlsym(m->handle, RR_MODULE_SYMBOL);
	if (!list) {
		snprintf(err, errlen,
			 "%s is not a reqrouter function module (no %s)", path,
			 RR_MODULE_SYMBOL);
		goto fail;
	}
	m->fns = list(&m->nfns, &api);
	if (api != RR_FUNCTION_API) {
		snprintf(
			err, errlen,
			"module %s was built against function API %u; this reqrouter has API %d: rebuild it",
			path, api, RR_FUNCTION_API);
		goto fail;
	}
	if (!m->nfns) {
		snprintf(err, errlen, "module %s registers no function", path);
		goto fail;
	}
	strcpy(m->path, path);
	module_version(m);
	return 0;
fail:
	rr_module_close(m);
	return -EINVAL;
}

void rr_module_close(struct rr_module *m)
{
	if (m->handle)
		dlclose(m->handle);
	m->handle = NULL;
	if (m->copy_fd > 0)
		close(m->copy_fd);
	m->copy_fd = 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rr_module_dir_each(const char *dir, rr_module_path_fn fn, void *arg,
		       char *err, size_t errlen)
{
	char *names[RR_MAX_MODULES], path[PATH_MAX];
	size_t n = 0, i, len;
	struct dirent *e;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot read functions directory %s: %s",
			 dir, strerror(errno));
		return -errno;
	}
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".so"))
			continue;
		if (n == RR_MAX_MODULES) {
			snprintf(err, errlen, "more than %d modules in %s",
				 RR_MAX_MODULES, dir);
			ret = -E2BIG;
			break;
		}
		names[n] = strdup(e->d_name);
		if (!names[n]) {
			ret = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	/* In name order, so what replaces what does not depend on readdir. */
	qsort(names, n, sizeof(names[0]), by_name);
	for (i = 0; !ret && i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ret = fn(path, arg, err, errlen);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	return ret;
}
