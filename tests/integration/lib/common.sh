# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The integration-test layer: prerequisite checks (skip only when a
# capability is truly missing), starting and stopping reqrouter in the test
# bed's server namespace, and what several tests ask of a running one. The
# pass/fail bookkeeping (ok, bad, check, finish...) is tools/lib/checks.sh,
# the Prometheus reader (metric, wait_metric) tools/lib/prom.sh, the bed
# tools/testbed.sh.
#
# Source it from the repository root after setting nothing; it sources
# those three itself. Every process it starts is remembered by PID and
# only those are stopped on exit.

BUILD=${BUILD:-build}
RR=$BUILD/reqrouter
RR_LIB=tests/integration/lib
# The tests' python is the system's, which tools/install-deps.sh's
# python3-* packages go into. A test starts it a hundred times and more
# (each probe, client and responder), and a pyenv or virtualenv shim
# ahead of it in PATH costs about 0.1 s of CPU a start (tools/lib/json.sh
# takes the system's for the same reason): its directory goes first.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	PATH=/usr/bin:$PATH
	export PATH
fi
source tools/lib/checks.sh
source tools/lib/prom.sh
source tools/lib/json.sh
source tools/lib/procs.sh
source tools/testbed.sh

# The invoker and hardening tests drive the AF_XDP path, so they pin the
# user tier with no reply cache; the in-kernel tests (tier_*.sh) set
# RR_TIER=auto or xdp, and RR_CACHE=yes.
RR_TIER=${RR_TIER:-user}
RR_CACHE=${RR_CACHE:-no}
RR_PID=
RR_BG_PIDS=()
RR_TMP=

# rr_prereqs: root, network namespaces, veth and the binary. Anything missing
# that CI always has (root, netns) is a skip; a missing binary is a failure.
rr_prereqs() {
	tb_prereqs
	[ -x "$RR" ] || die "no binary at $RR (run make first)"
}

rr_cleanup() {
	local p
	[ -n "$RR_PID" ] && procs_term "$RR_PID" 3
	for p in "${RR_BG_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	tb_teardown
	[ -n "$RR_TMP" ] && rm -rf "$RR_TMP"
	# What a reqrouter killed on purpose left in /run/reqrouter under the
	# bed's interface name, which is this run's alone.
	[ -n "${TB_IF_SRV:-}" ] &&
		rm -f "/run/reqrouter/$TB_IF_SRV".{sock,xdp,lock}
	return 0
}

# rr_bed QUEUES: prerequisites, a temp dir in $RR_TMP, the test bed, and
# one exit trap that stops what we started and removes the bed.
rr_bed() {
	rr_prereqs
	RR_TMP=$(mktemp -d /tmp/rr-it.XXXXXX)
	chmod 755 "$RR_TMP"
	tb_setup "${1:-4}" || die "tb_setup failed"
	[[ $TB_NS_SRV =~ ^rr-[0-9a-f]{8}-srv$ ]] ||
		die "test bed names without a unique tag: $TB_NS_SRV"
	trap 'rr_cleanup' EXIT
	trap 'rr_cleanup; exit 130' INT TERM
	say "test bed: $TB_NS_SRV/$TB_IF_SRV <-> $TB_NS_CLI/$TB_IF_CLI"
}

# rr_start NAME ARGS...: start reqrouter in the server namespace with its
# stdout in $RR_TMP/NAME.out and stderr in $RR_TMP/NAME.err; wait (at most
# 15 s) until it logs "ready". PID in RR_PID. Returns 1 if it never got
# ready (it is then stopped).
rr_start() {
	local name=$1 i
	shift
	RR_OUT=$RR_TMP/$name.out
	RR_ERR=$RR_TMP/$name.err
	local tier=(--tier "$RR_TIER")
	[ "$RR_CACHE" = no ] && tier+=(--no-cache)
	tb_srv_bg "$RR" "${tier[@]}" "$@" >"$RR_OUT" 2>"$RR_ERR"
	RR_PID=$TB_PID
	for ((i = 0; i < 750; i++)); do
		grep -q 'ready on' "$RR_ERR" 2>/dev/null && return 0
		kill -0 "$RR_PID" 2>/dev/null || break
		sleep 0.02
	done
	say "reqrouter did not get ready; its stderr:"
	sed 's/^/    /' "$RR_ERR"
	rr_kill_wait KILL 5
	return 1
}

# rr_run NAME ARGS...: run reqrouter in the server namespace in the
# foreground (at most 20 s); stdout in $RR_TMP/NAME.out, stderr in
# $RR_TMP/NAME.err, exit status in RR_RC. Called directly, not through
# tb_srv, so the shell's own "Segmentation fault" notice, should there be
# one, does not land in the captured stderr.
rr_run() {
	local name=$1
	shift
	RR_OUT=$RR_TMP/$name.out
	RR_ERR=$RR_TMP/$name.err
	ip netns exec "$TB_NS_SRV" timeout -k 2 20 "$RR" "$@" \
		>"$RR_OUT" 2>"$RR_ERR"
	RR_RC=$?
	rr_check_sanitizers
	if [ "$RR_RC" -gt 128 ] && [ "$RR_RC" -lt 160 ]; then
		say "reqrouter $* was killed by signal $((RR_RC - 128))" \
			"($(kill -l $((RR_RC - 128))))"
	fi
	return 0
}

# rr_check_sanitizers: a sanitizer build (BUILD=build/san) reports to
# stderr; any report is a failure of its own, whatever the exit status.
rr_check_sanitizers() {
	[ -n "${RR_ERR:-}" ] && [ -f "$RR_ERR" ] || return 0
	if grep -qE 'runtime error:|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer' \
		"$RR_ERR"; then
		bad "sanitizer report in reqrouter's stderr ($(basename "$RR_ERR")):"
		grep -E -A3 'runtime error:|Sanitizer' "$RR_ERR" | head -n 20 |
			sed 's/^/    /'
	fi
	return 0
}

# rr_faults_are_signals: for tests whose cells crash on purpose (the
# test module faulty.so). A sanitizer would turn a crash into a report
# and an exit: the cells must die of the signal, as they do in production.
rr_faults_are_signals() {
	export ASAN_OPTIONS=handle_segv=0:handle_abort=0:handle_sigfpe=0:handle_sigbus=0:detect_leaks=0
	export UBSAN_OPTIONS=handle_segv=0:handle_sigfpe=0
}

# rr_kill_wait SIGNAL SECONDS: signal reqrouter and wait at most SECONDS.
# Sets RR_RC (exit status, or "running" if it did not exit) and RR_ELAPSED_MS.
rr_kill_wait() {
	local sig=$1 limit=$2 start i
	RR_RC=running
	start=$(date +%s%N)
	kill -"$sig" "$RR_PID" 2>/dev/null
	rr_wait_exit "$limit"
	# shellcheck disable=SC2034 # for the scripts that source this
	RR_ELAPSED_MS=$((($(date +%s%N) - start) / 1000000))
}

# rr_wait_exit SECONDS: wait for reqrouter to exit on its own; RR_RC as above.
rr_wait_exit() {
	local limit=$1 i
	RR_RC=running
	for ((i = 0; i < limit * 20; i++)); do
		if ! kill -0 "$RR_PID" 2>/dev/null; then
			wait "$RR_PID" 2>/dev/null
			RR_RC=$?
			RR_PID=
			rr_check_sanitizers
			return 0
		fi
		sleep 0.05
	done
	rr_dump_threads
	return 1
}

# rr_dump_threads: where each of reqrouter's threads waits (its state, the
# kernel function and, as root, the kernel stack), for a process that did
# not exit in time: what the log of such a run needs to tell why.
rr_dump_threads() {
	local t n=0
	{ [ -n "${RR_PID:-}" ] && [ -d "/proc/$RR_PID" ]; } || return 0
	say "    reqrouter $RR_PID did not exit; its threads:"
	for t in /proc/"$RR_PID"/task/*; do
		((n++ < 32)) || break
		say "    $(cat "$t/comm" 2>/dev/null) state $(awk '{ print $3 }' \
			"$t/stat" 2>/dev/null) in $(cat "$t/wchan" 2>/dev/null)"
		head -n 6 "$t/stack" 2>/dev/null | sed 's/^/        /'
	done
}

# rr_metrics_fresh FILE: wait (at most 3 s) until reqrouter has rewritten
# its metrics FILE at least 0.2 s after the call, so that it counts what
# was sent before the call; false if it was not rewritten.
rr_metrics_fresh() {
	local since i m
	since=$(($(date +%s%N) / 1000000 + 200))
	for ((i = 0; i < 60; i++)); do
		m=$(stat -c %.3Y "$1" 2>/dev/null) &&
			[ "${m/./}" -ge "$since" ] && return 0
		sleep 0.05
	done
	return 1
}

# rr_scrape cli|srv URL FILE: GET URL (reqrouter's /metrics on
# --metrics-listen) from the client or the server namespace into FILE: the
# counters as they are now, with no wait for the metrics file's next
# rewrite (rr_metrics_fresh).
rr_scrape() {
	"tb_$1" python3 -c '
import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
		"$2" >"$3"
}

# rr_metrics_scrape ADDR:PORT FILE: what rr_metrics_fresh waits for, at
# once: reqrouter's metrics 0.2 s after the call, so that what was sent
# before it is counted, from GET /metrics on its --metrics-listen
# ADDR:PORT in the server's namespace (its loopback: off the bed's link),
# into FILE.
rr_metrics_scrape() {
	sleep 0.2
	rr_scrape srv "http://$1/metrics" "$2"
}

# xdp_on_srv: is any XDP program attached to the server's interface?
xdp_on_srv() { tb_xdp_on "$TB_NS_SRV" "$TB_IF_SRV"; }

# rr_peer_xdp_on: peer_pass on the client's end of a bare bed, and
# reqrouter (stderr in $RR_ERR) told: replies may leave from XDP now.
rr_peer_xdp_on() {
	tb_cli ip link set dev "$TB_IF_CLI" xdpdrv object \
		"$BUILD/bpf/peer_pass.bpf.o" program peer_pass ||
		die "cannot attach peer_pass to the client's end"
	wait_for 3 grep -q 'veth peer runs an XDP program now' "$RR_ERR" ||
		bad "reqrouter did not say the peer runs an XDP program"
	sleep 0.3
}

# udp_csum_errors: the client namespace's Udp InCsumErrors (and Udp6).
udp_csum_errors() {
	tb_cli cat /proc/net/snmp | awk '
		/^Udp: / && !h { for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next }
		/^Udp: / && h { v4 = $col["InCsumErrors"] }
		END { print v4 + 0 }'
}
udp6_csum_errors() {
	tb_cli cat /proc/net/snmp6 | awk '$1 == "Udp6InCsumErrors" { print $2 }'
}

# cli_ask TIMEOUT PORT TEXT: the reply to TEXT from an ordinary socket in
# the client namespace to the server's IPv4 address; "<empty>" for an empty
# reply, "<none>" for none within TIMEOUT seconds.
cli_ask() {
	tb_cli python3 tools/lib/ask.py --reply --timeout "$1" "$TB_IP4_SRV" \
		"$2" "$3"
}

# rr_umem_held FILE: UMEM frames held by workers or in rx/tx rings, from
# reqrouterctl --json stats saved in FILE (0 at rest).
rr_umem_held() {
	json_eval 'sum(q["worker"] + q["rx"] + q["tx"] for q in d["umem_frames"])' "$1"
}

# rr_csum_probe: the client's kernel verifies the UDP checksums of what
# arrives on its veth (three bad ones sent from the server namespace raise
# its InCsumErrors by 3), so an InCsumErrors that stays put means something.
rr_csum_probe() {
	local before
	before=$(udp_csum_errors)
	tb_srv python3 $RR_LIB/rawframes.py bad-csum --ifname "$TB_IF_SRV" \
		--src-mac "$TB_MAC_SRV" --dst-mac "$TB_MAC_CLI" \
		--src-ip "$TB_IP4_SRV" --dst-ip "$TB_IP4_CLI" --dport 5999 --count 3
	check_eq "client kernel counts bad UDP checksums (InCsumErrors grows by 3)" \
		$((before + 3)) "$(udp_csum_errors)"
}

# rr_load_bg JSON ARGS...: rrload from the client namespace to the
# server's IPv4 address in the background (1 s timeout, quiet, its summary
# in JSON); its PID in LOAD_PID, stopped at exit if still running.
rr_load_bg() {
	local json=$1
	shift
	tb_cli_bg "$BUILD/rrload" -s "$TB_IP4_SRV" --timeout 1000 -q \
		--json "$json" "$@"
	LOAD_PID=$TB_PID
	RR_BG_PIDS+=("$LOAD_PID")
}

# rr_load_checks FILE MIN [PREFIX]: a finished rrload run (its --json FILE)
# sent at least MIN requests, all answered, none wrong or timed out.
rr_load_checks() {
	local sent ans wrong tmo
	read -r sent ans wrong tmo < <(json_get "$1" sent answered wrong timeouts)
	say "    sent $sent answered $ans wrong $wrong timeouts $tmo"
	check "${3:-}at least $2 requests sent" [ "${sent:-0}" -ge "$2" ]
	check_eq "${3:-}every request answered" "$sent" "$ans"
	check_eq "${3:-}no wrong reply, no timeout" "0 0" "$wrong $tmo"
}

# old_api_module PATH: builds at PATH a module of function API 1, which
# every reqrouter since API 2 refuses to load.
old_api_module() {
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'const void *rr_module_functions(size_t *n, uint32_t *api)' \
		'{ *n = 0; *api = 1; return NULL; }' >"${1%.so}.c" &&
		gcc -shared -fPIC -o "$1" "${1%.so}.c"
}

# rr_exits_on_its_own WHAT LINES: after something took reqrouter's ground
# away, it exits within 5 s with a non-zero status; the last LINES of its
# stderr are shown.
rr_exits_on_its_own() {
	rr_wait_exit 5
	check "$1: reqrouter exits within 5 s with a non-zero status ($RR_RC)" \
		test "$RR_RC" != running -a "$RR_RC" != 0
	[ "$RR_RC" = running ] && rr_kill_wait KILL 2
	sed 's/^/    stderr: /' "$RR_ERR" | tail -n "$2"
}

# rr_fuzz_build TARGET DEPS: build a libFuzzer make target (with the
# sanitizer build's settings when BUILD is build/san); a failure says what
# the target needs (DEPS) and exits 1.
rr_fuzz_build() {
	local san=${SAN:-0} out
	[ "$BUILD" = build/san ] && san=1
	out=$(make -s --no-print-directory SAN="$san" "$1" 2>&1) && return 0
	echo "$out"
	echo "FAIL: cannot build the libFuzzer target (clang with $2: make deps)"
	exit 1
}

# serves N [UDPCLIENT-ARGS...]: N requests over 16 sockets to reverse and
# echo, over IPv4 and over IPv6 side by side; true if every one was
# answered correctly.
serves() {
	local n=$1 rc=0 addr i pid=()
	shift
	for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
		tb_cli python3 $RR_LIB/udpclient.py "$addr" 1232:reverse,7:echo \
			-n "$n" -s 16 -q "$@" >"$RR_TMP/serves.${#pid[@]}" 2>&1 &
		pid+=($!)
	done
	for i in 0 1; do
		wait "${pid[i]}" || rc=1
		tail -n 1 "$RR_TMP/serves.$i" | sed 's/^/    /'
	done
	return $rc
}

# sg_responders LOG SECONDS ADDR=HOW...: gather targets (lib/sg_responder.py)
# in the client namespace for at most SECONDS, their lines in LOG; dies
# unless they are ready within 5 s. Their PID in RESP_PID, also in
# RR_BG_PIDS (stopped at exit).
sg_responders() {
	local log=$1 secs=$2
	shift 2
	tb_cli_bg python3 "$RR_LIB/sg_responder.py" --seconds "$secs" "$@" \
		>"$log" 2>&1
	RESP_PID=$TB_PID
	RR_BG_PIDS+=("$RESP_PID")
	wait_for 5 grep -q '^ready$' "$log" || {
		sed 's/^/    /' "$log"
		die "the responders did not start"
	}
}
