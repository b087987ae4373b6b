#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A user's mistake gets exactly one line on stderr, starting "reqrouter:",
# a non-zero exit (2 for wrong usage, 1 for a setup failure), nothing on
# stdout, and no XDP program left on the interface. Covered: unknown flags,
# bad numbers, unknown interface, more queues than the veth has, a port
# without a function, missing and broken config files, -N with -S, and
# running without privileges. --list and --help succeed, and every binary
# answers --version with "NAME VERSION".
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

rr_bed 4
IF=$TB_IF_SRV

# expect_error WANT_RC DESCRIPTION ARGS...: WANT_RC "any" accepts any
# non-zero status.
expect_error() {
	local want=$1 what=$2 lines
	shift 2
	rr_run err "$@"
	say "== $what: reqrouter $*"
	sed 's/^/    stderr: /' "$RR_ERR"
	if [ "$want" = any ]; then
		check "$what: non-zero exit ($RR_RC)" test "$RR_RC" -ne 0
	else
		check_eq "$what: exit status" "$want" "$RR_RC"
	fi
	lines=$(grep -c '' "$RR_ERR")
	check_eq "$what: lines on stderr" 1 "$lines"
	check "$what: stderr starts with 'reqrouter: '" \
		grep -q '^reqrouter: ..' "$RR_ERR"
	check "$what: nothing on stdout" test ! -s "$RR_OUT"
	check "$what: no XDP program left on $IF" eval '! xdp_on_srv'
}

expect_error 2 "unknown long flag" -i "$IF" --bogus
expect_error 2 "unknown short flag" -i "$IF" -Z
expect_error 2 "-q abc" -i "$IF" -q abc
expect_error 2 "-q 0" -i "$IF" -q 0
expect_error 2 "-b 0 (batch out of range)" -i "$IF" -b 0
expect_error 2 "-t with no value" -i "$IF" -t
expect_error 2 "no -i" -q 4
expect_error 2 "-N and -S together" -i "$IF" -N -S
expect_error 1 "unknown interface" -i rrnosuch0
expect_error 1 "-q 5 on a 4-queue veth" -i "$IF" -q 5
expect_error any "-p with a port that has no function" -i "$IF" -p 9999
expect_error any "-p with a function port and one without" -i "$IF" -p 1232,9999
expect_error any "-c with a missing file" -i "$IF" -c "$RR_TMP/no-such.conf"

printf '[reqrouter]\nqueues = banana\n' >"$RR_TMP/bad-value.conf"
expect_error any "config: bad value" -i "$IF" -c "$RR_TMP/bad-value.conf"
printf '[reqrouter\ninterface = %s\n' "$IF" >"$RR_TMP/bad-syntax.conf"
expect_error any "config: syntax error" -i "$IF" -c "$RR_TMP/bad-syntax.conf"
printf '[reqrouter]\ninterface = %s\nno_such_key = 1\n' "$IF" >"$RR_TMP/bad-key.conf"
expect_error any "config: unknown key" -c "$RR_TMP/bad-key.conf"
printf '[reqrouter]\ninterface = %s\n[function nosuch]\nport = 5\n' "$IF" \
	>"$RR_TMP/bad-fn.conf"
expect_error any "config: unknown function" -c "$RR_TMP/bad-fn.conf"

# Without privileges. The binary is copied where user nobody may run it.
cp "$RR" "$RR_TMP/reqrouter" && chmod 755 "$RR_TMP/reqrouter"
if command -v setpriv >/dev/null; then
	drop=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
	drop=(runuser -u nobody --)
fi
say "== without privileges: ${drop[*]} reqrouter -i $IF"
ip netns exec "$TB_NS_SRV" timeout 20 "${drop[@]}" "$RR_TMP/reqrouter" \
	-i "$IF" -q 4 >"$RR_TMP/nopriv.out" 2>"$RR_TMP/nopriv.err"
rc=$?
sed 's/^/    stderr: /' "$RR_TMP/nopriv.err"
check_eq "unprivileged: exit status" 1 "$rc"
check_eq "unprivileged: lines on stderr" 1 "$(grep -c '' "$RR_TMP/nopriv.err")"
check "unprivileged: the line starts 'reqrouter:' and says what is missing" \
	grep -qiE '^reqrouter: .*(root|CAP_|permi|privilege)' "$RR_TMP/nopriv.err"
check "unprivileged: nothing on stdout" test ! -s "$RR_TMP/nopriv.out"
check "unprivileged: no XDP program left on $IF" eval '! xdp_on_srv'

say "== --list"
"$RR" --list >"$RR_TMP/list.out" 2>"$RR_TMP/list.err"
check_eq "--list: exit status" 0 "$?"
sed 's/^/    /' "$RR_TMP/list.out"
check "--list: reverse on port 1232" grep -qE '^reverse +1232( |$)' "$RR_TMP/list.out"
check "--list: echo on port 7" grep -qE '^echo +7( |$)' "$RR_TMP/list.out"
check "--list: reverse answers in XDP and user space, and is pure" \
	grep -qE '^reverse +1232 +xdp,user +yes ' "$RR_TMP/list.out"
check "--list: echo answers in XDP and user space, and is pure" \
	grep -qE '^echo +7 +xdp,user +yes ' "$RR_TMP/list.out"
check "--list: nothing on stderr" test ! -s "$RR_TMP/list.err"

say "== --help, -h"
for h in --help -h; do
	"$RR" $h >"$RR_TMP/help.out" 2>"$RR_TMP/help.err"
	check_eq "$h: exit status" 0 "$?"
	check "$h: usage on stdout" grep -q '^Usage: reqrouter' "$RR_TMP/help.out"
	check "$h: nothing on stderr" test ! -s "$RR_TMP/help.err"
done

say "== --version on every binary"
want_version=$(cat VERSION)
for b in reqrouter reqrouterctl rrload sockserver reflector xskfloor; do
	out=$("$BUILD/$b" --version 2>&1)
	check_eq "$b --version: exit 0 and 'NAME VERSION'" "0 $b $want_version" \
		"$? $out"
	check "$b --help lists --version" \
		grep -q -- '--version' <("$BUILD/$b" --help 2>&1)
done
finish
