// SPDX-License-Identifier: GPL-2.0
/*
 * The instance's answers for a person (see show.h). Each answer is one
 * JSON object, read with json-c; what it lacks is shown as nothing or 0,
 * never guessed at. --json is the interface for programs; these lines
 * are for reading.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "show.h"
#include "util.h"

/* How much of an answer that is no JSON a message quotes. */
#define QUOTED 40

struct json_object *ctl_parse(const char *from, const char *text)
{
	struct json_tokener *tok = json_tokener_new();
	size_t len = strlen(text), end = 0, i;
	const char *why = NULL;
	struct json_object *o;
	char quoted[QUOTED + 1];

	if (!tok) {
		pr_warn("out of memory\n");
		return NULL;
	}
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o)
		why = json_tokener_get_error(tok) == json_tokener_continue
			      ? "cut short"
			      : json_tokener_error_desc(
					json_tokener_get_error(tok));
	else
		end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (o && !json_object_is_type(o, json_type_object))
		why = "not an object";
	else if (o && text[end + strspn(text + end, " \t\r\n")])
		why = "more after the object";
	if (!why)
		return o;
	json_object_put(o);
	/* One line, whatever came. */
	for (i = 0; i < QUOTED && text[i]; i++)
		quoted[i] = text[i] >= ' ' && text[i] < 0x7f ? text[i] : '?';
	quoted[i] = '\0';
	pr_warn("%s answered something that is not the instance's JSON (%s): '%s%s'\n",
		from, why, quoted, text[i] ? "..." : "");
	return NULL;
}

/* Member @key of object @o, or NULL (also if @o is NULL or no object). */
static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

/* A counter member; 0 if it is not there or no number. */
static uint64_t u64(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return json_object_is_type(v, json_type_int) ? json_object_get_uint64(v)
						     : 0;
}

/* A number member, as a double; 0 if it is not there or no number. */
static double num(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return json_object_is_type(v, json_type_int) ||
			       json_object_is_type(v, json_type_double)
		       ? json_object_get_double(v)
		       : 0;
}

/* A string member's text, or @none. */
static const char *str(struct json_object *o, const char *key, const char *none)
{
	struct json_object *v = get(o, key);

	return json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : none;
}

/* Whether member @key is true. */
static bool truth(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return json_object_is_type(v, json_type_boolean) &&
	       json_object_get_boolean(v);
}

/* A value as text: a string's contents, anything else as JSON. */
static const char *text(struct json_object *v)
{
	if (json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

bool ctl_done(const struct rr_ctlcmd *c, struct json_object *answer)
{
	return truth(answer, "ok") &&
	       (rr_ctlcmd_id(c) != RR_CTL_HEALTH || truth(answer, "ready"));
}

/*
 * " LABEL N" for counter @key of @o, and its rate " (R/s)" against the
 * same counter in @was, @dt seconds earlier, when there is one (not
 * after the counter went back, as a restarted instance's do).
 */
static void count(const char *label, struct json_object *o,
		  struct json_object *was, const char *key, double dt)
{
	uint64_t n = u64(o, key), then = u64(was, key);

	printf(" %s %" PRIu64, label, n);
	if (dt > 0 && get(was, key) && then <= n)
		printf(" (%.1f/s)", (double)(n - then) / dt);
}

/* Under a function's row, while a canary runs beside it: both versions
 * and their shares of the sources. */
static void show_canary(struct json_object *f)
{
	struct json_object *c = get(f, "canary");

	if (!c)
		return;
	printf("  %-14s %5s%%  %s %s\n", "running", text(get(f, "share")),
	       str(f, "version", "?"), str(f, "module", "built in"));
	printf("  %-14s %5s%%  %s %s%s\n", "canary", text(get(c, "share")),
	       str(c, "version", "?"), str(c, "module", "built in"),
	       truth(c, "quarantined") ? " (quarantined)" : "");
}

static void print_status(struct json_object *a)
{
	static const char *const keys[] = {
		"interface", "ready",		"why",	       "xdp_mode",
		"zerocopy",  "queues",		"threads",     "cell_groups",
		"busy_poll", "isolation",	"tx_csum",     "uptime_s",
		"reloading", "max_stall_s",	"pid",	       "version",
		"veth_peer", "worker_priority", "coalesce_us", "mtu",
		"mac",	     "rx_queues",	"link_up",     "restart_needed",
		NULL
	};
	struct json_object *fns = get(a, "functions"), *f;
	char cells[12], dl[24];
	size_t i, n;

	for (i = 0; keys[i]; i++)
		if (get(a, keys[i]))
			printf("%-10s %s\n", keys[i], text(get(a, keys[i])));
	printf("%-16s %-6s %-5s %-5s %-8s %-7s %-9s %-5s %-9s %s\n", "function",
	       "port", "tier", "cells", "deadline", "cached", "in_kernel",
	       "pure", "stateful", "from");
	n = json_object_is_type(fns, json_type_array)
		    ? json_object_array_length(fns)
		    : 0;
	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(fns, i);
		/* in_kernel: in XDP now, not while a veth's peer would lose
		 * the replies (veth_peer above). */
		/* cells: its cell group, 0 the shared one; deadline: its
		 * deadline_us, or "-". */
		snprintf(cells, sizeof(cells), "%" PRIu64,
			 u64(f, "cell_group"));
		if (u64(f, "deadline_us"))
			snprintf(dl, sizeof(dl), "%" PRIu64 "us",
				 u64(f, "deadline_us"));
		else
			snprintf(dl, sizeof(dl), "-");
		printf("%-16s %-6" PRIu64
		       " %-5s %-5s %-8s %-7s %-9s %-5s %-9s %s%s%s\n",
		       str(f, "name", "?"), u64(f, "port"), str(f, "tier", "?"),
		       cells, dl, truth(f, "cached") ? "true" : "false",
		       get(f, "in_kernel") ? text(get(f, "in_kernel")) : "-",
		       truth(f, "pure") ? "true" : "false",
		       truth(f, "stateful") ? "true" : "false",
		       str(f, "module", "built in"),
		       truth(f, "removed") ? " (removed)" : "",
		       truth(f, "quarantined") ? " (quarantined)" : "");
		show_canary(f);
	}
}

/* "  WHAT: name N, name N" for the non-zero numbers of object @o (with
 * their rates against @was), or "none"; nothing if there is no @o. */
static void print_nonzero(const char *what, struct json_object *o,
			  struct json_object *was, double dt)
{
	int shown = 0;

	if (!json_object_is_type(o, json_type_object))
		return;
	printf("  %s:", what);
	json_object_object_foreach(o, k, v)
	{
		if (!json_object_is_type(v, json_type_int) ||
		    !json_object_get_uint64(v))
			continue;
		if (shown++)
			putchar(',');
		count(k, o, was, k, dt);
	}
	printf("%s\n", shown ? "" : " none");
}

/* The element of array @fns whose "name" is @name and "version"
 * @version, or NULL. */
static struct json_object *named(struct json_object *fns, const char *name,
				 const char *version)
{
	struct json_object *f;
	size_t i, n;

	if (!json_object_is_type(fns, json_type_array))
		return NULL;
	n = json_object_array_length(fns);
	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(fns, i);
		/* A canary is a second entry of the name (its version's). */
		if (!strcmp(str(f, "name", ""), name) &&
		    !strcmp(str(f, "version", ""), version))
			return f;
	}
	return NULL;
}

/* @title, then the counters @keys (NULL-ended) of @o, @sep between
 * them, each with its rate against @was. */
static void counts(const char *title, struct json_object *o,
		   struct json_object *was, const char *const *keys,
		   const char *sep, double dt)
{
	size_t i;

	fputs(title, stdout);
	for (i = 0; keys[i]; i++) {
		if (i)
			fputs(sep, stdout);
		count(keys[i], o, was, keys[i], dt);
	}
}

/* A quantile of @h in us as the daemon gives it: a bucket's upper bound,
 * or null above the last (1 s). */
static void quantile(struct json_object *h, const char *key)
{
	struct json_object *v = get(h, key);

	if (!v || json_object_is_type(v, json_type_null))
		fputs(" over 1 s", stdout);
	else
		printf(" %g us", num(h, key));
}

/* "  user tier: replies p50 .. p99 ..; waited p50 .. p99 ..", from the
 * histograms' quantiles (bucket bounds: at most that), if any counted. */
static void print_times(struct json_object *f)
{
	struct json_object *lat = get(f, "latency_us"),
			   *qd = get(f, "queue_delay_us");

	if (!u64(lat, "count") && !u64(qd, "count"))
		return;
	fputs("  time in user space: reply within p50", stdout);
	quantile(lat, "p50");
	fputs(", p99", stdout);
	quantile(lat, "p99");
	fputs("; waited for a worker p50", stdout);
	quantile(qd, "p50");
	fputs(", p99", stdout);
	quantile(qd, "p99");
	putchar('\n');
}

/* One function: its totals, drops by reason, faults, own counters; @w
 * the same function in the earlier answer, or NULL. */
static void print_function(struct json_object *f, struct json_object *w,
			   double dt)
{
	static const char *const rxtx[] = { "rx", "tx", NULL };
	static const char *const xdp_keys[] = { "rx", "tx", "punted", NULL };
	static const char *const cache_keys[] = { "hits", "misses", NULL };
	static const char *const rl_keys[] = { "limited",   "slipped",
					       "evicted",   "would_limit",
					       "validated", "validated_limited",
					       NULL };
	static const char *const cookie_keys[] = { "valid", "bypass", NULL };
	static const char *const fault_keys[] = { "crash", "timeout", NULL };
	static const char *const deadline_keys[] = { "expired_user",
						     "expired_xdp", NULL };
	struct json_object *user = get(f, "user"), *xdp = get(f, "xdp");
	struct json_object *tcp = get(f, "tcp"), *rl = get(f, "rate_limit");
	struct json_object *v;

	v = get(f, "version");
	/* A canary's entry says so; the running version's line is as it
	 * always was. */
	printf("%s%s%s (port %" PRIu64 "):", str(f, "name", "?"),
	       v && strstr(text(v), "+canary") ? " " : "",
	       v && strstr(text(v), "+canary") ? text(v) : "", u64(f, "port"));
	counts(" user space", user, get(w, "user"), rxtx, "", dt);
	if (xdp)
		counts(", in XDP", xdp, get(w, "xdp"), xdp_keys, "", dt);
	if (get(f, "cache"))
		counts(", cache", get(f, "cache"), get(w, "cache"), cache_keys,
		       "", dt);
	if (tcp)
		counts(", TCP", tcp, get(w, "tcp"), rxtx, "", dt);
	printf("%s\n", truth(f, "quarantined") ? " (quarantined)" : "");
	print_nonzero("dropped in user space", get(user, "dropped"),
		      get(get(w, "user"), "dropped"), dt);
	print_nonzero("dropped in XDP", get(xdp, "dropped"),
		      get(get(w, "xdp"), "dropped"), dt);
	print_nonzero("TCP", get(tcp, "events"), get(get(w, "tcp"), "events"),
		      dt);
	if (rl) {
		printf("  rate limit %" PRIu64 " replies/s per prefix%s:",
		       u64(rl, "limit"),
		       strcmp(str(rl, "mode", "drop"), "log")
			       ? ""
			       : " (log: a dry run)");
		counts("", rl, get(w, "rate_limit"), rl_keys, ",", dt);
		putchar('\n');
	}
	v = get(f, "cookies");
	if (v) {
		counts("  DNS cookies in XDP:", v, get(w, "cookies"),
		       cookie_keys, ",", dt);
		putchar('\n');
	}
	print_times(f);
	v = get(f, "deadline");
	if (v) {
		printf("  deadline %" PRIu64 " us:", u64(v, "us"));
		counts("", v, get(w, "deadline"), deadline_keys, ",", dt);
		putchar('\n');
	}
	v = get(f, "faults");
	if (v) {
		counts("  faults:", v, get(w, "faults"), fault_keys, ",", dt);
		putchar('\n');
	}
	/* The function's own, if it has any. */
	v = get(f, "counters");
	if (json_object_is_type(v, json_type_object) &&
	    json_object_object_length(v))
		print_nonzero("counters", v, get(w, "counters"), dt);
}

/* The XDP program's verdicts ("verdict/reason": n), the non-zero ones,
 * one line per verdict, in the program's order (the answer's). */
static void print_verdicts(struct json_object *xdp, struct json_object *was,
			   double dt)
{
	char seen[16][24];
	unsigned int nseen = 0, i, lines = 0;
	size_t len;
	int shown;

	printf("XDP program, every queue of the interface:\n");
	json_object_object_foreach(xdp, k, v)
	{
		(void)v;
		len = strcspn(k, "/");
		for (i = 0; i < nseen; i++)
			if (strlen(seen[i]) == len && !strncmp(seen[i], k, len))
				break;
		if (i < nseen || nseen == ARRAY_SIZE(seen) ||
		    len >= sizeof(seen[0]))
			continue;
		snprintf(seen[nseen], sizeof(seen[0]), "%.*s", (int)len, k);
		shown = 0;
		json_object_object_foreach(xdp, r, n)
		{
			if (!json_object_is_type(n, json_type_int) ||
			    !json_object_get_uint64(n) || r[len] != '/' ||
			    strncmp(r, seen[nseen], len))
				continue;
			if (!shown++)
				printf("  %s:", seen[nseen]);
			else
				putchar(',');
			/* The reason, counted under its whole key. */
			count(r + len + 1, xdp, was, r, dt);
		}
		nseen++;
		if (shown) {
			putchar('\n');
			lines++;
		}
	}
	if (!lines)
		printf("  nothing yet\n");
}

/* Where each queue's UMEM frames are (a count now, no rate). */
static void print_umem(struct json_object *queues)
{
	static const char *const states[] = { "fill", "rx",	    "worker",
					      "tx",   "completion", "kernel" };
	struct json_object *q;
	size_t i, j, n;

	printf("UMEM frames per queue:\n  %5s", "queue");
	for (i = 0; i < ARRAY_SIZE(states); i++)
		printf(" %10s", states[i]);
	putchar('\n');
	n = json_object_is_type(queues, json_type_array)
		    ? json_object_array_length(queues)
		    : 0;
	for (j = 0; j < n; j++) {
		q = json_object_array_get_idx(queues, j);
		printf("  %5" PRIu64, u64(q, "queue"));
		for (i = 0; i < ARRAY_SIZE(states); i++)
			printf(" %10" PRIu64, u64(q, states[i]));
		putchar('\n');
	}
}

/*
 * What docs/OPERATIONS.md and the alert rules send an operator here for: per
 * function its totals, its drops by reason in each tier, its faults and
 * quarantine, its own counters; the XDP program's verdicts; where the
 * UMEM frames are. With an earlier answer @was, each counter's rate
 * since then beside it.
 */
static void print_stats(struct json_object *a, struct json_object *was,
			double dt)
{
	struct json_object *fns = get(a, "functions"), *f;
	size_t i, n;

	if (was && dt > 0)
		printf("(N/s): each counter's rate over the last %.1f s\n", dt);
	n = json_object_is_type(fns, json_type_array)
		    ? json_object_array_length(fns)
		    : 0;
	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(fns, i);
		print_function(f,
			       named(get(was, "functions"), str(f, "name", ""),
				     str(f, "version", "")),
			       dt);
	}
	if (json_object_is_type(get(a, "xdp"), json_type_object))
		print_verdicts(get(a, "xdp"), get(was, "xdp"), dt);
	if (get(a, "umem_frames"))
		print_umem(get(a, "umem_frames"));
}

/* The legend of top's "+-" column, printed once under the tables. */
#define TOP_ERROR_NOTE                                                         \
	"+- (95%%): how far a row's requests/s may be off, about 95%% of the " \
	"time: the sketch's bound plus the sampling's own noise.\n"

/* One kind of a function's heavy hitters: "sources" (whose entries name
 * a "source") or "prefixes" ("prefix"); "rate-limited" after one whose
 * prefix the function's rate limit refuses now, "would be rate-limited"
 * where it would, were it not a dry run (rate_limit_mode = log). */
static void print_top_kind(struct json_object *fn, const char *member,
			   const char *entry)
{
	struct json_object *top = get(get(fn, member), "top"), *e;
	size_t i, n;

	if (!get(fn, member))
		return;
	printf("  %-40s %11s %9s %7s\n", entry, "requests/s", "+- (95%)",
	       "share");
	n = json_object_is_type(top, json_type_array)
		    ? json_object_array_length(top)
		    : 0;
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(top, i);
		printf("  %-40s %11.0f %9.0f %6.1f%%%s\n", str(e, entry, ""),
		       num(e, "requests_per_s"), num(e, "error"),
		       100 * num(e, "share"),
		       truth(e, "limited") ? "  rate-limited"
		       : truth(e, "would_limit")
			       ? "  would be rate-limited (log)"
			       : "");
	}
	if (!n)
		printf("  none above the sketch's bound\n");
}

/*
 * top: per function, its requests/s as the sketch estimates them, the
 * sampling rate, then its top sources and prefixes. Two error figures,
 * each said for what it is (src/daemon/features/hh.c): the sketch's
 * bound per kind (error_bound: what other callers sharing a key's
 * counters may add to any estimate; only keys above it are listed), and
 * per row the whole "+-" (error: that bound plus the sampling's noise).
 */
static void print_top(struct json_object *a)
{
	struct json_object *fns = get(a, "functions"), *f;
	size_t i, n;
	bool any = false;

	n = json_object_is_type(fns, json_type_array)
		    ? json_object_array_length(fns)
		    : 0;
	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(fns, i);
		if (!truth(f, "heavy_hitters")) {
			printf("%s (port %" PRIu64 "): heavy hitters off\n\n",
			       str(f, "name", "?"), u64(f, "port"));
			continue;
		}
		printf("%s (port %" PRIu64 "): %.0f requests/s, 1 in %" PRIu64
		       " sampled",
		       str(f, "name", "?"), u64(f, "port"),
		       num(f, "requests_per_s"), u64(f, "sample"));
		if (u64(f, "candidates_lost"))
			printf(", %" PRIu64 " sampled sources unread",
			       u64(f, "candidates_lost"));
		printf("\n  the sketch's bound (what callers sharing a key's counters may add; only those above it are listed): +-%.0f/s per source, +-%.0f/s per prefix\n",
		       num(get(f, "sources"), "error_bound"),
		       num(get(f, "prefixes"), "error_bound"));
		print_top_kind(f, "sources", "source");
		print_top_kind(f, "prefixes", "prefix");
		putchar('\n');
		any = true;
	}
	if (any)
		printf(TOP_ERROR_NOTE);
}

/* A reload: each line of what it applied and what needs a restart or
 * failed, then its summary, on stderr if not all was applied. */
static void print_reload(struct json_object *a, bool ok)
{
	struct json_object *lines = get(a, "lines"), *l;
	const char *msg = str(a, "message", NULL);
	size_t i, n;

	n = json_object_is_type(lines, json_type_array)
		    ? json_object_array_length(lines)
		    : 0;
	for (i = 0; i < n; i++) {
		l = json_object_array_get_idx(lines, i);
		if (json_object_is_type(l, json_type_string))
			printf("%s\n", json_object_get_string(l));
	}
	if (!msg)
		msg = text(a);
	if (ok) {
		printf("%s\n", msg);
		return;
	}
	fflush(stdout); /* the lines first, wherever both streams go */
	pr_warn("reload: %s\n", msg);
}

bool ctl_show(const struct rr_ctlcmd *c, struct json_object *a,
	      struct json_object *was, double dt)
{
	bool ok = truth(a, "ok");

	if (rr_ctlcmd_id(c) == RR_CTL_RELOAD) {
		print_reload(a, ok);
	} else if (!ok) {
		pr_warn("%s: %s\n", c->name, str(a, "message", text(a)));
	} else if (rr_ctlcmd_id(c) == RR_CTL_STATUS) {
		print_status(a);
	} else if (rr_ctlcmd_id(c) == RR_CTL_STATS) {
		print_stats(a, was, dt);
	} else if (rr_ctlcmd_id(c) == RR_CTL_TOP) {
		print_top(a);
	} else if (rr_ctlcmd_id(c) == RR_CTL_HEALTH) {
		if (truth(a, "ready"))
			printf("ready\n");
		else
			printf("not ready: %s\n",
			       str(a, "why", "no reason given"));
	} else if (str(a, "message", NULL)) {
		printf("%s\n", str(a, "message", ""));
	}
	return ctl_done(c, a);
}
