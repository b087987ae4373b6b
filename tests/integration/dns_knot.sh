#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter's dns function against Knot DNS, answer by answer. Both serve
# the same zone in the server namespace: knotd (started here with its own
# config, rundir and storage in the test's temp dir, on port 5300; never
# the host's /etc/knot or service) and reqrouter's [function dns] on port
# 53. From the client namespace, lib/dnscompare.py asks both the same
# questions with kdig (hits, NODATA, NXDOMAIN, every type, CNAME chains,
# wildcards, referrals, case variants, EDNS on and off and its buffer
# sizes, truncation, other zones and classes, NOTIFY, DNS Cookies: knotd
# runs mod-cookies with its defaults, the dns function answers as it
# does) and with hand-built datagrams (other opcodes, malformed questions,
# broken EDNS, COOKIE options of lengths no cookie has), over IPv4
# and IPv6, and compares them section by section. Only the message ID,
# the order within an RRset, NSID, the message size and a cookie's bytes
# (not its shape: the secrets differ) are ignored; every
# other difference is printed, and one that is not on the allow-list
# below fails the test. A truncated answer is followed too: kdig's
# default retries it over TCP, to the same whole answer as Knot's (big: a
# TXT RRset of over 6 KB). Then all of it over TCP (RFC 7766 framing):
# the kdig cases with +tcp, the raw ones framed (but the empty one, no
# message over TCP), and pipelined: kdig +keepopen asks 14 questions on
# one connection, and 16 messages go in one write on another, every reply
# in order and equal to Knot's (two connections in reqrouter's count per
# family). Then both again with the largest EDNS reply raised to 4096
# bytes, over UDP and TCP, and docs/TOOLS.md's load tools (dnsperf,
# kxdpgun) for 2 s each: every query answered, with Knot's mix of rcodes.
#
# First the harness proves itself: its comparison on replies it builds
# (what must differ does, what may differ does not), Knot against itself
# on a second port (no difference anywhere, over UDP and TCP), and Knot
# against a Knot serving a zone with three records changed (exactly those
# found, over UDP, over TCP and pipelined).
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=2
KPORT=5300    # knotd, the reference
KPORT2=5301   # the same knotd: the harness must see no difference
ALTPORT=5302  # a knotd with a changed zone, later one with 4096 bytes
DNSPORT=53    # reqrouter's dns function
CMP=(python3 "$RR_LIB/dnscompare.py")

rr_bed $QUEUES
for tool in knotd kdig; do
	command -v $tool >/dev/null ||
		die "$tool is not installed (tools/install-deps.sh installs knot, knot-dnsutils)"
done

# The zone both serve: the dns function's example zone (configs/
# example.zone: every type it answers, CNAME chains, a wildcard, an empty
# non-terminal, a delegation, TXT RRsets too long for 512 and for 1232
# bytes), two CNAMEs more, into the wildcard and into the delegation, and
# big: 25 TXT records of 241 bytes, a message of 6.3 KB, too long for any
# UDP reply.
ZONE=$RR_TMP/example.com.zone
[ -f configs/example.zone ] || die "no configs/example.zone"
{
	cat configs/example.zone
	printf '\n; Added by tests/integration/dns_knot.sh.\n'
	printf 'wcname\t\tIN CNAME x.wild\ndcname\t\tIN CNAME www.sub\n'
	for i in $(seq -w 0 24); do
		printf 'big\t\tIN TXT\t"big-%s-%s"\n' "$i" "$(printf 'b%.0s' $(seq 232))"
	done
} >"$ZONE"

# knot_start NAME ZONEFILE PORT...: a knotd of our own in the server
# namespace, listening on both addresses at each PORT; PID in KNOT_PID.
# KNOT_UDP_MAX, if set, is its udp-max-payload (default 1232).
# Identity and version are off (Knot would otherwise answer CH TXT
# version.bind with its version), as a plain authoritative server's.
knot_start() {
	local name=$1 zone=$2 dir=$RR_TMP/knot-$1 p i
	shift 2
	mkdir -p "$dir/run" "$dir/db" "$dir/zones"
	cp "$zone" "$dir/zones/example.com.zone"
	{
		printf 'server:\n    rundir: "%s/run"\n' "$dir"
		for p in "$@"; do
			printf '    listen: %s@%s\n    listen: %s@%s\n' \
				"$TB_IP4_SRV" "$p" "$TB_IP6_SRV" "$p"
		done
		printf '    udp-workers: 1\n    tcp-workers: 1\n'
		printf '    background-workers: 1\n'
		printf '    identity: ""\n    version: ""\n'
		[ -n "${KNOT_UDP_MAX:-}" ] &&
			printf '    udp-max-payload: %s\n' "$KNOT_UDP_MAX"
		printf 'database:\n    storage: "%s/db"\n' "$dir"
		printf 'log:\n  - target: stderr\n    any: info\n'
		# DNS Cookies as the dns function answers them: mod-cookies
		# with its defaults (its own secret).
		printf 'template:\n  - id: default\n    storage: "%s/zones"\n' "$dir"
		printf '    global-module: mod-cookies\n'
		printf '    zonefile-sync: -1\n    journal-content: none\n'
		printf 'zone:\n  - domain: example.com\n    file: example.com.zone\n'
	} >"$dir/knot.conf"
	tb_srv_bg knotd -c "$dir/knot.conf" 2>"$dir/knotd.log"
	KNOT_PID=$TB_PID
	RR_BG_PIDS+=("$KNOT_PID")
	for ((i = 0; i < 100; i++)); do
		grep -q '\[example.com.\] loaded' "$dir/knotd.log" && return 0
		kill -0 "$KNOT_PID" 2>/dev/null || break
		sleep 0.1
	done
	say "knotd $name did not load the zone; its log:"
	sed 's/^/    /' "$dir/knotd.log"
	return 1
}

# knot_stop PID NAME: SIGTERM, and knotd must be gone within 5 s.
knot_stop() {
	local i
	kill -TERM "$1" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		bad "knotd $2 still running 5 s after SIGTERM"
		kill -KILL "$1"
	else
		ok "knotd $2 stopped"
	fi
}

# compare NAME A B [ARGS...]: dnscompare from the client namespace; its
# output in $RR_TMP/NAME.out (shown), exit status in CMP_RC.
compare() {
	local name=$1
	shift
	tb_cli timeout -k 5 240 "${CMP[@]}" "$@" >"$RR_TMP/$name.out" 2>&1
	CMP_RC=$?
	sed 's/^/    /' "$RR_TMP/$name.out"
}

say "== Knot DNS $(knotd -V | awk '{ print $NF }'), in $TB_NS_SRV"
knot_start ref "$ZONE" $KPORT $KPORT2 || die "knotd did not start"
REF_PID=$KNOT_PID
check "knotd's config, rundir and storage are the test's own" \
	test -S "$RR_TMP/knot-ref/run/knot.sock"
check "kdig gets an answer from knotd" \
	tb_cli kdig @"$TB_IP4_SRV" -p $KPORT +short www.example.com A

say "== the harness: its comparison on replies it builds itself"
check "dnscompare --self-test: what differs is found, what may differ is not" \
	"${CMP[@]}" --self-test

say "== the harness: Knot against itself on a second port (IPv4)"
compare self "$TB_IP4_SRV@$KPORT" "$TB_IP4_SRV@$KPORT2" --names knot,knot2
check_eq "Knot against itself: dnscompare exits 0" 0 "$CMP_RC"
check "Knot against itself: no mismatch in any case" \
	grep -Eq '^[0-9]+ cases .*: 0 mismatches, 0 allowed;' "$RR_TMP/self.out"
compare self-tcp "$TB_IP4_SRV@$KPORT" "$TB_IP4_SRV@$KPORT2" --names knot,knot2 \
	--tcp
check_eq "Knot against itself over TCP: dnscompare exits 0" 0 "$CMP_RC"
check "Knot against itself over TCP: no mismatch in any case, 30 pipelined" \
	grep -Eq '^[0-9]+ cases \(.* 30 pipelined, over TCP\): 0 mismatches, 0 allowed;' \
	"$RR_TMP/self-tcp.out"

say "== the harness: Knot against a Knot with three records changed"
# The apex's TXT, ns1's A TTL and the serial: the cases that see them,
# and only those, must differ.
sed -E -e 's/"v=spf1 mx -all"/"v=spf1 -all"/' \
	-e 's/^ns1([[:space:]]+)IN A/ns1\13599 IN A/' \
	-e 's/2026112401/2026112402/' "$ZONE" >"$RR_TMP/altered.zone"
check "the altered zone differs in three lines" \
	[ "$(diff "$ZONE" "$RR_TMP/altered.zone" | grep -c '^>')" = 3 ]
knot_start alt "$RR_TMP/altered.zone" $ALTPORT || die "knotd alt did not start"
ALT_PID=$KNOT_PID
compare altered "$TB_IP4_SRV@$KPORT" "$TB_IP4_SRV@$ALTPORT" \
	--names knot,altered --no-raw
check_eq "altered zone: dnscompare exits 1" 1 "$CMP_RC"
for want in "apex TXT: answer" "ns1 A: answer" "apex SOA: answer" \
	"apex NS: additional" "nxdomain: authority" "case www: rcode"; do
	case $want in
	"case www: rcode")
		# a case that must NOT differ
		check "altered zone: no mismatch reported for 'case www'" \
			bash -c "! grep -q '^MISMATCH  case www:' '$RR_TMP/altered.out'"
		;;
	*)
		check "altered zone: mismatch found in '$want'" \
			grep -q "^MISMATCH  $want " "$RR_TMP/altered.out"
		;;
	esac
done
# Over TCP and pipelined, the cases that see the changes (and www A,
# which must not differ).
compare altered-tcp "$TB_IP4_SRV@$KPORT" "$TB_IP4_SRV@$ALTPORT" \
	--names knot,altered --no-raw --tcp --only "apex TXT" --only "ns1 A" \
	--only pipeline
check_eq "altered zone over TCP: dnscompare exits 1" 1 "$CMP_RC"
for want in "apex TXT: answer" "ns1 A: answer" "pipeline kdig 1 apex SOA: answer" \
	"pipeline kdig 2 apex TXT: answer" "pipeline raw 2 apex TXT: answer" \
	"pipeline raw 4 nxdomain: authority"; do
	check "altered zone over TCP: mismatch found in '$want'" \
		grep -q "^MISMATCH  $want " "$RR_TMP/altered-tcp.out"
done
check "altered zone over TCP: no mismatch reported for 'www A', pipelined" \
	bash -c "! grep -q '^MISMATCH  pipeline .* www A:' '$RR_TMP/altered-tcp.out'"
knot_stop "$ALT_PID" alt

say "== reqrouter's dns function against Knot"
# Differences that are legitimate, each with the reason: LABEL<TAB>SECTION
# <TAB>why. Anything else that differs fails the test.
ALLOW=$RR_TMP/allow.txt
cat >"$ALLOW" <<'EOF'
# label	section	why
EOF
# No max_amplification: Knot has no such limit, and dns (RR_FN_CLIENT_SIZED)
# has none by default either, its replies bounded by the client's size and
# udp_max_payload alone (with a limit of 3, a reply could be at most three
# times the query, and larger answers would be truncated where Knot's are
# not). So this compares the defaults.
CONF=$RR_TMP/reqrouter.conf
printf '[function dns]\nzone = example.com %s\nrate_limit = 0\n' "$ZONE" >"$CONF"
"$RR" -c "$CONF" --list >"$RR_TMP/list.out" 2>&1
if ! grep -q '^dns ' "$RR_TMP/list.out"; then
	bad "this build has no dns function (reqrouter --list)"
	finish
fi
M=$RR_TMP/metrics.prom
rr_start dns -i "$TB_IF_SRV" -q $QUEUES -c "$CONF" -p $DNSPORT \
	--metrics-file "$M" || die "reqrouter with [function dns] did not start"
check "start-up log says dns is served on port $DNSPORT" \
	grep -q "serving 'dns' on UDP port $DNSPORT" "$RR_ERR"

# Over TCP, the same allow-list. How a connection ends is not compared:
# knotd closes it after a message it answers FORMERR or not at all,
# reqrouter keeps it open for the next; dnscompare notes each such case.
ALLOWTCP=$RR_TMP/allow-tcp.txt
cp "$ALLOW" "$ALLOWTCP"
# followed FILE: the "followed" lines of cases over 6 KB, both sides whole.
followed() {
	grep -c '^followed  follow big .*: .* 25 answer records from knot, 25 from reqrouter$' "$1"
}
for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
	family=v4
	[[ $addr == *:* ]] && family=v6
	say "-- over IP$family"
	compare "dns-$family" "$addr@$KPORT" "$addr@$DNSPORT" \
		--names knot,reqrouter --allow "$ALLOW"
	check_eq "IP$family: dnscompare exits 0 (no difference off the allow-list)" \
		0 "$CMP_RC"
	check "IP$family: 7 truncated answers followed over TCP by both" \
		grep -q '; 7 followed over TCP$' "$RR_TMP/dns-$family.out"
	check_eq "IP$family: big's 6 KB, truncated, then whole over TCP as Knot's" \
		3 "$(followed "$RR_TMP/dns-$family.out")"
	say "-- over IP$family, TCP"
	compare "tcp-$family" "$addr@$KPORT" "$addr@$DNSPORT" \
		--names knot,reqrouter --allow "$ALLOWTCP" --tcp --no-pipeline
	check_eq "IP$family over TCP: dnscompare exits 0 (no difference off the allow-list)" \
		0 "$CMP_RC"
	check "IP$family over TCP: every kdig case, every raw one but the empty" \
		grep -Eq '^167 cases \(116 kdig, 51 raw, 0 pipelined, over TCP\)' \
		"$RR_TMP/tcp-$family.out"
done

say "-- pipelined: several queries on one connection"
# new_metrics: once reqrouter has written its metrics file anew.
new_metrics() {
	touch "$RR_TMP/stamp"
	wait_for 3 test "$M" -nt "$RR_TMP/stamp"
}
accepted() {
	metric "$M" reqrouter_tcp_events_total 'function="dns"' 'event="accepted"'
}
tb_wait_file "$M" 5
new_metrics
before=$(accepted)
for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
	family=v4
	[[ $addr == *:* ]] && family=v6
	compare "pipe-$family" "$addr@$KPORT" "$addr@$DNSPORT" \
		--names knot,reqrouter --allow "$ALLOWTCP" --tcp --only pipeline
	check_eq "IP$family pipelined: dnscompare exits 0, the replies in order and Knot's" \
		0 "$CMP_RC"
	check "IP$family pipelined: 14 by kdig +keepopen, 16 in one write, all compared" \
		grep -Eq '^30 cases \(0 kdig, 0 raw, 30 pipelined, over TCP\): 0 mismatches' \
		"$RR_TMP/pipe-$family.out"
done
new_metrics
check_eq "pipelined: one connection each, four in reqrouter's count" \
	4 "$(($(accepted) - before))"

# The setting both have: the largest EDNS reply, at 4096 bytes. knotd at
# another port gets it, reqrouter through a reload of its config. huge's
# TXT RRset (about 2 kB) then fits knotd's reply, which the kernel sends
# in two IP fragments; reqrouter sends no fragments (AF_XDP has none to
# offer, and DNS is better off without: RFC 8900), so its reply must fit
# the MTU and is truncated instead. Allowed here, and only here.
say "-- with udp_max_payload 4096 (knotd: udp-max-payload)"
ALLOW4096=$RR_TMP/allow4096.txt
cp "$ALLOW" "$ALLOW4096"
for section in flags answer; do
	printf 'tc huge bufsize 4096\t%s\t%s\n' $section \
		"reqrouter sends no IP fragments: a reply longer than the MTU allows is truncated (TC) where knotd's is fragmented" \
		>>"$ALLOW4096"
done
printf 'follow huge bufsize 4096\twarnings\t%s\n' \
	"the same: kdig has reqrouter's truncated reply again over TCP, whole, as knotd's fragmented one" \
	>>"$ALLOW4096"
KNOT_UDP_MAX=4096 knot_start big "$ZONE" $ALTPORT ||
	die "knotd with udp-max-payload 4096 did not start"
BIG_PID=$KNOT_PID
printf 'udp_max_payload = 4096\n' >>"$CONF"
kill -HUP "$RR_PID"
wait_for 5 grep -q 'reload: 1 function re-initialised' "$RR_ERR"
check "reqrouter reloaded the dns function's settings" \
	grep -q 'reload: 1 function re-initialised' "$RR_ERR"
compare dns-4096 "$TB_IP4_SRV@$ALTPORT" "$TB_IP4_SRV@$DNSPORT" \
	--names knot,reqrouter --allow "$ALLOW4096" --only tc --only edns \
	--only follow --no-raw
check_eq "udp_max_payload 4096: dnscompare exits 0" 0 "$CMP_RC"
check_eq "udp_max_payload 4096: the reply over the MTU is the one allowed difference" \
	"2 1" "$(grep -c '^ALLOWED  tc huge bufsize 4096: ' "$RR_TMP/dns-4096.out") $(grep -c '^ALLOWED  follow huge bufsize 4096: warnings ' "$RR_TMP/dns-4096.out")"
check_eq "udp_max_payload 4096: big's 6 KB, truncated, then whole over TCP as Knot's" \
	3 "$(followed "$RR_TMP/dns-4096.out")"
compare tcp-4096 "$TB_IP4_SRV@$ALTPORT" "$TB_IP4_SRV@$DNSPORT" \
	--names knot,reqrouter --allow "$ALLOWTCP" --only tc --only edns \
	--only follow --no-raw --tcp
check_eq "udp_max_payload 4096 over TCP: dnscompare exits 0, no difference at all" \
	"0 0" "$CMP_RC $(grep -c '^ALLOWED' "$RR_TMP/tcp-4096.out")"
knot_stop "$BIG_PID" big

tb_wait_file "$M" 5
check "the queries reached reqrouter, not the kernel (rx > 200)" \
	[ "$(metric "$M" reqrouter_rx_packets_total "port=\"$DNSPORT\"")" -gt 200 ]

say "== docs/TOOLS.md's load tools, 2 s at 2000 queries/s"
# Five queries: three answers, an NXDOMAIN, a REFUSED; the tools cycle
# through them, so both servers must show the same mix of rcodes.
QFILE=$RR_TMP/queries.txt
printf '%s\n' "www.example.com A" "example.com MX" "alias.example.com AAAA" \
	"nothere.example.com A" "www.example.net A" >"$QFILE"
chmod 644 "$QFILE"
# rcodes FILE: "NOERROR=60% NXDOMAIN=20% ..." from dnsperf's output, in
# whole percent (the runs may stop at different points of the cycle).
rcodes() {
	sed -n 's/^ *Response codes: *//p' "$1" | tr -d ',()%' |
		awk '{ for (i = 1; i + 2 <= NF; i += 3)
			printf "%s%s=%.0f%%", (i > 1 ? " " : ""), $i, $(i + 2) }'
}
for who in knot:$KPORT reqrouter:$DNSPORT; do
	tb_cli timeout -k 2 20 dnsperf -s "$TB_IP4_SRV" -p "${who#*:}" \
		-d "$QFILE" -l 2 -Q 2000 >"$RR_TMP/dnsperf-${who%:*}.out" 2>&1
	sed -n '/Queries sent/,/Latency StdDev/p' \
		"$RR_TMP/dnsperf-${who%:*}.out" | sed 's/^/    /'
	check "dnsperf against ${who%:*}: every query answered" \
		grep -Eq 'Queries completed: +[1-9][0-9]* \(100\.00%\)' \
		"$RR_TMP/dnsperf-${who%:*}.out"
done
check_eq "dnsperf: reqrouter's mix of rcodes is Knot's" \
	"$(rcodes "$RR_TMP/dnsperf-knot.out")" \
	"$(rcodes "$RR_TMP/dnsperf-reqrouter.out")"

# kxdpgun sends from an AF_XDP socket on the client's queue 0 and takes
# replies there only. reqrouter answers on the queue a query came in on,
# so every reply reaches it (Knot's, sent by the kernel, need not: hence
# reqrouter only). It puts its own XDP program on the client's end in
# place of the bed's, which lets reqrouter's replies through as well.
KX=$RR_TMP/kxdpgun.out
tb_cli timeout -k 2 20 kxdpgun -t 2 -Q 2000 -p $DNSPORT -I "$TB_IF_CLI" \
	-i "$QFILE" "$TB_IP4_SRV" >"$KX" 2>&1
sed -n '/total queries/,/duration/p' "$KX" | sed 's/^/    /'
check "kxdpgun against reqrouter: every query answered" \
	grep -Eq '^total replies: +[1-9][0-9]* .*\(100%\)' "$KX"
check_eq "kxdpgun: reqrouter's mix of rcodes is Knot's (from dnsperf)" \
	"$(rcodes "$RR_TMP/dnsperf-knot.out")" \
	"$(awk '/^responded / { sub(":", "", $2); n[$2] = $3; t += $3; k[++m] = $2 }
		END { for (i = 1; i <= m; i++)
			printf "%s%s=%.0f%%", (i > 1 ? " " : ""), k[i], 100 * n[k[i]] / t }' "$KX")"

rr_kill_wait TERM 10
check_eq "reqrouter: SIGTERM, exit 0" 0 "$RR_RC"
knot_stop "$REF_PID" ref

finish
