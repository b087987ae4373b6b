#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/sandbox as a newcomer uses it (make sandbox, a function of one's
# own, make sandbox again):
#  - up makes a bed that stays after it exits, with reqrouter serving on
#    it, and prints how to ask it: the nc and kdig lines it prints, run
#    as printed, are answered from the client namespace; up again says it
#    is up and leaves reqrouter alone; status says what it serves;
#  - a function dropped into functions/ (a temporary upper-casing one on
#    port 9321, removed on exit whatever happens) and a rebuild: status
#    says the binary changed, up restarts reqrouter with it on the same
#    bed, and the new function answers, as do the old ones;
#  - down leaves nothing: no namespace, no process, no XDP program, no
#    state directory;
#    status then says not up (exit 3), and down again is no error.
# The rebuild goes to a copy of $BUILD, never to the build the other
# tests run from; the sandbox has a name of its own, so a user's sandbox
# is left alone.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

tb_prereqs
[ -x "$RR" ] || die "no binary at $RR (run make first)"
NAME=t$(printf '%05x' $(($$ & 0xfffff)))
DIR=/run/reqrouter-sandbox/$NAME
FN=sbxupper
FN_SRC=functions/$FN.c
FN_PORT=9321
[ ! -e "$FN_SRC" ] || die "$FN_SRC exists already: not this test's to replace"
T=$(mktemp -d /tmp/rr-sandbox.XXXXXX)
# shellcheck disable=SC2317 # called by the traps
cleanup() {
	rm -f "$FN_SRC"
	[ ! -d "$DIR" ] || BUILD=$T/build tools/sandbox --name "$NAME" down >/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# The build the sandbox runs from: a copy (the sanitizer build, the
# fuzzers and the package left out), rebuilt below.
mkdir "$T/build"
tar -C "$BUILD" --exclude=./san --exclude=./fuzz --exclude=./deb -cf - . |
	tar -C "$T/build" -xf - || die "cannot copy $BUILD"
SB=(env BUILD="$T/build" tools/sandbox --name "$NAME")

# state KEY: a value from the sandbox's state file.
state() { sed -n "s/^$1=//p" "$DIR/state"; }
# gone PID: the process runs no more (a zombie its parent has not reaped
# yet runs nothing either).
# shellcheck disable=SC2317 # called through check
gone() {
	[ ! -e "/proc/$1" ] || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]
}
cli_ask() {
	ip netns exec "$NS_CLI" python3 tools/lib/ask.py --reply --timeout 1 \
		"$TB_IP4_SRV" "$1" "$2"
}

start=$(date +%s)
"${SB[@]}" up >"$T/up1.out" 2>&1
check_eq "up: exit 0" 0 $?
sed 's/^/    /' "$T/up1.out"
[ -f "$DIR/state" ] || die "up: no state in $DIR"
NS_SRV=$(state TB_NS_SRV)
NS_CLI=$(state TB_NS_CLI)
PID1=$(state SB_PID)
check "up: both namespaces are there after it exited" \
	test -e "/run/netns/$NS_SRV" -a -e "/run/netns/$NS_CLI"
check "up: reqrouter runs in the server namespace" \
	test "$(ip netns identify "$PID1")" = "$NS_SRV"
check_eq "a request to reverse from the client namespace" "olleh" \
	"$(cli_ask 1232 hello)"
line=$(grep -m1 ' nc -u ' "$T/up1.out" | sed 's/^ *//')
check "up prints an nc line" test -n "$line"
check_eq "the nc line, run as printed" "olleh" \
	"$(timeout 10 bash -c "$line" 2>&1)"
line=$(grep -m1 ' kdig ' "$T/up1.out" | sed 's/^ *//')
if command -v kdig >/dev/null; then
	check "the kdig line, run as printed: the zone's SOA" \
		bash -c "timeout 10 $line | grep -q 'status: NOERROR'"
fi
for w in "reqrouterctl --control $DIR/control.sock status" "$DIR/metrics.prom" \
	"rrload -s $TB_IP4_SRV"; do
	check "up says how to watch and load it: $w" grep -qF -- "$w" "$T/up1.out"
done
check "reqrouterctl status, as printed" \
	"$T/build/reqrouterctl" --control "$DIR/control.sock" status

"${SB[@]}" up >"$T/up2.out" 2>&1
check_eq "up again: exit 0" 0 $?
check "up again: says it is up already" grep -q 'already up' "$T/up2.out"
check_eq "up again: the same reqrouter" "$PID1" "$(state SB_PID)"
"${SB[@]}" status >"$T/status1.out" 2>&1
check_eq "status: exit 0 (up)" 0 $?
check "status: says what it serves" grep -qE '^ +reverse +UDP 1232 ' "$T/status1.out"

cat >"$FN_SRC" <<EOF
// SPDX-License-Identifier: GPL-2.0
/* tests/integration/tools_sandbox.sh's function, here only while it runs. */
#include <reqrouter/rr_function.h>

static int $FN(const struct rr_request *req, uint8_t *buf, size_t len,
		    size_t room)
{
	size_t i;

	(void)req;
	(void)room;
	for (i = 0; i < len; i++)
		if (buf[i] >= 'a' && buf[i] <= 'z')
			buf[i] = (uint8_t)(buf[i] - 32);
	return (int)len;
}

RR_FUNCTION_DEF($FN, $FN_PORT, "upper-case the payload (a test)",
		.handler = $FN);
EOF
say "building $T/build with $FN_SRC"
(
	unset MAKEFLAGS MFLAGS MAKELEVEL
	san=()
	[[ $BUILD != *san* ]] || san=(SAN=1)
	make --no-print-directory -j2 "${san[@]}" BUILD="$T/build" all
) >"$T/make.log" 2>&1
rc=$?
check_eq "make all with the new function: exit 0" 0 $rc
[ $rc -eq 0 ] || sed 's/^/    /' "$T/make.log"
rm -f "$FN_SRC"
"${SB[@]}" status >"$T/status2.out" 2>&1
check "status after the rebuild: says the binary changed" \
	grep -q 'changed since it started' "$T/status2.out"

"${SB[@]}" up >"$T/up3.out" 2>&1
check_eq "up after the rebuild: exit 0" 0 $?
sed 's/^/    /' "$T/up3.out"
check "up after the rebuild: restarts reqrouter for the new build" \
	grep -q 'is a new build: restarting reqrouter' "$T/up3.out"
PID2=$(state SB_PID)
check "a new reqrouter" test "$PID2" != "$PID1"
check "the old one is gone" gone "$PID1"
check_eq "the same bed" "$NS_SRV $NS_CLI" "$(state TB_NS_SRV) $(state TB_NS_CLI)"
check "up lists the new function" grep -qE "^ +$FN +UDP $FN_PORT " "$T/up3.out"
check_eq "the new function answers" "HELLO, SANDBOX" \
	"$(cli_ask $FN_PORT 'hello, sandbox')"
check_eq "reverse still answers" "olleh" "$(cli_ask 1232 hello)"

PROG=$(sed -n 's/.*XDP program attached to .* (id \([0-9]*\)).*/\1/p' "$DIR/reqrouter.log")
check "the log names the XDP program's id" test -n "$PROG"
"${SB[@]}" down >"$T/down.out" 2>&1
check_eq "down: exit 0" 0 $?
sed 's/^/    /' "$T/down.out"
check "down: the namespaces are gone" \
	test ! -e "/run/netns/$NS_SRV" -a ! -e "/run/netns/$NS_CLI"
check "down: reqrouter is gone" gone "$PID2"
check "down: no process of the build copy runs" \
	bash -c "! pgrep -f '^$T/build/' >/dev/null"
check "down: its XDP program (id $PROG) is gone" \
	bash -c "! bpftool prog show id '$PROG' >/dev/null 2>&1"
check "down: the state directory is gone" test ! -e "$DIR"
check "down: no lock file either" test ! -e "$DIR.lock"
"${SB[@]}" status >"$T/status3.out" 2>&1
check_eq "status after down: exit 3 (not up)" 3 $?
"${SB[@]}" down >"$T/down2.out" 2>&1
check_eq "down again: exit 0" 0 $?
check "down again: says not up" grep -q 'not up' "$T/down2.out"
say "figures: sandbox test took $(($(date +%s) - start)) s"
finish
