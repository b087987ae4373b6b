#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The abuse battery (guard_abuse.sh: allow-lists over IPv4 and IPv6,
# max_amplification, --user) with echo and reverse answered by their XDP
# implementations: what the user-space path guarantees must hold in the
# in-kernel tier too, counted the same way. What is settled before any
# function is served (user = in the config, an unknown --user) is left to
# guard_abuse.sh's own run.
cd "$(dirname "$0")/../.." || exit 1
RR_TIER=auto RR_CACHE=yes exec bash tests/integration/guard_abuse.sh
