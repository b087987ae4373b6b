#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# sandbox.sh [OPTIONS] CAPS CMD...: runs CMD the way
# configs/reqrouter@.service.in runs reqrouter, as far as that can be done
# without systemd as PID 1: in a mount namespace of its own (the caller's
# mounts are untouched) with
#   ProtectSystem=strict    / and everything under it read-only, except
#   RuntimeDirectory=       /run/reqrouter, writable (--run-dir DIR: DIR
#                           mounted there, as systemd makes it for User=)
#   ProtectKernelTunables=  /sys read-only (--sys-rw: left writable)
#   PrivateTmp=, PrivateDevices=  an empty /tmp, a /dev with null, zero,
#                           full, random and urandom only
#   ProtectProc=invisible   /proc with processes only (stricter than
#                           the unit, which has no ProcSubset=pid)
#   UMask=0077
#   User=, Group=           --user NAME: NAME's uid, its group's gid and
#                           its supplementary groups (--groups G,...
#                           instead: SupplementaryGroups=)
#   AmbientCapabilities=CAPS  with --user: CAPS inheritable and ambient,
#                           so that they survive the change of uid
#   CapabilityBoundingSet=CAPS, NoNewPrivileges=yes
# all through setpriv. Without --user CMD keeps root's uid with CAPS as
# its bounding set (the unit before it had a user of its own). CAPS is
# setpriv's form: +net_admin,+bpf,... Not emulated: the system call
# filter, RestrictAddressFamilies and the other seccomp settings.
# Call it inside the network namespace (ip netns exec NS sandbox.sh ...).
set -eu
if [ "${1:-}" != --inner ]; then
	mkdir -p /run/reqrouter
	exec unshare --mount --propagation private -- "$0" --inner "$@"
fi
shift
user='' groups='' rundir=/run/reqrouter sys=ro
while :; do
	case $1 in
	--user) user=$2 && shift 2 ;;
	--groups) groups=$2 && shift 2 ;;
	--run-dir) rundir=$2 && shift 2 ;;
	--sys-rw) sys=rw && shift ;;
	*) break ;;
	esac
done
caps=$1
shift
mount --bind "$rundir" /run/reqrouter
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /dev
for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9; do
	IFS=: read -r name major minor <<EOD
$d
EOD
	mknod -m 666 "/dev/$name" c "$major" "$minor"
done
mount -t proc -o subset=pid,hidepid=invisible proc /proc
for m in / /run /usr /etc /var /home /root /boot /opt /srv; do
	mountpoint -q "$m" 2>/dev/null || [ "$m" = / ] || continue
	mount -o remount,bind,ro "$m"
done
mount -o remount,bind,rw /run/reqrouter
if [ "$sys" = ro ]; then
	mount --bind /sys /sys
	mount -o remount,bind,ro /sys
fi
umask 077
if [ -z "$user" ]; then
	exec setpriv --no-new-privs --inh-caps=-all --bounding-set "-all,$caps" \
		-- "$@"
fi
if [ -n "$groups" ]; then
	set -- --groups "$groups" -- "$@"
else
	set -- --init-groups -- "$@"
fi
exec setpriv --reuid "$user" --regid "$(id -gn "$user")" \
	--inh-caps "-all,$caps" --ambient-caps "-all,$caps" \
	--bounding-set "-all,$caps" --no-new-privs "$@"
