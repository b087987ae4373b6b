// SPDX-License-Identifier: GPL-2.0
/*
 * Reload (docs/OPERATIONS.md, "Reload"): a new config applied while
 * serving, key by key; the changed functions' new instances made on a
 * thread of the reload's own, swapped in on the main thread, and the old
 * ones freed once no serving loop can use them (inv->quiesce). A
 * function a reload enables is served as a deployed one is
 * (rr_slot_serve_new()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "clock.h"
#include "cookie.h"
#include "hh.h"
#include "invoker.h"
#include "log.h"
#include "module.h"
#include "registry.h"
#include "reqrouter.skel.h" /* the allow-lists' maps: disallow() */
#include "rl.h"
#include "seccomp.h"
#include "settings.h"
#include "shared/guard.h"
#include "slots.h"
#include "util.h"

/* Room for a diff of either settings table. */
#define MAX_ROWS 64

static bool is_key(const struct rr_setting *row, const char *key)
{
	return !strcmp(row->key, key);
}

/* How a line of a reload's report counts. */
enum said {
	SAID_APPLIED,
	SAID_REFUSED, /* needs a restart */
	SAID_FAILED,
	SAID_NOTE, /* reported, counted nowhere */
};

/*
 * A reload's new instances, made off the main thread (inv->reload). The
 * init() calls can take seconds (the dns function parses its zones there,
 * kv reads its table), so they run on a thread of the reload's own while
 * the main loop goes on answering the control socket, HTTP and systemd
 * and supervising the workers; everything else a reload does (the swaps,
 * the keys, the report) is the main thread's once the thread is done, as
 * before. What the thread touches: the functions' code; the settings in
 * @next, which nobody else reads until it is done; a counters table per
 * instance, a copy of its slot's that the slot takes over when the
 * instance is swapped in (the main thread's metrics never read one being
 * written); and the shared memory init() maps into this process, as at
 * start-up (a cell forked meanwhile inherits the mapping but never sees
 * the instance). What would change the functions or the workers the
 * instances are made for (deploy, threads N) is refused meanwhile
 * (control.c), and checked again before a swap.
 */
struct prepared {
	const struct rr_function *fn; /* NULL: nothing to make */
	const struct rr_service *to;  /* in @next: the settings */
	uint16_t port;
	struct rr_fn_counters ctrs;
	struct rr_fn_instance *inst; /* NULL once made: init failed, @err */
	char err[RR_ERRLEN];
};

struct rr_reload {
	struct rr_config *next;
	pthread_t thread;
	int done; /* the thread has made every instance, or freed @old */
	uint64_t started_ns;
	/* Applied: the states swapped out are freed on the thread too (a
	 * large zone's fini() takes a while as well), their modules released
	 * here once it is done. */
	bool applied;
	struct rr_fn_instance *old[RR_MAX_SLOTS];
	struct rr_module *mods[RR_MAX_SLOTS];
	/* The worker indexes the instances have a state for: those below
	 * @nworkers that are @active, @nthreads per queue; and the TCP
	 * loop's, the last (RR_TCP_WORKER), for a function served over TCP
	 * (as rr_slot_instance_new() makes them). */
	uint32_t nworkers, nthreads;
	bool active[RR_MAX_WORKERS + 1];
	struct prepared served[RR_MAX_SLOTS]; /* by slot */
	struct prepared added[RR_MAX_SLOTS];  /* functions @next adds */
	uint32_t nadded;
};

/* A reload being applied: its report so far, and what it changed. */
struct reload {
	struct rr_invoker *inv;
	struct rr_reload *rl;
	/* The running config: the main thread's, changed in place (as a
	 * deploy does); the workers read what they need of it atomically,
	 * cells in their copies until renewed. */
	struct rr_config *cfg;
	const struct rr_config *next;
	FILE *lines; /* "\nLINE" for each; NULL if it could not be opened */
	char *text;
	size_t len;
	uint32_t applied, refused, failed, reinit;
	/* The workers must see a change: threads start a round in a new
	 * epoch, cells are replaced by fresh forks. */
	bool renew;
	bool syscalls; /* a function's `syscalls` changed */
	struct rr_fn_instance *old[RR_MAX_SLOTS]; /* swapped out */
	/* By slot: the service in @next a new instance was made with, and
	 * whether the cached replies are of an older state or settings. */
	const struct rr_service *made_with[RR_MAX_SLOTS];
	bool stale[RR_MAX_SLOTS];
	bool canary[RR_MAX_SLOTS]; /* its `canary` changed (canary.c) */
};

static void say(struct reload *r, enum said what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line of the report, logged as it is decided: a change applied is a
 * notice (docs/OPERATIONS.md, "Logs"), one refused or failed a warning. */
static void say(struct reload *r, enum said what, const char *fmt, ...)
{
	char line[RR_ERRLEN * 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (what == SAID_REFUSED || what == SAID_FAILED)
		pr_warn("reload: %s\n", line);
	else
		pr_notice("reload: %s\n", line);
	r->applied += what == SAID_APPLIED;
	r->refused += what == SAID_REFUSED;
	r->failed += what == SAID_FAILED;
	if (r->lines)
		fprintf(r->lines, "\n%s", line);
}

/*
 * Row @row's value from @from into @to (two struct rr_config, or two
 * struct rr_service): a number or a switch in one store, since a worker
 * thread may be reading it.
 */
static void copy_field(const struct rr_setting *row, void *to, const void *from)
{
	char *t = (char *)to + row->off;
	const char *f = (const char *)from + row->off;

	switch (row->type) {
	case RR_SETTING_BOOL:
		__atomic_store_n((bool *)t, *(const bool *)f, __ATOMIC_RELAXED);
		return;
	case RR_SETTING_U32:
	case RR_SETTING_ENUM:
		if (row->size == sizeof(uint32_t))
			__atomic_store_n((uint32_t *)t, *(const uint32_t *)f,
					 __ATOMIC_RELAXED);
		else
			memcpy(t, f, row->size);
		return;
	case RR_SETTING_CPUS:
	case RR_SETTING_PORTS:
	case RR_SETTING_CIDRS:
		memcpy((char *)to + row->count, (const char *)from + row->count,
		       sizeof(uint32_t));
		break;
	default:
		break;
	}
	memcpy(t, f, row->size);
}

/* Whether prefixes @a and @b are one entry of the allow-lists' trie:
 * family, length and the bits up to the length. */
static bool same_prefix(const struct rr_cidr *a, const struct rr_cidr *b)
{
	uint32_t whole = a->len / 8, bits = a->len % 8;
	uint8_t mask = (uint8_t)(0xff << (8 - bits));

	if (a->family != b->family || a->len != b->len ||
	    memcmp(a->addr, b->addr, whole))
		return false;
	return !bits || !((a->addr[whole] ^ b->addr[whole]) & mask);
}

static bool listed(const struct rr_cidr *c, const struct rr_cidr *list,
		   uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (same_prefix(c, &list[i]))
			return true;
	return false;
}

/*
 * Takes prefix @c out of function @slot's allow-list: the counterpart of
 * rr_xdp_allow(), the same key. (Its place would be next to that one in
 * xdp.c, which owns the maps.) Gone already is no error.
 */
static int disallow(struct rr_xdp *x, uint32_t slot, const struct rr_cidr *c)
{
	struct rr_allow_v4 k4 = { .prefixlen = 32 + c->len, .slot = slot };
	struct rr_allow_v6 k6 = { .prefixlen = 32 + c->len, .slot = slot };
	int ret;

	if (c->family == AF_INET) {
		memcpy(k4.addr, c->addr, sizeof(k4.addr));
		ret = bpf_map__delete_elem(x->skel->maps.acl_v4, &k4,
					   sizeof(k4), 0);
	} else {
		memcpy(k6.addr, c->addr, sizeof(k6.addr));
		ret = bpf_map__delete_elem(x->skel->maps.acl_v6, &k6,
					   sizeof(k6), 0);
	}
	return ret == -ENOENT ? 0 : ret;
}

/*
 * Function @slot's allow-list entries from @was (@nwas prefixes) to the
 * non-empty list of @to, while its port entry keeps asking for a list:
 * the prefixes that go are taken out first, then the new ones put in,
 * so a source both lists allow is never refused and the map never holds
 * more than the larger list. On failure what was is put back. (A list
 * that becomes empty is emptied once the port entry stops asking.)
 */
static int change_allow(struct rr_invoker *inv, uint32_t slot,
			const struct rr_cidr *was, uint32_t nwas,
			const struct rr_service *to)
{
	uint32_t i;
	int ret = 0;

	for (i = 0; i < nwas && !ret; i++)
		if (!listed(&was[i], to->allow, to->nallow))
			ret = disallow(&inv->xdp, slot, &was[i]);
	for (i = 0; i < to->nallow && !ret; i++)
		if (!listed(&to->allow[i], was, nwas))
			ret = rr_xdp_allow(&inv->xdp, slot, &to->allow[i]);
	if (!ret)
		return 0;
	for (i = 0; i < to->nallow; i++)
		if (!listed(&to->allow[i], was, nwas))
			disallow(&inv->xdp, slot, &to->allow[i]);
	for (i = 0; i < nwas; i++)
		rr_xdp_allow(&inv->xdp, slot, &was[i]);
	return ret;
}

/*
 * Slot @s's reply cache as its service says now, by choose_tier()'s
 * rule: a pure function with cache = yes, answered in user space. A cache
 * that starts gets a generation of its own; the caller syncs the port.
 */
static int set_cache(struct rr_invoker *inv, struct rr_slot *s)
{
	const struct rr_service *svc = s->svc;
	bool want = !s->tier_xdp && !s->removed && svc->cache &&
		    svc->fn->flags & RR_FN_PURE &&
		    s->cell_group < inv->xdp.cache_groups;
	int ret;

	if (want == s->cached)
		return 0;
	if (!want) {
		s->port_conf.flags &= ~RR_PORT_CACHE;
		__atomic_store_n(&s->cached, false, __ATOMIC_RELEASE);
		return 0;
	}
	ret = rr_xdp_map_cache(&inv->xdp);
	if (ret)
		return ret;
	__atomic_add_fetch(&s->cache_gen, 1, __ATOMIC_RELAXED);
	s->port_conf.cache_gen = s->cache_gen;
	s->port_conf.cache_id_bytes = svc->fn->id_bytes;
	s->port_conf.flags |= RR_PORT_CACHE;
	__atomic_store_n(&s->cached, true, __ATOMIC_RELEASE);
	return 0;
}

/*
 * The live keys among @rows (@n of them, from rr_service_diff()) from @to
 * into slot @slot's service, allow-list and XDP port entry, one line
 * each. `enabled` is set_enabled()'s.
 */
static void apply(struct reload *r, uint32_t slot, const struct rr_service *to,
		  const struct rr_setting **rows, size_t n)
{
	struct rr_invoker *inv = r->inv;
	struct rr_slot *s = &inv->slots[slot];
	struct rr_service *svc = (struct rr_service *)s->svc;
	const char *name = svc->fn->name;
	struct rr_cidr was[RR_MAX_ALLOW_PER_FN], xwas[RR_MAX_ALLOW_PER_FN];
	uint32_t nwas = svc->nallow, nxwas = svc->nrate_limit_exempt, i;
	int allow_ret = 0, exempt_ret = 0, cache_ret, ret;
	bool rl_reset = false;
	size_t k, live = 0;

	memcpy(was, svc->allow, sizeof(was));
	memcpy(xwas, svc->rate_limit_exempt, sizeof(xwas));
	for (k = 0; k < n; k++) {
		if (!rows[k]->live || is_key(rows[k], "enabled"))
			continue;
		/* Once every function is reloaded: apply_canaries(). */
		if (is_key(rows[k], "canary")) {
			copy_field(rows[k], svc, to);
			r->canary[slot] = true;
			continue;
		}
		live++;
		if (is_key(rows[k], "allow") && to->nallow) {
			allow_ret = change_allow(inv, slot, was, nwas, to);
			if (allow_ret)
				continue;
		}
		/* New exemptions first: a source both lists exempt is
		 * never limited in between; the old ones go after the
		 * sync. */
		if (is_key(rows[k], "rate_limit_exempt")) {
			for (i = 0; i < to->nrate_limit_exempt && !exempt_ret;
			     i++)
				if (!listed(&to->rate_limit_exempt[i], xwas,
					    nxwas))
					exempt_ret = rr_rl_exempt(
						&inv->xdp, slot,
						&to->rate_limit_exempt[i],
						true);
			if (exempt_ret)
				continue;
		}
		copy_field(rows[k], svc, to);
		/* The fault ring is laid out for quarantine_faults. */
		if (is_key(rows[k], "quarantine_faults") ||
		    is_key(rows[k], "quarantine_window")) {
			memset(s->faults.at_ns, 0, sizeof(s->faults.at_ns));
			s->faults.next = 0;
		}
		if (!strncmp(rows[k]->key, "cache", 5))
			r->stale[slot] = true;
		if (is_key(rows[k], "syscalls"))
			r->syscalls = true;
		/* Buckets filled at the old rate could hold a prefix back
		 * for up to a second of it: they start full. */
		if (!strncmp(rows[k]->key, "rate_limit", 10) &&
		    !is_key(rows[k], "rate_limit_exempt"))
			rl_reset = true;
	}
	if (!live)
		return;
	r->renew = true;
	rr_slot_port_settings(svc, &s->port_conf);
	cache_ret = set_cache(inv, s);
	/* A new generation of its buckets, which the port entry names. */
	if (rl_reset)
		rr_rl_reset(&inv->xdp, slot);
	ret = rr_slot_sync(inv, s);
	/* No longer asked for: the old list can go. */
	if (!ret && !svc->nallow)
		for (i = 0; i < nwas; i++)
			disallow(&inv->xdp, slot, &was[i]);
	for (i = 0; !ret && !exempt_ret && i < nxwas; i++)
		if (!listed(&xwas[i], svc->rate_limit_exempt,
			    svc->nrate_limit_exempt))
			rr_rl_exempt(&inv->xdp, slot, &xwas[i], false);
	for (k = 0; k < n; k++) {
		if (!rows[k]->live || is_key(rows[k], "enabled") ||
		    is_key(rows[k], "canary"))
			continue;
		if (is_key(rows[k], "allow") && allow_ret)
			say(r, SAID_FAILED,
			    "[function %s] allow: failed: cannot write the allow-list (%s); the old one stays",
			    name, strerror(-allow_ret));
		else if (is_key(rows[k], "rate_limit_exempt") && exempt_ret)
			say(r, SAID_FAILED,
			    "[function %s] rate_limit_exempt: failed: cannot write the exemptions (%s); the old ones stay",
			    name, strerror(-exempt_ret));
		else if (ret)
			say(r, SAID_FAILED,
			    "[function %s] %s: failed: cannot write port %u's XDP entry (%s)",
			    name, rows[k]->key, svc->port, strerror(-ret));
		else if (is_key(rows[k], "cache") && cache_ret)
			say(r, SAID_FAILED,
			    "[function %s] cache: failed: cannot map the reply cache (%s); served uncached",
			    name, strerror(-cache_ret));
		else
			say(r, SAID_APPLIED, "[function %s] %s: applied", name,
			    rows[k]->key);
	}
}

/* The canaries whose `canary` changed, started, changed or rolled back
 * as it now says (canary.c). */
static void apply_canaries(struct reload *r)
{
	char msg[RR_ERRLEN * 2];
	uint32_t slot, n = r->inv->nslots;
	int ret;

	for (slot = 0; slot < n; slot++) {
		if (!r->canary[slot])
			continue;
		ret = rr_canary_configured(r->inv, slot, msg, sizeof(msg));
		say(r, ret < 0 ? SAID_FAILED : SAID_APPLIED,
		    "[function %s] canary: %s: %s",
		    r->inv->slots[slot].svc->fn->name,
		    ret < 0 ? "failed" : "applied", msg);
	}
}

/* `enabled` of slot @slot's function: its port back from the kernel, or
 * to it, as reqrouterctl remove takes it (the slot stays). */
static void set_enabled(struct reload *r, uint32_t slot, bool on)
{
	struct rr_invoker *inv = r->inv;
	struct rr_slot *s = &inv->slots[slot];
	struct rr_service *svc = (struct rr_service *)s->svc;

	if (s->removed != on) {
		/* Removed by reqrouterctl remove, or served: as it is. */
	} else if (on) {
		s->removed = false;
		set_cache(inv, s);
		if (rr_slot_sync(inv, s)) {
			s->removed = true;
			say(r, SAID_FAILED,
			    "[function %s] enabled: failed: cannot open port %u",
			    svc->fn->name, svc->port);
			return;
		}
		r->renew = true;
	} else {
		s->removed = true;
		if (rr_slot_sync(inv, s)) {
			s->removed = false;
			say(r, SAID_FAILED,
			    "[function %s] enabled: failed: cannot take port %u out",
			    svc->fn->name, svc->port);
			return;
		}
		rr_user_tier_only(inv, s);
	}
	svc->enabled = on;
	if (on)
		say(r, SAID_APPLIED,
		    "[function %s] enabled: applied, served again on port %u",
		    svc->fn->name, svc->port);
	else
		say(r, SAID_APPLIED,
		    "[function %s] enabled: applied, no longer served: port %u goes to the kernel",
		    svc->fn->name, svc->port);
}

/*
 * Takes instance @p made for function @fn out of the reload's hands: the
 * instance, with its counters in @ctrs; or NULL with the reason in @err.
 */
static struct rr_fn_instance *take_made(struct reload *r, struct prepared *p,
					const struct rr_function *fn,
					struct rr_fn_counters *ctrs, char *err,
					size_t errlen)
{
	struct rr_fn_instance *inst = p->inst;

	p->inst = NULL;
	if (p->fn != fn || r->rl->nthreads != r->inv->nthreads) {
		/* Refused while a reload is under way; never made for what
		 * runs now. */
		rr_fn_instance_free(inst);
		snprintf(
			err, errlen,
			"function %s: the functions or the workers changed while its new state was made",
			fn->name);
		return NULL;
	}
	if (!inst) {
		snprintf(err, errlen, "%s", p->err);
		return NULL;
	}
	*ctrs = p->ctrs;
	return inst;
}

/* Slot @slot's new instance, made with @to's settings, swapped in; the
 * old state keeps serving if init() failed. */
static void reinit(struct reload *r, uint32_t slot, const struct rr_service *to)
{
	struct rr_slot *s = &r->inv->slots[slot];
	struct rr_fn_instance *fresh;
	char err[RR_ERRLEN];

	if (!s->svc->fn->init)
		return;
	fresh = take_made(r, &r->rl->served[slot], s->svc->fn, &s->fn_ctrs, err,
			  sizeof(err));
	if (!fresh) {
		say(r, SAID_FAILED, "%s; the old state keeps serving", err);
		return;
	}
	r->old[slot] = rr_swap_instance(s, fresh);
	r->made_with[slot] = to;
	r->stale[slot] = true;
	r->reinit++;
	r->renew = true;
}

/* A served function against its service in the new config. */
static void reload_slot(struct reload *r, uint32_t slot)
{
	const struct rr_service *svc = r->inv->slots[slot].svc;
	const struct rr_service *to = rr_config_service_of(r->next, svc->fn);
	const struct rr_setting *rows[MAX_ROWS];
	bool enable = false;
	size_t k, n;

	if (!to)
		return; /* not in the registry by this code: kept as it is */
	/* Taken out: its other settings matter once it is back (the config
	 * leaves them as they are: --tier and --no-cache apply to the
	 * served ones only). */
	if (!to->enabled) {
		if (svc->enabled)
			set_enabled(r, slot, false);
		return;
	}
	reinit(r, slot, to);
	n = rr_service_diff(svc, to, rows);
	for (k = 0; k < n; k++) {
		if (is_key(rows[k], "enabled"))
			enable = true;
		else if (!rows[k]->live)
			say(r, SAID_REFUSED,
			    "[function %s] %s: needs a restart", svc->fn->name,
			    rows[k]->key);
	}
	apply(r, slot, to, rows, n);
	if (enable)
		set_enabled(r, slot, to->enabled);
}

/* A function @to enables that no slot serves: served like a deployed one,
 * its service in the running config now @to's. */
static void add_function(struct reload *r, const struct rr_service *to)
{
	struct rr_invoker *inv = r->inv;
	const char *name = to->fn->name;
	struct prepared *made = NULL;
	struct rr_fn_instance *inst;
	struct rr_slot *s;
	struct rr_service *svc;
	char err[RR_ERRLEN];
	uint32_t slot;

	for (slot = 0; slot < r->rl->nadded && !made; slot++)
		if (r->rl->added[slot].to == to)
			made = &r->rl->added[slot];

	if (inv->nslots == RR_MAX_SLOTS) {
		say(r, SAID_FAILED,
		    "[function %s] enabled: failed: at most %d functions are served",
		    name, RR_MAX_SLOTS);
		return;
	}
	/* The gathers' map, sockets and scatter program are made at start,
	 * and only where a function gathers. */
	if (to->fn->flags & RR_FN_GATHER && !inv->xdp.gathers) {
		say(r, SAID_REFUSED,
		    "[function %s] enabled: needs a restart (the first function that gathers)",
		    name);
		return;
	}
	for (slot = 0; slot < inv->nslots; slot++)
		if (inv->slots[slot].svc->port == to->port) {
			say(r, SAID_FAILED,
			    "[function %s] enabled: failed: port %u is '%s''s until a restart",
			    name, to->port, inv->slots[slot].svc->fn->name);
			return;
		}
	svc = rr_config_service_of(r->cfg, to->fn);
	if (!svc && r->cfg->nservices < ARRAY_SIZE(r->cfg->services)) {
		svc = &r->cfg->services[r->cfg->nservices++];
		memset(svc, 0, sizeof(*svc));
	}
	if (!svc) {
		say(r, SAID_FAILED, "[function %s] enabled: failed: no room",
		    name);
		return;
	}
	/* Unserved, it is nobody's but ours to rewrite. */
	rr_service_drop_settings(svc);
	memcpy(svc, to, offsetof(struct rr_service, settings));
	if (rr_service_keep_settings(svc, to, r->cfg->config_file)) {
		say(r, SAID_FAILED, "[function %s] enabled: failed: %s", name,
		    strerror(ENOMEM));
		return;
	}
	s = &inv->slots[inv->nslots];
	memset(s, 0, sizeof(*s));
	s->svc = svc;
	if (!made) /* cannot be: room was counted as now */
		snprintf(err, sizeof(err), "function %s: no state was made",
			 name);
	inst = made ? take_made(r, made, to->fn, &s->fn_ctrs, err, sizeof(err))
		    : NULL;
	if (!inst) {
		s->svc = NULL;
		say(r, SAID_FAILED, "%s; it is not served", err);
		return;
	}
	if (rr_slot_serve_new(inv, inst, err, sizeof(err))) {
		say(r, SAID_FAILED, "[function %s] enabled: failed: %s", name,
		    err);
		return;
	}
	r->renew = true;
	say(r, SAID_APPLIED,
	    "[function %s] enabled: applied, served on port %u", name,
	    svc->port);
}

/* [reqrouter]: the live keys into the running config, the rest
 * refused. */
static void reload_main(struct reload *r)
{
	const struct rr_setting *rows[MAX_ROWS];
	size_t k, n = rr_config_diff(r->cfg, r->next, rows);

	for (k = 0; k < n; k++) {
		/* reqrouterctl threads may have done it already. */
		if (is_key(rows[k], "threads") &&
		    r->next->threads == r->inv->group_threads)
			continue;
		if (rows[k]->live) {
			copy_field(rows[k], r->cfg, r->next);
			say(r, SAID_APPLIED, "[reqrouter] %s: applied",
			    rows[k]->key);
		} else {
			say(r, SAID_REFUSED,
			    "[reqrouter] %s: needs a restart%s", rows[k]->key,
			    is_key(rows[k], "threads")
				    ? " (reqrouterctl threads N changes it while serving)"
				    : "");
		}
	}
}

static bool same_group(const struct rr_sg_group *a, const struct rr_sg_group *b)
{
	return !strcmp(a->name, b->name) && a->ntargets == b->ntargets &&
	       !memcmp(a->targets, b->targets,
		       a->ntargets * sizeof(*a->targets));
}

/*
 * [group NAME]: the new groups into the running config and the XDP
 * program's targets (which has room for RR_SG_MAX_GROUPS); the workers
 * see them once renewed. A gather outstanding meanwhile finds replies
 * from a target that left refused, as missed.
 */
static void reload_groups(struct reload *r)
{
	struct rr_config *next = (struct rr_config *)r->next;
	struct rr_invoker *inv = r->inv;
	struct rr_sg_group tmp;
	uint32_t i, n = next->ngroups > r->cfg->ngroups ? next->ngroups
							: r->cfg->ngroups;
	bool changed = next->ngroups != r->cfg->ngroups;
	int ret = 0;

	for (i = 0; i < n && !changed; i++)
		changed = !same_group(&r->cfg->groups[i], &next->groups[i]);
	if (!changed)
		return;
	for (i = 0; inv->xdp.gathers && i < inv->xdp.ngroups && !ret; i++)
		ret = rr_xdp_set_targets(
			&inv->xdp, i,
			i < next->ngroups ? next->groups[i].targets : NULL,
			i < next->ngroups ? next->groups[i].ntargets : 0);
	if (ret) {
		say(r, SAID_FAILED, "[group]: failed: %s", strerror(-ret));
		return;
	}
	/* Swapped, not copied: the old ones are freed with @next. Their
	 * file names pointed into @next too: the same file. */
	for (i = 0; i < RR_SG_MAX_GROUPS; i++) {
		tmp = r->cfg->groups[i];
		r->cfg->groups[i] = next->groups[i];
		r->cfg->groups[i].file = r->cfg->config_file;
		next->groups[i] = tmp;
	}
	i = r->cfg->ngroups;
	r->cfg->ngroups = next->ngroups;
	next->ngroups = i;
	r->renew = true;
	say(r, SAID_APPLIED, "[group]: %u group%s, applied", r->cfg->ngroups,
	    r->cfg->ngroups == 1 ? "" : "s");
}

/* Once no worker has the old state: the instances' settings kept, and
 * stale cached replies retired (workers now insert only new ones). */
static void after_renewal(struct reload *r)
{
	struct rr_slot *s;
	uint32_t slot;

	for (slot = 0; slot < r->inv->nslots; slot++) {
		s = &r->inv->slots[slot];
		if (r->made_with[slot] &&
		    rr_service_keep_settings((struct rr_service *)s->svc,
					     r->made_with[slot],
					     r->cfg->config_file))
			say(r, SAID_FAILED,
			    "[function %s]: out of memory for its settings: threads N would re-initialise it with the old ones",
			    s->svc->fn->name);
		if (!r->stale[slot] || !s->cached)
			continue;
		__atomic_add_fetch(&s->cache_gen, 1, __ATOMIC_RELAXED);
		s->port_conf.cache_gen = s->cache_gen;
		if (rr_slot_sync(r->inv, s))
			say(r, SAID_FAILED,
			    "cannot renew the reply cache of '%s'",
			    s->svc->fn->name);
	}
}

/* The reload's thread: every instance it is to make, then done. */
static void *make_instances(void *arg)
{
	struct rr_reload *rl = arg;
	struct prepared *p;
	uint32_t i;

	for (i = 0; i < RR_MAX_SLOTS * 2; i++) {
		p = i < RR_MAX_SLOTS ? &rl->served[i]
				     : &rl->added[i - RR_MAX_SLOTS];
		if (!p->fn)
			continue;
		/* The TCP loop's state, for this function alone. */
		rl->active[rl->nworkers - 1] = p->to->tcp;
		rr_fn_instance_new_for(p->fn, p->port, p->to->settings,
				       p->to->nsettings, rl->nworkers,
				       rl->active, &p->ctrs, rl->next, &p->inst,
				       p->err, sizeof(p->err));
	}
	__atomic_store_n(&rl->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The reload's thread once applied: the old states, and any new one
 * that was not taken. */
static void *free_old(void *arg)
{
	struct rr_reload *rl = arg;
	uint32_t i;

	for (i = 0; i < RR_MAX_SLOTS; i++) {
		rr_fn_instance_free(rl->old[i]);
		rl->old[i] = NULL;
		rr_fn_instance_free(rl->served[i].inst);
		rl->served[i].inst = NULL;
		rr_fn_instance_free(rl->added[i].inst);
		rl->added[i].inst = NULL;
	}
	/* A zone's worth of small blocks freed: back to the system, or the
	 * process keeps two states' worth of memory from the first reload
	 * on. */
	malloc_trim(0);
	__atomic_store_n(&rl->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Everything of @rl but what was taken from it, its thread ended; the
 * modules of the old states released last. NULL-safe. */
static void reload_free(struct rr_reload *rl)
{
	uint32_t i;

	if (!rl)
		return;
	for (i = 0; i < RR_MAX_SLOTS; i++) {
		rr_fn_instance_free(rl->served[i].inst);
		rr_fn_instance_free(rl->added[i].inst);
		rr_fn_instance_free(rl->old[i]);
		if (rl->mods[i]) {
			rl->mods[i]->users--;
			rr_registry_release(rl->mods[i]);
		}
	}
	rr_config_destroy(rl->next);
	free(rl);
}

/* Signals are the main thread's: they cut its sleep short. */
static int start_thread(struct rr_reload *rl, void *(*fn)(void *))
{
	sigset_t all, was;
	int ret;

	__atomic_store_n(&rl->done, 0, __ATOMIC_RELAXED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &was);
	ret = -pthread_create(&rl->thread, NULL, fn, rl);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	if (!ret)
		pthread_setname_np(rl->thread, "rr-reload");
	return ret;
}

/*
 * The states @old[RR_MAX_SLOTS] swapped out, that no worker can use any
 * more, into @rl: freed on its thread (or here, if that cannot start),
 * their modules held until then.
 */
static void free_later(struct rr_reload *rl, struct rr_fn_instance **old)
{
	uint32_t i;

	for (i = 0; i < RR_MAX_SLOTS; i++) {
		rl->old[i] = old[i];
		rl->mods[i] = old[i] ? rr_registry_module_of(old[i]->fn) : NULL;
	}
	rl->applied = true;
	if (start_thread(rl, free_old))
		free_old(rl);
}

/*
 * What the reload's thread is to make, as applying will ask for it: for
 * each served function that @next keeps enabled and that has an init(),
 * a new instance with its settings there (reload_slot(), reinit()); for
 * each one @next enables that is not served, one, while there is room
 * (add_function()).
 */
static void plan(struct rr_invoker *inv, struct rr_reload *rl)
{
	const struct rr_config *next = rl->next;
	const struct rr_service *to;
	struct prepared *p;
	uint32_t slot, i;

	rr_active_workers(inv, rl->active);
	rl->nworkers = RR_TCP_WORKER(inv) + 1;
	rl->nthreads = inv->nthreads;
	for (slot = 0; slot < inv->nslots; slot++) {
		to = rr_config_service_of(next, inv->slots[slot].svc->fn);
		if (!to || !to->enabled || !to->fn->init ||
		    inv->slots[slot].canary_of)
			continue;
		p = &rl->served[slot];
		p->fn = to->fn;
		p->to = to;
		p->port = inv->slots[slot].svc->port;
		p->ctrs = inv->slots[slot].fn_ctrs;
	}
	for (i = 0; i < next->nservices; i++) {
		to = &next->services[i];
		if (!to->enabled || rr_slot_of(inv, to->fn->name) >= 0 ||
		    inv->nslots + rl->nadded == RR_MAX_SLOTS)
			continue;
		p = &rl->added[rl->nadded++];
		p->fn = to->fn;
		p->to = to;
		p->port = to->port;
	}
}

int rr_invoker_reload_start(struct rr_invoker *inv, struct rr_config *next)
{
	struct rr_reload *rl;
	char why[RR_ERRLEN];
	int ret;

	if (inv->reload)
		return -EBUSY;
	rl = calloc(1, sizeof(*rl));
	if (!rl)
		return -ENOMEM;
	rl->next = next;
	rl->started_ns = rr_now_ns();
	/* The cookie secrets first: the new states are made with them. */
	ret = rr_cookie_prepare(next, inv->cfg, why, sizeof(why));
	if (ret) {
		pr_warn("reload: %s\n", why);
		rl->next = NULL; /* still the caller's */
		reload_free(rl);
		return ret;
	}
	plan(inv, rl);
	ret = start_thread(rl, make_instances);
	if (ret) {
		rl->next = NULL; /* still the caller's */
		reload_free(rl);
		return ret;
	}
	inv->reload = rl;
	return 0;
}

void rr_invoker_reload_cancel(struct rr_invoker *inv)
{
	if (!inv->reload)
		return;
	/* An init() or a fini() cannot be interrupted: it ends first. */
	pthread_join(inv->reload->thread, NULL);
	reload_free(inv->reload);
	inv->reload = NULL;
}

/* The made instances of @rl, applied with the rest of its config. */
static int apply_reload(struct rr_invoker *inv, struct rr_reload *rl, char *msg,
			size_t msglen)
{
	struct reload r = { .inv = inv,
			    .rl = rl,
			    .cfg = (struct rr_config *)inv->cfg,
			    .next = rl->next };
	const struct rr_config *next = rl->next;
	uint32_t slot, nslots = inv->nslots;
	char summary[RR_ERRLEN];
	int filter = 0, at;

	if (rr_nsettings > MAX_ROWS || rr_fn_nsettings > MAX_ROWS) {
		snprintf(msg, msglen, "more settings than a reload compares");
		return 1;
	}
	r.lines = open_memstream(&r.text, &r.len);
	/* A reload is also how a quarantined function is given another
	 * chance without the control socket. */
	for (slot = 0; slot < nslots; slot++) {
		if (!inv->slots[slot].quarantined)
			continue;
		rr_unquarantine_slot(inv, &inv->slots[slot]);
		say(&r, SAID_NOTE, "function '%s' is out of quarantine",
		    inv->slots[slot].svc->fn->name);
	}
	reload_main(&r);
	reload_groups(&r);
	for (slot = 0; slot < nslots; slot++) {
		const struct rr_service *to;

		if (inv->slots[slot].canary_of) /* the function's slot's */
			continue;
		to = rr_config_service_of(next, inv->slots[slot].svc->fn);
		reload_slot(&r, slot);
		if (to &&
		    rr_cookie_adopt(inv, slot,
				    (struct rr_service *)inv->slots[slot].svc,
				    to))
			say(&r, SAID_NOTE,
			    "[function %s] a new cookie secret: the previous one stays valid for %d s",
			    to->fn->name, RR_COOKIE_PAST_S);
	}
	apply_canaries(&r);
	for (slot = 0; slot < next->nservices; slot++)
		if (next->services[slot].enabled &&
		    rr_slot_of(inv, next->services[slot].fn->name) < 0)
			add_function(&r, &next->services[slot]);
	if (!r.renew) {
		/* Nothing a worker reads changed. */
	} else if (!rr_slots_quiesce(inv, &filter)) {
		say(&r, SAID_FAILED,
		    "a worker has not come back from a function for 5 s; the old state is kept in memory");
	} else {
		free_later(rl, r.old);
		if (filter && r.syscalls)
			say(&r, SAID_FAILED,
			    "syscalls: the cells' system call filter cannot be rebuilt (see above); new cells keep the one they had");
		after_renewal(&r);
	}
	at = snprintf(summary, sizeof(summary), "%u function%s re-initialised",
		      r.reinit, r.reinit == 1 ? "" : "s");
	if (r.applied)
		at += snprintf(summary + at, sizeof(summary) - (size_t)at,
			       ", %u change%s applied", r.applied,
			       r.applied == 1 ? "" : "s");
	if (r.refused)
		at += snprintf(summary + at, sizeof(summary) - (size_t)at,
			       ", %u need%s a restart", r.refused,
			       r.refused == 1 ? "s" : "");
	if (r.failed)
		snprintf(summary + at, sizeof(summary) - (size_t)at,
			 ", %u failed", r.failed);
	if (r.refused || r.failed)
		pr_warn("reload: %s\n", summary);
	else
		pr_notice("reload: %s\n", summary);
	if (r.lines)
		fclose(r.lines);
	snprintf(msg, msglen, "%s%s", summary, r.lines && r.text ? r.text : "");
	free(r.text);
	return (int)(r.refused + r.failed);
}

int rr_invoker_reload_poll(struct rr_invoker *inv, char *msg, size_t msglen)
{
	struct rr_reload *rl = inv->reload;
	uint64_t made_ns;
	int ret;

	if (!rl)
		return -ENOENT;
	if (!__atomic_load_n(&rl->done, __ATOMIC_ACQUIRE))
		return -EINPROGRESS;
	pthread_join(rl->thread, NULL);
	if (rl->applied) {
		/* The old states are freed: the reload is over. */
		reload_free(rl);
		inv->reload = NULL;
		return -EINPROGRESS;
	}
	made_ns = rr_now_ns() - rl->started_ns;
	pr_info("reload: the functions' new state made in %.3f s, off the main thread\n",
		(double)made_ns / 1e9);
	ret = apply_reload(inv, rl, msg, msglen);
	if (!rl->applied) {
		/* Nothing to free, or not freeable. */
		reload_free(rl);
		inv->reload = NULL;
	}
	return ret;
}
