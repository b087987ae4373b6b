#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Control sockets left by an instance that died, and reqrouterctl's
# stats for a person. An instance killed with SIGKILL leaves its socket
# file; the next one on the interface replaces it (a live one is still
# refused, and a file that is no socket is kept and refused).
# reqrouterctl, looking for the one instance, skips socket files nobody
# listens on and says so in one line. stats shows per function the drops
# by reason in user space (bad checksums) and the XDP program's verdicts
# (sources outside the allow-list), the faults, and every queue's UMEM
# frames; stats --watch 1 prints again every second until SIGINT (exit
# 0), and ends with exit 3 once the instance is gone. -s is --control.
#
# reqrouterctl looks in /run/reqrouter, where the other tests' instances
# may be: it runs in a mount namespace of its own with $RUN bind-mounted
# there, and the instances here put their sockets in $RUN.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"
command -v unshare >/dev/null || die "no unshare (util-linux)"

rr_bed 2
RUN=$RR_TMP/run
mkdir -p "$RUN" /run/reqrouter
SOCK=$RUN/$TB_IF_SRV.sock
CONF=$RR_TMP/rr.conf
# The client (198.18.0.2) may call echo, not reverse.
printf '[function reverse]\nallow = 192.0.2.0/24\n' >"$CONF"

# ctl_here ARGS...: reqrouterctl seeing $RUN as /run/reqrouter.
ctl_here() {
	# shellcheck disable=SC2016 # the inner shell expands them
	unshare -m --propagation private sh -c \
		'mount --bind "$1" /run/reqrouter && shift && exec "$@"' \
		sh "$RUN" "$CTL" "$@"
}

# A socket file that nobody listens on: bound, then closed unremoved.
stale_socket() {
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"
}

# wait_gone PID SECONDS: true once PID has exited; its status in RC.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			RC=$?
			return 0
		fi
		sleep 0.1
	done
	return 1
}

rr_start first -i "$TB_IF_SRV" -q 2 -c "$CONF" --control "$SOCK" ||
	die "reqrouter did not start"
rr_kill_wait KILL 5
check "SIGKILL leaves the socket file behind" test -S "$SOCK"
"$CTL" -s "$SOCK" status >/dev/null 2>&1
check_eq "reqrouterctl -s on it: no instance (exit 3)" 3 $?

rr_start second -i "$TB_IF_SRV" -q 2 -c "$CONF" --control "$SOCK" ||
	die "reqrouter did not start over the stale socket"
check "the next instance replaces the stale socket, and says so" \
	grep -q "control socket $SOCK was left by an instance that died; replaced" "$RR_ERR"
"$CTL" -s "$SOCK" health >/dev/null
check_eq "the new socket answers: health exit 0" 0 $?
SECOND_PID=$RR_PID

# Another interface (lo, which nobody serves), the same socket path: the
# socket is the one in use (on the same interface the owner's lock would
# refuse it first).
rr_run third -i lo -q 1 --control "$SOCK"
check_eq "a third on the live socket: exit 1" 1 "$RR_RC"
check "it says the socket is in use" grep -q "control socket $SOCK is in use" "$RR_ERR"
touch "$RUN/file.sock"
rr_run fourth -i lo -q 1 --control "$RUN/file.sock"
check_eq "a file that is no socket at the path: exit 1" 1 "$RR_RC"
check "it says so" grep -q "$RUN/file.sock is a file that is no socket" "$RR_ERR"
check "the file is kept" test -f "$RUN/file.sock"
rm -f "$RUN/file.sock"
RR_PID=$SECOND_PID

stale_socket "$RUN/old0.sock"
ctl_here status >"$RR_TMP/status.txt" 2>"$RR_TMP/status.err"
check_eq "reqrouterctl status beside a stale socket: exit 0" 0 $?
check "it found the live instance" \
	grep -Eq "^interface +$TB_IF_SRV$" "$RR_TMP/status.txt"
check "it says, in one line, that it skipped the stale one" \
	grep -q '^reqrouterctl: skipped /run/reqrouter/old0.sock: nobody listens' \
	"$RR_TMP/status.err"
check_eq "one line on stderr" 1 "$(wc -l <"$RR_TMP/status.err")"

# Drops: three bad UDP checksums to echo (user space), requests to
# reverse from outside its allow-list (XDP).
check_eq "echo answers" hello "$(cli_ask 1 7 hello)"
for i in 1 2 3; do
	cli_ask 0.2 1232 "refused $i" >/dev/null
done
tb_cli python3 "$RR_LIB/rawframes.py" bad-csum --ifname "$TB_IF_CLI" \
	--src-mac "$TB_MAC_CLI" --dst-mac "$TB_MAC_SRV" --src-ip "$TB_IP4_CLI" \
	--dst-ip "$TB_IP4_SRV" --dport 7 --count 3 >/dev/null
sleep 0.3
"$CTL" -s "$SOCK" stats >"$RR_TMP/stats.txt"
check_eq "stats: exit 0" 0 $?
sed 's/^/    /' "$RR_TMP/stats.txt"
check "stats: echo's totals" \
	grep -Eq '^echo \(port 7\): user space rx [0-9]+ tx 1' "$RR_TMP/stats.txt"
check "stats: echo's drops by reason" \
	grep -q '^  dropped in user space: bad_checksum 3$' "$RR_TMP/stats.txt"
check "stats: the faults" grep -q '^  faults: crash 0, timeout 0$' "$RR_TMP/stats.txt"
check "stats: the XDP program's drops by reason" \
	grep -Eq '^  drop: .*source_not_allowed 3' "$RR_TMP/stats.txt"
check "stats: UMEM frames per queue" \
	grep -Eq '^ +0( +[0-9]+){6}$' "$RR_TMP/stats.txt"
check_eq "stats: queue 0's frames add up to 4096" 4096 \
	"$(awk '/^UMEM frames/ { on = 1; next } on && $1 == "0" { print $2 + $3 + $4 + $5 + $6 + $7 }' "$RR_TMP/stats.txt")"

"$CTL" -s "$SOCK" status --watch >/dev/null 2>&1
check_eq "--watch with another command: exit 2" 2 $?
"$CTL" -s "$SOCK" stats --watch 0 >/dev/null 2>&1
check_eq "--watch 0: exit 2" 2 $?

"$CTL" -s "$SOCK" stats --watch 1 >"$RR_TMP/watch.txt" 2>&1 &
WATCH=$!
sleep 2.5
kill -INT "$WATCH"
if wait_gone "$WATCH" 2; then
	check_eq "stats --watch 1: SIGINT ends it with exit 0" 0 "$RC"
else
	bad "stats --watch 1: still running 2 s after SIGINT"
	kill -KILL "$WATCH"
fi
n=$(grep -c "^Every 1s: reqrouterctl stats of $SOCK" "$RR_TMP/watch.txt")
check "stats --watch 1: printed at least twice in 2.5 s ($n)" test "$n" -ge 2
check "stats --watch 1: each time the counters" \
	test "$(grep -c '^echo (port 7)' "$RR_TMP/watch.txt")" = "$n"

"$CTL" -s "$SOCK" stats --watch 1 >"$RR_TMP/watch2.txt" 2>&1 &
WATCH=$!
sleep 0.5
rr_kill_wait TERM 10
check_eq "SIGTERM: the instance exits 0" 0 "$RR_RC"
if wait_gone "$WATCH" 3; then
	check_eq "stats --watch: the instance gone, exit 3" 3 "$RC"
else
	bad "stats --watch: still running 3 s after the instance went"
	kill -KILL "$WATCH"
fi
check "stats --watch: says it cannot reach it" \
	grep -q "cannot reach $SOCK" "$RR_TMP/watch2.txt"

ctl_here status >/dev/null 2>"$RR_TMP/none.err"
check_eq "only a stale socket left: no instance (exit 3)" 3 $?
check "it says it skipped it, and that none runs" \
	grep -q 'skipped /run/reqrouter/old0.sock' "$RR_TMP/none.err"
check "... and that no reqrouter runs here" \
	grep -q 'no reqrouter is running here' "$RR_TMP/none.err"
finish
