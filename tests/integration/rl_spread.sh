#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Rate limiting survives a spoofed spread (issue 42), on the bare
# defaults: the 2-queue bed with nothing on the client's end
# (TB_PEER_XDP=0), tier auto, dns with only its zone configured
# (rate_limit 200 replies/s per /24, burst 200, slip 2). For 5 s a spread
# of spoofed queries from /24s of 10.0.0.0/8 and 100.64.0.0/10 comes
# from the client's namespace (lib/rl_spread.py, raw frames, every /24
# under its limit): 2000 a second from /24s drawn at random, and 100 a
# second from each /24 whose bucket in the limiter's table before issue
# 42 (3 rows x 4096, limited only when all three refuse) was the client's
# in one row, found with the program's seed (read with bpftool): on the
# client's buckets, what a uniform spread of some 4096 times as much
# would put there. Meanwhile the bed's client asks at 50/s:
#  - the client gets at least 90 % answered (the old table limited most
#    of its queries: each of its buckets was full of others');
#  - so does the spread (at least 90 %, each /24 under its limit), and
#    nothing is counted as rate-limited or slipped: no source went over
#    its rate.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
command -v bpftool >/dev/null || skip "needs bpftool (to read the program's seed)"
rr_bed 2
M=$RR_TMP/metrics.prom
CONF=$RR_TMP/dns.conf

# seed: the XDP program's hh_seed, from its .rodata (bpftool's JSON).
seed() {
	local prog map
	prog=$(tb_srv ip -j link show dev "$TB_IF_SRV" |
		json_eval 'd[0]["xdp"]["prog"]["id"]' -) || return 1
	for map in $(bpftool -j prog show id "$prog" |
		json_eval '" ".join(map(str, d["map_ids"]))' -); do
		bpftool -j map show id "$map" |
			json_eval 'd["name"].endswith(".rodata")' - |
			grep -q True || continue
		bpftool -j map dump id "$map" |
			json_eval '[v["hh_seed"] for v in d[0]["formatted"]["value"][".rodata"] if "hh_seed" in v][0]' -
		return
	done
	return 1
}

printf '[function dns]\nzone = example.com %s/configs/example.zone\n' \
	"$PWD" >"$CONF"
rr_start spread -c "$CONF" -i "$TB_IF_SRV" -q 2 --metrics-file "$M" ||
	die "reqrouter did not start"
SEED=$(seed) || die "cannot read the program's hh_seed with bpftool"

say "== 5 s of a spoofed spread, every /24 under its limit; a client at 50/s"
tb_cli timeout 40 python3 "$RR_LIB/rl_spread.py" --ifname "$TB_IF_CLI" \
	--src-mac "$TB_MAC_CLI" --dst-mac "$TB_MAC_SRV" --dst "$TB_IP4_SRV" \
	--port 53 --duration 5 --client "$TB_IP4_CLI" --client-rate 50 \
	--spread-rate 2000 --aim-seed "$SEED" --aim-rate 100 \
	>"$RR_TMP/spread.json" || die "the spread did not run"
sed 's/^/    /' "$RR_TMP/spread.json"
f() { json_eval "$1" "$RR_TMP/spread.json"; }
read -r sent prefixes aimed sans sslips < <(f '" ".join(str(d["spread"][k]) for k in ("sent", "prefixes", "aimed", "answers", "slips"))')
read -r csent cans cslips < <(f '" ".join(str(d["client"][k]) for k in ("sent", "answers", "slips"))')
check "the spread sent at least 15000 queries ($sent)" test "$sent" -ge 15000
check "from at least 5000 /24s ($prefixes)" test "$prefixes" -ge 5000
check "of which at least 20 shared a bucket with the client's in the old table ($aimed)" \
	test "$aimed" -ge 20
check "the client got at least 90 % answered ($cans of $csent, $cslips slips)" \
	test $((cans * 100)) -ge $((csent * 90))
check "the spread got at least 90 % answered ($sans of $sent, $sslips slips)" \
	test $((sans * 100)) -ge $((sent * 90))
rr_metrics_fresh "$M" || bad "the metrics file was not rewritten within 3 s"
limited=$(metric "$M" reqrouter_rate_limited_packets_total 'function="dns"')
slipped=$(metric "$M" reqrouter_rate_limit_slips_total 'function="dns"')
check_eq "no query counted as rate-limited: no source went over its rate" \
	0 "${limited:-none}"
check_eq "none slipped" 0 "${slipped:-none}"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
