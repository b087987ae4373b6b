# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the benchmarks (tools/bench, tools/bench-dns) add to the test bed
# of tools/testbed.sh: each side's receive work on its own CPU, and the
# server CPU's busy time. SRV_CPU and CLI_CPU name the two CPUs.
#
#   bench_napi_threaded     GRO on and threaded NAPI on both ends, pinned;
#                           false if the kernel or ethtool refuses
#   pin_napi                the NAPI kthreads of each end to its CPU
#   srv_busy                SRV_CPU's busy time so far, in clock ticks
#
# A veth receives in the sender's softirq, on the sender's CPU, so the
# server's receive work (XDP, the AF_XDP copy, the UDP stack) would run
# on the client's CPU. GRO on gives each veth end NAPI instances, threaded
# NAPI makes them kthreads, and pinning those puts each side's receive
# work on its own CPU: the server's CPU then carries the whole server.

bench_napi_threaded() {
	command -v ethtool >/dev/null &&
		tb_srv ethtool -K "$TB_IF_SRV" gro on >/dev/null 2>&1 &&
		tb_cli ethtool -K "$TB_IF_CLI" gro on >/dev/null 2>&1 &&
		tb_srv sh -c "echo 1 >/sys/class/net/$TB_IF_SRV/threaded" 2>/dev/null &&
		tb_cli sh -c "echo 1 >/sys/class/net/$TB_IF_CLI/threaded" 2>/dev/null ||
		return 1
	pin_napi
}

# Names are matched in full ("napi/IFACE-ID"): the bed's names are unique.
pin_napi() {
	local f n cpu
	for f in /proc/[0-9]*/comm; do
		read -r n 2>/dev/null <"$f" || continue
		case $n in
		"napi/$TB_IF_SRV-"*) cpu=$SRV_CPU ;;
		"napi/$TB_IF_CLI-"*) cpu=$CLI_CPU ;;
		*) continue ;;
		esac
		f=${f#/proc/}
		taskset -pc "$cpu" "${f%/comm}" >/dev/null 2>&1
	done
}

# Every context counted (user, system, irq, softirq, steal): the server's
# threads, its NAPI kthreads, the softirqs it runs.
srv_busy() {
	awk -v c="cpu$SRV_CPU" '$1 == c { print $2 + $3 + $4 + $7 + $8 + $9 }' \
		/proc/stat
}
