#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Prometheus over HTTP (--metrics-listen): a real Prometheus server in the
# client namespace scrapes reqrouter across the veth every second and, after
# requests, its query API shows reqrouter_rx_packets_total moved and up = 1,
# then up = 0 once reqrouter stops. /metrics carries the same series as the
# metrics file, /healthz says "ready" (200), other paths 404 and other
# methods 405. A second instance on the same address is refused before it
# touches the interface, a malformed address is a usage error, and a clean
# exit removes the metrics file (the totals go to stdout). The example alert
# rules pass promtool's check and unit tests, and the server loads them.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

for cmd in prometheus promtool; do
	command -v $cmd >/dev/null || die "$cmd not found (tools/install-deps.sh installs prometheus)"
done
RULES=configs/reqrouter.rules.yml

say "== the example alert rules"
check "promtool check rules $RULES" promtool check rules "$RULES"
check "promtool test rules: each alert fires when it should, and only then" \
	promtool test rules $RR_LIB/reqrouter.rules.test.yml

rr_bed 2
M=$RR_TMP/metrics.prom
LISTEN=$TB_IP4_SRV:9464
URL=http://$LISTEN
PROM=127.0.0.1:9090 # the client namespace's own loopback

# http METHOD URL: "STATUS" then the body, fetched from the client namespace.
http() {
	tb_cli python3 -c '
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[2], method=sys.argv[1])
try:
    r = urllib.request.urlopen(req, timeout=5)
    code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
except OSError as e:
    code, body = 0, str(e).encode()
print(code)
sys.stdout.write(body.decode())' "$1" "$2"
}
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
not() { ! "$@"; }
# series FILE: the sample lines without their values, sorted.
# The heavy hitters' series come and go with the sources (a top 10, read
# once a second): the file and a scrape a moment apart may list others.
series() {
	grep -v -e '^#' -e '^reqrouter_heavy_hitter_requests_per_second{' "$1" |
		sed 's/ [^ ]*$//' | sort
}
# promq EXPR: the value of a one-sample instant query ("" if none).
promq() {
	tb_cli python3 -c '
import json, sys, urllib.parse, urllib.request
q = urllib.parse.urlencode({"query": sys.argv[2]})
try:
    d = json.load(urllib.request.urlopen("http://%s/api/v1/query?%s" % (sys.argv[1], q), timeout=5))
    r = d["data"]["result"]
    print(r[0]["value"][1] if len(r) == 1 else "")
except OSError:
    print("")' "$PROM" "$1"
}
# prom_wait EXPR TEST SECONDS: until EXPR's value passes the python TEST on v.
prom_wait() {
	local i v
	for ((i = 0; i < $3 * 2; i++)); do
		v=$(promq "$1")
		if [ -n "$v" ] && python3 -c "import sys; v = float(sys.argv[1]); sys.exit(0 if ($2) else 1)" "$v"; then
			echo "$v"
			return 0
		fi
		sleep 0.5
	done
	echo "${v:-none}"
	return 1
}

say "== reqrouter --metrics-listen $LISTEN"
rr_start main -i "$TB_IF_SRV" -q 2 --metrics-listen "$LISTEN" \
	--metrics-file "$M" || die "reqrouter --metrics-listen did not start"
check "it announces the endpoint" grep -q "metrics over HTTP on $LISTEN" "$RR_ERR"
check_eq "/healthz while serving" "200 ready" "$(http GET "$URL/healthz" | xargs)"
check_eq "/nothing: 404" 404 "$(http GET "$URL/nothing" | head -n 1)"
check_eq "POST /metrics: 405" 405 "$(http POST "$URL/metrics" | head -n 1)"
check "requests answered" serves 100
tb_wait_file "$M" 5 || die "no metrics file at $M"
http GET "$URL/metrics" >"$RR_TMP/http.out"
check_eq "/metrics: 200" 200 "$(head -n 1 "$RR_TMP/http.out")"
tail -n +2 "$RR_TMP/http.out" >"$RR_TMP/http.prom"
check_eq "/metrics: rx counted, as in the file" 200 \
	"$(metric "$RR_TMP/http.prom" reqrouter_rx_packets_total)"
check "/metrics and the metrics file carry the same series" \
	diff <(series "$RR_TMP/http.prom") <(series "$M")
check "/metrics has the file's HELP and TYPE lines" \
	diff <(grep '^#' "$RR_TMP/http.prom") <(grep '^#' "$M")

say "== a Prometheus server scrapes it"
mkdir -p "$RR_TMP/prom"
cat >"$RR_TMP/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $PWD/$RULES
scrape_configs:
  - job_name: reqrouter
    static_configs:
      - targets: ['$LISTEN']
EOC
tb_cli_bg prometheus --config.file="$RR_TMP/prometheus.yml" \
	--storage.tsdb.path="$RR_TMP/prom" --web.listen-address="$PROM" \
	--log.level=warn >"$RR_TMP/prometheus.log" 2>&1
RR_BG_PIDS+=("$TB_PID")
PROM_PID=$TB_PID
up=$(prom_wait 'up{job="reqrouter"}' 'v == 1' 30)
check_eq "Prometheus: up = 1" 1 "$up"
before=$(prom_wait 'sum(reqrouter_rx_packets_total{tier="user"})' 'v >= 200' 10)
check_eq "Prometheus: the 200 requests so far" 200 "$before"
check "300 more requests answered" serves 150
after=$(prom_wait 'sum(reqrouter_rx_packets_total{tier="user"})' 'v >= 500' 10)
check_eq "Prometheus: reqrouter_rx_packets_total moved to 500" 500 "$after"
rules=$(tb_cli python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen("http://%s/api/v1/rules" % sys.argv[1], timeout=5))
r = [x for g in d["data"]["groups"] for x in g["rules"]]
print(len(r), all(x["health"] == "ok" for x in r))' "$PROM")
check_eq "Prometheus loaded the 6 alert rules, all healthy" "6 True" "$rules"

say "== a second instance on the same address"
# On another interface (lo, which nobody serves): on the same one the
# owner's lock would refuse it first.
rr_run second -i lo -q 1 --control none --metrics-listen "$LISTEN"
check_eq "exit 1" 1 "$RR_RC"
check "one line saying the address is in use" \
	grep -q "^reqrouter: --metrics-listen $LISTEN: Address already in use$" "$RR_ERR"
check "it did not touch the interface" not grep -q 'XDP program' "$RR_ERR"
check "the first still answers" serves 10
rr_run bad -i "$TB_IF_SRV" --metrics-listen localhost:9464
check_eq "a host name instead of an address: exit 2" 2 "$RR_RC"
check "... with one line" grep -q "bad metrics listen address 'localhost:9464'" "$RR_ERR"

say "== stopping"
RR_ERR=$RR_TMP/main.err
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "the metrics file is removed on a clean exit" test ! -e "$M"
check "the totals are on stdout instead" \
	grep -q '^in user space: 520 requests, 520 replies, 0 dropped' "$RR_TMP/main.out"
check_eq "the endpoint is gone" 0 "$(http GET "$URL/healthz" | head -n 1)"
check_eq "Prometheus: up = 0 once it stops" 0 \
	"$(prom_wait 'up{job="reqrouter"}' 'v == 0' 10)"
kill -TERM "$PROM_PID" 2>/dev/null
wait "$PROM_PID" 2>/dev/null
check "Prometheus logged no error" not grep -q 'level=error' "$RR_TMP/prometheus.log"
finish
