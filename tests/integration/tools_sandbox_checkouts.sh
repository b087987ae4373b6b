#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/sandbox in two checkouts at once: each checkout's up makes a
# sandbox of its own (named after the checkout), the second up leaves the
# first's reqrouter and bed alone, both answer, and down in one checkout
# removes its own and leaves the other up and answering. The checkouts
# are two copies of tools/ and configs/ in a temporary directory, running
# this build, so a user's own sandbox (this checkout's) is left alone.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

tb_prereqs
[ -x "$RR" ] || die "no binary at $RR (run make first)"
T=$(mktemp -d /tmp/rr-sandboxes.XXXXXX)
ABS_BUILD=$(cd "$BUILD" && pwd -P)
for c in a b; do
	mkdir "$T/$c" || die "cannot make $T/$c"
	cp -a tools configs "$T/$c/" || die "cannot copy a checkout"
done
# sb CHECKOUT ARGS...: that checkout's tools/sandbox, on this build.
sb() {
	local c=$1
	shift
	BUILD=$ABS_BUILD "$T/$c/tools/sandbox" "$@"
}
# shellcheck disable=SC2317 # called by the traps
cleanup() {
	sb a down >/dev/null 2>&1
	sb b down >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# name CHECKOUT: its sandbox's name, from what up printed.
name() { sed -n 's/^Sandbox \([^,]*\), of .*/\1/p' "$T/up.$1"; }
# state CHECKOUT KEY: a value from its sandbox's state file.
state() { sed -n "s/^$2=//p" "/run/reqrouter-sandbox/$(name "$1")/state"; }
ask() {
	ip netns exec "$(state "$1" TB_NS_CLI)" python3 tools/lib/ask.py --reply \
		--timeout 1 "$TB_IP4_SRV" 1232 "$2"
}
# runs PID: the process is there and no zombie (a zombie runs nothing).
# shellcheck disable=SC2317 # called through check
runs() { [ -e "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat")" != Z ]; }
# shellcheck disable=SC2317 # called through check
not_running() { ! runs "$1"; }

sb a up >"$T/up.a" 2>&1
check_eq "checkout a: up: exit 0" 0 $?
PID_A=$(state a SB_PID)
sb b up >"$T/up.b" 2>&1
check_eq "checkout b: up: exit 0" 0 $?
sed 's/^/    /' "$T/up.b" | head -n 3
check "the two sandboxes have names of their own ($(name a), $(name b))" \
	test -n "$(name a)" -a -n "$(name b)" -a "$(name a)" != "$(name b)"
check "b's up made a bed of its own" \
	test "$(state a TB_NS_SRV)" != "$(state b TB_NS_SRV)"
check "b's up left a's reqrouter alone (no restart)" \
	bash -c "! grep -q restarting '$T/up.b'"
check_eq "a's reqrouter is the one its up started" "$PID_A" "$(state a SB_PID)"
check "... and runs" runs "$PID_A"
check_eq "a answers" olleh "$(ask a hello)"
check_eq "b answers" olleh "$(ask b hello)"

NS_A="$(state a TB_NS_SRV) $(state a TB_NS_CLI)"
PID_B=$(state b SB_PID)
sb a down >"$T/down.a" 2>&1
check_eq "checkout a: down: exit 0" 0 $?
check "a's namespaces are gone" bash -c "! ip netns list | grep -qwE '${NS_A// /|}'"
check "a's reqrouter is gone" not_running "$PID_A"
sb b status >"$T/status.b" 2>&1
check_eq "checkout b: status: exit 0 (up)" 0 $?
check "b's reqrouter still runs" runs "$PID_B"
check_eq "b still answers" niaga "$(ask b again)"
sb a status >"$T/status.a" 2>&1
check_eq "checkout a: status: exit 3 (not up)" 3 $?
check "... and names the sandbox that is" grep -q "$(name b) (of $T/b)" "$T/status.a"
sb b down >/dev/null 2>&1
check_eq "checkout b: down: exit 0" 0 $?
finish
