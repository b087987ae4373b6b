#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# sandbox.sh CAPS CMD...: runs CMD the way configs/reqrouter@.service.in
# runs reqrouter, as far as that can be done without systemd as PID 1:
# in a mount namespace of its own (the caller's mounts are untouched) with
#   ProtectSystem=strict    / and everything under it read-only, except
#   RuntimeDirectory=       /run/reqrouter, writable
#   PrivateTmp=, PrivateDevices=  an empty /tmp, a /dev with null, zero,
#                           full, random and urandom only
#   ProcSubset=pid, ProtectProc=invisible   /proc with processes only
#   CapabilityBoundingSet=CAPS, NoNewPrivileges=yes   through setpriv
# CAPS is setpriv's form: +net_admin,+bpf,... Not emulated: the system
# call filter, RestrictAddressFamilies and the other seccomp settings.
# Call it inside the network namespace (ip netns exec NS sandbox.sh ...).
set -eu
if [ "${1:-}" != --inner ]; then
	mkdir -p /run/reqrouter
	exec unshare --mount --propagation private -- "$0" --inner "$@"
fi
shift
caps=$1
shift
mount --bind /run/reqrouter /run/reqrouter
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
exec setpriv --no-new-privs --inh-caps=-all --bounding-set "-all,$caps" -- "$@"
