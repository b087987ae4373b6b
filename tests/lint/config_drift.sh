#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The tables of [reqrouter] and [function NAME] keys in
# docs/CONFIGURATION.md, the man page's list of keys, and the values
# the bash completion offers for reqrouter's options are generated from the
# settings table (src/lib/settings.c) by
# `reqrouter --dump-settings readme|readme-function|man|completion`:
# what stands between their settings:begin and settings:end markers must
# be what the binary makes now, so a setting added, renamed or given
# another range without regenerating them fails here. The reference
# configuration, configs/reqrouter.conf (every key commented out under its
# help), and its man page, man/reqrouter.conf.5, are made whole by
# `reqrouter --dump-settings conf|conf-man` and compared whole. With
# --update the files are rewritten instead.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RR=$BUILD/reqrouter
[ -x "$RR" ] || {
	echo "no binary at $RR (run make)"
	exit 1
}
update=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0

# between FILE MARK: the lines strictly between MARK:begin and MARK:end.
between() {
	sed -n "/ $2:begin/,/ $2:end/p" "$1" | sed '1d;$d'
}

# replace FILE MARK NEW: the lines between the markers become NEW's.
replace() {
	awk -v new="$3" -v b=" $2:begin" -v e=" $2:end" '
		index($0, e) { skip = 0 }
		!skip { print }
		index($0, b) { while ((getline l < new) > 0) print l; skip = 1 }
	' "$1" >"$tmp/out" && cat "$tmp/out" >"$1"
}

# FILE:WHAT:MARK: the part of FILE between MARK's markers is what
# --dump-settings WHAT makes; FILE:WHAT: the whole of FILE is.
for part in docs/CONFIGURATION.md:readme:settings \
	docs/CONFIGURATION.md:readme-function:function-keys \
	man/reqrouter.h2m:man:settings \
	configs/reqrouter.bash-completion:completion:settings \
	configs/reqrouter.conf:conf man/reqrouter.conf.5:conf-man; do
	IFS=: read -r file what mark <<<"$part"
	"$RR" --dump-settings "$what" >"$tmp/want"
	if [ -n "$mark" ] &&
		[ "$(grep -c " $mark:\(begin\|end\)" "$file")" != 2 ]; then
		echo "FAIL: $file has no $mark:begin/$mark:end markers"
		rc=1
		continue
	fi
	if [ -n "$mark" ]; then
		between "$file" "$mark" >"$tmp/have"
	else
		cat "$file" >"$tmp/have"
	fi
	if [ "$update" = --update ]; then
		if [ -n "$mark" ]; then
			replace "$file" "$mark" "$tmp/want"
		else
			cat "$tmp/want" >"$file"
		fi
		echo "rewrote ${mark:+the generated $mark part of }$file"
	elif diff -u "$tmp/have" "$tmp/want" >"$tmp/diff"; then
		echo "ok: $file matches reqrouter --dump-settings $what"
	else
		echo "FAIL: $file differs from reqrouter --dump-settings $what" \
			"(tests/lint/config_drift.sh --update rewrites it):"
		cat "$tmp/diff"
		rc=1
	fi
done
exit $rc
