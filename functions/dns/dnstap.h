/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dnstap for the dns function: AUTH_QUERY and AUTH_RESPONSE messages
 * (dnstap.proto) over Frame Streams to a file or a unix socket.
 *
 * The handler may run in a cell, a process of its own under a system call
 * filter, where no thread of fstrm's could write; so it only copies what
 * it saw into a ring of its own in memory every worker shares
 * (rr_fn_shared_alloc()): no system call, no lock, no allocation, and a
 * full ring drops and counts. A thread of the instance in reqrouter's main
 * process drains the rings, encodes each record with protobuf-c and hands
 * it to fstrm's I/O thread (fstrm_iothr), whose bounded queue drops and
 * counts too. The output (one per path, kept across reloads) is opened
 * on the first message.
 */
#ifndef DNSTAP_H
#define DNSTAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <reqrouter/rr_function.h>

/* The settings, before dnstap_new(). */
struct dnstap_conf {
	char *path;	   /* NULL: dnstap off */
	int kind;	   /* DNSTAP_AUTO, DNSTAP_FILE, DNSTAP_UNIX */
	uint32_t sample;   /* one query in sample */
	char *identity;	   /* NULL: the host's name; "": none */
	char *version;	   /* NULL: "reqrouter VERSION"; "": none */
	bool said_setting; /* a dnstap_* key without dnstap */
};

#define DNSTAP_AUTO 0
#define DNSTAP_FILE 1
#define DNSTAP_UNIX 2

struct dnstap;
struct dnstap_ring;

/* A dnstap message's times: the query's arrival, the reply's. */
struct dnstap_times {
	struct timespec query;
};

/*
 * Takes setting @s into @c if it is dnstap's (dnstap, dnstap_sample,
 * dnstap_identity, dnstap_version): 1; 0 if it is not; -EINVAL with the
 * reason said.
 */
int dnstap_setting(const struct rr_fn_config *cfg,
		   const struct rr_fn_setting *s, struct dnstap_conf *c);
void dnstap_conf_free(struct dnstap_conf *c);

/*
 * From init(): dnstap as @c says (NULL in *@out when it is off), with a
 * ring for each of cfg->workers workers and the thread that drains them.
 * An output that cannot be written now is said in one line, not refused:
 * the function answers, and the messages are counted as dropped.
 */
int dnstap_new(const struct rr_fn_config *cfg, const struct dnstap_conf *c,
	       struct dnstap **out);
/* Drains what is left, stops the thread, lets go of the output. */
void dnstap_free(struct dnstap *dt);
/* From init_worker(): the next worker's ring. */
struct dnstap_ring *dnstap_ring_take(struct dnstap *dt);

/*
 * From the handler, before it writes its reply over the query: whether
 * this query is one of the sampled, and if so its AUTH_QUERY put in
 * @r (NULL: none), its arrival in @t.
 */
bool dnstap_query(const struct dnstap *dt, struct dnstap_ring *r,
		  const struct rr_request *req, const uint8_t *msg, size_t len,
		  struct dnstap_times *t);
/* ... and after it, the AUTH_RESPONSE of a sampled query. */
void dnstap_response(const struct dnstap *dt, struct dnstap_ring *r,
		     const struct rr_request *req, const uint8_t *msg,
		     size_t len, const struct dnstap_times *t);

/* The tap (rr_fn_tap(), set by dnstap_new()): a query the in-kernel tier
 * answered (the reply cache), one in dnstap_sample as the workers sample
 * theirs, and its answer; on reqrouter's main thread, into a ring of its
 * own. Their messages say so in the Dnstap extra field. */
void dnstap_tap(void *arg, const struct rr_tap_answer *a);

#endif /* DNSTAP_H */
