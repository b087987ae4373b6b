#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A reload of a large zone is made in the background: the dns function
# serves a zone of 1,000,000 records (written here in well under a
# second), and while a client asks it a steady 400 queries/s,
# reqrouterctl reload brings the same zone with one record changed. Its
# init() parses the zone again on the reload's own thread, so meanwhile
# every query is answered (by the old zone or the new, never wrong), the
# control socket answers `status` (which says "reloading") and /healthz
# answers 200, rounds of them inside the reload; afterwards the new
# record is served, and the main loop's longest stall during the reload
# (reqrouter_main_loop_max_stall_seconds{since="scrape"}, scraped just
# before it) stays under 200 ms while making the new zone took most of a
# second or more; both figures are printed. systemd's watchdog, asked
# for every 100 ms (a stand-in notification socket), is fed throughout:
# no gap over 300 ms. With cells (the default) and with threads, one
# queue each. RR_RECORDS=N for another size.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"
RECORDS=${RR_RECORDS:-1000000}
MAX_STALL_MS=200
MAX_PING_GAP_MS=300
PROBE=(python3 "$RR_LIB/reload_probe.py")

rr_bed 1
SOCK=/run/reqrouter/$TB_IF_SRV.sock
LISTEN=$TB_IP4_SRV:9464
CONF=$RR_TMP/reqrouter.conf
ZONE=$RR_TMP/big.test.zone
ORIGIN=big.test
NOTIFY=$RR_TMP/notify.sock
NLOG=$RR_TMP/notify.log

# zone FILE ADDRESS: a zone of $RECORDS records: the SOA, an NS and its
# address, "changed" at ADDRESS, and h0, h1, ... at 10.a.b.c (the
# number's three low bytes, as reload_probe.py expects).
zone() {
	awk -v n="$RECORDS" -v addr="$2" 'BEGIN {
		print "$ORIGIN big.test.\n$TTL 3600"
		print "@ IN SOA ns1 hostmaster 1 7200 3600 1209600 300"
		print "@ IN NS ns1\nns1 IN A 192.0.2.53\nchanged IN A " addr
		for (i = 0; i < n - 4; i++)
			printf "h%d IN A 10.%d.%d.%d\n", i,
				int(i / 65536) % 256, int(i / 256) % 256, i % 256
	}' >"$1"
}
HOSTS=$((RECORDS - 4))
# scrape FILE: GET /metrics, the body into FILE.
scrape() {
	tb_srv python3 -c '
import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
		"http://$LISTEN/metrics" >"$1"
}
# changed: the address of changed.big.test, as the client is told.
changed() {
	tb_cli kdig +short +time=1 +retry=0 -p 53 "@$TB_IP4_SRV" \
		"changed.$ORIGIN" A 2>/dev/null | head -n 1
}
# ms SECONDS: in milliseconds, rounded.
ms() { awk -v s="$1" 'BEGIN { printf "%d", s * 1000 + 0.5 }'; }
# reload_over: status no longer says "reloading".
# shellcheck disable=SC2317 # called through wait_for
reload_over() {
	"$CTL" --control "$SOCK" --json status | grep -qF '"reloading":false'
}
# ping_gap: the longest time between two WATCHDOG=1 (or the reload's
# STATUS= lines that bound it) from the reload's start to its end, in ms.
ping_gap() {
	awk '
		/ STATUS=reload: under way$/ { on = 1; last = $1; next }
		on && / WATCHDOG=1$/ { if ($1 - last > gap) gap = $1 - last; last = $1 }
		on && / STATUS=reload: / { if ($1 - last > gap) gap = $1 - last; on = 0 }
		END { print gap + 0 }' "$NLOG"
}
# pings: how many WATCHDOG=1 came during the reload.
pings() {
	awk '/ STATUS=reload: under way$/ { on = 1; next }
		on && / WATCHDOG=1$/ { n++ }
		on && / STATUS=reload: / { on = 0 }
		END { print n + 0 }' "$NLOG"
}

command -v kdig >/dev/null || die "kdig is not installed (tools/install-deps.sh installs knot-dnsutils)"
t0=$(date +%s%N)
zone "$ZONE.1" 192.0.2.1
zone "$ZONE.2" 192.0.2.2
say "two zones of $RECORDS records written in $((($(date +%s%N) - t0) / 1000000)) ms"
printf '[reqrouter]\nmetrics_listen = %s\n[function dns]\nzone = %s\nrate_limit = 0\n' \
	"$LISTEN" "$ZONE" >"$CONF"
python3 "$RR_LIB/notify_listen.py" "$NOTIFY" "$NLOG" &
RR_BG_PIDS+=($!)
for ((i = 0; i < 50; i++)); do [ -S "$NOTIFY" ] && break; sleep 0.1; done
[ -S "$NOTIFY" ] || die "the notification listener did not start"

suite() {
	local iso=$1 rc reload_ms sent answered lost wrong inside healthz_ok
	local made stall gap pid i

	say "--- isolation $iso"
	cp "$ZONE.1" "$ZONE"
	: >"$NLOG"
	NOTIFY_SOCKET=$NOTIFY WATCHDOG_USEC=200000 rr_start "$iso" \
		-i "$TB_IF_SRV" -c "$CONF" --isolation "$iso" ||
		die "$iso: reqrouter did not start with the zone"
	check_eq "$iso: the zone's record is served" 192.0.2.1 "$(changed)"

	# The load, then the reload once it is steady.
	rm -f "$RR_TMP/load.stop" "$RR_TMP/watch.stop"
	tb_cli_bg "${PROBE[@]}" load "$TB_IP4_SRV" "$ORIGIN" "$HOSTS" \
		"$RR_TMP/load.stop" --rate 400 --max 40 >"$RR_TMP/load.json"
	LOAD_PID=$TB_PID
	RR_BG_PIDS+=("$LOAD_PID")
	sleep 1
	scrape "$RR_TMP/before.prom"
	cp "$ZONE.2" "$ZONE.new"
	mv "$ZONE.new" "$ZONE"
	tb_srv_bg "${PROBE[@]}" watch "$SOCK" "http://$LISTEN/healthz" \
		"$RR_TMP/watch.stop" --max 40 >"$RR_TMP/watch.json"
	WATCH_PID=$TB_PID
	RR_BG_PIDS+=("$WATCH_PID")
	t0=$(date +%s%N)
	timeout -k 2 40 "$CTL" --control "$SOCK" reload >"$RR_TMP/reload.out" 2>&1
	rc=$?
	reload_ms=$((($(date +%s%N) - t0) / 1000000))
	sed 's/^/    | /' "$RR_TMP/reload.out"
	# The old zone is freed after the report: until then "reloading".
	wait_for 5 reload_over
	touch "$RR_TMP/watch.stop"
	scrape "$RR_TMP/after.prom"
	sleep 1
	touch "$RR_TMP/load.stop"
	for pid in "$WATCH_PID" "$LOAD_PID"; do
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		wait "$pid" 2>/dev/null
	done

	check_eq "$iso: reqrouterctl reload exits 0" 0 "$rc"
	check "$iso: ... and says dns was re-initialised" \
		grep -qF "1 function re-initialised" "$RR_TMP/reload.out"
	check_eq "$iso: the changed record is served after it" 192.0.2.2 \
		"$(changed)"

	say "the load: $(cat "$RR_TMP/load.json")"
	read -r sent answered lost wrong < <(json_get "$RR_TMP/load.json" \
		sent answered lost wrong)
	check "$iso: queries were sent throughout ($sent)" [ "${sent:-0}" -ge 400 ]
	check_eq "$iso: every query answered" "$sent" "$answered"
	check_eq "$iso: none lost, none wrong" "0 0" "$lost $wrong"
	check_eq "$iso: \"changed\" was answered with the old address, then the new" \
		True "$(json_eval 'len(d["changed"]) == 2 and d["first_new_s"] is not None' \
			"$RR_TMP/load.json")"

	say "during the reload: $(cat "$RR_TMP/watch.json")"
	read -r inside healthz_ok < <(json_get "$RR_TMP/watch.json" \
		inside healthz_ok_inside)
	check "$iso: the control socket answered status inside the reload ($inside rounds)" \
		[ "${inside:-0}" -ge 2 ]
	check_eq "$iso: ... and /healthz answered 200 in each of them" \
		"$inside" "$healthz_ok"
	gap=$(ping_gap)
	check "$iso: the watchdog was fed during the reload ($(pings) pings)" \
		[ "$(pings)" -ge 2 ]
	check "$iso: ... with no gap over $MAX_PING_GAP_MS ms (${gap} ms)" \
		[ "$gap" -le $MAX_PING_GAP_MS ]

	made=$(grep -oE "new state made in [0-9.]+ s" "$RR_ERR" | tail -n 1 |
		awk '{ print $(NF - 1) }')
	stall=$(metric_lines "$RR_TMP/after.prom" \
		reqrouter_main_loop_max_stall_seconds | grep -F 'since="scrape"' |
		awk '{ print $NF }')
	say "measured ($iso): the new zone made in ${made:-?} s off the main" \
		"thread, the reload answered in $reload_ms ms, the main loop's" \
		"longest stall meanwhile $(ms "${stall:-0}") ms"
	check "$iso: the log says how long making the new state took" [ -n "$made" ]
	check "$iso: the longest main-loop stall during the reload is under $MAX_STALL_MS ms" \
		test "$(ms "${stall:-1}")" -lt $MAX_STALL_MS
	check "$iso: reqrouter is still running" kill -0 "$RR_PID"
	rr_kill_wait TERM 10
	check_eq "$iso: SIGTERM: exit 0" 0 "$RR_RC"
}

suite cell
suite thread
finish
