# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Reading JSON from the shell: rrload's --json summaries and reqrouterctl
# --json answers, for the tests and the tools (tools/lib/jsonq.py does it).
#
#   json_get FILE KEY...    the top-level KEYs' values, space-separated
#                           (FILE - is stdin); nothing if FILE is unreadable
#   json_eval EXPR FILE     a Python expression over the document, as d
#
# The system python starts in milliseconds; a pyenv shim takes ~0.5 s.

RR_PY=/usr/bin/python3
[ -x "$RR_PY" ] || RR_PY=python3
RR_JSONQ=${BASH_SOURCE[0]%/*}/jsonq.py

json_get() {
	"$RR_PY" "$RR_JSONQ" "$@" 2>/dev/null
}

json_eval() {
	"$RR_PY" "$RR_JSONQ" -e "$@"
}
