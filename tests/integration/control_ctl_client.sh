#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouterctl as a client, against stand-in control sockets (no
# reqrouter, no bed): knotc's habits (-s the socket; -c the config file,
# which names it; -c SOCKET still taken, with one line saying it is
# deprecated), --timeout as the wait for the answer (a socket that never
# answers: one line, exit 3, within about the timeout), drain's limit as
# --wait (the old --timeout drain refused with a hint), stats --watch
# with rates beside the totals (--count ends it), top's two error
# figures each named, and an answer that is no JSON: one line, exit 3.
cd "$(dirname "$0")/../.." || exit 1
source tools/lib/checks.sh
BUILD=${BUILD:-build}
CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"
command -v python3 >/dev/null || skip "no python3 for the stand-in sockets"

T=$(mktemp -d /tmp/rr-ctl-client.XXXXXX)
PIDS=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

# fake MODE SOCKET: a stand-in instance at SOCKET. ok: answers status,
# stats (its rx counting up 100 a request), top, health and drain as reqrouter
# does; garbage: answers what is no JSON; silent: takes the call and never
# answers.
cat >"$T/fake.py" <<'EOF'
import json, socket, sys
mode, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(16)
held, n = [], 0
def answer(req):
    global n
    if req.startswith("status"):
        return {"ok": True, "interface": "fake0", "ready": True,
                "uptime_s": 12.5, "functions": [{"name": "echo", "port": 7,
                "tier": "user", "cached": False, "in_kernel": False,
                "pure": True, "stateful": False, "removed": False,
                "quarantined": False, "module": None}]}
    if req.startswith("stats"):
        n += 1
        return {"ok": True, "functions": [{"name": "echo", "port": 7,
                "user": {"rx": 100 * n, "tx": 100 * n,
                         "dropped": {"bad_csum": n}}}],
                "xdp": {"pass/not_ours": 10 * n, "drop/source_not_allowed": 0},
                "umem_frames": []}
    if req.startswith("top"):
        return {"ok": True, "functions": [{"name": "echo", "port": 7,
                "heavy_hitters": True, "sample": 100, "requests_per_s": 900,
                "candidates_lost": 0,
                "sources": {"error_bound": 11, "top": [{"source": "192.0.2.1",
                    "requests_per_s": 800, "error": 57, "share": 0.9}]},
                "prefixes": {"error_bound": 22, "top": []}}]}
    if req.startswith("health"):
        return {"ok": True, "ready": True}
    if req.startswith("drain"):
        return {"ok": True, "message": "draining"}
    return {"ok": False, "message": "unknown command"}
while True:
    c, _ = s.accept()
    if mode == "silent":
        held.append(c)
        continue
    try:  # a client that only checks the socket is there closes at once
        req = c.makefile().readline()
        if mode == "garbage":
            c.sendall(b"<html>\x01 not json\n at all")
        else:
            c.sendall((json.dumps(answer(req), separators=(",", ":")) + "\n").encode())
    except OSError:
        pass
    c.close()
EOF
fake() {
	python3 "$T/fake.py" "$1" "$2" &
	PIDS+=($!)
	wait_for 5 test -S "$2" || die "the stand-in at $2 did not start"
}
fake ok "$T/ok.sock"
fake garbage "$T/garbage.sock"
fake silent "$T/silent.sock"

say "== -s SOCKET, -c CONFIG"
out=$("$CTL" -s "$T/ok.sock" status 2>&1)
check_eq "-s SOCKET status: exit 0" 0 $?
check "-s SOCKET status: the interface ($out)" grep -Eq '^interface +fake0$' <<<"$out"
check "... and the function, built in" grep -Eq '^echo +7 .* built in$' <<<"$out"
printf '[reqrouter]\ninterface = fake0\ncontrol = %s\n\n[function nosuch]\nport = 9\n' \
	"$T/ok.sock" >"$T/with-control.conf"
out=$("$CTL" -c "$T/with-control.conf" status 2>&1)
check_eq "-c CONFIG: the socket its control key names (exit 0)" 0 $?
check "-c CONFIG: status answered" grep -Eq '^interface +fake0$' <<<"$out"
check "-c CONFIG: its functions are not checked here" eval "! grep -q nosuch <<<\"\$out\""
printf '[reqrouter]\ninterface = rrx%s\n' $(($$ % 100000)) >"$T/iface.conf"
out=$("$CTL" -c "$T/iface.conf" status 2>&1)
check_eq "-c CONFIG without control: its interface's socket (exit 3, none there)" 3 $?
check "... named ($out)" grep -q "/run/reqrouter/rrx$(($$ % 100000)).sock" <<<"$out"
printf '[reqrouter]\ncontrol = none\n' >"$T/none.conf"
out=$("$CTL" -c "$T/none.conf" status 2>&1)
check_eq "-c CONFIG with control = none: exit 3" 3 $?
check_eq "... one line" 1 "$(grep -c '' <<<"$out")"
out=$("$CTL" -c "$T/missing.conf" status 2>&1)
check_eq "-c of a missing file: exit 2" 2 $?
check "... one line saying so ($out)" grep -q "cannot open config file" <<<"$out"
out=$("$CTL" -c "$T/ok.sock" status 2>"$T/err")
check_eq "-c SOCKET (the old way): still answered" 0 $?
check "... status shown" grep -Eq '^interface +fake0$' <<<"$out"
check_eq "... with one line on stderr" 1 "$(grep -c '' "$T/err")"
check "... saying it is deprecated ($(cat "$T/err"))" grep -q "deprecated.*-s" "$T/err"
out=$("$CTL" -c "$T/gone.sock" health 2>&1)
check_eq "-c of a missing NAME.sock (an instance not running, the old way): exit 3" 3 $?
check "... deprecated, then cannot reach it ($out)" grep -q "cannot reach $T/gone.sock" <<<"$out"
out=$("$CTL" --control "$T/ok.sock" health 2>&1)
check_eq "--control SOCKET, as reqrouter's option: health ready" "0 ready" "$? $out"

say "== --timeout: the wait for the answer"
start=$(date +%s%N)
out=$("$CTL" -s "$T/silent.sock" --timeout 1 status 2>&1)
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
check_eq "a socket that never answers, --timeout 1: exit 3" 3 "$rc"
check "... within 1-2 s (${took} ms)" test "$took" -ge 900 -a "$took" -lt 2500
check_eq "... one line" 1 "$(grep -c '' <<<"$out")"
check "... saying so ($out)" grep -q "did not answer within 1 s" <<<"$out"
out=$("$CTL" -s "$T/ok.sock" -t x status 2>&1)
check_eq "-t x: exit 2" 2 $?

say "== drain's limit is --wait"
out=$("$CTL" -s "$T/ok.sock" --timeout 30 drain 2>&1)
check_eq "the old drain --timeout: refused, exit 2" 2 $?
check "... with a one-line hint ($out)" grep -q -- "--wait SECS" <<<"$out"
check_eq "... one line" 1 "$(grep -c '' <<<"$out")"
out=$("$CTL" -s "$T/ok.sock" --quiet 5 --wait 2 drain 2>&1)
check_eq "--quiet above --wait: exit 2" 2 $?

say "== stats --watch: rates beside the totals"
"$CTL" -s "$T/ok.sock" stats --watch 1 --count 2 >"$T/watch.txt" 2>&1
check_eq "stats --watch 1 --count 2: exit 0 after two answers" 0 $?
sed 's/^/    /' "$T/watch.txt"
check_eq "two rounds" 2 "$(grep -c '^Every 1s' "$T/watch.txt")"
check "the second round has each counter's rate (rx about 100/s)" \
	grep -Eq '^echo \(port 7\): user space rx [0-9]+ \((9[0-9]|10[0-9])\.[0-9]/s\) tx [0-9]+ \([0-9.]+/s\)' \
	"$T/watch.txt"
check "... the drops' too" grep -Eq '^  dropped in user space: bad_csum [0-9]+ \([0-9.]+/s\)' "$T/watch.txt"
check "... and the XDP verdicts'" grep -Eq '^  pass: not_ours [0-9]+ \([0-9.]+/s\)' "$T/watch.txt"
check "it says what the rates are" grep -q '^(N/s): each counter.s rate over the last' "$T/watch.txt"
out=$("$CTL" -s "$T/ok.sock" stats --count 2 2>&1)
check_eq "--count without --watch: exit 2" 2 $?

say "== top names its two error figures"
"$CTL" -s "$T/ok.sock" top >"$T/top.txt" 2>&1
check_eq "top: exit 0" 0 $?
sed 's/^/    /' "$T/top.txt"
check "the sketch's bound, per kind, said for what it is" \
	grep -q "the sketch's bound (what callers sharing a key's counters may add.*+-11/s per source, +-22/s per prefix" "$T/top.txt"
check "the rows' column says it is a 95 % range" grep -Eq '^  source +requests/s +\+- \(95%\) +share$' "$T/top.txt"
check "... and a line says what it adds up" grep -q "^+- (95%): .*the sketch's bound plus the sampling" "$T/top.txt"

say "== an answer that is no JSON"
for cmd in status stats top health "--json status"; do
	# shellcheck disable=SC2086 # the command and its option
	out=$("$CTL" -s "$T/garbage.sock" $cmd 2>&1)
	rc=$?
	check_eq "$cmd: exit 3" 3 "$rc"
	check_eq "$cmd: one line" 1 "$(grep -c '' <<<"$out")"
	check "$cmd: saying so ($out)" grep -q "not the instance's JSON" <<<"$out"
done
finish
