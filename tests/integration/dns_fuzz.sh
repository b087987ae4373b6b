#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The short libFuzzer run over the dns function's handler (DNS messages
# in, replies or silence out) under ASan and UBSan: 100 000 inputs from
# the seed corpus, at least 50 000 within 40 s, and no crash, sanitizer
# report or broken invariant (tests/fuzz/fuzz_dns.c). `make fuzz` runs the
# long version.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
rr_fuzz_build fuzz-dns-build "libclang-rt-14-dev, libknot-dev"
exec tests/fuzz/run-dns.sh -r 100000 -m 50000 -t 40
