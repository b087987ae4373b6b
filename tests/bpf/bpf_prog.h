/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of the bpf_prog test share: a fixture, one crafted frame
 * and the one counter it must move, and the tables of them
 * (bpf_prog_cases.c) that bpf_prog.c runs.
 */
#ifndef RR_BPF_PROG_H
#define RR_BPF_PROG_H

#include <stddef.h>
#include <stdint.h>

#include "frames.h"
#include "reqrouter.skel.h"

struct bpf_case {
	const char *what;
	struct frame_spec s;
	uint32_t cut; /* SET(): the frame cut to this many bytes */
	int stat;
	int alt; /* another acceptable counter, or -1 (set by ALT()) */
};

#define F_SPORT 40000 /* an ephemeral client port */

struct bpf_table {
	const struct bpf_case *c;
	size_t n;
};

/* Frames for the configured ports; with the interface's MAC set; and to
 * ports with allow-lists, which setup_allow_lists() writes first. */
extern const struct bpf_table steer_cases, mac_cases, allow_cases;
int setup_allow_lists(struct reqrouter *skel);

#endif /* RR_BPF_PROG_H */
