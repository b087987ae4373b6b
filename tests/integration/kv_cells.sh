#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kv's table lives in memory that every worker shares (rr_fn_shared_alloc),
# so a value one cell stores every other cell reads. reqrouter -q 1 -t 2
# --isolation cell serves kv with writable = yes from two cells, to which
# the XDP program hands requests in turn: SETs, overwrites and DELs, each
# from a socket of its own (a new source port), and every read after a
# write answers what was written, whichever cell took it. Both cells
# served. The same run with kv loaded from its module (kv.so, which finds
# rr_fn_shared_alloc in reqrouter) and with --isolation thread gives the
# same answers, word for word. A reload builds the table from the file
# again: writes made before it are gone. Without writable, SET and DEL
# change nothing and are answered as keys that are not there.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

PORT=7379
MODS=$BUILD/functions
[ -f "$MODS/kv.so" ] || die "no module $MODS/kv.so (run make first)"

rr_bed 1
M=$RR_TMP/metrics.prom
TABLE=$RR_TMP/kv.txt
RW_CONF=$RR_TMP/rw.conf
RO_CONF=$RR_TMP/ro.conf
OPS=$RR_TMP/kvops.py

for ((i = 0; i < 20; i++)); do echo "key$i value of key $i"; done >"$TABLE"
printf '[function kv]\ntable = %s\nwritable = yes\ncapacity = 1000\n' \
	"$TABLE" >"$RW_CONF"
printf '[function kv]\ntable = %s\n' "$TABLE" >"$RO_CONF"
# kv.so alone, in a directory of root's that nobody else may write to.
mkdir -m 755 "$RR_TMP/mods"
cp "$MODS/kv.so" "$RR_TMP/mods/"
chmod 644 "$RR_TMP/mods/kv.so"

# The client: each request from a socket of its own, one at a time, the
# reply checked against what a shared table must answer. Prints the
# transcript (compared between runs) and, on stderr, each wrong reply.
cat >"$OPS" <<'EOF'
import socket, sys

addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
wrong = 0

def ask(req, want):
    global wrong
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(2)
        s.sendto(req.encode(), (addr, port))
        try:
            got = s.recv(65535).decode(errors="replace")
        except socket.timeout:
            got = "<none>"
    print("%s => %s" % (req[:40], got))
    if got != want:
        wrong += 1
        print("wrong: %r => %r, not %r" % (req[:40], got, want),
              file=sys.stderr)

for i in range(n):
    ask("SET new%d first %d" % (i, i), "OK")
    ask("new%d" % i, "first %d" % i)
for i in range(0, n, 2):
    ask("SET new%d second %d" % (i, i), "OK")
for i in range(0, n, 3):
    ask("DEL new%d" % i, "OK")
for i in range(n):
    want = "" if i % 3 == 0 else "second %d" % i if i % 2 == 0 \
        else "first %d" % i
    ask("new%d" % i, want)
ask("SET key7 changed", "OK")
ask("key7", "changed")
ask("key8", "value of key 8")
ask("DEL key9", "OK")
ask("key9", "")
ask("SET long " + "v" * 1025, "ERR too long")
ask("SET ", "ERR no key")
print("%d wrong" % wrong)
sys.exit(1 if wrong else 0)
EOF

# kvops N TRANSCRIPT: the client's N-key run into TRANSCRIPT; its status.
kvops() {
	tb_cli python3 "$OPS" "$TB_IP4_SRV" $PORT "$1" >"$2" 2>"$2.err"
	local rc=$?
	head -n 5 "$2.err" | sed 's/^/    /'
	return $rc
}
# ask KEY: kv's reply from an ordinary socket.
ask() { cli_ask 1 $PORT "$1"; }
# served_by THREAD: kv requests the worker THREAD took off its socket.
served_by() {
	metric "$M" reqrouter_rx_packets_total 'function="kv"' "thread=\"$1\""
}

# run NAME ISOLATION [ARGS...]: the client's run against kv served with
# ISOLATION by two workers on one queue, threads FIRST and FIRST + 1 of
# the CELLS cells (kv from a module has a cell group of its own, threads 2
# and 3 beside the shared 0 and 1: docs/DESIGN.md, "Cell groups");
# transcript in $RR_TMP/NAME.txt.
FIRST=0 CELLS=2
run() {
	local name=$1 iso=$2 total w0 w1
	shift 2
	rm -f "$M" # no numbers of the run before
	rr_start "$name" -i "$TB_IF_SRV" -q 1 -t 2 --isolation "$iso" \
		-c "$RW_CONF" --metrics-file "$M" --metrics-detail socket "$@" ||
		die "$name: reqrouter --isolation $iso did not start"
	[ "$iso" = cell ] &&
		check_eq "$name: $CELLS cells" "$CELLS" "$(pgrep -c -P "$RR_PID")"
	kvops 100 "$RR_TMP/$name.txt"
	check_eq "$name: every read after a write answers what was written" \
		0 $?
	total=$(grep -c . "$RR_TMP/$name.txt")
	wait_metric "$M" 5 reqrouter_rx_packets_total 'function="kv"' -- \
		$((total - 1)) >/dev/null
	w0=$(served_by $FIRST)
	w1=$(served_by $((FIRST + 1)))
	say "    requests taken by worker $FIRST: $w0, by worker $((FIRST + 1)): $w1"
	check "$name: worker $FIRST served kv" [ "$w0" -gt 100 ]
	check "$name: worker $((FIRST + 1)) served kv" [ "$w1" -gt 100 ]
	check "$name: stores counted as kv_sets" [ "$(metric "$M" \
		reqrouter_function_events_total 'function="kv"' \
		'counter="kv_sets"')" -gt 100 ]
}

run cells cell
# A reload: the table from the file again, in new cells.
kill -HUP "$RR_PID"
check "the reload is reported" \
	wait_for 5 grep -q 'reload: 1 function re-initialised' "$RR_ERR"
check_eq "after a reload: a key changed before it has the file's value" \
	"value of key 7" "$(ask key7)"
check_eq "after a reload: a key stored before it is gone" "<empty>" \
	"$(ask new1)"
check_eq "after a reload: writes work" "OK" "$(ask 'SET new1 again')"
check_eq "after a reload: and are read" "again" "$(ask new1)"
rr_kill_wait TERM 10
check_eq "cells: SIGTERM, exit 0" 0 "$RR_RC"

FIRST=2 CELLS=4
run module cell --functions-dir "$RR_TMP/mods"
FIRST=0 CELLS=2
check "module: kv is served from kv.so" \
	grep -q "kv.so" "/proc/$RR_PID/maps"
rr_kill_wait TERM 10
check "module: the same answers as the built-in kv" \
	cmp -s "$RR_TMP/cells.txt" "$RR_TMP/module.txt"

run threads thread
rr_kill_wait TERM 10
check "threads: the same answers as cells" \
	cmp -s "$RR_TMP/cells.txt" "$RR_TMP/threads.txt"

# Not writable (the default): SET and DEL are keys that are not there.
rm -f "$M"
rr_start ro -i "$TB_IF_SRV" -q 1 -t 2 --isolation cell -c "$RO_CONF" \
	--metrics-file "$M" || die "reqrouter with a read-only kv did not start"
for ((i = 0; i < 4; i++)); do
	check_eq "read-only: SET gets an empty reply ($i)" "<empty>" \
		"$(ask 'SET key7 changed')"
	check_eq "read-only: DEL gets an empty reply ($i)" "<empty>" \
		"$(ask 'DEL key8')"
done
check_eq "read-only: key7 keeps the file's value" "value of key 7" \
	"$(ask key7)"
check_eq "read-only: key8 is still there" "value of key 8" "$(ask key8)"
check_eq "read-only: SET and DEL counted as misses" 8 \
	"$(wait_metric "$M" 5 reqrouter_function_events_total \
		'function="kv"' 'counter="kv_misses"' -- 8)"
rr_kill_wait TERM 10
check_eq "read-only: SIGTERM, exit 0" 0 "$RR_RC"

finish
