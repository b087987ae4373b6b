# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The scatter-gather bed (issue 26): tools/testbed.sh's two namespaces on
# one veth queue, its server side holding the coordinator and its client
# side the targets: the client's address (198.18.0.2) and up to 1000
# responder addresses from 198.18.8.0/22, one /32 each on the targets'
# veth end, reached from the coordinator through 198.18.0.2. Source
# tools/testbed.sh and tools/lib/procs.sh first, then this; BUILD names
# the build directory (default build). Then:
#
#   sgb_setup N             the bed with N responder addresses (1-1000);
#                           sets the SGB_* names below and arms a trap
#                           that removes it all (sgb_teardown)
#   sgb_responders KIND     start the targets' responder on port 7 in the
#                           targets' namespace, pinned to SGB_TG_CPU:
#                           reqrouter (build/reqrouter serving only echo,
#                           which answers every local address, from XDP
#                           while the coordinator's end has an XDP
#                           program) or sgbase (sgbase respond, one
#                           wildcard socket); its PID in SGB_RESP_PID
#   sgb_peer_pass on|off    an XDP_PASS program on the coordinator's end,
#                           without which a veth drops the XDP_TX replies
#                           of reqrouter's echo; off before a program of
#                           the coordinator's own (reqrouter) attaches
#   sgb_targets N           print the targets SPEC of the first N
#                           responders: 198.18.8.1-LAST:7
#   sgb_addr I              print the I-th responder address (from 0)
#   sgb_co CMD... / sgb_tg CMD...
#                           run CMD in the coordinator's / targets' namespace
#   sgb_teardown            stop the responder, remove the bed (idempotent)
#
# SGB_NS_CO, SGB_IF_CO, SGB_IP_CO: the coordinator's namespace, veth end
# and address (198.18.0.1); SGB_NS_TG, SGB_IF_TG, SGB_IP_CLI: the
# targets'; SGB_PORT (7): echo's port, reqrouter's and sgbase respond's.
# Names are testbed.sh's, unique per run; only PIDs started here are
# stopped.

SGB_PORT=7
SGB_NET=198.18.8.0/22
SGB_MAX=1000
SGB_TG_CPU=${SGB_TG_CPU:-0}
SGB_RESP_PID=
SGB_TMP=

sgb_co() { ip netns exec "$SGB_NS_CO" "$@"; }
sgb_tg() { ip netns exec "$SGB_NS_TG" "$@"; }

# From 198.18.8.1: .0 of the /22 is left out, as a network's first
# address usually is.
sgb_addr() {
	local k=$(($1 + 1))
	echo "198.18.$((8 + k / 256)).$((k % 256))"
}

sgb_targets() {
	echo "$(sgb_addr 0)-$(sgb_addr $(($1 - 1))):$SGB_PORT"
}

sgb_teardown() {
	if [ -n "$SGB_RESP_PID" ]; then
		procs_term "$SGB_RESP_PID" 5
		procs_stop "$SGB_RESP_PID"
		SGB_RESP_PID=
	fi
	tb_teardown
	if [ -n "$SGB_TMP" ]; then
		rm -rf "$SGB_TMP"
		SGB_TMP=
	fi
	return 0
}

sgb_setup() {
	local n=$1 i
	if ! [[ $n =~ ^[1-9][0-9]{0,3}$ ]] || [ "$n" -gt "$SGB_MAX" ]; then
		echo "sgbed: the bed holds 1 to $SGB_MAX responders, not '$n'" >&2
		return 1
	fi
	# The coordinator's end gets its XDP program from sgb_peer_pass,
	# or from reqrouter as coordinator; the targets' end from the
	# responder.
	TB_PEER_XDP=0 tb_setup 1 >/dev/null || return 1
	trap 'sgb_teardown' EXIT
	trap 'sgb_teardown; exit 130' INT TERM
	SGB_NS_CO=$TB_NS_SRV
	SGB_IF_CO=$TB_IF_SRV
	SGB_IP_CO=$TB_IP4_SRV
	SGB_NS_TG=$TB_NS_CLI
	SGB_IF_TG=$TB_IF_CLI
	SGB_IP_CLI=$TB_IP4_CLI
	SGB_TMP=$(mktemp -d /tmp/rr-sgbed.XXXXXX) || {
		sgb_teardown
		return 1
	}
	# One batch: a thousand `ip addr add` would take seconds.
	for ((i = 0; i < n; i++)); do
		echo "address add $(sgb_addr "$i")/32 dev $SGB_IF_TG"
	done >"$SGB_TMP/addrs"
	ip -n "$SGB_NS_TG" -batch "$SGB_TMP/addrs" || {
		echo "sgbed: cannot add the responders' addresses" >&2
		sgb_teardown
		return 1
	}
	# Through the targets' own address: one neighbour entry for all of
	# them (the neighbour tables are shared by every namespace, 1024
	# entries before they overflow).
	sgb_co ip route add "$SGB_NET" via "$SGB_IP_CLI" dev "$SGB_IF_CO" || {
		sgb_teardown
		return 1
	}
	SGB_N=$n
	export SGB_NS_CO SGB_IF_CO SGB_IP_CO SGB_NS_TG SGB_IF_TG SGB_IP_CLI SGB_N
}

sgb_peer_pass() {
	if [ "$1" = on ]; then
		tb_xdp_on "$SGB_NS_CO" "$SGB_IF_CO" && return 0
		sgb_co ip link set dev "$SGB_IF_CO" xdpdrv object \
			"${BUILD:-build}/bpf/peer_pass.bpf.o" program peer_pass || {
			echo "sgbed: cannot attach ${BUILD:-build}/bpf/peer_pass.bpf.o (run make first)" >&2
			return 1
		}
	else
		sgb_co ip link set dev "$SGB_IF_CO" xdpdrv off 2>/dev/null
		sgb_co ip link set dev "$SGB_IF_CO" xdpgeneric off 2>/dev/null
		! tb_xdp_on "$SGB_NS_CO" "$SGB_IF_CO"
	fi
}

# sgb_wait_log LOG PATTERN PID SECONDS: until LOG has PATTERN, or PID ends.
sgb_wait_log() {
	local i
	for ((i = 0; i < $4 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "$2" "$1" 2>/dev/null
}

sgb_responders() {
	local log=$SGB_TMP/responder.log
	case $1 in
	reqrouter)
		# Echo alone, on port 7, every reply computed: the reply cache
		# would answer nothing here (each request's gather number
		# differs) but cost a lookup and an insert each.
		printf '[function echo]\ncache = no\n' >"$SGB_TMP/responder.conf"
		procs_bg "$SGB_NS_TG" "$log" "${BUILD:-build}/reqrouter" \
			-i "$SGB_IF_TG" -q 1 -t 1 -p "$SGB_PORT" \
			-c "$SGB_TMP/responder.conf" --isolation thread \
			--control none --cpus "$SGB_TG_CPU"
		SGB_RESP_PID=$BG
		sgb_wait_log "$log" 'ready on' "$BG" 15
		;;
	sgbase)
		procs_bg "$SGB_NS_TG" "$log" "${BUILD:-build}/sgbase" respond \
			--port "$SGB_PORT" --cpu "$SGB_TG_CPU"
		SGB_RESP_PID=$BG
		sgb_wait_log "$log" 'ready' "$BG" 5
		;;
	*)
		echo "sgbed: the responders are reqrouter or sgbase, not '$1'" >&2
		return 1
		;;
	esac || {
		echo "sgbed: the $1 responder did not start: $(tail -n 3 "$log")" >&2
		return 1
	}
}
