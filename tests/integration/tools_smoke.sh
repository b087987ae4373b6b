#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Cheap smoke run of the benchmark tools so they cannot rot: sockserver in
# both modes answers rrload over the test bed (IPv4 and IPv6, closed and
# open loop) with every reply verified; rrload fails when the server
# answers wrongly; the XDP reflector answers correctly; the XDP engine
# offers frames and counts replies, also from spoofed sources (--spoof,
# whose bad values are usage errors); xskfloor answers over IPv4 and
# IPv6.
# Runs as root with $BUILD pointing at the binaries. Exit 0 pass, 77 skip
# (no network namespaces or veth here, as in the other tests), else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
# say/ok/bad and the prerequisite checks the other tests use; it sources
# tools/testbed.sh.
source tests/integration/lib/common.sh
source tools/lib/procs.sh
# The XDP engine and the reflector's pass mode attach their own programs
# to the client end.
TB_PEER_XDP=0

TMP=

# shellcheck disable=SC2317 # called by the EXIT trap, which shellcheck does not follow
cleanup() {
	procs_stop_all
	tb_teardown
	rm -rf "$TMP"
}

# wait_log FILE WORD PID: until the process says WORD (10 s at most); a
# loaded machine can take a while to load a BPF program.
wait_log() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	bad "$(basename "$4") did not get ready: $(tail -n 2 "$1")"
	return 1
}

# start_srv CMD...: run CMD in the server namespace in the background and
# wait until it is ready. ip netns exec execs the command, so $! is the
# server's own PID.
start_srv() {
	: >"$TMP/start.log"
	procs_bg "$TB_NS_SRV" "$TMP/start.log" "$@"
	SRV_PID=$BG
	wait_log "$TMP/start.log" ready "$SRV_PID" "$1"
	cat "$TMP/start.log" >>"$TMP/server.log"
}

stop_srv() { procs_stop "$SRV_PID"; }

# json FILE KEY: one value out of rrload's JSON summary.
json() { json_get "$1" "$2"; }

# expect_all FILE N WHAT: N requests, all answered and verified.
expect_all() {
	local got
	got=$(json_get "$1" sent answered wrong timeouts)
	if [ "$got" = "$2 $2 0 0" ]; then
		ok "$3: $2/$2 answered and verified"
	else
		bad "$3: sent answered wrong timeouts = '$got' (want $2 answered)"
	fi
}

# expect_wrong RC FILE MORE-THAN WHAT: rrload against a server that answers
# with another function exits 1 and counts more than MORE-THAN wrong replies.
expect_wrong() {
	local wrong
	wrong=$(json "$2" wrong)
	if [ "$1" = 1 ] && [ "${wrong:-0}" -gt "$3" ]; then
		ok "$4 counts $wrong wrong replies and exits 1"
	else
		bad "$4 against a wrong server: exit $1 wrong=$wrong"
	fi
}

# A skip, as in the other tests, where no test bed can be made here.
tb_prereqs
for t in rrload sockserver; do
	[ -x "$BUILD/$t" ] || die "$BUILD/$t is not built"
done
# tb_setup arms a trap that removes the bed; ours does that and more.
tb_setup 2 || die "cannot set up the test bed"
TMP=$(mktemp -d /tmp/rr-smoke.XXXXXX)
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# A bad flag is one line and a usage exit status.
"$BUILD/rrload" -s 198.18.0.1 -c x >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ]; then
	ok "rrload rejects a bad number with one line"
else
	bad "rrload -c x: exit $rc, $(wc -l <"$TMP/err") lines"
fi

# usage_error WHAT ARGS...: rrload -s 198.18.0.1 ARGS is refused with one
# line and exit status 2 before it touches anything.
usage_error() {
	local what=$1 rc
	shift
	"$BUILD/rrload" -s 198.18.0.1 "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	if [ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ]; then
		ok "rrload refuses $what: $(cat "$TMP/err")"
	else
		bad "rrload $*: exit $rc, $(wc -l <"$TMP/err") lines (want 2, one)"
	fi
}
usage_error "--spoof 0" --engine xdp -i lo --spoof 0
usage_error "more sources than the range holds" --engine xdp -i lo \
	--spoof 257@198.18.64.0/24
usage_error "an IPv6 range for an IPv4 server" --engine xdp -i lo \
	--spoof 10@2001:2::/48
usage_error "--spoof without the XDP engine" --spoof 10

# The optimised server: reverse and echo, IPv4 and IPv6.
start_srv "$BUILD/sockserver" -p 1232,7 -t 2
tb_cli timeout 20 "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232,7 -c 8 -w 4 \
	-n 20000 -l 1-1400 -q --json "$TMP/a.json" >/dev/null
rc=$?
[ $rc = 0 ] || bad "rrload against sockserver exited $rc"
expect_all "$TMP/a.json" 20000 "sockserver IPv4, closed loop, 1..1400 B"
if "$RR_PY" -c 'import json,sys
d = json.load(open(sys.argv[1]))
for k in "sent answered wrong timeouts late duplicates send_errors".split():
    assert isinstance(d[k], int), k' "$TMP/a.json"; then
	ok "JSON has the named counts"
else
	bad "JSON lacks a count"
fi
if "$RR_PY" -c 'import json,sys; l=json.load(open(sys.argv[1]))["latency_us"]; assert 0 < l["p50"] <= l["p99"] <= l["max"]' \
	"$TMP/a.json"; then
	ok "JSON percentiles ordered"
else
	bad "JSON percentiles missing or out of order"
fi

tb_cli timeout 20 "$BUILD/rrload" -s "$TB_IP6_SRV" -p 1232 -c 4 -w 2 \
	-n 5000 -l 800 -q --json "$TMP/b.json" >/dev/null
expect_all "$TMP/b.json" 5000 "sockserver IPv6, 800 B"

tb_cli timeout 20 "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232 -c 16 \
	-r 20000 -n 10000 -q --json "$TMP/c.json" >/dev/null
expect_all "$TMP/c.json" 10000 "open loop at 20000/s"
stop_srv

# Wrong replies: echo served where rrload expects reverse.
start_srv "$BUILD/sockserver" -p 1232 -f echo
tb_cli timeout 20 "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232 -n 200 -q \
	--json "$TMP/d.json" >/dev/null 2>&1
rc=$?
wrong=$(json "$TMP/d.json" wrong)
if [ $rc = 1 ] && [ "$wrong" = 200 ]; then
	ok "rrload exits 1 and counts 200 wrong replies from a wrong server"
else
	bad "wrong server: rrload exit $rc, wrong=$wrong (want 1 and 200)"
fi
stop_srv

# The simple server, and an interrupted run still prints its summary.
start_srv "$BUILD/sockserver" -p 1232 --simple
tb_cli timeout 20 "$BUILD/rrload" -s "$TB_IP4_SRV" -n 3000 -q \
	--json "$TMP/e.json" >/dev/null
expect_all "$TMP/e.json" 3000 "sockserver --simple"
ip netns exec "$TB_NS_CLI" "$BUILD/rrload" -s "$TB_IP4_SRV" -d 30 -q \
	>"$TMP/int.out" 2>&1 &
cli=$!
procs_add "$cli"
sleep 1
kill -INT "$cli"
wait "$cli"
rc=$?
if [ $rc = 0 ] && grep -q answered "$TMP/int.out"; then
	ok "Ctrl-C prints the summary so far"
else
	bad "interrupted rrload: exit $rc, no summary"
fi
stop_srv

# The in-kernel reflector (needs an XDP program on the client side too,
# which the reflector's --pass mode provides).
if [ -x "$BUILD/reflector" ]; then
	start_srv "$BUILD/reflector" -i "$TB_IF_SRV"
	ip netns exec "$TB_NS_CLI" "$BUILD/reflector" --pass \
		-i "$TB_IF_CLI" >"$TMP/pass.log" 2>&1 &
	pass_pid=$!
	procs_add "$pass_pid"
	wait_log "$TMP/pass.log" XDP_PASS "$pass_pid" reflector-pass
	tb_cli timeout 20 "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232,7 -c 4 \
		-n 4000 -l 1-1400 -q --json "$TMP/f.json" >/dev/null
	expect_all "$TMP/f.json" 4000 "XDP reflector IPv4, reverse and echo"
	tb_cli timeout 20 "$BUILD/rrload" -s "$TB_IP6_SRV" -p 1232 -c 4 \
		-n 2000 -l 1-1400 -q --json "$TMP/g.json" >/dev/null
	expect_all "$TMP/g.json" 2000 "XDP reflector IPv6"

	# The XDP engine against the reflector: frames offered, replies
	# seen. It brings its own XDP program for the client side.
	kill "$pass_pid" 2>/dev/null
	wait "$pass_pid" 2>/dev/null
	tb_cli timeout 20 "$BUILD/rrload" --engine xdp -i "$TB_IF_CLI" \
		-s "$TB_IP4_SRV" -p 1232 -l 64 -d 1 -q \
		--json "$TMP/h.json" >/dev/null 2>"$TMP/h.err"
	rc=$?
	sent=$(json "$TMP/h.json" sent)
	ans=$(json "$TMP/h.json" answered)
	wrong=$(json "$TMP/h.json" wrong)
	if [ $rc = 0 ] && [ "${sent:-0}" -gt 10000 ] &&
		[ "${ans:-0}" -gt 1000 ] && [ "$wrong" = 0 ]; then
		ok "XDP engine offered $sent frames, counted $ans right replies"
	else
		bad "XDP engine: exit $rc sent=$sent answered=$ans wrong=$wrong: $(head -c 300 "$TMP/h.err")"
	fi
	# ... and notices a server that answers with the wrong function.
	tb_cli timeout 20 "$BUILD/rrload" --engine xdp -i "$TB_IF_CLI" \
		-s "$TB_IP4_SRV" -p 7 -f reverse -l 64 -n 1000 -q \
		--json "$TMP/i.json" >/dev/null 2>&1
	expect_wrong $? "$TMP/i.json" 0 "XDP engine"
	# Given requests (--payloads): each carries its number in its first
	# two bytes, and every reply is checked in full against the function
	# (echo repeats them; checked as reverse, none is right).
	printf 'ab one\nab a longer second request\n0x0000ff00ee\nxyz\n' \
		>"$TMP/payloads.txt"
	tb_cli timeout 20 "$BUILD/rrload" --engine xdp -i "$TB_IF_CLI" \
		-s "$TB_IP4_SRV" -p 7 --payloads "$TMP/payloads.txt" -n 4000 \
		-r 20000 -q --json "$TMP/k.json" >/dev/null 2>"$TMP/k.err"
	rc=$?
	ans=$(json "$TMP/k.json" answered)
	wrong=$(json "$TMP/k.json" wrong)
	if [ $rc = 0 ] && [ "${ans:-0}" -ge 3900 ] && [ "$wrong" = 0 ]; then
		ok "XDP engine --payloads: $ans of 4000 replies matched by number and checked"
	else
		bad "XDP engine --payloads: exit $rc answered=$ans wrong=$wrong: $(head -c 300 "$TMP/k.err")"
	fi
	tb_cli timeout 20 "$BUILD/rrload" --engine xdp -i "$TB_IF_CLI" \
		-s "$TB_IP4_SRV" -p 7 -f reverse --payloads "$TMP/payloads.txt" \
		-n 400 -r 20000 -q --json "$TMP/l.json" >/dev/null 2>&1
	expect_wrong $? "$TMP/l.json" 300 "XDP engine --payloads"
	# --spoof: each frame from the next of 500 addresses of the default
	# range; the reflector answers them all, and the replies, which go
	# to those addresses, count as the flood's, not as answers.
	for dst in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
		tb_cli timeout 20 "$BUILD/rrload" --engine xdp -i "$TB_IF_CLI" \
			-s "$dst" -p 1232 -l 64 -n 20000 -r 100000 --spoof 500 \
			-q --json "$TMP/m.json" >/dev/null 2>"$TMP/m.err"
		rc=$?
		got=$(json_get "$TMP/m.json" spoof_sources answered wrong)
		fans=$(json "$TMP/m.json" flood_answered)
		if [ $rc = 0 ] && [ "$got" = "500 0 0" ] &&
			[ "${fans:-0}" -ge 19000 ]; then
			ok "XDP engine --spoof 500 to $dst: $fans of 20000 replies to the spoofed sources"
		else
			bad "XDP engine --spoof to $dst: exit $rc, spoof_sources answered wrong = '$got', flood_answered=$fans: $(head -c 300 "$TMP/m.err")"
		fi
	done
	if tb_cli ip link show "$TB_IF_CLI" | grep -q xdp; then
		bad "rrload left its XDP counter attached"
	fi
	stop_srv
	if ip netns exec "$TB_NS_SRV" ip link show "$TB_IF_SRV" |
		grep -q xdp; then
		bad "reflector left its XDP program attached"
	else
		ok "reflector detached on SIGTERM"
	fi
else
	bad "$BUILD/reflector is not built"
fi

# The AF_XDP floor: echo-like replies, checksums right over IPv4 (none)
# and IPv6 (full), then detached.
if [ -x "$BUILD/xskfloor" ]; then
	start_srv "$BUILD/xskfloor" -i "$TB_IF_SRV" -q 2 -p 7
	tb_cli timeout 20 "$BUILD/rrload" -s "$TB_IP4_SRV" -p 7 -c 4 \
		-n 3000 -l 1-1400 -q --json "$TMP/j.json" >/dev/null
	expect_all "$TMP/j.json" 3000 "xskfloor IPv4"
	tb_cli timeout 20 "$BUILD/rrload" -s "$TB_IP6_SRV" -p 7 -c 4 \
		-n 2000 -l 1-1400 -q --json "$TMP/k.json" >/dev/null
	expect_all "$TMP/k.json" 2000 "xskfloor IPv6"
	stop_srv
	if ip netns exec "$TB_NS_SRV" ip link show "$TB_IF_SRV" |
		grep -q xdp; then
		bad "xskfloor left its XDP program attached"
	else
		ok "xskfloor detached on SIGTERM"
	fi
	if tb_cli "$BUILD/xskfloor" -i "$TB_IF_CLI" -q 65 >/dev/null 2>&1; then
		bad "xskfloor -q 65 was accepted"
	else
		ok "xskfloor refuses a queue out of range"
	fi
else
	bad "$BUILD/xskfloor is not built"
fi

if [ "$CHK_FAILS" -gt 0 ]; then
	echo "$CHK_FAILS check(s) failed; server log:"
	tail -n 20 "$TMP/server.log"
	exit 1
fi
echo "all tool smoke checks passed"
exit 0
