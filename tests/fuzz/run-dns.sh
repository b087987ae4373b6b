#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs the libFuzzer target over the dns function's handler
# ($BUILD/fuzz/fuzz_dns, built by `make fuzz-build`) the way run-request.sh
# runs fuzz_request, with the same options: first the saved inputs in
# tests/fuzz/crashes-dns/, then fuzzing from $BUILD/fuzz/dns-seeds/ with
# tests/fuzz/dns.dict.
#
#   run-dns.sh [-r RUNS] [-t SECONDS] [-m MIN_RUNS] [-c CORPUS] [-s SEED]
set -u
BUILD=${BUILD:-build}
export FUZZ_TARGET=fuzz_dns
export FUZZ_SEEDS=$BUILD/fuzz/dns-seeds
export FUZZ_DICT=tests/fuzz/dns.dict
export FUZZ_CRASHES=tests/fuzz/crashes-dns
exec "$(dirname "$0")/run-request.sh" "$@"
