#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter's dns function against Knot DNS, answer by answer. Both serve
# the same zone in the server namespace: knotd (started here with its own
# config, rundir and storage in the test's temp dir, on port 5300; never
# the host's /etc/knot or service) and reqrouter's [function dns] on port
# 53. From the client namespace, lib/dnscompare.py asks both the same
# questions with kdig (hits, NODATA, NXDOMAIN, every type, CNAME chains,
# case variants, EDNS on and off and its buffer sizes, truncation, other
# zones and classes, NOTIFY) and with hand-built datagrams (other opcodes,
# malformed questions, broken EDNS), over IPv4 and IPv6, and compares
# them section by section. Only the message ID, the order within an
# RRset, NSID and the message size are ignored; every other difference is
# printed, and one that is not on the allow-list below fails the test.
#
# First the harness proves itself on Knot alone: Knot against itself on a
# second port must agree everywhere, and against a Knot serving a zone
# with three records changed it must find exactly those.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=2
KPORT=5300    # knotd, the reference
KPORT2=5301   # the same knotd: the harness must see no difference
ALTPORT=5302  # a knotd with a changed zone: it must see those
DNSPORT=53    # reqrouter's dns function
CMP=(python3 "$RR_LIB/dnscompare.py")

rr_bed $QUEUES
for tool in knotd kdig; do
	command -v $tool >/dev/null ||
		die "$tool is not installed (tools/install-deps.sh installs knot, knot-dnsutils)"
done

# The zone both serve. mid's TXT RRset (about 700 bytes) fits an EDNS
# reply but not a 512-byte one; big's (about 2100) fits neither.
ZONE=$RR_TMP/example.com.zone
{
	cat <<'EOF'
$ORIGIN example.com.
$TTL 3600
@	IN SOA	ns1.example.com. hostmaster.example.com. 2024010101 7200 3600 1209600 300
	NS	ns1
	NS	ns2.example.net.
	A	192.0.2.1
	AAAA	2001:db8::1
	MX	10 mail
	MX	20 mail.example.net.
	TXT	"v=spf1 -all"
ns1	A	192.0.2.53
	AAAA	2001:db8::53
www	A	192.0.2.80
	A	192.0.2.81
	AAAA	2001:db8::80
	TXT	"hello" "world"
mail	A	192.0.2.25
alias	CNAME	www
chain1	CNAME	chain2
chain2	CNAME	www
ext	CNAME	www.example.net.
dangling CNAME	nothere
bigalias CNAME	big
loop1	CNAME	loop2
loop2	CNAME	loop1
wcname	CNAME	x.wild
dcname	CNAME	www.sub
a.b.deep A	192.0.2.99
*.wild	A	192.0.2.77
	TXT	"wildcard"
sub	NS	ns.sub
	NS	ns.example.net.
ns.sub	A	192.0.2.54
EOF
	for i in $(seq -w 1 8); do
		printf 'mid\tTXT\t"mid-%s %s"\n' "$i" \
			0123456789012345678901234567890123456789012345678901234567890123456789
	done
	for i in $(seq -w 1 24); do
		printf 'big\tTXT\t"big-%s %s"\n' "$i" \
			0123456789012345678901234567890123456789012345678901234567890123456789
	done
} >"$ZONE"

# knot_start NAME ZONEFILE PORT...: a knotd of our own in the server
# namespace, listening on both addresses at each PORT; PID in KNOT_PID.
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
		printf 'database:\n    storage: "%s/db"\n' "$dir"
		printf 'log:\n  - target: stderr\n    any: info\n'
		printf 'template:\n  - id: default\n    storage: "%s/zones"\n' "$dir"
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

say "== the harness: Knot against itself on a second port (IPv4)"
compare self "$TB_IP4_SRV@$KPORT" "$TB_IP4_SRV@$KPORT2" --names knot,knot2
check_eq "Knot against itself: dnscompare exits 0" 0 "$CMP_RC"
check "Knot against itself: no mismatch in any case" \
	grep -Eq '^[0-9]+ cases .*: 0 mismatches, 0 allowed$' "$RR_TMP/self.out"

say "== the harness: Knot against a Knot with three records changed"
# www's TXT, ns1's A TTL and the serial: the cases that see them, and
# only those, must differ.
sed -e 's/"hello" "world"/"hello" "there"/' \
	-e 's/^ns1\tA\t/ns1\t3599 A\t/' \
	-e 's/2024010101/2024010102/' "$ZONE" >"$RR_TMP/altered.zone"
knot_start alt "$RR_TMP/altered.zone" $ALTPORT || die "knotd alt did not start"
ALT_PID=$KNOT_PID
compare altered "$TB_IP4_SRV@$KPORT" "$TB_IP4_SRV@$ALTPORT" \
	--names knot,altered --no-raw
check_eq "altered zone: dnscompare exits 1" 1 "$CMP_RC"
for want in "www TXT: answer" "ns1 A: answer" "apex SOA: answer" \
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
knot_stop "$ALT_PID" alt

rr_finish
