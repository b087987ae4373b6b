#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make install and make uninstall, into a DESTDIR: install puts exactly the
# expected files (binaries, man pages, the systemd unit and the sysusers.d
# file that makes its user, bash completion, docs and examples, the
# function modules, the function API headers and reqrouter-function.pc,
# /etc/reqrouter/reqrouter.conf, the anycast kit; no BPF object, the
# programs are inside the binaries), the installed binaries run and say
# their version, the unit names the installed paths and its user, which
# the sysusers file makes (systemd-sysusers runs only without DESTDIR),
# and passes `systemd-analyze verify` with a sandbox exposure of at most
# 3.0, its stop timeout outlasts a drain, it may write Debian's
# node_exporter textfile directory, every %i and %I in the units expands
# (by systemd itself) to the right name for an interface br-lan, the
# completion completes, a changed /etc file survives both a second install
# and uninstall, and uninstall leaves no file behind. Without help2man,
# make install says so in one line, and installs nothing.
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
/usr/lib/systemd/system/reqrouter-announce@.service
/usr/lib/systemd/system/reqrouter@.service
/usr/lib/sysusers.d/reqrouter.conf
/usr/sbin/reqrouter
/usr/sbin/reqrouter-announce
/usr/sbin/reqrouter-receive-nice
/usr/sbin/reqrouterctl
/usr/share/bash-completion/completions/reqrouter
/usr/share/bash-completion/completions/reqrouterctl
/usr/share/doc/reqrouter/LICENSE
/usr/share/doc/reqrouter/README.md
/usr/share/doc/reqrouter/examples/kv.txt
/usr/share/doc/reqrouter/examples/reqrouter.conf
$(for f in docs/*.md; do echo "/usr/share/doc/reqrouter/$f"; done)
/usr/share/man/man1/rrload.1
/usr/share/man/man5/reqrouter.conf.5
/usr/share/man/man8/reqrouter.8
/usr/share/man/man8/reqrouterctl.8
/usr/share/reqrouter/anycast/bird-host.conf
/usr/share/reqrouter/anycast/bird-router.conf
/usr/share/reqrouter/anycast/reqrouter@.service.d/anycast-drain.conf
/usr/share/reqrouter/anycast/sysctl-router.conf
/usr/share/reqrouter/reqrouter.grafana.json
/usr/share/reqrouter/reqrouter.rules.yml
EOW
{
	for m in "$BUILD"/functions/*.so; do
		echo "/usr/lib/reqrouter/functions/${m##*/}"
	done
	# The function API, for modules built out of tree (module_out_of_tree.sh
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
	"755 755 755 755 644 644 644 644 644" \
	"$(stat -c %a "$D/usr/sbin/reqrouter" "$D/usr/sbin/reqrouterctl" \
		"$D/usr/bin/rrload" "$D/usr/sbin/reqrouter-announce" \
		"$D/usr/share/man/man8/reqrouter.8" \
		"$D/usr/lib/systemd/system/reqrouter@.service" \
		"$D/usr/lib/systemd/system/reqrouter-announce@.service" \
		"$D/usr/share/reqrouter/anycast/reqrouter@.service.d/anycast-drain.conf" \
		"$D/usr/lib/sysusers.d/reqrouter.conf" | xargs)"

say "== the systemd unit"
U=$D/usr/lib/systemd/system/reqrouter@.service
A=$D/usr/lib/systemd/system/reqrouter-announce@.service
DROPIN=$D/usr/share/reqrouter/anycast/reqrouter@.service.d/anycast-drain.conf
check "no placeholder left" not grep -q '@[A-Z]*@' "$U"
# shellcheck disable=SC2016 # $REQROUTER_ARGS is the unit's, not ours
check "ExecStart runs the installed binary with the /etc config" \
	grep -qx 'ExecStart=/usr/sbin/reqrouter -i %I -c /etc/reqrouter/reqrouter.conf $REQROUTER_ARGS' "$U"
check "Type=notify" grep -qx 'Type=notify' "$U"
check "root's steps put the receive work behind the workers once ready, and back after" \
	grep -qzP 'ExecStartPost=-\+/usr/sbin/reqrouter-receive-nice set %I\nExecStopPost=-\+/usr/sbin/reqrouter-receive-nice restore %I\n' "$U"
check "... left alone (0) unless IFACE.env says otherwise" \
	grep -qzP 'Environment=REQROUTER_RECEIVE_NICE=0\nEnvironmentFile=-/etc/reqrouter/%I.env\n' "$U"
check_eq "the script is executable by all" 755 \
	"$(stat -c %a "$D/usr/sbin/reqrouter-receive-nice")"
check "the anycast units name the installed programs, not /usr/local" \
	not grep -q /usr/local "$A" "$DROPIN"
check "the drain drop-in drains through the installed reqrouterctl" \
	grep -qx 'ExecStop=-/usr/sbin/reqrouterctl --socket /run/reqrouter/%I.sock drain' "$DROPIN"

# A stop must outlast the longest drain, or SIGKILL cuts it short: 30 s
# with drain_on_term, that plus the 5 s reqrouterctl drain waits beyond
# it (src/ctl/reqrouterctl.c) for the drop-in's ExecStop=.
drain_s=$(sed -n 's/^#define RR_DRAIN_TIMEOUT_S \([0-9]*\).*/\1/p' src/lib/config.h)
for f in "$U" "$DROPIN"; do
	stop_s=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s\{0,1\}$/\1/p' "$f")
	check "${f##*/}: TimeoutStopSec=${stop_s:-?} s outlasts a drain (${drain_s:-?} s + 5)" \
		test "${stop_s:-0}" -gt "$((${drain_s:-99} + 5))"
done
check "it may write Debian's node_exporter textfile directory, if there is one" \
	grep -qx 'ReadWritePaths=-/var/lib/prometheus/node-exporter' "$U"
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
	# executables it names exist; man pages are checked by
	# tests/lint/man_pages.sh.
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
	# The anycast host's set: an instance with an escaped name, the
	# drain drop-in beside it (verify reads DIR/reqrouter@.service.d/),
	# and the announcer's unit.
	v=$RR_TMP/unit-anycast
	mkdir -p "$v/reqrouter@.service.d"
	sed "s|/usr/sbin/|$D/usr/sbin/|g" "$U" >"$v/reqrouter@br\x2dlan.service"
	sed "s|/usr/sbin/|$D/usr/sbin/|g" "$DROPIN" >"$v/reqrouter@.service.d/${DROPIN##*/}"
	sed "s|/usr/sbin/|$D/usr/sbin/|g" "$A" >"$v/reqrouter-announce@br\x2dlan.service"
	systemd-analyze verify --man=no "$v/reqrouter@br\x2dlan.service" \
		"$v/reqrouter-announce@br\x2dlan.service" >"$RR_TMP/verify2.out" 2>&1
	rc=$?
	sed 's/^/    /' "$RR_TMP/verify2.out"
	check_eq "systemd-analyze verify, br-lan with the drop-in, and its announcer: exit 0" 0 "$rc"
	check "... no complaint" test ! -s "$RR_TMP/verify2.out"
else
	bad "systemd-analyze not found (tools/install-deps.sh installs systemd)"
fi
check "the man page installed is the one built" \
	cmp -s "$D/usr/share/man/man8/reqrouter.8" "$BUILD/man/reqrouter.8"

say "== an interface named br-lan: %i and %I"
# systemd's instance name is the escaped interface name: br-lan is
# br\x2dlan, as '-' stands for '/'. %I (unescaped) must be used wherever
# the interface's own name is meant, %i (escaped) inside another unit's
# name. Every specifier in the units is expanded here by systemd itself:
# systemd-analyze verify names, expanded, the program it cannot find.
inst=$(systemd-escape br-lan)
expand() { # expand STRING: what systemd makes of it in instance $inst
	local dir=$RR_TMP/probe
	rm -rf "$dir" && mkdir -p "$dir"
	# '=': systemd would fold the // of an absolute STRING into one.
	printf '[Service]\nExecStart=/rr-probe/=%s\n' "$1" >"$dir/probe@$inst.service"
	systemd-analyze verify --man=no "$dir/probe@$inst.service" 2>&1 |
		sed -n 's|.*/rr-probe/=\([^ ]*\).*|\1|p' | head -n 1
}
# spec FILE KEY [AFTER]: the first word with a specifier in KEY's value
# (after the word AFTER, if given), less a trailing ':'.
spec() {
	sed -n "s/^$2=-\{0,1\}//p" "$1" | tr ' ' '\n' |
		sed -n "${3:+/^$3\$/,\$}{/%/{s/:\$//;p;}}" | head -n 1
}
if command -v systemd-analyze >/dev/null && command -v systemd-escape >/dev/null; then
	check_eq "systemd escapes br-lan as the instance br\\x2dlan" 'br\x2dlan' "$inst"
	check_eq "the probe expands as systemd does (%i, %I)" 'br\x2dlan:br-lan' "$(expand '%i:%I')"
	dev=$(systemd-escape --path --suffix=device /sys/subsystem/net/devices/br-lan)
	unit=$(systemd-escape --template=reqrouter@.service br-lan)
	for c in "$U BindsTo|$dev" "$U After|$dev" "$U ExecStart -i|br-lan" \
		"$U EnvironmentFile|/etc/reqrouter/br-lan.env" \
		"$U Description|br-lan" \
		"$DROPIN ExecStop --socket|/run/reqrouter/br-lan.sock" \
		"$A BindsTo|$unit" "$A After|$unit" "$A WantedBy|$unit" \
		"$A ExecStart --control|/run/reqrouter/br-lan.sock" \
		"$A Description|br-lan"; do
		read -r f key after <<<"${c%%|*}"
		want=${c#*|}
		got=$(expand "$(spec "$f" "$key" "$after")")
		check_eq "${f##*/}: $key${after:+ $after} -> $want" "$want" "$got"
	done
	# And every word with a specifier, on any line (ExecReload=, a later
	# ExecStartPre=...): a unit's name takes the escaped br\x2dlan, any
	# other word (a path, an argument, text) the interface's br-lan.
	n=0
	wrong=
	while read -r w; do
		n=$((n + 1))
		e=$(expand "$w")
		case $w in
		*.device | *.service | *.target) pat='br\\x2dlan' ;;
		*) pat='br-lan' ;;
		esac
		grep -q -- "$pat" <<<"$e" || wrong="$wrong $w->$e"
	done < <(grep -hv '^#' "$U" "$A" "$DROPIN" | grep '%' | cut -d= -f2- |
		tr ' ' '\n' | grep '%')
	check_eq "all $n words with %i or %I name br\\x2dlan in a unit name, else br-lan" "" "$wrong"
else
	bad "systemd-analyze or systemd-escape not found (tools/install-deps.sh installs systemd)"
fi

say "== bash completion"
comp=$(PATH=$D/usr/sbin:$PATH bash -c '
	source "$1/usr/share/bash-completion/completions/reqrouter"
	COMP_WORDS=(reqrouter --metrics-); COMP_CWORD=1; _reqrouter
	echo "${COMPREPLY[*]}"
	COMP_WORDS=(reqrouterctl he); COMP_CWORD=1; _reqrouterctl
	echo "${COMPREPLY[*]}"
	complete -p reqrouter reqrouterctl | wc -l' _ "$D")
check_eq "reqrouter --metrics-<TAB>, reqrouterctl he<TAB>, two complete specs" \
	"--metrics-file --metrics-listen --metrics-detail|health|2" "$(tr '\n' '|' <<<"$comp" | sed 's/|$//')"

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

say "== make install without help2man"
# A PATH with every program but help2man, and a copy of the build without
# its man pages (the binaries up to date), so that they are to be made.
mkdir "$RR_TMP/bin" "$RR_TMP/nobuild"
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	for f in "$d"/*; do
		n=${f##*/}
		[ "$n" = help2man ] || [ -e "$RR_TMP/bin/$n" ] || ln -s "$f" "$RR_TMP/bin/$n"
	done
done 2>/dev/null
tar -C "$BUILD" --exclude=./man --exclude=./san --exclude=./fuzz --exclude=./deb \
	-cf - . | tar -C "$RR_TMP/nobuild" -xf - || die "cannot copy $BUILD"
PATH=$RR_TMP/bin make --no-print-directory install DESTDIR="$RR_TMP/d2" \
	PREFIX=/usr BUILD="$RR_TMP/nobuild" >/dev/null 2>"$RR_TMP/noh2m.err"
rc=$?
sed 's/^/    /' "$RR_TMP/noh2m.err"
check "exit non-zero ($rc)" test $rc -ne 0
check_eq "one line on stderr" 1 "$(wc -l <"$RR_TMP/noh2m.err")"
check "... saying help2man is missing, and how to get it" \
	grep -q 'help2man is missing.*apt-get install help2man' "$RR_TMP/noh2m.err"
check "nothing installed" test ! -e "$RR_TMP/d2"

say "== make install; make uninstall leaves nothing"
rm -f "$D/etc/reqrouter/reqrouter.conf"
make --no-print-directory install DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
make --no-print-directory uninstall DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
check_eq "no file left" "" "$(files)"
check "no directory of ours left" test ! -e "$D/usr/share/doc/reqrouter" \
	-a ! -e "$D/etc/reqrouter" -a ! -e "$D/usr/include/reqrouter" \
	-a ! -e "$D/usr/share/reqrouter" -a ! -e "$D/usr/lib/reqrouter"
finish
