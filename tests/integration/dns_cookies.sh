#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# DNS Cookies (RFC 7873, RFC 9018) in the dns function and in XDP, on the
# bare defaults (the client's veth end bare, tier auto, the reply cache
# on), with a cookie_secret file whose secret the test knows, so that it
# makes cookies of its own (lib/dns_cookie.py, SipHash written apart from
# reqrouter's C); a file of 8 bytes stops the start with one line, the
# start-up lines name the file. Two queues of two workers each (cells),
# which must all take the same secret. kdig +cookie: a client cookie alone gets BADCOOKIE and
# the server cookie RFC 9018 makes from that secret, for this client, now
# (so does kdig's own first try: BADCOOKIE is counted four times);
# kdig's retry with it the answer. A cookie made here now is answered and
# echoed; a forged one, an expired one (made over an hour ago) get
# BADCOOKIE; a COOKIE option of 12 bytes FORMERR; each counted by its
# reason. A reload with a new secret keeps the old one good. Then a flood
# from the client's /24 at ten times dns's rate limit beside a client of
# the same /24 at 50/s: with a forged cookie it is limited with the flood;
# with a valid one XDP validates its source (counted), and it gets its
# answers; at 400/s with a valid cookie it is held to its validated
# budget (rate_limit_validated = 100), counted as validated_limited.
# Validated sources (docs/DESIGN.md, "Validated sources"): an address of
# the flood's /24 that completed a TCP handshake (kdig +tcp), and another
# that echoed a test module's token (tests/modules/retry.c, which also
# refuses a tampered and a short token, each counted), are validated: in
# the same flood, their plain queries without a cookie are answered.
# With replies from XDP (an XDP program on the client's end), the reply
# cache answers a valid cookie of any client with that client's cookie
# echoed, and a forged one still gets BADCOOKIE. A second new secret
# within the hour drops the first, with a warning.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
command -v kdig >/dev/null || die "kdig (knot-dnsutils) is needed: make deps"

# The defaults: a bare client end, tier auto, the cache on.
TB_PEER_XDP=0 RR_TIER=auto RR_CACHE=yes
rr_bed 2
M=$RR_TMP/metrics.prom
CK=(python3 "$RR_LIB/dns_cookie.py")
SECRET=e5e973e5a6b2a43f48e7dc849e37bfcf
SECRET2=00112233445566778899aabbccddeeff
CC=2464c4abcf10c957
printf '%s\n' "$SECRET" >"$RR_TMP/cookie.secret"
printf '[function dns]\nzone = example.com %s\ncookie_secret = %s\nrate_limit_validated = 100\n' \
	"$PWD/configs/example.zone" "$RR_TMP/cookie.secret" >"$RR_TMP/rr.conf"
mkdir -p "$RR_TMP/mods"
cp "$BUILD/tests/modules/retry.so" "$RR_TMP/mods/" || die "no retry.so (run make first)"
# A flood in the client's own /24, and the cookie client beside it.
SRCS=()
for i in 2 3 4 5 10 11 12; do
	tb_cli ip addr add "198.18.1.$i/24" dev "$TB_IF_CLI" ||
		die "cannot add 198.18.1.$i"
	[ "$i" -ge 10 ] || SRCS+=(--flood "198.18.1.$i")
done

# A secret that is no secret: one line, and no start.
printf 'e5e973e5a6b2a43f\n' >"$RR_TMP/short.secret"
sed "s|$RR_TMP/cookie.secret|$RR_TMP/short.secret|" "$RR_TMP/rr.conf" >"$RR_TMP/bad.conf"
rr_run bad -i "$TB_IF_SRV" -q 1 -c "$RR_TMP/bad.conf"
check "a secret of 8 bytes: exit 2 (the config), one line saying what the file must hold" \
	test "$RR_RC" = 2 -a "$(grep -c 'must hold a 16-byte secret as 32 hex digits' "$RR_ERR")" = 1

rr_start main -i "$TB_IF_SRV" -q 2 -t 2 -c "$RR_TMP/rr.conf" --metrics-file "$M" \
	--functions-dir "$RR_TMP/mods" ||
	die "reqrouter with the dns function did not start"
check "the start-up lines say the secret's file and what a cookie buys" \
	grep -qF "'dns': DNS Cookies with a secret from $RR_TMP/cookie.secret; a query with a valid server cookie validates its source in XDP (rate_limit_validated)" "$RR_ERR"

# kd ARGS...: kdig's status, answer count and COOKIE for www.example.com A.
kd() {
	tb_cli kdig @"$TB_IP4_SRV" +nostats +retry=0 +timeout=2 \
		www.example.com A "$@" 2>&1 |
		grep -oE 'status: [A-Z]+|COOKIE: [0-9A-F]+|ANSWER: [0-9]+' | xargs
}
lower() { tr 'A-F' 'a-f' <<<"$1"; }
make_cookie() { "${CK[@]}" make --secret "$1" --ip "$2" --cc $CC --time "$3"; }
event() { metric "$M" reqrouter_function_events_total "counter=\"$1\""; }
# flip HEX: the cookie with a bit of its hash changed.
flip() { printf '%s%02x' "${1:0:46}" $((16#${1:46:2} ^ 1)); }

say "== kdig +cookie: a client cookie alone"
out=$(kd +cookie=$CC +nobadcookie)
check "BADCOOKIE, no answer, and a server cookie ($out)" \
	grep -qE '^status: BADCOOKIE ANSWER: 0 COOKIE: [0-9A-F]{48}$' <<<"$out"
got=$(lower "${out##* }")
ts=$((16#${got:24:8}))
check_eq "the server cookie is RFC 9018's, from the secret, for this client" \
	"$(make_cookie $SECRET "$TB_IP4_CLI" $ts)" "$got"
now=$(date +%s)
check "made now ($ts, now $now)" test $((now - ts)) -le 2 -a $((ts - now)) -le 2
out=$(kd +cookie=$CC)
check "kdig's retry with it: the answer ($out)" \
	grep -qE 'status: NOERROR ANSWER: 2 COOKIE: [0-9A-F]{48}$' <<<"$out"

say "== cookies made here"
valid=$(make_cookie $SECRET "$TB_IP4_CLI" "$(date +%s)")
out=$(kd +cookie="$valid" +nobadcookie)
check_eq "a valid one: the answer, the cookie echoed" \
	"status: NOERROR ANSWER: 2 COOKIE: ${valid^^}" "$out"
out=$(kd +cookie="$(flip "$valid")" +nobadcookie)
check "forged: BADCOOKIE with a good one ($out)" \
	grep -qE '^status: BADCOOKIE ANSWER: 0 COOKIE: [0-9A-F]{48}$' <<<"$out"
old=$(make_cookie $SECRET "$TB_IP4_CLI" $(($(date +%s) - 4000)))
out=$(kd +cookie="$old" +nobadcookie)
check "made 4000 s ago: BADCOOKIE ($out)" \
	grep -qE '^status: BADCOOKIE ANSWER: 0 ' <<<"$out"
out=$(tb_cli "${CK[@]}" ask --dst "$TB_IP4_SRV" --option "${valid:0:24}")
check_eq "a COOKIE option of 12 bytes: FORMERR, no cookie" "1 0 -" "$out"
rr_metrics_fresh "$M"
for c in dns_cookie_client:2 dns_cookie_valid:2 dns_cookie_wrong:1 \
	dns_cookie_expired:1 dns_cookie_malformed:1 dns_badcookie:4; do
	check_eq "counted: ${c%:*}" "${c#*:}" "$(event "${c%:*}")"
done

say "== a reload with a new secret: the old one stays good"
printf '%s\n' "$SECRET2" >"$RR_TMP/cookie.secret"
"$BUILD/reqrouterctl" --control "/run/reqrouter/$TB_IF_SRV.sock" reload \
	>"$RR_TMP/reload.out" 2>&1
check "reqrouterctl reload says so" \
	grep -qF '[function dns] a new cookie secret: the previous one stays valid for 3600 s' "$RR_TMP/reload.out"
check "the log says the new secret and how long the old one lasts" \
	grep -q "'dns': a new cookie secret; the previous one stays good for 3600 s" "$RR_ERR"
out=$(kd +cookie="$valid" +nobadcookie)
check "the old secret's cookie: answered ($out)" \
	grep -qE '^status: NOERROR ANSWER: 2 ' <<<"$out"
new=$(make_cookie $SECRET2 "$TB_IP4_CLI" "$(date +%s)")
out=$(kd +cookie="$new" +nobadcookie)
check_eq "the new secret's: answered, echoed" \
	"status: NOERROR ANSWER: 2 COOKIE: ${new^^}" "$out"

# flood COOKIE [CLIENT [RATE]]: 2.5 s of 2000/s from four addresses of
# 198.18.1.0/24, and CLIENT (198.18.1.10) at RATE (50/s) with COOKIE (""
# none); JSON in $RR_TMP/flood.json.
flood() {
	tb_cli python3 "$RR_LIB/rl_flood.py" --dst "$TB_IP4_SRV" --port 53 \
		--duration 2.5 "${SRCS[@]}" --flood-rate 2000 \
		--client "${2:-198.18.1.10}" --client-rate "${3:-50}" \
		--client-cookie "$1" \
		>"$RR_TMP/flood.json" || die "the flood did not run"
	sed 's/^/    /' "$RR_TMP/flood.json"
}
f() { json_eval "$1" "$RR_TMP/flood.json"; }
# flood_run COOKIE [CLIENT [RATE]]: the flood, which must be limited; the
# client's queries sent and answered in CSENT, CANS, its valid cookies
# counted by XDP meanwhile in VALID, dns's validated_limited in VLIM.
flood_run() {
	local ans max was is lwas lis
	rr_metrics_fresh "$M"
	was=$(metric "$M" reqrouter_cookie_valid_packets_total 'function="dns"')
	lwas=$(metric "$M" reqrouter_validated_limited_packets_total 'function="dns"')
	flood "$@"
	ans=$(f 'd["flood"]["answers"]')
	max=$(json_eval "int((200 * $(f 'd["seconds"]') + 200) * 1.05)" - <<<'{}')
	check "the flood is limited: at most $max answers ($ans)" test "$ans" -le "$max"
	read -r CSENT CANS < <(f '"%d %d" % (d["client"]["sent"], d["client"]["answers"])')
	rr_metrics_fresh "$M"
	is=$(metric "$M" reqrouter_cookie_valid_packets_total 'function="dns"')
	VALID=$((${is:-0} - ${was:-0}))
	lis=$(metric "$M" reqrouter_validated_limited_packets_total 'function="dns"')
	VLIM=$((${lis:-0} - ${lwas:-0}))
}
mine=$(make_cookie $SECRET2 198.18.1.10 "$(date +%s)")
say "== a flood from the client's /24; the client's cookie forged"
flood_run "$(flip "$mine")"
check "the client is limited with it: under 90 % answered ($CANS of $CSENT)" \
	test $((CANS * 100)) -lt $((CSENT * 90))
check_eq "XDP found no valid cookie" 0 "$VALID"
say "== the same flood; the client's cookie valid"
flood_run "$mine"
check "the client gets at least 99 % answered ($CANS of $CSENT)" \
	test $((CANS * 100)) -ge $((CSENT * 99))
check "XDP counted its valid cookies ($VALID of $CSENT)" test "$VALID" -ge "$CSENT"
say "== the same flood; the client's cookie valid, at 400/s: over its validated budget"
flood_run "$mine" 198.18.1.10 400
max=$(json_eval "int((100 * $(f 'd["seconds"]') + 100) * 1.1)" - <<<'{}')
check "held to rate_limit_validated: at most $max answered ($CANS of $CSENT)" \
	test "$CANS" -le "$max" -a "$CANS" -ge 200
check "counted as validated_limited ($VLIM)" test "$VLIM" -gt 0

say "== validated by a TCP handshake, and by a function's token"
out=$(tb_cli kdig @"$TB_IP4_SRV" -b 198.18.1.11 +tcp +nostats +retry=0 \
	+timeout=2 www.example.com A 2>&1 | grep -oE 'status: [A-Z]+' | xargs)
check_eq "198.18.1.11 asks over TCP: answered" "status: NOERROR" "$out"
# retry.py: the retry module's token for 198.18.1.12, echoed whole, then
# tampered with, then cut short: its three answers.
tb_cli python3 - "$TB_IP4_SRV" >"$RR_TMP/token.out" 2>&1 <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.1.12", 0))
s.settimeout(2)
def ask(p):
    s.sendto(p, (sys.argv[1], 9018))
    return s.recvfrom(2048)[0]
r = ask(b"hello")
assert r.startswith(b"retry ") and len(r) == 22, r
t = r[6:]
bad = t[:8] + bytes([t[8] ^ 1]) + t[9:]
print(ask(b"token " + t).decode(), "/", ask(b"token " + bad).decode(), "/",
      ask(b"token " + t[:15]).decode())
PY
check_eq "the token echoed: valid; tampered: forged; short: malformed" \
	"valid / refused forged / refused malformed" "$(cat "$RR_TMP/token.out")"
rr_metrics_fresh "$M"
check "counted: a source validated by TCP, one by a token" \
	test "$(metric "$M" reqrouter_validations_total 'how="tcp"')" -ge 1 -a \
	"$(metric "$M" reqrouter_validations_total 'how="token"')" = 1
for r in valid:1 forged:1 malformed:1 expired:0; do
	check_eq "reqrouter_tokens_total{result=\"${r%:*}\"}" "${r#*:}" \
		"$(metric "$M" reqrouter_tokens_total "result=\"${r%:*}\"")"
done
check "reqrouter_validated_sources: those and the cookie client's" \
	test "$(metric "$M" reqrouter_validated_sources)" -ge 3
for c in 198.18.1.11 198.18.1.12; do
	say "== the same flood; $c, validated, without a cookie"
	flood_run "" $c
	check "answered: at least 99 % ($CANS of $CSENT)" \
		test $((CANS * 100)) -ge $((CSENT * 99))
done
say "== the reply cache: a valid cookie answered in XDP, with its own cookie"
# The client's end runs an XDP program now, so replies may leave from
# XDP: a worker's answer to a valid cookie is cached without it, and the
# same question with another valid cookie, of another address too, is
# answered from the cache with that cookie echoed (each queue's worker
# caches it on its first miss). The answer is 32 bytes longer than the
# query, more than the 14 bytes of room the veth leaves after such a
# frame (it copies it into a buffer cut to its length): the cache makes
# the room in front.
rr_peer_xdp_on
rr_metrics_fresh "$M"
hits0=$(metric "$M" reqrouter_cache_hits_total 'function="dns"')
echoed=0
for a in 198.18.1.10 198.18.1.11; do
	c=$(make_cookie $SECRET2 $a "$(date +%s)")
	for i in 1 2 3 4 5 6; do
		out=$(tb_cli kdig @"$TB_IP4_SRV" -b $a +nostats +retry=0 \
			+timeout=2 +cookie="$c" +nobadcookie www.example.com A 2>&1 |
			grep -oE 'status: [A-Z]+|COOKIE: [0-9A-F]+|ANSWER: [0-9]+' |
			xargs)
		if [ "$out" = "status: NOERROR ANSWER: 2 COOKIE: ${c^^}" ]; then
			echoed=$((echoed + 1))
		else
			say "    from $a: $out"
		fi
	done
done
check_eq "12 answers, each with its own client's cookie echoed" 12 "$echoed"
hits=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- \
	$((hits0 + 10)))
check "the reply cache answered 10 of them in XDP, all but each queue's first ($hits0 hits before, $hits after)" \
	test "${hits:-0}" -ge $((hits0 + 10))
out=$(kd -b 198.18.1.11 +cookie="$(flip "$c")" +nobadcookie)
check "a forged cookie still gets BADCOOKIE, not the cached answer ($out)" \
	grep -qE '^status: BADCOOKIE ANSWER: 0 ' <<<"$out"

"$BUILD/reqrouterctl" --control "/run/reqrouter/$TB_IF_SRV.sock" stats \
	>"$RR_TMP/stats.txt" 2>&1
check "reqrouterctl stats: dns's cookies in XDP, valid and past the cache" \
	grep -qE '^  DNS cookies in XDP: valid [1-9][0-9]*, bypass [0-9]+$' "$RR_TMP/stats.txt"

say "== a second new secret within the hour: the first is dropped, and said so"
printf '%s\n' 0f1e2d3c4b5a69788796a5b4c3d2e1f0 >"$RR_TMP/cookie.secret"
"$BUILD/reqrouterctl" --control "/run/reqrouter/$TB_IF_SRV.sock" reload \
	>"$RR_TMP/reload2.out" 2>&1
check_eq "one line warns that the first secret's cookies are dropped" 1 \
	"$(grep -c "'dns': the secret before the previous one, good for [0-9]* s more, is dropped" "$RR_ERR")"
out=$(kd +cookie="$valid" +nobadcookie)
check "the first secret's cookie: BADCOOKIE ($out)" \
	grep -qE '^status: BADCOOKIE ANSWER: 0 ' <<<"$out"
out=$(kd +cookie="$new" +nobadcookie)
check "the second's, now the previous: answered ($out)" \
	grep -qE '^status: NOERROR ANSWER: 2 ' <<<"$out"

rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
