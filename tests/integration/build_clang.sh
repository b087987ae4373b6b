#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole build (programs, modules, BPF objects, tests, man pages) also
# works with clang as the C compiler, warnings still errors: make CC=clang
# once failed to find asm/types.h because the BPF include directory came
# from clang's -dumpmachine, which is not Debian's multiarch name. Built
# into a directory of its own, so it never touches $BUILD.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

command -v clang >/dev/null || skip "needs clang (make deps)"
out=$(mktemp -d /tmp/rr-clang.XXXXXX)
trap 'rm -rf "$out"' EXIT
# make test runs this: its MAKEFLAGS (jobserver, V=1, SAN=1) are not ours.
unset MAKEFLAGS MFLAGS MAKELEVEL

start=$(date +%s)
if make -j2 --no-print-directory CC=clang BUILD="$out" tests-build \
	>"$out/make.log" 2>&1; then
	ok "make CC=clang tests-build ($(($(date +%s) - start)) s)"
else
	bad "make CC=clang tests-build failed:"
	grep -v -E '^  [A-Z]+ +' "$out/make.log" | tail -n 40
fi
for bin in reqrouter reqrouterctl rrload sockserver tests/unit/packet \
	functions/echo.so bpf/reqrouter.bpf.o man/reqrouter.8; do
	check "clang build has $bin" test -s "$out/$bin"
done
check "the clang-built reqrouter runs" "$out/reqrouter" --version
finish
