#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Function modules: every functions/NAME.c is also built as
# build/functions/NAME.so, and --functions-dir loads a directory of them.
# A module of a function reqrouter has replaces it on the same port (the
# test module "shout" is an upper-casing echo), and drops the built-in XDP
# implementation, which would answer for code no longer there. Served from
# the real modules, reverse answers rrload's checked requests. A module
# built against another API, or a file that is no module, is refused in
# one line before anything is set up.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

MODS=$BUILD/functions
TMODS=$BUILD/tests/modules
[ -f "$MODS/reverse.so" ] && [ -f "$TMODS/shout.so" ] ||
	die "no modules in $MODS and $TMODS (run make first)"

rr_bed 1

# ask PORT TEXT: the reply to TEXT from an ordinary socket.
ask() {
	tb_cli python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
s.sendto(sys.argv[3].encode(), (sys.argv[1], int(sys.argv[2])))
try:
    print(s.recv(2048).decode())
except socket.timeout:
    print("<none>")' "$TB_IP4_SRV" "$1" "$2"
}

out=$("$RR" --functions-dir "$TMODS" --list)
check "--list marks the module's function" grep -Eq '^echo +7 +user .*upper-cased.*\[module\]' <<<"$out"
check "--list: the module's echo has no XDP tier" grep -Eq '^echo +7 +user ' <<<"$out"

# Tier auto: the built-in echo would be answered in XDP; the module's not.
RR_TIER=auto
rr_start shout -i "$TB_IF_SRV" -q 1 --functions-dir "$TMODS" ||
	die "reqrouter with the test module did not start"
check_eq "the module answers on echo's port" "HELLO MODULES" "$(ask 7 'hello modules')"
check_eq "the built-in reverse still answers" "olleh" "$(ask 1232 hello)"
check "the log says echo is served in user space" \
	grep -q "serving 'echo' on UDP port 7, in user space" "$RR_ERR"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
RR_TIER=user

# Every function from its module, checked by rrload.
rr_start all -i "$TB_IF_SRV" -q 1 --functions-dir "$MODS" ||
	die "reqrouter with build/functions did not start"
tb_cli "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232,7 -c 8 -w 4 -n 4000 \
	-l 1-1400 -q --json "$RR_TMP/all.json" >/dev/null
check_eq "reverse and echo from their modules: 4000 checked replies" \
	"4000 0 0" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["answered"], d["wrong"], d["timeouts"])' "$RR_TMP/all.json")"
rr_kill_wait TERM 10

# Refusals: one line, before any set-up.
mkdir -p "$RR_TMP/bad"
cat >"$RR_TMP/bad/old.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
const void *rr_module_functions(size_t *n, uint32_t *api)
{
	*n = 0;
	*api = 1;
	return NULL;
}
EOF
gcc -shared -fPIC -o "$RR_TMP/bad/old.so" "$RR_TMP/bad/old.c" ||
	die "cannot build the old-API module"
rr_run oldapi -i "$TB_IF_SRV" -q 1 --functions-dir "$RR_TMP/bad"
check_eq "a module of another API: exit 2" 2 "$RR_RC"
check_eq "... in one line" 1 "$(wc -l <"$RR_ERR")"
check "... that says rebuild it" grep -q 'built against function API 1; this reqrouter has API 2: rebuild it' "$RR_ERR"
rm "$RR_TMP/bad/old.so"
echo "not an ELF file" >"$RR_TMP/bad/junk.so"
rr_run junk -i "$TB_IF_SRV" -q 1 --functions-dir "$RR_TMP/bad"
check_eq "a file that is no module: exit 2" 2 "$RR_RC"
check "... says it cannot load it" grep -q "cannot load module $RR_TMP/bad/junk.so" "$RR_ERR"
rr_run nodir -i "$TB_IF_SRV" -q 1 --functions-dir "$RR_TMP/none"
check_eq "a missing directory: exit 2" 2 "$RR_RC"
check "... says so" grep -q "cannot read functions directory $RR_TMP/none" "$RR_ERR"
if xdp_on_srv; then
	bad "a refused start left an XDP program attached"
else
	ok "nothing attached after the refusals"
fi

rr_finish
