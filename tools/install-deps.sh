#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages reqrouter needs to build, test, demo and
# benchmark, and only those that are missing, so a second run costs a dpkg
# query. Extra package names on the command line are installed the same way
# (tools/test-fresh asks for debootstrap).
#
# A program that a script calls belongs here even where Debian images
# usually have it: `make test-fresh` runs everything on a minimal root and
# fails on whatever this list forgot.
set -eu

# The build: compilers, BPF tooling, libraries.
PKGS="make gcc clang llvm bpftool libbpf-dev libxdp-dev libelf-dev zlib1g-dev
libinih-dev libcap-ng-dev pkg-config"
# libseccomp: the system call filter each cell runs under (isolation = cell).
PKGS="$PKGS libseccomp-dev"
# Compiler runtime for `make test SAN=1` and the libFuzzer targets; cmocka.
PKGS="$PKGS libclang-rt-14-dev libcmocka-dev"
# Programs the tests, the demo and the tools call: ip, ethtool, ping, nc,
# python3 (clients and analysis), xdp-tools, gnuplot (bench plots),
# procps (sysctl, free, ps), git (bench records the commit), clang-format
# and shellcheck (make test checks the C formatting and the shell scripts).
PKGS="$PKGS iproute2 ethtool iputils-ping netcat-openbsd python3 xdp-tools
gnuplot-nox procps git clang-format shellcheck"
# The dns function parses zone files with Knot's libzscanner; its tests
# compare it with Knot DNS itself (knotd, kdig) and load it with the
# standard DNS and UDP tools (kxdpgun, dnsperf, sockperf).
PKGS="$PKGS libknot-dev knot knot-dnsutils dnsperf sockperf"
# Running as a service: sd_notify (libsystemd), the /metrics endpoint
# (libmicrohttpd), man pages (help2man), and what the install and service
# tests call: systemd-analyze (systemd), setpriv and unshare (util-linux,
# always there), a real Prometheus server and promtool (prometheus). The
# tests run their own Prometheus; on a machine booted with systemd, Debian's
# package also enables and starts its system service (port 9090):
# `systemctl disable --now prometheus` if that is not wanted.
PKGS="$PKGS libsystemd-dev libmicrohttpd-dev help2man systemd prometheus"
# The anycast kit (deploy/anycast/) and its test bed (make test-scale) run
# BIRD 2: bird -p checks the shipped configs, bird and birdc run the bed
# (each node with its own config and socket; on a systemd host Debian also
# starts its own bird.service, with an inert config the bed never uses).
PKGS="$PKGS bird2"
# The Debian package (make deb, package_deb.sh, test-fresh's install-deb
# step): debhelper and dpkg-dev build it, lintian checks it.
PKGS="$PKGS debhelper dpkg-dev lintian"
PKGS="$PKGS $*"

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
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
