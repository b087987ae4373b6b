#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# worker_priority. The default is the normal priority, said in the
# start-up line and in status. With worker_priority = auto the worker
# runs at the normal priority until its requests wait over 1 ms (60 calls
# of 5 ms at once), is raised to SCHED_FIFO 1 then, said in one line and
# counted in status, every request answered, and is back at the normal
# priority about a second after the wait ends. With worker_priority = realtime every
# worker thread (and every cell) runs at SCHED_FIFO priority 1, ahead of
# its CPU's receive work, and says so; a call that runs long (faulty's
# "slow": 300 ms) is put back to the normal priority while it runs, said
# in one line, and raised again when it returns, its request answered.
# Under --user it rests on RLIMIT_RTPRIO, as the host allows. Busy
# polling (-B) and a process that may not have realtime priority (no
# CAP_SYS_NICE, RLIMIT_RTPRIO 0) keep the normal priority although
# realtime was asked for, each saying why, and serve all the same.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TMODS=$BUILD/tests/modules
CTL=$BUILD/reqrouterctl
[ -f "$TMODS/faulty.so" ] || die "no $TMODS/faulty.so (run make first)"
command -v setpriv >/dev/null || die "setpriv is not installed (util-linux)"
command -v prlimit >/dev/null || die "prlimit is not installed (util-linux)"

# The bare defaults a user meets: no XDP program on the veth peer.
TB_PEER_XDP=0
rr_bed 1
SOCK=$RR_TMP/ctl.sock
# faulty alone: in cells (the default isolation) it has cells of its own,
# beside the shared ones (docs/DESIGN.md, "Cell groups"); each other test
# module would be a group more.
MODS=$RR_TMP/mods
mkdir -p "$MODS"
cp "$TMODS/faulty.so" "$MODS/"

# policies: "policy/rt_priority" of every worker thread or cell of
# reqrouter (pid RR_PID), one line each, sorted (/proc/TID/stat fields
# 40 and 41, counted after the command name, which may hold spaces).
policies() {
	local p t
	for p in "$RR_PID" $(pgrep -P "$RR_PID"); do
		for t in /proc/"$p"/task/*; do
			case $(cat "$t/comm" 2>/dev/null) in
			rr-worker* | rr-cell*) ;;
			*) continue ;;
			esac
			sed 's/.*) //' "$t/stat" | awk '{ print $39 "/" $38 }'
		done
	done | sort | uniq -c | awk '{ print $1 "x" $2 }'
}
# status_priority: worker_priority as `reqrouterctl --json status` says it.
status_priority() {
	"$CTL" --control "$SOCK" --json status |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["worker_priority"])'
}
ask() { cli_ask "$1" 7700 "$2"; }

say "--- the default"
rr_start normal -i "$TB_IF_SRV" -q 1 -t 2 --isolation thread \
	--functions-dir "$MODS" --control "$SOCK" || die "reqrouter did not start"
check "the start-up line says normal" \
	grep -qF "2 workers started (sleeping in poll(); normal priority)" "$RR_ERR"
check_eq "both worker threads: SCHED_OTHER" "2x0/0" "$(policies)"
check_eq "status: worker_priority normal" normal "$(status_priority)"
check_eq "faulty answers" hello "$(ask 1 hello)"
rr_kill_wait TERM 5

say "--- worker_priority = realtime, threads"
printf '[reqrouter]\nworker_priority = realtime\n' >"$RR_TMP/rt.conf"
rr_start rt -i "$TB_IF_SRV" -q 1 -t 2 --isolation thread -c "$RR_TMP/rt.conf" \
	--functions-dir "$MODS" --control "$SOCK" || die "reqrouter did not start"
check "the start-up line says realtime, ahead of receive work" \
	grep -qF "2 workers started (sleeping in poll(); realtime (SCHED_FIFO 1) priority, ahead of receive work)" "$RR_ERR"
check_eq "both worker threads: SCHED_FIFO (1), priority 1" "2x1/1" \
	"$(policies)"
check_eq "status: worker_priority realtime" realtime "$(status_priority)"
check_eq "faulty answers" hello "$(ask 1 hello)"

say "faulty 'slow' (300 ms inside the function), while a second ask waits"
ask 3 slow >"$RR_TMP/slow.out" &
ASKER=$!
check "the long call loses realtime priority, said in one line" \
	wait_for 3 grep -q "a call has run [0-9]* ms; normal priority until it returns" "$RR_ERR"
during=$(policies)
say "    during the call: $during"
check "during the call one worker runs at SCHED_OTHER (0)" \
	grep -qx '1x0/0' <<<"$during"
wait "$ASKER"
check_eq "the slow request is answered" slow "$(cat "$RR_TMP/slow.out")"
check "when the call returns its worker is raised again, said in one line" \
	wait_for 3 grep -q "the long call returned; realtime priority again" "$RR_ERR"
check_eq "... both worker threads back at SCHED_FIFO, priority 1" "2x1/1" \
	"$(policies)"
check_eq "one line each" "1 1" \
	"$(grep -c 'normal priority until it returns' "$RR_ERR") $(grep -c 'realtime priority again' "$RR_ERR")"
check_eq "faulty answers after it" hello "$(ask 1 hello)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "--- worker_priority = auto, threads: realtime only while requests wait"
printf '[reqrouter]\nworker_priority = auto\n[function work]\nenabled = yes\nmax_us = 5000\n' \
	>"$RR_TMP/auto.conf"
rr_start auto -i "$TB_IF_SRV" -q 1 -t 1 --isolation thread -c "$RR_TMP/auto.conf" \
	--control "$SOCK" || die "reqrouter did not start"
check "the start-up line says normal, realtime while requests wait" \
	grep -qF "1 worker started (sleeping in poll(); normal priority, realtime (SCHED_FIFO 1) while requests wait over 1 ms)" "$RR_ERR"
check_eq "at rest the worker thread: SCHED_OTHER" "1x0/0" "$(policies)"
check_eq "status: worker_priority auto" auto "$(status_priority)"
# 60 calls of 5 ms at once: the last waits 300 ms for the worker.
tb_cli python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(60):
    s.sendto(b"5000 w%d" % i, (sys.argv[1], 9010))
s.settimeout(3)
got = 0
try:
    while got < 60:
        s.recv(2048)
        got += 1
except socket.timeout:
    pass
print(got)' "$TB_IP4_SRV" >"$RR_TMP/auto.out" 2>&1 &
ASKER=$!
check "while they wait it is raised, said in one line" \
	wait_for 3 grep -q "worker 0/0: its requests wait over 1000 us: realtime priority for 1 s at least (worker_priority = auto" "$RR_ERR"
during=$(policies)
raised=$("$CTL" --control "$SOCK" --json status | python3 -c 'import json, sys; print(json.load(sys.stdin)["workers_raised"])')
say "    while they wait: $during, status says $raised raised"
check_eq "... the worker thread at SCHED_FIFO 1" "1x1/1" "$during"
check_eq "... and status counts it" 1 "$raised"
wait "$ASKER"
check_eq "every request answered" 60 "$(cat "$RR_TMP/auto.out")"
# shellcheck disable=SC2317 # called through wait_for
at_rest() { [ "$(policies)" = 1x0/0 ]; }
check "a second after the wait ends it is back at SCHED_OTHER" \
	wait_for 4 at_rest
check_eq "... and status says none is raised" 0 \
	"$("$CTL" --control "$SOCK" --json status | python3 -c 'import json, sys; print(json.load(sys.stdin)["workers_raised"])')"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "--- cells"
rr_start cells -i "$TB_IF_SRV" -q 1 -t 2 --isolation cell --worker-priority realtime \
	--functions-dir "$MODS" || die "reqrouter with cells did not start"
check "the start-up line says realtime" \
	grep -qF "4 workers started as cells (sleeping in poll(); realtime (SCHED_FIFO 1) priority" "$RR_ERR"
check_eq "every cell (2 threads x 2 groups): SCHED_FIFO, priority 1" "4x1/1" "$(policies)"
check_eq "faulty answers from a cell" hello "$(ask 1 hello)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

# Under --user, realtime priority rests on RLIMIT_RTPRIO, which root
# raises before the privileges go if it holds CAP_SYS_RESOURCE (a
# container's root may not): the outcome must match what this host
# allows.
say "--- cells under --user nobody"
if prlimit --rtprio=1:1 true 2>/dev/null; then
	expect=realtime policy=4x1/1
else
	expect=normal policy=4x0/0
	say "    RLIMIT_RTPRIO cannot be raised here (no CAP_SYS_RESOURCE): normal expected"
fi
rr_start user -i "$TB_IF_SRV" -q 1 -t 2 --isolation cell --user nobody \
	--worker-priority realtime \
	--functions-dir "$MODS" || die "reqrouter --user nobody did not start"
if [ $expect = realtime ]; then
	check "the start-up line says realtime" \
		grep -qF "4 workers started as cells (sleeping in poll(); realtime (SCHED_FIFO 1) priority" "$RR_ERR"
else
	check "the start-up line says normal, and why" \
		grep -qF "4 workers started as cells (sleeping in poll(); normal priority: realtime refused: RLIMIT_RTPRIO is 0 without CAP_SYS_NICE" "$RR_ERR"
fi
check_eq "every cell: as said" "$policy" "$(policies)"
check "no cell warns on its own" eval "! grep -q 'cannot raise itself' '$RR_ERR'"
check_eq "faulty answers from a cell" hello "$(ask 1 hello)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "--- -B"
rr_start busy -i "$TB_IF_SRV" -q 1 -t 1 -B --worker-priority realtime \
	--functions-dir "$MODS" || die "reqrouter -B did not start"
check "the start-up line says normal: a busy-polling worker never sleeps" \
	grep -q "; normal priority: a busy-polling worker never sleeps)" "$RR_ERR"
check_eq "the workers (the shared one, faulty's): SCHED_OTHER" "2x0/0" "$(policies)"
rr_kill_wait TERM 5

say "--- no CAP_SYS_NICE, RLIMIT_RTPRIO 0 (as in a container)"
RR_SAVED=$RR
RR=$RR_TMP/no-realtime
printf '#!/bin/sh\nexec setpriv --bounding-set=-sys_nice,-sys_resource prlimit --rtprio=0:0 %s "$@"\n' \
	"$RR_SAVED" >"$RR"
chmod +x "$RR"
rr_start refused -i "$TB_IF_SRV" -q 1 -t 1 --worker-priority realtime \
	--functions-dir "$MODS" ||
	die "reqrouter without the right to realtime priority did not start"
RR=$RR_SAVED
check "the start-up line says normal, and why" \
	grep -qF "normal priority: realtime refused: RLIMIT_RTPRIO is 0 without CAP_SYS_NICE, or a seccomp filter (RestrictRealtime=) forbids it)" "$RR_ERR"
check_eq "the workers (the shared one, faulty's): SCHED_OTHER" "2x0/0" "$(policies)"
check_eq "faulty answers" hello "$(ask 1 hello)"
check "no worker warns on its own" eval "! grep -q 'cannot raise itself' '$RR_ERR'"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

finish
