#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The supervisor trusts nothing a cell can write. The test module
# "scribble" (tests/modules/scribble.c) writes garbage over every byte of
# reqrouter's shared state its cell can reach (its report, its queue's
# lock page) and tries to make the read-only struct rr_live writable,
# again and again, while rrload keeps reverse busy on both queues. What a
# user would notice must not happen: the main process crashing or hanging,
# another function's requests unanswered or answered wrongly, frames gone
# missing, the read-only page made writable. Each cell's shared memory is
# printed: only its own queue's and its own worker's, live read-only.
# A cell runs as the service's user; its function, let connect to the
# control socket, still may not change the instance.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=2
PASSES=${SCRIBBLE_PASSES:-40}
TMODS=$BUILD/tests/modules
[ -f "$TMODS/scribble.so" ] || die "no $TMODS/scribble.so (run make first)"
rr_faults_are_signals

rr_bed $QUEUES
M=$RR_TMP/metrics.prom
CONF=$RR_TMP/scribble.conf
SOCK=$RR_TMP/ctl.sock

# It reads /proc/self/maps to find what to write over: more system calls
# than a function gets by default.
cat >"$CONF" <<EOF
[reqrouter]
isolation = cell

[function scribble]
syscalls = openat read close mprotect socket connect write
EOF

# Only this module: the others replace bundled functions.
mkdir -p "$RR_TMP/mods"
cp "$TMODS/scribble.so" "$RR_TMP/mods/"
rr_start scribble -i "$TB_IF_SRV" -q $QUEUES -c "$CONF" \
	--functions-dir "$RR_TMP/mods" --control "$SOCK" --metrics-file "$M" ||
	die "reqrouter with the scribble module did not start"
# scribble, a module, has cells of its own beside the shared ones
# (docs/DESIGN.md, "Cell groups"): two per queue.
check_eq "two cells per queue" $((QUEUES * 2)) "$(pgrep -c -P "$RR_PID")"

# The main thread holds netlink sockets (the local routes, the veth
# peer), BPF objects and memfds: what the cells must not have.
nl=$(awk 'NR > 1 { print "socket:[" $NF "]" }' /proc/"$RR_PID"/net/netlink)
check "the main thread holds a netlink socket and BPF maps (what the cells must not)" \
	bash -c "for f in /proc/$RR_PID/fd/*; do readlink \$f; done |
		grep -qxF -f <(echo '$nl') &&
		ls -l /proc/$RR_PID/fd | grep -q 'anon_inode:bpf-map'"

# What each cell keeps of the shared memory: its queue's UMEM area (16
# MiB), its report, its queue's lock page and struct rr_live (read-only),
# besides its own sockets' rings.
for c in $(pgrep -P "$RR_PID"); do
	say "    cell $c ($(cat /proc/"$c"/comm)), shared anonymous and memfd mappings:"
	grep -E ' r.-s .*(/dev/zero|/memfd:)' /proc/"$c"/maps | sed 's/^/      /'
	check_eq "cell $c: four shared mappings (UMEM, report, lock page, live)" 4 \
		"$(grep -cE ' r.-s .*(/dev/zero|/memfd:)' /proc/"$c"/maps)"
	check "cell $c: struct rr_live is mapped read-only" \
		grep -qE ' r--s .*/memfd:reqrouter-live' /proc/"$c"/maps
	# Its descriptors: stdio and its own sockets, none of the main
	# thread's BPF objects, memfds or netlink.
	fds=$(for f in /proc/"$c"/fd/*; do readlink "$f"; done | sort | uniq -c)
	say "    cell $c, descriptors: $(tr -s ' \n' ' ' <<<"$fds")"
	check_eq "cell $c: no BPF map, program, link or BTF, no memfd" 0 \
		"$(grep -cE 'anon_inode:(bpf|\[bpf|btf)|/memfd:' <<<"$fds")"
	# Netlink sockets by inode (the last column of /proc/net/netlink).
	nl=$(awk 'NR > 1 { print "socket:[" $NF "]" }' /proc/"$c"/net/netlink)
	check_eq "cell $c: no netlink socket" 0 \
		"$(for f in /proc/"$c"/fd/*; do readlink "$f"; done |
			grep -cxF -f <(echo "$nl"))"
done
check_eq "scribble echoes a plain request" hello "$(cli_ask 1 9011 hello)"
r=$(cli_ask 1 9011 "ctl:$SOCK")
say "    a cell asks the control socket for threads 3: $r"
# As root, cells run as nobody and cannot even connect to the root-only
# socket; under --user they would be refused by their credentials.
check "... and is refused (cannot connect, or refused as the control group would be)" \
	grep -qE "only root and the user it runs as|connect: Permission denied" <<<"$r"
check_eq "... still two cells per queue" $((QUEUES * 2)) "$(pgrep -c -P "$RR_PID")"

say "rrload on reverse at 4000/s for 10 s; $PASSES scribble passes beside it"
rr_load_bg "$RR_TMP/load.json" -p 1232 -c 16 -r 4000 -d 10
sleep 1
# The passes from one client process, each from a socket of its own: a
# new source port each time, so they reach both queues' cells. A reply
# a line ("<none>" for none within 0.5 s).
tb_cli python3 - "$TB_IP4_SRV" 9011 "$PASSES" >"$RR_TMP/passes.out" <<'PY'
import sys, time
sys.path.insert(0, "tools/lib")
from ask import ask  # noqa: E402
addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for _ in range(n):
    r = ask(addr, port, "scribble", 0.5)
    print("<none>" if not isinstance(r, str) else r.replace("\n", " "),
          flush=True)
    time.sleep(0.15)
PY
check "the load ran through every pass" kill -0 "$LOAD_PID"
passes=0 opened=0
while IFS= read -r r; do
	case $r in
	scribbled*)
		passes=$((passes + 1))
		[ "$passes" = 1 ] && say "    first pass: $r"
		n=${r##*; }
		[ "${n%% *}" = 0 ] || opened=$((opened + 1))
		;;
	esac
done <"$RR_TMP/passes.out"
say "    $passes of $PASSES passes answered"
check "at least half the scribble passes ran and answered ($passes)" \
	[ "$passes" -ge $((PASSES / 2)) ]
check_eq "no pass could make a read-only mapping writable" 0 "$opened"
wait "$LOAD_PID"
check_eq "rrload exits 0" 0 "$?"
read -r sent ans wrong < <(json_get "$RR_TMP/load.json" sent answered wrong)
say "    reverse: sent $sent, answered $ans, wrong $wrong"
check "reverse: at least 30000 requests sent" [ "${sent:-0}" -ge 30000 ]
check_eq "reverse: no wrong reply" 0 "$wrong"
# A pass that writes over its queue's lock stops that queue until the
# supervisor takes the lock back (three looks: 40 to 140 ms); passes come
# every ~0.2 s, so a queue can stay stopped for long: requests waiting
# longer than rrload's 1 s are lost, nothing else is.
say "    reverse answered: $((ans * 100 / sent)) %"
check "reverse: at least 95% answered" [ $((ans * 100)) -ge $((sent * 95)) ]

check "reqrouter is still running" kill -0 "$RR_PID"
check_eq "still two cells per queue" $((QUEUES * 2)) "$(pgrep -c -P "$RR_PID")"
check_eq "reverse answers" hello "$(cli_ask 1 1232 olleh)"
check_eq "echo answers" hello "$(cli_ask 1 7 hello)"
# Requests on both queues, so that each cell writes its report afresh.
tb_cli python3 "$RR_LIB/udpclient.py" "$TB_IP4_SRV" 1232:reverse,7:echo \
	-n 200 -s 16 --deadline 30 -q
check_eq "200 more requests answered on both queues" 0 "$?"
python3 "$RR_LIB/hardening_metrics.py" at-rest "$M" --timeout 10 \
	--max-kernel 8 >"$RR_TMP/rest.out"
rc=$?
sed 's/^/    /' "$RR_TMP/rest.out"
check_eq "every UMEM frame is back" 0 "$rc"
say "    what the supervisor said, by kind:"
grep -E 'lock|report|killed|died|crashed' "$RR_ERR" | sed 's/[0-9]\+/N/g' |
	sort | uniq -c | sed 's/^/    /'

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

# Under --user the cells run as the instance's own user, which may change
# it (the socket's group lets them connect here, as the unit's user can
# under systemd); the control socket still refuses them, a worker's cell
# (UDP) and the TCP loop's cell (scribble served over TCP too) alike.
say "== --user nobody: cells of the instance's own user"
chmod 755 "$RR_TMP"
USOCK=$RR_TMP/user.sock
printf '[reqrouter]\nisolation = cell\n\n[function scribble]\ntcp = yes\nsyscalls = socket connect write read close\n' \
	>"$RR_TMP/user.conf"
rr_start user -i "$TB_IF_SRV" -q $QUEUES -c "$RR_TMP/user.conf" \
	--functions-dir "$RR_TMP/mods" --control "$USOCK" --user nobody \
	--control-group "$(id -gn nobody)" ||
	die "reqrouter --user nobody with scribble did not start"
r=$(cli_ask 1 9011 "ctl:$USOCK")
say "    a worker's cell asks for threads 3: $r"
check "a worker's cell is refused" grep -q "only root and the user it runs as" <<<"$r"
r=$(tb_cli python3 - "$TB_IP4_SRV" 9011 "ctl:$USOCK" <<'PY'
import socket, struct, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
m = sys.argv[3].encode()
s.sendall(struct.pack("!H", len(m)) + m)
n = struct.unpack("!H", s.recv(2))[0]
b = b""
while len(b) < n:
    c = s.recv(n - len(b))
    if not c:
        break
    b += c
print(b.decode(errors="replace"))
PY
)
say "    the TCP loop's cell asks for threads 3: $r"
check "the TCP loop's cell is refused" grep -q "only root and the user it runs as" <<<"$r"
check_eq "threads still 1" 1 "$("$BUILD/reqrouterctl" --control "$USOCK" --json status |
	json_eval 'd["threads"]' /dev/stdin)"
rr_kill_wait TERM 10
check_eq "--user nobody: SIGTERM: exit 0" 0 "$RR_RC"
finish
