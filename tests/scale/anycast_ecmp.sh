#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Many hosts, one address: three reqrouter hosts announce the same service
# address over BGP (with BFD) to a router that spreads flows over them by
# an ECMP hash of the 5-tuple, on the kit in deploy/anycast/ as shipped
# (tools/anycast-bed.sh builds the bed; docs/SCALE-OUT.md explains it).
# What a user would notice:
# - the kit's BIRD configs parse with bird -p as they are;
# - every host is announced, over IPv4 and IPv6, and each answers a fair
#   share of many flows (within 15 % of a third of 2048 flows a family);
# - reqrouterctl drain of one host under open-loop load loses nothing;
# - kill -9 of one host's reqrouter under load loses only requests sent
#   between the kill and the route's withdrawal, which comes within a
#   second; the window is measured and printed;
# - a host that comes back is announced again and takes its share again;
# - BFD takes out a host that hangs (its BIRD frozen) in well under the
#   BGP hold time, and no request is lost meanwhile;
# - the announcer withdraws when stopped (systemd's BindsTo=), and
#   --withdraw does after it was killed (ExecStopPost=).
# Figures (shares, windows, run time) close the output as "figures:".
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
source tools/anycast-bed.sh

CTL=$BUILD/reqrouterctl
RATE4=2000 # open-loop load during the drain and the crash, requests/s
RATE6=1000
T_START=${EPOCHREALTIME/./}

rr_prereqs
for p in bird birdc; do
	# CI installs bird2 (tools/install-deps.sh): missing is a failure.
	command -v "$p" >/dev/null ||
		die "no $p: tools/install-deps.sh installs bird2"
done
for b in "$CTL" "$BUILD/rrload"; do
	[ -x "$b" ] || die "no $b (run make first)"
done

# The kit as shipped.
for f in deploy/anycast/bird-host.conf deploy/anycast/bird-router.conf; do
	out=$(bird -p -c "$f" 2>&1)
	rc=$?
	check_eq "$f parses with bird -p" "0 " "$rc $out"
done

ab_setup 3 || die "the anycast bed could not be set up"
say "bed $AB_TAG: client, router, 3 hosts; logs in $AB_DIR"
for i in 1 2 3; do
	ab_rr_start "$i" || die "reqrouter on host $i did not start"
	ab_announce_start "$i"
done

# json NAME FIELD...: fields of rrload's summary $AB_DIR/NAME.json.
json() { json_get "$AB_DIR/$1.json" "${@:2}"; }
# since_ms US: milliseconds from T_START to US (microseconds, epoch).
since_ms() { echo $((($1 - T_START) / 1000)); }
# phase WHAT: a heading, with the time since the start.
phase() { say "-- $* ($(since_ms "${EPOCHREALTIME/./}") ms)"; }
# holds EXPR: an arithmetic condition, for check.
# shellcheck disable=SC2317 # called through check
holds() { (($1)); }

phase "every host announced, both families"
for fam in 4 6; do
	if ab_wait_nexthops "$fam" 3 30; then
		ok "IPv$fam: one ECMP route, a next hop per host, $(since_ms "$AB_SEEN_US") ms after the start"
	else
		bad "IPv$fam: the router has $(ab_nexthops "$fam") next hops after 30 s, not 3"
		ab_birdc rtr show protocols | sed 's/^/    /'
		finish
	fi
done
n=$(ab_birdc rtr show protocols | grep -cE '^host[46]_[0-9]+ +BGP .* up .*Established')
check_eq "6 BGP sessions established (3 hosts x IPv4, IPv6)" 6 "$n"
for ((k = 0; k < 50; k++)); do
	n=$(ab_birdc rtr show bfd sessions | grep -cw Up)
	[ "$n" = 6 ] && break
	sleep 0.1
done
check_eq "6 BFD sessions up" 6 "$n"
check "the router does not own the service address" \
	[ -z "$(ab_rtr ip addr show to "$AB_VIP4/32")" ]

# share FAMILY NAME: 2 x 1024 flows (one request from each of 1024
# client ports, twice) to the service address; each host's share of them,
# counted by its reqrouter, within 15 % of a third.
SHARES=
share() {
	local fam=$1 name=$2 vip=$AB_VIP4 i r before=() d=() sent=0 ans=0 s a
	local want
	[ "$fam" = 6 ] && vip=$AB_VIP6
	for i in 1 2 3; do before[i]=$(ab_served "$i"); done
	for r in 1 2; do
		ab_cli "$BUILD/rrload" -s "$vip" -c 1024 -n 1024 -w 1 \
			--timeout 2000 -q --json "$AB_DIR/$name-$r.json" >/dev/null
		read -r s a < <(json "$name-$r" sent answered)
		sent=$((sent + s))
		ans=$((ans + a))
	done
	check_eq "$name: every one of the flows answered" "$sent" "$ans"
	for i in 1 2 3; do d[i]=$(($(ab_served "$i") - before[i])); done
	check_eq "$name: the hosts' counts add up to what was sent" "$sent" \
		$((d[1] + d[2] + d[3]))
	want=$((sent / 3))
	for i in 1 2 3; do
		# |d - want| <= 15 % of want
		if [ $((d[i] > want ? d[i] - want : want - d[i])) -le \
			$((want * 15 / 100)) ]; then
			ok "$name: host $i answered ${d[i]} of $sent (a third: $want, 15 %: ±$((want * 15 / 100)))"
		else
			bad "$name: host $i answered ${d[i]} of $sent, more than 15 % off a third ($want)"
		fi
	done
	SHARES+="${SHARES:+; }$name ${d[1]}/${d[2]}/${d[3]}"
}
phase "a fair share each"
share 4 "IPv4 share"
share 6 "IPv6 share"

# load NAME SECONDS: open-loop load over both families in the background
# (64 client ports each); summaries in $AB_DIR/NAME4.json and NAME6.json,
# the send times of timed-out requests in NAME4.lost and NAME6.lost.
LOADS=()
load() {
	LOADS=()
	ab_cli "$BUILD/rrload" -s "$AB_VIP4" -c 64 -r "$RATE4" -d "$2" \
		--timeout 500 -q --json "$AB_DIR/${1}4.json" \
		--lost "$AB_DIR/${1}4.lost" >/dev/null &
	LOADS+=($!)
	ab_cli "$BUILD/rrload" -s "$AB_VIP6" -c 64 -r "$RATE6" -d "$2" \
		--timeout 500 -q --json "$AB_DIR/${1}6.json" \
		--lost "$AB_DIR/${1}6.lost" >/dev/null &
	LOADS+=($!)
}
load_wait() {
	local p
	for p in "${LOADS[@]}"; do wait "$p"; done
	LOADS=()
}

phase "drain host 1 under load: not one request lost"
load drain 7
sleep 2
t_drain=${EPOCHREALTIME/./}
"$CTL" --control "$AB_DIR/h1.sock" --quiet 1 --wait 20 drain \
	>"$AB_DIR/drain.out" 2>&1 &
drain=$!
ab_wait_nexthops 4 2 5
DRAIN_W4=$(((AB_SEEN_US - t_drain) / 1000))
ab_wait_nexthops 6 2 5
DRAIN_W6=$(((AB_SEEN_US - t_drain) / 1000))
check "drain: host 1 withdrawn from both routes within 1 s (IPv4 $DRAIN_W4 ms, IPv6 $DRAIN_W6 ms)" \
	holds "$(ab_nexthops 4) == 2 && $(ab_nexthops 6) == 2 &&
		$DRAIN_W4 <= 1000 && $DRAIN_W6 <= 1000"
wait "$drain"
rc=$?
check_eq "reqrouterctl drain: exit 0, host 1 drained and stopped" \
	"0 drained and stopped" "$rc $(tail -n 1 "$AB_DIR/drain.out")"
for ((k = 0; k < 50; k++)); do
	kill -0 "${AB_RR_PID[1]}" 2>/dev/null || break
	sleep 0.1
done
rc=running
kill -0 "${AB_RR_PID[1]}" 2>/dev/null || { wait "${AB_RR_PID[1]}"; rc=$?; }
check_eq "host 1's reqrouter exited with status 0" 0 "$rc"
drain_ms=$(((${EPOCHREALTIME/./} - t_drain) / 1000))
check "its announcer said why it withdrew" \
	grep -q 'withdrawn (not ready: draining)' "$AB_DIR/h1.announce.log"
load_wait
DRAIN_LOST=0
for fam in 4 6; do
	read -r sent ans wrong tmo < <(json "drain$fam" sent answered wrong timeouts)
	say "    drain IPv$fam: sent $sent answered $ans wrong $wrong timeouts $tmo"
	check "drain IPv$fam: load ran ($sent requests)" [ "$sent" -ge 1000 ]
	check_eq "drain IPv$fam: every request answered, none wrong" \
		"$sent 0" "$ans $wrong"
	DRAIN_LOST=$((DRAIN_LOST + sent - ans))
	DRAIN_SENT=$((${DRAIN_SENT:-0} + sent))
done

phase "host 1 comes back"
ab_rr_start 1 || die "reqrouter on host 1 did not start again"
t_ready=${EPOCHREALTIME/./}
ab_wait_nexthops 4 3 5 && ab_wait_nexthops 6 3 5
BACK_MS=$(((AB_SEEN_US - t_ready) / 1000))
check "host 1 announced again within 1 s of being ready ($BACK_MS ms)" \
	holds "$(ab_nexthops 4) == 3 && $(ab_nexthops 6) == 3 &&
		$BACK_MS <= 1000"

phase "kill -9 host 2's reqrouter under load: losses only until the route is withdrawn"
load crash 6
sleep 2
kill -KILL "${AB_RR_PID[2]}"
t_kill=${EPOCHREALTIME/./}
ab_wait_nexthops 4 2 5
seen4=$AB_SEEN_US
ab_wait_nexthops 6 2 5
seen6=$AB_SEEN_US
wait "${AB_RR_PID[2]}" 2>/dev/null
w4=$(((seen4 - t_kill) / 1000))
w6=$(((seen6 - t_kill) / 1000))
check "crash: host 2 withdrawn from both routes within 1 s of the kill (IPv4 $w4 ms, IPv6 $w6 ms)" \
	holds "$(ab_nexthops 4) == 2 && $(ab_nexthops 6) == 2 &&
		$w4 <= 1000 && $w6 <= 1000"
load_wait
CRASH=
for fam in 4 6; do
	read -r sent ans wrong tmo < <(json "crash$fam" sent answered wrong timeouts)
	lost=$((sent - ans))
	rate=$RATE4
	[ "$fam" = 6 ] && rate=$RATE6
	seen=$seen4
	[ "$fam" = 6 ] && seen=$seen6
	# The send times of the lost requests, in ms from the kill.
	read -r first last n < <(awk -v k="$t_kill" '
		{ t = ($1 * 1e6 - k) / 1000; if (NR == 1) f = t; l = t }
		END { printf "%d %d %d\n", f, l, NR }' "$AB_DIR/crash$fam.lost")
	say "    crash IPv$fam: sent $sent answered $ans wrong $wrong timeouts $tmo;" \
		"lost requests sent from ${first} to ${last} ms after the kill"
	check_eq "crash IPv$fam: no wrong reply, every loss a timeout" \
		"0 $lost" "$wrong $tmo"
	check_eq "crash IPv$fam: rrload logged the send time of every loss" \
		"$lost" "$n"
	# None may be lost once the route is gone (50 ms for what the router
	# had already forwarded). Requests already in the host's rings at
	# the kill may be lost too, and the open loop records when each was
	# due, which a busy client sends late: 250 ms before the kill.
	if [ "$lost" -gt 0 ]; then
		check "crash IPv$fam: every lost request was sent between the kill (-250 ms) and the withdrawal (+50 ms)" \
			holds "$first >= -250 &&
				$last <= $(((seen - t_kill) / 1000 + 50))"
	fi
	# Bounded: at most a second of the host's share of the load.
	check "crash IPv$fam: $lost lost, at most a second of one host's share ($((rate / 3)))" \
		[ "$lost" -le $((rate / 3)) ]
	last="the last one sent $last ms after the kill"
	[ "$lost" = 0 ] && last="none lost"
	CRASH+="${CRASH:+; }IPv$fam: withdrawn after $(((seen - t_kill) / 1000)) ms, $lost of $sent lost, $last"
done

phase "host 2 comes back and takes its share again"
ab_rr_start 2 || die "reqrouter on host 2 did not start again"
ab_wait_nexthops 4 3 5 && ab_wait_nexthops 6 3 5
check "host 2 announced again" \
	holds "$(ab_nexthops 4) == 3 && $(ab_nexthops 6) == 3"
share 4 "IPv4 share after the crash"
share 6 "IPv6 share after the crash"

phase "BFD: host 3's BIRD frozen"
# A host that stops answering without closing anything (its BIRD
# frozen, as a hung host would be) is out of the route in well under the
# BGP hold time (9 s), and the requests go to the others.
load freeze 3
sleep 1
kill -STOP "${AB_BIRD_PID[3]}"
t_stop=${EPOCHREALTIME/./}
ab_wait_nexthops 4 2 5
BFD_W4=$(((AB_SEEN_US - t_stop) / 1000))
ab_wait_nexthops 6 2 5
BFD_W6=$(((AB_SEEN_US - t_stop) / 1000))
kill -CONT "${AB_BIRD_PID[3]}"
check "BFD: host 3 withdrawn within 1.5 s of its BIRD freezing (IPv4 $BFD_W4 ms, IPv6 $BFD_W6 ms)" \
	holds "$BFD_W4 <= 1500 && $BFD_W6 <= 1500"
load_wait
for fam in 4 6; do
	read -r sent ans < <(json "freeze$fam" sent answered)
	check_eq "BFD IPv$fam: every request answered (host 3's reqrouter still serves)" \
		"$sent" "$ans"
done

phase "the announcer's own stop withdraws (what systemd's BindsTo= does)"
kill -TERM "${AB_ANN_PID[1]}"
wait "${AB_ANN_PID[1]}"
rc=$?
# gone 4|6 I: wait (at most 5 s) until host I is no next hop; true if so.
gone() {
	local k
	for ((k = 0; k < 100; k++)); do
		ab_announced "$1" "$2" || return 0
		sleep 0.05
	done
	return 1
}
check "SIGTERM to host 1's announcer: exit 0 ($rc), host 1 withdrawn" \
	holds "$rc == 0 && $(gone 4 1 && gone 6 1 && echo 1 || echo 0)"
# An announcer killed outright cannot withdraw: the route stays, which
# is why the unit runs --withdraw after it (ExecStopPost=).
kill -KILL "${AB_ANN_PID[2]}"
wait "${AB_ANN_PID[2]}" 2>/dev/null
sleep 0.5
check "kill -9 of host 2's announcer leaves host 2 announced" \
	ab_announced 4 2
"$AB_KIT/reqrouter-announce" --withdraw --bird-socket "$AB_DIR/h2.bird.ctl" \
	>"$AB_DIR/withdraw.out" 2>&1
rc=$?
check "reqrouter-announce --withdraw (ExecStopPost): exit 0 ($rc), host 2 withdrawn" \
	holds "$rc == 0 && $(gone 4 2 && gone 6 2 && echo 1 || echo 0)"

say "figures: shares (hosts 1/2/3) $SHARES"
say "figures: drain of host 1 under $RATE4 + $RATE6 requests/s: $DRAIN_LOST of $DRAIN_SENT lost, route withdrawn after $DRAIN_W4 ms (IPv6 $DRAIN_W6 ms), drain done after $drain_ms ms"
say "figures: kill -9 of host 2's reqrouter under $RATE4 + $RATE6 requests/s: $CRASH"
say "figures: host 3's BIRD frozen: withdrawn by BFD after $BFD_W4 ms (IPv6 $BFD_W6 ms)"
say "figures: test ran $(since_ms "${EPOCHREALTIME/./}") ms"
finish
