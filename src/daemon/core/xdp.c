// SPDX-License-Identifier: GPL-2.0
/*
 * Loading and attaching the XDP program. The object is embedded in the
 * binary as a libbpf skeleton, so no path has to be found at run time.
 *
 * We attach through the kernel's netlink interface (libbpf), not libxdp's
 * dispatcher: reqrouter owns the interface's XDP hook while it runs, and a
 * foreign program already there is an error, not something to chain after.
 * A program of ours left by a killed run is recognised and replaced: by
 * its name, which only CAP_SYS_ADMIN may read (BPF_PROG_GET_FD_BY_ID), or
 * by the id that run recorded in RR_RUN_DIR/IFACE.xdp when it attached,
 * which needs no privilege to read and lets a service restart after a
 * crash without CAP_SYS_ADMIN. Program ids are not reused before the
 * counter wraps at 2^31, and the record is gone at the next boot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include <arpa/inet.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "owner.h"
#include "registry.h"
#include "reqrouter.skel.h"
#include "percpu.h"
#include "shared/cache.h"
#include "shared/capture.h"
#include "shared/guard.h"
#include "shared/link.h"
#include "shared/stats.h"
#include "shared/steer.h"
#include "xdp.h"

int rr_xdp_check_kernel(char *why, size_t len)
{
	unsigned int major = 0, minor = 0;
	struct utsname u;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 0; /* unknown: let the verifier decide */
	if (major > 5 || (major == 5 && minor >= 18))
		return 0;
	snprintf(
		why, len,
		"reqrouter needs Linux %s or newer for its XDP program (bpf_xdp_load_bytes); this kernel is %s",
		RR_MIN_KERNEL, u.release);
	return -ENOTSUP;
}

void rr_xdp_set_link(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu)
{
	uint64_t word = 0;

	/* One aligned store: the program reads all 8 bytes at once. */
	memcpy(&word, mac, 6);
	__atomic_store_n(&x->skel->data->link_mac, word, __ATOMIC_RELAXED);
	__atomic_store_n(&x->skel->data->link_mtu, mtu, __ATOMIC_RELAXED);
}

void rr_xdp_set_vlans(struct rr_xdp *x, const uint64_t *vlans)
{
	uint32_t i;

	for (i = 0; i < RR_VLAN_WORDS; i++)
		__atomic_store_n(&x->skel->data->link_vlans[i],
				 vlans ? vlans[i] : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&x->skel->data->link_vlan_check, vlans != NULL,
			 __ATOMIC_RELEASE);
}

int rr_xdp_load(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu)
{
	return rr_xdp_load_sized(x, mac, mtu, 1, 1, 0, 0, false);
}

/* The reply cache's partitions, one per (queue, cell group)
 * (shared/cache.h). */
static void size_cache(struct rr_xdp *x, uint32_t nqueues, uint32_t groups)
{
	uint32_t bits = 0, per;

	while ((1U << bits) < nqueues)
		bits++;
	per = RR_CACHE_ENTRIES >> bits;
	if (per < RR_CACHE_QUEUE_MIN)
		per = RR_CACHE_QUEUE_MIN;
	x->cache_queues = nqueues ? nqueues : 1;
	x->cache_groups = groups ? groups : 1;
	x->cache_queue_entries = per;
	for (bits = 0; (1U << bits) < per; bits++)
		;
	x->skel->rodata->cache_queues = x->cache_queues;
	x->skel->rodata->cache_groups = x->cache_groups;
	x->skel->rodata->cache_queue_bits = bits;
	bpf_map__set_max_entries(x->skel->maps.reply_cache,
				 x->cache_queues * x->cache_groups * per);
}

int rr_xdp_load_sized(struct rr_xdp *x, const uint8_t *mac, uint32_t mtu,
		      uint32_t nqueues, uint32_t cell_groups, uint32_t ngathers,
		      uint32_t ngroups, bool scatter)
{
	char buf[RR_ERRLEN];
	uint32_t zero = 0;
	int ret, fd, ncpus;

	memset(x, 0, sizeof(*x));
	ret = rr_xdp_check_kernel(buf, sizeof(buf));
	if (ret) {
		pr_warn("%s\n", buf);
		return ret;
	}
	x->skel = reqrouter__open();
	if (!x->skel) {
		ret = -errno;
		pr_warn("cannot open the XDP program: %s\n", strerror(-ret));
		return ret;
	}
	rr_xdp_set_link(x, mac, mtu);
	/* Unknown outside: nobody can aim sources at one counter. */
	if (getrandom(&x->hh_seed, sizeof(x->hh_seed), 0) != sizeof(x->hh_seed))
		x->hh_seed = (uint64_t)rr_now_ns() * 0x9e3779b97f4a7c15ULL;
	x->skel->rodata->hh_seed = x->hh_seed;
	x->skel->rodata->rx_ring_size = RR_XDP_RX_RING;
	ncpus = libbpf_num_possible_cpus();
	x->spread_ncpus = ncpus > 0 ? (uint32_t)ncpus : 1;
	if (x->spread_ncpus > RR_MAX_CPUS)
		x->spread_ncpus = RR_MAX_CPUS;
	bpf_map__set_max_entries(x->skel->maps.spread_cpus, x->spread_ncpus);
	size_cache(x, nqueues, cell_groups);
	x->ngathers = ngathers;
	x->ngroups = ngroups;
	bpf_map__set_max_entries(x->skel->maps.gathers,
				 ngathers ? ngathers : 1);
	bpf_map__set_max_entries(x->skel->maps.sg_targets,
				 ngroups ? ngroups * RR_SG_MAX_TARGETS : 1);
	bpf_map__set_max_entries(x->skel->maps.sg_paths,
				 ngroups ? ngroups * RR_SG_MAX_TARGETS : 1);
	/* Its verification takes longer than all the others' (half a
	 * second and more): only for gather_scatter = tc, which attaches it
	 * at start. */
	bpf_program__set_autoload(x->skel->progs.reqrouter_scatter, scatter);
	ret = reqrouter__load(x->skel);
	if (ret) {
		libbpf_strerror(ret, buf, sizeof(buf));
		pr_warn("cannot load the XDP program: %s%s\n", buf,
			ret == -EPERM
				? " (run as root or with CAP_BPF and CAP_NET_ADMIN)"
				: " (-v shows the verifier log)");
		reqrouter__destroy(x->skel);
		x->skel = NULL;
		return ret;
	}
	/* Where the functions' XDP programs hand back what they do not
	 * answer (include/reqrouter/rr_xdp.h). */
	fd = bpf_program__fd(x->skel->progs.reqrouter_verdict);
	ret = bpf_map__update_elem(x->skel->maps.rr_verdict, &zero,
				   sizeof(zero), &fd, sizeof(fd), 0);
	if (!ret) {
		fd = bpf_program__fd(x->skel->progs.reqrouter_verdict_cpumap);
		ret = bpf_map__update_elem(x->skel->maps.rr_verdict_cpumap,
					   &zero, sizeof(zero), &fd, sizeof(fd),
					   0);
	}
	if (ret) {
		pr_warn("cannot load the XDP program: rr_verdict: %s\n",
			strerror(-ret));
		reqrouter__destroy(x->skel);
		x->skel = NULL;
		return ret;
	}
	return 0;
}

static int prog_name_by_id(uint32_t id, char *name, size_t len)
{
	struct bpf_prog_info info = {};
	uint32_t info_len = sizeof(info);
	int fd, ret;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	ret = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	close(fd);
	if (ret)
		return -errno;
	snprintf(name, len, "%s", info.name);
	return 0;
}

static void record_path(const char *ifname, char *path, size_t len)
{
	snprintf(path, len, "%s/%s.xdp", RR_RUN_DIR, ifname);
}

/* The program id our last run on @ifname recorded, or 0. */
static uint32_t recorded_id(const char *ifname)
{
	char path[sizeof(RR_RUN_DIR) + IF_NAMESIZE + 8];
	unsigned int id = 0;
	FILE *f;

	record_path(ifname, path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%u", &id) != 1)
		id = 0;
	fclose(f);
	return id;
}

/* Best effort: without the record a restart needs CAP_SYS_ADMIN. */
static void record_id(const char *ifname, uint32_t id)
{
	char path[sizeof(RR_RUN_DIR) + IF_NAMESIZE + 8];
	FILE *f;

	if (mkdir(RR_RUN_DIR, 0755) && errno != EEXIST)
		return;
	record_path(ifname, path, sizeof(path));
	f = fopen(path, "w");
	if (!f) {
		pr_debug("cannot record the program id in %s: %s\n", path,
			 strerror(errno));
		return;
	}
	fprintf(f, "%u\n", id);
	fclose(f);
}

/* Removes a program of ours that a dead run left on the interface (we
 * hold the interface's lock, owner.c, so its owner is gone); refuses
 * anybody else's. */
static int clear_stale(int ifindex, const char *ifname)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct {
		uint32_t id;
		uint32_t flags;
	} ids[3];
	char name[64];
	int i, ret;

	ret = bpf_xdp_query(ifindex, 0, &q);
	if (ret) {
		pr_warn("cannot query XDP programs on %s: %s\n", ifname,
			strerror(-ret));
		return ret;
	}
	ids[0].id = q.drv_prog_id;
	ids[0].flags = XDP_FLAGS_DRV_MODE;
	ids[1].id = q.skb_prog_id;
	ids[1].flags = XDP_FLAGS_SKB_MODE;
	ids[2].id = q.hw_prog_id;
	ids[2].flags = XDP_FLAGS_HW_MODE;
	for (i = 0; i < 3; i++) {
		if (!ids[i].id)
			continue;
		ret = prog_name_by_id(ids[i].id, name, sizeof(name));
		if (ret && ids[i].id == recorded_id(ifname))
			snprintf(name, sizeof(name), "%s", RR_XDP_PROG_NAME);
		else if (ret == -EPERM) {
			pr_warn("%s already has XDP program id %u attached, not one this host's reqrouter recorded, and without CAP_SYS_ADMIN its name cannot be read; remove it first (ip link set dev %s xdp off)\n",
				ifname, ids[i].id, ifname);
			return -EBUSY;
		} else if (ret)
			snprintf(name, sizeof(name), "?");
		if (strcmp(name, RR_XDP_PROG_NAME)) {
			pr_warn("%s already has XDP program '%s' (id %u) attached; remove it first (ip link set dev %s xdp off)\n",
				ifname, name, ids[i].id, ifname);
			return -EBUSY;
		}
		/* Ours, and its owner would hold the lock we hold: gone. */
		if (!rr_owner_held()) {
			pr_warn("%s already has a reqrouter XDP program (id %u) attached, and without the lock %s it cannot be told whether the reqrouter that attached it lives; if none does, remove it (ip link set dev %s xdp off)\n",
				ifname, ids[i].id, rr_owner_path(), ifname);
			return -EBUSY;
		}
		pr_notice(
			"replacing a stale reqrouter XDP program (id %u) left on %s\n",
			ids[i].id, ifname);
		ret = bpf_xdp_detach(ifindex, ids[i].flags, NULL);
		if (ret) {
			pr_warn("cannot remove the stale program from %s: %s\n",
				ifname, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static uint32_t attached_id(int ifindex, uint32_t flags)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0;
	return flags & XDP_FLAGS_SKB_MODE ? q.skb_prog_id : q.drv_prog_id;
}

int rr_xdp_attach(struct rr_xdp *x, int ifindex, enum rr_xdp_mode mode)
{
	int fd = bpf_program__fd(x->skel->progs.reqrouter_xdp);
	struct bpf_prog_info info = {};
	uint32_t info_len = sizeof(info);
	char ifname[IF_NAMESIZE] = "?";
	int ret;

	if_indextoname(ifindex, ifname);
	ret = clear_stale(ifindex, ifname);
	if (ret)
		return ret;

	x->flags =
		XDP_FLAGS_UPDATE_IF_NOEXIST |
		(mode == RR_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	ret = bpf_xdp_attach(ifindex, fd, x->flags, NULL);
	if (ret && mode == RR_MODE_AUTO) {
		pr_warn("native XDP is not available on %s (%s); falling back to SKB mode\n",
			ifname, strerror(-ret));
		x->flags = XDP_FLAGS_UPDATE_IF_NOEXIST | XDP_FLAGS_SKB_MODE;
		ret = bpf_xdp_attach(ifindex, fd, x->flags, NULL);
	}
	if (ret) {
		pr_warn("cannot attach the XDP program to %s in %s mode: %s\n",
			ifname,
			x->flags & XDP_FLAGS_SKB_MODE ? "SKB" : "native",
			strerror(-ret));
		return ret;
	}
	if (!bpf_obj_get_info_by_fd(fd, &info, &info_len))
		x->prog_id = info.id;
	x->ifindex = ifindex;
	x->attached = true;
	snprintf(x->ifname, sizeof(x->ifname), "%s", ifname);
	record_id(ifname, x->prog_id);
	pr_info("XDP program attached to %s in %s mode (id %u)\n", ifname,
		rr_xdp_mode_name(x), x->prog_id);
	return 0;
}

bool rr_xdp_still_attached(const struct rr_xdp *x)
{
	return x->attached && attached_id(x->ifindex, x->flags) == x->prog_id;
}

const char *rr_xdp_mode_name(const struct rr_xdp *x)
{
	return x->flags & XDP_FLAGS_SKB_MODE ? "SKB (generic)" : "native";
}

void rr_xdp_detach(struct rr_xdp *x)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	uint32_t mode = x->flags & XDP_FLAGS_MODES;
	int ret;

	if (!x->attached)
		return;
	x->attached = false;
	/* Replace only our own program with nothing. */
	opts.old_prog_fd = bpf_program__fd(x->skel->progs.reqrouter_xdp);
	ret = bpf_xdp_attach(x->ifindex, -1, mode | XDP_FLAGS_REPLACE, &opts);
	if (ret && ret != -EEXIST && ret != -ENODEV)
		pr_warn("cannot detach the XDP program: %s\n", strerror(-ret));
	else if (recorded_id(x->ifname) == x->prog_id) {
		char path[sizeof(RR_RUN_DIR) + IF_NAMESIZE + 8];

		record_path(x->ifname, path, sizeof(path));
		unlink(path); /* fails harmlessly after --user */
	}
}

/* The scatter program's filter on the egress: handle and priority
 * reqrouter's own, so that it finds (and replaces) only its own. */
#define RR_SCATTER_HANDLE 0x7272
#define RR_SCATTER_PRIO 0x7272

void rr_xdp_destroy(struct rr_xdp *x)
{
	uint32_t i;

	if (!x || !x->skel)
		return;
	rr_xdp_detach(x);
	if (x->cache)
		munmap(x->cache, x->cache_size);
	x->cache = NULL;
	if (x->hh)
		munmap(x->hh, x->hh_size);
	if (x->hh_pool)
		munmap(x->hh_pool, x->hh_pool_size);
	x->hh = NULL;
	x->hh_pool = NULL;
	if (x->load)
		munmap(x->load, x->load_size);
	x->load = NULL;
	if (x->rl_cost)
		munmap(x->rl_cost, x->rl_cost_size);
	x->rl_cost = NULL;
	if (x->validate)
		munmap(x->validate, x->validate_size);
	x->validate = NULL;
	if (x->gathers)
		munmap(x->gathers, x->gathers_size);
	x->gathers = NULL;
	if (x->sg_paths)
		munmap((void *)x->sg_paths, x->sg_paths_size);
	x->sg_paths = NULL;
	for (i = 0; i < RR_MAX_SLOTS; i++) {
		bpf_object__close(x->fn_objs[i]);
		bpf_object__close(x->fn_objs_cpumap[i]);
		x->fn_objs[i] = NULL;
		x->fn_objs_cpumap[i] = NULL;
	}
	reqrouter__destroy(x->skel);
	x->skel = NULL;
}

/*
 * Function @impl's XDP object, opened, sharing the steering program's
 * maps, and loaded into @progs at @slot: as an XDP program, or with
 * @cpumap as a cpumap program (xdp_spread), which hands back what it
 * does not answer through rr_verdict_cpumap. Returns the object.
 */
static struct bpf_object *load_fn(struct rr_xdp *x, uint32_t slot,
				  const struct rr_xdp_impl *impl, bool cpumap,
				  char *why, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = impl->name);
	struct bpf_map *m, *ours, *progs;
	struct bpf_program *prog;
	struct bpf_object *obj;
	const void *bytes;
	size_t size;
	int ret, fd;

	bytes = impl->elf_bytes(&size);
	obj = bpf_object__open_mem(bytes, size, &opts);
	if (!obj) {
		ret = -errno;
		snprintf(why, len, "cannot open its object: %s",
			 strerror(-ret));
		errno = -ret;
		return NULL;
	}
	/* Every map the steering program has too is the steering
	 * program's: the request, the counters, rr_verdict. */
	bpf_object__for_each_map(m, obj)
	{
		if (cpumap && !strcmp(bpf_map__name(m), "rr_verdict"))
			ours = x->skel->maps.rr_verdict_cpumap;
		else
			ours = bpf_object__find_map_by_name(x->skel->obj,
							    bpf_map__name(m));
		if (!ours)
			continue;
		ret = bpf_map__reuse_fd(m, bpf_map__fd(ours));
		if (ret) {
			snprintf(why, len, "cannot share map %s: %s",
				 bpf_map__name(m), strerror(-ret));
			goto err;
		}
	}
	prog = bpf_object__next_program(obj, NULL);
	if (!prog || bpf_object__next_program(obj, prog)) {
		snprintf(why, len, "its object must hold exactly one program");
		ret = -EINVAL;
		goto err;
	}
	if (cpumap)
		bpf_program__set_expected_attach_type(prog, BPF_XDP_CPUMAP);
	ret = bpf_object__load(obj);
	if (ret) {
		snprintf(why, len, "the kernel refused it: %s%s",
			 strerror(-ret), " (-v shows the verifier log)");
		goto err;
	}
	fd = bpf_program__fd(prog);
	progs = cpumap ? x->skel->maps.fn_progs_cpumap : x->skel->maps.fn_progs;
	ret = bpf_map__update_elem(progs, &slot, sizeof(slot), &fd, sizeof(fd),
				   0);
	if (ret) {
		snprintf(why, len, "cannot install it: %s", strerror(-ret));
		goto err;
	}
	return obj;
err:
	bpf_object__close(obj);
	errno = -ret;
	return NULL;
}

int rr_xdp_load_function(struct rr_xdp *x, uint32_t slot,
			 const struct rr_xdp_impl *impl, char *why, size_t len)
{
	struct bpf_object *obj, *spread;
	char whynot[RR_ERRLEN];

	if (slot >= RR_MAX_SLOTS)
		return -EINVAL;
	obj = load_fn(x, slot, impl, false, why, len);
	if (!obj)
		return -errno;
	/* Only xdp_spread needs it; a kernel that refuses it keeps the
	 * function's requests on the receiving CPU (rr_spread_port_conf). */
	spread = load_fn(x, slot, impl, true, whynot, sizeof(whynot));
	if (!spread) {
		pr_debug("%s: no cpumap copy for xdp_spread: %s\n", impl->name,
			 whynot);
		bpf_map__delete_elem(x->skel->maps.fn_progs_cpumap, &slot,
				     sizeof(slot), 0);
	}
	bpf_object__close(x->fn_objs[slot]);
	bpf_object__close(x->fn_objs_cpumap[slot]);
	x->fn_objs[slot] = obj;
	x->fn_objs_cpumap[slot] = spread;
	return 0;
}

/*
 * An entry of spread_cpus for @cpu, which starts the cpumap thread there
 * that runs reqrouter_spread, or with !@on the entry taken out (its
 * thread stops once its queue is empty).
 */
int rr_xdp_spread_cpu(struct rr_xdp *x, uint32_t cpu, bool on)
{
	struct bpf_cpumap_val val = {
		.qsize = RR_SPREAD_QSIZE,
		.bpf_prog.fd = bpf_program__fd(x->skel->progs.reqrouter_spread),
	};
	int ret;

	if (cpu >= x->spread_ncpus)
		return -ENODEV;
	if (x->spread_on[cpu] == on)
		return 0;
	if (on)
		ret = bpf_map__update_elem(x->skel->maps.spread_cpus, &cpu,
					   sizeof(cpu), &val, sizeof(val), 0);
	else
		ret = bpf_map__delete_elem(x->skel->maps.spread_cpus, &cpu,
					   sizeof(cpu), 0);
	if (ret && !(ret == -ENOENT && !on))
		return ret;
	x->spread_on[cpu] = on;
	return 0;
}

/* Map @fd's whole array, @size bytes of values, shared (@prot); with
 * !@inherit not into a process this one forks: a cell must not write what
 * the program samples with. Mapped PROT_READ alone, it can never be made
 * writable (the kernel drops VM_MAYWRITE). */
static void *map_prot(int fd, size_t size, int prot, bool inherit,
		      size_t *mapped)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	size = (size + (size_t)page - 1) & ~((size_t)page - 1);
	p = mmap(NULL, size, prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (!inherit && madvise(p, size, MADV_DONTFORK)) {
		int err = errno;

		munmap(p, size);
		errno = err;
		return NULL;
	}
	*mapped = size;
	return p;
}

static void *map_shared(int fd, size_t size, bool inherit, size_t *mapped)
{
	return map_prot(fd, size, PROT_READ | PROT_WRITE, inherit, mapped);
}

/* The workers, cells included, store replies into it. */
int rr_xdp_map_cache(struct rr_xdp *x)
{
	if (x->cache)
		return 0;
	x->cache = map_shared(bpf_map__fd(x->skel->maps.reply_cache),
			      sizeof(struct rr_cache_entry) *
				      x->cache_queue_entries * x->cache_queues *
				      x->cache_groups,
			      true, &x->cache_size);
	return x->cache ? 0 : -errno;
}

/* Each worker's entries fill whole pages, so that a cell can keep its
 * own alone. */
_Static_assert(RR_SG_PER_WORKER * sizeof(struct rr_gather_entry) % 4096 == 0,
	       "a worker's gathers must fill whole pages");

int rr_xdp_map_gathers(struct rr_xdp *x)
{
	if (x->gathers || !x->ngathers)
		return 0;
	x->gathers = map_shared(bpf_map__fd(x->skel->maps.gathers),
				sizeof(struct rr_gather_entry) * x->ngathers,
				true, &x->gathers_size);
	if (!x->gathers)
		return -errno;
	/* Read alone, by the workers and cells: only the program learns. */
	x->sg_paths = map_prot(bpf_map__fd(x->skel->maps.sg_paths),
			       sizeof(struct rr_sg_path) * x->ngroups *
				       RR_SG_MAX_TARGETS,
			       PROT_READ, true, &x->sg_paths_size);
	return x->sg_paths ? 0 : -errno;
}

int rr_xdp_set_targets(struct rr_xdp *x, uint32_t group,
		       const struct rr_endpoint *t, uint32_t n)
{
	struct rr_sg_path path = { 0 };
	struct rr_sg_target v;
	uint32_t i, key;
	int ret;

	if (group >= x->ngroups || n > RR_SG_MAX_TARGETS)
		return -EINVAL;
	for (i = 0; i < RR_SG_MAX_TARGETS; i++) {
		memset(&v, 0, sizeof(v));
		if (i < n) {
			v.family = (uint32_t)t[i].family;
			v.port = htons(t[i].port);
			memcpy(v.addr, t[i].addr,
			       t[i].family == AF_INET6 ? 16 : 4);
		}
		key = group * RR_SG_MAX_TARGETS + i;
		ret = bpf_map__update_elem(x->skel->maps.sg_targets, &key,
					   sizeof(key), &v, sizeof(v), 0);
		if (!ret)
			ret = bpf_map__update_elem(x->skel->maps.sg_paths, &key,
						   sizeof(key), &path,
						   sizeof(path), 0);
		if (ret)
			return ret;
	}
	return 0;
}

int rr_xdp_attach_scatter(struct rr_xdp *x, int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = RR_SCATTER_HANDLE,
		    .priority = RR_SCATTER_PRIO,
		    .prog_fd =
			    bpf_program__fd(x->skel->progs.reqrouter_scatter));
	int ret;

	ret = bpf_tc_hook_create(&hook);
	if (ret && ret != -EEXIST)
		return ret;
	x->scatter_qdisc = !ret;
	/* One of ours left by a reqrouter that was killed is replaced. */
	opts.flags = BPF_TC_F_REPLACE;
	ret = bpf_tc_attach(&hook, &opts);
	if (ret) {
		rr_xdp_detach_scatter(x, ifindex);
		return ret;
	}
	x->scatter_attached = true;
	return 0;
}

void rr_xdp_detach_scatter(struct rr_xdp *x, int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = RR_SCATTER_HANDLE,
		    .priority = RR_SCATTER_PRIO);

	if (x->scatter_attached)
		bpf_tc_detach(&hook, &opts);
	x->scatter_attached = false;
	/* The qdisc goes only if this made it, with whatever else was put
	 * on it since (nothing, usually). */
	if (x->scatter_qdisc) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	x->scatter_qdisc = false;
}

/* The kernel lays an array's values out 8-byte aligned: as C does. */
_Static_assert(sizeof(struct rr_hh_sketch) % 8 == 0,
	       "hh_sketch's entries must be laid out as an array of them");

int rr_xdp_map_hh(struct rr_xdp *x)
{
	if (x->hh)
		return 0;
	x->hh_pool =
		map_shared(bpf_map__fd(x->skel->maps.hh_pool),
			   sizeof(struct rr_hh_pool), false, &x->hh_pool_size);
	if (!x->hh_pool)
		return -errno;
	x->hh = map_shared(bpf_map__fd(x->skel->maps.hh_sketch),
			   sizeof(struct rr_hh_sketch) * RR_MAX_SLOTS, false,
			   &x->hh_size);
	if (!x->hh) {
		int ret = -errno;

		munmap(x->hh_pool, x->hh_pool_size);
		x->hh_pool = NULL;
		return ret;
	}
	return 0;
}

_Static_assert(sizeof(struct rr_queue_load) == 4096,
	       "a queue's load is a page of its own");

/* Inherited by the cells, each of which unmaps all but its queue's. */
int rr_xdp_map_load(struct rr_xdp *x, uint32_t nqueues)
{
	if (x->load)
		return 0;
	if (!nqueues || nqueues > RR_MAX_QUEUES)
		return -EINVAL;
	x->load = map_shared(bpf_map__fd(x->skel->maps.worker_load),
			     sizeof(struct rr_queue_load) * nqueues, true,
			     &x->load_size);
	return x->load ? 0 : -errno;
}

/* The kernel lays an array's values out 8-byte aligned: as C does. */
_Static_assert(sizeof(struct rr_rl_set) % 8 == 0,
	       "rl_cost_table's values must be laid out as an array of them");

int rr_xdp_map_rl_cost(struct rr_xdp *x)
{
	if (x->rl_cost)
		return 0;
	x->rl_cost = map_shared(bpf_map__fd(x->skel->maps.rl_cost_table),
				sizeof(struct rr_rl_set) * RR_RL_SETS, true,
				&x->rl_cost_size);
	return x->rl_cost ? 0 : -errno;
}

_Static_assert(sizeof(struct rr_validate_set) % 8 == 0,
	       "validate_table's values must be laid out as an array of them");

int rr_xdp_map_validate(struct rr_xdp *x)
{
	if (x->validate)
		return 0;
	x->validate =
		map_shared(bpf_map__fd(x->skel->maps.validate_table),
			   sizeof(struct rr_validate_set) * RR_VALIDATE_SETS,
			   true, &x->validate_size);
	return x->validate ? 0 : -errno;
}

int rr_xdp_hh_reset_cpu(struct rr_xdp *x, uint32_t slot)
{
	int fd = bpf_map__fd(x->skel->maps.hh_cpu), ncpus;
	struct rr_hh_cpu *zero;
	int ret;

	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0 || slot >= RR_MAX_SLOTS)
		return -EINVAL;
	zero = calloc((size_t)ncpus, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	ret = bpf_map_update_elem(fd, &slot, zero, 0) ? -errno : 0;
	free(zero);
	return ret;
}

int rr_xdp_set_socket(struct rr_xdp *x, uint32_t queue, uint32_t thread,
		      uint32_t slot, int fd)
{
	uint32_t key = RR_XSK_KEY(queue, thread, slot);
	int ret;

	ret = bpf_map__update_elem(x->skel->maps.xsks_map, &key, sizeof(key),
				   &fd, sizeof(fd), 0);
	if (ret)
		pr_warn("cannot insert socket into xsks_map[%u]: %s\n", key,
			strerror(-ret));
	return ret;
}

int rr_xdp_clear_socket(struct rr_xdp *x, uint32_t queue, uint32_t thread,
			uint32_t slot)
{
	uint32_t key = RR_XSK_KEY(queue, thread, slot);
	int ret;

	ret = bpf_map__delete_elem(x->skel->maps.xsks_map, &key, sizeof(key),
				   0);
	if (ret && ret != -ENOENT)
		pr_warn("cannot take socket xsks_map[%u] out: %s\n", key,
			strerror(-ret));
	return ret == -ENOENT ? 0 : ret;
}

void rr_xdp_mark_served(volatile __u64 *served, uint16_t port, bool on)
{
	volatile __u64 *w = &served[RR_SERVED_WORD(port)];

	if (on)
		__atomic_fetch_or(w, RR_SERVED_BIT(port), __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(w, ~RR_SERVED_BIT(port), __ATOMIC_RELAXED);
}

void rr_xdp_set_deadline(struct rr_xdp *x, uint32_t slot, uint64_t ns)
{
	if (slot < RR_MAX_SLOTS)
		__atomic_store_n(&x->skel->data->deadline_ns[slot], ns,
				 __ATOMIC_RELAXED);
}

void rr_xdp_set_trace(struct rr_xdp *x, uint32_t slot, uint32_t sample)
{
	if (slot < RR_MAX_SLOTS)
		__atomic_store_n(&x->skel->data->trace_sample[slot], sample,
				 __ATOMIC_RELAXED);
}

void rr_xdp_set_tap(struct rr_xdp *x, uint32_t slot, uint32_t sample)
{
	uint32_t on;

	if (slot >= RR_MAX_SLOTS)
		return;
	__atomic_store_n(&x->skel->data->tap_sample[slot], sample,
			 __ATOMIC_RELAXED);
	if (sample)
		x->taps |= 1U << slot;
	else
		x->taps &= ~(1U << slot);
	/* The sample first, then the mark that has it read. */
	on = x->skel->data->capture_on & ~(uint32_t)RR_MARK_TAP;
	__atomic_store_n(&x->skel->data->capture_on,
			 on | (x->taps ? RR_MARK_TAP : 0), __ATOMIC_RELEASE);
}

/* @port's entry in @map, a map keyed by port: 0, or -errno said. */
static int put_by_port(struct bpf_map *map, uint16_t port, const void *v,
		       size_t n, const char *what)
{
	uint32_t key = port;
	int ret = bpf_map__update_elem(map, &key, sizeof(key), v, n, 0);

	if (ret)
		pr_warn("cannot configure %sport %u: %s\n", what, port,
			strerror(-ret));
	return ret;
}

int rr_xdp_set_port(struct rr_xdp *x, uint16_t port,
		    const struct rr_port_conf *conf)
{
	int ret = put_by_port(x->skel->maps.port_map, port, conf, sizeof(*conf),
			      "");

	if (!ret)
		rr_xdp_mark_served(x->skel->data->served_ports, port,
				   conf->nsocks);
	return ret;
}

int rr_xdp_set_canary(struct rr_xdp *x, uint16_t port,
		      const struct rr_canary *c)
{
	return put_by_port(x->skel->maps.canary_map, port, c, sizeof(*c),
			   "the canary of ");
}

int rr_xdp_del_canary(struct rr_xdp *x, uint16_t port)
{
	uint32_t key = port;
	int ret;

	ret = bpf_map__delete_elem(x->skel->maps.canary_map, &key, sizeof(key),
				   0);
	return ret == -ENOENT ? 0 : ret;
}

void rr_xdp_local_maps(const struct rr_xdp *x, int *fd_v4, int *fd_v6,
		       int *fd_tab)
{
	*fd_v4 = bpf_map__fd(x->skel->maps.local_v4);
	*fd_v6 = bpf_map__fd(x->skel->maps.local_v6);
	*fd_tab = bpf_map__fd(x->skel->maps.local_tab);
}

int rr_xdp_del_port(struct rr_xdp *x, uint16_t port)
{
	/* An array entry cannot go; one with no sockets passes everything. */
	struct rr_port_conf none = { 0 };

	return rr_xdp_set_port(x, port, &none);
}

int rr_xdp_allow(struct rr_xdp *x, uint32_t slot, const struct rr_cidr *c)
{
	struct rr_allow_v4 k4 = { .prefixlen = 32 + c->len, .slot = slot };
	struct rr_allow_v6 k6 = { .prefixlen = 32 + c->len, .slot = slot };
	uint8_t one = 1;
	int ret;

	if (c->family == AF_INET) {
		memcpy(k4.addr, c->addr, sizeof(k4.addr));
		ret = bpf_map__update_elem(x->skel->maps.acl_v4, &k4,
					   sizeof(k4), &one, sizeof(one), 0);
	} else {
		memcpy(k6.addr, c->addr, sizeof(k6.addr));
		ret = bpf_map__update_elem(x->skel->maps.acl_v6, &k6,
					   sizeof(k6), &one, sizeof(one), 0);
	}
	if (ret)
		pr_warn("cannot add to the allow-list: %s%s\n", strerror(-ret),
			ret == -ENOSPC ? " (too many prefixes)" : "");
	return ret;
}

int rr_xdp_read_fn_stats(struct rr_xdp *x, uint32_t queue, uint32_t slot,
			 uint64_t *out)
{
	int ret;

	if (queue >= RR_MAX_QUEUES || slot >= RR_MAX_SLOTS)
		return -EINVAL;
	ret = rr_percpu_sum(bpf_map__fd(x->skel->maps.fn_stats),
			    RR_FN_STATS_KEY(queue, slot, 0), RR_FN_STAT_MAX,
			    out);
	/* A function's XDP program counts a request it answers only as
	 * answered (include/reqrouter/rr_xdp.h): one counter a reply. */
	if (!ret)
		out[RR_FN_XDP_RX] += out[RR_FN_XDP_TX];
	return ret;
}

uint32_t rr_xdp_stat_rows(uint32_t nrxqueues)
{
	return nrxqueues > RR_MAX_QUEUES ? RR_MAX_QUEUES + 1 : nrxqueues;
}

int rr_xdp_read_stats(struct rr_xdp *x, uint64_t *out, uint32_t nrows)
{
	uint32_t q, slot;
	uint64_t tx;
	int ret;

	ret = rr_percpu_sum(bpf_map__fd(x->skel->maps.xdp_stats), 0,
			    nrows * RR_XDP_STAT_MAX, out);
	/* A queue's replies from the functions' XDP programs are the sum
	 * of their own counts (rr_xdp.h): not counted twice in XDP. */
	for (q = 0; !ret && q < nrows && q < RR_MAX_QUEUES; q++)
		for (slot = 0; !ret && slot < RR_MAX_SLOTS; slot++) {
			ret = rr_percpu_sum(
				bpf_map__fd(x->skel->maps.fn_stats),
				RR_FN_STATS_KEY(q, slot, RR_FN_XDP_TX), 1, &tx);
			out[q * RR_XDP_STAT_MAX + RR_XDP_TX_FUNCTION] += tx;
		}
	return ret;
}
