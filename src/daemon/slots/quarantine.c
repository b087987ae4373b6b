// SPDX-License-Identifier: GPL-2.0
/*
 * Quarantine (docs/RELIABILITY.md): a function's faults, crashes and
 * overruns of max_run_us, are charged to its slot by whoever saw them (the
 * cells' supervisor, the TCP loops'); quarantine_faults of them within
 * quarantine_window seconds quarantine it: its port entry drops (or
 * passes) its requests in XDP and the workers drop what was queued, until
 * reqrouterctl unquarantine, quarantine_expire, a reload or a deploy.
 *
 * quarantine_expire lifts it by itself (60 s by default), so a function
 * that crashed on one bad input serves again without an operator. A
 * function quarantined again within twice its last quarantine of its
 * release is still faulty: each such time it stays out twice as long, up
 * to an hour (or quarantine_expire, if longer). Lifted by an operator, a
 * reload or a deploy, it starts over.
 */
#include <errno.h>
#include <stdio.h>

#include "clock.h"
#include "log.h"
#include "slots.h"

#define QUARANTINE_MAX_S 3600

/* How long a quarantine starting @now lasts: quarantine_expire, doubled
 * for each time in a row the function came back and faulted again
 * within twice its last quarantine. */
static uint32_t quarantine_for(const struct rr_service *svc,
			       struct rr_faults *f, uint64_t now)
{
	uint32_t base = svc->quarantine_expire, cap, len, i;

	if (!base)
		return 0;
	if (f->lifted_ns &&
	    now - f->lifted_ns < 2ULL * f->quarantine_s * 1000000000ULL)
		f->backoff++;
	else
		f->backoff = 0;
	cap = base > QUARANTINE_MAX_S ? base : QUARANTINE_MAX_S;
	for (len = base, i = 0; i < f->backoff && len < cap; i++)
		len *= 2;
	return len < cap ? len : cap;
}

static void quarantine(struct rr_invoker *inv, struct rr_slot *s)
{
	const struct rr_service *svc = s->svc;
	struct rr_faults *f = &s->faults;
	char when[160] = "";
	int ret;

	s->quarantined = true;
	f->quarantined_ns = rr_now_ns();
	f->quarantine_s = quarantine_for(svc, f, f->quarantined_ns);
	ret = rr_slot_sync(inv, s);
	if (f->quarantine_s && f->backoff)
		snprintf(
			when, sizeof(when),
			" in %u s (quarantine_expire, doubled %u time%s: it faulted again soon after its last release), or",
			f->quarantine_s, f->backoff,
			f->backoff == 1 ? "" : "s");
	else if (f->quarantine_s)
		snprintf(when, sizeof(when), " in %u s (quarantine_expire), or",
			 f->quarantine_s);
	pr_warn("function '%s' quarantined after %u fault%s in %u s: port %u %s its requests (it comes back%s with reqrouterctl unquarantine %s)%s\n",
		svc->fn->name, svc->quarantine_faults,
		svc->quarantine_faults == 1 ? "" : "s", svc->quarantine_window,
		svc->port,
		svc->quarantine_pass ? "passes to the kernel" : "drops", when,
		svc->fn->name, ret ? "; the XDP map could not be updated" : "");
}

static void lift(struct rr_invoker *inv, struct rr_slot *s)
{
	s->quarantined = false;
	s->faults.next = 0;
	rr_slot_sync(inv, s);
}

void rr_unquarantine_slot(struct rr_invoker *inv, struct rr_slot *s)
{
	if (!s->quarantined)
		return;
	lift(inv, s);
	/* An operator's word, a reload or a deploy: a fresh start. */
	s->faults.backoff = 0;
	s->faults.lifted_ns = 0;
}

/* Quarantines that have lasted their time (quarantine_for()) lift. */
void rr_quarantine_expire(struct rr_invoker *inv, uint64_t now)
{
	struct rr_slot *s;
	uint32_t len;

	for (s = inv->slots; s < inv->slots + inv->nslots; s++) {
		len = s->faults.quarantine_s;
		if (!s->quarantined || !len ||
		    now - s->faults.quarantined_ns < len * 1000000000ULL)
			continue;
		lift(inv, s);
		s->faults.lifted_ns = now;
		pr_notice(
			"function '%s' is out of quarantine after %u s (quarantine_expire)%s\n",
			s->svc->fn->name, len,
			s->removed ? ", but stays removed" : "");
	}
}

/* One more fault of the function in @s; quarantines it at the limit. */
void rr_charge_fault(struct rr_invoker *inv, struct rr_slot *s, bool timeout,
		     uint64_t now)
{
	const struct rr_service *svc = s->svc;
	struct rr_faults *f = &s->faults;
	uint32_t n = svc->quarantine_faults;

	if (timeout)
		f->timeouts++;
	else
		f->crashes++;
	if (!n || s->quarantined)
		return;
	f->at_ns[f->next % n] = now;
	f->next++;
	/* The ring entry written next holds the fault n faults ago. */
	if (f->next >= n &&
	    now - f->at_ns[f->next % n] <=
		    (uint64_t)svc->quarantine_window * 1000000000ULL)
		quarantine(inv, s);
}

int rr_invoker_unquarantine(struct rr_invoker *inv, const char *name, char *msg,
			    size_t msglen)
{
	int slot = rr_slot_of(inv, name);
	struct rr_slot *s;

	if (slot < 0) {
		snprintf(msg, msglen, "no function '%s' is served", name);
		return -ENOENT;
	}
	s = &inv->slots[slot];
	if (!s->quarantined) {
		snprintf(msg, msglen, "function '%s' is not quarantined", name);
		return -EALREADY;
	}
	rr_unquarantine_slot(inv, s);
	if (s->removed)
		snprintf(
			msg, msglen,
			"function '%s' is out of quarantine, but removed: port %u stays with the kernel (reqrouterctl deploy brings it back)",
			name, s->svc->port);
	else
		snprintf(msg, msglen, "function '%s' serves again on port %u",
			 name, s->svc->port);
	pr_notice("%s\n", msg);
	return 0;
}
