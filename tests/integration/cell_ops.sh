#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Operating an instance whose workers are cells (isolation = cell): a
# cell's copy of the functions is frozen at its fork, so a reload, a
# deploy and a change of threads replace the cells, each at the end of a
# round. Under open-loop load on reverse and kv (whose state comes from
# the config), 10 reloads, threads 1 -> 3 -> 1, a deploy that replaces
# echo and one that adds a function (each a cell group of its own) must
# lose no request, answer none
# wrongly, and leave every UMEM frame where it belongs; a reload's new kv
# table is served by the new cells.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=2
TMODS=$BUILD/tests/modules
CTL=$BUILD/reqrouterctl
{ [ -f "$TMODS/shout.so" ] && [ -f "$TMODS/faulty.so" ]; } ||
	die "no test modules in $TMODS (run make first)"
rr_bed $QUEUES
SOCK=$RR_TMP/ctl.sock
TABLE=$RR_TMP/kv.txt
CONF=$RR_TMP/cells.conf
GOOD_CONF=$RR_TMP/good.conf

for ((i = 0; i < 50; i++)); do echo "key$i value $i"; done >"$TABLE"
cp "$TABLE" "$RR_TMP/kv-good.txt"
# Cells are also killed from outside below: reverse must not be
# quarantined for what it did not do.
printf '[reqrouter]\nisolation = cell\n\n[function kv]\ntable = %s\n\n[function reverse]\nquarantine_faults = 0\n' \
	"$TABLE" >"$CONF"
printf '[function kv]\ntable = %s\n' "$RR_TMP/kv-good.txt" >"$GOOD_CONF"
for ((i = 0; i < 50; i += 7)); do echo "key$i"; done >"$RR_TMP/keys.txt"

cells() { pgrep -P "$RR_PID" | sort | tr '\n' ' '; }
ctl() { "$CTL" -s "$SOCK" "$@"; }

rr_start cells -i "$TB_IF_SRV" -q $QUEUES -c "$CONF" --control "$SOCK" ||
	die "reqrouter with isolation = cell did not start"
check_eq "kv answers from its table" "value 7" "$(cli_ask 1 7379 key7)"
check_eq "one cell per worker" $QUEUES "$(pgrep -c -P "$RR_PID")"

say "open loop: reverse at 8000/s and kv at 4000/s for 10 s, while the cells are replaced"
rr_load_bg "$RR_TMP/rev.json" -p 1232 -c 8 -r 8000 -d 10
REV_PID=$LOAD_PID
rr_load_bg "$RR_TMP/kv.json" -p 7379 -f kv --fn-config "$GOOD_CONF" \
	--payloads "$RR_TMP/keys.txt" -c 8 -r 4000 -d 10
KV_PID=$LOAD_PID
sleep 1

before=$(cells)
n=0
for ((r = 1; r <= 10; r++)); do
	ctl reload >/dev/null && n=$((n + 1))
	sleep 0.2
done
check_eq "10 reloads answered ok" 10 "$n"
after=$(cells)
check "the reloads replaced the cells ($before-> $after)" [ "$before" != "$after" ]
check_eq "still one cell per worker" $QUEUES "$(pgrep -c -P "$RR_PID")"

check "threads 3" ctl threads 3
check_eq "three cells per queue" $((QUEUES * 3)) "$(pgrep -c -P "$RR_PID")"
sleep 2
check "threads 1" ctl threads 1
check_eq "one cell per queue again" $QUEUES "$(pgrep -c -P "$RR_PID")"

# Module code gets cells of its own (docs/DESIGN.md, "Cell groups"): the
# echo shout.so brings moves to a group of its own, faulty gets one.
check "deploy shout.so (replaces echo)" ctl deploy "$TMODS/shout.so"
check_eq "the new cells answer with the new echo" "HELLO" "$(cli_ask 1 7 hello)"
check "deploy faulty.so (a new function)" ctl deploy "$TMODS/faulty.so"
check_eq "the added function answers" "hello" "$(cli_ask 1 7700 hello)"
check_eq "three cell groups: three cells per queue" $((QUEUES * 3)) \
	"$(pgrep -c -P "$RR_PID")"
check "the load ran through all of it" kill -0 "$REV_PID" "$KV_PID"

wait "$REV_PID"
check_eq "rrload on reverse exits 0" 0 "$?"
wait "$KV_PID"
check_eq "rrload on kv exits 0" 0 "$?"
rr_load_checks "$RR_TMP/rev.json" 60000 "rev: "
rr_load_checks "$RR_TMP/kv.json" 30000 "kv: "

# A reload's new state reaches the cells.
sed -i 's/^key7 .*/key7 new value/' "$TABLE"
check "reload after changing the table" ctl reload
check_eq "the new cells serve the new table" "new value" "$(cli_ask 1 7379 key7)"

ctl --json stats >"$RR_TMP/stats.json"
check_eq "every UMEM frame is back (rx, worker, tx 0)" 0 \
	"$(rr_umem_held "$RR_TMP/stats.json")"
check_eq "no cell died" 0 "$(grep -c 'crashed\|died outside' "$RR_ERR")"
# kill -9 from outside, at any point of a cell's loop (inside the ring
# lock, mid-batch, asleep): the cell is replaced, at most the request it
# was serving is lost, and every frame comes home.
say "kill -9 of a random cell every 0.1 s, 30 times, under 8000 req/s"
rr_load_bg "$RR_TMP/kill.json" -p 1232 -c 8 -r 8000 -d 5
REV_PID=$LOAD_PID
sleep 0.5
for ((i = 0; i < 30; i++)); do
	mapfile -t now < <(pgrep -P "$RR_PID")
	[ ${#now[@]} -gt 0 ] && kill -KILL "${now[RANDOM % ${#now[@]}]}"
	sleep 0.1
done
wait "$REV_PID"
sent=$(json_get "$RR_TMP/kill.json" sent)
lost=$(json_get "$RR_TMP/kill.json" timeouts)
say "    reverse: sent $sent, answered $(json_get "$RR_TMP/kill.json" answered), lost $lost, wrong $(json_get "$RR_TMP/kill.json" wrong); $(grep -c 'died outside a function\|crashed' "$RR_ERR") deaths logged"
check "kill -9: at most one request lost per kill" [ "$lost" -le 30 ]
check_eq "kill -9: no wrong reply" 0 "$(json_get "$RR_TMP/kill.json" wrong)"
check_eq "kill -9: every death logged, every cell replaced" "30 $((QUEUES * 3))" \
	"$(grep -c 'died outside a function\|crashed' "$RR_ERR") $(pgrep -c -P "$RR_PID")"
check "kill -9: reverse still answers" [ "$(cli_ask 1 1232 olleh)" = hello ]
ctl --json stats >"$RR_TMP/stats.json"
check_eq "kill -9: every UMEM frame is back (rx, worker, tx 0)" 0 \
	"$(rr_umem_held "$RR_TMP/stats.json")"
# A frame lost would count as "kernel": the rest of 4096 no ring holds.
check_eq "kill -9: none is missing (kernel <= 8 on every queue)" True \
	"$(json_eval 'all(q["kernel"] <= 8 and q["fill"] + q["kernel"] == 4096 for q in d["umem_frames"])' "$RR_TMP/stats.json")"

mapfile -t left < <(pgrep -P "$RR_PID")
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
gone=0
for c in "${left[@]}"; do kill -0 "$c" 2>/dev/null || gone=$((gone + 1)); done
check_eq "every cell ended with it" "${#left[@]}" "$gone"

finish
