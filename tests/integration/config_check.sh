#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter --check (and reqrouterctl conf-check, which runs it): a good
# config passes (exit 0, a verdict and nothing else) for an interface that
# does not exist, as user nobody, and creates nothing: no control socket,
# no metrics file, nothing in /run (it runs with an empty tmpfs there).
# Each problem is one line with FILE:LINE where it has one, then the
# verdict: a dns zone file that is missing and a module's function whose
# init() refuses its settings exit 1, as a start would (both said when
# both are wrong); an unknown key, a bad allow-list, an unknown system
# call name and an unknown --user exit 2, as a start would. --check and a
# start read the same way and say the same line: no interface given
# (exit 2), two functions on one port (FILE:LINE), `user =` and
# `control_group =` naming no user or group (FILE:LINE and the key, not
# the flag), a -c FILE that is not there (one line naming it, and the
# verdict names it too). Needs no test bed.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CTL=$BUILD/reqrouterctl
TMODS=$BUILD/tests/modules
{ [ -x "$RR" ] && [ -x "$CTL" ]; } || die "no binaries in $BUILD (run make first)"
[ -f "$TMODS/upper.so" ] || die "no test modules in $TMODS (run make first)"
T=$(mktemp -d /tmp/rr-check.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
IF=rr-nosuch$$

# run NAME ARGS...: reqrouter --check -i $IF ARGS; stdout, stderr in
# $T/NAME.*, the exit status in RC.
run() {
	local name=$1
	shift
	"$RR" --check -i "$IF" "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}

# conf NAME LINES...: a config file $T/NAME.conf of these lines.
conf() {
	local name=$1
	shift
	printf '%s\n' "$@" >"$T/$name.conf"
	chmod 644 "$T/$name.conf"
}

conf good '[reqrouter]' "interface = $IF" 'isolation = cell' \
	'[function dns]' "zone = example.com $PWD/configs/example.zone" \
	'[function kv]' "table = $PWD/configs/kv.txt" \
	'[function reverse]' 'allow = 198.51.100.0/24, 2001:db8::/32' \
	'[function echo]' 'syscalls = openat close'
check "no interface named $IF here" test ! -e "/sys/class/net/$IF"
# shellcheck disable=SC2016 # the inner shell expands them
unshare -m --propagation private sh -c '
	mount -t tmpfs tmpfs /run &&
	"$@" >"$0.out" 2>"$0.err"; echo $? >"$0.rc"; ls -A /run >"$0.run"' \
	"$T/good" "$RR" --check -c "$T/good.conf" -i "$IF" \
	--metrics-file "$T/m.prom" --control "$T/c.sock"
check_eq "a good config: exit 0" 0 "$(cat "$T/good.rc")"
check "a good config: the verdict says fine, and what it would serve" \
	grep -q "^reqrouter --check: $T/good.conf: fine; it would serve .*kv on port 7379.*dns on port 53" "$T/good.out"
check "a good config: the verdict names reverse's allow-list" \
	grep -q "reverse on port 1232 (only to 198.51.100.0/24, 2001:db8::/32)" "$T/good.out"
check_eq "a good config: one line, on stdout" 1 "$(wc -l <"$T/good.out")"
check_eq "a good config: nothing on stderr" "" "$(cat "$T/good.err")"
check_eq "nothing made in /run" "" "$(cat "$T/good.run")"
check "no control socket made" test ! -e "$T/c.sock"
check "no metrics file made" test ! -e "$T/m.prom"

# As nobody: the binary and the files the config names copied where
# nobody may read them (the tree may be under root's 0700 home).
mkdir -m 755 "$T/nobody"
cp "$RR" "$T/nobody/reqrouter"
cp configs/example.zone configs/kv.txt "$T/nobody/"
chmod 644 "$T/nobody/example.zone" "$T/nobody/kv.txt"
sed -e "s|$PWD/configs/|$T/nobody/|" "$T/good.conf" >"$T/nobody/good.conf"
chmod 644 "$T/nobody/good.conf"
runuser -u nobody -- "$T/nobody/reqrouter" --check -c "$T/nobody/good.conf" \
	>"$T/nobody.out" 2>&1
rc=$?
[ $rc = 0 ] || sed 's/^/    /' "$T/nobody.out"
check_eq "as user nobody: exit 0" 0 $rc
"$CTL" conf-check -c "$T/good.conf" >"$T/ctl.out" 2>&1
check_eq "reqrouterctl conf-check -c FILE: exit 0" 0 $?
check "reqrouterctl conf-check: reqrouter's verdict" \
	grep -q "^reqrouter --check: $T/good.conf: fine" "$T/ctl.out"

conf zone '[reqrouter]' 'threads = 1' '[function dns]' \
	"zone = example.com $T/missing.zone"
run zone -c "$T/zone.conf"
check_eq "a missing zone file: exit 1" 1 "$RC"
check "a missing zone file: FILE:LINE of the zone setting" \
	grep -q "^reqrouter: $T/zone.conf:4: function dns: .*$T/missing.zone" "$T/zone.err"
check "a missing zone file: the verdict" \
	grep -q "^reqrouter --check: $T/zone.conf: 1 problem; reqrouter would not start (exit 1)" "$T/zone.out"
"$CTL" conf-check -i "$IF" -c "$T/zone.conf" >/dev/null 2>&1
check_eq "reqrouterctl conf-check: reqrouter's exit status" 1 $?

conf module '[function upper]' 'shout = yes'
run module -c "$T/module.conf" --functions-dir "$TMODS"
check_eq "a module's init() refuses: exit 1" 1 "$RC"
check "a module's init() refuses: FILE:LINE, the function, its reason" \
	grep -q "^reqrouter: $T/module.conf:2: function upper: takes no settings" "$T/module.err"

conf two '[function upper]' 'shout = yes' '[function dns]' \
	"zone = example.com $T/missing.zone"
run two -c "$T/two.conf" --functions-dir "$TMODS"
check_eq "two problems: exit 1" 1 "$RC"
check_eq "two problems: a line each" 2 "$(wc -l <"$T/two.err")"
check "two problems: the verdict counts them" grep -q ': 2 problems;' "$T/two.out"

conf key '[reqrouter]' 'frobnicate = 1'
run key -c "$T/key.conf"
check_eq "an unknown key: exit 2" 2 "$RC"
check "an unknown key: FILE:LINE" \
	grep -q "^reqrouter: $T/key.conf:2: unknown key 'frobnicate' in \[reqrouter\]" "$T/key.err"
check "an unknown key: the verdict" grep -q '1 problem; .*(exit 2)' "$T/key.out"

conf allow '[function reverse]' 'allow = 198.51.100.0/24' 'allow = 10.0.0.0/33'
run allow -c "$T/allow.conf"
check_eq "a bad allow-list: exit 2" 2 "$RC"
check "a bad allow-list: FILE:LINE" grep -q "^reqrouter: $T/allow.conf:3: " "$T/allow.err"

conf sys '[function echo]' 'syscalls = openat frobcall'
run sys -c "$T/sys.conf"
check_eq "an unknown system call name: exit 2" 2 "$RC"
check "an unknown system call name: FILE:LINE" \
	grep -q "^reqrouter: $T/sys.conf:2: syscalls: no system call is named 'frobcall'" "$T/sys.err"

run user --user rr-nosuch-user
check_eq "an unknown --user: exit 2" 2 "$RC"
check_eq "an unknown --user: says so" \
	"reqrouter: --user: no user named 'rr-nosuch-user'" "$(cat "$T/user.err")"

say "== as a start: the same line, the same exit status"
# as_start WHAT STATUS LINE ARGS...: reqrouter --check ARGS exits STATUS
# with LINE alone on stderr, and a start with ARGS says and does the same
# before it touches anything. Its --check verdict in $T/last.out.
as_start() {
	local what=$1 status=$2 line=$3 src
	shift 3
	"$RR" --check "$@" >"$T/last.out" 2>"$T/last.err"
	RC=$?
	timeout -k 2 20 "$RR" "$@" >/dev/null 2>"$T/last.start"
	src=$?
	check_eq "$what: exit $status" "$status" "$RC"
	check_eq "$what: one line" "$line" "$(cat "$T/last.err")"
	check_eq "$what: a start exits the same" "$RC" "$src"
	check_eq "$what: a start says the same" "$line" "$(cat "$T/last.start")"
}
as_start "no interface given" 2 \
	"reqrouter: no interface given: use -i IFACE (see --help)"

conf clash '[reqrouter]' 'threads = 1' '[function echo]' 'port = 1232'
as_start "two functions on one port: FILE:LINE of the port" 2 \
	"reqrouter: $T/clash.conf:4: functions 'echo' and 'reverse' are both on port 1232" \
	-i "$IF" -c "$T/clash.conf"

conf ukey '[reqrouter]' 'threads = 1' 'user = rr-nosuch-user'
as_start "user = an unknown user: FILE:LINE and the key, not --user" 2 \
	"reqrouter: $T/ukey.conf:3: user: no user named 'rr-nosuch-user'" \
	-i "$IF" -c "$T/ukey.conf"
as_start "--user over user =: the flag is named" 2 \
	"reqrouter: --user: no user named 'rr-other-user'" \
	-i "$IF" -c "$T/ukey.conf" --user rr-other-user

conf gkey '[reqrouter]' 'control_group = rr-nosuch-group'
as_start "control_group = an unknown group: FILE:LINE and the key" 1 \
	"reqrouter: $T/gkey.conf:2: control_group: no group named 'rr-nosuch-group'" \
	-i "$IF" -c "$T/gkey.conf" --control "$T/g.sock"

as_start "a -c FILE that is not there: one line naming it" 2 \
	"reqrouter: cannot open config file $T/missing.conf: No such file or directory" \
	-i "$IF" -c "$T/missing.conf"
check_eq "... and the verdict names it" \
	"reqrouter --check: $T/missing.conf: 1 problem; reqrouter would not start (exit 2)" \
	"$(cat "$T/last.out")"
finish
