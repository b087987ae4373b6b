#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What the dns function says about itself, and its answers over TCP,
# against Knot DNS byte for byte: knotd (its own config, rundir and
# storage in the test's temp dir, port 5300) and reqrouter's [function dns]
# (port 53) serve the same zone with the same identity, version and nsid
# in the server namespace. From the client namespace, lib/dnsbytes.py asks
# both the same queries over UDP and over TCP, over IPv4 and IPv6, and
# the replies must be the same bytes: CHAOS TXT id.server, hostname.bind,
# version.server and version.bind (and what is refused beside them), NSID
# in answers, refusals, BADVERS and truncated replies, and whole answers
# over TCP up to one of more than 4 KiB that UDP truncates. kdig shows
# the same: CH TXT id.server, +nsid, and a truncated answer followed over
# TCP to the whole one. Then a reload turns the identity off (REFUSED) and
# sets the NSID in hex. max_amplification is left to its default, which
# for dns is 0: written out, a reload finds nothing to change; set to 3,
# it applies, and long's TXT is then truncated over UDP and whole over
# TCP. Last, reqrouter --check refuses a bad nsid in one line.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

KPORT=5300   # knotd, the reference
DNSPORT=53   # reqrouter's dns function
IDENTITY=ns1.example.com
VERSION="reqrouter-test 1.0"
NSID=ns1-chaos

rr_bed 1
for tool in knotd kdig; do
	command -v $tool >/dev/null ||
		die "$tool is not installed (tools/install-deps.sh installs knot, knot-dnsutils)"
done

# The zone: the example zone, and an RRset of more than 4 KiB (20 TXT
# records of 241 bytes) for TCP.
ZONE=$RR_TMP/example.com.zone
{
	cat configs/example.zone
	printf '\n; Added by tests/integration/dns_chaos.sh.\n'
	for i in $(seq -w 0 19); do
		printf 'four\t\tIN TXT\t"four-%s-%s"\n' "$i" "$(printf 'f%.0s' $(seq 232))"
	done
} >"$ZONE"

# A knotd of our own with the identity, version and nsid; PID in KNOT_PID.
KDIR=$RR_TMP/knot
mkdir -p "$KDIR/run" "$KDIR/db" "$KDIR/zones"
cp "$ZONE" "$KDIR/zones/example.com.zone"
cat >"$KDIR/knot.conf" <<EOF
server:
    rundir: "$KDIR/run"
    listen: $TB_IP4_SRV@$KPORT
    listen: $TB_IP6_SRV@$KPORT
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
    identity: "$IDENTITY"
    version: "$VERSION"
    nsid: "$NSID"
database:
    storage: "$KDIR/db"
log:
  - target: stderr
    any: info
template:
  - id: default
    storage: "$KDIR/zones"
    zonefile-sync: -1
    journal-content: none
zone:
  - domain: example.com
    file: example.com.zone
EOF
tb_srv_bg knotd -c "$KDIR/knot.conf" 2>"$KDIR/knotd.log"
KNOT_PID=$TB_PID
RR_BG_PIDS+=("$KNOT_PID")
wait_for 10 grep -q '\[example.com.\] loaded' "$KDIR/knotd.log" ||
	{ sed 's/^/    /' "$KDIR/knotd.log"; die "knotd did not load the zone"; }
ok "knotd $(knotd -V | awk '{ print $NF }') serves the zone on port $KPORT"

CONF=$RR_TMP/reqrouter.conf
printf '[function dns]\nzone = example.com %s\nidentity = %s\nversion = %s\nnsid = %s\n' \
	"$ZONE" "$IDENTITY" "$VERSION" "$NSID" >"$CONF"
rr_start dns -i "$TB_IF_SRV" -q 1 -c "$CONF" ||
	die "reqrouter with [function dns] did not start"
check "start-up log says dns is served on port $DNSPORT" \
	grep -q "serving 'dns' on UDP port $DNSPORT" "$RR_ERR"
wait_for 5 tb_cli kdig +tcp +short +timeout=1 +retry=0 @"$TB_IP4_SRV" \
	-p $DNSPORT www.example.com A >/dev/null

# kd PORT ARGS...: kdig from the client namespace, to the server's IPv4.
kd() {
	local port=$1
	shift
	tb_cli kdig +noidn +timeout=2 +retry=1 @"$TB_IP4_SRV" -p "$port" "$@"
}

say "== kdig: CHAOS TXT and NSID, as from knotd"
for name in id.server hostname.bind version.server version.bind; do
	check_eq "CH TXT $name: the same answer as knotd's" \
		"$(kd $KPORT +short -c CH -t TXT $name)" \
		"$(kd $DNSPORT +short -c CH -t TXT $name)"
done
check_eq "CH TXT id.server says the identity" "\"$IDENTITY\"" \
	"$(kd $DNSPORT +short -c CH -t TXT id.server)"
check_eq "CH TXT version.bind says the version" "\"$VERSION\"" \
	"$(kd $DNSPORT +short -c CH -t TXT version.bind)"
kd $DNSPORT +nsid www.example.com A >"$RR_TMP/nsid.out"
check "kdig +nsid: reqrouter's NSID" grep -q "NSID: .*\"$NSID\"" "$RR_TMP/nsid.out"
check_eq "kdig +nsid: the same NSID line as knotd's" \
	"$(kd $KPORT +nsid www.example.com A | grep 'NSID:')" \
	"$(grep 'NSID:' "$RR_TMP/nsid.out")"

say "== kdig: a truncated answer, then the whole one over TCP"
kd $DNSPORT +notcp +ignore +bufsize=1232 huge.example.com TXT >"$RR_TMP/tc.out"
check "over UDP (EDNS 1232), huge's TXT is truncated (TC)" \
	grep -q 'Flags: qr aa tc rd;.* ANSWER: 0;' "$RR_TMP/tc.out"
kd $DNSPORT huge.example.com TXT >"$RR_TMP/retry.out" 2>&1
check "kdig says it retries over TCP" \
	grep -q 'truncated reply .*retrying over TCP' "$RR_TMP/retry.out"
check "... and gets all 16 strings" grep -q 'huge-text-15' "$RR_TMP/retry.out"
check "... from TCP" grep -q "@$DNSPORT(TCP)" "$RR_TMP/retry.out"
check_eq "over TCP, the 20 records of more than 4 KiB" 20 \
	"$(kd $DNSPORT +tcp +short four.example.com TXT | grep -c four-)"

NCASES=$(python3 "$RR_LIB/dnsbytes.py" --list | wc -l)
for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
	family=4
	[[ $addr == *:* ]] && family=6
	say "== the bytes over UDP and TCP, IPv$family"
	tb_cli timeout -k 5 120 python3 "$RR_LIB/dnsbytes.py" \
		"$addr@$KPORT" "$addr@$DNSPORT" --names knot,reqrouter \
		>"$RR_TMP/bytes$family.out" 2>&1
	rc=$?
	grep -v '^ok ' "$RR_TMP/bytes$family.out" | sed 's/^/    /'
	check_eq "IPv$family: every reply the same bytes as knotd's (dnsbytes exits 0)" \
		0 "$rc"
	check "IPv$family: all $NCASES cases were asked over both" \
		grep -q "^$((2 * NCASES)) cases (both): 0 mismatches" \
		"$RR_TMP/bytes$family.out"
done

say "== a reload: identity off, NSID in hex"
printf '[function dns]\nzone = example.com %s\nversion = %s\nnsid = 0x%s\n' \
	"$ZONE" "$VERSION" "$(printf %s "$NSID" | od -An -tx1 | tr -d ' \n')" \
	>"$CONF"
kill -HUP "$RR_PID"
wait_for 5 grep -q 'reload: 1 function re-initialised' "$RR_ERR"
check "reqrouter reloaded the dns function's settings, and changed nothing else" \
	grep -q 'reload: 1 function re-initialised$' "$RR_ERR"
kd $DNSPORT -c CH -t TXT id.server >"$RR_TMP/off.out"
check "CH TXT id.server: REFUSED once identity is gone" \
	grep -q 'status: REFUSED' "$RR_TMP/off.out"
check_eq "CH TXT version.bind still says the version" "\"$VERSION\"" \
	"$(kd $DNSPORT +short -c CH -t TXT version.bind)"
check_eq "nsid = 0xHEX: the same NSID as the text gave" \
	"$(kd $KPORT +nsid www.example.com A | grep 'NSID:')" \
	"$(kd $DNSPORT +nsid www.example.com A | grep 'NSID:')"

say "== max_amplification: 0 is dns's default, 3 applies"
# reloads: the reloads reqrouter has logged; reloads_above N: more than N.
reloads() { grep -c 'reload: .* re-initialised' "$RR_ERR"; }
# shellcheck disable=SC2317 # called through wait_for
reloads_above() { [ "$(reloads)" -gt "$1" ]; }
# reloaded NAME LINE: LINE appended to the config, a reload; its summary
# line in $RR_TMP/NAME.log.
reloaded() {
	local n
	n=$(reloads)
	printf '%s\n' "$2" >>"$CONF"
	kill -HUP "$RR_PID"
	wait_for 5 reloads_above "$n"
	grep 'reload: .* re-initialised' "$RR_ERR" | sed -n "$((n + 1))p" \
		>"$RR_TMP/$1.log"
	sed 's/^/    /' "$RR_TMP/$1.log"
}
reloaded same 'max_amplification = 0'
# Every reload runs dns's init() again (its zones are read anew).
check "max_amplification = 0 written out: no change of it to apply" \
	grep -q 'reload: 1 function re-initialised$' "$RR_TMP/same.log"
reloaded three 'max_amplification = 3'
check "max_amplification = 3: the reload applies one change" \
	grep -q 'reload: 1 function re-initialised, 1 change applied$' \
	"$RR_TMP/three.log"
kd $DNSPORT +notcp +ignore +bufsize=1232 long.example.com TXT >"$RR_TMP/amp3.out"
check "max_amplification = 3: long's TXT is truncated to fit (TC) over UDP" \
	grep -q 'Flags: qr aa tc rd;.* ANSWER: 0;' "$RR_TMP/amp3.out"
check "... and whole over TCP" \
	grep -q 'long-text-12' <(kd $DNSPORT +tcp long.example.com TXT)

rr_kill_wait TERM 10
check_eq "reqrouter: SIGTERM, exit 0" 0 "$RR_RC"

say "== reqrouter --check on the dns settings"
printf '[function dns]\nzone = example.com %s\nnsid = 0xabc\n' "$ZONE" \
	>"$RR_TMP/bad.conf"
"$RR" --check -c "$RR_TMP/bad.conf" -i "$TB_IF_SRV" >"$RR_TMP/check.out" 2>&1
rc=$?
check_eq "a bad nsid: --check exits 1, as a start would" 1 "$rc"
check "a bad nsid: one line with the file and line" \
	grep -q "bad.conf:3: function dns: nsid takes text or 0x and an even number of hex digits" \
	"$RR_TMP/check.out"

kill -TERM "$KNOT_PID" 2>/dev/null
finish
