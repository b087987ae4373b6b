# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the tests of following the interface while serving (link_*.sh)
# share: the instance's control socket and metrics file in $RR_TMP, its
# status and health read back, its log lines counted, and sized requests
# that are never fragmented (lib/link_probe.py). Source it after
# common.sh and rr_bed.
#
#   link_start NAME ARGS...     rr_start NAME -i $TB_IF_SRV with the control
#                               socket $SOCK and the metrics file $M, ARGS
#                               after; false if it did not get ready or
#                               wrote no metrics within 5 s
#   link_status EXPR            EXPR (Python, the document as d) over
#                               reqrouterctl --json status; "<no status>"
#                               if the instance did not answer
#   link_health                 "ready" or "not ready: WHY" from
#                               reqrouterctl --json health
#   link_not_ready WORD         health says not ready, its why holding
#                               WORD; the answer in LINK_HEALTH
#   link_wait_ready SECONDS     wait (at most SECONDS) until health is
#                               ready; the ms waited in LINK_MS, the last
#                               answer in LINK_HEALTH; true if ready
#   link_mark                   from now on link_lines counts only the
#                               lines the log gets after this call
#   link_lines TEXT...          how many lines of the log ($RR_ERR) hold
#                               every TEXT (since link_mark, or the start)
#   link_has_line TEXT...       is there such a line?
#   link_wait_line SECONDS TEXT...
#                               wait (at most SECONDS) until there is one
#   link_changes CHANGE         reqrouter_link_changes_total{change=CHANGE}
#                               from a metrics file written after the call
#   link_alive                  is reqrouter ($RR_PID) still running?
#   link_echo ADDR SIZE [ARGS]  link_probe.py echo from the client namespace
#   link_dns ADDR NAME [ARGS]   link_probe.py dns from the client namespace

CTL=$BUILD/reqrouterctl
SOCK=$RR_TMP/ctl.sock
M=$RR_TMP/metrics.prom
LINK_PROBE=$RR_LIB/link_probe.py
LINK_FROM=0

link_start() {
	local name=$1
	shift
	rm -f "$M"
	LINK_FROM=0
	rr_start "$name" -i "$TB_IF_SRV" --control "$SOCK" --metrics-file "$M" \
		"$@" && tb_wait_file "$M" 5
}

link_status() {
	"$CTL" --control "$SOCK" --json status >"$RR_TMP/status.json" 2>&1 ||
		{ echo "<no status>"; return 0; }
	json_eval "$1" "$RR_TMP/status.json" 2>/dev/null || echo "<no status>"
}

link_health() {
	"$CTL" --control "$SOCK" --json health >"$RR_TMP/health.json" 2>&1
	json_eval '"ready" if d["ready"] else "not ready: " + d.get("why", "")' \
		"$RR_TMP/health.json" 2>/dev/null || echo "<no answer>"
}

link_not_ready() {
	LINK_HEALTH=$(link_health)
	[[ $LINK_HEALTH == "not ready: "*"$1"* ]]
}

link_wait_ready() {
	local start
	start=$(date +%s%N)
	while :; do
		LINK_HEALTH=$(link_health)
		LINK_MS=$((($(date +%s%N) - start) / 1000000))
		[ "$LINK_HEALTH" = ready ] && return 0
		[ "$LINK_MS" -ge $(($1 * 1000)) ] && return 1
		sleep 0.05
	done
}

link_mark() { LINK_FROM=$(wc -l <"$RR_ERR"); }

link_lines() {
	local out t
	out=$(tail -n +$((LINK_FROM + 1)) "$RR_ERR" 2>/dev/null)
	for t in "$@"; do
		out=$(grep -F -- "$t" <<<"$out")
	done
	if [ -n "$out" ]; then grep -c . <<<"$out"; else echo 0; fi
}

link_has_line() { [ "$(link_lines "$@")" -ge 1 ]; }

link_wait_line() {
	local limit=$1
	shift
	wait_for "$limit" link_has_line "$@"
}

link_changes() {
	rr_metrics_fresh "$M" || { echo "<no metrics>"; return 0; }
	metric "$M" reqrouter_link_changes_total "change=\"$1\""
}

link_alive() { [ -n "$RR_PID" ] && kill -0 "$RR_PID" 2>/dev/null; }
link_echo() { tb_cli python3 "$LINK_PROBE" echo "$@"; }
link_dns() { tb_cli python3 "$LINK_PROBE" dns "$@"; }
