/* SPDX-License-Identifier: GPL-2.0 */
/* The UMEMs and AF_XDP sockets (xsk.c). */
#ifndef RR_XSK_H
#define RR_XSK_H

#include <stddef.h>
#include <stdint.h>

#include "invoker.h"

/* Every queue's UMEM and every (queue, thread, slot) socket of set-up,
 * mapped in the XSKMAP; then the replies' checksum choice. Each worker
 * gets @stock frames of its queue's UMEM to start its stock with (the
 * gathers': rr_gather_stock_seed()). */
int rr_xsk_create_all(struct rr_invoker *inv, uint32_t stock);
/* Socket (q, t, slot) made while serving, on the queue's UMEM. */
int rr_xsk_later(struct rr_invoker *inv, uint32_t q, uint32_t t, uint32_t slot,
		 char *msg, size_t msglen);
/* Socket (q, t, slot) into the XSKMAP: the XDP program may pick it now. */
int rr_xsk_map(struct rr_invoker *inv, uint32_t q, uint32_t t, uint32_t slot,
	       char *msg, size_t msglen);

#endif /* RR_XSK_H */
