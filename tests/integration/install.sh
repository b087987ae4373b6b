#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make install and make uninstall, into a DESTDIR: install puts exactly the
# expected files (binaries, man pages, the systemd unit and the sysusers.d
# file that makes its user, bash completion, docs and examples, the
# function modules, the function API headers and reqrouter-function.pc,
# /etc/reqrouter/reqrouter.conf; no BPF object, the programs are inside
# the binaries), the installed binaries run and say their version, the
# unit names the installed paths and its user, which the sysusers file
# makes (systemd-sysusers runs only without DESTDIR), and passes
# `systemd-analyze verify` with a sandbox exposure of at most 3.0, the
# completion completes, a changed /etc file survives both a second install
# and uninstall, and uninstall leaves no file behind.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
not() { ! "$@"; }

[ -x "$RR" ] || die "no binary at $RR (run make first)"
RR_TMP=$(mktemp -d /tmp/rr-install.XXXXXX)
trap 'rm -rf "$RR_TMP"' EXIT
D=$RR_TMP/dest
version=$(cat VERSION)

files() { (cd "$D" && find . -type f -o -type l | sed 's|^\.||' | sort); }

say "== make install DESTDIR=... PREFIX=/usr"
make --no-print-directory install DESTDIR="$D" PREFIX=/usr >"$RR_TMP/install.log" 2>&1
check_eq "make install: exit 0" 0 $?
cat >"$RR_TMP/want" <<EOW
/etc/reqrouter/reqrouter.conf
/usr/bin/rrload
/usr/lib/systemd/system/reqrouter@.service
/usr/lib/sysusers.d/reqrouter.conf
/usr/sbin/reqrouter
/usr/sbin/reqrouterctl
/usr/share/bash-completion/completions/reqrouter
/usr/share/bash-completion/completions/reqrouterctl
/usr/share/doc/reqrouter/LICENSE
/usr/share/doc/reqrouter/README.md
/usr/share/doc/reqrouter/examples/kv.txt
/usr/share/doc/reqrouter/examples/reqrouter.conf
/usr/share/doc/reqrouter/examples/reqrouter.rules.yml
/usr/share/man/man1/rrload.1
/usr/share/man/man8/reqrouter.8
/usr/share/man/man8/reqrouterctl.8
EOW
{
	for m in "$BUILD"/functions/*.so; do
		echo "/usr/lib/reqrouter/functions/${m##*/}"
	done
	# The function API, for modules built out of tree (out_of_tree.sh
	# builds one against it).
	for h in include/reqrouter/*.h; do
		echo "/usr/$h"
	done
	echo /usr/share/pkgconfig/reqrouter-function.pc
} >>"$RR_TMP/want"
sort -o "$RR_TMP/want" "$RR_TMP/want"
check "exactly the expected files" diff "$RR_TMP/want" <(files)
for b in sbin/reqrouter sbin/reqrouterctl bin/rrload; do
	check_eq "installed $b --version" "${b#*/} $version" "$("$D/usr/$b" --version 2>&1)"
done
check_eq "the binaries are executable by all, the rest read-only" \
	"755 755 755 644 644 644" \
	"$(stat -c %a "$D/usr/sbin/reqrouter" "$D/usr/sbin/reqrouterctl" \
		"$D/usr/bin/rrload" "$D/usr/share/man/man8/reqrouter.8" \
		"$D/usr/lib/systemd/system/reqrouter@.service" \
		"$D/usr/lib/sysusers.d/reqrouter.conf" | xargs)"

say "== the systemd unit"
U=$D/usr/lib/systemd/system/reqrouter@.service
check "no placeholder left" not grep -q '@[A-Z]*@' "$U"
# shellcheck disable=SC2016 # $REQROUTER_ARGS is the unit's, not ours
check "ExecStart runs the installed binary with the /etc config" \
	grep -qx 'ExecStart=/usr/sbin/reqrouter -i %i -c /etc/reqrouter/reqrouter.conf $REQROUTER_ARGS' "$U"
check "Type=notify" grep -qx 'Type=notify' "$U"
# The unit's user is the one the sysusers file makes; into a DESTDIR
# install makes no user (systemd-sysusers runs only for the live system).
S=$D/usr/lib/sysusers.d/reqrouter.conf
check "User=reqrouter, Group=reqrouter" \
	test "$(grep -cxE '(User|Group)=reqrouter' "$U")" = 2
check "the sysusers file makes user reqrouter, no home, no login" \
	grep -qxE 'u reqrouter - "[^"]+" /nonexistent /usr/sbin/nologin' "$S"
check "the sysusers file is the source's" cmp -s configs/reqrouter.sysusers "$S"
check "install into a DESTDIR runs no systemd-sysusers" \
	not grep -qiE 'sysusers|creating (user|group)' "$RR_TMP/install.log"
if command -v systemd-sysusers >/dev/null; then
	mkdir -p "$RR_TMP/sysroot"
	systemd-sysusers --root="$RR_TMP/sysroot" --dry-run "$S" >"$RR_TMP/sysusers.out" 2>&1
	check_eq "systemd-sysusers takes it (a dry run on an empty root): exit 0" 0 $?
	check "... and would make user reqrouter" \
		grep -q "Creating user 'reqrouter'" "$RR_TMP/sysusers.out"
fi
if command -v systemd-analyze >/dev/null; then
	# Verified as an instance, with the paths moved into DESTDIR so the
	# executables it names exist; man pages are checked by man_pages.sh.
	mkdir -p "$RR_TMP/unit"
	sed "s|/usr/sbin/|$D/usr/sbin/|g" "$U" >"$RR_TMP/unit/reqrouter@eth0.service"
	systemd-analyze verify --man=no "$RR_TMP/unit/reqrouter@eth0.service" \
		>"$RR_TMP/verify.out" 2>&1
	rc=$?
	sed 's/^/    /' "$RR_TMP/verify.out"
	check_eq "systemd-analyze verify: exit 0" 0 "$rc"
	check "systemd-analyze verify: no complaint" test ! -s "$RR_TMP/verify.out"
	exposure=$(systemd-analyze security --offline=yes \
		"$RR_TMP/unit/reqrouter@eth0.service" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	check "systemd-analyze security: exposure ${exposure:-?} is at most 3.0" \
		python3 -c 'import sys; sys.exit(not float(sys.argv[1]) <= 3.0)' "${exposure:-99}"
else
	bad "systemd-analyze not found (tools/install-deps.sh installs systemd)"
fi
check "the man page installed is the one built" \
	cmp -s "$D/usr/share/man/man8/reqrouter.8" "$BUILD/man/reqrouter.8"

say "== bash completion"
comp=$(PATH=$D/usr/sbin:$PATH bash -c '
	source "$1/usr/share/bash-completion/completions/reqrouter"
	COMP_WORDS=(reqrouter --metrics-); COMP_CWORD=1; _reqrouter
	echo "${COMPREPLY[*]}"
	COMP_WORDS=(reqrouterctl he); COMP_CWORD=1; _reqrouterctl
	echo "${COMPREPLY[*]}"
	complete -p reqrouter reqrouterctl | wc -l' _ "$D")
check_eq "reqrouter --metrics-<TAB>, reqrouterctl he<TAB>, two complete specs" \
	"--metrics-file --metrics-listen|health|2" "$(tr '\n' '|' <<<"$comp" | sed 's/|$//')"

comp=$(PATH=$D/usr/sbin:$PATH bash -c '
	source "$1/usr/share/bash-completion/completions/reqrouter"
	COMP_WORDS=(reqrouter --isolation ""); COMP_CWORD=2; _reqrouter
	echo "${COMPREPLY[*]}"
	COMP_WORDS=(reqrouterctl un); COMP_CWORD=1; _reqrouterctl
	echo "${COMPREPLY[*]}"' _ "$D")
check_eq "reqrouter --isolation <TAB>, reqrouterctl un<TAB>" \
	"thread cell|unquarantine" "$(tr '\n' '|' <<<"$comp" | sed 's/|$//')"

say "== an administrator's /etc file is kept"
echo "; mine" >>"$D/etc/reqrouter/reqrouter.conf"
cp "$D/etc/reqrouter/reqrouter.conf" "$RR_TMP/mine"
make --no-print-directory install DESTDIR="$D" PREFIX=/usr >"$RR_TMP/install2.log" 2>&1
check "a second install keeps it, and says so" grep -q 'KEEP .*reqrouter.conf (exists)' "$RR_TMP/install2.log"
check "... unchanged" cmp -s "$RR_TMP/mine" "$D/etc/reqrouter/reqrouter.conf"
make --no-print-directory uninstall DESTDIR="$D" PREFIX=/usr >"$RR_TMP/uninstall.log" 2>&1
check_eq "make uninstall: exit 0" 0 $?
check_eq "uninstall keeps only the changed /etc file" "/etc/reqrouter/reqrouter.conf" "$(files | xargs)"

say "== make install; make uninstall leaves nothing"
rm -f "$D/etc/reqrouter/reqrouter.conf"
make --no-print-directory install DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
make --no-print-directory uninstall DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
check_eq "no file left" "" "$(files)"
check "no directory of ours left" test ! -e "$D/usr/share/doc/reqrouter" \
	-a ! -e "$D/etc/reqrouter" -a ! -e "$D/usr/include/reqrouter"
finish
