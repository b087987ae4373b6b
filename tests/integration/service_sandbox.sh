#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The systemd unit's least privilege, tried for real: reqrouter runs in an
# emulation of the unit's sandbox (tests/integration/lib/sandbox.sh: the
# unit's CapabilityBoundingSet, read from configs/reqrouter@.service.in,
# NoNewPrivileges, a read-only file system but /run/reqrouter, private /tmp
# and /dev, /proc with processes only) and serves over AF_XDP, answers
# reqrouterctl and HTTP, and stops cleanly. Every capability in the set is
# needed: without any one of them start-up fails with one line and leaves
# no XDP program behind. After a crash (SIGKILL) the restart replaces the
# stale program without CAP_SYS_ADMIN, by the id recorded in
# /run/reqrouter; without that record it refuses, saying why, and only
# with CAP_SYS_ADMIN recognises the program by name. A foreign program is
# never touched.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

UNIT=configs/reqrouter@.service.in
SANDBOX=$PWD/$RR_LIB/sandbox.sh
CTL=$BUILD/reqrouterctl
command -v setpriv >/dev/null || die "setpriv (util-linux) not found"
command -v unshare >/dev/null || die "unshare (util-linux) not found"

# The unit's bounding set, in setpriv's form: +net_admin,+bpf,...
unit_caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
[ -n "$unit_caps" ] || die "no CapabilityBoundingSet= in $UNIT"
CAPS=$(for c in $unit_caps; do c=${c#CAP_}; printf '+%s,' "${c,,}"; done)
CAPS=${CAPS%,}
say "the unit's capabilities: $unit_caps"

rr_bed 2
RECORD=/run/reqrouter/$TB_IF_SRV.xdp
SOCK=/run/reqrouter/$TB_IF_SRV.sock
trap 'rm -f "$RECORD" "$SOCK"; rr_cleanup' EXIT

# sb_start NAME CAPS ARGS...: rr_start, but inside the sandbox with CAPS.
sb_start() {
	local name=$1 caps=$2
	shift 2
	RR_OUT=$RR_TMP/$name.out
	RR_ERR=$RR_TMP/$name.err
	tb_srv_bg "$SANDBOX" "$caps" "$PWD/$RR" --tier user --no-cache "$@" \
		>"$RR_OUT" 2>"$RR_ERR"
	RR_PID=$TB_PID
	for ((i = 0; i < 150; i++)); do
		grep -q 'ready on' "$RR_ERR" && return 0
		kill -0 "$RR_PID" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/    /' "$RR_ERR"
	rr_wait_exit 5
	return 1
}
# sb_run NAME CAPS ARGS...: in the foreground, status in RR_RC.
sb_run() {
	local name=$1 caps=$2
	shift 2
	RR_ERR=$RR_TMP/$name.err
	tb_srv timeout -k 2 20 "$SANDBOX" "$caps" "$PWD/$RR" --tier user \
		--no-cache "$@" >"$RR_TMP/$name.out" 2>"$RR_ERR"
	RR_RC=$?
}
xdp_id() {
	ip -n "$TB_NS_SRV" link show dev "$TB_IF_SRV" |
		grep -oE 'prog/xdp id [0-9]+' | grep -oE '[0-9]+$'
}

say "== the unit's capabilities and sandbox"
sb_start main "$CAPS" -i "$TB_IF_SRV" -q 2 \
	--metrics-listen "$TB_IP4_SRV:9464" || die "reqrouter did not start in the sandbox"
check "it serves over AF_XDP" serves 50
check "reqrouterctl health answers through /run/reqrouter" \
	"$CTL" --control "$SOCK" health
check "HTTP /healthz answers" tb_cli python3 -c \
	'import sys, urllib.request; sys.exit(urllib.request.urlopen(sys.argv[1], timeout=5).read() != b"ready\n")' \
	"http://$TB_IP4_SRV:9464/healthz"
check_eq "the program id is recorded in $RECORD" "$(xdp_id)" "$(cat "$RECORD" 2>/dev/null)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "no XDP program left" test -z "$(xdp_id)"
check "the record is removed on a clean exit" test ! -e "$RECORD"

say "== each capability is needed"
for c in ${CAPS//,/ }; do
	sb_run "without-${c#+}" "${CAPS/$c/-${c#+}}" -i "$TB_IF_SRV" -q 2
	check_eq "without ${c#+}: exit 1" 1 "$RR_RC"
	check "without ${c#+}: one line saying why ($(tail -n 1 "$RR_ERR"))" \
		test "$(grep -c . "$RR_ERR")" -ge 1
	check "without ${c#+}: no XDP program left" test -z "$(xdp_id)"
done

say "== a restart after a crash, without CAP_SYS_ADMIN"
sb_start crash "$CAPS" -i "$TB_IF_SRV" -q 2 || die "reqrouter did not start"
stale=$(xdp_id)
rr_kill_wait KILL 5
check_eq "SIGKILL leaves its program ($stale) on the interface" "$stale" "$(xdp_id)"
sb_start restart "$CAPS" -i "$TB_IF_SRV" -q 2 || bad "the restart did not start"
check "the restart replaces it, found by its recorded id" \
	grep -q "replacing a stale reqrouter XDP program (id $stale)" "$RR_ERR"
check "the restart serves" serves 20
rr_kill_wait KILL 5

say "== the same without the record"
stale=$(xdp_id)
rm -f "$RECORD"
sb_run norecord "$CAPS" -i "$TB_IF_SRV" -q 2
check_eq "without the record: exit 1" 1 "$RR_RC"
check "it says CAP_SYS_ADMIN would be needed to tell whose program it is" \
	grep -q "already has XDP program id $stale attached.*without CAP_SYS_ADMIN its name cannot be read" "$RR_ERR"
check_eq "the program is left alone" "$stale" "$(xdp_id)"
sb_start sysadmin "$CAPS,+sys_admin" -i "$TB_IF_SRV" -q 2 ||
	bad "with CAP_SYS_ADMIN it did not start"
check "with CAP_SYS_ADMIN it recognises the program by name" \
	grep -q "replacing a stale reqrouter XDP program (id $stale)" "$RR_ERR"
rr_kill_wait TERM 5
check "no XDP program left" test -z "$(xdp_id)"

say "== a foreign program"
tb_srv ip link set dev "$TB_IF_SRV" xdpdrv obj "$BUILD/bpf/peer_pass.bpf.o" sec xdp ||
	die "cannot attach a foreign program"
foreign=$(xdp_id)
sb_run foreign "$CAPS" -i "$TB_IF_SRV" -q 2
check_eq "foreign program: exit 1" 1 "$RR_RC"
check "it asks for the program to be removed first" grep -q 'remove it first' "$RR_ERR"
check_eq "the foreign program is untouched" "$foreign" "$(xdp_id)"
tb_srv ip link set dev "$TB_IF_SRV" xdpdrv off
finish
