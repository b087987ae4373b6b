#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: serve the bundled functions on a two-namespace test bed with
# a 4-queue veth, send real requests from the client namespace, show the
# answers and the counters per function, queue and tier, tear everything
# down.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
# shellcheck source=tools/testbed.sh
source tools/testbed.sh

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (network namespaces and XDP)" >&2
	exit 1
fi

METRICS=$(mktemp /tmp/rr-demo.XXXXXX.prom)
RR_PID=
cleanup() {
	if [ -n "$RR_PID" ] && kill "$RR_PID" 2>/dev/null; then
		wait "$RR_PID" || true
	fi
	tb_teardown
	rm -f "$METRICS" "$METRICS.tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

tb_setup 4
echo "== test bed: $TB_NS_CLI ($TB_IP4_CLI) <-> $TB_NS_SRV ($TB_IP4_SRV), veth with 4 queues"
echo "== starting: reqrouter -i $TB_IF_SRV -q 4 -t 2"
echo "   (echo and reverse have XDP implementations: they are answered inside"
echo "   XDP, and what XDP cannot take goes to the AF_XDP workers)"
tb_srv_bg "$BUILD/reqrouter" -i "$TB_IF_SRV" -q 4 -t 2 \
	--metrics-file "$METRICS"
RR_PID=$TB_PID
tb_wait_file "$METRICS" 10 || { echo "demo: reqrouter did not start" >&2; exit 1; }

echo "== a few requests from the client namespace"
tb_cli python3 tools/lib/ask.py "$TB_IP4_SRV" 1232 "hello, reqrouter"
tb_cli python3 tools/lib/ask.py "$TB_IP4_SRV" 7 "echo me"
tb_cli python3 tools/lib/ask.py "$TB_IP6_SRV" 1232 "over IPv6"

if [ -x "$BUILD/rrload" ]; then
	echo "== load: rrload, 64 sockets, 2 s over both functions, every reply verified"
	tb_cli "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232,7 -c 64 -l 1-1400 \
		-d 2 -q || echo "demo: rrload reported a problem" >&2
fi

sleep 1.2 # one more metrics write
echo "== requests answered per function, tier and queue (from $METRICS)"
grep -E '^reqrouter_(rx|tx)_packets_total' "$METRICS" | grep -v ' 0$' |
	sed -E 's/^reqrouter_(rx|tx)_packets_total\{port="([0-9]+)",function="([^"]+)",version="[^"]*",queue="([0-9]+)",(thread="([0-9]+)",)?tier="([a-z]+)"\} /  \1 \3 port \2 queue \4 tier \7 thread \6: /; s/ thread : /: /'
echo "== stopping (SIGTERM); reqrouter's totals:"
kill -TERM "$RR_PID"
wait "$RR_PID" || true
RR_PID=
if tb_srv ip link show "$TB_IF_SRV" | grep -q xdp; then
	echo "demo: an XDP program is still attached" >&2
	exit 1
fi
echo "== done: XDP program detached, test bed removed"
echo "== next: make sandbox keeps a bed up with reqrouter serving functions/,"
echo "   your own functions too, until tools/sandbox down"
