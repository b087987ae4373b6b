#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A reload applies every setting it can while serving and names the rest:
# on the bed's defaults, with cells and with threads, reqrouterctl reload
# after each change to the config file, asserted from a client's side.
# echo's allow-list without the client's address: its requests are no
# longer answered, and with it again they are. A [function kv] section
# (kv is opt-in): kv is served. kv's max_amplification down to 1: its
# replies, longer than the requests, are refused and counted as
# amplification drops. enabled = no on echo: port 7 goes to the kernel,
# which says no socket is there; enabled = yes brings it back. batch and
# threads in [reqrouter]: the reload exits 1 naming each key and
# "needs a restart", and the change made with them is still applied;
# queues, which the command line's -q overrides as at start-up, is no
# change. SIGHUP logs the same lines.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"

rr_bed 1
SOCK=/run/reqrouter/$TB_IF_SRV.sock
CONF=$RR_TMP/reqrouter.conf
TABLE=$RR_TMP/kv.txt
printf 'key7 value of key 7\n' >"$TABLE"

# ask PORT TEXT: the reply from a client socket, "<none>" or "<refused>".
ask() { cli_ask 0.5 "$1" "$2"; }
# reload: reqrouterctl reload; its output (both streams) in $RR_TMP/out,
# its exit status in RC.
reload() {
	"$CTL" --control "$SOCK" reload >"$RR_TMP/out" 2>&1
	RC=$?
	sed 's/^/    | /' "$RR_TMP/out"
}
# said TEXT, not_said TEXT: whether the last reload's output has TEXT.
# shellcheck disable=SC2317 # called through check
said() { grep -qF -- "$1" "$RR_TMP/out"; }
# shellcheck disable=SC2317 # called through check
not_said() { ! said "$1"; }
# conf [TEXT]: the config file is TEXT (with \n for a newline).
conf() { printf '%b' "${1:-}" >"$CONF"; }
# amp_drops: kv's replies refused for amplification so far.
amp_drops() {
	"$CTL" --control "$SOCK" --json stats >"$RR_TMP/stats.json"
	json_eval 'sum(f["user"]["dropped"]["amplification"] for f in d["functions"] if f["name"] == "kv")' \
		"$RR_TMP/stats.json"
}

KV="[function kv]\ntable = $TABLE\n"

suite() {
	local iso=$1 before

	say "--- isolation $iso"
	conf
	rr_start "$iso" -i "$TB_IF_SRV" -q 1 -c "$CONF" --isolation "$iso" ||
		die "$iso: reqrouter did not start"
	check_eq "$iso: echo answers" "hello" "$(ask 7 hello)"

	reload
	check_eq "$iso: a reload of the same file exits 0" 0 "$RC"
	check "$iso: ... and says what it did" said "0 functions re-initialised"

	conf "[function echo]\nallow = 192.0.2.1/32\n"
	reload
	check_eq "$iso: allow without the client: reload exits 0" 0 "$RC"
	check "$iso: ... and says allow was applied" \
		said "[function echo] allow: applied"
	check_eq "$iso: the client's request to echo is not answered" \
		"<none>" "$(ask 7 hello)"
	check_eq "$iso: reverse, without an allow-list, still answers" \
		"olleh" "$(ask 1232 hello)"

	conf "[function echo]\nallow = 192.0.2.1/32, $TB_IP4_CLI/32\n"
	reload
	check_eq "$iso: allow with the client's address: reload exits 0" 0 "$RC"
	check_eq "$iso: echo answers the client again" "hello" "$(ask 7 hello)"

	conf "$KV"
	check_eq "$iso: before the reload kv is not served" \
		"<refused>" "$(ask 7379 key7)"
	reload
	check_eq "$iso: a new [function kv] section: reload exits 0" 0 "$RC"
	check "$iso: ... and says kv is served" \
		said "[function kv] enabled: applied, served on port 7379"
	check_eq "$iso: kv answers from its table" "value of key 7" \
		"$(ask 7379 key7)"
	check_eq "$iso: echo has no allow-list any more, and answers" \
		"hello" "$(ask 7 hello)"

	before=$(amp_drops)
	conf "${KV}max_amplification = 1\n"
	reload
	check_eq "$iso: max_amplification = 1: reload exits 0" 0 "$RC"
	check "$iso: ... and says it was applied" \
		said "[function kv] max_amplification: applied"
	check_eq "$iso: kv's reply, longer than the request, is refused" \
		"<none>" "$(ask 7379 key7)"
	check_eq "$iso: stats count it as an amplification drop" \
		$((before + 1)) "$(amp_drops)"

	conf "${KV}[function echo]\nenabled = no\n"
	reload
	check_eq "$iso: enabled = no on echo: reload exits 0" 0 "$RC"
	check "$iso: ... and says port 7 goes to the kernel" \
		said "port 7 goes to the kernel"
	check_eq "$iso: port 7 is the kernel's: no socket there" \
		"<refused>" "$(ask 7 hello)"
	check_eq "$iso: kv answers again (max_amplification is back)" \
		"value of key 7" "$(ask 7379 key7)"
	"$CTL" --control "$SOCK" status >"$RR_TMP/status.txt"
	check "$iso: status shows echo removed" \
		grep -Eq '^echo .*\(removed\)' "$RR_TMP/status.txt"

	conf "[reqrouter]\nbatch = 32\nthreads = 2\nqueues = 2\n${KV}"
	reload
	check_eq "$iso: batch and threads changed: reload exits 1" 1 "$RC"
	check "$iso: ... naming the key and that it needs a restart" \
		said "[reqrouter] batch: needs a restart"
	check "$iso: ... threads too, with the command that changes it" \
		said "[reqrouter] threads: needs a restart (reqrouterctl threads N"
	check "$iso: queues, which -q overrides, is no change" \
		not_said "queues"
	check "$iso: ... and echo's enabled = yes is still applied" \
		said "[function echo] enabled: applied, served again on port 7"
	check_eq "$iso: echo answers again" "hello" "$(ask 7 hello)"
	check "$iso: the log has the same line" \
		grep -qF "reload: [reqrouter] batch: needs a restart" "$RR_ERR"

	conf "[reqrouter]\nbatch = 32\n${KV}[function kv]\nallow = 192.0.2.1\n"
	n=$(reloads)
	kill -HUP "$RR_PID"
	check "$iso: SIGHUP: the reload is over within 5 s" \
		wait_for 5 reloads_above "$n"
	check "$iso: SIGHUP logs what it applied" \
		grep -qF "reload: [function kv] allow: applied" "$RR_ERR"
	check_eq "$iso: ... and what needs a restart, once more" 2 \
		"$(grep -cF "reload: [reqrouter] batch: needs a restart" "$RR_ERR")"
	check_eq "$iso: ... and kv no longer answers the client" \
		"<none>" "$(ask 7379 key7)"

	conf "$KV"
	reload
	check_eq "$iso: batch back as it runs: reload exits 0" 0 "$RC"
	check_eq "$iso: kv answers again" "value of key 7" "$(ask 7379 key7)"
	check "$iso: reqrouter is still running" kill -0 "$RR_PID"

	rr_kill_wait TERM 10
	check_eq "$iso: SIGTERM: exit 0" 0 "$RR_RC"
}

# reloads: the reloads reqrouter has logged (one summary line each);
# reloads_above N: more than N.
reloads() { grep -c 'reload: [0-9]* functions\? re-initialised' "$RR_ERR"; }
# shellcheck disable=SC2317 # called through wait_for
reloads_above() { [ "$(reloads)" -gt "$1" ]; }

suite cell
suite thread
finish
