/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capture and traces (docs/DESIGN.md, "Capture and traces"): the size of
 * the ring the XDP program writes its records into. The record, and the
 * mark a request carries (RR_MARK_*), are the function ABI's
 * (include/reqrouter/rr_xdp_capture.h): a function's program writes the
 * record too; a worker sees the mark in the request's metadata
 * (RR_RX_META_CAPTURE, _TRACE, shared/steer.h).
 * The mark means "this request is sampled": anything that follows
 * a request through the path (a capture, a trace) can ride on it.
 */
#ifndef RR_SHARED_CAPTURE_H
#define RR_SHARED_CAPTURE_H

#include <linux/types.h>

#include <reqrouter/rr_xdp_capture.h>

#include "shared/common.h"

/* The capture ring's size: a few thousand records between two reads of
 * the main thread's. */
#define RR_CAPTURE_RING_SIZE (1U << 21)

#endif /* RR_SHARED_CAPTURE_H */
