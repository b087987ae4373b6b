# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The background processes a script started, remembered by PID so that
# only those are ever stopped (tools/bench, tools/bench-dns, the tools'
# smoke test):
#
#   procs_bg NS LOG CMD...  start CMD in namespace NS, output in LOG; its
#                           own PID (ip netns exec execs it) in BG
#   procs_add PID           remember a PID started some other way
#   procs_stop PID          stop one (SIGTERM, reaped) and forget it
#   procs_stop_all          stop every one (for an EXIT trap)
#   procs_term PID SECONDS  SIGTERM, SIGKILL if it still runs after
#                           SECONDS, reaped; for a server that must get
#                           its chance to clean up

PROCS=()

procs_add() { PROCS+=("$1"); }

procs_bg() {
	local ns=$1 log=$2
	shift 2
	ip netns exec "$ns" "$@" >"$log" 2>&1 &
	BG=$!
	PROCS+=("$BG")
}

procs_stop() {
	local keep=() p
	[ -n "${1:-}" ] || return 0
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	for p in "${PROCS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	PROCS=("${keep[@]}")
}

procs_term() {
	local p=$1 k
	kill -0 "$p" 2>/dev/null || return 0
	kill -TERM "$p" 2>/dev/null
	for ((k = 0; k < $2 * 20; k++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	return 0
}

procs_stop_all() {
	local p
	for p in "${PROCS[@]}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done
	for p in "${PROCS[@]}"; do
		[ -n "$p" ] && wait "$p" 2>/dev/null
	done
	PROCS=()
}
