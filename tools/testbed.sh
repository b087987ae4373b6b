# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The test bed: two network namespaces, "server" and "client", joined by a
# veth pair with N queues on both ends. Source this file, then:
#
#   tb_setup [QUEUES]   create it (default 4 queues); sets the TB_* names below
#                       and arms a trap that tears it down on exit. The client
#                       end gets an XDP_PASS program (unless TB_PEER_XDP=0),
#                       without which a veth drops its peer's XDP_TX frames
#   tb_srv CMD...       run CMD in the server namespace
#   tb_cli CMD...       run CMD in the client namespace
#   tb_srv_bg CMD...    run CMD in the server namespace in the background;
#                       its PID is in TB_PID (likewise tb_cli_bg)
#   tb_teardown         remove everything tb_setup made (idempotent)
#   tb_prereqs          skip (exit 77, via skip from tools/lib/checks.sh)
#                       unless root, ip, python3, netns and veth are there
#   tb_xdp_on NS IF     is an XDP program attached to IF in NS?
#
# Names carry the PID and a random tag so parallel runs never collide;
# nothing is created in, or sent to, the root namespace.

TB_IP4_SRV=198.18.0.1 # RFC 2544 benchmarking range, only inside the bed
TB_IP4_CLI=198.18.0.2
TB_IP6_SRV=fd00:7272::1
TB_IP6_CLI=fd00:7272::2

tb_srv() { ip netns exec "$TB_NS_SRV" "$@"; }
# tb_sysctl NS KEY VALUE: set a sysctl (net.ipv6.conf.IF.x) inside NS by
# writing /proc/sys, so the bed needs no procps; a knob that cannot be set
# fails the set-up instead of leaving a noisier bed than the tests expect.
tb_sysctl() {
	# shellcheck disable=SC2016 # $1 and $2 are the inner sh's arguments
	ip netns exec "$1" sh -c 'printf "%s\n" "$2" >"$1"' _ \
		"/proc/sys/${2//.//}" "$3" && return 0
	echo "testbed: cannot set $2=$3 in $1" >&2
	return 1
}
tb_cli() { ip netns exec "$TB_NS_CLI" "$@"; }
# Background variants: the command's own PID lands in TB_PID (a backgrounded
# function would give the PID of a subshell, which a signal would not reach).
# shellcheck disable=SC2034 # TB_PID is for the scripts that source this
tb_srv_bg() { ip netns exec "$TB_NS_SRV" "$@" & TB_PID=$!; }
# shellcheck disable=SC2034 # likewise
tb_cli_bg() { ip netns exec "$TB_NS_CLI" "$@" & TB_PID=$!; }

tb_teardown() {
	[ -n "${TB_NS_SRV:-}" ] || return 0
	ip netns del "$TB_NS_SRV" 2>/dev/null
	ip netns del "$TB_NS_CLI" 2>/dev/null
	TB_NS_SRV=
	TB_NS_CLI=
	return 0
}

tb_setup() {
	local queues=${1:-4} tag

	# 8 hex digits: the PID's low 20 bits and 12 random ones.
	tag=$(printf '%05x%03x' $(($$ & 0xfffff)) $((RANDOM & 0xfff)))
	TB_NS_SRV=rr-$tag-srv
	TB_NS_CLI=rr-$tag-cli
	TB_IF_SRV=rrs$tag
	TB_IF_CLI=rrc$tag
	trap 'tb_teardown' EXIT
	trap 'tb_teardown; exit 130' INT TERM

	# A name already taken belongs to someone else: leave it alone.
	if ! ip netns add "$TB_NS_SRV"; then
		TB_NS_SRV=
		return 1
	fi
	if ! ip netns add "$TB_NS_CLI"; then
		ip netns del "$TB_NS_SRV"
		TB_NS_SRV=
		return 1
	fi
	ip -n "$TB_NS_SRV" link add "$TB_IF_SRV" numtxqueues "$queues" \
		numrxqueues "$queues" type veth peer name "$TB_IF_CLI" \
		netns "$TB_NS_CLI" numtxqueues "$queues" \
		numrxqueues "$queues" || { tb_teardown; return 1; }
	# A silent bed: the kernels send nothing of their own over the veth
	# once it is up (no router solicitations, no DAD probes; addresses
	# stay on link down), so a test can count every frame it sent. MLD
	# reports for the addresses' groups still go out in the first second
	# or two after the link comes up.
	local ns dev knob
	for ns in "$TB_NS_SRV:$TB_IF_SRV" "$TB_NS_CLI:$TB_IF_CLI"; do
		dev=${ns#*:}
		ns=${ns%%:*}
		for knob in router_solicitations=0 accept_ra=0 dad_transmits=0 \
			keep_addr_on_down=1; do
			tb_sysctl "$ns" "net.ipv6.conf.$dev.${knob%=*}" \
				"${knob#*=}" || { tb_teardown; return 1; }
		done
	done
	tb_srv ip link set lo up
	tb_cli ip link set lo up
	tb_srv ip addr add "$TB_IP4_SRV/24" dev "$TB_IF_SRV"
	tb_cli ip addr add "$TB_IP4_CLI/24" dev "$TB_IF_CLI"
	tb_srv ip -6 addr add "$TB_IP6_SRV/64" dev "$TB_IF_SRV" nodad
	tb_cli ip -6 addr add "$TB_IP6_CLI/64" dev "$TB_IF_CLI" nodad
	# The client's end takes the server's XDP_TX replies (the in-kernel
	# tier) only with an XDP program on it; TB_PEER_XDP=0 leaves it bare.
	if [ "${TB_PEER_XDP:-1}" = 1 ]; then
		tb_cli ip link set dev "$TB_IF_CLI" xdpdrv object \
			"${BUILD:-build}/bpf/peer_pass.bpf.o" program peer_pass || {
			echo "testbed: cannot attach ${BUILD:-build}/bpf/peer_pass.bpf.o to the client end (run make first)" >&2
			tb_teardown
			return 1
		}
	fi
	tb_srv ip link set "$TB_IF_SRV" up
	tb_cli ip link set "$TB_IF_CLI" up
	TB_MAC_SRV=$(tb_srv cat "/sys/class/net/$TB_IF_SRV/address")
	TB_MAC_CLI=$(tb_cli cat "/sys/class/net/$TB_IF_CLI/address")
	# Static neighbours: AF_XDP answers no ARP or ND for the invoker's
	# traffic anyway, and the first request should not wait for one.
	tb_cli ip neigh replace "$TB_IP4_SRV" lladdr "$TB_MAC_SRV" \
		dev "$TB_IF_CLI" nud permanent
	tb_cli ip -6 neigh replace "$TB_IP6_SRV" lladdr "$TB_MAC_SRV" \
		dev "$TB_IF_CLI" nud permanent
	tb_srv ip neigh replace "$TB_IP4_CLI" lladdr "$TB_MAC_CLI" \
		dev "$TB_IF_SRV" nud permanent
	tb_srv ip -6 neigh replace "$TB_IP6_CLI" lladdr "$TB_MAC_CLI" \
		dev "$TB_IF_SRV" nud permanent
	export TB_NS_SRV TB_NS_CLI TB_IF_SRV TB_IF_CLI TB_MAC_SRV TB_MAC_CLI
	export TB_IP4_SRV TB_IP4_CLI TB_IP6_SRV TB_IP6_CLI
}

# tb_prereqs: what a test bed needs (root, ip, python3, network
# namespaces, veth); a skip, saying which, where one is missing.
tb_prereqs() {
	local probe
	[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, XDP)"
	command -v ip >/dev/null || skip "needs iproute2 (ip)"
	command -v python3 >/dev/null || skip "needs python3"
	probe=rr-probe-$$
	ip netns add "$probe" 2>/dev/null ||
		skip "cannot create network namespaces here"
	if ! ip -n "$probe" link add rrprobe0 type veth peer name rrprobe1 \
		2>/dev/null; then
		ip netns del "$probe"
		skip "cannot create veth devices here"
	fi
	ip netns del "$probe"
}

tb_xdp_on() {
	ip -n "$1" link show dev "$2" |
		grep -Eq '(^|[ /])xdp(generic|drv|offload)?( |$)'
}

# tb_wait_file FILE SECONDS: wait until FILE exists (e.g. a metrics file).
tb_wait_file() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
