/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The port entry (struct rr_port_conf) by UDP destination port: the
 * lookup every program starts from, written by user space whenever a
 * function's settings change (rr_slot_sync()).
 */
#ifndef RR_LIB_PORT_H
#define RR_LIB_PORT_H

#include "lib/common.h"
#include "shared/port.h"

/* Function and socket count per UDP destination port (host order). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rr_port_conf);
	__uint(max_entries, 65536);
} port_map SEC(".maps");

/*
 * The ports that have a function, a bit each (RR_SERVED_WORD/BIT), which
 * user space keeps beside port_map (rr_xdp_set_port()). The loop check
 * on a request's source port reads a word of these 8 KB, where
 * port_map's entry is a 128-byte line of an 8 MB array: a cache miss for
 * every client port not seen lately.
 */
volatile __u64 served_ports[RR_SERVED_WORDS] SEC(".data") = {};

/* Whether @port has a function. */
static __always_inline int port_served(__u32 port)
{
	return !!(served_ports[RR_SERVED_WORD(port) & (RR_SERVED_WORDS - 1)] &
		  RR_SERVED_BIT(port));
}

#endif /* RR_LIB_PORT_H */
