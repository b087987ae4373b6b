#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# deploy/reqrouter-receive-nice, the unit's root steps around reqrouter
# (ExecStartPost=, ExecStopPost=): on a veth with threaded NAPI, once
# reqrouter serves (its XDP program attached, which is when the veth makes
# its NAPI threads), set puts each of the interface's NAPI threads at nice
# 19, and none of the peer's, writing the values before; a second set (a
# restart) keeps that record; requests are still answered; restore puts
# the host's own values back and removes the record. Without threaded
# NAPI set says there is nothing to do and exits 0. A wrong command,
# nice value or interface gets one line and exit 2 (1 for an interface
# that is not there).
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

NICE=deploy/reqrouter-receive-nice
# The bare defaults a user meets: no XDP program on the veth peer.
TB_PEER_XDP=0
rr_bed 1
export REQROUTER_RUNDIR=$RR_TMP/run
REC=$REQROUTER_RUNDIR/$TB_IF_SRV.receive-nice
command -v ethtool >/dev/null || die "ethtool is not installed (make deps)"
# Threaded NAPI on both ends, as tools/bench has it.
if ! { tb_srv ethtool -K "$TB_IF_SRV" gro on >/dev/null 2>&1 &&
	tb_srv sh -c "echo 1 >/sys/class/net/$TB_IF_SRV/threaded" &&
	tb_cli ethtool -K "$TB_IF_CLI" gro on >/dev/null 2>&1 &&
	tb_cli sh -c "echo 1 >/sys/class/net/$TB_IF_CLI/threaded"; }; then
	skip "this kernel refuses threaded NAPI on a veth"
fi

# nices IFACE: the nice values of IFACE's NAPI threads, sorted, one line.
nices() {
	local f n
	for f in /proc/[0-9]*/comm; do
		read -r n 2>/dev/null <"$f" || continue
		case $n in "napi/$1-"*) ;; *) continue ;; esac
		f=${f%/comm}
		ps -o ni= -p "${f#/proc/}"
	done | sort -n | xargs
}

rr_start main -i "$TB_IF_SRV" -q 1 -t 1 || die "reqrouter did not start"
before=$(nices "$TB_IF_SRV")
peer=$(nices "$TB_IF_CLI")
say "the server end's NAPI threads at nice: $before; the peer's: ${peer:-none}"
check "the veth made NAPI threads once reqrouter attached" test -n "$before"
check "and the peer's end has its own" test -n "$peer"

say "== set"
out=$(tb_srv "$NICE" set "$TB_IF_SRV" 2>&1)
check_eq "set: exit 0" 0 $?
say "    $out"
n=$(wc -w <<<"$before")
check_eq "set says how many threads it moved" \
	"reqrouter-receive-nice: $TB_IF_SRV: $n NAPI thread(s) at nice 19, behind the workers" "$out"
check_eq "each of them is at nice 19" "$(printf '19 %.0s' $(seq "$n") | xargs)" "$(nices "$TB_IF_SRV")"
check_eq "the peer's are not touched" "$peer" "$(nices "$TB_IF_CLI")"
check_eq "the record holds the values before" "$before" \
	"$(awk '{ print $2 }' "$REC" 2>/dev/null | sort -n | xargs)"
check_eq "echo still answers" hello "$(cli_ask 2 7 hello)"
tb_srv "$NICE" set "$TB_IF_SRV" >/dev/null 2>&1
check_eq "a second set (a restart) keeps the host's values in the record" \
	"$before" "$(awk '{ print $2 }' "$REC" 2>/dev/null | sort -n | xargs)"

say "== restore"
out=$(tb_srv "$NICE" restore "$TB_IF_SRV" 2>&1)
check_eq "restore: exit 0" 0 $?
say "    $out"
check_eq "the host's own values are back" "$before" "$(nices "$TB_IF_SRV")"
check "the record is gone" test ! -e "$REC"
out=$(tb_srv "$NICE" restore "$TB_IF_SRV" 2>&1)
check_eq "a second restore: exit 0, nothing to restore" "0 nothing" \
	"$? $(grep -o nothing <<<"$out")"

say "== no threaded NAPI"
tb_srv sh -c "echo 0 >/sys/class/net/$TB_IF_SRV/threaded"
out=$(tb_srv "$NICE" set "$TB_IF_SRV" 2>&1)
check_eq "set: exit 0" 0 $?
check "... and says there is nothing to do" grep -q "no NAPI threads .*nothing to do" <<<"$out"
check "... and writes no record" test ! -e "$REC"

say "== bad input"
for args in "bogus $TB_IF_SRV" "set" "set $TB_IF_SRV 25" "set $TB_IF_SRV x" "set a/b"; do
	# shellcheck disable=SC2086 # the words are the arguments
	out=$(tb_srv "$NICE" $args 2>&1)
	rc=$?
	check_eq "'$args': exit 2, one line" "2 1" "$rc $(wc -l <<<"$out")"
done
out=$(tb_srv "$NICE" set rr-nosuch0 2>&1)
check_eq "an interface that is not there: exit 1, said" "1 1" \
	"$? $(grep -c 'no interface rr-nosuch0' <<<"$out")"

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
