#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The abuse limits over the real path:
# - allow-lists: with `allow = 198.18.0.2/32, fd00:7272::2/128` for
#   reverse, the client's own addresses are answered; a second address on
#   the client (IPv4 and IPv6, inside the test bed) gets nothing back, and
#   the XDP program counts every such request as drop/source_not_allowed;
#   echo, without a list, still answers everyone. A /30 list lets a
#   neighbour in. Frame accounting stays exact.
# - amplification: with the default (3x) and with max_amplification = 1
#   and 0, replies of the request's size pass and nothing is counted as
#   amplification; 1000 is accepted, 1001 and non-numbers are refused
#   with one line and exit status 2.
# - --user nobody (and `user = nobody` in the config): uid 65534 in every
#   thread, CapEff exactly CAP_NET_ADMIN + CAP_BPF, requests answered, the
#   metrics file still rewritten, SIGTERM exits 0 and detaches; an unknown
#   user is refused with one line and leaves nothing attached.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

rr_bed 4
HA=$RR_LIB/hardening_abuse.py
HM=$RR_LIB/hardening_metrics.py
CLI4B=198.18.0.3 # second addresses on the client, inside the test bed only
CLI6B=fd00:7272::3
CLI4C=198.18.0.5

tb_cli ip addr add "$CLI4B/24" dev "$TB_IF_CLI"
tb_cli ip addr add "$CLI4C/24" dev "$TB_IF_CLI"
# Deprecated (preferred_lft 0): usable when bound to, never picked as the
# source of ordinary traffic, which must come from the allowed address.
tb_cli ip -6 addr add "$CLI6B/64" dev "$TB_IF_CLI" nodad preferred_lft 0

# from SRC DST PORT FUNC N EXPECT: N requests from SRC, all or none answered
# (none: nothing within 1 s; the XDP program's drop counter, checked
# after, says that each one reached it and was refused).
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
from() {
	local t=2
	[ "$6" = none ] && t=1
	tb_cli python3 "$HA" --src "$1" --dst "$2" --port "$3" --func "$4" \
		-n "$5" --expect "$6" --timeout "$t" >"$RR_TMP/from.out" 2>&1
	local rc=$?
	sed 's/^/    /' "$RR_TMP/from.out"
	return "$rc"
}

stop_rr() { # LABEL: SIGTERM, exit 0, nothing attached
	rr_kill_wait TERM 5
	check_eq "$1: SIGTERM exit status" 0 "$RR_RC"
	[ "$RR_RC" = running ] && rr_kill_wait KILL 2
	check "$1: no XDP program left" eval '! xdp_on_srv'
}

# start_conf NAME WHAT [CONF]: reqrouter on 4 queues with CONF (default
# $RR_TMP/NAME.conf) and its metrics file $M. The file comes with the
# first write, a second after the start: requests go out meanwhile, and
# the first read of each run is a wait_metric, which waits for it.
start_conf() {
	rr_start "$1" -i "$TB_IF_SRV" -q 4 -c "${3:-$RR_TMP/$1.conf}" \
		--metrics-file "$M" || die "reqrouter with $2 did not start"
}

notallowed() { metric "$1" reqrouter_xdp_packets_total 'reason="source_not_allowed"'; }

say "== allow-list: reverse only from $TB_IP4_CLI/32 and $TB_IP6_CLI/128"
M=$RR_TMP/allow.prom
cat >"$RR_TMP/allow.conf" <<EOF
[function reverse]
allow = $TB_IP4_CLI/32, $TB_IP6_CLI/128
EOF
start_conf allow "an allow-list"
check "allowed IPv4 source $TB_IP4_CLI: reverse answers all 50" \
	from "$TB_IP4_CLI" "$TB_IP4_SRV" 1232 reverse 50 all
check "allowed IPv6 source $TB_IP6_CLI: reverse answers all 50" \
	from "$TB_IP6_CLI" "$TB_IP6_SRV" 1232 reverse 50 all
check "IPv4 source $CLI4B not in the list: no reply to 40" \
	from "$CLI4B" "$TB_IP4_SRV" 1232 reverse 40 none
check "IPv6 source $CLI6B not in the list: no reply to 30" \
	from "$CLI6B" "$TB_IP6_SRV" 1232 reverse 30 none
check "echo has no list: answers $CLI4B (all 20)" \
	from "$CLI4B" "$TB_IP4_SRV" 7 echo 20 all
check "echo has no list: answers $CLI6B (all 20)" \
	from "$CLI6B" "$TB_IP6_SRV" 7 echo 20 all
check "ordinary traffic from the allowed sources: 200 + 200 answered" serves 200
check_eq "drop/source_not_allowed counts every refused request" 70 \
	"$(wait_metric "$M" 5 reqrouter_xdp_packets_total 'reason="source_not_allowed"' -- 70)"
sleep 1.5 # one more metrics write: nothing further may arrive
check_eq "drop/source_not_allowed, a second later" 70 "$(notallowed "$M")"
rx=$(metric "$M" reqrouter_rx_packets_total 'port="1232"')
check_eq "reverse: every request that reached a worker was answered (rx = tx)" \
	"$rx" "$(metric "$M" reqrouter_tx_packets_total 'port="1232"')"
check_eq "no request dropped in user space" 0 \
	"$(metric "$M" reqrouter_dropped_packets_total)"
if [ "$RR_TIER" != user ]; then
	check "tier $RR_TIER: the XDP programs answered the allowed sources" \
		test "$(metric "$M" reqrouter_tx_packets_total 'tier="xdp"')" -gt 0
fi
python3 $HM at-rest "$M" --timeout 8 >"$RR_TMP/rest.out"
rc=$?
sed 's/^/    /' "$RR_TMP/rest.out"
check "allow-list run: every UMEM frame back in the fill ring" test $rc -eq 0
stop_rr "allow-list"
check "summary says drop/source_not_allowed=70" \
	grep -q 'drop/source_not_allowed=70' "$RR_OUT"

say "== allow-list by prefix: 198.18.0.0/30, fd00:7272::/126"
M=$RR_TMP/allow30.prom
printf '[function reverse]\nallow = 198.18.0.0/30, fd00:7272::/126\n' \
	>"$RR_TMP/allow30.conf"
start_conf allow30 "a /30 allow-list"
check "$TB_IP4_CLI in 198.18.0.0/30: answered" \
	from "$TB_IP4_CLI" "$TB_IP4_SRV" 1232 reverse 20 all
check "$CLI4B in 198.18.0.0/30: answered" \
	from "$CLI4B" "$TB_IP4_SRV" 1232 reverse 20 all
check "$CLI6B in fd00:7272::/126: answered" \
	from "$CLI6B" "$TB_IP6_SRV" 1232 reverse 20 all
check "$CLI4C outside 198.18.0.0/30: no reply" \
	from "$CLI4C" "$TB_IP4_SRV" 1232 reverse 25 none
check_eq "drop/source_not_allowed" 25 \
	"$(wait_metric "$M" 5 reqrouter_xdp_packets_total 'reason="source_not_allowed"' -- 25)"
stop_rr "/30 allow-list"

say "== allow given twice in one section (IPv4 on one line, IPv6 on the next)"
printf '[function reverse]\nallow = 198.18.0.0/30\nallow = fd00:7272::/126\n' \
	>"$RR_TMP/allow2.conf"
if rr_start allow2 -i "$TB_IF_SRV" -q 4 -c "$RR_TMP/allow2.conf"; then
	# Accepted: then both lines must count, not just the last one.
	check "second allow line: $CLI6B answered" \
		from "$CLI6B" "$TB_IP6_SRV" 1232 reverse 10 all
	check "first allow line still in force: $TB_IP4_CLI answered" \
		from "$TB_IP4_CLI" "$TB_IP4_SRV" 1232 reverse 10 all
	stop_rr "allow twice"
else
	check_eq "allow twice: refused with one line" 1 "$(grep -c . "$RR_ERR")"
	check "allow twice: nothing attached" eval '! xdp_on_srv'
fi

say "== amplification limits in the config"
cfg_rc() { # NAME VALUE: run with max_amplification = VALUE for reverse
	printf '[function reverse]\nmax_amplification = %s\n' "$2" \
		>"$RR_TMP/$1.conf"
	rr_run "$1" -i "$TB_IF_SRV" -q 4 -c "$RR_TMP/$1.conf" --list
}
for v in 0 1 3 1000; do
	cfg_rc "amp$v" "$v"
	check_eq "max_amplification = $v is accepted (--list exits)" 0 "$RR_RC"
done
for v in 1001 4294967296 -1 3x ""; do
	cfg_rc amp-bad "$v"
	check_eq "max_amplification = '$v' is refused: exit status" 2 "$RR_RC"
	check_eq "max_amplification = '$v': one line on stderr" 1 \
		"$(grep -c . "$RR_ERR")"
	check "max_amplification = '$v': the line names the file, line and key" \
		grep -qE "^reqrouter: .*amp-bad.conf:2: .*max_amplification" "$RR_ERR"
	sed 's/^/    stderr: /' "$RR_ERR"
done

for v in default 1 0; do
	M=$RR_TMP/amp-$v.prom
	if [ $v = default ]; then
		printf '[function echo]\nenabled = yes\n' >"$RR_TMP/amp.conf"
	else
		printf '[function reverse]\nmax_amplification = %s\n[function echo]\nmax_amplification = %s\n' \
			$v $v >"$RR_TMP/amp.conf"
	fi
	start_conf "amp-$v" "max_amplification $v" "$RR_TMP/amp.conf"
	check "max_amplification $v: same-size replies pass, 0-1400 B (300 + 300)" \
		serves 300
	wait_metric "$M" 5 reqrouter_tx_packets_total -- 600 >/dev/null
	check_eq "max_amplification $v: amplification drops" 0 \
		"$(metric "$M" reqrouter_dropped_packets_total 'reason="amplification"')"
	check_eq "max_amplification $v: replies" 600 \
		"$(metric "$M" reqrouter_tx_packets_total)"
	stop_rr "max_amplification $v"
done

say "== --user nobody"
NOBODY_UID=$(id -u nobody 2>/dev/null) || skip "no user 'nobody' on this machine"
MD=$(mktemp -d "$RR_TMP/metrics.XXXXXX")
chmod 1777 "$MD"
M=$MD/user.prom
# Threads, so that every worker is a task of this process (cells are
# checked alike in invoker_privileges.sh).
rr_start user -i "$TB_IF_SRV" -q 4 -t 2 --isolation thread --user nobody \
	--metrics-file "$M" ||
	die "reqrouter --user nobody did not start"
check "logs that it runs as nobody" grep -q "running as user nobody" "$RR_ERR"
tb_wait_file "$M" 5
check "metrics file written as nobody" test "$(stat -c %u "$M" 2>/dev/null)" = "$NOBODY_UID"
status() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
check_eq "process Uid (real, effective, saved, fs)" \
	"$NOBODY_UID $NOBODY_UID $NOBODY_UID $NOBODY_UID" \
	"$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "/proc/$RR_PID/status")"
# CAP_NET_ADMIN is bit 12, CAP_NET_RAW bit 13, CAP_BPF bit 39: the main
# thread's, for its operations (docs/OPERATIONS.md); the workers hold none.
MAIN_CAPS=0000008000003000
check_eq "process CapEff: CAP_NET_ADMIN + CAP_NET_RAW + CAP_BPF only" $MAIN_CAPS \
	"$(status "$RR_PID" CapEff)"
check_eq "process CapPrm: CAP_NET_ADMIN + CAP_NET_RAW + CAP_BPF only" $MAIN_CAPS \
	"$(status "$RR_PID" CapPrm)"
check_eq "process CapInh: nothing" 0000000000000000 "$(status "$RR_PID" CapInh)"
threads=0 workers=0 badthreads=0
for t in /proc/"$RR_PID"/task/*; do
	threads=$((threads + 1))
	u=$(awk '$1 == "Uid:" { print $2 $3 $4 $5 }' "$t/status")
	c=$(awk '$1 == "CapEff:" { print $2 }' "$t/status")
	want=$MAIN_CAPS
	if [[ $(cat "$t/comm") == rr-worker* ]]; then
		want=0000000000000000
		workers=$((workers + 1))
	fi
	if [ "$u" != "$NOBODY_UID$NOBODY_UID$NOBODY_UID$NOBODY_UID" ] ||
		[ "$c" != "$want" ]; then
		badthreads=$((badthreads + 1))
		say "    thread $(basename "$t") ($(cat "$t/comm")): uids $u CapEff $c"
	fi
done
check_eq "8 worker threads" 8 "$workers"
check "all $threads threads run as nobody, the workers with no capability at all" \
	test "$threads" -ge 9 -a "$badthreads" -eq 0
check "as nobody: 300 IPv4 + 300 IPv6 requests answered" serves 300
check "as nobody: the metrics file is still rewritten" rr_metrics_fresh "$M"
check_eq "as nobody: replies counted" 600 \
	"$(wait_metric "$M" 3 reqrouter_tx_packets_total -- 600)"
python3 $HM at-rest "$M" --timeout 8 >"$RR_TMP/rest.out"
rc=$?
sed 's/^/    /' "$RR_TMP/rest.out"
check "as nobody: every UMEM frame back in the fill ring" test $rc -eq 0
stop_rr "--user nobody"
# The workers' total, plus the in-kernel tier's where it answered.
replies=$(sed -nE 's/^in user space: [0-9]+ requests, ([0-9]+) replies.*/\1/p
	s/^in XDP: [^:]+: [0-9]+ requests, ([0-9]+) replies.*/\1/p' "$RR_OUT" |
	awk '{ s += $1 } END { print s + 0 }')
check_eq "--user nobody: the summary counts every reply" 600 "$replies"

# What follows is settled before any function is served, in no tier:
# tier_abuse.sh, which runs this file with RR_TIER=auto, leaves it to the
# user-tier run.
[ "$RR_TIER" = user ] || finish

say "== user = nobody in the config, metrics in a directory nobody cannot write"
printf '[reqrouter]\nuser = nobody\n' >"$RR_TMP/user.conf"
M=$RR_TMP/rootonly/user.prom
mkdir -p "$RR_TMP/rootonly"
chmod 755 "$RR_TMP/rootonly"
rr_start usercfg -i "$TB_IF_SRV" -q 4 -c "$RR_TMP/user.conf" \
	--metrics-file "$M" || die "reqrouter with user = nobody did not start"
check_eq "config user = nobody: process Uid" "$NOBODY_UID" \
	"$(awk '$1 == "Uid:" { print $3 }' "/proc/$RR_PID/status")"
check "config user = nobody: requests answered" serves 100
sleep 2.2
check_eq "unwritable metrics directory: one warning, not one a second" 1 \
	"$(grep -c 'cannot write' "$RR_ERR")"
check "the warning says the directory must be writable by --user" \
	grep -q 'must be writable by --user' "$RR_ERR"
check "still running" kill -0 "$RR_PID"
stop_rr "config user = nobody"

say "== --user with an unknown user"
rr_run nouser -i "$TB_IF_SRV" -q 4 --user rr-no-such-user
sed 's/^/    stderr: /' "$RR_ERR"
check "unknown user: refused with a non-zero exit status ($RR_RC)" \
	test "$RR_RC" = 1 -o "$RR_RC" = 2
check "unknown user: a line naming the user" \
	grep -q "rr-no-such-user" "$RR_ERR"
check "unknown user: no XDP program left" eval '! xdp_on_srv'
check_eq "unknown user: one line on stderr (checked before set-up)" 1 \
	"$(grep -c . "$RR_ERR")"
check "unknown user: nothing on stdout (no summary of a server that never ran)" \
	test ! -s "$RR_OUT"
finish
