#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the Debian packages reqrouter, reqrouter-dev and
# reqrouter-tools build (in a private build directory), from what is
# committed: in a clone of HEAD with an untracked function dropped into
# functions/, make deb says loudly that the tree differs from HEAD, and
# the package neither serves that function nor holds its module; a tree
# that is not a git checkout is built as it is, its version marked
# VERSION~tree. lintian finds no error in them (warnings are printed),
# their version is VERSION's, and unpacked with dpkg -x each holds
# exactly its files: what make install puts (service_install.sh), shared
# out as debian/*.install says, with the units in /lib/systemd/system as
# debhelper 13 wants them, compressed man pages and docs, and Debian's
# copyright and changelog. The configuration is a conffile, the postinst
# makes user reqrouter with systemd-sysusers, the dependencies are the
# libraries each links, and the unpacked binaries run. The autopkgtest
# (debian/tests/serve-echo) runs on the unpacked reqrouter: it serves
# echo in a pair of namespaces as its unit would. Installing the
# packages into a real root is make test-fresh's (tools/test-fresh).
# Skipped without dpkg-buildpackage and debhelper.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
not() { ! "$@"; }

for c in dpkg-buildpackage dpkg-deb dh; do
	command -v "$c" >/dev/null ||
		skip "no $c: the Debian packaging tools are missing (debhelper, dpkg-dev)"
done
# make test runs this: its MAKEFLAGS are not ours.
unset MAKEFLAGS MFLAGS MAKELEVEL
RR_TMP=$(mktemp -d /tmp/rr-deb.XXXXXX)
trap 'rm -rf "$RR_TMP"' EXIT
version=$(cat VERSION)
arch=$(dpkg --print-architecture)
SRC=$RR_TMP/src
STRAY=pkgstray

# The source make deb is run in: a clone of HEAD with an untracked
# function, or, outside a git checkout, a copy of the tree.
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
	from=git
	{ git clone -q --no-hardlinks . "$SRC" &&
		git -C "$SRC" checkout -q --detach "$(git rev-parse HEAD)"; } ||
		die "cannot clone HEAD into $SRC"
	say "make deb in a clone of HEAD $(git rev-parse --short=12 HEAD), with an untracked functions/$STRAY.c"
	cat >"$SRC/functions/$STRAY.c" <<EOF
// SPDX-License-Identifier: GPL-2.0
/* service_deb.sh's untracked function: it must not reach the package. */
#include <reqrouter/rr_function.h>

static int $STRAY(const struct rr_request *req, uint8_t *buf, size_t len,
		    size_t room)
{
	return (int)len;
}

RR_FUNCTION($STRAY, 9323, "not committed (a test)", $STRAY);
EOF
	pkg_version=$version
else
	from=tree
	mkdir "$SRC"
	tar -C . --exclude=./.git --exclude=./build --exclude=./bench/raw -cf - . |
		tar -C "$SRC" -xf - || die "cannot copy the tree into $SRC"
	say "make deb in a copy of the tree (not a git checkout)"
	pkg_version=$version~tree
fi

say "== make deb"
check_eq "debian/changelog's version is VERSION's" "$version" \
	"$(dpkg-parsechangelog -l debian/changelog -S Version)"
start=$(date +%s)
make -C "$SRC" --no-print-directory BUILD="$RR_TMP/build" DEB_JOBS=2 deb \
	>"$RR_TMP/deb.log" 2>"$RR_TMP/deb.err"
rc=$?
[ $rc -eq 0 ] || sed 's/^/    /' "$RR_TMP/deb.log"
sed 's/^/    /' "$RR_TMP/deb.err"
check_eq "make deb: exit 0 ($(($(date +%s) - start)) s)" 0 $rc
if [ $from = git ]; then
	check "it warns that the tree differs from HEAD, naming the file" \
		grep -q "WARNING: .*functions/$STRAY\.c" "$RR_TMP/deb.err"
	check "... and that the package is built from HEAD without it" \
		grep -q "WARNING: .* built from HEAD .* WITHOUT them" "$RR_TMP/deb.err"
	rm -f "$SRC/functions/$STRAY.c"
	# The other case without a second build: the source make deb takes
	# from a copy of the clone that is no git checkout.
	mkdir "$RR_TMP/plain" "$RR_TMP/plain-src"
	tar -C "$SRC" --exclude=./.git -cf - . | tar -C "$RR_TMP/plain" -xf -
	"$RR_TMP/plain/tools/deb-source" "$RR_TMP/plain-src" >/dev/null 2>"$RR_TMP/plain.err"
	check_eq "not a git checkout: the source's version is marked" \
		"$version~tree $version~tree" "$(cat "$RR_TMP/plain-src/VERSION") \
$(dpkg-parsechangelog -l "$RR_TMP/plain-src/debian/changelog" -S Version)"
	check "... and it says so" \
		grep -q "WARNING: not a git checkout: .* marked $version~tree" "$RR_TMP/plain.err"
else
	check "it warns that the tree is not a git checkout, and marks the version" \
		grep -q "WARNING: not a git checkout: .* marked $pkg_version" "$RR_TMP/deb.err"
fi
D=$RR_TMP/build/deb
DEB=$D/reqrouter_${pkg_version}_$arch.deb
DEV=$D/reqrouter-dev_${pkg_version}_all.deb
TOOLS=$D/reqrouter-tools_${pkg_version}_$arch.deb
for p in "$DEB" "$DEV" "$TOOLS"; do
	[ -f "$p" ] || die "no package at $p"
done
check "the three packages alone, no -dbgsym beside them" \
	test "$(find "$D" -maxdepth 1 -name '*.*deb' | wc -l)" = 3

say "== lintian"
if command -v lintian >/dev/null; then
	# Root is fine here (packages built by us, in a temporary directory).
	lintian --fail-on error --pedantic "$DEB" "$DEV" "$TOOLS" >"$RR_TMP/lintian.out" 2>&1
	rc=$?
	grep -v 'running with root privileges' "$RR_TMP/lintian.out" | sed 's/^/    /'
	check_eq "lintian: no error (exit 0)" 0 $rc
	check "... and none in its output" not grep -q '^E:' "$RR_TMP/lintian.out"
else
	bad "lintian not found (it belongs in tools/install-deps.sh)"
fi

say "== what each package holds (dpkg -x)"
# files PKG: every file and link that PKG holds.
files() {
	local x=$RR_TMP/x.${1##*/}
	rm -rf "$x" && dpkg-deb -x "$1" "$x" || return 1
	(cd "$x" && find . -type f -o -type l | sed 's|^\.||' | LC_ALL=C sort)
}
# want: its standard input, sorted; what Debian adds to every package's
# doc directory besides.
want() {
	{
		cat
		echo "/usr/share/doc/$1/changelog.gz"
		echo "/usr/share/doc/$1/copyright"
	} | LC_ALL=C sort
}
# dh_compress would compress what in /usr/share/doc is larger than 4 KiB:
# not the README and docs/, which link to each other by name.
{
	cat <<EOW
/etc/reqrouter/reqrouter.conf
/lib/systemd/system/reqrouter@.service
/usr/lib/sysusers.d/reqrouter.conf
/usr/sbin/reqrouter
/usr/sbin/reqrouter-receive-nice
/usr/sbin/reqrouterctl
/usr/share/bash-completion/completions/reqrouter
/usr/share/bash-completion/completions/reqrouterctl
/usr/share/doc/reqrouter/LICENSE.gz
/usr/share/doc/reqrouter/README.md
/usr/share/doc/reqrouter/examples/kv.txt
/usr/share/doc/reqrouter/examples/reqrouter.conf
$(cd "$SRC" && for f in docs/*.md; do echo "/usr/share/doc/reqrouter/$f"; done)
/usr/share/lintian/overrides/reqrouter
/usr/share/man/man5/reqrouter.conf.5.gz
/usr/share/man/man8/reqrouter.8.gz
/usr/share/man/man8/reqrouterctl.8.gz
/usr/share/reqrouter/reqrouter.grafana.json
/usr/share/reqrouter/reqrouter.rules.yml
EOW
	# Every committed function as a module.
	for f in "$SRC"/functions/*.c "$SRC"/functions/*/; do
		case $f in *.bpf.c) continue ;; esac
		f=${f%/}
		f=${f%.c}
		echo "/usr/lib/reqrouter/functions/${f##*/}.so"
	done
} | want reqrouter >"$RR_TMP/want.reqrouter"
{
	(cd "$SRC" && for h in include/reqrouter/*.h; do echo "/usr/$h"; done)
	echo /usr/share/pkgconfig/reqrouter-function.pc
	(cd "$SRC/examples" && for f in function/*; do
		echo "/usr/share/doc/reqrouter-dev/examples/$f"
	done)
} | want reqrouter-dev >"$RR_TMP/want.reqrouter-dev"
want reqrouter-tools >"$RR_TMP/want.reqrouter-tools" <<EOW
/lib/systemd/system/reqrouter-announce@.service
/usr/bin/rrload
/usr/sbin/reqrouter-announce
/usr/share/lintian/overrides/reqrouter-tools
/usr/share/man/man1/rrload.1.gz
/usr/share/reqrouter/anycast/bird-host.conf
/usr/share/reqrouter/anycast/bird-router.conf
/usr/share/reqrouter/anycast/reqrouter@.service.d/anycast-drain.conf
/usr/share/reqrouter/anycast/sysctl-router.conf
EOW
for p in "$DEB" "$DEV" "$TOOLS"; do
	name=$(dpkg-deb -f "$p" Package)
	check "$name: exactly its files" diff "$RR_TMP/want.$name" <(files "$p")
done
X=$RR_TMP/root
{ dpkg-deb -x "$DEB" "$X" && dpkg-deb -x "$TOOLS" "$X"; } || die "dpkg-deb -x failed"
for b in sbin/reqrouter sbin/reqrouterctl bin/rrload; do
	check_eq "unpacked $b --version" "${b#*/} $pkg_version" "$("$X/usr/$b" --version 2>&1)"
done
if [ $from = git ]; then
	check "the packaged reqrouter does not serve the untracked $STRAY" \
		not grep -qw "$STRAY" <("$X/usr/sbin/reqrouter" --list 2>&1)
	check "... but what is committed (echo)" grep -qw echo <("$X/usr/sbin/reqrouter" --list 2>&1)
fi
check "the unit runs /usr/sbin/reqrouter on the interface (%I)" \
	grep -q '^ExecStart=/usr/sbin/reqrouter -i %I ' "$X/lib/systemd/system/reqrouter@.service"
check "the drain drop-in and the announcer run /usr/sbin's, not /usr/local's" \
	not grep -rq '^[^#]*/usr/local' "$X/lib/systemd/system" "$X/usr/share/reqrouter/anycast"
check "the sysusers file is the source's" \
	cmp -s configs/reqrouter.sysusers "$X/usr/lib/sysusers.d/reqrouter.conf"

say "== control"
C=$RR_TMP/control
dpkg-deb -e "$DEB" "$C" || die "dpkg-deb -e failed"
check_eq "the configuration is reqrouter's one conffile" /etc/reqrouter/reqrouter.conf "$(cat "$C/conffiles")"
check "postinst makes user reqrouter (systemd-sysusers reqrouter.conf)" \
	grep -q '^ *systemd-sysusers .*reqrouter\.conf$' "$C/postinst"
CT=$RR_TMP/control-tools
dpkg-deb -e "$TOOLS" "$CT" || die "dpkg-deb -e failed"
for s in postinst prerm postrm; do
	check "reqrouter's $s is valid sh" sh -n "$C/$s"
	check "reqrouter-tools' $s is valid sh" sh -n "$CT/$s"
done
check "reqrouter-tools' prerm stops the announcers on removal" \
	grep -q "stop 'reqrouter-announce@\*.service'" "$CT/prerm"
depends=$(dpkg-deb -f "$DEB" Depends)
for lib in libxdp1 libbpf1 libsystemd0 libmicrohttpd12 libseccomp2; do
	check "reqrouter Depends names $lib" grep -q "\\b$lib\\b" <<<"$depends"
done
check "reqrouter Depends lets systemd-sysusers run" grep -q 'systemd |' <<<"$depends"
check_eq "reqrouter-dev depends on no binary package of ours" "" \
	"$(dpkg-deb -f "$DEV" Depends | grep -o 'reqrouter[^,]*')"

say "== the autopkgtest (debian/tests/serve-echo) on the unpacked reqrouter"
# As user nobody: the unpacked package had no postinst to make user
# reqrouter, and service_sandbox.sh may make and remove that one meanwhile.
if [ "$(id -u)" -eq 0 ]; then
	RR_ROOT=$X RR_USER=nobody timeout 60 bash "$SRC/debian/tests/serve-echo" >"$RR_TMP/apt.out" 2>&1
	rc=$?
	sed 's/^/    /' "$RR_TMP/apt.out"
	check_eq "serve-echo: exit 0" 0 $rc
else
	bad "serve-echo needs root (network namespaces)"
fi
finish
