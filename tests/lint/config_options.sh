#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The option list in docs/CONFIGURATION.md is `reqrouter --help`, word
# for word.
set -eu
cd "$(dirname "$0")/../.."
DOC=docs/CONFIGURATION.md
BUILD=${BUILD:-build}
want=$("$BUILD/reqrouter" --help)
have=$(sed -n '/<!-- options:begin/,/<!-- options:end/p' "$DOC" |
	sed '1,2d;$d' | sed '$d')
if [ "$want" != "$have" ]; then
	echo "$DOC's option list differs from reqrouter --help:"
	diff <(echo "$have") <(echo "$want")
	exit 1
fi
echo "$DOC's option list matches --help"
