#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The control commands are one table (src/lib/ctlcmd.c) and reqrouterctl
# --help prints it; everything else that lists them must agree with that
# help: the reqrouterctl block of docs/OPERATIONS.md (word for word), the bash
# completion's command words and the man page.
cd "$(dirname "$0")/../.." || exit 1
source tools/lib/checks.sh
BUILD=${BUILD:-build}
CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"

help=$("$CTL" --help)
# The first word of each line under a "Commands ...:" heading.
cmds=$(awk '/^Commands.*:$/ { on = 1; next } /^[^ ]/ { on = 0 }
	on && /^  [a-z]/ { print $1 }' <<<"$help")
n=$(wc -w <<<"$cmds")
check "--help lists commands ($n: $(tr '\n' ' ' <<<"$cmds"))" \
	test "$n" -ge 5

have=$(sed -n '/<!-- ctl-commands:begin/,/<!-- ctl-commands:end/p' docs/OPERATIONS.md |
	sed '1,2d;$d' | sed '$d')
if [ "$help" = "$have" ]; then
	ok "docs/OPERATIONS.md's reqrouterctl block is reqrouterctl --help"
else
	bad "docs/OPERATIONS.md's reqrouterctl block differs from reqrouterctl --help (paste the help between the ctl-commands markers):"
	diff <(echo "$have") <(echo "$help")
fi

comp=$(PATH=$BUILD:$PATH bash -c '
	source configs/reqrouter.bash-completion
	COMP_WORDS=(reqrouterctl ""); COMP_CWORD=1; _reqrouterctl
	printf "%s\n" "${COMPREPLY[@]}"')
check_eq "reqrouterctl <TAB> offers the commands --help lists" \
	"$(sort <<<"$cmds" | tr '\n' ' ')" "$(sort <<<"$comp" | tr '\n' ' ')"
comp=$(PATH=$BUILD:$PATH bash -c '
	source configs/reqrouter.bash-completion
	COMP_WORDS=(reqrouterctl -s /run/x.sock status ""); COMP_CWORD=4
	_reqrouterctl; printf "%s\n" "${COMPREPLY[@]}"')
check_eq "reqrouterctl status <TAB> offers no second command (one at a time)" \
	"" "$comp"

man=$BUILD/man/reqrouterctl.8
if [ -s "$man" ]; then
	text=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$man")
	missing=
	for c in $cmds; do
		grep -qE "^$c( |$)" <<<"$text" || missing="$missing $c"
	done
	check_eq "the man page has a paragraph for each command" "" "$missing"
else
	say "no man page at $man (make man): not checked"
fi
finish
