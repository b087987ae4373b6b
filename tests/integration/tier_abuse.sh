#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The abuse battery (hardening_abuse.sh: allow-lists over IPv4 and IPv6,
# max_amplification, --user and user =) with echo and reverse answered by
# their XDP implementations: what the user-space path guarantees must hold
# in the in-kernel tier too, counted the same way.
cd "$(dirname "$0")/../.." || exit 1
RR_TIER=auto RR_CACHE=yes exec bash tests/integration/hardening_abuse.sh
