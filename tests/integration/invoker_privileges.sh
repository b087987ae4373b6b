#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Functions hold nothing: in every mode (threads or cells, as root or with
# --user nobody) every worker thread and every cell runs with no
# capability at all (effective, permitted, bounding) and no_new_privs set,
# and a cell runs as nobody even when reqrouter runs as root,
# while the main thread keeps what it needs (all of root's, or exactly
# CAP_NET_ADMIN, CAP_NET_RAW and CAP_BPF under --user). The capability sets of every
# task of every reqrouter process are printed. Requests are answered in
# each mode, and `reqrouterctl threads 2` works in each (under --user it
# needs CAP_NET_RAW for the new sockets), its new workers holding nothing.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

# A user's host: nothing on the client's end (the workers answer).
TB_PEER_XDP=0
rr_bed 2
CTL=$BUILD/reqrouterctl
SOCK=$RR_TMP/ctl.sock
NONE=0000000000000000
MAIN_CAPS=0000008000003000 # CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF: bits 12, 13, 39

# caps NAME: every task of reqrouter (pid RR_PID) and of its cells, one
# line each: "comm CapEff CapPrm CapBnd NoNewPrivs".
caps() {
	local p t
	for p in "$RR_PID" $(pgrep -P "$RR_PID"); do
		for t in /proc/"$p"/task/*; do
			printf '%s %s %s %s %s\n' "$(cat "$t/comm")" \
				"$(awk '/^CapEff:/ { print $2 }' "$t/status")" \
				"$(awk '/^CapPrm:/ { print $2 }' "$t/status")" \
				"$(awk '/^CapBnd:/ { print $2 }' "$t/status")" \
				"$(awk '/^NoNewPrivs:/ { print $2 }' "$t/status")"
		done
	done 2>/dev/null
}

# check_workers WHAT WANT_WORKERS: every worker task holds nothing, and
# there are WANT_WORKERS of them.
check_workers() {
	local what=$1 want=$2 n
	caps | sed 's/^/    /'
	n=$(caps | grep -cE '^rr-(worker|cell) ')
	check_eq "$what: workers found" "$want" "$n"
	check_eq "$what: workers holding a capability" 0 \
		"$(caps | grep -E '^rr-(worker|cell) ' | grep -cv " $NONE $NONE $NONE 1\$")"
}

for user in root nobody; do
	for iso in thread cell; do
		what="$iso, $user"
		args=(-i "$TB_IF_SRV" -q 2 -t 1 --isolation "$iso" --control "$SOCK")
		[ "$user" = nobody ] && args+=(--user nobody)
		rr_start "$iso-$user" "${args[@]}" || die "$what: reqrouter did not start"
		check_workers "$what" 2
		if [ "$iso" = cell ]; then
			# A uid-0 process with no capability still owns what
			# root owns: cells of a root reqrouter run as nobody.
			cuids=$(for p in $(pgrep -P "$RR_PID"); do
				awk '/^Uid:/ { print $2 }' "/proc/$p/status"
			done | sort -u | tr '\n' ' ')
			check_eq "$what: every cell runs as nobody" \
				"$(id -u nobody) " "$cuids"
		fi
		main=$(caps | awk '$1 == "reqrouter" { print $2 }' | head -n 1)
		if [ "$user" = nobody ]; then
			check_eq "$what: the main thread keeps CAP_NET_ADMIN, CAP_NET_RAW and CAP_BPF only" \
				"$MAIN_CAPS" "$main"
		else
			check "$what: the main thread keeps root's capabilities ($main)" \
				test "$main" != "$NONE"
		fi
		check "$what: requests answered" \
			tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse,7:echo \
			-n 200 -s 16 --deadline 30 -q
		# threads N makes AF_XDP sockets (CAP_NET_RAW): under --user too.
		check "$what: reqrouterctl threads 2" "$CTL" --control "$SOCK" threads 2
		sleep 0.5
		check_workers "$what, threads 2" 4
		check "$what, threads 2: requests answered" \
			tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse,7:echo \
			-n 200 -s 16 --deadline 30 -q
		rr_kill_wait TERM 10
		check_eq "$what: SIGTERM, exit status" 0 "$RR_RC"
	done
done
finish
