/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Canaries (docs/DESIGN.md, "Canaries"): a second version of a function
 * beside the one a port serves, given a share of the sources. The port's
 * entry carries RR_PORT_CANARY; this is what the XDP program finds for
 * such a port in canary_map (lib/canary.h), written by user space
 * (src/daemon/slots/canary.c).
 */
#ifndef RR_SHARED_CANARY_H
#define RR_SHARED_CANARY_H

#include <linux/types.h>

#include "shared/port.h"

/* A share of all sources: a source whose hash's low 16 bits are below
 * share goes to the canary. */
#define RR_CANARY_SHARE_ONE 65536

struct rr_canary {
	/* The source hash's key, drawn when the canary starts, so that no
	 * client can choose its side; the same source always hashes the
	 * same while it runs. */
	__u64 seed;
	__u32 share; /* 0..RR_CANARY_SHARE_ONE */
	__u32 pad;
	/* The canary's own port entry (its slot, sockets, steering),
	 * taken from the request's guards on. */
	struct rr_port_conf conf;
};

#endif /* RR_SHARED_CANARY_H */
