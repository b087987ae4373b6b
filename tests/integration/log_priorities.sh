#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Logs with priorities, as the journal reads them. Under systemd, stderr
# is the journal and JOURNAL_STREAM names it (device:inode): reqrouter then
# starts each line with its syslog priority, "<N>", which journald stores
# (journalctl -p warning). Here stderr is a file and JOURNAL_STREAM is set
# to that file, as systemd would: a start is a notice, a crash and a
# quarantine are warnings, lifting it, a reload's lines and stopping are
# notices, a failed start ends with an error saying why, byte for byte. Without JOURNAL_STREAM (a terminal)
# lines keep the "reqrouter: " prefix and no priority.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TMODS=$BUILD/tests/modules
[ -f "$TMODS/faulty.so" ] || die "no $TMODS/faulty.so (run make first)"
rr_faults_are_signals
rr_bed 1
SOCK=$RR_TMP/ctl.sock
mkdir -p "$RR_TMP/mods"
cp "$TMODS/faulty.so" "$RR_TMP/mods/"
printf '[function faulty]\nquarantine_faults = 1\n' >"$RR_TMP/faulty.conf"

# journal NAME: stderr of the next rr_start/rr_run NAME is "the journal".
journal() {
	: >"$RR_TMP/$1.err"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$RR_TMP/$1.err")
	export JOURNAL_STREAM
}
# prio N TEXT: a line of priority N contains TEXT.
# shellcheck disable=SC2317 # called through check
prio() { grep -q "^<$1>.*$2" "$RR_ERR"; }

journal served
rr_start served -i "$TB_IF_SRV" -q 1 -c "$RR_TMP/faulty.conf" \
	--functions-dir "$RR_TMP/mods" --control "$SOCK" ||
	die "reqrouter did not start"
check "every line has a priority, none the program name" \
	bash -c "! grep -qv '^<[3-7]>' '$RR_ERR'"
check "ready: a notice" prio 5 "ready on $TB_IF_SRV"
check "set-up detail: info" prio 6 "AF_XDP sockets on"
check_eq "a crash: no reply" "<none>" "$(cli_ask 0.5 7700 crash)"
wait_for 5 grep -q "quarantined" "$RR_ERR"
check "the crash: a warning" prio 4 "function 'faulty' crashed"
check "the quarantine: a warning" prio 4 "function 'faulty' quarantined"
check "unquarantine" "$BUILD/reqrouterctl" --control "$SOCK" unquarantine faulty
check "lifting it: a notice" prio 5 "function 'faulty' serves again"
printf '[function faulty]\nquarantine_faults = 2\n' >"$RR_TMP/faulty.conf"
"$BUILD/reqrouterctl" --control "$SOCK" reload >/dev/null
check_eq "a reload's applied line: a notice" \
	"<5>reload: [function faulty] quarantine_faults: applied" \
	"$(grep -F 'quarantine_faults: applied' "$RR_ERR")"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "stopping: a notice" prio 5 "signal 15: stopping"
say "    what journalctl -p warning would show:"
grep -E '^<[0-4]>' "$RR_ERR" | sed 's/^/      /'

# A start that fails: the reason, then an error that repeats it, byte
# for byte; a bad config file or a user that is not there: that error
# alone. Exactly one "did not start" line each.
journal nodev
rr_run nodev -i rr-no-such-if -q 1
check_eq "no such interface: exit 1" 1 "$RR_RC"
check_eq "no such interface: the reason, a warning" \
	"<4>no network interface named 'rr-no-such-if'" \
	"$(grep -m 1 'rr-no-such-if' "$RR_ERR")"
check_eq "... and the last line, an error: did not start, and why" \
	"<3>did not start: no network interface named 'rr-no-such-if'" \
	"$(tail -n 1 "$RR_ERR")"
check_eq "... one did not start line" 1 "$(grep -c 'did not start' "$RR_ERR")"
journal badkey
printf '[reqrouter]\nno_such_key = 1\n' >"$RR_TMP/bad.conf"
rr_run badkey -i "$TB_IF_SRV" -c "$RR_TMP/bad.conf"
check_eq "a bad config: exit 2" 2 "$RR_RC"
check_eq "a bad config: one line, an error: did not start, and why" \
	"<3>did not start: $RR_TMP/bad.conf:2: unknown key 'no_such_key' in [reqrouter]" \
	"$(cat "$RR_ERR")"
journal nouser
printf '[reqrouter]\nuser = rr-no-such-user\n' >"$RR_TMP/user.conf"
rr_run nouser -i "$TB_IF_SRV" -c "$RR_TMP/user.conf"
check_eq "a user that is not there: exit 2" 2 "$RR_RC"
check_eq "a user that is not there: one line, an error, FILE:LINE" \
	"<3>did not start: $RR_TMP/user.conf:2: user: no user named 'rr-no-such-user'" \
	"$(cat "$RR_ERR")"

# A terminal: no priorities.
unset JOURNAL_STREAM
rr_run plain -i rr-no-such-if -q 1
check "without the journal: reqrouter: prefixes, no priority" \
	bash -c "grep -q '^reqrouter: ' '$RR_ERR' && ! grep -q '^<[0-9]>' '$RR_ERR'"
check_eq "... and no repeated reason" 0 "$(grep -c 'did not start' "$RR_ERR")"
finish
