#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The README's option list is `reqrouter --help`, word for word.
set -eu
BUILD=${BUILD:-build}
want=$("$BUILD/reqrouter" --help)
have=$(sed -n '/<!-- options:begin/,/<!-- options:end/p' README.md |
	sed '1,2d;$d' | sed '$d')
if [ "$want" != "$have" ]; then
	echo "README.md's option list differs from reqrouter --help:"
	diff <(echo "$have") <(echo "$want")
	exit 1
fi
echo "README option list matches --help"
