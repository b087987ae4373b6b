/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside rrload's socket engine: what its set-up (sock.c) and its send
 * and receive loop (sock_run.c) share.
 */
#ifndef RL_SOCK_H
#define RL_SOCK_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "rrload.h"

#define SEND_BATCH 32
#define RECV_BATCH 32
#define HDR_LEN 12 /* connection id and sequence number */
#define PATTERN_LEN 4096
#define EPOLL_EVENTS 64
#define MIN_SLEEP_NS 50000 /* a sleeping open loop wakes at most this often */

enum sent_state { SENT_FREE, SENT_OUT, SENT_DONE, SENT_EXPIRED, SENT_LATE };

struct rl_sent {
	uint64_t t_ns; /* when sent (closed loop) or due (open loop) */
	uint64_t hash; /* of the expected reply (--mix: of its tag) */
	uint32_t len;  /* of the expected reply; UINT32_MAX: none expected */
	uint16_t state;
	uint16_t cls; /* --mix: its class */
};

struct rl_conn {
	int fd;
	uint32_t id;
	const struct rr_function *fn;
	struct rr_request req; /* what the server's function will see */
	struct rl_sent *ring;
	uint64_t mask;
	uint64_t head; /* next sequence number */
	uint64_t tail; /* oldest request not yet answered or given up */
	uint32_t out;  /* requests outstanding */
	uint64_t fn_counters[RR_FN_MAX_COUNTERS]; /* the function's, unread */
};

/* Per-thread buffers, allocated by the thread itself (its NUMA node). */
struct rl_bufs {
	struct mmsghdr smsg[SEND_BATCH];
	struct iovec siov[SEND_BATCH];
	uint8_t *sbuf; /* SEND_BATCH * len_max */
	struct mmsghdr rmsg[RECV_BATCH];
	struct iovec riov[RECV_BATCH];
	uint8_t *rbuf; /* RECV_BATCH * rsize */
	size_t rsize;
	uint8_t *scratch; /* where the expected reply is computed */
	size_t room;
	uint64_t rnd;
};

extern uint8_t *rl_pattern; /* PATTERN_LEN + RL_MAX_PAYLOAD bytes */

/* Our own 64-bit mixing hash, one multiply per 8 bytes. */
static inline uint64_t rl_hash(const uint8_t *p, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p + i, len - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 32);
}

static inline uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* A thread's buffers, allocated by the thread itself (its NUMA node). */
int rl_bufs_init(const struct rl_config *cfg, struct rl_bufs *b,
		 unsigned int idx);
void rl_bufs_fini(struct rl_bufs *b);
/* An epoll instance over the thread's sockets, or -errno. */
int rl_epoll_setup(struct rl_thread *th);

#endif /* RL_SOCK_H */
