/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sgbase: the scatter-gather baselines of issue 26 (a plain epoll loop and
 * io_uring, as the sgbpf paper measured them), the client that drives any
 * coordinator the same way, and a reference target.
 *
 * The engines share everything but their I/O: the gather table (gather.c)
 * matches replies to gathers, reduces them and writes the reply in the
 * text format reqrouter's own fan-out function answers with; the engines
 * (epoll.c, uring.c) only move datagrams.
 */
#ifndef SGBASE_H
#define SGBASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <reqrouter/rr_gather.h>

#define SG_PROG "sgbase"
/* A datagram either way: the header and a body of up to an MTU or so. */
#define SG_BUF_SIZE 2048
#define SG_HDR_LEN ((uint32_t)sizeof(struct rr_sg_hdr))
#define SG_MAX_PAYLOAD (SG_BUF_SIZE - SG_HDR_LEN)
/* A reply to the client is one datagram: IPv4's largest UDP payload. */
#define SG_MAX_REPLY 65507
/* Room the status line needs: "VALUE A/T missed " and 32 indexes, ",...". */
#define SG_LINE_ROOM 320
#define SG_MISSED_LISTED 32
#define SG_WORDS (RR_SG_MAX_TARGETS / 64)

/* The targets of a coordinator: one family, the target socket's. */
struct sg_targets {
	struct sockaddr_storage *sa; /* n entries */
	socklen_t salen;
	int family; /* AF_INET if every target is IPv4, else AF_INET6 */
	uint32_t n;
};

/*
 * Parses a targets SPEC, as reqrouter's `[group NAME] targets =` takes it:
 * comma-separated ADDR:PORT, IPv4 ranges FIRST-LAST:PORT (both ends
 * included) and [IPv6]:PORT, at most @max targets in all. IPv4 entries are
 * written as AF_INET and IPv6 as AF_INET6 into @out, in order. Returns 0,
 * or -EINVAL with a sentence in @err.
 */
int sg_parse_targets(const char *spec, struct sockaddr_storage *out,
		     uint32_t max, uint32_t *n, char *err, size_t errlen);

/* --port's value into @port: 0, or what rr_opt_fail() returns after
 * saying why. */
int sg_port_option(const char *arg, uint16_t *port);
/* ADDR or [ADDR] (IPv4 or IPv6) with :PORT into @sa; 0 or -EINVAL. */
int sg_parse_hostport(const char *s, struct sockaddr_storage *sa,
		      socklen_t *len);
/* ADDR (IPv4 or IPv6, no port) into @sa with @port; 0 or -EINVAL. */
int sg_parse_addr(const char *s, uint16_t port, struct sockaddr_storage *sa,
		  socklen_t *len);

enum sg_reduce { SG_SUM, SG_CONCAT };
enum sg_engine { SG_EPOLL, SG_URING };

struct sg_serve_cfg {
	enum sg_engine engine;
	enum sg_reduce reduce;
	uint16_t port;
	const char *bind; /* the clients' address, NULL: any */
	struct sg_targets targets;
	uint64_t deadline_ns;
	uint32_t max_gathers;
	int cpu; /* -1: not pinned */
	bool busy;
	bool verbose;
};

/*
 * One gather: a client's request while its replies come in. Slot i of the
 * table is gather number i on the wire; gen counts its uses, so a reply to
 * an earlier use is late, whatever its number.
 */
struct sg_slot {
	struct sg_slot *prev, *next; /* the active list, or the free list */
	uint32_t idx;
	uint32_t gen;
	bool active;
	uint32_t seen;	   /* targets that replied */
	uint32_t answered; /* of them, those the reduction counted */
	uint64_t sum;
	uint64_t deadline_ns;
	struct sockaddr_storage client;
	socklen_t client_len;
	uint16_t plen; /* the payload to scatter, copied from the request */
	uint8_t payload[SG_MAX_PAYLOAD];
	char *reply; /* the reply to the client, once finished */
	uint32_t reply_len;
	char *cat; /* concat: the bodies so far (SG_MAX_REPLY bytes) */
	uint32_t cat_len;
	/* The engine's: what it still owes this slot before it is reused. */
	uint32_t next_send; /* epoll: the first target not sent yet */
	bool queued;	    /* in the engine's queue of scatters to send */
	uint32_t inflight;  /* uring: SQEs whose CQE has not come */
	uint8_t *out;	    /* uring: header+payload per target */
	size_t out_cap;
	uint64_t seen_map[SG_WORDS];
	uint64_t answered_map[SG_WORDS];
};

struct sg_stats {
	uint64_t requests;
	uint64_t refused; /* no free slot, or a request too long */
	uint64_t complete;
	uint64_t partial; /* finished at the deadline */
	uint64_t replies;
	uint64_t late;	  /* for a gather finished or of another use */
	uint64_t dup;	  /* a target's second reply to a gather */
	uint64_t foreign; /* not from the target's address and port */
	uint64_t bad;	  /* short, wrong magic, no such target */
	uint64_t send_errors;
	uint64_t truncated; /* datagrams longer than the buffer, concat
			     * bodies past the reply's room */
};

struct sg_table {
	const struct sg_serve_cfg *cfg;
	struct sg_slot *slots;
	struct sg_slot *free_list; /* LIFO: the warmest slot goes next */
	struct sg_slot active;	   /* list head, in start (= deadline) order */
	uint32_t nactive;
	struct sg_stats st;
};

int sg_table_init(struct sg_table *t, const struct sg_serve_cfg *cfg);
void sg_table_free(struct sg_table *t);
/* A slot for a client's request, or NULL (counted as refused). */
struct sg_slot *sg_start(struct sg_table *t, const void *payload, size_t len,
			 const struct sockaddr *client, socklen_t client_len,
			 uint64_t now);
/* The header of target @i's message for @s, in network order. */
void sg_hdr_fill(struct rr_sg_hdr *h, const struct sg_slot *s, uint32_t i);
/*
 * A datagram on the targets' socket: checked, matched and reduced. Returns
 * the slot it completed (all targets seen), else NULL.
 */
struct sg_slot *sg_reply(struct sg_table *t, const uint8_t *buf, size_t len,
			 const struct sockaddr *from, socklen_t fromlen);
/* The oldest active gather if its deadline has passed, else NULL. */
struct sg_slot *sg_expired(struct sg_table *t, uint64_t now);
/* Nanoseconds until the oldest deadline; -1 with none active. */
int64_t sg_next_deadline(const struct sg_table *t, uint64_t now);
/*
 * Ends @s: writes the client's reply into s->reply, takes it off the
 * active list and moves its gen on, so that any further reply is late.
 * The engine sends the reply, then gives the slot back with sg_release().
 */
void sg_finish(struct sg_table *t, struct sg_slot *s);
void sg_release(struct sg_table *t, struct sg_slot *s);
void sg_stats_print(const struct sg_table *t, const char *engine);

/* Socket helpers shared by the subcommands. */
int sg_udp_socket(int family, const struct sockaddr *bind_to,
		  socklen_t bind_len, bool nonblock);
void sg_pin(int cpu);
/* 8 MiB each way, so that a burst of replies is not dropped. */
void sg_sock_buffers(int fd);
/* --cpu N: 0, or 2 after saying why. */
int sg_parse_cpu(const char *arg, int *cpu);
void sg_sockaddr_str(const struct sockaddr *sa, char *buf, size_t len);

int sg_run_epoll(struct sg_table *t, int cfd, int tfd);
int sg_run_uring(struct sg_table *t, int cfd, int tfd);

int sg_serve_main(int argc, char **argv);
int sg_client_main(int argc, char **argv);
int sg_respond_main(int argc, char **argv);

/* Set by SIGINT and SIGTERM: every loop stops at its next turn. */
extern volatile int sg_stop;
void sg_signals(void);

#endif /* SGBASE_H */
