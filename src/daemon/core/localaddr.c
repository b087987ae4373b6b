// SPDX-License-Identifier: GPL-2.0
/*
 * The host's local routes mirrored into the XDP program's destination
 * tries and the table in front of them (rr_localaddr_*, netlink.h), kept
 * current from route notifications. Cheap and safe for the main loop: no
 * call blocks for more than about 100 ms, and the tries are changed so
 * that a request arriving mid-update never misses an address that stays.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "netlink.h"
#include "shared/guard.h"

/*
 * Large enough for any one datagram the kernel sends us: a dump packs
 * messages into at most 32 KiB (netlink_dump()), and a single link's
 * RTM_NEWLINK without stats or VF lists is a few KiB.
 */
#define NL_BUFSIZE 32768
/* A dump is produced while we read it, so this only bounds a surprise. */
#define DUMP_TIMEOUT_US 100000
/* Notification datagrams read per update: the rest wait for the next. */
#define DRAIN_MAX 1024
/* Dumps that the kernel marks inconsistent (NLM_F_DUMP_INTR) in a row. */
#define DUMP_TRIES 3

enum { V4, V6, NFAM };

/* One local route as a trie key; IPv4 uses addr[0..3], the rest is 0. */
struct local_key {
	uint32_t prefixlen;
	uint8_t addr[16];
	bool mark; /* scratch for one pass, never compared */
};

/* Sorted by address then prefix length, no repeats. */
struct local_set {
	struct local_key *keys;
	uint32_t n, cap;
};

struct rr_localaddr {
	int sock;	    /* notifications: non-blocking, the route groups */
	int map[NFAM];	    /* the tries, -1 for a family left out */
	uint32_t max[NFAM]; /* entries each trie may hold */
	struct local_set cur[NFAM]; /* exactly what the tries hold */
	int tab_fd; /* the direct-mapped table in front of them, or -1 */
	struct rr_local_ent tab[RR_LOCAL_TAB]; /* exactly what it holds */
	uint32_t seq;
	bool stale;	  /* a dump is due whatever the notifications say */
	bool warned_full; /* the "too many local routes" line is said once */
	union {
		struct nlmsghdr align;
		uint8_t bytes[NL_BUFSIZE];
	} buf;
};

static const char *const fam_name[NFAM] = { "IPv4", "IPv6" };
static const unsigned int fam_alen[NFAM] = { 4, 16 };

static int fam_index(int family)
{
	return family == AF_INET ? V4 : family == AF_INET6 ? V6 : -1;
}

static void mask_host_bits(uint8_t *addr, unsigned int alen, uint32_t prefixlen)
{
	unsigned int i;

	for (i = 0; i < alen; i++) {
		if (prefixlen >= 8 * (i + 1))
			continue;
		if (prefixlen <= 8 * i)
			addr[i] = 0;
		else
			addr[i] &= (uint8_t)(0xff << (8 - (prefixlen - 8 * i)));
	}
}

int rr_nl_parse_local_route(const struct nlmsghdr *nh, int *family,
			    uint8_t *addr, uint32_t *prefixlen)
{
	const struct rtattr *tb[RTA_MAX + 1];
	const struct rtmsg *rtm;
	uint8_t a[16] = { 0 };
	unsigned int alen;
	int ret;

	if (!nh || nh->nlmsg_len < NLMSG_HDRLEN || nh->nlmsg_len > INT_MAX)
		return -EINVAL;
	if (nh->nlmsg_type != RTM_NEWROUTE && nh->nlmsg_type != RTM_DELROUTE)
		return 0;
	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return -EINVAL;
	rtm = NLMSG_DATA(nh);
	if (rtm->rtm_family == AF_INET)
		alen = 4;
	else if (rtm->rtm_family == AF_INET6)
		alen = 16;
	else
		return 0; /* MPLS, multicast routing tables... */
	/* Cached clones (IPv6 exceptions) are not routes anyone added. */
	if (rtm->rtm_type != RTN_LOCAL || (rtm->rtm_flags & RTM_F_CLONED))
		return 0;
	if (rtm->rtm_dst_len > 8 * alen)
		return -EINVAL;
	ret = rr_nl_parse_attrs(tb, RTA_MAX, RTM_RTA(rtm),
				(int)RTM_PAYLOAD(nh));
	if (ret < 0)
		return ret;
	if (tb[RTA_DST]) {
		if (RTA_PAYLOAD(tb[RTA_DST]) != alen)
			return -EINVAL;
		memcpy(a, RTA_DATA(tb[RTA_DST]), alen);
	} else if (rtm->rtm_dst_len) {
		return -EINVAL; /* only a default route goes without */
	}
	/* The kernel keeps them clear; a key with stray bits would be a
	 * second name for the same trie node and confuse the diff. */
	mask_host_bits(a, alen, rtm->rtm_dst_len);
	*family = rtm->rtm_family;
	memcpy(addr, a, alen);
	*prefixlen = rtm->rtm_dst_len;
	return 1;
}

/* --- local routes: sets ---------------------------------------------- */

static int key_cmp(const void *a, const void *b)
{
	const struct local_key *x = a, *y = b;
	int c = memcmp(x->addr, y->addr, sizeof(x->addr));

	if (c)
		return c;
	return x->prefixlen < y->prefixlen ? -1 : x->prefixlen > y->prefixlen;
}

static int set_add(struct local_set *s, const struct local_key *k)
{
	struct local_key *keys;
	uint32_t cap;

	if (s->n == s->cap) {
		cap = s->cap ? 2 * s->cap : 64;
		keys = realloc(s->keys, cap * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		s->keys = keys;
		s->cap = cap;
	}
	s->keys[s->n++] = *k;
	return 0;
}

/* Sorts @s and drops repeats (a route in two tables is one key). */
static void set_normalize(struct local_set *s)
{
	uint32_t i, n = 0;

	if (!s->n)
		return;
	qsort(s->keys, s->n, sizeof(*s->keys), key_cmp);
	for (i = 1; i < s->n; i++)
		if (key_cmp(&s->keys[n], &s->keys[i]))
			s->keys[++n] = s->keys[i];
	s->n = n + 1;
}

static bool set_has(const struct local_set *s, const struct local_key *k)
{
	return s->n &&
	       bsearch(k, s->keys, s->n, sizeof(*s->keys), key_cmp) != NULL;
}

/* Keeps the marked keys only, in order. */
static void set_keep_marked(struct local_set *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < s->n; i++)
		if (s->keys[i].mark)
			s->keys[n++] = s->keys[i];
	s->n = n;
}

static void set_free(struct local_set *s)
{
	free(s->keys);
	memset(s, 0, sizeof(*s));
}

/* --- local routes: the tries ----------------------------------------- */

union trie_key {
	struct rr_local_v4 v4;
	struct rr_local_v6 v6;
};

static const uint32_t trie_key_size[NFAM] = {
	sizeof(struct rr_local_v4),
	sizeof(struct rr_local_v6),
};

static void to_trie_key(union trie_key *t, int f, const struct local_key *k)
{
	memset(t, 0, sizeof(*t));
	if (f == V4) {
		t->v4.prefixlen = k->prefixlen;
		memcpy(t->v4.addr, k->addr, sizeof(t->v4.addr));
	} else {
		t->v6.prefixlen = k->prefixlen;
		memcpy(t->v6.addr, k->addr, sizeof(t->v6.addr));
	}
}

static int trie_add(struct rr_localaddr *la, int f, const struct local_key *k)
{
	union trie_key t;
	uint8_t one = 1;

	to_trie_key(&t, f, k);
	return bpf_map_update_elem(la->map[f], &t, &one, BPF_ANY);
}

static int trie_del(struct rr_localaddr *la, int f, const struct local_key *k)
{
	union trie_key t;
	int ret;

	to_trie_key(&t, f, k);
	ret = bpf_map_delete_elem(la->map[f], &t);
	return ret == -ENOENT ? 0 : ret;
}

/*
 * Checks that @f's map is the trie we expect (a wrong value size would
 * have the kernel read past our one byte) and reads what it holds into
 * cur[f], so that open leaves the right entries alone like any update.
 */
static int trie_load(struct rr_localaddr *la, int f)
{
	struct bpf_map_info info;
	uint32_t info_len = sizeof(info), i;
	union trie_key key, next;
	struct local_key k;
	void *prev = NULL;
	int fd = la->map[f], ret;

	memset(&info, 0, sizeof(info));
	ret = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	if (ret < 0)
		return ret;
	if (info.type != BPF_MAP_TYPE_LPM_TRIE ||
	    info.key_size != trie_key_size[f] || info.value_size != 1 ||
	    !info.max_entries) {
		pr_warn("local %s routes: map %d is no LPM trie with %u-byte keys and 1-byte values\n",
			fam_name[f], fd, trie_key_size[f]);
		return -EINVAL;
	}
	la->max[f] = info.max_entries < RR_MAX_LOCAL ? info.max_entries
						     : RR_MAX_LOCAL;
	/* Bounded: the walk restarts from the top if a key vanishes. */
	for (i = 0; i <= info.max_entries; i++) {
		ret = bpf_map_get_next_key(fd, prev, &next);
		if (ret < 0)
			break;
		memset(&k, 0, sizeof(k));
		if (f == V4) {
			k.prefixlen = next.v4.prefixlen;
			memcpy(k.addr, next.v4.addr, sizeof(next.v4.addr));
		} else {
			k.prefixlen = next.v6.prefixlen;
			memcpy(k.addr, next.v6.addr, sizeof(next.v6.addr));
		}
		mask_host_bits(k.addr, fam_alen[f], k.prefixlen);
		ret = set_add(&la->cur[f], &k);
		if (ret < 0)
			return ret;
		key = next;
		prev = &key;
	}
	if (ret < 0 && ret != -ENOENT)
		return ret;
	set_normalize(&la->cur[f]);
	return 0;
}

/*
 * More local routes than the trie holds: keep those it holds already (no
 * churn, and the earliest win), then the rest in address order. Requests
 * to the ones left out go to the kernel, as for any foreign address.
 */
static void limit(struct rr_localaddr *la, int f, struct local_set *want)
{
	uint32_t i, kept = 0, total = want->n;

	if (want->n <= la->max[f])
		return;
	for (i = 0; i < want->n; i++) {
		want->keys[i].mark = kept < la->max[f] &&
				     set_has(&la->cur[f], &want->keys[i]);
		kept += want->keys[i].mark;
	}
	for (i = 0; i < want->n && kept < la->max[f]; i++) {
		if (!want->keys[i].mark) {
			want->keys[i].mark = true;
			kept++;
		}
	}
	set_keep_marked(want);
	if (!la->warned_full) {
		pr_warn("%u local %s routes, more than the %u the destination check holds: requests to the others are left to the kernel\n",
			total, fam_name[f], la->max[f]);
		la->warned_full = true;
	}
}

/*
 * Brings trie @f from cur[f] to @want: adds first, then deletes, so that
 * meanwhile a lookup sees the union of both, never less; the unchanged
 * are not touched. A full trie (its limit counts the entries about to
 * go) gets the adds that failed again once the deletes made room.
 * Returns the entries changed; cur[f] becomes what the trie holds.
 */
static int apply(struct rr_localaddr *la, int f, struct local_set *want)
{
	struct local_set *have = &la->cur[f];
	uint32_t i, retry = 0;
	int changed = 0, ret;

	for (i = 0; i < want->n; i++) {
		struct local_key *k = &want->keys[i];

		k->mark = true;
		if (set_has(have, k))
			continue;
		ret = trie_add(la, f, k);
		if (ret == -ENOSPC || ret == -E2BIG) {
			k->mark = false;
			retry++;
			continue;
		}
		if (ret < 0)
			goto fail;
		changed++;
	}
	for (i = 0; i < have->n; i++) {
		if (set_has(want, &have->keys[i]))
			continue;
		ret = trie_del(la, f, &have->keys[i]);
		if (ret < 0)
			goto fail;
		changed++;
	}
	for (i = 0; retry && i < want->n; i++) {
		if (want->keys[i].mark)
			continue;
		ret = trie_add(la, f, &want->keys[i]);
		if (ret == 0) {
			want->keys[i].mark = true;
			changed++;
		} else {
			la->stale = true; /* try again next update */
		}
	}
	set_keep_marked(want);
	/* want is what the trie holds now. */
	set_free(have);
	*have = *want;
	*want = (struct local_set){ 0 };
	return changed;
fail:
	pr_warn("local %s routes: cannot update map %d: %s\n", fam_name[f],
		la->map[f], strerror(-ret));
	return ret;
}

/* --- local routes: the table in front of the tries ------------------- */

/* What the table should hold for @sets: their host routes, the first to
 * claim a slot keeps it (the others are found in the tries). */
static void tab_for(const struct local_set *sets, struct rr_local_ent *t)
{
	static const uint32_t family[NFAM] = { AF_INET, AF_INET6 };
	uint32_t i, slot, w[4];
	int f;

	memset(t, 0, sizeof(*t) * RR_LOCAL_TAB);
	for (f = 0; f < NFAM; f++) {
		for (i = 0; i < sets[f].n; i++) {
			const struct local_key *k = &sets[f].keys[i];

			if (k->prefixlen != 8 * fam_alen[f])
				continue;
			memcpy(w, k->addr, sizeof(w));
			slot = rr_local_slot(
				f == V4 ? w[0] : w[0] ^ w[1] ^ w[2] ^ w[3]);
			if (t[slot].family)
				continue;
			t[slot].family = family[f];
			memcpy(t[slot].addr, k->addr, fam_alen[f]);
		}
	}
}

/*
 * Writes the slots where the table differs from @want; with @clear_only,
 * only empties those that hold something else, which must happen before
 * the tries lose an address. Best effort: a slot that cannot be written
 * is retried at the next update, and a stale one only costs a trie look.
 */
static void tab_sync(struct rr_localaddr *la, const struct rr_local_ent *want,
		     bool clear_only)
{
	static const struct rr_local_ent empty;
	const struct rr_local_ent *v;
	uint32_t slot;

	if (la->tab_fd < 0)
		return;
	for (slot = 0; slot < RR_LOCAL_TAB; slot++) {
		if (!memcmp(&la->tab[slot], &want[slot], sizeof(want[slot])))
			continue;
		if (clear_only && !la->tab[slot].family)
			continue;
		v = clear_only ? &empty : &want[slot];
		if (bpf_map_update_elem(la->tab_fd, &slot, v, BPF_ANY)) {
			la->stale = true;
			continue;
		}
		la->tab[slot] = *v;
	}
}

int rr_localaddr_set_table(struct rr_localaddr *la, int fd)
{
	struct rr_local_ent want[RR_LOCAL_TAB];

	la->tab_fd = fd;
	/* What the array holds is unknown: write every slot. */
	memset(la->tab, 0xff, sizeof(la->tab));
	tab_for(la->cur, want);
	tab_sync(la, want, false);
	return la->stale ? -EIO : 0;
}

/* --- local routes: dumps --------------------------------------------- */

/* What dump_family() gathers, message by message. */
struct dump_ctx {
	int family;
	struct local_set *got;
};

static int dump_one(const struct nlmsghdr *nh, void *ctx)
{
	struct dump_ctx *d = ctx;
	struct local_key k;
	int ret, fam;

	memset(&k, 0, sizeof(k));
	ret = rr_nl_parse_local_route(nh, &fam, k.addr, &k.prefixlen);
	/* A message we cannot read could be an address that is there:
	 * better no update than a wrong one. */
	if (ret < 0)
		return -EBADMSG;
	if (ret == 0 || fam != d->family)
		return 0;
	ret = set_add(d->got, &k);
	return ret < 0 ? ret : 0;
}

/* Dumps @family's routes into @got; sets @intr if the kernel says the
 * dump raced a change. */
static int dump_family(struct rr_localaddr *la, int fd, int family,
		       struct local_set *got, bool *intr)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rtm;
	} req;
	struct dump_ctx d = { .family = family, .got = got };

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = ++la->seq;
	req.rtm.rtm_family = family;
	/* With strict checking the kernel sends the local routes only; a
	 * kernel without it sends all, and the parser picks. */
	req.rtm.rtm_type = RTN_LOCAL;
	return rr_nl_dump(fd, &req.nh, la->buf.bytes, sizeof(la->buf.bytes),
			  dump_one, &d, intr);
}

/* Dumps the local routes again and brings the tries to them. */
static int resync(struct rr_localaddr *la)
{
	struct rr_local_ent tab[RR_LOCAL_TAB];
	struct local_set got[NFAM] = { 0 };
	static const int family[NFAM] = { AF_INET, AF_INET6 };
	int fd, f, tries, ret = 0, changed = 0;
	bool intr = true;
	const int one = 1;

	/* A socket per resync: an abandoned dump cannot leave it busy. */
	fd = rr_nl_socket(false, DUMP_TIMEOUT_US);
	if (fd < 0) {
		la->stale = true;
		return fd;
	}
	/* Lets the kernel filter on rtm_type; older kernels lack it. */
	setsockopt(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	for (tries = 0; intr && tries < DUMP_TRIES; tries++) {
		intr = false;
		for (f = 0; f < NFAM; f++) {
			got[f].n = 0;
			if (la->map[f] < 0)
				continue;
			ret = dump_family(la, fd, family[f], &got[f], &intr);
			if (ret < 0)
				goto out;
		}
	}
	if (intr) {
		/* Applying a torn dump could delete an address that is
		 * there: keep the tries as they are and retry later. */
		pr_debug("local routes: dumps keep racing changes, retrying\n");
		la->stale = true;
		goto out;
	}
	la->stale = false;
	for (f = 0; f < NFAM; f++) {
		if (la->map[f] < 0)
			continue;
		set_normalize(&got[f]);
		limit(la, f, &got[f]);
	}
	/* Addresses that go leave the table before the tries. */
	tab_for(got, tab);
	tab_sync(la, tab, true);
	for (f = 0; f < NFAM; f++) {
		if (la->map[f] < 0)
			continue;
		ret = apply(la, f, &got[f]);
		if (ret < 0)
			goto out;
		changed += ret;
	}
	/* And new ones come into it after. */
	tab_for(la->cur, tab);
	tab_sync(la, tab, false);
	if (changed)
		pr_debug(
			"local routes: %d trie entries changed, now %u IPv4, %u IPv6\n",
			changed, la->cur[V4].n, la->cur[V6].n);
	ret = changed;
out:
	close(fd);
	if (ret < 0)
		la->stale = true;
	for (f = 0; f < NFAM; f++)
		set_free(&got[f]);
	return ret;
}

int rr_localaddr_open(struct rr_localaddr **out, int fd_v4, int fd_v6)
{
	static const int groups[] = { RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE };
	const struct sockaddr_nl self = { .nl_family = AF_NETLINK };
	struct rr_localaddr *la;
	unsigned int i;
	int f, ret;

	*out = NULL;
	la = calloc(1, sizeof(*la));
	if (!la)
		return -ENOMEM;
	la->map[V4] = fd_v4;
	la->map[V6] = fd_v6;
	la->tab_fd = -1;
	la->sock = rr_nl_socket(true, 0);
	if (la->sock < 0) {
		ret = la->sock;
		goto err;
	}
	for (f = 0; f < NFAM; f++) {
		if (la->map[f] < 0)
			continue;
		ret = trie_load(la, f);
		if (ret < 0)
			goto err;
	}
	/*
	 * Bound, so that it has a port id: an unbound socket's is 0, and the
	 * kernel leaves port 0 out of the notifications it makes itself (the
	 * local route of a new address), as if we had caused them.
	 */
	if (bind(la->sock, (const struct sockaddr *)&self, sizeof(self)) < 0) {
		ret = -errno;
		goto err;
	}
	/* Listen before the first dump, so that no change falls between. */
	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		if (setsockopt(la->sock, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			       &groups[i], sizeof(groups[i])) < 0) {
			ret = -errno;
			goto err;
		}
	}
	ret = resync(la);
	if (ret < 0)
		goto err;
	pr_debug("local routes: %u IPv4, %u IPv6 in the destination tries\n",
		 la->cur[V4].n, la->cur[V6].n);
	*out = la;
	return 0;
err:
	/* The caller says it failed; a map of the wrong shape said why. */
	rr_localaddr_close(la);
	return ret;
}

int rr_localaddr_update(struct rr_localaddr *la)
{
	const struct nlmsghdr *nh;
	uint8_t addr[16];
	uint32_t plen;
	int i, n, fam;
	bool changed;

	if (!la)
		return -EINVAL;
	changed = la->stale;
	for (i = 0; i < DRAIN_MAX; i++) {
		n = rr_nl_recv(la->sock, la->buf.bytes, sizeof(la->buf.bytes),
			       MSG_DONTWAIT);
		if (n == -EAGAIN)
			break;
		if (n == -ENOBUFS || n == -EMSGSIZE) {
			/* Notifications were lost or cut: what they said is
			 * unknown, so ask again. */
			changed = true;
			continue;
		}
		if (n < 0)
			return n;
		for (nh = &la->buf.align; rr_nl_ok(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type != RTM_NEWROUTE &&
			    nh->nlmsg_type != RTM_DELROUTE)
				continue;
			/* A malformed one counts: it might have been. */
			if (rr_nl_parse_local_route(nh, &fam, addr, &plen))
				changed = true;
		}
	}
	return changed ? resync(la) : 0;
}

uint32_t rr_localaddr_count(const struct rr_localaddr *la, int family)
{
	int f = fam_index(family);

	return la && f >= 0 ? la->cur[f].n : 0;
}

void rr_localaddr_close(struct rr_localaddr *la)
{
	int f;

	if (!la)
		return;
	if (la->sock >= 0)
		close(la->sock);
	for (f = 0; f < NFAM; f++)
		set_free(&la->cur[f]);
	free(la);
}
