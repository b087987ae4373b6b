#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Cells run under a system call filter (src/daemon/seccomp.c): an
# allow-list, widened only by the served functions' `syscalls`.
#
# - A name that is no system call stops reqrouter before any set-up: exit
#   2, one line naming the file and the line.
# - The bundled functions (echo, reverse, kv, dns) and the test module
#   faulty (tests/modules/faulty.c) answer from cells under load; every
#   cell shows `Seccomp: 2` in /proc/PID/status, the main process 0.
# - faulty, a module, has cells of its own (a cell group: docs/DESIGN.md),
#   thread 1 of each queue beside the shared thread 0.
# - faulty's "open" (openat and close of /etc/hostname) costs one request:
#   its cell is killed, the log says the function crashed (Bad system
#   call), a confined cell takes its place, everything else answers. So
#   does its "signal" (tgkill to pid 1: a cell may signal itself only).
# - With `syscalls = openat close` in faulty's section the same request is
#   answered, busy-polling (-B) too, and so it is when faulty comes with a
#   deploy that reads that section (its new cells get a filter of their
#   own); the shared cells' filter never has them.
# - Worker threads (isolation = thread) have no filter.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=2
PORT=7700
TMODS=$BUILD/tests/modules
CTL=$BUILD/reqrouterctl
[ -f "$TMODS/faulty.so" ] || die "no $TMODS/faulty.so (run make first)"
command -v kdig >/dev/null || die "kdig (knot-dnsutils) is needed: make deps"
# faulty's cell must die of the signal, as in production, not of a report.
rr_faults_are_signals

rr_bed $QUEUES
# faulty alone: the other test modules replace echo.
MODS=$RR_TMP/mods
mkdir "$MODS"
cp "$TMODS/faulty.so" "$MODS/"
M=$RR_TMP/metrics.prom
SOCK=$RR_TMP/ctl.sock
CONF=$RR_TMP/cells.conf
ZONE=$RR_TMP/example.zone
cp configs/example.zone "$ZONE"
for ((i = 0; i < 20; i++)); do echo "key$i value $i"; done >"$RR_TMP/kv.txt"
cat >"$CONF" <<EOF
[reqrouter]
isolation = cell

[function kv]
table = $RR_TMP/kv.txt

[function dns]
zone = example.com $ZONE
max_amplification = 0
EOF

# The workers' cells, the shared ones and faulty's own, and the TCP
# loop's (dns is served over TCP too).
CELLS=$((QUEUES * 2 + 1))
# status_of PID FIELD: a field of /proc/PID/status.
status_of() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
# cells_confined: "N of M": how many of reqrouter's cells are in seccomp
# filter mode (Seccomp: 2), of how many.
cells_confined() {
	local c n=0 m=0
	for c in $(pgrep -P "$RR_PID"); do
		m=$((m + 1))
		[ "$(status_of "$c" Seccomp)" = 2 ] && n=$((n + 1))
	done
	echo "$n of $m"
}
dns_answer() {
	tb_cli kdig @"$TB_IP4_SRV" -p 53 +notcp +noedns +short +retry=0 \
		+timeout=1 www.example.com A | sort | tr '\n' ' '
}
# asks PORT TEXT WANT: the reply to TEXT is WANT within 8 tries (the cell
# of one queue may be the one restarting).
# shellcheck disable=SC2317 # called through check
asks() {
	local i
	for ((i = 0; i < 8; i++)); do
		[ "$(cli_ask 0.5 "$1" "$2")" = "$3" ] && return 0
	done
	return 1
}
# all_answer WHAT: echo, reverse, kv, dns and faulty each answer.
all_answer() {
	check "$1: echo answers" asks 7 hello hello
	check "$1: reverse answers" asks 1232 hello olleh
	check "$1: kv answers from its table" asks 7379 key7 "value 7"
	check_eq "$1: dns answers www.example.com A" "192.0.2.80 192.0.2.81 " \
		"$(dns_answer)"
	check "$1: faulty answers a harmless request" asks $PORT hello hello
}

# A name that is no system call: one line, exit 2, nothing set up.
printf '[reqrouter]\nisolation = cell\n\n[function faulty]\nsyscalls = openat nosuchcall\n' \
	>"$RR_TMP/bad.conf"
rr_run badname -i "$TB_IF_SRV" -q 1 -c "$RR_TMP/bad.conf" --functions-dir "$MODS"
check_eq "syscalls = openat nosuchcall: exit 2" 2 "$RR_RC"
check_eq "... one line" 1 "$(wc -l <"$RR_ERR")"
check "... naming the file, the line and the name" grep -qx \
	"reqrouter: $RR_TMP/bad.conf:5: syscalls: no system call is named 'nosuchcall'" \
	"$RR_ERR"

# The default allow-list.
rr_start cells -i "$TB_IF_SRV" -q $QUEUES -c "$CONF" --functions-dir "$MODS" \
	--control "$SOCK" --metrics-file "$M" ||
	die "reqrouter with isolation = cell did not start"
check "the log says the cells run under a filter" \
	grep -q "cells run under a system call filter" "$RR_ERR"
check_eq "every cell is in seccomp filter mode" "$CELLS of $CELLS" \
	"$(cells_confined)"
check_eq "the main process is not" 0 "$(status_of "$RR_PID" Seccomp)"
all_answer "default list"
mapfile -t before < <(pgrep -P "$RR_PID")
say "rrload on reverse and echo at 6000/s for 2 s, sizes 1-1400"
rr_load_bg "$RR_TMP/load.json" -p 1232,7 -c 16 -r 6000 -d 2 -l 1-1400
wait "$LOAD_PID"
check_eq "rrload exits 0" 0 "$?"
rr_load_checks "$RR_TMP/load.json" 11000 "under load: "
check_eq "no cell died under load, none was replaced" \
	"0 ${before[*]}" \
	"$(grep -c 'crashed\|died outside' "$RR_ERR") $(pgrep -P "$RR_PID" | tr '\n' ' ' | sed 's/ $//')"

# A call off the list: the cell dies, one request is lost.
check_eq "faulty's 'open' gets no reply" "<none>" "$(cli_ask 0.5 $PORT open)"
wait_for 5 grep -q "function 'faulty' crashed" "$RR_ERR"
check_eq "the log says faulty crashed (Bad system call), once" 1 \
	"$(grep -c "function 'faulty' crashed (Bad system call) on queue [0-9]*, thread 1: its cell restarts" "$RR_ERR")"
check_eq "metrics: one crash of faulty" 1 \
	"$(wait_metric "$M" 5 reqrouter_function_faults_total 'function="faulty"' 'kind="crash"' -- 1)"
all_answer "after the kill"
check_eq "the new cell is confined too" "$CELLS of $CELLS" "$(cells_confined)"
check_eq "faulty's 'signal' (tgkill to pid 1) gets no reply" "<none>" \
	"$(cli_ask 0.5 $PORT signal)"
check_eq "metrics: a second crash of faulty" 2 \
	"$(wait_metric "$M" 5 reqrouter_function_faults_total 'function="faulty"' 'kind="crash"' -- 2)"
check_eq "both logged as Bad system call" 2 \
	"$(grep -c "function 'faulty' crashed (Bad system call)" "$RR_ERR")"
check "reverse still answers" asks 1232 hello olleh
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

# syscalls = openat close: the same request is answered, busy-polling too.
printf '\n[function faulty]\nsyscalls = openat close\n' >"$RR_TMP/open.conf"
cat "$CONF" "$RR_TMP/open.conf" >"$RR_TMP/cells-open.conf"
rr_start open -i "$TB_IF_SRV" -q $QUEUES -c "$RR_TMP/cells-open.conf" \
	--functions-dir "$MODS" -B ||
	die "reqrouter with faulty's syscalls did not start"
check "the log names faulty's calls, in its own cells' filter" \
	grep -q "the cells of 'faulty' (cell group 1) run under a filter of their own ([0-9]* instructions); its syscalls add openat close" "$RR_ERR"
check "... and not in the shared cells'" \
	grep -q 'cells run under a system call filter ([0-9]* instructions)$' "$RR_ERR"
check_eq "every cell is in seccomp filter mode" "$CELLS of $CELLS" \
	"$(cells_confined)"
check "with syscalls = openat close, faulty's 'open' is answered" \
	asks $PORT open opened
all_answer "busy-polling"
check_eq "no cell died" 0 "$(grep -c 'crashed\|died outside' "$RR_ERR")"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

# A deploy adds faulty, its section (read then) with its calls: the fresh
# cells load a filter that has them.
rr_start deploy -i "$TB_IF_SRV" -q $QUEUES -c "$CONF" --control "$SOCK" ||
	die "reqrouter without faulty did not start"
cat "$RR_TMP/open.conf" >>"$CONF"
check "reqrouterctl deploy faulty.so adds it" \
	"$CTL" -s "$SOCK" deploy "$MODS/faulty.so"
check "the deploy built faulty's cells a filter with its calls (logged)" \
	grep -q "the cells of 'faulty' (cell group 1) run under a filter of their own ([0-9]* instructions); its syscalls add openat close" "$RR_ERR"
check "after the deploy, faulty's 'open' is answered" asks $PORT open opened
check_eq "the fresh cells are confined" "$CELLS of $CELLS" "$(cells_confined)"
check_eq "no cell died" 0 "$(grep -c 'crashed\|died outside' "$RR_ERR")"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

# Threads have no filter: the same call is made, nothing is confined.
rr_start thread -i "$TB_IF_SRV" -q 1 --isolation thread --functions-dir "$MODS" ||
	die "reqrouter with threads did not start"
check "threads: faulty's 'open' is answered without syscalls" \
	asks $PORT open opened
check "threads: and its 'signal'" asks $PORT signal signalled
check_eq "threads: no task of reqrouter is confined" 0 \
	"$(cat /proc/"$RR_PID"/task/*/status | awk '$1 == "Seccomp:" && $2 != 0' | wc -l)"
rr_kill_wait TERM 10
check_eq "threads: SIGTERM: exit 0" 0 "$RR_RC"

finish
