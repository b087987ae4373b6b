#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# dnstap from the dns function (docs/OPERATIONS.md, "dnstap"), on the bare
# bed and the default isolation (cells). reqrouter's [function dns] writes
# dnstap to a file; kdig asks over UDP (IPv4 and IPv6) and TCP, for an
# answer, a name that does not exist and a zone that is not ours; then
# dnstap-ldns reads the file, and each reply kdig got must be there as an
# AUTH_RESPONSE (same ID, name, type, RCODE, answer count, protocol,
# client address) beside its AUTH_QUERY. reqrouterctl threads 2: the
# new worker's queries are written too. A reload of the same settings
# writes on into the same file; one after the file was moved away (as
# logrotate does) makes a new one. A reload moves the output to a unix
# socket that fstrm_capture reads: the files are closed whole, the
# queries after it reach the socket. The reader goes away mid-stream: the
# answers go on, one line says so, the messages lost are counted
# (dnstap_dropped_output); a new reader gets the stream again. A path
# that cannot be written: one line, answers go on. The reply cache stays
# on with dnstap: once the veth peer runs an XDP program (as a NIC needs
# none), a query asked again is answered from the cache inside XDP (its
# hit counter rises) and is in the tap all the same, its AUTH_QUERY and
# AUTH_RESPONSE what kdig sent and got, saying it was the cache's. Last,
# dnstap_sample = 10: about one query in 10 is written.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

# The bare defaults a user meets: no XDP program on the veth peer, the
# reply cache on.
TB_PEER_XDP=0
RR_CACHE=yes
rr_bed 1
for tool in kdig fstrm_capture dnstap-ldns; do
	command -v $tool >/dev/null ||
		die "$tool is not installed (tools/install-deps.sh installs knot-dnsutils, fstrm-bin, dnstap-ldns)"
done

CONF=$RR_TMP/reqrouter.conf
M=$RR_TMP/metrics.prom
SUMMARY=$RR_LIB/dnstap_summary.py
TYPE=protobuf:dnstap.Dnstap

# conf LINES...: [function dns] with the example zone and LINES.
conf() {
	{
		printf '[function dns]\nzone = example.com %s\n' \
			"$PWD/configs/example.zone"
		printf '%s\n' "$@"
	} >"$CONF"
}

# reload LINES...: the config with LINES, SIGHUP, and the reload done.
reloads() { grep -c 'reload: .* re-initialised' "$RR_ERR"; }
# shellcheck disable=SC2317 # called through wait_for
reloads_above() { [ "$(reloads)" -gt "$1" ]; }
reload() {
	local n
	n=$(reloads)
	conf "$@"
	kill -HUP "$RR_PID"
	wait_for 5 reloads_above "$n" || bad "reload with $* not done"
}

# ask NAME KDIG-ARGS...: kdig from the client, its replies summed up in
# $RR_TMP/NAME.kdig (dnstap_summary.py's lines).
ask() {
	local name=$1
	shift
	tb_cli kdig +noidn +timeout=2 +retry=0 "$@" >"$RR_TMP/$name.out" 2>&1
	python3 "$SUMMARY" kdig <"$RR_TMP/$name.out" >"$RR_TMP/$name.kdig"
}

# tap FILE: the messages of a dnstap file, one line each.
tap() { dnstap-ldns -y -r "$1" | python3 "$SUMMARY" tap; }

# shellcheck disable=SC2317 # called through check
# matches NAME TAPLINES CLIENT: every reply of ask NAME is in TAPLINES as
# an AUTH_RESPONSE from CLIENT, with its AUTH_QUERY.
matches() {
	local kind proto id qname qtype rest missing=0 n=0
	while read -r kind proto id qname qtype rest; do
		n=$((n + 1))
		grep -qxF "$kind $proto $id $qname $qtype $rest $3" "$2" ||
			missing=$((missing + 1))
		grep -q "^AQ $proto $id $qname $qtype " "$2" ||
			missing=$((missing + 1))
	done <"$RR_TMP/$1.kdig"
	[ "$n" -gt 0 ] && [ "$missing" = 0 ]
}

say "== to a file: what kdig asked and got"
conf "dnstap = $RR_TMP/first.tap" "dnstap_identity = ns-test" \
	"dnstap_version = tap-1"
rr_start dns -i "$TB_IF_SRV" -q 1 -c "$CONF" --metrics-file "$M" ||
	die "reqrouter with dnstap did not start"
ask udp4 @"$TB_IP4_SRV" www.example.com A
ask udp6 @"$TB_IP6_SRV" nope.example.com MX
ask tcp4 +tcp @"$TB_IP4_SRV" example.com MX
ask refused @"$TB_IP4_SRV" example.org A
cat "$RR_TMP"/{udp4,udp6,tcp4,refused}.kdig | sed 's/^/    kdig: /'
check_eq "kdig: four replies: NOERROR, NXDOMAIN, NOERROR (TCP), REFUSED" \
	"NOERROR NXDOMAIN NOERROR REFUSED" \
	"$(cat "$RR_TMP"/{udp4,udp6,tcp4,refused}.kdig | awk '{ printf "%s%s", s, $6; s = " " }')"

say "== a thread more: its queries written too"
"$BUILD/reqrouterctl" --control "/run/reqrouter/$TB_IF_SRV.sock" threads 2 \
	>"$RR_TMP/threads.out" 2>&1
check "reqrouterctl threads 2" grep -q '^2 threads per queue' "$RR_TMP/threads.out"
# One request to each worker in turn (steering's round robin).
ask thread1 @"$TB_IP4_SRV" mail.example.com MX
ask thread2 @"$TB_IP4_SRV" mail.example.com A

say "== reloads: the same file written on; moved away, a new one"
reload "dnstap = $RR_TMP/first.tap" "dnstap_identity = ns-test" \
	"dnstap_version = tap-1"
ask same @"$TB_IP4_SRV" ftp.example.com A
mv "$RR_TMP/first.tap" "$RR_TMP/rotated.tap"
reload "dnstap = $RR_TMP/first.tap"
ask rotated @"$TB_IP6_SRV" www.example.com AAAA

say "== a reload: to a unix socket that fstrm_capture reads"
SOCK=$RR_TMP/tap.sock
fstrm_capture -t $TYPE -u "$SOCK" -w "$RR_TMP/sock.tap" \
	2>"$RR_TMP/capture.err" &
CAPTURE=$!
RR_BG_PIDS+=("$CAPTURE")
wait_for 5 test -S "$SOCK" || die "fstrm_capture made no socket"
reload "dnstap = $SOCK"
# An instance lets go of its file once no worker can use it.
# shellcheck disable=SC2317 # called through wait_for
whole() { dnstap-ldns -q -r "$1" >/dev/null 2>&1; }
wait_for 5 whole "$RR_TMP/rotated.tap"
wait_for 5 whole "$RR_TMP/first.tap"
tap "$RR_TMP/rotated.tap" >"$RR_TMP/rotated.lines"
sed 's/^/    tap: /' "$RR_TMP/rotated.lines"
check_eq "the file moved away: 14 messages, a query and a response for each" \
	14 "$(wc -l <"$RR_TMP/rotated.lines")"
check "UDP over IPv4: kdig's reply is the tap's AUTH_RESPONSE, with its AUTH_QUERY" \
	matches udp4 "$RR_TMP/rotated.lines" "$TB_IP4_CLI"
check "UDP over IPv6: the same (NXDOMAIN)" \
	matches udp6 "$RR_TMP/rotated.lines" "$TB_IP6_CLI"
check "TCP: the same, socket_protocol TCP" \
	matches tcp4 "$RR_TMP/rotated.lines" "$TB_IP4_CLI"
check "REFUSED: the same" \
	matches refused "$RR_TMP/rotated.lines" "$TB_IP4_CLI"
check "after threads 2: both queries, one for each worker" \
	matches thread1 "$RR_TMP/rotated.lines" "$TB_IP4_CLI"
check "... the second" \
	matches thread2 "$RR_TMP/rotated.lines" "$TB_IP4_CLI"
check "a reload of the same settings: the same file, written on" \
	matches same "$RR_TMP/rotated.lines" "$TB_IP4_CLI"
check "identity and version as set" \
	grep -q 'identity: "ns-test"' <(dnstap-ldns -y -r "$RR_TMP/rotated.tap")
check "... version too" \
	grep -q 'version: "tap-1"' <(dnstap-ldns -y -r "$RR_TMP/rotated.tap")
tap "$RR_TMP/first.tap" >"$RR_TMP/first.lines"
check_eq "the file made anew after the move: the query after it, no other" \
	2 "$(wc -l <"$RR_TMP/first.lines")"
check "... from IPv6, AAAA" \
	matches rotated "$RR_TMP/first.lines" "$TB_IP6_CLI"

ask sock1 @"$TB_IP4_SRV" mail.example.com A
ask sock2 +tcp @"$TB_IP6_SRV" sip.example.com A

say "== the reader goes away mid-stream"
# fstrm's I/O thread writes what it has at least once a second.
sleep 1.5
kill -TERM "$CAPTURE"
wait "$CAPTURE" 2>/dev/null
tap "$RR_TMP/sock.tap" >"$RR_TMP/sock.lines"
sed 's/^/    tap: /' "$RR_TMP/sock.lines"
check "the socket's reader got the UDP query and reply" \
	matches sock1 "$RR_TMP/sock.lines" "$TB_IP4_CLI"
check "... and the TCP ones, IPv6" \
	matches sock2 "$RR_TMP/sock.lines" "$TB_IP6_CLI"
for i in 1 2 3 4 5 6; do
	ask gone$i @"$TB_IP4_SRV" www.example.com A
done
# Found out at the next write, within a second.
wait_for 3 grep -q "dnstap: lost the reader of $SOCK" "$RR_ERR"
check_eq "one line says the reader went away" 1 \
	"$(grep -c "dnstap: lost the reader of $SOCK" "$RR_ERR")"
# A worker counts the messages lost at its next one.
for i in 7 8; do
	ask gone$i @"$TB_IP4_SRV" www.example.com A
done
check_eq "with no reader, kdig still gets its 8 answers" 8 \
	"$(cat "$RR_TMP"/gone?.kdig | grep -c ' NOERROR 2$')"
check "the messages lost are counted (dnstap_dropped_output)" \
	test "$(wait_metric "$M" 5 reqrouter_function_events_total \
		'counter="dnstap_dropped_output"' -- 1)" -ge 1

say "== a new reader gets the stream again"
fstrm_capture -t $TYPE -u "$SOCK" -w "$RR_TMP/sock2.tap" \
	2>"$RR_TMP/capture2.err" &
CAPTURE=$!
RR_BG_PIDS+=("$CAPTURE")
wait_for 5 grep -q "dnstap: writing to $SOCK again" "$RR_ERR"
check "one line says it is written again" \
	grep -q "dnstap: writing to $SOCK again" "$RR_ERR"
ask back @"$TB_IP4_SRV" ns1.example.com A
sleep 1.5
kill -TERM "$CAPTURE"
wait "$CAPTURE" 2>/dev/null
tap "$RR_TMP/sock2.tap" >"$RR_TMP/sock2.lines"
check "the new reader got the query after it came" \
	matches back "$RR_TMP/sock2.lines" "$TB_IP4_CLI"

say "== a path that cannot be written"
reload "dnstap = $RR_TMP/no/such/dir/x.tap"
ask nodir @"$TB_IP4_SRV" www.example.com A
check_eq "kdig still gets its answer" "NOERROR" \
	"$(awk '{ print $6 }' "$RR_TMP/nodir.kdig")"
check_eq "one line says the path cannot be written" 1 \
	"$(grep -c "dnstap: cannot write $RR_TMP/no/such/dir/x.tap" "$RR_ERR")"

say "== the reply cache's answers from XDP are written too"
reload "dnstap = $RR_TMP/cache.tap"
rr_peer_xdp_on
hits0=$(metric "$M" reqrouter_cache_hits_total 'function="dns"')
for i in 1 2 3 4 5 6; do
	ask cache$i @"$TB_IP4_SRV" +noedns www.example.com A
done
check_eq "kdig got its 6 answers" 6 \
	"$(cat "$RR_TMP"/cache?.kdig | grep -c ' NOERROR 2$')"
hits=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- \
	$((hits0 + 5)))
say "    cache hits: $hits0 before, $hits after"
check "the reply cache answered the repeats in XDP (5 hits or more)" \
	test "$hits" -ge $((hits0 + 5))

say "== dnstap_sample = 10: about one query in 10"
reload "dnstap = $RR_TMP/sample.tap" "dnstap_sample = 10"
names=()
for i in $(seq 100); do names+=("n$i.example.com" A); done
ask sample @"$TB_IP4_SRV" "${names[@]}"
check_eq "kdig got 100 answers (NXDOMAIN)" 100 \
	"$(grep -c ' NXDOMAIN ' "$RR_TMP/sample.kdig")"
rr_kill_wait TERM 10
check_eq "reqrouter: SIGTERM, exit 0" 0 "$RR_RC"
tap "$RR_TMP/sample.tap" >"$RR_TMP/sample.lines"
nq=$(grep -c '^AQ ' "$RR_TMP/sample.lines")
say "    $nq queries of 100 written"
check "about one query in 10 written (5 to 20)" test "$nq" -ge 5 -a "$nq" -le 20
check_eq "each written query with its response" "$nq" \
	"$(grep -c '^AR ' "$RR_TMP/sample.lines")"
# Each AUTH_RESPONSE, its client address left out, is a line kdig printed.
check_eq "each response written is a reply kdig got" 0 \
	"$(awk '$1 == "AR" { NF--; print }' "$RR_TMP/sample.lines" |
		grep -cvxF -f "$RR_TMP/sample.kdig")"

say "== the reply cache's answers in the tap"
tap "$RR_TMP/cache.tap" >"$RR_TMP/cache.lines"
sed 's/^/    tap: /' "$RR_TMP/cache.lines"
check_eq "12 messages: a query and a response for each of the 6" 12 \
	"$(wc -l <"$RR_TMP/cache.lines")"
for i in 1 2 3 4 5 6; do
	check "kdig's query $i and its reply, with its own ID, are in the tap" \
		matches cache$i "$RR_TMP/cache.lines" "$TB_IP4_CLI"
done
# dnstap-ldns prints no extra field: its bytes are in the file as they are.
n_cache=$(grep -ao 'reqrouter: answered in XDP by the reply cache' \
	"$RR_TMP/cache.tap" | wc -l)
check_eq "the cache's answers say so (extra), query and response" \
	$((2 * (hits - hits0))) "$n_cache"
finish
