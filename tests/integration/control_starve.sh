#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Health cannot be starved through the control socket. With
# --control-group, so that other users may connect at all, 40 clients of
# five unprivileged uids (8 each, more than the 16 slots) hold the socket
# for 8 s: half say nothing, half send "health" a byte every 0.5 s, and
# each connection closed is made again 50 ms later. Meanwhile root's
# `reqrouterctl health` is answered within 1 s, 10 times of 10: another
# user holds 4 slots at most and is refused at once beyond them, saying
# so, and root takes the slot another user's client has held longest when
# none is free. The holders are cut off within their 2 s deadline, each
# outcome is counted in reqrouter_control_clients_total, and nothing of
# it is logged. Afterwards root and the group's members are served as
# before.
cd "$(dirname "$0")/../.." || exit 1
TB_PEER_XDP=0
source tests/integration/lib/common.sh

command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
getent group nogroup >/dev/null || skip "no group nogroup"
rr_bed 1
# The other uids run copies in $RR_TMP (mode 755): the clone itself may be
# under a home they cannot enter, as /root/reqrouter is in make test-fresh.
if ! { cp "$BUILD/reqrouterctl" "$RR_LIB/starve.py" "$RR_TMP/" &&
	chmod 755 "$RR_TMP/reqrouterctl" "$RR_TMP/starve.py"; }; then
	die "cannot copy the clients to $RR_TMP"
fi
CTL=$RR_TMP/reqrouterctl
SOCK=$RR_TMP/ctl.sock
# The counters as reqrouter has them 0.2 s after they are asked for
# (rr_metrics_scrape), not at the metrics file's next rewrite.
LISTEN=127.0.0.1:9464
M=$RR_TMP/http.prom
UIDS="65534 65533 65532 65531 65530"
GID=$(getent group nogroup | cut -d: -f3)

rr_start main -i "$TB_IF_SRV" -q 1 --control "$SOCK" \
	--control-group nogroup --metrics-listen "$LISTEN" ||
	die "reqrouter did not start"
# as UID CMD...: CMD as UID, in group nogroup only.
as() {
	local uid=$1
	shift
	setpriv --reuid "$uid" --regid "$GID" --clear-groups "$@"
}
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
not() { ! "$@" 2>/dev/null; }
check "the control group's members may ask (uid 65534)" \
	as 65534 "$CTL" --control "$SOCK" health

say "== 40 clients of 5 other uids hold the socket (30 s at most)"
logged=$(wc -l <"$RR_ERR")
HOLD_PIDS=()
for uid in $UIDS; do
	# Not through as(): $! must be python's own PID.
	setpriv --reuid "$uid" --regid "$GID" --clear-groups \
		python3 "$RR_TMP/starve.py" hold "$SOCK" 8 30 0.02 \
		>"$RR_TMP/hold.$uid" &
	HOLD_PIDS+=($!)
	RR_BG_PIDS+=($!)
done
sleep 1
good=0
times=""
for i in 1 2 3 4 5 6 7 8 9 10; do
	start=$(date +%s%N)
	out=$(timeout 2 "$CTL" --control "$SOCK" health 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	times+=" ${ms}"
	if [ "$rc" = 0 ] && [ "$ms" -lt 1000 ]; then
		good=$((good + 1))
	else
		say "try $i: exit $rc after $ms ms: $out"
	fi
	sleep 0.3
done
say "root's health, ms:$times"
check_eq "root's reqrouterctl health answered within 1 s" "10 of 10" \
	"$good of 10"
as 65534 "$CTL" --control "$SOCK" health >"$RR_TMP/busy.out" 2>&1
say "uid 65534 meanwhile: $(head -n 1 "$RR_TMP/busy.out")"
# Each prints what it saw as it stops.
for p in "${HOLD_PIDS[@]}"; do
	kill -TERM "$p" 2>/dev/null
	wait "$p"
done

say "== the holders were cut off"
held=0 conns=0 busy=0
for uid in $UIDS; do
	say "uid $uid: $(cat "$RR_TMP/hold.$uid")"
	read -r c b h < <(json_get "$RR_TMP/hold.$uid" connects busy held_max)
	conns=$((conns + c))
	busy=$((busy + b))
	held=$(python3 -c 'import sys; print(max(float(a) for a in sys.argv[1:]))' \
		"$held" "$h")
done
check "they kept trying (${conns} connections)" [ "$conns" -ge 200 ]
check "refused ones were told busy ($busy)" [ "$busy" -ge 100 ]
check "none was kept past its 2 s deadline (longest ${held} s)" \
	python3 -c 'import sys; sys.exit(float(sys.argv[1]) > 2.6)' "$held"
rr_metrics_scrape "$LISTEN" "$M" || die "GET /metrics failed"
ev() { metric "$M" reqrouter_control_clients_total "event=\"$1\""; }
say "reqrouter_control_clients_total: accepted $(ev accepted)" \
	"refused_uid $(ev refused_uid) refused_full $(ev refused_full)" \
	"evicted $(ev evicted) timed_out $(ev timed_out)"
check "counted: refused beyond 4 per uid" [ "$(ev refused_uid)" -gt 0 ]
check "counted: refused with every slot taken" [ "$(ev refused_full)" -gt 0 ]
check "counted: root took another's slot" [ "$(ev evicted)" -gt 0 ]
check "counted: cut off at the deadline" [ "$(ev timed_out)" -gt 0 ]
# (The bed's own changes may be, such as the host's addresses.)
check_eq "nothing of it was logged" "" \
	"$(tail -n +$((logged + 1)) "$RR_ERR" | grep -iE 'control|client|busy|uid')"

say "== afterwards"
check "root: status" "$CTL" --control "$SOCK" status
check "uid 65534: health" as 65534 "$CTL" --control "$SOCK" health
check "uid 65534 still may not change it" \
	not as 65534 "$CTL" --control "$SOCK" threads 1
rr_kill_wait TERM 10
check_eq "SIGTERM: exit status" 0 "$RR_RC"
finish
