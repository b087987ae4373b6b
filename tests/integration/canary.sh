#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Canaries (docs/DESIGN.md, "Canaries"): reqrouterctl deploy --canary 20
# runs the test module echo2 (echo, version 2.0, whose reply starts "v2")
# beside the built-in echo, and of 400 client addresses about a fifth get
# its answers, each address always the same version; status shows both
# with their shares, and the metrics count each under its version. Bad input
# (a second canary, a share out of range, promote or rollback with no
# canary, a canary of a function not served or of a module of another
# API) gets one line and leaves both versions serving as they were.
# promote gives every address the new version, rollback of the next
# canary every address the running one. Under a steady load from every
# address and rrload, canary, promote, canary and rollback of reverse
# (copies of reverse.so) lose nothing. A canary that crashes, fails or
# is slow where the running version answers is rolled back on its own
# (canary_rollback). The config's canary = PATH PERCENT is applied at
# start and by reloads; kv keeps a table per version; echo's XDP
# implementation answers its share only.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
TB_PEER_XDP=0

MODS=$BUILD/functions
TMODS=$BUILD/tests/modules
{ [ -f "$MODS/echo.so" ] && [ -f "$TMODS/echo2.so" ]; } ||
	die "no modules in $MODS and $TMODS (run make first)"

rr_bed 2
CTL=$BUILD/reqrouterctl
SOCK=/run/reqrouter/$TB_IF_SRV.sock
ctl() { "$CTL" --socket "$SOCK" "$@"; }

# 400 client addresses beside the bed's own: 198.18.2.1 on, none that
# ends in .0 or .255 (which the guards take for broadcasts).
N=400
for ((i = 0; i < N; i++)); do
	echo "198.18.$((2 + i / 200)).$((1 + i % 200))"
done >"$RR_TMP/addrs"
sed "s|.*|addr add &/32 dev $TB_IF_CLI|" "$RR_TMP/addrs" >"$RR_TMP/batch"
tb_cli ip -batch "$RR_TMP/batch" || die "cannot add the client addresses"

# split PORT [TEXT]: how the addresses' answers to TEXT (hello) fall,
# three asks each.
split() {
	tb_cli python3 $RR_LIB/sources.py --dst "$TB_IP4_SRV" --port "$1" \
		--addrs "$RR_TMP/addrs" --asks 3 --text "${2:-hello}" \
		>"$RR_TMP/split.json"
}
# got REPLY: the addresses that got only REPLY in the last split.
got() { json_eval "d['by_reply'].get('$1', 0)" "$RR_TMP/split.json"; }
# echo_field EXPR: EXPR of echo's entry f in status --json.
echo_field() {
	ctl --json status |
		json_eval "(lambda f: $1)([f for f in d['functions'] if f['name'] == 'echo'][0])" -
}
# refused WHAT ARGS...: reqrouterctl ARGS fails with one line.
refused() {
	local what=$1 out rc
	shift
	out=$(ctl "$@" 2>&1)
	rc=$?
	check "$what: refused in one line (exit $rc)" \
		test "$rc" -ne 0 -a "$(wc -l <<<"$out")" = 1
	say "    $out"
}

M=$RR_TMP/metrics.prom
rr_start canary -i "$TB_IF_SRV" -q 2 --metrics-file "$M" ||
	die "reqrouter did not start"
split 7
check_eq "before: every address gets the built-in echo" "$N" "$(got hello)"

out=$(ctl deploy --canary 20 "$TMODS/echo2.so")
check_eq "deploy --canary 20 echo2.so: exit 0" 0 $?
say "    $out"
split 7
new=$(got "v2 hello") old=$(got hello)
say "    $new addresses get the canary, $old the running version"
check "about 20 % of the addresses get the canary (50-110 of $N)" \
	test "$new" -ge 50 -a "$new" -le 110
check_eq "the others get the running version" $((N - new)) "$old"
check_eq "no address got both versions, none went unanswered" "0 0" \
	"$(json_get "$RR_TMP/split.json" mixed none)"
check_eq "status: the running version's share" 80.0 "$(echo_field "f['share']")"
check_eq "status: the canary's share, module and version" \
	"20.0 $(realpath "$TMODS/echo2.so") 2.0+canary" \
	"$(echo_field "' '.join(str(f['canary'][k]) for k in ('share', 'module', 'version'))")"
# Each version's requests under its own version label: the built-in's
# under reqrouter's version, the canary's under the one it declares.
wait_metric "$M" 3 reqrouter_tx_packets_total 'version="2.0+canary"' -- \
	$((3 * new)) >/dev/null
check_eq "metrics: the replies of each version under its version label" \
	"$((3 * (N + old))) $((3 * new))" \
	"$(metric "$M" reqrouter_tx_packets_total 'function="echo"' "version=\"$(cat VERSION)\"") $(metric "$M" reqrouter_tx_packets_total 'function="echo"' 'version="2.0+canary"')"
check "stats' text has the canary's line beside the running version's" \
	bash -c "'$CTL' --socket '$SOCK' stats | grep -q '^echo 2.0+canary (port 7):' &&
		'$CTL' --socket '$SOCK' stats | grep -q '^echo (port 7):'"
check_eq "top: echo once, its canary's sources in its sketch" 1 \
	"$(ctl --json top | json_eval "sum(f['name'] == 'echo' for f in d['functions'])" -)"
check "status's text shows both versions" \
	bash -c "'$CTL' --socket '$SOCK' status | grep -Eq '^ +canary +20.0%'"

# Bad input: one line each, both versions as they were.
refused "a second canary" deploy --canary 10 "$TMODS/shout.so"
refused "a share of 0" deploy --canary 0 "$TMODS/shout.so"
refused "a share of 100" deploy --canary 100 "$TMODS/shout.so"
refused "a share of 12.55" deploy --canary 12.55 "$TMODS/shout.so"
refused "promote with no canary" promote reverse
refused "rollback with no canary" rollback reverse
refused "a canary of a function not served" deploy --canary 5 "$TMODS/upper.so"
old_api_module "$RR_TMP/old.so" || die "cannot build the old-API module"
refused "a canary of a module of another API" deploy --canary 5 "$RR_TMP/old.so"
out=$(ctl reload 2>&1)
check_eq "a reload while a canary runs: exit 0" 0 $?
split 7
check_eq "after the refusals: the same addresses on each version" \
	"$new $old 0 0" "$(got "v2 hello") $(got hello) $(json_get "$RR_TMP/split.json" mixed none)"

out=$(ctl promote echo)
check_eq "promote echo: exit 0" 0 $?
say "    $out"
split 7
check_eq "after promote: every address gets the new version" "$N" "$(got "v2 hello")"
check_eq "status: one version, all the sources" "100.0 None" \
	"$(echo_field "f'{f[\"share\"]} {f.get(\"canary\")}'")"
check_eq "status names the promoted module and its version" \
	"$(realpath "$TMODS/echo2.so") 2.0" \
	"$(echo_field "f['module'] + ' ' + f['version']")"

out=$(ctl deploy --canary 50 "$MODS/echo.so")
check_eq "deploy --canary 50 echo.so: exit 0" 0 $?
split 7
say "    $(got hello) of $N addresses get the canary"
check "about half the addresses get the canary (140-260)" \
	test "$(got hello)" -ge 140 -a "$(got hello)" -le 260
out=$(ctl rollback echo)
check_eq "rollback echo: exit 0" 0 $?
say "    $out"
split 7
check_eq "after rollback: every address gets the running version" "$N" "$(got "v2 hello")"
check "the rolled back module is unloaded" \
	bash -c "! grep -q '$(realpath "$MODS/echo.so")' /proc/$RR_PID/maps"
# A deploy after the rollback: the running version's module goes, and the
# idle canary slot must not name its function any longer (stats read it).
out=$(ctl deploy "$MODS/echo.so")
check_eq "deploy echo.so after the rollback: exit 0" 0 $?
ctl stats >/dev/null
check_eq "stats after deploy, canary, rollback, deploy: exit 0" 0 $?
check "reqrouter still serves" kill -0 "$RR_PID"
split 7
check_eq "after that deploy: every address gets echo.so" "$N" "$(got hello)"

# Nothing lost: canary, promote, canary, rollback of reverse under a
# steady load from every address and rrload's from the bed's own.
mkdir -p "$RR_TMP/a" "$RR_TMP/b"
cp "$MODS/reverse.so" "$RR_TMP/a/reverse.so"
cp "$MODS/reverse.so" "$RR_TMP/b/reverse.so"
rr_load_bg "$RR_TMP/load.json" -p 1232 -c 4 -r 3000 -d 4 -l 1-1400
tb_cli_bg python3 $RR_LIB/sources.py --dst "$TB_IP4_SRV" --port 1232 \
	--addrs "$RR_TMP/addrs" --duration 4 --allow olleh \
	>"$RR_TMP/steady.json"
STEADY=$TB_PID
RR_BG_PIDS+=("$STEADY")
sleep 0.5
steps=0
for step in "deploy --canary 30 $RR_TMP/a/reverse.so" "promote reverse" \
	"deploy --canary 30 $RR_TMP/b/reverse.so" "rollback reverse"; do
	# shellcheck disable=SC2086 # the step's words
	ctl $step >/dev/null && steps=$((steps + 1))
	sleep 0.5
done
check_eq "canary, promote, canary, rollback under load: all done" 4 "$steps"
wait "$LOAD_PID"
rr_load_checks "$RR_TMP/load.json" 10000 "rrload: "
wait "$STEADY"
read -r sent answered wrong < <(json_get "$RR_TMP/steady.json" sent answered wrong)
say "    from $N addresses: sent $sent answered $answered wrong $wrong"
check "the addresses' steady load sent 15 rounds and more" test "${sent:-0}" -ge 6000
check_eq "... every request of it answered, rightly" "$sent 0" "$answered $wrong"

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

# Automatic rollback (canary_rollback, over a canary_window of 1 s): a
# canary that crashes on what the running version answers, one that
# fails it, and one that takes 2 ms over it are rolled back, said at
# warning with the figures, counted.
# echo2's cells crash on purpose from here on.
rr_faults_are_signals
printf '[function echo]\ncanary_window = 1\n' >"$RR_TMP/auto.conf"
rr_start auto -i "$TB_IF_SRV" -q 2 -c "$RR_TMP/auto.conf" \
	--metrics-file "$M" || die "reqrouter -c auto.conf did not start"
# rolled_back WHY TEXT SAID: a canary of echo2 at 50 %, asked TEXT from
# every address for up to about 6 s, is rolled back for WHY, its warning
# saying SAID (a regular expression).
rolled_back() {
	local i
	ctl deploy --canary 50 "$TMODS/echo2.so" >/dev/null ||
		bad "deploy --canary 50 echo2.so failed"
	for ((i = 0; i < 15; i++)); do
		tb_cli python3 $RR_LIB/sources.py --dst "$TB_IP4_SRV" --port 7 \
			--addrs "$RR_TMP/addrs" --asks 1 --text "$2" >/dev/null
		[ "$(echo_field "f.get('canary')")" = None ] && break
		sleep 0.3
	done
	check_eq "a canary whose $1 pass the running version's: rolled back" \
		None "$(echo_field "f.get('canary')")"
	check "... said at warning, with the figures" grep -Eq \
		"canary of 'echo' \(2.0\): $3 of the running version .*rolling it back" \
		"$RR_ERR"
	split 7
	check_eq "... and every address gets the running version again" "$N" \
		"$(got hello)"
}
rolled_back faults crash 'faults a request [0-9.]+ % against 0.00 %'
rolled_back errors fail 'errors a request [0-9.]+ % against 0.00 %'
rolled_back p99 slow 'p99 service time [0-9]+ us against [0-9]+ us'
wait_metric "$M" 3 reqrouter_canary_rollbacks_total 'function="echo"' -- 3 \
	>/dev/null
check_eq "each counted: reqrouter_canary_rollbacks_total by reason" "1 1 1" \
	"$(for why in faults errors p99; do
		metric "$M" reqrouter_canary_rollbacks_total 'function="echo"' "reason=\"$why\""
	done | xargs)"

# The config's form, applied by a reload: canary = PATH PERCENT starts
# it, a new PERCENT changes its share, the key gone rolls it back.
# conf_canary [PERCENT]: auto.conf with echo2 as echo's canary at
# PERCENT, or none; then a reload.
conf_canary() {
	{
		printf '[function echo]\ncanary_window = 1\n'
		[ -z "${1:-}" ] || echo "canary = $(realpath "$TMODS/echo2.so") $1"
	} >"$RR_TMP/auto.conf"
	ctl reload >"$RR_TMP/reload.out" 2>&1
	check_eq "reload with canary = ${1:-(none)}: exit 0" 0 $?
	grep -q "canary" "$RR_TMP/reload.out" || cat "$RR_TMP/reload.out"
}
conf_canary 30
split 7
say "    $(got "v2 hello") of $N addresses on the canary"
check "canary = echo2.so 30: about 30 % of the addresses get it (80-160)" \
	test "$(got "v2 hello")" -ge 80 -a "$(got "v2 hello")" -le 160
thirty=$(got "v2 hello")
conf_canary 60
split 7
say "    $(got "v2 hello") of $N addresses on the canary"
check "... 60: about 60 % (190-290), more than at 30 %, none on both" \
	test "$(got "v2 hello")" -ge 190 -a "$(got "v2 hello")" -le 290 \
	-a "$(got "v2 hello")" -gt "$thirty" \
	-a "$(json_get "$RR_TMP/split.json" mixed)" = 0
conf_canary
split 7
check_eq "... the key gone: rolled back, every address on the running version" \
	"$N None" "$(got hello) $(echo_field "f.get('canary')")"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

# State per version: kv's canary (kv.so) at 50 % from the start, each
# address storing its own address under one key: each version's table
# has the last of its own sources' writes, so the addresses read back
# two values, half each, none both.
printf '[function kv]\nwritable = yes\ncanary = %s 50\n' \
	"$(realpath "$MODS/kv.so")" >"$RR_TMP/kv.conf"
rr_start kv -i "$TB_IF_SRV" -q 2 -c "$RR_TMP/kv.conf" ||
	die "reqrouter -c kv.conf did not start"
check "the config's canary runs from the start" \
	grep -q "canary of 'kv' from .*kv.so: 50.0% of the sources" "$RR_ERR"
tb_cli python3 $RR_LIB/sources.py --dst "$TB_IP4_SRV" --port 7379 \
	--addrs "$RR_TMP/addrs" --asks 1 --text "SET x {addr}" >/dev/null
split 7379 x
read -r values total mixed < <(json_eval \
	"len(d['by_reply']), sum(d['by_reply'].values()), d['mixed']" \
	"$RR_TMP/split.json" | tr -d '(),')
check_eq "kv: two values, one per version's table, every address one" \
	"2 $N 0" "$values $total $mixed"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

# An XDP implementation answers only its version's share: with a program
# on the client's end (XDP_TX replies reach it) and tier auto, echo's
# share is answered in XDP, the canary's by its workers.
tb_cli ip link set dev "$TB_IF_CLI" xdpdrv object \
	"$BUILD/bpf/peer_pass.bpf.o" program peer_pass ||
	die "cannot attach peer_pass to the client's end"
RR_TIER=auto rr_start xdp -i "$TB_IF_SRV" -q 2 --metrics-file "$M" ||
	die "reqrouter --tier auto did not start"
ctl deploy --canary 50 "$TMODS/echo2.so" >/dev/null ||
	bad "deploy --canary 50 echo2.so failed"
split 7
wait_metric "$M" 3 reqrouter_tx_packets_total 'version="2.0+canary"' -- \
	$((3 * $(got "v2 hello"))) >/dev/null
check_eq "tier auto: echo's share answered in XDP, the canary's by its workers" \
	"$((3 * $(got hello))) 0 $((3 * $(got "v2 hello")))" \
	"$(metric "$M" reqrouter_tx_packets_total 'function="echo"' 'tier="xdp"') $(metric "$M" reqrouter_tx_packets_total 'function="echo"' "version=\"$(cat VERSION)\"" 'tier="user"') $(metric "$M" reqrouter_tx_packets_total 'version="2.0+canary"' 'tier="user"')"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
