#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# One reqrouter an interface (issue 41; docs/OPERATIONS.md: "A second
# reqrouter on an interface that already has one is refused before it
# touches anything"). On the 2-queue bed with nothing on the client end
# (TB_PEER_XDP=0), a first reqrouter serves IF with its own control
# socket; then a second `reqrouter -i IF ...` is started, with its own
# --control PATH, with --control none, with the default control socket,
# and with --control none -q 1 -S. Each time:
#  - the second exits with status 1, printing nothing on stdout, and one
#    log line says "already serves";
#  - it made no control socket (neither its own PATH nor the default
#    /run/reqrouter/IF.sock);
#  - the first's XDP program is untouched (the same id in `ip -d link
#    show`, and in `bpftool net` where bpftool is installed), the first
#    still runs a second later without a line about its program removed,
#    answers echo (UDP port 7) requests, and `reqrouterctl --control
#    FIRST status` answers with the first's pid.
# Should one try take the first down, it is started again for the next,
# so each is judged on its own. Then `kill -9` of the first leaves its
# program attached, and its cells exit on their own; once they have (a
# cell still holds what the instance held), the next start replaces the
# program (its log says "replacing a stale reqrouter XDP program"), a new
# program is attached, every request to echo and reverse, IPv4 and IPv6,
# is answered, and SIGTERM leaves nothing attached.
#
# The default control socket and what an instance keeps in /run/reqrouter
# (its lock) must not meet the other tests' instances there: the test
# runs in a mount namespace of its own, /run/reqrouter a tmpfs of its own
# in it (as doc_commands.sh does). The namespace is the host's slave, so
# the host's unmounts reach it: it keeps no other test's network
# namespace alive, and the bed's namespaces go with it.
cd "$(dirname "$0")/../.." || exit 1
if [ -z "${RR_SECOND_OWN_RUN:-}" ] && [ "$(id -u)" = 0 ]; then
	export RR_SECOND_OWN_RUN=1
	# shellcheck disable=SC2016 # $0 and $@ are the inner bash's
	exec unshare --mount --propagation slave -- bash -c \
		'mkdir -p /run/reqrouter &&
		mount -t tmpfs -o mode=0755 tmpfs /run/reqrouter && exec bash "$0" "$@"' \
		tests/integration/invoker_second_instance.sh "$@"
fi
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
rr_bed 2
CTL=$BUILD/reqrouterctl
FIRST_SOCK=$RR_TMP/first.sock
DEFAULT_SOCK=/run/reqrouter/$TB_IF_SRV.sock
HAVE_BPFTOOL=
command -v bpftool >/dev/null && HAVE_BPFTOOL=1

prog_id() { # the id of the XDP program on the server's end, per ip link
	ip -d -n "$TB_NS_SRV" link show dev "$TB_IF_SRV" |
		awk '/prog\/xdp/ { for (i = 1; i < NF; i++) if ($i == "id") print $(i + 1) }'
}
bpftool_id() { # the same, per bpftool net
	tb_srv bpftool net show dev "$TB_IF_SRV" 2>/dev/null |
		sed -En 's/.*(driver|generic|offload) id ([0-9]+).*/\2/p' | head -n 1
}
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
alive() { kill -0 "$1" 2>/dev/null; }
# shellcheck disable=SC2317 # likewise
none_alive() { # PID...: none of them runs
	local p
	for p in "$@"; do
		alive "$p" && return 1
	done
	return 0
}
first_status_pid() { # the pid the first's control socket answers with
	"$CTL" --control "$FIRST_SOCK" --json status >"$RR_TMP/first-status.json" \
		2>&1 && json_get "$RR_TMP/first-status.json" pid
}

# first_up: the first instance serving, its PID in FIRST_PID, its
# program's id in FIRST_ID; started (again) unless it runs with the
# program it attached.
N_FIRST=0
first_up() {
	if [ -n "${FIRST_PID:-}" ] && alive "$FIRST_PID" &&
		[ "$(prog_id)" = "$FIRST_ID" ]; then
		return 0
	fi
	if [ -n "${FIRST_PID:-}" ]; then
		say "    (the first instance was taken down: starting it again)"
		procs_term "$FIRST_PID" 3
		tb_srv ip link set dev "$TB_IF_SRV" xdp off 2>/dev/null
	fi
	N_FIRST=$((N_FIRST + 1))
	RR_PID=
	rr_start "first$N_FIRST" -i "$TB_IF_SRV" --control "$FIRST_SOCK" ||
		die "the first reqrouter did not start"
	FIRST_PID=$RR_PID
	FIRST_ERR=$RR_ERR
	FIRST_ID=$(prog_id)
	[ -n "$FIRST_ID" ] || die "the first reqrouter attached no XDP program"
	[ -n "$HAVE_BPFTOOL" ] &&
		check_eq "first: bpftool net shows the program ip link does" \
			"$FIRST_ID" "$(bpftool_id)"
	check_eq "first: echo answers" first "$(cli_ask 1 7 first)"
}

# second WHAT SOCKET ARGS...: a second reqrouter -i IF ARGS... while the
# first serves; SOCKET is the control socket it would make.
second() {
	local what=$1 sock=$2 lines
	shift 2
	say "== a second instance, $what"
	first_up
	rr_run "second-${what// /-}" -i "$TB_IF_SRV" "$@"
	sed 's/^/    stderr: /' "$RR_ERR" | head -n 5
	check_eq "$what: the second exits with status" 1 "$RR_RC"
	lines=$(grep -c 'already serves' "$RR_ERR")
	check_eq "$what: one log line says 'already serves'" 1 "$lines"
	check "$what: nothing on stdout" test ! -s "$RR_OUT"
	check "$what: no control socket made at $sock" test ! -e "$sock"
	check_eq "$what: the first's XDP program untouched (ip link id)" \
		"$FIRST_ID" "$(prog_id)"
	[ -n "$HAVE_BPFTOOL" ] &&
		check_eq "$what: the first's XDP program untouched (bpftool net id)" \
			"$FIRST_ID" "$(bpftool_id)"
	sleep 1
	check "$what: the first still runs a second later" alive "$FIRST_PID"
	check "$what: the first logged nothing about its program removed" \
		eval "! grep -qi 'program was removed' '$FIRST_ERR'"
	check_eq "$what: the first answers echo" still-here \
		"$(cli_ask 1 7 still-here)"
	check_eq "$what: reqrouterctl --control FIRST status answers, the first's pid" \
		"$FIRST_PID" "$(first_status_pid)"
	check "$what: the first's control socket is still there" test -S "$FIRST_SOCK"
	rm -f "$sock"
}

second "its own control socket" "$RR_TMP/second.sock" \
	--control "$RR_TMP/second.sock"
second "--control none" "$DEFAULT_SOCK" --control none
second "the default control socket" "$DEFAULT_SOCK"
second "-q 1 -S --control none" "$DEFAULT_SOCK" -q 1 -S --control none

say "== kill -9 of the first, then a new start"
first_up
RR_PID=$FIRST_PID
mapfile -t cells < <(pgrep -P "$FIRST_PID")
rr_kill_wait KILL 2
check_eq "kill -9: killed" 137 "$RR_RC"
check "kill -9: its ${#cells[@]} cells exit on their own within 5 s" \
	wait_for 5 none_alive "${cells[@]}"
check_eq "kill -9: its program stays attached" "$FIRST_ID" "$(prog_id)"
rr_start after -i "$TB_IF_SRV" --control "$FIRST_SOCK" ||
	die "no start after the kill -9"
check "after: the log says 'replacing a stale reqrouter XDP program'" \
	grep -q 'replacing a stale reqrouter XDP program' "$RR_ERR"
now=$(prog_id)
check "after: a new program is attached ($FIRST_ID -> $now)" \
	test -n "$now" -a "$now" != "$FIRST_ID"
check "after: 200 IPv4 + 200 IPv6 requests to echo and reverse answered" \
	serves 200 --timeout 2
check_eq "after: reqrouterctl status answers with the new pid" "$RR_PID" \
	"$(first_status_pid)"
rr_kill_wait TERM 5
check_eq "after: SIGTERM exit status" 0 "$RR_RC"
check "after: no XDP program left" eval '! xdp_on_srv'
finish
