#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make help names every target a user can ask for: each .PHONY target of
# the Makefile and of the build.mk files it includes, so a target added
# without a help line fails here.
cd "$(dirname "$0")/../.." || exit 1
source tools/lib/checks.sh

# make test runs this: its MAKEFLAGS are not ours.
unset MAKEFLAGS MFLAGS MAKELEVEL
help=$(make --no-print-directory help) || die "make help failed"
# -p prints the database, .PHONY's prerequisites included; -q runs nothing.
phony=$(make -pRrq : 2>/dev/null | sed -n 's/^\.PHONY: //p' | tr ' ' '\n' |
	sort -u)
[ "$(wc -w <<<"$phony")" -gt 10 ] || die "found no .PHONY targets: '$phony'"
missing=
n=0
for t in $phony; do
	n=$((n + 1))
	grep -qE "(^|, )make $t( |,|$)" <<<"$help" || missing="$missing $t"
done
if [ -z "$missing" ]; then
	ok "make help names all $n .PHONY targets"
else
	bad "make help does not name:$missing"
fi
finish
