#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Cell groups (docs/DESIGN.md, "Cell groups"): a function from a module,
# or with syscalls, is served by cells of its own, which serve nothing
# else. On a one-queue bed, the installed config's defaults but for the
# sections below, with the dns function (reply cache on) and two test
# modules: poison (tests/modules/poison.c), which rewrites any cached
# answer of UDP port 53 its cell can reach in the XDP program's maps, and
# faulty (tests/modules/faulty.c).
#
# - Each module gets a group: three worker cells (the shared one, poison's,
#   faulty's), status says so, and the start-up lines name each group's
#   filter: poison's syscalls (openat read close) in its own alone.
# - poison, asked to forge dns's cached A record, reaches nothing of dns's:
#   "poisoned 0", and dns keeps answering the truth, from the cache.
# - faulty's "open" (openat, which only poison's syscalls name) kills
#   faulty's cell, counted as its crash; poison's openat still works.
# - threads cannot change while groups exist: one line, nothing changed.
# - The same with own_cells = no for poison (the layout before cell
#   groups): poison shares dns's cells and forges the cached answer, which
#   XDP then serves to every client. What this test guards against is real.
# - More groups than a queue has room for (-t 8): with own_cells = auto a
#   module shares the built-in functions' cells, said in one line; with
#   own_cells = yes for both, the start is refused in one line.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
TB_PEER_XDP=0

command -v kdig >/dev/null || die "kdig (knot-dnsutils) is needed: make deps"
TMODS=$BUILD/tests/modules
for m in poison faulty; do
	[ -f "$TMODS/$m.so" ] || die "no $TMODS/$m.so (run make first)"
done
rr_faults_are_signals
RR_TIER=auto
RR_CACHE=yes
rr_bed 1
M=$RR_TMP/metrics.prom
SOCK=$RR_TMP/ctl.sock
CTL=$BUILD/reqrouterctl
ZONE=$RR_TMP/example.zone
cp configs/example.zone "$ZONE"
mkdir -p "$RR_TMP/mods"
cp "$TMODS/poison.so" "$TMODS/faulty.so" "$RR_TMP/mods/"
# conf OWN_CELLS: the config, poison's own_cells as given.
conf() {
	cat >"$RR_TMP/rr.conf" <<EOF
[function dns]
zone = example.com $ZONE
rate_limit = 0

[function poison]
syscalls = openat read close
own_cells = $1
EOF
}
answer() {
	tb_cli kdig @"$TB_IP4_SRV" -p 53 +notcp +noedns +short +retry=0 \
		+timeout=1 www.example.com A | sort | tr '\n' ' '
}
TRUTH="192.0.2.80 192.0.2.81 "
# ask_dns N: N answers, each on a line.
ask_dns() {
	local i
	for ((i = 0; i < $1; i++)); do answer; echo; done
}
# pass_on_client: the client's XDP pass program, for XDP_TX answers.
pass_on_client() {
	tb_cli_bg "$BUILD/reflector" --pass -i "$TB_IF_CLI"
	PASS=$TB_PID
	RR_BG_PIDS+=("$PASS")
	sleep 0.3
}

# start NAME OWN_CELLS: reqrouter -q 1 -t 1 with poison's own_cells so.
start() {
	conf "$2"
	rr_start "$1" -i "$TB_IF_SRV" -q 1 -t 1 -c "$RR_TMP/rr.conf" \
		--functions-dir "$RR_TMP/mods" --control "$SOCK" \
		--metrics-file "$M" ||
		die "reqrouter with poison's own_cells = $2 did not start"
}

say "== own_cells = auto: poison and faulty, modules, in cells of their own"
start groups auto
check_eq "three worker cells: the shared one, poison's, faulty's" 3 \
	"$(pgrep -c -P "$RR_PID" '^rr-cell')"
check_eq "status: 3 cell groups, 1 thread each" "3 1" \
	"$("$CTL" -s "$SOCK" --json status | json_get - cell_groups threads)"
check "status names each function's cell group: dns the shared one, poison its own" \
	bash -c "'$CTL' -s '$SOCK' status | grep -Eq '^dns +53 +[a-z]+ +0 ' &&
		'$CTL' -s '$SOCK' status | grep -Eq '^poison +9017 +[a-z]+ +[12] '"
check "the shared cells' filter adds no function's syscalls" \
	grep -q 'cells run under a system call filter ([0-9]* instructions)$' "$RR_ERR"
check "poison's cells have a filter of their own, with its syscalls" \
	grep -q "the cells of 'poison' (cell group [12]) run under a filter of their own ([0-9]* instructions); its syscalls add openat read close" "$RR_ERR"

pass_on_client
check_eq "dns answers www.example.com A" "$TRUTH" "$(answer)"
ask_dns 5 >/dev/null
hits=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- 3)
check "... from the reply cache ($hits hits)" [ "$hits" -ge 3 ]
r=$(cli_ask 2 9017 "poison 53")
say "    poison: $r"
check "poison reaches no cached answer of dns ($r)" \
	grep -qE '^poisoned 0 of [0-9]+$' <<<"$r"
bad=$(ask_dns 10 | grep -cv "^$TRUTH\$")
check_eq "dns, asked 10 times more: the truth each time" 0 "$bad"
after=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- $((hits + 8)))
check "... still from the cache ($((after - hits)) more hits)" [ $((after - hits)) -ge 8 ]

check_eq "faulty echoes a harmless request" hello "$(cli_ask 1 7700 hello)"
check_eq "faulty's open (openat, poison's syscall) gets no reply" "<none>" \
	"$(cli_ask 0.5 7700 open)"
wait_for 5 grep -q "function 'faulty' crashed (Bad system call)" "$RR_ERR"
check "the log says faulty crashed (Bad system call)" \
	grep -q "function 'faulty' crashed (Bad system call)" "$RR_ERR"
check "poison's openat still works in its own cells" \
	grep -qE '^poisoned 0 of' <<<"$(cli_ask 2 9017 "poison 53")"
out=$("$CTL" -s "$SOCK" threads 2 2>&1)
check "threads 2 is refused while groups exist, in one line ($out)" \
	[ "$(wc -l <<<"$out")" -eq 1 ]
check "... saying why" grep -q "cells of their own" <<<"$out"
check_eq "... and the cells stay three" 3 "$(pgrep -c -P "$RR_PID" '^rr-cell')"
kill "$PASS"
wait "$PASS" 2>/dev/null
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "== own_cells = no for poison: it shares dns's cells (the old layout)"
start shared no
check_eq "two worker cells: the shared one (dns, poison), faulty's" 2 \
	"$(pgrep -c -P "$RR_PID" '^rr-cell')"
pass_on_client
check_eq "dns answers www.example.com A" "$TRUTH" "$(answer)"
ask_dns 3 >/dev/null
wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- 2 >/dev/null
r=$(cli_ask 2 9017 "poison 53")
say "    poison: $r"
check "poison forges dns's cached answer ($r)" \
	grep -qE '^poisoned [1-9][0-9]* of' <<<"$r"
check "... and XDP serves the forgery from the cache" \
	grep -q "203.0.113.66" <(ask_dns 5)
kill "$PASS"
wait "$PASS" 2>/dev/null
rr_kill_wait TERM 10

say "== more groups than a queue has room for"
conf auto
rr_start many -i "$TB_IF_SRV" -q 1 -t 8 -c "$RR_TMP/rr.conf" \
	--functions-dir "$RR_TMP/mods" ||
	die "reqrouter -t 8 with two modules did not start"
check "-t 8, auto: one module shares the built-in functions' cells, said" \
	grep -q "shares the built-in functions' cells: no room for cells of its own (own_cells = auto), 2 cell groups of 8 threads fill a queue's 16" "$RR_ERR"
check_eq "... two groups of eight cells" 16 "$(pgrep -c -P "$RR_PID" '^rr-cell')"
rr_kill_wait TERM 10
printf '\n[function faulty]\nown_cells = yes\n' >>"$RR_TMP/rr.conf"
sed -i 's/^own_cells = auto$/own_cells = yes/' "$RR_TMP/rr.conf"
rr_run many -i "$TB_IF_SRV" -q 1 -t 8 -c "$RR_TMP/rr.conf" \
	--functions-dir "$RR_TMP/mods"
check "-t 8, own_cells = yes for both: refused (exit $RR_RC)" [ "$RR_RC" -ne 0 ]
check "... in one line that says why" \
	grep -q "3 cell groups .* need 24 workers per queue, more than 16" "$RR_ERR"
sed 's/^/    /' "$RR_ERR" | tail -n 3

finish
