#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the Debian package builds (debian/, in a private build
# directory), lintian finds no error in it (its warnings are printed),
# its version is VERSION's, and unpacked with dpkg -x it holds exactly
# the expected files: what make install puts (service_install.sh), with
# the unit in /lib/systemd/system as debhelper 13 wants it, compressed
# man pages and docs, and Debian's copyright and changelog. The
# configuration is a conffile, the postinst makes user reqrouter with
# systemd-sysusers, the dependencies are the libraries reqrouter links,
# and the unpacked binaries run. Installing the package into a real
# root, and reqrouter --check on its configuration there, is make
# test-fresh's (tools/test-fresh). Skipped without dpkg-buildpackage and
# debhelper.
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

say "== make deb"
check_eq "debian/changelog's version is VERSION's" "$version" \
	"$(dpkg-parsechangelog -l debian/changelog -S Version)"
start=$(date +%s)
make --no-print-directory BUILD="$RR_TMP/build" DEB_JOBS=2 deb >"$RR_TMP/deb.log" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/    /' "$RR_TMP/deb.log"
check_eq "make deb: exit 0 ($(($(date +%s) - start)) s)" 0 $rc
DEB=$RR_TMP/build/deb/reqrouter_${version}_$arch.deb
[ -f "$DEB" ] || die "no package at $DEB"
check "the package alone, no -dbgsym beside it" \
	test "$(find "$RR_TMP/build/deb" -maxdepth 1 -name '*.*deb' | wc -l)" = 1

say "== lintian"
if command -v lintian >/dev/null; then
	# Root is fine here (a package built by us, in a temporary directory).
	lintian --fail-on error --pedantic "$DEB" >"$RR_TMP/lintian.out" 2>&1
	rc=$?
	grep -v 'running with root privileges' "$RR_TMP/lintian.out" | sed 's/^/    /'
	check_eq "lintian: no error (exit 0)" 0 $rc
	check "... and none in its output" not grep -q '^E:' "$RR_TMP/lintian.out"
else
	bad "lintian not found (it belongs in tools/install-deps.sh)"
fi

say "== what the package holds (dpkg -x)"
X=$RR_TMP/root
dpkg-deb -x "$DEB" "$X" || die "dpkg-deb -x failed"
files() { (cd "$X" && find . -type f -o -type l | sed 's|^\.||' | LC_ALL=C sort); }
# dh_compress would compress what in /usr/share/doc is larger than 4 KiB:
# not the README and docs/, which link to each other by name.
readme=README.md
{
	cat <<EOW
/etc/reqrouter/reqrouter.conf
/lib/systemd/system/reqrouter-announce@.service
/lib/systemd/system/reqrouter@.service
/usr/bin/rrload
/usr/lib/sysusers.d/reqrouter.conf
/usr/sbin/reqrouter
/usr/sbin/reqrouter-announce
/usr/sbin/reqrouterctl
/usr/share/bash-completion/completions/reqrouter
/usr/share/bash-completion/completions/reqrouterctl
/usr/share/doc/reqrouter/LICENSE.gz
/usr/share/doc/reqrouter/$readme
/usr/share/doc/reqrouter/changelog.gz
/usr/share/doc/reqrouter/copyright
/usr/share/doc/reqrouter/examples/kv.txt
/usr/share/doc/reqrouter/examples/reqrouter.conf
/usr/share/doc/reqrouter/examples/reqrouter.grafana.json
/usr/share/doc/reqrouter/examples/reqrouter.rules.yml
$(for f in docs/*.md; do echo "/usr/share/doc/reqrouter/$f"; done)
/usr/share/lintian/overrides/reqrouter
/usr/share/man/man1/rrload.1.gz
/usr/share/man/man5/reqrouter.conf.5.gz
/usr/share/man/man8/reqrouter.8.gz
/usr/share/man/man8/reqrouterctl.8.gz
/usr/share/pkgconfig/reqrouter-function.pc
/usr/share/reqrouter/anycast/bird-host.conf
/usr/share/reqrouter/anycast/bird-router.conf
/usr/share/reqrouter/anycast/reqrouter@.service.d/anycast-drain.conf
/usr/share/reqrouter/anycast/sysctl-router.conf
EOW
	# Every function as a module, every header of the function API.
	for f in functions/*.c functions/*/; do
		case $f in *.bpf.c) continue ;; esac
		f=${f%/}
		f=${f%.c}
		echo "/usr/lib/reqrouter/functions/${f#functions/}.so"
	done
	for h in include/reqrouter/*.h; do
		echo "/usr/$h"
	done
} | LC_ALL=C sort >"$RR_TMP/want"
check "exactly the expected files" diff "$RR_TMP/want" <(files)
for b in sbin/reqrouter sbin/reqrouterctl bin/rrload; do
	check_eq "unpacked $b --version" "${b#*/} $version" "$("$X/usr/$b" --version 2>&1)"
done
check "the unit runs /usr/sbin/reqrouter on the interface (%I)" \
	grep -q '^ExecStart=/usr/sbin/reqrouter -i %I ' "$X/lib/systemd/system/reqrouter@.service"
check "the drain drop-in and the announcer run /usr/sbin's, not /usr/local's" \
	not grep -rq '^[^#]*/usr/local' "$X/lib/systemd/system" "$X/usr/share/reqrouter/anycast"
check "the sysusers file is the source's" \
	cmp -s configs/reqrouter.sysusers "$X/usr/lib/sysusers.d/reqrouter.conf"

say "== control"
C=$RR_TMP/control
dpkg-deb -e "$DEB" "$C" || die "dpkg-deb -e failed"
check_eq "the configuration is the one conffile" /etc/reqrouter/reqrouter.conf "$(cat "$C/conffiles")"
check "postinst makes user reqrouter (systemd-sysusers reqrouter.conf)" \
	grep -q '^ *systemd-sysusers .*reqrouter\.conf$' "$C/postinst"
for s in postinst prerm postrm; do
	check "$s is valid sh" sh -n "$C/$s"
done
depends=$(dpkg-deb -f "$DEB" Depends)
for lib in libxdp1 libbpf1 libsystemd0 libmicrohttpd12 libseccomp2; do
	check "Depends names $lib" grep -q "\\b$lib\\b" <<<"$depends"
done
check "Depends lets systemd-sysusers run" grep -q 'systemd |' <<<"$depends"
finish
