#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages a task needs, and only those that are
# missing, so a second run costs a dpkg query:
#
#   tools/install-deps.sh [--list] [SET|PACKAGE...]
#
# Each make target asks for its set: make demo for demo, make sandbox
# for sandbox, make test for test, make deb for packaging, make bench for
# bench, make test-scale and make anycast-demo for anycast; make deps (no
# argument, or all) for every set. Every set takes demo, which builds,
# along; test also sandbox and packaging, which make test runs. Any
# other word is a package name, installed the same way
# (tools/test-fresh asks for debootstrap). --list prints the packages,
# one a line, and installs nothing.
#
# Always --no-install-recommends, and no new system service is left
# running: where systemd runs, a policy-rc.d (tools/lib/policy-rc.d.sh)
# keeps the new packages' services from starting while apt-get runs, and
# the units they ship are disabled after; one line says which. Only
# the tests' and benchmarks' sets have such packages (knot, prometheus,
# bird2); they start their own instances of them.
#
# A program that a script calls belongs here even where Debian images
# usually have it: `make test-fresh` runs the demo and the tests on a
# minimal root and fails on whatever this list forgot, and checks that
# make demo installs nothing outside the demo set.
set -eu
LIB=$(dirname "$0")/lib

# demo: build everything (make all) and run the demo. The compilers and
# BPF tooling; libbpf, libxdp and what they link; inih (the config file);
# libcap-ng (--user); libseccomp (the cells' filter); libsystemd
# (sd_notify) and libmicrohttpd (/metrics), which reqrouter links; json-c,
# which reqrouterctl reads the instance's answers with; Knot's
# libzscanner, which the dns function links (functions/dns/dns.pkgs),
# and for its dnstap libfstrm and protobuf-c, with protoc-c to make the C
# of functions/dns/dnstap.proto; liburing, which tools/sgbase (the io_uring scatter-gather baseline,
# built by make all) links; ip (the bed) and python3 (its client).
SET_DEMO="make gcc clang bpftool libbpf-dev libxdp-dev libelf-dev zlib1g-dev
libinih-dev libcap-ng-dev pkg-config libseccomp-dev libsystemd-dev
libmicrohttpd-dev libjson-c-dev libknot-dev libfstrm-dev libprotobuf-c-dev
protobuf-c-compiler liburing-dev iproute2 python3"
# sandbox: the clients tools/sandbox shows (nc, kdig). No services.
SET_SANDBOX="netcat-openbsd knot-dnsutils"
# test: what make test needs beyond demo and sandbox. The compiler
# runtime for SAN=1 and the libFuzzer targets, llvm (llvm-symbolizer puts
# file and line into their reports), cmocka; ethtool, ping, xdp-tools, procps (sysctl, free,
# ps); clang-format and shellcheck (make lint); Knot DNS (knotd, against
# which dns is compared), dnsperf and sockperf (the standard clients);
# help2man (man pages); systemd (systemd-analyze checks the unit; setpriv
# and unshare are util-linux, always there); Prometheus (promtool, and
# the server the metrics test runs on its own); python3-yaml (the alert
# rules read by metrics_families.sh); fstrm_capture and dnstap-ldns
# (dnstap.sh reads what dns wrote); tcpdump (reads back what reqrouterctl
# capture wrote, capture.sh). knot and prometheus have system services:
# kept from running (above).
SET_TEST="llvm libclang-rt-14-dev libcmocka-dev ethtool iputils-ping
xdp-tools procps clang-format shellcheck knot dnsperf sockperf help2man
systemd prometheus python3-yaml fstrm-bin dnstap-ldns tcpdump"
# packaging: make deb, which installs it itself, and which service_deb.sh
# (make test) and test-fresh's install-deb step run: debhelper and
# dpkg-dev build it, lintian checks it, git takes HEAD's files
# (tools/deb-source); help2man is the one Build-Depends (debian/control)
# demo lacks, and dpkg-buildpackage wants build-essential itself (a
# minimal root has none).
SET_PACKAGING="build-essential debhelper dpkg-dev lintian help2man git"
# bench: tools/bench and tools/bench-dns. gnuplot (plots), git (the
# commit a record is of), procps (free), ethtool (GRO on the bed), Knot
# DNS (knotd, kxdpgun) and dnsperf (the DNS comparison).
SET_BENCH="gnuplot-nox git procps ethtool knot knot-dnsutils dnsperf"
# anycast: the anycast kit (deploy/anycast/) and its bed (make
# test-scale, make anycast-demo) run BIRD 2 (bird -p, bird, birdc); each
# node has its own config and socket, never the system's bird.service.
SET_ANYCAST="bird2"

usage() {
	sed -n '3,15s/^# \{0,1\}//p' "$0"
	exit "$1"
}

list=0
sets=""
extra=""
for arg in "$@"; do
	case $arg in
	--list) list=1 ;;
	-h | --help) usage 0 ;;
	-*)
		echo "install-deps: unknown option '$arg'" >&2
		usage 2 >&2
		;;
	all) sets="$sets demo sandbox test packaging bench anycast" ;;
	demo) sets="$sets demo" ;;
	sandbox | test | packaging | bench | anycast) sets="$sets demo $arg" ;;
	*) extra="$extra $arg" ;;
	esac
done
[ -n "$sets$extra" ] || sets="demo sandbox test packaging bench anycast"
# make test runs the sandbox's test and service_deb.sh.
case " $sets " in *" test "*) sets="$sets sandbox packaging" ;; esac

PKGS=""
for s in $sets; do
	case $s in
	demo) PKGS="$PKGS $SET_DEMO" ;;
	sandbox) PKGS="$PKGS $SET_SANDBOX" ;;
	test) PKGS="$PKGS $SET_TEST" ;;
	packaging) PKGS="$PKGS $SET_PACKAGING" ;;
	bench) PKGS="$PKGS $SET_BENCH" ;;
	anycast) PKGS="$PKGS $SET_ANYCAST" ;;
	esac
done
# shellcheck disable=SC2086 # one word a package
PKGS=$(printf '%s\n' $PKGS $extra | sort -u)

if [ $list -eq 1 ]; then
	printf '%s\n' "$PKGS"
	exit 0
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install)" >&2
	exit 1
fi

installed() {
	dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' |
		awk '$1 == "ii" { sub(/:.*/, "", $2); print $2 }' | sort -u
}

# The units (services, sockets, timers) a package ships, by name.
units_of() {
	dpkg-query -L "$1" 2>/dev/null | sed -nE \
		-e 's#^(/usr)?/lib/systemd/system/([^/@]+\.(service|socket|timer))$#\2#p' \
		-e 's#^/etc/init\.d/([^/]+)$#\1.service#p'
}

# systemd runs the machine (sd_booted(3)): only then do the maintainer
# scripts start a service (dh_installsystemd's postinst asks the same
# question; invoke-rc.d, for init scripts, finds no runlevel in a chroot
# or a container without an init system, test-fresh's root among them).
booted=0
[ -d /run/systemd/system ] && booted=1
policy=/usr/sbin/policy-rc.d
ours=""
before=$(mktemp /tmp/install-deps.XXXXXX)
trap 'rm -f "$before" ${ours:+"$ours"}' EXIT
trap 'exit 130' INT TERM
if [ $booted -eq 1 ] && [ ! -e $policy ]; then
	# An administrator's own policy-rc.d stays as it is; the units are
	# disabled after in any case.
	ours=$policy
	cp "$LIB/policy-rc.d.sh" $policy
	chmod 0755 $policy
fi
installed >"$before"
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
[ -z "$ours" ] || rm -f "$ours"
new=$(installed | comm -13 "$before" -)

units=""
for p in $new; do
	units="$units $(units_of "$p" | tr '\n' ' ')"
done
# shellcheck disable=SC2086 # one word a unit
units=$(printf '%s\n' $units | sort -u)
# Those that would start at boot (a unit of a package without a service
# is static or masked: left alone).
enabled=""
if command -v systemctl >/dev/null; then
	for u in $units; do
		case $(systemctl is-enabled "$u" 2>/dev/null) in
		enabled | enabled-runtime) enabled="$enabled $u" ;;
		esac
	done
fi
if [ $booted -eq 0 ]; then
	[ -z "$enabled" ] ||
		echo "install-deps: no systemd runs here, so no service was started (enabled for a boot with systemd:$enabled)"
	exit 0
fi
kept=""
for u in $units; do
	case " $enabled " in
	*" $u "*)
		systemctl disable --quiet "$u" || true
		kept="$kept $u"
		;;
	esac
	if systemctl is-active --quiet "$u"; then
		systemctl stop "$u" || true
		case " $kept " in *" $u "*) ;; *) kept="$kept $u" ;; esac
	fi
done
[ -n "$kept" ] || exit 0
echo "install-deps: kept the new packages' services from running (not started, and disabled):$kept; the tests run their own (systemctl enable --now UNIT starts one)"
