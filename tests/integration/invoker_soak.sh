#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The 20-second soak in make test: tools/soak runs reqrouter -q 4 -t 2
# (reverse and echo) under 30 kreq/s of open-loop load from rrload over 64
# sockets, payloads 1-1400 bytes, and checks that all 16 sockets answer in
# every 10-second window, that no reply is lost (answered == sent, 0 wrong,
# 0 timeouts, every drop counter 0), that VmRSS and open fds stay flat
# (the last of its two windows against the first, 10 s apart), that
# every UMEM frame is back in fill/kernel once traffic stops, and that
# SIGTERM leaves exit status 0 and no XDP program. Runs as root from the
# repository root with $BUILD pointing at the binaries. Exit 0 pass, 77
# skip (tools/soak prints why: no root, netns or veth), else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
export BUILD
exec bash tools/soak -d 20
