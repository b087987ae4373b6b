#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Containing faulty functions (isolation = cell), on the 4-queue bed with
# checked load beside: the test module "faulty" (tests/modules/faulty.c)
# crashes (SIGSEGV, SIGABRT, SIGFPE) or spins on demand. Each crash costs
# the one request and a restart of that cell; a spin is killed after the
# function's max_run_us; each is logged once with the function's name and
# counted. The fifth fault within the window quarantines the function: its
# port drops requests in XDP until reqrouterctl unquarantine. Meanwhile
# reverse, on the same queues (faulty, a module, has cells of its own
# beside the shared ones: docs/DESIGN.md, "Cell groups"), answers every
# request of rrload, and in the end every UMEM frame is back. Then FAULT_SOAK_S seconds (10, about 20
# faults, the four kinds in turn; 5 in the sanitizer pass;
# docs/RELIABILITY.md has a 60 s run) of faults mixed into normal traffic,
# quarantine off:
# the process stays up, the healthy requests are all answered, the frames
# all come back.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=4
SOAK_S=${FAULT_SOAK_S:-10}
case $BUILD in */san) SOAK_S=${FAULT_SOAK_S:-5} ;; esac
TMODS=$BUILD/tests/modules
CTL=$BUILD/reqrouterctl
PORT=7700
[ -f "$TMODS/faulty.so" ] || die "no $TMODS/faulty.so (run make first)"
# Two cell groups per queue: the shared one, faulty's.
CELLS=$((QUEUES * 2))
rr_faults_are_signals

rr_bed $QUEUES
M=$RR_TMP/metrics.prom
CONF=$RR_TMP/faults.conf
SOCK=$RR_TMP/ctl.sock
# faulty alone: the other test modules would each be a cell group more.
MODS=$RR_TMP/mods
mkdir -p "$MODS"
cp "$TMODS/faulty.so" "$MODS/"

# ask TEXT: faulty's reply to TEXT ("<none>" if none within 0.5 s).
ask() { cli_ask 0.5 $PORT "$1"; }
# answers: faulty's reply to "hello" within 2 s of retries (a cell on
# another queue may be the one restarting).
# shellcheck disable=SC2317 # called through check
answers() {
	local i r
	for ((i = 0; i < 8; i++)); do
		r=$(ask hello)
		[ "$r" = hello ] && return 0
	done
	return 1
}
# frames_home: every queue's frames back at rest (rx, worker, tx and
# completion 0, fill + kernel = 4096, at most 8 in the kernel's pool),
# within 10 s.
# shellcheck disable=SC2317 # called through check
frames_home() {
	python3 "$RR_LIB/hardening_metrics.py" at-rest "$M" --timeout 10 \
		--max-kernel 8 >"$RR_TMP/rest.out"
	local rc=$?
	sed 's/^/    /' "$RR_TMP/rest.out"
	return "$rc"
}

cat >"$CONF" <<EOF
[reqrouter]
isolation = cell

[function faulty]
max_run_us = 20000
quarantine_faults = 5
quarantine_window = 60
EOF

# Bad settings: one line each, before anything is set up.
rr_run badiso -i "$TB_IF_SRV" -q 1 --isolation jail
check_eq "--isolation jail: exit 2" 2 "$RR_RC"
check "--isolation jail: one line" \
	grep -qx "reqrouter: isolation must be thread or cell, not 'jail'" "$RR_ERR"
printf '[function faulty]\nquarantine_action = explode\n' >"$RR_TMP/bad.conf"
rr_run badaction -i "$TB_IF_SRV" -q 1 -c "$RR_TMP/bad.conf" --functions-dir "$MODS"
check_eq "quarantine_action = explode: exit 2" 2 "$RR_RC"
check "quarantine_action = explode: one line naming the file and line" \
	grep -q "bad.conf:2: quarantine_action must be drop or pass, not 'explode'" "$RR_ERR"

rr_start cell -i "$TB_IF_SRV" -q $QUEUES -c "$CONF" --functions-dir "$MODS" \
	--control "$SOCK" --metrics-file "$M" ||
	die "reqrouter with isolation = cell did not start"
check "the log says the workers are cells" \
	grep -q "$CELLS workers started as cells" "$RR_ERR"
check_eq "one process per worker besides the main one" $CELLS \
	"$(pgrep -c -P "$RR_PID")"
check "faulty answers while healthy" answers

say "rrload on reverse at 5000/s for 10 s, while faulty misbehaves"
rr_load_bg "$RR_TMP/load.json" -p 1232 -c 16 -r 5000 -d 10
sleep 1
FAULTS_FROM=$SECONDS

n=0
for what in crash abort fpe spin; do
	n=$((n + 1))
	check_eq "'$what': no reply" "<none>" "$(ask $what)"
	check "after '$what': faulty answers again" answers
done
check_eq "4 faults logged, one line each" 4 \
	"$(grep -cE "function 'faulty' (crashed|ran past max_run_us)" "$RR_ERR")"
check "the segfault is logged with the function's name and the signal" \
	grep -q "function 'faulty' crashed (Segmentation fault) on queue" "$RR_ERR"
check "the abort is logged" grep -q "function 'faulty' crashed (Aborted)" "$RR_ERR"
check "the division by zero is logged" \
	grep -q "function 'faulty' crashed (Floating point exception)" "$RR_ERR"
check "the spin is logged as past max_run_us (20000 us)" \
	grep -q "function 'faulty' ran past max_run_us (20000 us)" "$RR_ERR"
check_eq "metrics: 3 crashes" 3 "$(wait_metric "$M" 5 reqrouter_function_faults_total 'function="faulty"' 'kind="crash"' -- 3)"
check_eq "metrics: 1 timeout" 1 "$(wait_metric "$M" 5 reqrouter_function_faults_total 'function="faulty"' 'kind="timeout"' -- 1)"
check_eq "metrics: the spinning request counted as a timeout drop" 1 \
	"$(wait_metric "$M" 5 reqrouter_dropped_packets_total 'port="7700"' 'reason="timeout"' -- 1)"
check_eq "metrics: not quarantined yet" 0 \
	"$(metric "$M" reqrouter_function_quarantined 'function="faulty"')"

# The fifth fault within the window quarantines it.
ask crash >/dev/null
wait_for 5 grep -q "function 'faulty' quarantined" "$RR_ERR"
check "the fifth fault quarantines faulty, logged once" \
	[ "$(grep -c "function 'faulty' quarantined after 5 faults in 60 s: port 7700 drops" "$RR_ERR")" = 1 ]
check_eq "quarantined: no reply" "<none>" "$(ask hello)"
check_eq "metrics: quarantined" 1 \
	"$(wait_metric "$M" 5 reqrouter_function_quarantined 'function="faulty"' -- 1)"
check "metrics: the XDP program drops its requests" \
	[ "$(wait_metric "$M" 5 reqrouter_xdp_packets_total 'reason="quarantined"' -- 1)" -ge 1 ]
"$CTL" -s "$SOCK" status >"$RR_TMP/status.txt"
check "reqrouterctl status marks it" grep -Eq '^faulty .*\(quarantined\)' "$RR_TMP/status.txt"
check "reqrouterctl status: isolation cell" grep -Eq '^isolation +cell' "$RR_TMP/status.txt"
out=$("$CTL" -s "$SOCK" unquarantine faulty)
check_eq "reqrouterctl unquarantine faulty: exit 0" 0 "$?"
say "    $out"
check "unquarantined: faulty answers again" answers
out=$("$CTL" -s "$SOCK" unquarantine faulty 2>&1)
check_eq "unquarantine of a function that is not: exit 1" 1 "$?"
check "... says so" grep -q "is not quarantined" <<<"$out"

say "    the faults took $((SECONDS - FAULTS_FROM)) s of rrload's 10"
wait "$LOAD_PID"
check_eq "rrload on reverse exits 0" 0 "$?"
rr_load_checks "$RR_TMP/load.json" 45000 "reverse, across the faults: "
check "every UMEM frame is back (rx, worker, tx, completion 0)" frames_home
check "reqrouter is still running" kill -0 "$RR_PID"
check_eq "still one cell per worker" $CELLS "$(pgrep -c -P "$RR_PID")"
mapfile -t cells < <(pgrep -P "$RR_PID")
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "the exit summary counts faulty's faults" \
	grep -q '^function faulty: 4 crashes, 1 timeouts' "$RR_OUT"
left=0
for c in "${cells[@]}"; do kill -0 "$c" 2>/dev/null && left=$((left + 1)); done
check_eq "no cell is left behind" 0 "$left"

# quarantine_action = pass: the port goes to the kernel (which has no
# socket there: an ICMP port unreachable); SIGHUP lifts the quarantine.
printf '[reqrouter]\nisolation = cell\n\n[function faulty]\nquarantine_faults = 1\nquarantine_action = pass\n' >"$RR_TMP/pass.conf"
rr_start pass -i "$TB_IF_SRV" -q $QUEUES -c "$RR_TMP/pass.conf" \
	--functions-dir "$MODS" ||
	die "reqrouter with quarantine_action = pass did not start"
ask crash >/dev/null
wait_for 5 grep -q "function 'faulty' quarantined" "$RR_ERR"
check "pass: one fault quarantines (quarantine_faults = 1)" \
	grep -q "function 'faulty' quarantined after 1 fault in 10 s: port 7700 passes to the kernel" "$RR_ERR"
check_eq "pass: the kernel answers the port (unreachable)" "<refused>" "$(ask hello)"
kill -HUP "$RR_PID"
wait_for 5 grep -q "reload: function 'faulty' is out of quarantine" "$RR_ERR"
check "pass: SIGHUP lifts the quarantine" \
	grep -q "reload: function 'faulty' is out of quarantine" "$RR_ERR"
check "pass: faulty answers again after SIGHUP" answers
rr_kill_wait TERM 10
check_eq "pass: SIGTERM: exit 0" 0 "$RR_RC"

# Threads cannot be taken back from a function: the overrun is reported
# once, and a stop leaves the stuck thread behind instead of hanging.
printf '[function faulty]\nmax_run_us = 20000\n' >"$RR_TMP/thread.conf"
rr_start thread -i "$TB_IF_SRV" -q $QUEUES --isolation thread -c "$RR_TMP/thread.conf" \
	--functions-dir "$MODS" ||
	die "reqrouter with threads did not start"
check_eq "threads: 'spin' gets no reply" "<none>" "$(ask spin)"
sleep 0.5
check_eq "threads: the overrun is reported once, with the function's name" 1 \
	"$(grep -c "function 'faulty' has run past max_run_us (20000 us) on queue .*isolation = cell can" "$RR_ERR")"
rr_kill_wait TERM 15
check_eq "threads: SIGTERM still stops it (exit 0)" 0 "$RR_RC"
check "threads: the stuck worker is named as left behind" \
	grep -q "is stuck in function 'faulty' for 3 s: left behind" "$RR_ERR"
if xdp_on_srv; then
	bad "threads: the XDP program was left attached"
else
	ok "threads: the XDP program is detached"
fi

# The soak: faults mixed into normal traffic, quarantine off.
printf '[reqrouter]\nisolation = cell\n\n[function faulty]\nmax_run_us = 20000\nquarantine_faults = 0\n' >"$CONF"
rr_start soak -i "$TB_IF_SRV" -q $QUEUES -c "$CONF" --functions-dir "$MODS" \
	--control "$SOCK" --metrics-file "$M" ||
	die "reqrouter for the soak did not start"
say "soak: $SOAK_S s of rrload on reverse (5000/s) and faulty (1000/s), a fault every 0.2 s"
rr_load_bg "$RR_TMP/soak.json" -p 1232 -c 16 -r 5000 -d "$SOAK_S"
REV_PID=$LOAD_PID
printf 'good\nfine\nsome healthy request\n' >"$RR_TMP/healthy.txt"
rr_load_bg "$RR_TMP/healthy.json" -p $PORT -f echo \
	--payloads "$RR_TMP/healthy.txt" -c 4 -r 1000 -d "$SOAK_S"
HEALTHY_PID=$LOAD_PID
kinds=(crash abort fpe spin)
end=$((SECONDS + SOAK_S))
nf=0
while [ $SECONDS -lt "$end" ]; do
	cli_ask 0.01 $PORT "${kinds[nf % 4]}" >/dev/null
	nf=$((nf + 1))
	sleep 0.2
done
wait "$REV_PID"
check_eq "soak: rrload on reverse exits 0" 0 "$?"
wait "$HEALTHY_PID"
rr_load_checks "$RR_TMP/soak.json" $((SOAK_S * 4500)) "soak, reverse: "
# A healthy request queued behind a faulting one on its cell is answered
# by the next cell; one in the same batch after a spin waits up to
# max_run_us. Only the faulting requests themselves are lost ($nf sent).
rr_load_checks "$RR_TMP/healthy.json" $((SOAK_S * 900)) "soak, faulty's healthy requests: "
faults_seen=$(wait_metric "$M" 5 reqrouter_function_faults_total 'function="faulty"' -- "$nf")
say "    faults counted: $faults_seen of $nf sent; logged: $(grep -c "crashed (Segmentation" "$RR_ERR") SIGSEGV, $(grep -c "crashed (Aborted" "$RR_ERR") SIGABRT, $(grep -c "crashed (Floating" "$RR_ERR") SIGFPE, $(grep -c "ran past" "$RR_ERR") overruns, $(grep -c "outside a function" "$RR_ERR") outside"
check_eq "soak: every fault counted" "$nf" "$faults_seen"
check "soak: every UMEM frame is back" frames_home
check "soak: reqrouter is still running" kill -0 "$RR_PID"
rr_kill_wait TERM 10
check_eq "soak: SIGTERM: exit 0" 0 "$RR_RC"

finish
