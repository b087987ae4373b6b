/* SPDX-License-Identifier: GPL-2.0 */
/* Busy polling: the sockets' options and the interface's NAPI knobs
 * (busypoll.c). */
#ifndef RR_BUSYPOLL_H
#define RR_BUSYPOLL_H

#include <stdbool.h>
#include <stdint.h>

#include "invoker.h"

void rr_busy_poll_setup(struct rr_invoker *inv);
int rr_busy_poll_sock(int fd, bool on, uint32_t budget);
/* The interface's NAPI knobs back to what they were. */
void rr_busy_poll_restore(struct rr_invoker *inv);
/* Preferred busy polling only works once the sockets know their queue's
 * NAPI; the main thread calls this every tick to check, and falls back to
 * plain spinning if they never will. */
void rr_invoker_check_busy_poll(struct rr_invoker *inv);

#endif /* RR_BUSYPOLL_H */
