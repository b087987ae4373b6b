#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter's life on an interface: SIGTERM and SIGINT stop it within 2 s
# with exit 0, the summary printed and the XDP program gone; kill -9 leaves
# the program behind and the next start replaces it ("replacing a stale")
# and serves; a foreign XDP program (native or generic) makes it refuse
# with one line and exit 1, leaving that program alone; detaching its
# program from outside makes it stop on its own with a clear message; and
# a stdout reader that goes away is no reason to die (SIGPIPE).
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

rr_bed 4
command -v clang >/dev/null || die "clang is needed to build the foreign XDP program"

# The "foreign" program: a trivial XDP_PASS that reqrouter did not load.
cat >"$RR_TMP/foreign.bpf.c" <<'EOF'
#define SEC(name) __attribute__((section(name), used))
struct xdp_md;
SEC("xdp") int foreign_pass(struct xdp_md *ctx) { return 2; /* XDP_PASS */ }
char _license[] SEC("license") = "GPL";
EOF
clang -O2 -g -target bpf -c "$RR_TMP/foreign.bpf.c" -o "$RR_TMP/foreign.o" ||
	die "cannot compile the foreign XDP program"

xdp_prog() { # the attached program as "name id", or nothing
	ip -n "$TB_NS_SRV" link show dev "$TB_IF_SRV" |
		awk '/prog\/xdp/ { for (i = 1; i < NF; i++) {
			if ($i == "id") id = $(i + 1); if ($i == "name") nm = $(i + 1) }
			print nm, id }'
}

# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
serves_v4() { # N: N IPv4 requests over 16 sockets all answered correctly
	tb_cli python3 "$RR_LIB/udpclient.py" "$TB_IP4_SRV" 1232:reverse,7:echo \
		-n "$1" -s 16 -q >"$RR_TMP/serves.out" 2>&1
	local rc=$?
	tail -n 1 "$RR_TMP/serves.out" | sed 's/^/    /'
	return "$rc"
}

for sig in TERM INT; do
	say "== SIG$sig"
	rr_start "sig$sig" -i "$TB_IF_SRV" -q 4 || die "reqrouter did not start"
	check "attached: program '$(xdp_prog)'" xdp_on_srv
	check "serves 100 requests" serves_v4 100
	rr_kill_wait "$sig" 2
	check_eq "SIG$sig: exit status within 2 s (took ${RR_ELAPSED_MS} ms)" 0 "$RR_RC"
	[ "$RR_RC" = running ] && rr_kill_wait KILL 2
	check "SIG$sig: no XDP program left on $TB_IF_SRV" eval '! xdp_on_srv'
	check "SIG$sig: summary table printed" \
		grep -qE '^port +function +rx +tx +dropped' "$RR_OUT"
	check "SIG$sig: summary totals 'in user space: 100 requests, 100 replies, 0 dropped'" \
		grep -q '^in user space: 100 requests, 100 replies, 0 dropped' "$RR_OUT"
done

say "== stdout's reader goes away"
# A pipe or FIFO whose reader is gone: the summary at the stop cannot be
# written, and reqrouter still detaches and exits 0 (not SIGPIPE's 141).
mkfifo "$RR_TMP/out.fifo"
cat "$RR_TMP/out.fifo" >/dev/null &
reader=$!
tb_srv_bg "$RR" --tier "$RR_TIER" -i "$TB_IF_SRV" -q 4 \
	>"$RR_TMP/out.fifo" 2>"$RR_TMP/fifo.err"
RR_PID=$TB_PID
for ((i = 0; i < 750; i++)); do
	grep -q 'ready on' "$RR_TMP/fifo.err" && break
	sleep 0.02
done
kill "$reader"
wait "$reader" 2>/dev/null
check "reader gone: still serves 20 requests" serves_v4 20
rr_kill_wait TERM 2
check_eq "reader gone: SIGTERM exit status" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2
check "reader gone: no XDP program left" eval '! xdp_on_srv'

say "== SIGTERM while requests keep coming"
rr_start busy -i "$TB_IF_SRV" -q 4 -t 2 || die "reqrouter did not start"
tb_cli_bg python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse,7:echo \
	-n 4000 -s 64 --rate 1000 --timeout 2 -q >"$RR_TMP/busy-client.out" 2>&1
client=$TB_PID
RR_BG_PIDS+=("$client")
srv_tx() { tb_srv ip -s link show dev "$TB_IF_SRV" | awk '/TX:/ { getline; print $2 }'; }
n0=$(srv_tx)
for ((i = 0; i < 100; i++)); do # until reqrouter has sent 100 replies
	sleep 0.1
	[ $(($(srv_tx) - n0)) -gt 100 ] && break
done
rr_kill_wait TERM 2
check_eq "under traffic: SIGTERM exit status within 2 s (took ${RR_ELAPSED_MS} ms)" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2
check "under traffic: no XDP program left" eval '! xdp_on_srv'
tot=$(grep '^in user space:' "$RR_OUT")
say "    $tot"
# shellcheck disable=SC2016 # an awk program: $4 is awk's field
check "under traffic: the summary adds up (requests = replies + dropped)" \
	awk '{ exit !($4 > 0 && $4 == $6 + $8) }' <<<"$tot"
kill -TERM "$client" 2>/dev/null
wait "$client" 2>/dev/null

say "== kill -9, then start again"
rr_start kill9 -i "$TB_IF_SRV" -q 4 || die "reqrouter did not start"
rr_kill_wait KILL 2
check_eq "kill -9: killed" 137 "$RR_RC"
stale=$(xdp_prog)
check "kill -9: the program stays attached ($stale)" xdp_on_srv
if rr_start restart -i "$TB_IF_SRV" -q 4 -t 2; then
	ok "restart over the stale program: ready"
	check "restart: logs 'replacing a stale' program" \
		grep -q 'replacing a stale' "$RR_ERR"
	check "restart: serves 500 requests" serves_v4 500
	now=$(xdp_prog)
	check "restart: a new program is attached ($stale -> $now)" \
		test -n "$now" -a "$now" != "$stale"
	rr_kill_wait TERM 2
	check_eq "restart: SIGTERM exit status" 0 "$RR_RC"
	check "restart: no XDP program left" eval '! xdp_on_srv'
else
	bad "restart over the stale program: did not get ready"
fi

for mode in xdp xdpgeneric; do
	say "== a foreign program attached with 'ip link set ... $mode'"
	tb_srv ip link set dev "$TB_IF_SRV" "$mode" obj "$RR_TMP/foreign.o" sec xdp ||
		die "cannot attach the foreign program ($mode)"
	foreign=$(xdp_prog)
	say "foreign program: $foreign"
	rr_run "foreign-$mode" -i "$TB_IF_SRV" -q 4
	sed 's/^/    stderr: /' "$RR_ERR"
	check_eq "foreign $mode: reqrouter refuses with exit status" 1 "$RR_RC"
	check_eq "foreign $mode: lines on stderr" 1 "$(grep -c . "$RR_ERR")"
	check "foreign $mode: the line starts 'reqrouter:' and names the program" \
		grep -qE "^reqrouter: .*(foreign_pass|XDP program)" "$RR_ERR"
	check "foreign $mode: nothing on stdout (no summary of a server that never ran)" \
		test ! -s "$RR_OUT"
	check_eq "foreign $mode: the foreign program is still attached" \
		"$foreign" "$(xdp_prog)"
	tb_srv ip link set dev "$TB_IF_SRV" "$mode" off
done
check "foreign programs removed again" eval '! xdp_on_srv'

say "== the program detached from outside while reqrouter runs"
rr_start detach -i "$TB_IF_SRV" -q 4 || die "reqrouter did not start"
tb_srv ip link set dev "$TB_IF_SRV" xdp off
rr_exits_on_its_own detached 2
check "detached: says the XDP program was removed" \
	grep -qiE 'XDP program.*(removed|detached|gone)' "$RR_ERR"
check "detached: no XDP program on $TB_IF_SRV" eval '! xdp_on_srv'

say "== and it starts cleanly afterwards"
rr_start after -i "$TB_IF_SRV" -q 4 || bad "restart after the detach: not ready"
[ -n "$RR_PID" ] && check "after the detach: serves 100 requests" serves_v4 100
[ -n "$RR_PID" ] && rr_kill_wait TERM 2
finish
