#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Function modules: every functions/NAME.c is also built as
# build/functions/NAME.so, and --functions-dir loads a directory of them.
# A module of a function reqrouter has replaces it on the same port (the
# test module "shout" is an upper-casing echo), and drops the built-in XDP
# implementation, which would answer for code no longer there. Served from
# the real modules, reverse answers rrload's checked requests. While
# serving, reqrouterctl deploy replaces functions and remove takes one's
# port out; 100 replacements (30 in the sanitizer pass, where each
# takes longer) under 20000 requests/s lose nothing. A module
# built against another API, a file that is no module, a link, or a file
# or directory someone else could change, or a directory reached through
# one others can write (an ancestor, a link in one), is refused in one
# line before anything is set up. A module rebuilt at the same path runs its new code
# on the next deploy, and overwriting a loaded file cannot crash it.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

MODS=$BUILD/functions
TMODS=$BUILD/tests/modules
{ [ -f "$MODS/reverse.so" ] && [ -f "$TMODS/shout.so" ]; } ||
	die "no modules in $MODS and $TMODS (run make first)"

rr_bed 2

# ask PORT TEXT: the reply to TEXT from an ordinary socket.
ask() { cli_ask 1 "$1" "$2"; }

out=$("$RR" --functions-dir "$TMODS" --list)
check "--list marks the module's function" grep -Eq '^echo +7 +user .*upper-cased.*\[module\]' <<<"$out"
check "--list: the module's echo has no XDP tier" grep -Eq '^echo +7 +user ' <<<"$out"

# Tier auto: the built-in echo would be answered in XDP; the module's not.
RR_TIER=auto
rr_start shout -i "$TB_IF_SRV" -q 2 --functions-dir "$TMODS" ||
	die "reqrouter with the test module did not start"
check_eq "the module answers on echo's port" "HELLO MODULES" "$(ask 7 'hello modules')"
check_eq "the built-in reverse still answers" "olleh" "$(ask 1232 hello)"
check "the log says echo is served in user space" \
	grep -q "serving 'echo' on UDP port 7, in user space" "$RR_ERR"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
RR_TIER=user

# Every function from its module, checked by rrload.
rr_start all -i "$TB_IF_SRV" -q 2 --functions-dir "$MODS" ||
	die "reqrouter with build/functions did not start"
tb_cli "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232,7 -c 8 -w 4 -n 4000 \
	-l 1-1400 -q --json "$RR_TMP/all.json" >/dev/null
check_eq "reverse and echo from their modules: 4000 checked replies" \
	"4000 0 0" "$(json_get "$RR_TMP/all.json" answered wrong timeouts)"
rr_kill_wait TERM 10

# While serving: a module replaces a function, the next replaces it
# again, remove takes the port out, deploy brings it back.
CTL=$BUILD/reqrouterctl
SOCK=/run/reqrouter/$TB_IF_SRV.sock
# func_field NAME KEY: KEY of function NAME in reqrouterctl status --json.
func_field() {
	"$CTL" --control "$SOCK" --json status |
		json_eval "[f for f in d['functions'] if f['name'] == '$1'][0]['$2']" -
}
# deploy_ok MODULE [NOTE]: reqrouterctl deploy MODULE succeeds; its answer
# is shown.
deploy_ok() {
	local out
	out=$("$CTL" --control "$SOCK" deploy "$1")
	check_eq "deploy $(basename "$1")${2:-}: exit 0" 0 $?
	say "    $out"
}
rr_start live -i "$TB_IF_SRV" -q 2 -t 2 || die "reqrouter -q 2 -t 2 did not start"
check_eq "built-in echo first" "hello" "$(ask 7 hello)"
deploy_ok "$TMODS/shout.so"
check_eq "echo's port now answers with the module" "HELLO" "$(ask 7 hello)"
check_eq "status names the module" "$(realpath "$TMODS/shout.so")" "$(func_field echo module)"
"$CTL" --control "$SOCK" deploy "$MODS/echo.so" >/dev/null
check_eq "deploy echo.so: echo again" "hello" "$(ask 7 hello)"
check "the replaced test module is unloaded" \
	bash -c "! grep -q shout.so /proc/$RR_PID/maps"
"$CTL" --control "$SOCK" remove echo >/dev/null
check_eq "remove echo: exit 0" 0 $?
check_eq "a removed function's port goes to the kernel (port unreachable)" "<refused>" "$(ask 7 hello)"
check_eq "status: echo removed" True "$(func_field echo removed)"
check_eq "reverse keeps answering" "olleh" "$(ask 1232 hello)"
"$CTL" --control "$SOCK" remove echo >/dev/null 2>&1
check_eq "remove twice: exit 1" 1 $?
"$CTL" --control "$SOCK" deploy "$MODS/echo.so" >/dev/null
check_eq "deploy brings it back" "hello" "$(ask 7 hello)"
# A function reqrouter does not have: a port of its own, while serving.
check_eq "before: nothing on port 9009 (port unreachable)" "<refused>" "$(ask 9009 hello)"
deploy_ok "$TMODS/upper.so" " (a new function)"
check_eq "the new function answers on its port" "HELLO NEW PORT" "$(ask 9009 'hello new port')"
check_eq "status lists it, from its module" "$(realpath "$TMODS/upper.so")" "$(func_field upper module)"
check_eq "its own counter is exported" 1 \
	"$("$CTL" --control "$SOCK" --json stats |
		json_eval "[f for f in d['functions'] if f['name'] == 'upper'][0]['counters']['upper_answers']" -)"
# Module code has cells of its own (docs/DESIGN.md, "Cell groups"): shout's
# echo moved to a group, upper has one; threads cannot change now.
check_eq "status: three cell groups (the shared one, echo's, upper's)" 3 \
	"$("$CTL" --control "$SOCK" --json status | json_get - cell_groups)"
out=$("$CTL" --control "$SOCK" threads 3 2>&1)
check_eq "threads 3 is refused while groups exist: exit 1, one line" "1 1" \
	"$? $(wc -l <<<"$out")"
check_eq "... and upper still answers, on both threads of its group" \
	"AGAIN AGAIN" "$(ask 9009 again) $(ask 9009 again)"
out=$("$CTL" --control "$SOCK" deploy "$MODS/kv.so" 2>&1)
check_eq "deploying an opt-in function without its section: exit 1" 1 $?
check "... says it needs its section" grep -q "needs its \[function kv\] section" <<<"$out"
echo junk >"$RR_TMP/junk.so"
out=$("$CTL" --control "$SOCK" deploy "$RR_TMP/junk.so" 2>&1)
check_eq "deploying junk: exit 1, one line" "1 1" "$? $(wc -l <<<"$out")"
check_eq "still serving after the refusals" "olleh" "$(ask 1232 hello)"

# $DEPLOYS replacements under open-loop load: two copies of reverse.so take
# turns (different files, so each deploy really loads and unloads code).
mkdir -p "$RR_TMP/a" "$RR_TMP/b"
cp "$MODS/reverse.so" "$RR_TMP/a/reverse.so"
cp "$MODS/reverse.so" "$RR_TMP/b/reverse.so"
# The deploys take some 6 s, 8 with the cell groups of shout's echo and
# upper to fork again each time: the load lasts beyond them.
DEPLOYS=100 load_s=14
case $BUILD in */san) DEPLOYS=30 load_s=10 ;; esac
tb_cli_bg "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232 -c 16 -r 20000 -d $load_s \
	-l 1-1400 --timeout 1000 -q --json "$RR_TMP/replace.json"
LOAD=$TB_PID
RR_BG_PIDS+=("$LOAD")
sleep 0.5
deployed=0
for ((i = 0; i < DEPLOYS; i++)); do
	d=$RR_TMP/a
	((i % 2)) && d=$RR_TMP/b
	"$CTL" --control "$SOCK" deploy "$d/reverse.so" >/dev/null &&
		deployed=$((deployed + 1))
	sleep 0.02
done
check_eq "$DEPLOYS deploys of reverse under load succeed" "$DEPLOYS" "$deployed"
check "the load ran through every deploy" kill -0 "$LOAD"
wait "$LOAD"
check_eq "rrload during the deploys: exit 0" 0 $?
rr_load_checks "$RR_TMP/replace.json" 130000 "during the deploys: "
check_eq "only the last copy stays mapped" 1 \
	"$(grep -E "$RR_TMP/[ab]/reverse.so" /proc/$RR_PID/maps | awk '{print $6}' | sort -u | wc -l)"
"$CTL" --control "$SOCK" --json stats >"$RR_TMP/stats.json"
check_eq "no UMEM frame held at rest" 0 \
	"$(rr_umem_held "$RR_TMP/stats.json")"
rr_kill_wait TERM 10
check_eq "SIGTERM after the deploys: exit 0" 0 "$RR_RC"

# Refusals: one line, before any set-up.
mkdir -p "$RR_TMP/bad"
old_api_module "$RR_TMP/bad/old.so" || die "cannot build the old-API module"
rr_run oldapi -i "$TB_IF_SRV" -q 1 --functions-dir "$RR_TMP/bad"
check_eq "a module of another API: exit 2" 2 "$RR_RC"
check_eq "... in one line" 1 "$(wc -l <"$RR_ERR")"
check "... that says rebuild it" grep -q 'built against function API 1; this reqrouter has API 4: rebuild it' "$RR_ERR"
rm "$RR_TMP/bad/old.so"
# A module of a newer API calls what this reqrouter lacks: the loader
# fails on the symbol, and the API is what is said.
cat >"$RR_TMP/bad/newer.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
int rr_fn_from_the_future(void);
int later(void)
{
	return rr_fn_from_the_future();
}
const void *rr_module_functions(size_t *n, uint32_t *api)
{
	*n = 0;
	*api = 99;
	return NULL;
}
EOF
gcc -shared -fPIC -o "$RR_TMP/bad/newer.so" "$RR_TMP/bad/newer.c" ||
	die "cannot build the newer-API module"
rr_run newerapi -i "$TB_IF_SRV" -q 1 --functions-dir "$RR_TMP/bad"
check_eq "a module of a newer API using a call this reqrouter lacks: exit 2" 2 "$RR_RC"
check "... that says rebuild it, not 'undefined symbol'" grep -q 'built against function API 99; this reqrouter has API 4: rebuild it' "$RR_ERR"
rm "$RR_TMP/bad/newer.so"
echo "not an ELF file" >"$RR_TMP/bad/junk.so"
rr_run junk -i "$TB_IF_SRV" -q 1 --functions-dir "$RR_TMP/bad"
check_eq "a file that is no module: exit 2" 2 "$RR_RC"
check "... says it cannot load it" grep -q "cannot load module $RR_TMP/bad/junk.so" "$RR_ERR"
check "... naming the file, not the private copy reqrouter loads" \
	bash -c "! grep -q /proc/self/fd/ '$RR_ERR'"
rr_run nodir -i "$TB_IF_SRV" -q 1 --functions-dir "$RR_TMP/none"
check_eq "a missing directory: exit 2" 2 "$RR_RC"
check "... says so" grep -q "cannot read functions directory $RR_TMP/none" "$RR_ERR"
# Only code nobody else can change is loaded, and never through a link.
# refused NAME DIR GREP: --functions-dir DIR stops reqrouter with one line.
refused() {
	rr_run "$1" -i "$TB_IF_SRV" -q 1 --functions-dir "$2"
	check_eq "$1: exit 2, one line" "2 1" "$RR_RC $(wc -l <"$RR_ERR")"
	check "$1: ... saying '$3'" grep -q "$3" "$RR_ERR"
}
mkdir -p "$RR_TMP/link" "$RR_TMP/open" "$RR_TMP/owned"
ln -s "$(realpath "$TMODS/shout.so")" "$RR_TMP/link/shout.so"
refused symlink "$RR_TMP/link" "a symbolic link is not followed"
cp "$TMODS/shout.so" "$RR_TMP/open/" && chmod 777 "$RR_TMP/open"
refused open-dir "$RR_TMP/open" "its directory is writable by others"
chmod 755 "$RR_TMP/open" && chmod 666 "$RR_TMP/open/shout.so"
refused open-file "$RR_TMP/open" "its file is writable by others"
cp "$TMODS/shout.so" "$RR_TMP/owned/" && chown nobody "$RR_TMP/owned/shout.so"
refused owned "$RR_TMP/owned" "belongs to uid $(id -u nobody), not root"
# Nor through a directory others can change higher up: an ancestor others
# can write (not sticky), or a link in one.
mkdir -p "$RR_TMP/anc/mods" "$RR_TMP/real"
cp "$TMODS/shout.so" "$RR_TMP/anc/mods/" && chmod 777 "$RR_TMP/anc"
refused open-ancestor "$RR_TMP/anc/mods" "'mods' is in a directory others can write (mode 777)"
cp "$TMODS/shout.so" "$RR_TMP/real/"
mkdir -p "$RR_TMP/openlink" && ln -s "$RR_TMP/real" "$RR_TMP/openlink/mods"
chmod 777 "$RR_TMP/openlink"
refused link-in-open-dir "$RR_TMP/openlink/mods" "'mods' is in a directory others can write"
# A link in a directory only root can change is followed (as /lib ->
# usr/lib), and a sticky one (as /tmp) may hold a directory of root's.
mkdir -p "$RR_TMP/safe" && ln -s "$RR_TMP/real" "$RR_TMP/safe/mods"
# lists_shout DIR: --functions-dir DIR loads shout (its echo upper-cases).
# shellcheck disable=SC2317 # called through check
lists_shout() { "$RR" --functions-dir "$1" --list | grep -q "upper-cased"; }
check "a link to the directory, in a directory only root can write: loaded" \
	lists_shout "$RR_TMP/safe/mods"
mkdir -p "$RR_TMP/sticky/mods" && chmod 1777 "$RR_TMP/sticky"
cp "$TMODS/shout.so" "$RR_TMP/sticky/mods/"
check "a directory of root's in a sticky one others can write: loaded" \
	lists_shout "$RR_TMP/sticky/mods"
chown nobody "$RR_TMP/sticky/mods"
refused sticky-not-ours "$RR_TMP/sticky/mods" "'mods' is in a directory others can write (mode 1777)"
if xdp_on_srv; then
	bad "a refused start left an XDP program attached"
else
	ok "nothing attached after the refusals"
fi

# A module rebuilt at the same path runs its new code on the next deploy
# (dlopen() would have handed back the old mapping), and overwriting the
# loaded file in place cannot touch the running code: each deploy loads a
# private copy.
mkdir -p "$RR_TMP/same"
cp "$TMODS/shout.so" "$RR_TMP/same/echo.so"
rr_start same -i "$TB_IF_SRV" -q 2 || die "reqrouter -q 2 did not start"
deploy_ok "$RR_TMP/same/echo.so" " (shout)"
check_eq "shout answers on echo's port" "HELLO" "$(ask 7 hello)"
cp "$MODS/echo.so" "$RR_TMP/same/echo.so" # in place: the same inode
check_eq "the loaded file overwritten in place: still answering, as shout" \
	"HELLO" "$(ask 7 hello)"
deploy_ok "$RR_TMP/same/echo.so" " (echo, rebuilt at the same path)"
check_eq "the same path deployed again runs the new code" "hello" "$(ask 7 hello)"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

finish
