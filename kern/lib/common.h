/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every header of the XDP program builds on: the UAPI and libbpf
 * headers, and the one-load accessors for what another CPU writes.
 *
 * kern/lib/ holds the program's features, one header each that owns the
 * feature's maps and code, named as the feature is in kern/shared/, src/
 * and docs/DESIGN.md ("kern/ layout"); the programs themselves, their
 * entry points and the order of the steps, are kern/reqrouter.bpf.c's.
 */
#ifndef RR_LIB_COMMON_H
#define RR_LIB_COMMON_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* One load the compiler neither repeats nor tears: another CPU writes it. */
#define READ_ONCE_U64(x) (*(volatile __u64 *)&(x))
#define READ_ONCE_U32(x) (*(volatile __u32 *)&(x))

#endif /* RR_LIB_COMMON_H */
