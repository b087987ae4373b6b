#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The short libFuzzer run over the user-space request path (raw frame in,
# reply frame or counted drop out) under ASan and UBSan: 200 000 inputs
# from the seed corpus, at least 100 000 within 50 s, and no crash,
# sanitizer report or broken invariant (tests/fuzz/fuzz_request.c).
# `make fuzz` runs the long version.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
rr_fuzz_build fuzz-request-build "libclang-rt-14-dev"
exec tests/fuzz/run-request.sh -r 200000 -m 100000 -t 50
