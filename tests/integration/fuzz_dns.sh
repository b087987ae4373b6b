#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The short libFuzzer run over the dns function's handler (DNS messages
# in, replies or silence out) under ASan and UBSan: 100 000 inputs from
# the seed corpus, at least 50 000 within 40 s, and no crash, sanitizer
# report or broken invariant (tests/fuzz/fuzz_dns.c). `make fuzz` runs the
# long version.
set -u
BUILD=${BUILD:-build}
san=${SAN:-0}
[ "$BUILD" = build/san ] && san=1
if ! out=$(make -s --no-print-directory SAN="$san" fuzz-dns-build 2>&1); then
	echo "$out"
	echo "FAIL: cannot build the libFuzzer target (clang with" \
		"libclang-rt-14-dev, libknot-dev: make deps)"
	exit 1
fi
exec tests/fuzz/run-dns.sh -r 100000 -m 50000 -t 40
