// SPDX-License-Identifier: GPL-2.0
/*
 * Quarantine (docs/RELIABILITY.md): a function's faults, crashes and
 * overruns of max_run_us, are charged to its slot by whoever saw them (the
 * cells' supervisor, the TCP loops'); quarantine_faults of them within
 * quarantine_window seconds quarantine it: its port entry drops (or
 * passes) its requests in XDP and the workers drop what was queued, until
 * reqrouterctl unquarantine, quarantine_expire, a reload or a deploy.
 */
#include <errno.h>
#include <stdio.h>

#include "clock.h"
#include "log.h"
#include "slots.h"

static void quarantine(struct rr_invoker *inv, struct rr_slot *s)
{
	const struct rr_service *svc = s->svc;
	int ret;

	char when[64] = "";

	s->quarantined = true;
	s->faults.quarantined_ns = rr_now_ns();
	ret = rr_slot_sync(inv, s);
	if (svc->quarantine_expire)
		snprintf(when, sizeof(when), " in %u s (quarantine_expire), or",
			 svc->quarantine_expire);
	pr_warn("function '%s' quarantined after %u fault%s in %u s: port %u %s its requests (it comes back%s with reqrouterctl unquarantine %s)%s\n",
		svc->fn->name, svc->quarantine_faults,
		svc->quarantine_faults == 1 ? "" : "s", svc->quarantine_window,
		svc->port,
		svc->quarantine_pass ? "passes to the kernel" : "drops", when,
		svc->fn->name, ret ? "; the XDP map could not be updated" : "");
}

void rr_unquarantine_slot(struct rr_invoker *inv, struct rr_slot *s)
{
	if (!s->quarantined)
		return;
	s->quarantined = false;
	s->faults.next = 0;
	rr_slot_sync(inv, s);
}

/* Quarantines that have lasted their quarantine_expire seconds lift. */
void rr_quarantine_expire(struct rr_invoker *inv, uint64_t now)
{
	struct rr_slot *s;
	uint32_t exp;

	for (s = inv->slots; s < inv->slots + inv->nslots; s++) {
		exp = s->svc->quarantine_expire;
		if (!s->quarantined || !exp ||
		    now - s->faults.quarantined_ns < exp * 1000000000ULL)
			continue;
		rr_unquarantine_slot(inv, s);
		pr_notice(
			"function '%s' is out of quarantine after %u s (quarantine_expire)%s\n",
			s->svc->fn->name, exp,
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
