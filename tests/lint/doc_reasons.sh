#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# docs/TROUBLESHOOTING.md has a row for every verdict and reason the XDP
# program counts (RR_XDP_STATS in kern/shared/stats.h), numbered as its
# key in xdp_stats, and for every reason a request got no reply
# (RR_DROPS), in the lists' order: a reason added to a list without its
# row, saying what it means and what to do, fails here.
set -eu
cd "$(dirname "$0")/../.."
DOC=docs/TROUBLESHOOTING.md
H=kern/shared/stats.h
rc=0

# rows MARK: the first cells of the table between MARK:begin and MARK:end,
# each row's backquotes dropped, cells joined by spaces.
rows() {
	sed -n "/<!-- $1:begin/,/<!-- $1:end/p" "$DOC" | grep '^| [0-9`]' |
		awk -F'|' -v n="$2" '{ s = ""; for (i = 2; i < 2 + n; i++) {
			c = $i; gsub(/[` ]/, "", c); s = s (s ? " " : "") c }
			print s }'
}

# compare WHAT WANT HAVE: the doc's rows HAVE are the code's WANT.
compare() {
	if [ -n "$2" ] && [ "$2" = "$3" ]; then
		echo "ok: $DOC has a row for each of the $(wc -l <<<"$2") $1, in $H's order"
		return
	fi
	echo "FAIL: $DOC's $1 differ from $H's (< the doc, > the code):"
	diff <(echo "$3") <(echo "$2") || true
	rc=1
}

compare "XDP verdicts and reasons (RR_XDP_STATS, numbered as xdp_stats keys)" \
	"$(sed -n '/#define RR_XDP_STATS(X)/,/^$/p' "$H" |
		grep -o 'X([A-Z_0-9]*, *"[^"]*", *"[^"]*")' |
		sed -E 's/X\([A-Z_0-9]+, *"([^"]*)", *"([^"]*)"\)/\1 \2/' |
		awk '{ print NR - 1, $0 }')" "$(rows xdp-reasons 3)"
compare "reasons a request got no reply (RR_DROPS)" \
	"$(sed -n '/#define RR_DROPS(X)/,/^$/p' "$H" |
		grep -o 'X([A-Z_0-9]*, *"[^"]*")' | sed -E 's/.*"([^"]*)".*/\1/')" \
	"$(rows drop-reasons 1)"
exit $rc
