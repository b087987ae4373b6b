#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The control socket never holds up the main loop: clients that send one
# byte at a time, or connect and say nothing, each hold only their own
# slot and are dropped after their deadline (2 s), while reqrouterctl
# status still answers at once and the main loop goes on rewriting the
# metrics file every second. A command line longer than 256 bytes is
# refused with a line that says so, never cut and run.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

rr_bed 1
CTL=$BUILD/reqrouterctl
SOCK=$RR_TMP/ctl.sock
M=$RR_TMP/metrics.prom

rr_start main -i "$TB_IF_SRV" -q 1 --control "$SOCK" --metrics-file "$M" ||
	die "reqrouter did not start"

# A python client for the misbehaving ones: ARGS are the mode and, for
# drip, how many connections.
client() {
	python3 - "$SOCK" "$@" <<'EOF'
import socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
if mode == "long":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b"status " + b"x" * 300 + b"\n")
    s.settimeout(3)
    print(s.recv(4096).decode().strip())
    sys.exit(0)
# drip N SECONDS: N connections sending "s", "t", ... one byte every
# 100 ms; prints how long the server kept each one open.
n, secs = int(sys.argv[3]), float(sys.argv[4])
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.setblocking(False)
    socks.append(s)
start, open_for = time.monotonic(), [None] * n
while time.monotonic() - start < secs:
    for i, s in enumerate(socks):
        if open_for[i] is not None:
            continue
        try:
            s.send(b"s")
            if s.recv(1) == b"":
                open_for[i] = time.monotonic() - start
        except BlockingIOError:
            pass
        except OSError:
            open_for[i] = time.monotonic() - start
    time.sleep(0.1)
print(" ".join("%.1f" % t if t is not None else "open" for t in open_for))
EOF
}

say "== 8 clients dripping a byte every 100 ms for 4 s"
client drip 8 4 >"$RR_TMP/drip.out" &
DRIP=$!
sleep 0.5
m0=$(stat -c %Y.%N "$M" 2>/dev/null || true)
start=$(date +%s%N)
check "status answers while they drip" "$CTL" --control "$SOCK" status
took=$((($(date +%s%N) - start) / 1000000))
check "... within 500 ms (${took} ms)" test "$took" -lt 500
start=$(date +%s%N)
check "health answers while they drip" "$CTL" --control "$SOCK" health
took=$((($(date +%s%N) - start) / 1000000))
check "... within 500 ms (${took} ms)" test "$took" -lt 500
sleep 1.5
check "the main loop goes on: the metrics file was rewritten meanwhile" \
	test "$(stat -c %Y.%N "$M")" != "$m0"
wait "$DRIP"
say "dripping clients held open for (s): $(cat "$RR_TMP/drip.out")"
held=$(tr ' ' '\n' <"$RR_TMP/drip.out")
check "every dripping client was dropped" bash -c "! grep -q open <<<'$held'"
# shellcheck disable=SC2016 # awk's own fields
check "... after its 2 s deadline, not before (1.8-3 s)" \
	awk '$1 < 1.8 || $1 > 3 { bad = 1 } END { exit bad }' <<<"$held"

say "== more clients than slots (20 for 16)"
client drip 20 1 >/dev/null &
DRIP=$!
sleep 0.3
start=$(date +%s%N)
check "status still answers, once a slot frees" "$CTL" --control "$SOCK" status
took=$((($(date +%s%N) - start) / 1000000))
check "... within 4 s (${took} ms)" test "$took" -lt 4000
wait "$DRIP"

say "== a line longer than 256 bytes"
out=$(client long)
say "reply: $out"
check "refused, not cut and run" grep -q '"ok":false' <<<"$out"
check "... and says why" grep -q 'longer than 256 bytes' <<<"$out"

check "still answering" "$CTL" --control "$SOCK" status
rr_kill_wait TERM 10
check_eq "SIGTERM: exit status" 0 "$RR_RC"
finish
