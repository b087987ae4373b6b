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

#endif /* RR_LIB_PORT_H */
