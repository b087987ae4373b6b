#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The short XDP fuzz run: 200 000 random and mutated frames through the XDP
# program with bpf_prog_test_run_opts, each one checked for XDP_PASS, an
# unchanged frame, exactly one counter and a steering decision that agrees
# with user space's parser; and half of them (-x 50, to stay within about
# 15 s on a loaded 2-core machine) also through a second instance with the
# in-kernel tier (echo and reverse in XDP, the reply cache), whose replies
# and drop reasons must be user space's rr_serve()'s, byte for byte
# (tests/fuzz/fuzz_xdp.c). Needs root. `make fuzz` runs the long version,
# every frame through both.
set -u
BUILD=${BUILD:-build}
if [ "$(id -u)" -ne 0 ]; then
	echo "fuzz_xdp needs root (BPF program test runs)"
	exit 77
fi
san=${SAN:-0}
[ "$BUILD" = build/san ] && san=1
# BUILD on the command line: the Makefile sets its own, which the
# environment would not override, and run-xdp.sh runs $BUILD's binary.
if ! out=$(make -s --no-print-directory SAN="$san" BUILD="$BUILD" \
	fuzz-xdp-build 2>&1); then
	echo "$out"
	echo "FAIL: cannot build the XDP fuzzer"
	exit 1
fi
exec tests/fuzz/run-xdp.sh -n 200000 -x 50
