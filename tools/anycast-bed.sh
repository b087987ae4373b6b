#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The anycast test bed (docs/SCALE-OUT.md): a client, a router and N
# hosts, each in its own network namespace. Every host runs reqrouter on
# its veth to the router, has the service address on lo, and runs BIRD
# with deploy/anycast/bird-host.conf and reqrouter-announce; the router
# runs BIRD with deploy/anycast/bird-router.conf and the sysctls of
# deploy/anycast/sysctl-router.conf, so it holds one ECMP route to the
# service address with a next hop per healthy host.
#
#   client --- router --+-- host 1 (reqrouter, BIRD, announcer)
#                       +-- host 2
#                       +-- host 3
#
# Run it (make anycast-demo) for a demonstration, or with --hold to keep
# the bed up and work on it by hand. Or source it and call:
#
#   ab_setup [HOSTS]      namespaces, links, addresses, sysctls, BIRD on
#                         every node; sets the AB_* names below and arms a
#                         trap that tears it all down on exit
#   ab_rr_start I         reqrouter on host I, waits until it is ready
#   ab_announce_start I   reqrouter-announce on host I
#   ab_nexthops 4|6       next hops of the router's route to the service
#   ab_announced 4|6 I    is host I one of them?
#   ab_wait_nexthops 4|6 N SECONDS   ... until there are N (AB_SEEN_US)
#   ab_host I CMD...      run CMD in host I's namespace (ab_cli, ab_rtr)
#   ab_served I           requests host I's reqrouter has taken (stats)
#   ab_teardown           stop what ab_* started (by PID) and remove the bed
#
# Names carry the PID and a random tag, as tools/testbed.sh does, so
# parallel runs never collide; nothing is created in, or sent to, the
# root namespace, and BIRD runs with its configs and control sockets in
# the bed's own directory ($AB_DIR), never /etc/bird or the system's.

BUILD=${BUILD:-build}
# shellcheck source=tools/testbed.sh
source "${BASH_SOURCE[0]%/*}/testbed.sh"
# shellcheck source=tools/lib/procs.sh
source "${BASH_SOURCE[0]%/*}/lib/procs.sh"
AB_KIT=${AB_KIT:-deploy/anycast}

# The service address, and the bed's own ranges: RFC 2544 benchmarking
# space and a ULA prefix, only inside the bed.
AB_VIP4=203.0.113.10
AB_VIP6=2001:db8:7272::10
AB_CLI4=198.18.0.2
AB_RTR4=198.18.0.1
AB_CLI6=fd00:7272:1::2
AB_RTR6=fd00:7272:1::1
AB_DIR=
AB_NS_RTR=
AB_PIDS=()    # every process started here, in start order
AB_RR_PID=()  # by host: reqrouter
AB_ANN_PID=() # by host: reqrouter-announce
AB_BIRD_PID=() # by host: BIRD (for tests that freeze one)
export AB_BIRD_PID

# Host I's uplink addresses: 198.19.I.2 and fd00:7272:10I::2 (the router
# is .1 and ::1 on the same link).
ab_host4() { echo "198.19.$1.2"; }
ab_host6() { echo "fd00:7272:10$1::2"; }
ab_hrtr4() { echo "198.19.$1.1"; }
ab_hrtr6() { echo "fd00:7272:10$1::1"; }

ab_cli() { ip netns exec "$AB_NS_CLI" "$@"; }
ab_rtr() { ip netns exec "$AB_NS_RTR" "$@"; }
ab_host() {
	local i=$1
	shift
	ip netns exec "$AB_NS_PREFIX-h$i" "$@"
}
ab_birdc() { # ab_birdc rtr|hI COMMAND...: birdc on that node's BIRD
	local node=$1
	shift
	birdc -s "$AB_DIR/$node.bird.ctl" "$@"
}

# ab_render SRC DST NAME=VALUE...: SRC with each `define NAME = ...;`
# line given VALUE. A NAME that SRC does not define is an error, so a
# renamed constant in the kit cannot go unnoticed.
ab_render() {
	local src=$1 dst=$2 kv name
	shift 2
	cp "$src" "$dst" || return 1
	for kv in "$@"; do
		name=${kv%%=*}
		if ! grep -q "^define $name = .*;\$" "$dst"; then
			echo "anycast-bed: $src defines no $name" >&2
			return 1
		fi
		sed -i "s|^define $name = .*;\$|define $name = ${kv#*=};|" "$dst"
	done
	bird -p -c "$dst" || {
		echo "anycast-bed: $dst does not parse" >&2
		return 1
	}
}

# ab_bg NAME NS CMD...: CMD in NS in the background, stdout and stderr in
# $AB_DIR/NAME.log (an earlier run's log moves to NAME.log.1, .2, ...);
# its PID (ip netns exec execs it) in AB_PID.
ab_bg() {
	local name=$1 ns=$2 k=1
	shift 2
	if [ -e "$AB_DIR/$name.log" ]; then
		while [ -e "$AB_DIR/$name.log.$k" ]; do k=$((k + 1)); done
		mv "$AB_DIR/$name.log" "$AB_DIR/$name.log.$k"
	fi
	ip netns exec "$ns" "$@" >"$AB_DIR/$name.log" 2>&1 &
	AB_PID=$!
	AB_PIDS+=("$AB_PID")
}

# ab_link NS_A IF_A NS_B IF_B: a veth pair with one queue each way, the
# bed's quiet IPv6 settings on both ends, both up.
ab_link() {
	local knob ns dev
	ip -n "$1" link add "$2" numtxqueues 1 numrxqueues 1 type veth \
		peer name "$4" netns "$3" numtxqueues 1 numrxqueues 1 || return 1
	for ns in "$1:$2" "$3:$4"; do
		dev=${ns#*:}
		ns=${ns%%:*}
		for knob in accept_ra=0 router_solicitations=0 dad_transmits=0; do
			tb_sysctl "$ns" "net.ipv6.conf.$dev.${knob%=*}" \
				"${knob#*=}" || return 1
		done
		ip -n "$ns" link set "$dev" up || return 1
	done
}

# ab_neigh NS IF ADDR PEER_NS PEER_IF: a permanent neighbour entry for
# ADDR (owned by PEER_IF), so that no request waits for ARP or ND.
ab_neigh() {
	local mac
	mac=$(ip netns exec "$4" cat "/sys/class/net/$5/address") || return 1
	ip -n "$1" neigh replace "$3" lladdr "$mac" dev "$2" nud permanent
}

ab_setup() {
	local n=${1:-3} i tag ns kv
	if [ "$n" -lt 1 ] || [ "$n" -gt 9 ]; then
		echo "anycast-bed: 1 to 9 hosts" >&2
		return 1
	fi
	# 8 hex digits: the PID's low 20 bits and 12 random ones.
	tag=$(printf '%05x%03x' $(($$ & 0xfffff)) $((RANDOM & 0xfff)))
	AB_TAG=$tag
	AB_NS_PREFIX=rr-$tag
	AB_NS_CLI=rr-$tag-cli
	AB_NS_RTR=rr-$tag-rtr
	AB_IF_CLI=rac$tag
	AB_DIR=$(mktemp -d /tmp/rr-anycast.XXXXXX) || return 1
	chmod 755 "$AB_DIR"
	trap 'ab_teardown' EXIT
	trap 'ab_teardown; exit 130' INT TERM

	# A name already taken belongs to someone else: leave it alone.
	for ns in cli rtr $(seq -f 'h%g' "$n"); do
		if ! ip netns add "$AB_NS_PREFIX-$ns"; then
			echo "anycast-bed: cannot create $AB_NS_PREFIX-$ns" >&2
			ab_teardown
			return 1
		fi
		AB_NSES+=("$AB_NS_PREFIX-$ns")
		ip -n "$AB_NS_PREFIX-$ns" link set lo up
	done

	# The router: forwarding, the 5-tuple hash, loose rp_filter, all from
	# the kit's sysctl file.
	while read -r kv; do
		tb_sysctl "$AB_NS_RTR" "${kv%% *}" "${kv##* }" ||
			{ ab_teardown; return 1; }
	done < <(sed -n 's/^\([a-z0-9_.]*\) *= *\([0-9]*\)$/\1 \2/p' \
		"$AB_KIT/sysctl-router.conf")

	# client <-> router
	ab_link "$AB_NS_CLI" "$AB_IF_CLI" "$AB_NS_RTR" "rar0$tag" ||
		{ ab_teardown; return 1; }
	ab_cli ip addr add "$AB_CLI4/24" dev "$AB_IF_CLI"
	ab_cli ip -6 addr add "$AB_CLI6/64" dev "$AB_IF_CLI" nodad
	ab_rtr ip addr add "$AB_RTR4/24" dev "rar0$tag"
	ab_rtr ip -6 addr add "$AB_RTR6/64" dev "rar0$tag" nodad
	ab_cli ip route add default via "$AB_RTR4"
	ab_cli ip -6 route add default via "$AB_RTR6"
	ab_neigh "$AB_NS_CLI" "$AB_IF_CLI" "$AB_RTR4" "$AB_NS_RTR" "rar0$tag"
	ab_neigh "$AB_NS_CLI" "$AB_IF_CLI" "$AB_RTR6" "$AB_NS_RTR" "rar0$tag"
	ab_neigh "$AB_NS_RTR" "rar0$tag" "$AB_CLI4" "$AB_NS_CLI" "$AB_IF_CLI"
	ab_neigh "$AB_NS_RTR" "rar0$tag" "$AB_CLI6" "$AB_NS_CLI" "$AB_IF_CLI"

	# router <-> host I, the service address on every host's lo
	for i in $(seq "$n"); do
		ns=$AB_NS_PREFIX-h$i
		ab_link "$AB_NS_RTR" "rar$i$tag" "$ns" "rah$i$tag" ||
			{ ab_teardown; return 1; }
		ab_rtr ip addr add "$(ab_hrtr4 "$i")/24" dev "rar$i$tag"
		ab_rtr ip -6 addr add "$(ab_hrtr6 "$i")/64" dev "rar$i$tag" nodad
		ab_host "$i" ip addr add "$(ab_host4 "$i")/24" dev "rah$i$tag"
		ab_host "$i" ip -6 addr add "$(ab_host6 "$i")/64" \
			dev "rah$i$tag" nodad
		ab_host "$i" ip addr add "$AB_VIP4/32" dev lo
		ab_host "$i" ip -6 addr add "$AB_VIP6/128" dev lo nodad
		ab_host "$i" ip route add default via "$(ab_hrtr4 "$i")"
		ab_host "$i" ip -6 route add default via "$(ab_hrtr6 "$i")"
		ab_neigh "$AB_NS_RTR" "rar$i$tag" "$(ab_host4 "$i")" \
			"$ns" "rah$i$tag"
		ab_neigh "$AB_NS_RTR" "rar$i$tag" "$(ab_host6 "$i")" \
			"$ns" "rah$i$tag"
	done

	# BIRD everywhere, from the kit's configs with this bed's values.
	ab_render "$AB_KIT/bird-router.conf" "$AB_DIR/rtr.bird.conf" \
		ROUTER_ID="$AB_RTR4" HOSTS4=198.19.0.0/16 \
		HOSTS6=fd00:7272:100::/40 SERVICE4="$AB_VIP4/32" \
		SERVICE6="$AB_VIP6/128" || { ab_teardown; return 1; }
	ab_bg rtr.bird "$AB_NS_RTR" bird -f -c "$AB_DIR/rtr.bird.conf" \
		-s "$AB_DIR/rtr.bird.ctl" -P "$AB_DIR/rtr.bird.pid"
	for i in $(seq "$n"); do
		ab_render "$AB_KIT/bird-host.conf" "$AB_DIR/h$i.bird.conf" \
			SERVICE4="$AB_VIP4/32" SERVICE6="$AB_VIP6/128" \
			HOST_ID="$(ab_host4 "$i")" ROUTER4="$(ab_hrtr4 "$i")" \
			ROUTER6="$(ab_hrtr6 "$i")" || { ab_teardown; return 1; }
		ab_bg "h$i.bird" "$AB_NS_PREFIX-h$i" bird -f \
			-c "$AB_DIR/h$i.bird.conf" -s "$AB_DIR/h$i.bird.ctl" \
			-P "$AB_DIR/h$i.bird.pid"
		AB_BIRD_PID[i]=$AB_PID
	done
	export AB_NS_CLI AB_NS_RTR AB_NS_PREFIX AB_DIR AB_VIP4 AB_VIP6
}

# ab_rr_start I [ARGS...]: reqrouter on host I's uplink, user tier (XDP_TX
# replies would need a program on the router's end), its control socket
# and log in $AB_DIR; waits (at most 15 s) until it is ready.
ab_rr_start() {
	local i=$1 k
	shift
	ab_bg "h$i.rr" "$AB_NS_PREFIX-h$i" "$BUILD/reqrouter" \
		-i "rah$i$AB_TAG" -q 1 --tier user --no-cache \
		--control "$AB_DIR/h$i.sock" "$@"
	AB_RR_PID[i]=$AB_PID
	for ((k = 0; k < 150; k++)); do
		grep -qs 'ready on' "$AB_DIR/h$i.rr.log" && return 0
		kill -0 "$AB_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "anycast-bed: reqrouter on host $i did not get ready:" >&2
	sed 's/^/    /' "$AB_DIR/h$i.rr.log" >&2
	return 1
}

# ab_announce_start I: the kit's announcer on host I, every 250 ms.
ab_announce_start() {
	local i=$1
	REQROUTERCTL=$BUILD/reqrouterctl ab_bg "h$i.announce" \
		"$AB_NS_PREFIX-h$i" "$AB_KIT/reqrouter-announce" \
		--control "$AB_DIR/h$i.sock" \
		--bird-socket "$AB_DIR/h$i.bird.ctl" --interval 0.25
	AB_ANN_PID[i]=$AB_PID
}

# ab_nexthops 4|6: how many next hops the router's route to the service
# address has (0 without one).
ab_nexthops() {
	local vip=$AB_VIP4/32
	[ "$1" = 6 ] && vip=$AB_VIP6/128
	ab_rtr ip "-$1" route show "$vip" | awk '
		/nexthop via/ { n++ }
		NR == 1 && / via / { one = 1 }
		END { print n ? n : (one ? 1 : 0) }'
}

# ab_announced 4|6 I: is host I a next hop of the router's route?
ab_announced() {
	local vip=$AB_VIP4/32 via
	via=$(ab_host4 "$2")
	if [ "$1" = 6 ]; then
		vip=$AB_VIP6/128
		via=$(ab_host6 "$2")
	fi
	ab_rtr ip "-$1" route show "$vip" | grep -q "via $via "
}

# ab_wait_nexthops 4|6 N SECONDS: poll (about every 10 ms) until the
# route has N next hops; AB_SEEN_US is when it was seen (microseconds
# since the epoch, as ${EPOCHREALTIME/./}). Returns 1 on a timeout.
ab_wait_nexthops() {
	local end
	end=$((${EPOCHREALTIME/./} + $3 * 1000000))
	while :; do
		AB_SEEN_US=${EPOCHREALTIME/./}
		[ "$(ab_nexthops "$1")" = "$2" ] && return 0
		[ "$AB_SEEN_US" -ge "$end" ] && return 1
		sleep 0.01
	done
}

# ab_served I: the requests host I's reqrouter has taken, summed over its
# functions and both tiers (0 when it is not running).
ab_served() {
	"$BUILD/reqrouterctl" --control "$AB_DIR/h$1.sock" --json stats \
		2>/dev/null | python3 -c '
import json, sys
try:
    fns = json.load(sys.stdin)["functions"]
except (ValueError, KeyError):
    fns = []
n = 0
for f in fns:
    x = f.get("xdp", {})
    n += f["user"]["rx"] + x.get("rx", 0) - x.get("punted", 0)
print(n)'
}

ab_teardown() {
	local i p ns
	# The announcers first (they withdraw), then reqrouter, then BIRD;
	# only what ab_* started, by PID.
	for p in "${AB_ANN_PID[@]}"; do procs_term "$p" 2; done
	for p in "${AB_RR_PID[@]}"; do procs_term "$p" 3; done
	for ((i = ${#AB_PIDS[@]} - 1; i >= 0; i--)); do
		procs_term "${AB_PIDS[i]}" 2
	done
	AB_PIDS=()
	AB_RR_PID=()
	AB_ANN_PID=()
	AB_BIRD_PID=()
	for ns in "${AB_NSES[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	AB_NSES=()
	if [ -n "$AB_DIR" ] && [ -z "${AB_KEEP:-}" ]; then
		rm -rf "$AB_DIR"
	fi
	AB_DIR=
	return 0
}
AB_NSES=()

# Run as a program: the demonstration, or the bed held up for hands-on work.
ab_main() {
	local hold=0 i n=3
	while [ $# -gt 0 ]; do
		case $1 in
		--hold) hold=1 ;;
		--hosts) n=${2:?}; shift ;;
		*) echo "usage: $0 [--hosts N] [--hold]" >&2; exit 2 ;;
		esac
		shift
	done
	if [ "$(id -u)" -ne 0 ]; then
		echo "anycast-bed: needs root (network namespaces and XDP)" >&2
		exit 1
	fi
	for p in bird birdc; do
		command -v $p >/dev/null || {
			echo "anycast-bed: no $p (make deps installs bird2)" >&2
			exit 1
		}
	done
	ab_setup "$n" || exit 1
	echo "== bed $AB_TAG: client, router and $n hosts; files in $AB_DIR"
	for i in $(seq "$n"); do
		ab_rr_start "$i" || exit 1
		ab_announce_start "$i"
	done
	echo "== BGP and BFD come up; the router merges the hosts' routes into one"
	if ! ab_wait_nexthops 4 "$n" 30 || ! ab_wait_nexthops 6 "$n" 30; then
		echo "anycast-bed: the routes did not come up; the router's BIRD:" >&2
		ab_birdc rtr show protocols >&2
		exit 1
	fi
	for ((i = 0; i < 50; i++)); do
		[ "$(ab_birdc rtr show bfd sessions | grep -cw Up)" = $((2 * n)) ] &&
			break
		sleep 0.1
	done
	ab_birdc rtr show protocols | grep -E '^(Name|host)'
	ab_birdc rtr show bfd sessions | sed 1,2d
	echo "== the router's kernel routes to the service address (ECMP)"
	ab_rtr ip -4 route show "$AB_VIP4"
	ab_rtr ip -6 route show "$AB_VIP6"
	if [ "$hold" = 1 ]; then
		cat <<EOF
== the bed is up. From the repository root, in another shell:
   ip netns exec $AB_NS_CLI $BUILD/rrload -s $AB_VIP4 -c 64 -r 3000 -d 10
   ip netns exec $AB_NS_RTR ip route show $AB_VIP4
   birdc -s $AB_DIR/rtr.bird.ctl show protocols
   $BUILD/reqrouterctl --control $AB_DIR/h1.sock stats
   $BUILD/reqrouterctl --control $AB_DIR/h1.sock drain
   tail -f $AB_DIR/h1.announce.log
   host 1 back after a drain (the announcer is still watching):
   ip netns exec $AB_NS_PREFIX-h1 $BUILD/reqrouter -i rah1$AB_TAG -q 1 --tier user --no-cache --control $AB_DIR/h1.sock &
== Ctrl-C here tears it all down
EOF
		while :; do sleep 1; done
	fi
	echo "== 1024 flows to $AB_VIP4 (one request from each of 1024 client ports)"
	local before=() after
	for i in $(seq "$n"); do before[i]=$(ab_served "$i"); done
	ab_cli "$BUILD/rrload" -s "$AB_VIP4" -c 1024 -n 1024 -q |
		head -n 1 | sed 's/^/   /'
	for i in $(seq "$n"); do
		after=$(ab_served "$i")
		echo "   host $i answered $((after - before[i]))"
	done
	echo "== reqrouterctl drain of host 1 under 3000 requests/s"
	ab_cli "$BUILD/rrload" -s "$AB_VIP4" -c 64 -r 3000 -d 5 -q |
		head -n 2 | sed 's/^/   load: /' &
	local load=$!
	sleep 1
	"$BUILD/reqrouterctl" --control "$AB_DIR/h1.sock" --quiet 1 drain |
		sed 's/^/   /'
	echo "   host 1's announcer:"
	tail -n 1 "$AB_DIR/h1.announce.log" | sed 's/^/   /'
	echo "   the router now:"
	ab_rtr ip -4 route show "$AB_VIP4" | sed 's/^/   /'
	wait "$load"
	echo "== host 1 back: reqrouter started again, announced once ready"
	ab_rr_start 1 || exit 1
	ab_wait_nexthops 4 "$n" 10
	tail -n 1 "$AB_DIR/h1.announce.log" | sed 's/^/   /'
	ab_rtr ip -4 route show "$AB_VIP4" | sed 's/^/   /'
	echo "== tearing down (make test-scale measures all this, and a crash)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	cd "$(dirname "$0")/.." || exit 1
	ab_main "$@"
fi
