#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Health cannot be starved through the metrics listener
# (--metrics-listen). Connections drip-feed it, each sending a request
# head a byte every 2 s and never its end, each closed made again 0.2 s
# later: 16, 4 from each of 4 addresses (as many as it used to hold for
# good), then 40, 20 from one address and 5 from each of 4 others.
# Meanwhile GET /healthz and GET /metrics, from a dripper's address and
# from another, are answered within 1 s, 10 rounds of 10: none may take
# longer than 2 s over its request head, and a newer connection takes
# the place of the one that has waited longest for its request (past 4
# from its address, or 16 in all). The drippers are cut off within those
# 2 s, each cut counted in reqrouter_metrics_http_connections_total, and
# nothing of it is logged. Afterwards a plain GET is served as before.
cd "$(dirname "$0")/../.." || exit 1
TB_PEER_XDP=0
source tests/integration/lib/common.sh

rr_bed 1
PORT=9464
M=$RR_TMP/metrics.prom
for a in 198.18.0.11 198.18.0.12 198.18.0.13 198.18.0.14; do
	tb_cli ip addr add "$a/24" dev "$TB_IF_CLI" ||
		die "cannot add $a to the client's end"
done

rr_start main -i "$TB_IF_SRV" -q 1 --metrics-listen "$TB_IP4_SRV:$PORT" \
	--metrics-file "$M" || die "reqrouter --metrics-listen did not start"
# probe ROUNDS SRC...: starve.py's probe lines, from the client namespace.
probe() {
	tb_cli python3 $RR_LIB/starve.py probe "$TB_IP4_SRV" "$PORT" "$@"
}
check_eq "GET /healthz and /metrics before" "200 200" \
	"$(probe 1 "$TB_IP4_CLI" | awk '{ print $3 }' | xargs)"

# storm WHAT SRC:N...: N connections from each SRC drip-feed the listener
# (30 s at most) while 10 rounds of probes from the client's address and
# 198.18.0.14 go; the checks, then the drippers' reports.
storm() {
	local what=$1 src p pids=() held=0 conns=0 good c h
	shift
	say "== $what"
	for src in "$@"; do
		tb_cli_bg python3 $RR_LIB/starve.py drip "$TB_IP4_SRV" "$PORT" \
			"${src%:*}" "${src#*:}" 30 >"$RR_TMP/drip.${src%:*}"
		pids+=("$TB_PID")
		RR_BG_PIDS+=("$TB_PID")
	done
	sleep 1.5
	probe 10 "$TB_IP4_CLI" 198.18.0.14 >"$RR_TMP/probe.out"
	# shellcheck disable=SC2016 # awk's own fields
	good=$(awk '$3 == 200 && $4 < 1 { n++ } END { print n + 0 }' \
		"$RR_TMP/probe.out")
	say "    probes' seconds: $(awk '{ print $4 }' "$RR_TMP/probe.out" | xargs)"
	awk '$3 != 200 || $4 >= 1 { print "    " $0 }' "$RR_TMP/probe.out"
	check_eq "GET /healthz and /metrics answered within 1 s" "20 of 20" \
		"$good of $(wc -l <"$RR_TMP/probe.out")"
	# Each prints what it saw as it stops.
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
		wait "$p"
	done
	for src in "$@"; do
		src=${src%:*}
		say "    from $src: $(cat "$RR_TMP/drip.$src")"
		read -r c h < <(json_get "$RR_TMP/drip.$src" connects held_max)
		conns=$((conns + c))
		held=$(python3 -c 'import sys; print(max(float(a) for a in sys.argv[1:]))' \
			"$held" "$h")
	done
	check "the drippers kept at it (${conns} connections)" [ "$conns" -ge 16 ]
	check "... and were cut off within 2 s (longest held ${held} s)" \
		python3 -c 'import sys; sys.exit(float(sys.argv[1]) > 2.6)' "$held"
}

logged=$(wc -l <"$RR_ERR")
# A prober whose request comes 30 ms after its connect, while 8 more
# connect from its address: they may not cut it before it could send.
check_eq "GET /metrics sent 30 ms late, 8 more from its address at once" \
	200 "$(tb_cli python3 $RR_LIB/starve.py lag "$TB_IP4_SRV" "$PORT" \
		"$TB_IP4_CLI" 8 0.03 | awk '{ print $3 }')"
storm "16 connections drip-feed it, 4 from each of 4 addresses" \
	"$TB_IP4_CLI:4" 198.18.0.11:4 198.18.0.12:4 198.18.0.13:4
storm "40 connections drip-feed it, 20 from one address, 5 from 4 others" \
	"$TB_IP4_CLI:20" 198.18.0.11:5 198.18.0.12:5 198.18.0.13:5 198.18.0.14:5
# Each cut one back 0.2 s later: about a thousand connects a second.
storm "300 connections drip-feed it from 2 addresses (a flood)" \
	198.18.0.11:150 198.18.0.12:150

say "== what became of them"
rr_metrics_fresh "$M" || die "the metrics file was not rewritten"
ev() { metric "$M" reqrouter_metrics_http_connections_total "event=\"$1\""; }
say "reqrouter_metrics_http_connections_total: accepted $(ev accepted)" \
	"evicted_address $(ev evicted_address) evicted_full $(ev evicted_full)" \
	"header_timeout $(ev header_timeout)"
check "counted: cut for a newer one from its address" \
	[ "$(ev evicted_address)" -gt 0 ]
check "counted: cut for a newer one, every slot taken" \
	[ "$(ev evicted_full)" -gt 0 ]
check "counted: cut for a late request head" [ "$(ev header_timeout)" -gt 0 ]
# (The bed's own changes may be, such as the host's addresses.)
check_eq "nothing of it was logged" "" \
	"$(tail -n +$((logged + 1)) "$RR_ERR" | grep -iE 'http|connection|client')"

say "== afterwards"
check_eq "GET /healthz and /metrics" "200 200" \
	"$(probe 1 "$TB_IP4_CLI" | awk '{ print $3 }' | xargs)"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit status" 0 "$RR_RC"
finish
