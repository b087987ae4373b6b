# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The one reader of reqrouter's Prometheus text (--metrics-file, or the
# HTTP endpoint saved to a file), for the tests and the tools:
#
#   metric FILE NAME [SUBSTRING...]   the sum of NAME's samples whose label
#                                     set holds every SUBSTRING, exact
#   metric_lines FILE NAME            NAME's samples, one a line
#   wait_metric FILE SECONDS NAME SUBSTRING... -- WANT
#                                     wait until the sum reaches WANT;
#                                     with METRIC_REFRESH set, that
#                                     command writes FILE before each look
#
# Sums are exact for 64-bit counters: awk's numbers are doubles, exact
# only to 2^53, and mawk's printf "%d" stops at 2^31-1, which a long soak
# passes. So each value is split into its last 9 digits and the rest, two
# sums that stay exact for 400000 samples of up to 2^64, put together in
# the end. A value that is not a plain integer (none of reqrouter's
# counters is) makes it an ordinary awk sum, truncated.

# prom_sum: the exact sum of the last field of the lines on stdin.
prom_sum() {
	awk '
		{
			v = $NF
			if (v !~ /^[0-9]+$/) {
				other += v
				odd = 1
			} else if (length(v) > 9) {
				hi += substr(v, 1, length(v) - 9)
				lo += substr(v, length(v) - 8)
			} else {
				lo += v
			}
		}
		END {
			hi += int(lo / 1e9)
			lo %= 1e9
			if (odd)
				printf "%.0f\n", int(hi * 1e9 + lo + other)
			else if (hi)
				printf "%.0f%09d\n", hi, lo
			else
				printf "%d\n", lo
		}'
}

metric_lines() {
	grep -E "^$2[{ ]" "$1"
}

metric() {
	local file=$1 name=$2
	shift 2
	metric_lines "$file" "$name" | awk -v filters="$*" '
		BEGIN { n = split(filters, f, " ") }
		{
			for (i = 1; i <= n; i++)
				if (index($0, f[i]) == 0)
					next
			print
		}' | prom_sum
}

wait_metric() {
	local file=$1 limit=$2 name=$3 want i v args=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	want=$2
	for ((i = 0; i < limit * 10; i++)); do
		[ -n "${METRIC_REFRESH:-}" ] && $METRIC_REFRESH
		if [ -s "$file" ]; then
			v=$(metric "$file" "$name" "${args[@]}")
			[ "$v" -ge "$want" ] && break
		fi
		sleep 0.1
	done
	echo "${v:-0}"
}
