// SPDX-License-Identifier: GPL-2.0
/*
 * Busy polling (-B): the socket options on every AF_XDP socket, the
 * interface's NAPI knobs in sysfs for preferred busy polling (restored at
 * exit), and the fallback to plain spinning when the sockets turn out to
 * have no NAPI to poll.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "invoker.h"
#include "log.h"

/*
 * Preferred busy polling (napi.rst): the socket options make a worker's
 * recvfrom()/sendto() run the queue's NAPI poll, and keep it to the worker
 * once it has; napi_defer_hard_irqs with gro_flush_timeout holds the
 * device's interrupts (on veth: the sender's softirq) back meanwhile, so
 * the receive work moves to the worker's CPU instead of interrupting it.
 */
#define RR_BUSY_POLL_USECS 20
#define RR_NAPI_DEFER_HARD_IRQS "2"
#define RR_GRO_FLUSH_TIMEOUT_NS "200000"

static int knob_set(const char *ifname, struct rr_sysfs_knob *k,
		    const char *val)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, k->attr);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, k->old, sizeof(k->old) - 1, 0);
	if (n <= 0) {
		ret = n ? -errno : -EIO;
		goto err;
	}
	k->old[n] = '\0';
	k->old[strcspn(k->old, "\n")] = '\0';
	if (pwrite(fd, val, strlen(val), 0) < 0) {
		ret = -errno;
		goto err;
	}
	k->fd = fd;
	k->changed = true;
	return 0;
err:
	close(fd);
	return ret;
}

static void knob_restore(const char *ifname, struct rr_sysfs_knob *k)
{
	if (!k->changed)
		return;
	if (pwrite(k->fd, k->old, strlen(k->old), 0) < 0)
		pr_warn("cannot put %s of %s back to %s: %s\n", k->attr, ifname,
			k->old, strerror(errno));
	close(k->fd);
	k->changed = false;
}

int rr_busy_poll_sock(int fd, bool on, uint32_t budget)
{
	int prefer = on, usecs = on ? RR_BUSY_POLL_USECS : 0;
	int nb = on ? (int)budget : 0;

	if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &prefer,
		       sizeof(prefer)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &nb, sizeof(nb)))
		return -errno;
	return 0;
}

/*
 * -B: preferred busy polling where the kernel allows it, else today's
 * plain spinning on the rings; one line says which. A refusal is not an
 * error: what was changed is undone and the workers spin as before.
 */
/* Socket @i of those made, in (queue, thread, slot) order. */
static struct rr_sock *made_sock(struct rr_invoker *inv, uint32_t i)
{
	uint32_t per_queue = inv->threads_made * inv->nslots;

	return rr_sock_at(inv, i / per_queue, i % per_queue / inv->nslots,
			  i % inv->nslots);
}

static uint32_t socks_made(const struct rr_invoker *inv)
{
	return inv->nqueues * inv->threads_made * inv->nslots;
}

void rr_busy_poll_setup(struct rr_invoker *inv)
{
	const char *ifname = inv->cfg->ifname, *what;
	uint32_t i, n = socks_made(inv);
	int ret;

	inv->napi_defer_hard_irqs.attr = "napi_defer_hard_irqs";
	inv->gro_flush_timeout.attr = "gro_flush_timeout";
	if (!inv->cfg->busy_poll)
		return;
	for (i = 0; i < n; i++) {
		ret = rr_busy_poll_sock(made_sock(inv, i)->fd, true,
					inv->cfg->batch);
		if (ret) {
			what = "SO_PREFER_BUSY_POLL, SO_BUSY_POLL or SO_BUSY_POLL_BUDGET";
			goto plain;
		}
	}
	what = inv->napi_defer_hard_irqs.attr;
	ret = knob_set(ifname, &inv->napi_defer_hard_irqs,
		       RR_NAPI_DEFER_HARD_IRQS);
	if (ret)
		goto plain;
	what = inv->gro_flush_timeout.attr;
	ret = knob_set(ifname, &inv->gro_flush_timeout,
		       RR_GRO_FLUSH_TIMEOUT_NS);
	if (ret)
		goto plain;
	inv->live->prefer_busy_poll = true;
	pr_info("busy polling: preferred (SO_PREFER_BUSY_POLL, %u us, budget %u; %s napi_defer_hard_irqs %s (was %s), gro_flush_timeout %s ns (was %s) until exit)\n",
		RR_BUSY_POLL_USECS, inv->cfg->batch, ifname,
		RR_NAPI_DEFER_HARD_IRQS, inv->napi_defer_hard_irqs.old,
		RR_GRO_FLUSH_TIMEOUT_NS, inv->gro_flush_timeout.old);
	return;
plain:
	pr_warn("busy polling: plain spinning on the rings (%s refused: %s)\n",
		what, strerror(-ret));
	knob_restore(ifname, &inv->napi_defer_hard_irqs);
	while (i--)
		rr_busy_poll_sock(made_sock(inv, i)->fd, false, 0);
}

/* The NAPI ID that the first socket of queue @q to receive anything got
 * (0: none); false while none has received anything. */
static bool queue_napi_id(struct rr_invoker *inv, uint32_t q, unsigned int *id)
{
	socklen_t len = sizeof(*id);
	struct rr_sock *s;
	uint32_t t, slot;

	for (t = 0; t < inv->nthreads; t++) {
		for (slot = 0; slot < inv->nslots; slot++) {
			s = rr_sock_at(inv, q, t, slot);
			if (!rr_stat_read(&s->stats->rx))
				continue;
			if (getsockopt(s->fd, SOL_SOCKET, SO_INCOMING_NAPI_ID,
				       id, &len))
				*id = 0;
			return true;
		}
	}
	return false;
}

/*
 * An AF_XDP socket learns its queue's NAPI ID from the first packet it
 * receives (from the driver's xdp_rxq_info). If that ID is 0, recvfrom()
 * has nothing to poll, and the deferred interrupts only hold packets back
 * until gro_flush_timeout fires: on veth under 6.18 the sockets get no ID
 * (veth seems to register its queues before their NAPI has one), and every
 * request waited 200 us. So the first socket of each queue to receive
 * anything is asked, and one without an ID undoes preferred busy polling
 * for all.
 */
void rr_invoker_check_busy_poll(struct rr_invoker *inv)
{
	uint64_t all = inv->nqueues < 64 ? (1ULL << inv->nqueues) - 1 : ~0ULL;
	uint32_t q, n = socks_made(inv);
	unsigned int id;

	if (!inv->live->prefer_busy_poll || inv->napi_checked == all)
		return;
	for (q = 0; q < inv->nqueues; q++) {
		if (inv->napi_checked & (1ULL << q) ||
		    !queue_napi_id(inv, q, &id))
			continue;
		if (!id)
			goto plain;
		inv->napi_checked |= 1ULL << q;
		pr_debug("queue %u: NAPI ID %u\n", q, id);
	}
	return;
plain:
	pr_warn("busy polling: plain spinning after all: the kernel gave queue %u's sockets no NAPI to poll; %s's napi_defer_hard_irqs and gro_flush_timeout are back to %s and %s\n",
		q, inv->cfg->ifname, inv->napi_defer_hard_irqs.old,
		inv->gro_flush_timeout.old);
	__atomic_store_n(&inv->live->prefer_busy_poll, false, __ATOMIC_RELAXED);
	knob_restore(inv->cfg->ifname, &inv->gro_flush_timeout);
	knob_restore(inv->cfg->ifname, &inv->napi_defer_hard_irqs);
	for (q = 0; q < n; q++)
		rr_busy_poll_sock(made_sock(inv, q)->fd, false, 0);
}

void rr_busy_poll_restore(struct rr_invoker *inv)
{
	knob_restore(inv->cfg->ifname, &inv->gro_flush_timeout);
	knob_restore(inv->cfg->ifname, &inv->napi_defer_hard_irqs);
}
