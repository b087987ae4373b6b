/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scatter and gather: a function asks a group of UDP endpoints (its
 * targets) and answers its request once, from what they answered.
 *
 * The wire format is the first part: every message of a gather, both
 * ways, starts with struct rr_sg_hdr, and a target answers with the
 * header it was sent, unchanged, in front of its own reply. reqrouter's
 * XDP program knows a reply by it: which gather, which use of it and
 * which target. Any UDP server that echoes the first 16 bytes can be a
 * target; a reqrouter function with `gather_target = yes` is one
 * without knowing it (reqrouter takes the header off before the handler
 * and puts it back in front of the reply).
 *
 * Plain fixed-width types only: user space, kern/ and the tools compile
 * it unchanged.
 */
#ifndef RR_GATHER_H
#define RR_GATHER_H

#include <linux/types.h>

#define RR_SG_MAGIC 0x72725347U /* "rrSG", in network order on the wire */

/* In network byte order on the wire, 16 bytes, no padding. */
struct rr_sg_hdr {
	__be32 magic;  /* RR_SG_MAGIC */
	__be32 gather; /* the coordinator's number for the gather */
	__be32 gen;    /* which use of that number, drawn at random: a
			* reply to an older one is late */
	__be16 target; /* the target's index in its group */
	__be16 flags;  /* 0 (reserved; echoed) */
};

/* A group holds at most this many targets, and so does a gather. */
#define RR_SG_MAX_TARGETS 1024

/*
 * How the replies of a gather become one result. The reductions read a
 * value from each reply's body: its leading ASCII decimal digits (at most
 * 19, at least one; what follows them is ignored), an unsigned integer. A
 * reply without one is not counted (it missed). They run in the XDP
 * program, on whichever CPU the reply arrives, and a reply they counted
 * never reaches user space. CONCAT hands each reply's body to the worker
 * instead.
 */
enum rr_reduce {
	RR_REDUCE_CONCAT = 0, /* the bodies, in order of arrival */
	RR_REDUCE_SUM,	      /* their sum, modulo 2^64 */
	RR_REDUCE_MIN,
	RR_REDUCE_MAX,
	RR_REDUCE_COUNT, /* replies with a value */
	RR_REDUCE_OR,	 /* bitwise or */
	/* The k largest distinct values below RR_SG_TOPK_RANGE (k is the
	 * gather's); larger values are not counted. */
	RR_REDUCE_TOPK,
	RR_REDUCE_MAX_OP,
};

#define RR_SG_TOPK_RANGE 256
#define RR_SG_VALUE_DIGITS 19

#endif /* RR_GATHER_H */
