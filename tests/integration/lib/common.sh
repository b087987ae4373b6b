# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by the invoker_*.sh integration tests: prerequisite checks (skip
# only when a capability is truly missing), pass/fail bookkeeping that keeps
# going after a failed check so one run reports every problem, starting and
# stopping reqrouter in the test bed's server namespace, and reading its
# Prometheus metrics file.
#
# Source it from the repository root after setting nothing; it sources
# tools/testbed.sh itself. Every process it starts is remembered by PID and
# only those are stopped on exit.

BUILD=${BUILD:-build}
RR=$BUILD/reqrouter
RR_LIB=tests/integration/lib
source tools/testbed.sh

# The invoker and hardening tests drive the AF_XDP path, so they pin the
# user tier with no reply cache; the in-kernel tests (tier_*.sh) set
# RR_TIER=auto or xdp, and RR_CACHE=yes.
RR_TIER=${RR_TIER:-user}
RR_CACHE=${RR_CACHE:-no}
RR_FAILS=0
RR_CHECKS=0
RR_PID=
RR_BG_PIDS=()
RR_TMP=

say() { printf '%s\n' "$*"; }
ok() {
	RR_CHECKS=$((RR_CHECKS + 1))
	printf 'ok    %s\n' "$*"
}
bad() {
	RR_CHECKS=$((RR_CHECKS + 1))
	RR_FAILS=$((RR_FAILS + 1))
	printf 'FAIL  %s\n' "$*"
}
# check DESCRIPTION CMD...: run CMD, ok if it succeeds.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1 ($3)"
	else
		bad "$1: expected '$2', got '$3'"
	fi
}
skip() {
	echo "SKIP: $*"
	exit 77
}
die() {
	bad "$*"
	rr_finish
}

# rr_finish: the script's last word; exit 1 if any check failed.
rr_finish() {
	echo "---"
	if [ "$RR_FAILS" -gt 0 ]; then
		echo "$RR_FAILS of $RR_CHECKS checks failed"
		exit 1
	fi
	echo "all $RR_CHECKS checks passed"
	exit 0
}

# rr_prereqs: root, network namespaces, veth and the binary. Anything missing
# that CI always has (root, netns) is a skip; a missing binary is a failure.
rr_prereqs() {
	rr_netns_prereqs
	[ -x "$RR" ] || die "no binary at $RR (run make first)"
}

# rr_netns_prereqs: what a test bed needs (root, ip, python3, network
# namespaces, veth); a skip, saying which, where one is missing.
rr_netns_prereqs() {
	local probe
	[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, XDP)"
	command -v ip >/dev/null || skip "needs iproute2 (ip)"
	command -v python3 >/dev/null || skip "needs python3"
	probe=rr-probe-$$
	ip netns add "$probe" 2>/dev/null ||
		skip "cannot create network namespaces here"
	if ! ip -n "$probe" link add rrprobe0 type veth peer name rrprobe1 \
		2>/dev/null; then
		ip netns del "$probe"
		skip "cannot create veth devices here"
	fi
	ip netns del "$probe"
}

rr_cleanup() {
	local p
	if [ -n "$RR_PID" ] && kill -0 "$RR_PID" 2>/dev/null; then
		kill -TERM "$RR_PID" 2>/dev/null
		for _ in $(seq 30); do
			kill -0 "$RR_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$RR_PID" 2>/dev/null
	fi
	for p in "${RR_BG_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	tb_teardown
	[ -n "$RR_TMP" ] && rm -rf "$RR_TMP"
	return 0
}

# rr_bed QUEUES: prerequisites, a temp dir in $RR_TMP, the test bed, and
# one exit trap that stops what we started and removes the bed.
rr_bed() {
	rr_prereqs
	RR_TMP=$(mktemp -d /tmp/rr-it.XXXXXX)
	chmod 755 "$RR_TMP"
	# tools/testbed.sh tags the bed with the last 8 characters of
	# printf '%x%04x' $$ RANDOM; for $$ < 0x1000 that string has only 7,
	# ${tag: -8} expands to nothing, and every such run is named rr--srv /
	# rr--cli, so concurrent runs delete each other's namespaces. Until the
	# library pads it, pad the PID for tb_setup's printf only (inert once
	# the format changes).
	# shellcheck disable=SC2317 # called by tb_setup
	printf() {
		if [ "$1" = '%x%04x' ]; then
			shift
			builtin printf '%05x%04x' "$@"
		else
			# shellcheck disable=SC2059 # a wrapper: the caller's format
			builtin printf "$@"
		fi
	}
	tb_setup "${1:-4}"
	local rc=$?
	unset -f printf
	[ $rc -eq 0 ] || die "tb_setup failed"
	[[ $TB_NS_SRV =~ ^rr-[0-9a-f]{8}-srv$ ]] ||
		die "test bed names without a unique tag: $TB_NS_SRV"
	trap 'rr_cleanup' EXIT
	trap 'rr_cleanup; exit 130' INT TERM
	say "test bed: $TB_NS_SRV/$TB_IF_SRV <-> $TB_NS_CLI/$TB_IF_CLI"
}

# rr_start NAME ARGS...: start reqrouter in the server namespace with its
# stdout in $RR_TMP/NAME.out and stderr in $RR_TMP/NAME.err; wait (at most
# 15 s) until it logs "ready". PID in RR_PID. Returns 1 if it never got
# ready (it is then stopped).
rr_start() {
	local name=$1 i
	shift
	RR_OUT=$RR_TMP/$name.out
	RR_ERR=$RR_TMP/$name.err
	local tier=(--tier "$RR_TIER")
	[ "$RR_CACHE" = no ] && tier+=(--no-cache)
	tb_srv_bg "$RR" "${tier[@]}" "$@" >"$RR_OUT" 2>"$RR_ERR"
	RR_PID=$TB_PID
	for ((i = 0; i < 150; i++)); do
		grep -q 'ready on' "$RR_ERR" 2>/dev/null && return 0
		kill -0 "$RR_PID" 2>/dev/null || break
		sleep 0.1
	done
	say "reqrouter did not get ready; its stderr:"
	sed 's/^/    /' "$RR_ERR"
	rr_kill_wait KILL 5
	return 1
}

# rr_run NAME ARGS...: run reqrouter in the server namespace in the
# foreground (at most 20 s); stdout in $RR_TMP/NAME.out, stderr in
# $RR_TMP/NAME.err, exit status in RR_RC. Called directly, not through
# tb_srv, so the shell's own "Segmentation fault" notice, should there be
# one, does not land in the captured stderr.
rr_run() {
	local name=$1
	shift
	RR_OUT=$RR_TMP/$name.out
	RR_ERR=$RR_TMP/$name.err
	ip netns exec "$TB_NS_SRV" timeout -k 2 20 "$RR" "$@" \
		>"$RR_OUT" 2>"$RR_ERR"
	RR_RC=$?
	rr_check_sanitizers
	if [ "$RR_RC" -gt 128 ] && [ "$RR_RC" -lt 160 ]; then
		say "reqrouter $* was killed by signal $((RR_RC - 128))" \
			"($(kill -l $((RR_RC - 128))))"
	fi
	return 0
}

# rr_check_sanitizers: a sanitizer build (BUILD=build/san) reports to
# stderr; any report is a failure of its own, whatever the exit status.
rr_check_sanitizers() {
	[ -n "${RR_ERR:-}" ] && [ -f "$RR_ERR" ] || return 0
	if grep -qE 'runtime error:|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer' \
		"$RR_ERR"; then
		bad "sanitizer report in reqrouter's stderr ($(basename "$RR_ERR")):"
		grep -E -A3 'runtime error:|Sanitizer' "$RR_ERR" | head -n 20 |
			sed 's/^/    /'
	fi
	return 0
}

# rr_kill_wait SIGNAL SECONDS: signal reqrouter and wait at most SECONDS.
# Sets RR_RC (exit status, or "running" if it did not exit) and RR_ELAPSED_MS.
rr_kill_wait() {
	local sig=$1 limit=$2 start i
	RR_RC=running
	start=$(date +%s%N)
	kill -"$sig" "$RR_PID" 2>/dev/null
	rr_wait_exit "$limit"
	# shellcheck disable=SC2034 # for the scripts that source this
	RR_ELAPSED_MS=$((($(date +%s%N) - start) / 1000000))
}

# rr_wait_exit SECONDS: wait for reqrouter to exit on its own; RR_RC as above.
rr_wait_exit() {
	local limit=$1 i
	RR_RC=running
	for ((i = 0; i < limit * 20; i++)); do
		if ! kill -0 "$RR_PID" 2>/dev/null; then
			wait "$RR_PID" 2>/dev/null
			RR_RC=$?
			RR_PID=
			rr_check_sanitizers
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# xdp_on_srv: is any XDP program attached to the server's interface?
xdp_on_srv() {
	ip -n "$TB_NS_SRV" link show dev "$TB_IF_SRV" |
		grep -Eq '(^|[ /])xdp(generic|drv|offload)?( |$)'
}

# metric FILE NAME [SUBSTRING...]: the sum of the samples of metric NAME whose
# label set contains every SUBSTRING (e.g. 'port="1232"'), exact for 64-bit
# counters. awk's numbers are doubles, exact only to 2^53, and mawk's
# printf "%d" stops at 2^31-1, which a long soak passes: so each value is
# split into its last 9 digits and the rest, two sums that stay exact
# for 400000 samples of up to 2^64, put together in the end. A value
# that is not a plain integer (none of reqrouter's counters is) makes
# it an ordinary awk sum, truncated.
metric() {
	local file=$1 name=$2
	shift 2
	awk -v name="$name" -v filters="$*" '
		BEGIN { n = split(filters, f, " ") }
		$0 ~ "^" name "[{ ]" {
			for (i = 1; i <= n; i++)
				if (index($0, f[i]) == 0)
					next
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
		}' "$file"
}

# metric_lines FILE NAME: the samples of NAME as "labels value" lines.
metric_lines() {
	grep -E "^$2[{ ]" "$1"
}

# wait_metric FILE SECONDS NAME FILTER... -- WANT: wait until the metric
# sum reaches WANT (the file is rewritten every second). Prints the last sum.
wait_metric() {
	local file=$1 limit=$2 name=$3 want i v args=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	want=$2
	for ((i = 0; i < limit * 10; i++)); do
		if [ -s "$file" ]; then
			v=$(metric "$file" "$name" "${args[@]}")
			[ "$v" -ge "$want" ] && break
		fi
		sleep 0.1
	done
	echo "${v:-0}"
}

# udp_csum_errors: the client namespace's Udp InCsumErrors (and Udp6).
udp_csum_errors() {
	tb_cli cat /proc/net/snmp | awk '
		/^Udp: / && !h { for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next }
		/^Udp: / && h { v4 = $col["InCsumErrors"] }
		END { print v4 + 0 }'
}
udp6_csum_errors() {
	tb_cli cat /proc/net/snmp6 | awk '$1 == "Udp6InCsumErrors" { print $2 }'
}

# serves N [UDPCLIENT-ARGS...]: N requests over 16 sockets to reverse and
# echo, over IPv4 and then IPv6; true if every one was answered correctly.
serves() {
	local n=$1 out=$RR_TMP/serves.out rc=0 addr
	shift
	for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
		tb_cli python3 $RR_LIB/udpclient.py "$addr" 1232:reverse,7:echo \
			-n "$n" -s 16 -q "$@" >"$out" 2>&1 || rc=1
		tail -n 1 "$out" | sed 's/^/    /'
	done
	return $rc
}
