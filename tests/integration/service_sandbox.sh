#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The systemd unit's least privilege, tried for real: reqrouter runs in an
# emulation of the unit's sandbox (tests/integration/lib/sandbox.sh: the
# unit's User=, Group=, AmbientCapabilities= and CapabilityBoundingSet=,
# read from configs/reqrouter@.service.in, NoNewPrivileges, a read-only
# file system but its RuntimeDirectory, owned by the user, a read-only
# /sys, private /tmp and /dev, /proc with processes only, UMask=0077), as
# the user configs/reqrouter.sysusers makes (made here if missing, and
# then removed again). It serves over AF_XDP, with threads and with cells;
# answers reqrouterctl as root and as its own user (threads 2: new AF_XDP
# sockets; reload, remove, deploy) and HTTP; and stops cleanly. user =
# reqrouter changes nothing. Its uid is not 0; after set-up it holds only
# CAP_BPF, CAP_NET_ADMIN and CAP_NET_RAW, nothing ambient or inheritable,
# an empty bounding set, and every worker thread and cell holds nothing at
# all (every task's sets are printed). Every capability in the set is
# needed: without any one of them start-up fails with one line and leaves
# no XDP program behind, but for CAP_SETPCAP, without which the workers
# keep the unit's bounding set. After a crash (SIGKILL) the restart
# replaces the stale program without CAP_SYS_ADMIN, by the id recorded in
# the runtime directory; without that record it refuses, saying why, and
# only with CAP_SYS_ADMIN recognises the program by name. A foreign
# program is never touched. -B under the unit says it may not set the
# interface's NAPI knobs and spins; with docs/OPERATIONS.md's drop-in
# (CAP_DAC_OVERRIDE, /sys writable) it sets them and puts them back.
# --control-group needs the group among the user's groups.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

UNIT=configs/reqrouter@.service.in
SYSUSERS=$PWD/configs/reqrouter.sysusers
SANDBOX=$PWD/$RR_LIB/sandbox.sh
CTL=$BUILD/reqrouterctl
RR_ABS=$(realpath "$RR") # BUILD may be relative or absolute
SBX_DIR=
NONE=0000000000000000
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
not_ok() { ! "$@"; }
command -v setpriv >/dev/null || die "setpriv (util-linux) not found"
command -v unshare >/dev/null || die "unshare (util-linux) not found"

unit_key() { sed -n "s/^$1=//p" "$UNIT"; }
# setpriv_caps CAP_A CAP_B...: +a,+b,...
setpriv_caps() {
	local c out=
	for c in "$@"; do
		c=${c#CAP_}
		out="$out+${c,,},"
	done
	printf '%s' "${out%,}"
}
# cap_mask +a,+b,...: the mask /proc/PID/status shows for that set.
cap_mask() {
	local -A bit=([dac_override]=1 [setpcap]=8 [net_admin]=12 [net_raw]=13
		[ipc_lock]=14 [sys_admin]=21 [perfmon]=38 [bpf]=39)
	local c m=0
	for c in ${1//,/ }; do
		c=${c#+}
		[ -n "${bit[$c]:-}" ] || die "cap_mask: no bit known for $c"
		m=$((m | 1 << bit[$c]))
	done
	printf '%016x' "$m"
}

USER_NAME=$(unit_key User)
GROUP_NAME=$(unit_key Group)
unit_amb=$(unit_key AmbientCapabilities)
unit_bnd=$(unit_key CapabilityBoundingSet)
[ -n "$USER_NAME" ] || die "no User= in $UNIT"
[ -n "$unit_amb" ] || die "no AmbientCapabilities= in $UNIT"
say "the unit: User=$USER_NAME Group=$GROUP_NAME"
say "the unit's capabilities: $unit_amb"
# shellcheck disable=SC2086 # one word per capability
CAPS=$(setpriv_caps $unit_amb)
# shellcheck disable=SC2086
check_eq "CapabilityBoundingSet= is AmbientCapabilities=" "$CAPS" "$(setpriv_caps $unit_bnd)"
check_eq "Group= is the user's own group" "$USER_NAME" "$GROUP_NAME"
check "the sysusers file makes that user" \
	grep -qE "^u $USER_NAME - \"[^\"]+\" /nonexistent /usr/sbin/nologin\$" "$SYSUSERS"
# After set-up: the unit's set but CAP_SETPCAP, CAP_PERFMON and
# CAP_IPC_LOCK, as with --user.
KEPT=$(cap_mask "$(setpriv_caps CAP_NET_ADMIN CAP_NET_RAW CAP_BPF)")
UNIT_MASK=$(cap_mask "$CAPS")
check_eq "what reqrouter keeps is within the unit's set" "$UNIT_MASK" \
	"$(printf '%016x' $((0x$UNIT_MASK | 0x$KEPT)))"

rr_bed 2
made_user=
if ! getent passwd "$USER_NAME" >/dev/null; then
	if command -v systemd-sysusers >/dev/null; then
		systemd-sysusers "$SYSUSERS" || die "systemd-sysusers $SYSUSERS failed"
	else
		useradd --system --user-group --no-create-home \
			--home-dir /nonexistent --shell /usr/sbin/nologin \
			--comment "reqrouter UDP functions" "$USER_NAME" ||
			die "cannot add user $USER_NAME"
	fi
	made_user=1
	say "made user $USER_NAME for this test: $(getent passwd "$USER_NAME")"
fi
# shellcheck disable=SC2317 # called from the trap
remove_user() {
	[ -n "$made_user" ] || return 0
	userdel "$USER_NAME" 2>/dev/null
	groupdel "$GROUP_NAME" 2>/dev/null
	return 0
}
trap 'rr_cleanup; remove_user; [ -z "$SBX_DIR" ] || rm -rf "$SBX_DIR"' EXIT
trap 'exit 130' INT TERM
# A module to deploy, in a directory of root's that the sandbox sees (not
# /tmp), as installed modules are. PrivateTmp= also hides a build under
# /tmp (BUILD=/tmp/...): such a binary runs from a copy there too.
SBX_DIR=$(mktemp -d /run/rr-sandbox.XXXXXX)
chmod 0755 "$SBX_DIR"
install -m 0644 "$BUILD/functions/reverse.so" "$SBX_DIR/"
case $RR_ABS in
/tmp/*)
	install -m 0755 "$RR_ABS" "$SBX_DIR/reqrouter"
	RR_ABS=$SBX_DIR/reqrouter
	;;
esac
UID_RR=$(id -u "$USER_NAME")
check "$USER_NAME is a system user ($UID_RR) without a login shell" \
	test "$UID_RR" -gt 0 -a "$UID_RR" -lt 1000 -a \
	"$(getent passwd "$USER_NAME" | cut -d: -f7)" = /usr/sbin/nologin

# RuntimeDirectory=reqrouter, RuntimeDirectoryMode=0755: systemd makes it
# for User=. Ours is private to this test and mounted on /run/reqrouter
# inside the sandbox; outside it is $RUN.
RUN=$RR_TMP/run
mkdir -m 0755 "$RUN"
chown "$USER_NAME:$GROUP_NAME" "$RUN"
RECORD=$RUN/$TB_IF_SRV.xdp
SOCK=$RUN/$TB_IF_SRV.sock
SB=(--user "$USER_NAME" --run-dir "$RUN")
# shellcheck disable=SC2317 # called through check
as_user() { setpriv --reuid "$USER_NAME" --regid "$GROUP_NAME" --clear-groups "$@"; }

# sb_start NAME CAPS ARGS...: rr_start, but inside the sandbox with CAPS
# (and the sandbox options in SB).
sb_start() {
	local name=$1 caps=$2
	shift 2
	RR_OUT=$RR_TMP/$name.out
	RR_ERR=$RR_TMP/$name.err
	tb_srv_bg "$SANDBOX" "${SB[@]}" "$caps" "$RR_ABS" --tier user \
		--no-cache "$@" >"$RR_OUT" 2>"$RR_ERR"
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
	tb_srv timeout -k 2 20 "$SANDBOX" "${SB[@]}" "$caps" "$RR_ABS" \
		--tier user --no-cache "$@" >"$RR_TMP/$name.out" 2>"$RR_ERR"
	RR_RC=$?
}
xdp_id() {
	ip -n "$TB_NS_SRV" link show dev "$TB_IF_SRV" |
		grep -oE 'prog/xdp id [0-9]+' | grep -oE '[0-9]+$'
}
# status_of PID FIELD: a field of /proc/PID/status (its first word).
status_of() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }
# tasks: every task of reqrouter and of its cells, one line each:
# "comm Uid CapEff CapPrm CapInh CapAmb CapBnd NoNewPrivs".
tasks() {
	local p t
	for p in "$RR_PID" $(pgrep -P "$RR_PID"); do
		for t in /proc/"$p"/task/*; do
			printf '%s' "$(cat "$t/comm")"
			for f in Uid CapEff CapPrm CapInh CapAmb CapBnd NoNewPrivs; do
				printf ' %s' "$(awk -v f="$f:" '$1 == f { print $2 }' "$t/status")"
			done
			echo
		done
	done 2>/dev/null
}
# check_tasks WHAT WORKERS BND: print every task; the main thread runs as
# the user with exactly KEPT, nothing ambient or inheritable, bounding set
# BND; WORKERS workers or cells, each with nothing at all (bounding set
# BND_W, default empty) and no_new_privs.
check_tasks() {
	local what=$1 want=$2 bnd=$3 bnd_w=${4:-$NONE} main
	say "    comm uid CapEff CapPrm CapInh CapAmb CapBnd NoNewPrivs"
	tasks | sed 's/^/    /'
	main=$(tasks | awk '$1 == "reqrouter"' | head -n 1)
	check_eq "$what: the main thread: uid, CapEff, CapPrm, CapInh, CapAmb, CapBnd" \
		"$UID_RR $KEPT $KEPT $NONE $NONE $bnd" "$(cut -d' ' -f2-7 <<<"$main")"
	check_eq "$what: workers found" "$want" \
		"$(tasks | grep -cE '^rr-(worker|cell) ')"
	check_eq "$what: workers holding anything" 0 \
		"$(tasks | grep -E '^rr-(worker|cell) ' |
			grep -cv " $UID_RR $NONE $NONE $NONE $NONE $bnd_w 1\$")"
	check_eq "$what: no task with uid 0" 0 "$(tasks | awk '$2 == 0' | wc -l)"
}

say "== the unit's user, capabilities and sandbox"
sb_start main "$CAPS" -i "$TB_IF_SRV" -q 2 \
	--metrics-listen "$TB_IP4_SRV:9464" || die "reqrouter did not start in the sandbox"
grep -E 'running as|control socket' "$RR_ERR" | sed 's/^/    /'
check_eq "the main process's uid is $USER_NAME's" "$UID_RR" "$(status_of "$RR_PID" Uid)"
check "it serves over AF_XDP" serves 50
check_tasks "threads 1" 2 "$NONE"
check_eq "the runtime directory's socket is $USER_NAME's, mode 0600" \
	"$USER_NAME srw-------" "$(stat -c '%U %A' "$SOCK")"
check "reqrouterctl health, as root" "$CTL" --control "$SOCK" health
check "reqrouterctl status, as root" "$CTL" --control "$SOCK" status
check "reqrouterctl status, as $USER_NAME" as_user "$CTL" --control "$SOCK" status
check "reqrouterctl threads 2, as $USER_NAME (new AF_XDP sockets: CAP_NET_RAW)" \
	as_user "$CTL" --control "$SOCK" threads 2
sleep 0.5
check_tasks "threads 2" 4 "$NONE"
check "threads 2: it serves" serves 50
check "reqrouterctl threads 1, as root" "$CTL" --control "$SOCK" threads 1
check "reqrouterctl reload, as root" "$CTL" --control "$SOCK" reload
check "after reload: it serves" serves 20
check "reqrouterctl remove reverse, as $USER_NAME" \
	as_user "$CTL" --control "$SOCK" remove reverse
check "reqrouterctl deploy reverse.so, as root (it brings reverse back)" \
	"$CTL" --control "$SOCK" deploy "$SBX_DIR/reverse.so"
check "after deploy: it serves" serves 20
check "HTTP /healthz answers" tb_cli python3 -c \
	'import sys, urllib.request; sys.exit(urllib.request.urlopen(sys.argv[1], timeout=5).read() != b"ready\n")' \
	"http://$TB_IP4_SRV:9464/healthz"
check_eq "the program id is recorded in the runtime directory" "$(xdp_id)" \
	"$(cat "$RECORD" 2>/dev/null)"
check_eq "... in a file of $USER_NAME's (UMask=0077)" "$USER_NAME -rw-------" \
	"$(stat -c '%U %A' "$RECORD")"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "no XDP program left" test -z "$(xdp_id)"
check "the record is removed on a clean exit" test ! -e "$RECORD"

say "== user = $USER_NAME, the user it already is"
sb_start userself "$CAPS" -i "$TB_IF_SRV" -q 2 --user "$USER_NAME" ||
	bad "--user $USER_NAME did not start"
check "--user $USER_NAME: it serves" serves 20
check_tasks "--user $USER_NAME" 2 "$NONE"
rr_kill_wait TERM 5
check_eq "--user $USER_NAME: SIGTERM: exit 0" 0 "$RR_RC"

say "== cells"
sb_start cells "$CAPS" -i "$TB_IF_SRV" -q 2 --isolation cell ||
	bad "with --isolation cell it did not start"
check "cells: it serves" serves 50
check_tasks "cells" 2 "$NONE"
rr_kill_wait TERM 5
check_eq "cells: SIGTERM: exit 0" 0 "$RR_RC"
check "cells: no XDP program left" test -z "$(xdp_id)"

say "== each capability is needed"
for c in ${CAPS//,/ }; do
	if [ "$c" = +setpcap ]; then
		# Without it the workers cannot empty their bounding set.
		sb_start without-setpcap "${CAPS/$c/-${c#+}}" -i "$TB_IF_SRV" -q 2 ||
			bad "without setpcap it did not start"
		check "without setpcap: it says the bounding set is kept" \
			grep -q 'bounding set kept (emptying it needs CAP_SETPCAP)' "$RR_ERR"
		rest=$(cap_mask "${CAPS/,$c/}")
		check_tasks "without setpcap" 2 "$rest" "$rest"
		rr_kill_wait TERM 5
		check_eq "without setpcap: SIGTERM: exit 0" 0 "$RR_RC"
		continue
	fi
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

say "== busy polling (-B)"
knobs() {
	echo "$(tb_srv cat "/sys/class/net/$TB_IF_SRV/napi_defer_hard_irqs")" \
		"$(tb_srv cat "/sys/class/net/$TB_IF_SRV/gro_flush_timeout")"
}
tb_srv sh -c "echo 1 >/sys/class/net/$TB_IF_SRV/napi_defer_hard_irqs &&
	echo 12345 >/sys/class/net/$TB_IF_SRV/gro_flush_timeout" ||
	die "cannot set $TB_IF_SRV's NAPI settings"
sb_start busy "$CAPS" -i "$TB_IF_SRV" -q 2 -B || bad "-B did not start"
grep 'busy polling' "$RR_ERR" | sed 's/^/    /'
# The files are root's: the permission check fails before the read-only
# mount is even looked at.
check "-B: one line says it may not set the NAPI knobs, and it spins" \
	grep -q 'busy polling: plain spinning on the rings (napi_defer_hard_irqs refused: Permission denied)' "$RR_ERR"
check "-B: it serves" serves 50
rr_kill_wait TERM 5
check_eq "-B: SIGTERM: exit 0" 0 "$RR_RC"
check_eq "-B: the knobs are untouched" "1 12345" "$(knobs)"
# docs/OPERATIONS.md's drop-in: CAP_DAC_OVERRIDE, ProtectKernelTunables=no.
SB=(--user "$USER_NAME" --run-dir "$RUN" --sys-rw)
sb_start busy-dac "$CAPS,+dac_override" -i "$TB_IF_SRV" -q 2 -B ||
	bad "-B with CAP_DAC_OVERRIDE did not start"
grep 'busy polling' "$RR_ERR" | sed 's/^/    /'
check "-B with CAP_DAC_OVERRIDE: preferred busy polling, the knobs set" \
	grep -q 'busy polling: preferred .* napi_defer_hard_irqs 2 (was 1), gro_flush_timeout 200000 ns (was 12345)' "$RR_ERR"
check "-B with CAP_DAC_OVERRIDE: it serves" serves 50
check_tasks "-B with CAP_DAC_OVERRIDE (dropped after set-up)" 2 "$NONE"
rr_kill_wait TERM 5
check_eq "-B with CAP_DAC_OVERRIDE: SIGTERM: exit 0" 0 "$RR_RC"
check_eq "-B with CAP_DAC_OVERRIDE: the knobs are put back" "1 12345" "$(knobs)"
check "-B with CAP_DAC_OVERRIDE: no warning about putting them back" \
	eval "! grep -q 'cannot put' '$RR_ERR'"
SB=(--user "$USER_NAME" --run-dir "$RUN")

say "== --control-group"
# nogroup: a group $USER_NAME is not a member of, and uid 65534's.
if getent group nogroup >/dev/null && getent passwd 65534 >/dev/null; then
	sb_run group-not-member "$CAPS" -i "$TB_IF_SRV" -q 2 --control-group nogroup
	check_eq "a group the user is not in: exit 1" 1 "$RR_RC"
	check "... saying the user must be a member ($(tail -n 1 "$RR_ERR"))" \
		grep -q "cannot give control socket .* the group nogroup: uid $UID_RR is not a member (SupplementaryGroups=nogroup in the unit)" "$RR_ERR"
	check "... and no XDP program left" test -z "$(xdp_id)"
	SB=(--user "$USER_NAME" --run-dir "$RUN" --groups nogroup)
	sb_start group "$CAPS" -i "$TB_IF_SRV" -q 2 --control-group nogroup ||
		bad "with SupplementaryGroups=nogroup it did not start"
	check_eq "SupplementaryGroups=nogroup: the socket is $USER_NAME's and nogroup's, mode 0660" \
		"$USER_NAME nogroup srw-rw----" "$(stat -c '%U %G %A' "$SOCK")"
	# shellcheck disable=SC2317 # called through check
	as_group() { setpriv --reuid 65534 --regid nogroup --clear-groups "$CTL" --control "$SOCK" "$@"; }
	check "a member of the group reads (status)" as_group status
	check "... but may not change it (threads 2)" not_ok as_group threads 2
	check "root still changes it (threads 2)" "$CTL" --control "$SOCK" threads 2
	rr_kill_wait TERM 5
	check_eq "control group: SIGTERM: exit 0" 0 "$RR_RC"
	SB=(--user "$USER_NAME" --run-dir "$RUN")
else
	say "no group nogroup or no uid 65534: --control-group left out"
fi
finish
