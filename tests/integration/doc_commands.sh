#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The command blocks of the documentation run as written. Every fenced
# ```sh block in README.md and docs/*.md carries a marker, an HTML comment
# on the last non-blank line above its fence (a reader of the rendered
# page does not see it):
#
#   <!-- doc-test: bed -->
#       Run on a test bed (tools/testbed.sh, 4 queues), one command at a
#       time (a line, with its \ continuations; comments and blank lines
#       are left out), in a scratch directory whose build/ is $BUILD and
#       whose other names are the tree's top-level files, with $BUILD on
#       PATH (so `reqrouterctl` is the built one). The bed's names are set
#       ($TB_IF_SRV, $TB_IP4_SRV, $TB_IF_CLI, ... as tb_setup exports
#       them), and the word eth0 becomes $TB_IF_SRV and the address
#       192.0.2.1 $TB_IP4_SRV, so a block may say either. A command whose
#       first word is a client (kdig, dig, dnsperf, kxdpgun, sockperf,
#       rrload) runs in the client namespace, the rest in the server's.
#       A load tool's run length is cut to a second (sockperf -t and
#       kxdpgun -t, dnsperf -l): what is checked is that the command runs
#       as written, which the length does not change.
#       A reqrouter command that serves (not --list, --check, --help,
#       --version) is started in the background and must log "ready on"
#       within 15 s; it is stopped by the next one or at the end of the
#       block, with SIGTERM unless it stopped itself, and must exit 0.
#       Every other command must exit 0 within 60 s.
#   <!-- doc-test: skip (REASON) -->
#       Not run, for REASON, which must be there: a real host's systemd,
#       apt-get, make install into /, a bed that stays up.
#   <!-- doc-test: function PORT REQUEST REPLY -->
#       Above a ```c block that is a whole function: it is built as a
#       module with the tree's warning flags (-Wall -Wextra -Werror),
#       served with --functions-dir on the bed, and REQUEST to PORT must
#       come back as REPLY.
#
# A ```sh block without a marker, a skip without a reason, a marker with
# no block under it or one this test does not know are failures, so a
# new block cannot go untested without saying why. First, every relative
# link of those files must name a file of the tree, and its #anchor a
# heading there (as GitHub makes anchors).
#
# A block's bare `reqrouterctl status` asks the one instance in
# /run/reqrouter, as on a host that runs one. make test runs other tests
# beside this one, whose instances are there too: the test runs in a
# mount namespace of its own, /run/reqrouter a tmpfs of its own in it.
cd "$(dirname "$0")/../.." || exit 1
if [ -z "${RR_DOC_OWN_RUN:-}" ] && [ "$(id -u)" = 0 ]; then
	export RR_DOC_OWN_RUN=1
	# shellcheck disable=SC2016 # $0 and $@ are the inner bash's
	exec unshare --mount --propagation private -- bash -c \
		'mkdir -p /run/reqrouter &&
		mount -t tmpfs -o mode=0755 tmpfs /run/reqrouter && exec bash "$0" "$@"' \
		tests/integration/doc_commands.sh "$@"
fi
source tests/integration/lib/common.sh

links=$(python3 - README.md docs/*.md <<'EOF'
import os, re, sys

def anchors(path):
    seen, out, fence = {}, set(), False
    for line in open(path):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#+\s+(.*)$", line)
        if m:
            a = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            a = a.replace(" ", "-")
            n = seen.get(a, -1) + 1
            seen[a] = n
            out.add(a if n == 0 else "%s-%d" % (a, n))
    return out

n = 0
for name in sys.argv[1:]:
    text = re.sub(r"```.*?```", "", open(name).read(), flags=re.S)
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        link = m.group(1)
        if re.match(r"^[a-z]+:", link):
            continue
        n += 1
        path, _, anchor = link.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(name), path)) \
            if path else name
        if not os.path.exists(target):
            print("BROKEN %s: %s: no such file" % (name, link))
        elif anchor and target.endswith(".md") and anchor not in anchors(target):
            print("BROKEN %s: %s: no such heading" % (name, link))
print("LINKS %d" % n)
EOF
)
check_eq "every relative link of README.md and docs/ leads somewhere" \
	"" "$(grep '^BROKEN' <<<"$links")"
say "    ($(sed -n 's/^LINKS //p' <<<"$links") links)"

TOP=$PWD
CLIENTS=" kdig dig dnsperf kxdpgun sockperf rrload build/rrload "

rr_bed 4
BUILD_ABS=$(cd "$BUILD" && pwd)
WORK=$RR_TMP/work
mkdir -p "$WORK" "$RR_TMP/blocks"
for f in "$TOP"/*; do
	[ "$(basename "$f")" = build ] || ln -s "$f" "$WORK/$(basename "$f")"
done
ln -s "$BUILD_ABS" "$WORK/build"
export PATH="$BUILD_ABS:$PATH"

# The blocks, one file each, and a manifest: N, FILE:LINE, kind, argument.
python3 - "$RR_TMP/blocks" README.md docs/*.md <<'EOF' >"$RR_TMP/manifest" ||
import re, sys
out, files = sys.argv[1], sys.argv[2:]
MARK = re.compile(r"^<!-- doc-test: (.*?) -->$")
n = 0
for name in files:
    lines = open(name).read().split("\n")
    i, last = 0, None  # last: (line number, text) of the last non-blank line
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            text = lines[i].strip()
            if text:
                if last and MARK.match(last[1]):
                    print("%d\t%s:%d\tstray\t%s" % (n, name, last[0], last[1]))
                    n += 1
                last = (i + 1, text)
            i += 1
            continue
        lang, start = fence.group(1), i + 1
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        mark = MARK.match(last[1]) if last else None
        last = None
        if lang != "sh" and not mark:
            continue
        kind, arg = "none", ""
        if mark:
            kind, _, arg = mark.group(1).partition(" ")
        if lang == "sh" and kind == "bed":
            text = "\n".join(body)
            text = re.sub(r"\beth0\b", "$TB_IF_SRV", text)
            text = re.sub(r"(?<![\d.])192\.0\.2\.1(?![\d])", "$TB_IP4_SRV", text)
            body = text.split("\n")
        if lang not in ("sh", "c") or (lang == "c") != (kind == "function"):
            kind, arg = "mismatch", "%s block marked %s" % (lang or "plain", kind)
        with open("%s/%d" % (out, n), "w") as f:
            f.write("\n".join(body) + "\n")
        print("%d\t%s:%d\t%s\t%s" % (n, name, start, kind, arg))
        n += 1
EOF
	die "cannot read the documentation's blocks"

SRV_PID=
SRV_ERR=

# show FILE: what a command said, indented: its first 5 lines and its
# last 10 when it said more than 15 (a usage error is at the top, most
# others at the bottom).
show() {
	if [ "$(wc -l <"$1")" -le 15 ]; then
		sed 's/^/    /' "$1"
	else
		sed -n '1,5s/^/    /p' "$1"
		echo "    ..."
		tail -n 10 "$1" | sed 's/^/    /'
	fi
}

# srv_stop WHERE: stop the block's reqrouter, if one was started: SIGTERM
# unless it exited by itself (a drain), and exit status 0 either way.
srv_stop() {
	local rc i
	[ -n "$SRV_PID" ] || return 0
	kill -TERM "$SRV_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SRV_PID" 2>/dev/null; then
		kill -KILL "$SRV_PID"
		bad "$1: reqrouter did not stop within 10 s of SIGTERM"
	fi
	wait "$SRV_PID" 2>/dev/null
	rc=$?
	SRV_PID=
	[ "$rc" = 0 ] || {
		bad "$1: reqrouter exited $rc; its stderr:"
		show "$SRV_ERR"
		return 1
	}
	return 0
}

# serves CMD: is CMD a reqrouter start that serves until stopped?
serves() {
	local first=${1%% *}
	[ "$first" = build/reqrouter ] || [ "$first" = reqrouter ] ||
		return 1
	! grep -qE -- '(^| )--(list|check|help|version|dump-settings)( |$)' <<<"$1"
}

# run_cmd WHERE CMD: one command of a bed block.
run_cmd() {
	local where=$1 cmd=$2 ns=$TB_NS_SRV out=$RR_TMP/cmd.out i len
	if serves "$cmd"; then
		srv_stop "$where" || return 1
		SRV_ERR=$RR_TMP/srv.$((++NSRV)).err
		(cd "$WORK" && exec ip netns exec "$TB_NS_SRV" \
			bash -c "exec $cmd" </dev/null >/dev/null 2>"$SRV_ERR") &
		SRV_PID=$!
		for ((i = 0; i < 150; i++)); do
			grep -q 'ready on' "$SRV_ERR" 2>/dev/null && return 0
			kill -0 "$SRV_PID" 2>/dev/null || break
			sleep 0.1
		done
		bad "$where: '$cmd' did not get ready; its stderr:"
		show "$SRV_ERR"
		kill -KILL "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
		SRV_PID=
		return 1
	fi
	[[ $CLIENTS == *" ${cmd%% *} "* ]] && ns=$TB_NS_CLI
	case ${cmd%% *} in
	sockperf | kxdpgun) len=t ;;
	dnsperf) len=l ;;
	*) len= ;;
	esac
	[ -n "$len" ] &&
		cmd=$(sed -E "s/(^| )-$len [0-9]+( |\$)/\\1-$len 1\\2/" <<<"$cmd")
	if (cd "$WORK" && ip netns exec "$ns" timeout -k 2 60 bash -c "$cmd") \
		</dev/null >"$out" 2>&1; then
		return 0
	fi
	bad "$where: '$cmd' failed ($([ "$ns" = "$TB_NS_CLI" ] && echo client || echo server) namespace); its output:"
	show "$out"
	return 1
}

# restore_peer: the client end's XDP_PASS program back (kxdpgun replaces
# it), so the next block's replies from XDP arrive.
restore_peer() {
	local mode
	for mode in xdp xdpgeneric xdpdrv; do
		tb_cli ip link set dev "$TB_IF_CLI" "$mode" off 2>/dev/null
	done
	tb_cli ip link set dev "$TB_IF_CLI" xdpdrv object \
		"$BUILD/bpf/peer_pass.bpf.o" program peer_pass ||
		die "cannot put peer_pass back on the client end"
}

# run_bed N WHERE: a bed block, command by command; true if all passed.
run_bed() {
	local file=$RR_TMP/blocks/$1 cmd line rc=0
	cmd=
	while IFS= read -r line || [ -n "$line" ]; do
		if [[ $line == *\\ ]]; then
			cmd+="${line%\\} "
			continue
		fi
		cmd+=$line
		cmd=$(sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//' <<<"$cmd")
		if [ -n "$cmd" ] && [ "${cmd:0:1}" != "#" ]; then
			run_cmd "$2" "$cmd" || { rc=1; break; }
		fi
		cmd=
	done <"$file"
	srv_stop "$2" || rc=1
	restore_peer
	return $rc
}

# run_function N WHERE PORT REQUEST REPLY: build the block as a module,
# serve it, ask it.
run_function() {
	local dir=$RR_TMP/fn.$1 got
	mkdir -p "$dir/mods"
	cp "$RR_TMP/blocks/$1" "$dir/fn.c"
	printf '#include "fn.c"\n#define RR_MODULE_ENTRY\n#include <reqrouter/rr_module.h>\n' \
		>"$dir/module.c"
	if ! cc -Iinclude -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
		-fPIC -shared -fvisibility=hidden -Wl,-Bsymbolic \
		-o "$dir/mods/fn.so" "$dir/module.c" >"$dir/cc.out" 2>&1; then
		bad "$2: the function does not build:"
		show "$dir/cc.out"
		return 1
	fi
	run_cmd "$2" "build/reqrouter -i $TB_IF_SRV --functions-dir $dir/mods" ||
		return 1
	got=$(cli_ask 2 "$3" "$4")
	srv_stop "$2" || return 1
	[ "$got" = "$5" ] || {
		bad "$2: '$4' to port $3 came back '$got', not '$5'"
		return 1
	}
}

NSRV=0
nbed=0
nskip=0
nfn=0
start=$(date +%s)
while IFS=$'\t' read -r n where kind arg; do
	case $kind in
	bed)
		say "== $where: on the bed"
		nbed=$((nbed + 1))
		run_bed "$n" "$where" && ok "$where: every command of the block ran"
		;;
	function)
		nfn=$((nfn + 1))
		read -r port req reply <<<"$arg"
		say "== $where: the function, on port $port"
		run_function "$n" "$where" "$port" "$req" "$reply" &&
			ok "$where: the function builds, and '$req' to port $port comes back '$reply'"
		;;
	skip)
		nskip=$((nskip + 1))
		if [[ $arg =~ ^\(.+\)$ ]]; then
			say "   $where: skipped: ${arg:1:${#arg}-2}"
		else
			bad "$where: doc-test: skip without a (reason)"
		fi
		;;
	none)
		bad "$where: a \`\`\`sh block without a doc-test marker (bed, or skip (REASON): see the top of $0)"
		;;
	stray)
		bad "$where: a doc-test marker with no block under it: $arg"
		;;
	*)
		bad "$where: doc-test: '$kind $arg' is not a marker this test knows"
		;;
	esac
done <"$RR_TMP/manifest"
say "$nbed blocks run on the bed, $nfn functions built and asked," \
	"$nskip skipped with a reason, in $(($(date +%s) - start)) s"
check "the documentation has blocks that run" [ "$nbed" -ge 4 ]
finish
