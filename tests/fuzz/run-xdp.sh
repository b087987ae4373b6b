#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs the XDP fuzzer ($BUILD/fuzz/fuzz_xdp, built by `make fuzz-build`).
# Frames are spread over the RX queues of a veth with 72 queues in a
# network namespace of its own, so queue rows past RR_MAX_QUEUES (64) are
# covered; if no namespace can be made, everything runs on queue 0.
#
#   run-xdp.sh [-n FRAMES] [-s SEED] [-x PERCENT]
#
# -x: the share of frames also compared between the in-kernel tier and
# user space (fuzz_xdp's default: all of them).
#
# Run from the repository root as root; BUILD as in the Makefile. Exits 77
# (skip) only when not root.
set -u
BUILD=${BUILD:-build}
FZ=$BUILD/fuzz/fuzz_xdp
frames=200000
seed=
tier=

while getopts n:s:x: opt; do
	case $opt in
	n) frames=$OPTARG ;;
	s) seed=$OPTARG ;;
	x) tier=$OPTARG ;;
	*) exit 2 ;;
	esac
done

if [ "$(id -u)" -ne 0 ]; then
	echo "fuzz_xdp needs root (BPF program test runs)"
	exit 77
fi
if [ ! -x "$FZ" ]; then
	echo "run-xdp: $FZ missing (make fuzz-build)"
	exit 1
fi
args=(-n "$frames")
[ -n "$seed" ] && args+=(-s "$seed")
[ -n "$tier" ] && args+=(-x "$tier")

ns=rrfz-$$
if ip netns add "$ns" 2>/dev/null; then
	trap 'ip netns del "$ns" 2>/dev/null' EXIT
	if ip -n "$ns" link add fz0 numtxqueues 72 numrxqueues 72 type veth \
		peer name fz1 2>/dev/null; then
		exec_in=(ip netns exec "$ns")
		args+=(-i fz0)
	else
		echo "run-xdp: no 72-queue veth, every frame on queue 0"
		exec_in=()
	fi
else
	echo "run-xdp: no network namespace, every frame on queue 0"
	exec_in=()
fi
"${exec_in[@]}" "$FZ" "${args[@]}"
rc=$?
# 77 from fuzz_xdp is its own not-root skip; anything else non-zero fails.
[ $rc -eq 0 ] || [ $rc -eq 77 ] || rc=1
exit $rc
