#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A veth whose peer runs no XDP program drops the XDP_TX frames sent to
# it, so with tier auto (the default) the in-kernel tier and the reply
# cache answer only while the peer has one; the workers answer otherwise.
# On the 2-queue bed with nothing on the client end (TB_PEER_XDP=0):
#  - reqrouter with default settings (-i IF -q 2) answers every request
#    to echo and reverse, IPv4 and IPv6, from the workers; its log says
#    why the in-kernel tier waits; status shows veth_peer no_xdp and
#    in_kernel false; requests from reverse's port 1232 are refused as
#    a loop (counted loop_source_port), and answered once reverse is
#    removed;
#  - an XDP program attached to the client end: within a second status
#    shows veth_peer xdp and in_kernel true, and the XDP tier answers
#    every request; detached: within a second back to the workers, which
#    answer every request;
#  - dns (a config with only its section): the same query 50 times gets
#    50 answers, from the workers while the peer is bare and from the
#    reply cache in XDP while it runs a program;
#  - --tier xdp on the bare bed starts, and warns in its log.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
rr_bed 2
M=$RR_TMP/metrics.prom
CTL=$BUILD/reqrouterctl
SOCK=$RR_TMP/ctl.sock
GP=$RR_LIB/guard_probe.py

# peer: "veth_peer in_kernel..." from reqrouterctl --json status, e.g.
# "no_xdp echo=false reverse=false".
peer() {
	"$CTL" --control "$SOCK" --json status >"$RR_TMP/status.json" 2>&1 &&
		json_eval 'd["veth_peer"] + "".join(" %s=%s" % (f["name"],
			str(f["in_kernel"]).lower()) for f in
			sorted(d["functions"], key=lambda f: f["name"]))' \
			"$RR_TMP/status.json"
}
# peer_becomes WANT WHAT: status shows WANT within a second of now.
peer_becomes() {
	local want=$1 start ms got i
	start=$(date +%s%N)
	for ((i = 0; i < 60; i++)); do
		got=$(peer)
		[ "$got" = "$want" ] && break
		sleep 0.05
	done
	ms=$((($(date +%s%N) - start) / 1000000))
	check_eq "$2: status shows it" "$want" "$got"
	check "$2: within a second ($ms ms)" test "$ms" -lt 1000
}
tx() { # TIER: replies sent in that tier, from the metrics
	metric "$M" reqrouter_tx_packets_total "tier=\"$1\""
}
# answered_by TIER WHAT: 400 IPv4 + 400 IPv6 requests, 200 each to echo
# and reverse, all answered, every reply counted in TIER.
answered_by() {
	local other=user u0 x0 want
	[ "$1" = user ] && other=xdp
	u0=$(tx "$1")
	x0=$(tx $other)
	check "$2: 800 requests answered" serves 400
	want=$((u0 + 800))
	wait_metric "$M" 5 reqrouter_tx_packets_total "tier=\"$1\"" -- $want >/dev/null
	sleep 1.1
	check_eq "$2: all 800 answered in the $1 tier" $want "$(tx "$1")"
	check_eq "$2: none in the $other tier" "$x0" "$(tx $other)"
}
attach() {
	tb_cli ip link set dev "$TB_IF_CLI" xdpdrv object \
		"$BUILD/bpf/peer_pass.bpf.o" program peer_pass
}
detach() { tb_cli ip link set dev "$TB_IF_CLI" xdpdrv off; }

say "== default settings on a bare veth"
rr_start main -i "$TB_IF_SRV" -q 2 --metrics-file "$M" --control "$SOCK" ||
	die "reqrouter -i $TB_IF_SRV -q 2 did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
check "log: the peer has no XDP program, so the workers answer" \
	grep -q "is a veth and its peer .* has no XDP program: replies sent from XDP would be lost there, so the workers answer every request" "$RR_ERR"
check "log: echo is in user space until the peer takes XDP frames" \
	grep -q "serving 'echo' on UDP port 7, in XDP first (tier xdp), once the veth peer takes XDP frames" "$RR_ERR"
check_eq "status: veth_peer no_xdp, nothing in the kernel" \
	"no_xdp echo=false reverse=false" "$(peer)"
answered_by user "bare peer"

# The loop guard on the same defaults: a source port that has a function
# here (reverse's 1232, above min_source_port) is refused, as the
# served-ports bitmap says; once reverse is removed, the bitmap no longer
# has it and the same requests are answered.
loop0=$(metric "$M" reqrouter_xdp_packets_total 'verdict="drop"' \
	'reason="loop_source_port"')
for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
	check "from reverse's port 1232 to echo at $addr: refused" \
		tb_cli python3 "$GP" ask "$addr" 7 --func echo --sport 1232 -n 10 \
		--timeout 0.3 --expect none
done
check "metrics: the 20 counted as drop/loop_source_port" \
	wait_metric "$M" 5 reqrouter_xdp_packets_total 'verdict="drop"' \
	'reason="loop_source_port"' -- $((${loop0:-0} + 20))
check "reqrouterctl remove reverse" "$CTL" --control "$SOCK" remove reverse
for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
	check "reverse removed: from port 1232 to echo at $addr: answered" \
		tb_cli python3 "$GP" ask "$addr" 7 --func echo --sport 1232 -n 10 \
		--timeout 1 --expect all
done
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
rr_start main2 -i "$TB_IF_SRV" -q 2 --metrics-file "$M" --control "$SOCK" ||
	die "reqrouter -i $TB_IF_SRV -q 2 did not start again"
tb_wait_file "$M" 5 || die "no metrics file at $M"

say "== an XDP program on the client end"
attach || die "cannot attach peer_pass to $TB_IF_CLI"
peer_becomes "xdp echo=true reverse=true" "program attached"
check "log: the in-kernel tier answers now" \
	grep -q "the veth peer runs an XDP program now: the in-kernel tier and the reply cache answer" "$RR_ERR"
answered_by xdp "program attached"
check_eq "metrics: the XDP program counted them as tx/function" 800 \
	"$(metric "$M" reqrouter_xdp_packets_total 'verdict="tx"' 'reason="function"')"

say "== the program detached again"
detach
peer_becomes "no_xdp echo=false reverse=false" "program detached"
answered_by user "program detached"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"

say "== dns behind the reply cache"
cp configs/example.zone "$RR_TMP/example.zone"
cat >"$RR_TMP/dns.conf" <<EOF
[function dns]
zone = example.com $RR_TMP/example.zone
EOF
rr_start dns -c "$RR_TMP/dns.conf" -i "$TB_IF_SRV" -q 2 --metrics-file "$M" \
	--control "$SOCK" || die "reqrouter with the dns function did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
check_eq "status: veth_peer no_xdp, dns not in the kernel" \
	"no_xdp dns=false echo=false reverse=false" "$(peer)"
check_eq "status: dns's replies are cached (once the peer takes them)" True \
	"$(json_eval '[f["cached"] for f in d["functions"] if f["name"] == "dns"][0]' \
		"$RR_TMP/status.json")"
hits() { metric "$M" reqrouter_cache_hits_total 'function="dns"'; }
dns_user() { metric "$M" reqrouter_tx_packets_total 'function="dns"' 'tier="user"'; }
dns50() { check "$1: the same query 50 times, 50 answers" tb_cli python3 "$GP" \
	dns "$TB_IP4_SRV" -n 50; }
h0=$(hits)
dns50 "bare peer"
check_eq "bare peer: the workers answered all 50" 50 \
	"$(wait_metric "$M" 5 reqrouter_tx_packets_total 'function="dns"' 'tier="user"' -- 50)"
check_eq "bare peer: no answer from the cache" "$h0" "$(hits)"
attach || die "cannot attach peer_pass to $TB_IF_CLI"
peer_becomes "xdp dns=true echo=true reverse=true" "dns, program attached"
dns50 "program attached"
h1=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- $((h0 + 49)))
sleep 1.1 # one more metrics write
h1=$(hits)
check "program attached: the cache in XDP answered the repeats ($((h1 - h0)) of 50)" \
	test $((h1 - h0)) -ge 49
detach
peer_becomes "no_xdp dns=false echo=false reverse=false" "dns, program detached"
u1=$(dns_user)
dns50 "program detached"
check_eq "program detached: the workers answered all 50" $((u1 + 50)) \
	"$(wait_metric "$M" 5 reqrouter_tx_packets_total 'function="dns"' 'tier="user"' -- $((u1 + 50)))"
check_eq "program detached: no answer from the cache" "$h1" "$(hits)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"

say "== --tier xdp on the bare veth"
RR_TIER=xdp
rr_start xdp -i "$TB_IF_SRV" -q 2 --metrics-file "$M" --control "$SOCK" ||
	die "reqrouter --tier xdp did not start on the bare veth"
check "log: it warns that replies from XDP are lost" \
	grep -q "functions with tier = xdp answer from XDP anyway, and those replies are lost" "$RR_ERR"
check_eq "status: the peer is bare, the functions in the kernel all the same" \
	"no_xdp echo=true reverse=true" "$(peer)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
finish
