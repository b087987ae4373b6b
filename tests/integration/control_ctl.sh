#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The control socket and reqrouterctl: a running reqrouter -q 2 answers
# status, stats, health and reload through its socket (default path
# /run/reqrouter/IFACE.sock, root only), as text and as JSON, named by -s
# or found through a config file (-c); the counters
# it reports move with real requests; a second instance on the same
# interface is refused before it touches anything; mistakes get one line
# and their own exit status; after SIGTERM the socket is gone and health
# says the instance is not running. With --control-group, the group's
# members read (status, stats) and are refused every command that changes
# the instance, by their uid as the kernel gives it (SO_PEERCRED); the
# metrics file's temporary does not follow a link planted in its place.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"

rr_bed 2
SOCK=/run/reqrouter/$TB_IF_SRV.sock
M=$RR_TMP/metrics.prom

# py EXPR FILE: evaluate EXPR over the JSON object in FILE (as d).
py() { json_eval "$@"; }

rr_start main -i "$TB_IF_SRV" -q 2 -t 1 --metrics-file "$M" ||
	die "reqrouter did not start"
check "it announces its control socket" grep -q "control socket $SOCK (root only)" "$RR_ERR"
check "the socket exists" test -S "$SOCK"
check_eq "the socket is root's alone (mode 600)" 600 "$(stat -c %a "$SOCK")"

"$CTL" -s "$SOCK" status >"$RR_TMP/status.txt" 2>&1
check_eq "status: exit 0" 0 $?
sed 's/^/    /' "$RR_TMP/status.txt"
check "status names the interface" grep -Eq "^interface +$TB_IF_SRV$" "$RR_TMP/status.txt"
check "status lists reverse on 1232" grep -Eq '^reverse +1232 ' "$RR_TMP/status.txt"
# knotc's -c: the config file, whose interface names the socket.
printf '[reqrouter]\ninterface = %s\n' "$TB_IF_SRV" >"$RR_TMP/ctl.conf"
out=$("$CTL" -c "$RR_TMP/ctl.conf" status 2>&1)
check_eq "-c CONFIG status: exit 0" 0 $?
check "-c CONFIG: the instance of the config's interface" grep -Eq "^interface +$TB_IF_SRV$" <<<"$out"

"$CTL" -s "$SOCK" --json status >"$RR_TMP/status.json"
check_eq "status --json: ready" True "$(py 'd["ready"]' "$RR_TMP/status.json")"
check_eq "status --json: 2 queues, 1 thread" "2 1" \
	"$(py '"%d %d" % (d["queues"], d["threads"])' "$RR_TMP/status.json")"
check_eq "status --json: the pid is reqrouter's" "$RR_PID" \
	"$(py 'd["pid"]' "$RR_TMP/status.json")"
check_eq "status --json: functions and ports" "echo:7 reverse:1232" \
	"$(py '" ".join(sorted("%s:%d" % (f["name"], f["port"]) for f in d["functions"]))' "$RR_TMP/status.json")"

out=$("$CTL" -s "$SOCK" health)
check_eq "health: exit 0 and 'ready'" "0 ready" "$? $out"

# The counters move with requests, and agree with the metrics file.
check "300 requests answered" serves 150
"$CTL" -s "$SOCK" --json stats >"$RR_TMP/stats.json"
rx=$(py 'sum(f["user"]["rx"] for f in d["functions"])' "$RR_TMP/stats.json")
check_eq "stats --json: 300 requests received (150 over IPv4, 150 over IPv6)" 300 "$rx"
check_eq "stats --json: as many replies" 300 \
	"$(py 'sum(f["user"]["tx"] for f in d["functions"])' "$RR_TMP/stats.json")"
check_eq "stats --json: no drop" 0 \
	"$(py 'sum(sum(f["user"]["dropped"].values()) for f in d["functions"])' "$RR_TMP/stats.json")"
check_eq "stats --json: no frame left with a worker at rest" 0 \
	"$(py 'sum(q["worker"] + q["rx"] + q["tx"] for q in d["umem_frames"])' "$RR_TMP/stats.json")"
"$CTL" -s "$SOCK" stats >"$RR_TMP/stats.txt"
check "stats: one line per function" grep -q '^reverse (port 1232): user space rx' "$RR_TMP/stats.txt"
check_eq "stats agree with the metrics file" "$rx" \
	"$(wait_metric "$M" 5 reqrouter_rx_packets_total -- "$rx")"

out=$("$CTL" -s "$SOCK" reload)
check_eq "reload: exit 0" 0 $?
check "reload: says what it did ($out)" grep -q 're-initialised' <<<"$out"

# Mistakes: one line each, their own exit status.
out=$("$CTL" -s "$SOCK" frobnicate 2>&1)
check_eq "unknown command: exit 2" 2 $?
check_eq "unknown command: one line" 1 "$(wc -l <<<"$out")"
out=$("$CTL" --control /run/reqrouter/rr-none-$$.sock status 2>&1)
check_eq "no such instance: exit 3" 3 $?
check "no such instance: says so ($out)" grep -q 'cannot reach .*is reqrouter running' <<<"$out"
out=$("$CTL" 2>&1)
check_eq "no command: exit 2" 2 $?
# A client that connects and says nothing does not stall the instance.
tb_srv python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(3)' "$SOCK" &
SILENT=$!
sleep 0.2
check "a silent client does not stop the others" "$CTL" -s "$SOCK" health
wait $SILENT

# A second instance on the same interface is refused, the first unharmed.
rr_run second -i "$TB_IF_SRV" -q 1
check_eq "second instance: exit 1" 1 "$RR_RC"
check "second instance: says who serves the interface" \
	grep -q "$TB_IF_SRV: reqrouter (pid $RR_PID) already serves it; refused before touching anything" "$RR_ERR"
check "second instance: its socket path not touched" test -S "$SOCK"
check "the first still answers" serves 20
check "the first's socket is still there" test -S "$SOCK"

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "the socket is removed on exit" test ! -e "$SOCK"
out=$("$CTL" -s "$SOCK" health 2>&1)
check_eq "health of a stopped instance: exit 3" 3 $?
out=$("$CTL" -s "$SOCK" --json health 2>/dev/null)
check_eq "health --json of a stopped instance" \
	'{"ok":false,"ready":false,"why":"not running"}' "$out"

# --control none: no socket at all; a group makes it 660.
rr_start nosock -i "$TB_IF_SRV" -q 1 --control none || die "--control none did not start"
check "--control none: no socket" test ! -e "$SOCK"
rr_kill_wait TERM 10
# The group reads; only root and the instance's own user change it. The
# client is nobody in group root, in a directory it may enter, running a
# copy of reqrouterctl it may execute. The metrics file's temporary must
# not follow a link planted under the name the old code used.
PUB=$RR_TMP/pub
if ! { mkdir -p "$PUB" && chmod 755 "$PUB" && cp "$CTL" "$PUB/reqrouterctl" &&
	chmod 755 "$PUB/reqrouterctl"; }; then
	die "cannot prepare $PUB"
fi
echo "precious" >"$RR_TMP/victim"
ln -s "$RR_TMP/victim" "$RR_TMP/metrics.prom.tmp"
rr_start group -i "$TB_IF_SRV" -q 1 --control "$PUB/ctl.sock" --control-group root \
	--metrics-file "$RR_TMP/metrics.prom" ||
	die "--control-group root did not start"
check_eq "--control-group: mode 660" 660 "$(stat -c %a "$PUB/ctl.sock")"
check "--control PATH: reqrouterctl --control reaches it" "$CTL" --control "$PUB/ctl.sock" health
printf '[reqrouter]\ncontrol = %s\n' "$PUB/ctl.sock" >"$RR_TMP/ctl-control.conf"
check "... and -c CONFIG whose control key names it" "$CTL" -c "$RR_TMP/ctl-control.conf" health
as_group() { setpriv --reuid=65534 --regid=0 --clear-groups "$PUB/reqrouterctl" -s "$PUB/ctl.sock" "$@"; }
check "a control-group member reads: status" as_group status
check "a control-group member reads: stats" as_group stats
for cmd in reload "threads 1" "remove echo" "unquarantine echo"; do
	# shellcheck disable=SC2086 # the command and its argument
	out=$(as_group $cmd 2>&1)
	rc=$?
	check "a control-group member may not: $cmd (exit $rc)" test "$rc" -ne 0
	check "... and is told why: $cmd" grep -q "only root and the user it runs as" <<<"$out"
done
check "... echo is still served after the refused remove" \
	bash -c "\"$CTL\" -s \"$PUB/ctl.sock\" --json status | grep -q '\"name\":\"echo\".*\"removed\":false'"
check "root may: reload" "$CTL" -s "$PUB/ctl.sock" reload
sleep 1.2
check "metrics file written" grep -q reqrouter_rx_packets_total "$RR_TMP/metrics.prom"
check_eq "metrics: a link at the old temporary's name is not followed" precious "$(cat "$RR_TMP/victim")"
rr_kill_wait TERM 10
rr_run badgroup -i "$TB_IF_SRV" -q 1 --control-group rr-no-such-group
check_eq "--control-group of a missing group: exit 1" 1 "$RR_RC"
check "--control-group of a missing group: one line" grep -q "no group named 'rr-no-such-group'" "$RR_ERR"

finish
