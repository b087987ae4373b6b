#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /usr/sbin/policy-rc.d while tools/install-deps.sh runs apt-get on a
# machine booted with systemd (it is removed right after): invoke-rc.d
# and deb-systemd-invoke ask it before a maintainer script starts a
# service. It refuses to start a service that is not running already, so
# the packages the tests need (knot, prometheus, bird2) do not start
# their system services; one that runs may restart, as an upgrade of a
# library it uses wants. Everything else (stop, reload) goes ahead.
#
#   policy-rc.d [--quiet] ID ACTIONS [RUNLEVEL]
# Exit status 0: allowed; 101: not allowed (policy-rc.d's interface,
# /usr/share/doc/init-system-helpers/README.policy-rc.d).
while [ $# -gt 0 ]; do
	case $1 in
	--*) shift ;;
	*) break ;;
	esac
done
case " ${2:-} " in
*start*) ;;
*) exit 0 ;;
esac
systemctl --quiet is-active "${1%.sh}" 2>/dev/null && exit 0
exit 101
