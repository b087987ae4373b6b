# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the tests of functions over TCP (tcp_*.sh) share: tcpclient.py run
# from the client namespace, its JSON read back, and GET /metrics. Source
# it after common.sh.
#
#   tcp NAME SUBCOMMAND ADDR ARGS...  tcpclient.py SUBCOMMAND ADDR
#                                     ${TCP_PORT:-1232} ARGS... in the client
#                                     namespace; its JSON in $RR_TMP/NAME.json,
#                                     its summary line shown
#   tcp_get NAME EXPR                 EXPR over NAME's JSON (as d)
#   tcp_scrape URL                    GET URL (a /metrics) from the client
#                                     namespace into $RR_TMP/http.prom

TCP_CLIENT=$RR_LIB/tcpclient.py

tcp() {
	local name=$1 sub=$2 addr=$3
	shift 3
	tb_cli python3 "$TCP_CLIENT" "$sub" "$addr" "${TCP_PORT:-1232}" "$@" \
		>"$RR_TMP/$name.json" 2>"$RR_TMP/$name.err" ||
		sed 's/^/    client: /' "$RR_TMP/$name.err"
	say "    $(tcp_get "$name" 'd["summary"]')"
}

tcp_get() { json_eval "$2" "$RR_TMP/$1.json" 2>/dev/null; }

tcp_scrape() { rr_scrape cli "$1" "$RR_TMP/http.prom"; }
