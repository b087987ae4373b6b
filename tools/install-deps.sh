#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages reqrouter needs to build, test and demo, and
# only those that are missing, so a second run costs a dpkg query.
set -eu

PKGS="make gcc clang llvm libbpf-dev libxdp-dev xdp-tools libelf-dev
zlib1g-dev libcmocka-dev libinih-dev libcap-ng-dev bpftool ethtool iproute2
iputils-ping netcat-openbsd python3 gnuplot-nox clang-format"
# Compiler runtime for `make test SAN=1` and the libFuzzer targets.
PKGS="$PKGS libclang-rt-14-dev"

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
