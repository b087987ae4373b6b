// SPDX-License-Identifier: GPL-2.0
/*
 * What the invoker follows of the host while it serves, from the main
 * thread every RR_WATCH_MS: the interface itself (core/link.c: its MTU,
 * MAC, RX queues and carrier), the host's local addresses (the
 * destination check), a veth's peer (which tier may answer), and the
 * CPUs the workers are pinned to.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <linux/if_ether.h>
#include <sys/socket.h>

#include "clock.h"
#include "follow.h"
#include "invoker.h"
#include "lifecycle.h"
#include "link.h"
#include "log.h"
#include "shared/link.h"
#include "slots.h"

/* The longest IP packet a UMEM frame holds, untagged. */
#define SERVE_MAX (RR_FRAME_DATA_MAX - ETH_HLEN)

/* The longest request served on a link of MTU @mtu. */
uint32_t rr_serve_limit(uint32_t mtu)
{
	return mtu < SERVE_MAX ? mtu : SERVE_MAX;
}

/* Says what a UMEM frame lets reqrouter serve at @mtu. */
void rr_say_frame_limit(const char *ifname, uint32_t mtu)
{
	if (mtu > SERVE_MAX)
		pr_warn("%s: MTU %u is more than a UMEM frame holds: serving requests up to %u bytes; longer ones are dropped in XDP, counted as frame_too_big\n",
			ifname, mtu, SERVE_MAX);
}

/* Whether a served function wants to answer from XDP (its program or
 * its cache) and follows the peer (tier auto or user, not xdp). */
static bool wants_xdp_tx(const struct rr_invoker *inv, bool forced)
{
	const struct rr_slot *s;

	for (s = inv->slots; s < inv->slots + inv->nslots; s++)
		if ((s->tier_xdp || s->cached) &&
		    (s->svc->tier == RR_TIER_XDP) == forced)
			return true;
	return false;
}

/*
 * A veth hands its peer XDP_TX frames only while the peer runs NAPI, in
 * practice an XDP program of its own; without one every reply sent from
 * XDP is lost. So the in-kernel tier and the reply cache answer only
 * while the peer takes them (rr_slot_sync masks them out otherwise), and
 * the workers answer the rest of the time. Looked at during set-up and
 * then every RR_WATCH_MS. True if that changed; @why gets the peer's
 * state in a few words.
 */
bool rr_look_at_peer(struct rr_invoker *inv, char *why, size_t len)
{
	bool ok;

	inv->peer = rr_veth_peer(inv->ifindex, why, len);
	ok = inv->peer == RR_PEER_NOT_VETH || inv->peer == RR_PEER_XDP;
	if (ok == inv->xdp_tx_ok)
		return false;
	inv->xdp_tx_ok = ok;
	return true;
}

/* Says what the peer's state means for the functions served. */
void rr_say_peer(const struct rr_invoker *inv, const char *why)
{
	const char *ifname = inv->cfg->ifname;

	if (!inv->xdp_tx_ok && wants_xdp_tx(inv, false))
		pr_warn("%s is a veth and its %s: replies sent from XDP would be lost there, so the workers answer every request; the in-kernel tier and the reply cache start within a second of an XDP program (any, even one that passes everything) running on the peer\n",
			ifname, why);
	else if (inv->xdp_tx_ok && inv->ready && wants_xdp_tx(inv, false))
		pr_info("%s: the veth peer runs an XDP program now: the in-kernel tier and the reply cache answer\n",
			ifname);
	if (!inv->xdp_tx_ok && wants_xdp_tx(inv, true))
		pr_warn("%s is a veth and its %s: functions with tier = xdp answer from XDP anyway, and those replies are lost\n",
			ifname, why);
}

/* "100, 200-210" of the IDs in @ids, or "none". */
static const char *vlan_list(const uint64_t *ids, char *buf, size_t len)
{
	uint32_t id, end;
	size_t off = 0;

	buf[0] = '\0';
	for (id = 1; id < RR_VLAN_IDS && off < len; id++) {
		if (!(ids[id / 64] & (1ULL << (id % 64))))
			continue;
		for (end = id; end + 1 < RR_VLAN_IDS &&
			       ids[(end + 1) / 64] & (1ULL << ((end + 1) % 64));
		     end++)
			;
		if (end == id)
			off += (size_t)snprintf(buf + off, len - off, "%s%u",
						off ? ", " : "", id);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%u-%u",
						off ? ", " : "", id, end);
		id = end;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}

void rr_follow_vlans(struct rr_invoker *inv, bool started)
{
	const struct rr_vlans *v = &inv->cfg->vlans;
	uint64_t ids[RR_VLAN_WORDS];
	char list[256];
	uint32_t i;

	if (v->any) {
		rr_xdp_set_vlans(&inv->xdp, NULL);
		if (!started)
			pr_info("answering frames with any VLAN tag (vlans = any)\n");
		return;
	}
	for (i = 0; i < RR_VLAN_WORDS; i++)
		ids[i] = v->ids[i] | (v->no_host ? 0 : inv->link_now.vlans[i]);
	rr_xdp_set_vlans(&inv->xdp, ids);
	vlan_list(ids, list, sizeof(list));
	if (started)
		pr_notice(
			"%s: the VLAN devices on it changed: answering VLAN tags %s now\n",
			inv->link_now.name, list);
	else if (strcmp(list, "none"))
		pr_info("answering VLAN tags %s%s; other tagged frames go to the kernel\n",
			list, v->no_host ? " (vlans)" : "");
	else
		pr_info("answering untagged and priority-tagged frames only: %s has no VLAN device (vlans = any answers every tag)\n",
			inv->link_now.name);
}

/* "queue 3" or "queues 2-3". */
static const char *queue_range(uint32_t from, uint32_t to, char *buf,
			       size_t len)
{
	if (from + 1 == to)
		snprintf(buf, len, "queue %u", from);
	else
		snprintf(buf, len, "queues %u-%u", from, to - 1);
	return buf;
}

/*
 * The RX queues changed (ethtool -L) from @was. Fewer: the workers of the
 * queues gone get nothing, and nothing is lost. More than are served,
 * where every queue is to be served (no -q): requests arriving on the new
 * ones have no socket and go to the kernel, counted as pass/no_socket,
 * which answers port unreachable; only a restart makes their UMEMs and
 * workers, so health says so (inv->restart_why), and under systemd
 * reqrouter exits for the unit to start it again (main.c).
 */
static void follow_queues(struct rr_invoker *inv, uint32_t was)
{
	const char *ifname = inv->link_now.name;
	uint32_t now = inv->link_now.rx_queues, want;
	char range[32];

	inv->nrxqueues = now;
	want = inv->cfg->queues ? inv->cfg->queues : now;
	if (want > RR_MAX_QUEUES)
		want = RR_MAX_QUEUES;
	if (want > inv->nqueues) {
		snprintf(inv->restart_why, sizeof(inv->restart_why),
			 "restart needed: %s has %u RX queues now, %u served",
			 ifname, now, inv->nqueues);
		pr_notice(
			"%s: RX queues %u -> %u: requests on %s go to the kernel, counted as pass/no_socket, until a restart serves them; health fails until then\n",
			ifname, was, now,
			queue_range(inv->nqueues, want, range, sizeof(range)));
		return;
	}
	inv->restart_why[0] = '\0';
	if (now < inv->nqueues)
		pr_notice(
			"%s: RX queues %u -> %u: the workers of %s get nothing until the queues are back\n",
			ifname, was, now,
			queue_range(now, inv->nqueues, range, sizeof(range)));
	else if (now > inv->nqueues)
		pr_notice(
			"%s: RX queues %u -> %u: serving the first %u (-q %u)\n",
			ifname, was, now, inv->nqueues, inv->nqueues);
	else
		pr_notice("%s: RX queues %u -> %u: every queue is served\n",
			  ifname, was, now);
}

/*
 * What the kernel said of the interface since the last look, followed:
 * the MTU into the workers' reply sizing and the in-kernel tier's, the
 * MAC into the program's destination check (the replies' source is the
 * request's destination, so it follows by itself), the RX queues, the
 * carrier. A link that is gone is main.c's, which stops.
 */
static void follow_link(struct rr_invoker *inv)
{
	struct rr_link_state was = inv->link_now, *now = &inv->link_now;
	char a[18], b[18];
	int ret;

	ret = rr_link_update(inv->link, now);
	if (ret < 0)
		pr_debug("netlink: cannot read %s: %s\n", was.name,
			 strerror(-ret));
	if (ret <= 0 || now->gone)
		return;
	if (strcmp(was.name, now->name)) {
		inv->link_changes[RR_LINK_NAME]++;
		pr_notice("%s is called %s now\n", was.name, now->name);
	}
	if (was.mtu != now->mtu || memcmp(was.mac, now->mac, 6)) {
		__atomic_store_n(&inv->live->mtu, now->mtu, __ATOMIC_RELAXED);
		rr_xdp_set_link(&inv->xdp, now->mac, now->mtu);
	}
	if (was.mtu != now->mtu) {
		inv->link_changes[RR_LINK_MTU]++;
		pr_notice(
			"%s: MTU %u -> %u: replies are sized for %u now, requests served up to %u bytes\n",
			now->name, was.mtu, now->mtu, now->mtu,
			rr_serve_limit(now->mtu));
		rr_say_frame_limit(now->name, now->mtu);
	}
	if (memcmp(was.mac, now->mac, 6)) {
		inv->link_changes[RR_LINK_MAC]++;
		pr_notice(
			"%s: MAC address %s -> %s: the XDP program takes requests sent to %s now\n",
			now->name, rr_link_mac_str(was.mac, a),
			rr_link_mac_str(now->mac, b), b);
	}
	if (was.rx_queues != now->rx_queues && now->rx_queues) {
		inv->link_changes[RR_LINK_RX_QUEUES]++;
		follow_queues(inv, was.rx_queues);
	}
	if (memcmp(was.vlans, now->vlans, sizeof(was.vlans)) &&
	    !inv->cfg->vlans.no_host && !inv->cfg->vlans.any) {
		inv->link_changes[RR_LINK_VLANS]++;
		rr_follow_vlans(inv, true);
	}
	if (was.up != now->up) {
		inv->link_changes[now->up ? RR_LINK_UP : RR_LINK_DOWN]++;
		if (now->up)
			pr_notice("%s: link up: serving again\n", now->name);
		else
			pr_notice(
				"%s: link down: nothing arrives until it is up again; not ready meanwhile\n",
				now->name);
	}
}

/* The CPUs online now (/sys/devices/system/cpu/online); false if they
 * cannot be read. */
static bool cpus_online(cpu_set_t *set)
{
	int cpus[RR_MAX_CPUS];
	char buf[256], err[RR_ERRLEN];
	uint32_t n, i;
	FILE *f;
	bool ok;

	f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (!ok || rr_parse_cpus(buf, cpus, &n, err, sizeof(err)))
		return false;
	CPU_ZERO(set);
	for (i = 0; i < n; i++)
		if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE)
			CPU_SET(cpus[i], set);
	return true;
}

/*
 * A CPU a worker is pinned to that goes offline: the kernel moves the
 * worker to the others and forgets the pinning. Said once; when the CPU
 * is back, the worker is pinned to it again.
 */
static void follow_cpus(struct rr_invoker *inv)
{
	bool cells = inv->cfg->isolation == RR_ISOLATION_CELL;
	cpu_set_t online, now, want;
	struct rr_worker *w;
	pid_t task;
	uint32_t i;

	if (!cpus_online(&online))
		return;
	for (i = 0; i < RR_NWORKERS(inv); i++) {
		w = &inv->workers[i];
		task = cells ? w->pid
			     : __atomic_load_n(&w->sys_tid, __ATOMIC_ACQUIRE);
		if (!__atomic_load_n(&w->started, __ATOMIC_ACQUIRE) ||
		    task <= 0 || w->cpu < 0 || w->cpu >= CPU_SETSIZE ||
		    sched_getaffinity(task, sizeof(now), &now))
			continue;
		CPU_ZERO(&want);
		CPU_SET(w->cpu, &want);
		if (CPU_EQUAL(&now, &want))
			continue;
		if (!CPU_ISSET(w->cpu, &online)) {
			if (!w->cpu_lost)
				pr_notice(
					"CPU %d is offline: the kernel moved worker %u/%u off it; it is pinned there again when the CPU is back\n",
					w->cpu, w->queue, w->thread);
			w->cpu_lost = true;
			continue;
		}
		if (sched_setaffinity(task, sizeof(want), &want)) {
			if (w->cpu_lost)
				pr_warn("CPU %d is back, but worker %u/%u cannot be pinned to it again: %s\n",
					w->cpu, w->queue, w->thread,
					strerror(errno));
			w->cpu_lost = false;
			continue;
		}
		/* Not lost, only not pinned yet (a cell a reload made):
		 * pinned without a word. */
		if (w->cpu_lost)
			pr_notice(
				"CPU %d is back: worker %u/%u is pinned to it again\n",
				w->cpu, w->queue, w->thread);
		w->cpu_lost = false;
	}
}

void rr_invoker_watch(struct rr_invoker *inv)
{
	uint64_t now = rr_now_ns() / 1000000;
	char why[128];
	uint32_t slot;
	int ret;

	if (now < inv->next_watch_ms)
		return;
	inv->next_watch_ms = now + RR_WATCH_MS;
	follow_link(inv);
	/* A CPU going away is rare: a look a second. */
	if (!(++inv->watch_rounds % (1000 / RR_WATCH_MS)))
		follow_cpus(inv);
	if (inv->local) {
		ret = rr_localaddr_update(inv->local);
		if (ret > 0)
			pr_info("the host's addresses changed: answering for %u IPv4 and %u IPv6 local routes\n",
				rr_localaddr_count(inv->local, AF_INET),
				rr_localaddr_count(inv->local, AF_INET6));
		else if (ret < 0)
			pr_debug("netlink: cannot read the local routes: %s\n",
				 strerror(-ret));
	}
	/* A device does not become a veth: only a veth's peer is followed. */
	if (inv->peer == RR_PEER_NOT_VETH ||
	    !rr_look_at_peer(inv, why, sizeof(why)))
		return;
	rr_say_peer(inv, why);
	for (slot = 0; slot < inv->nslots; slot++)
		rr_slot_sync(inv, &inv->slots[slot]);
}
