#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The man pages (make man: help2man over each program's --help, which the
# option tables make) document every option the program has, under the
# program's current version, so the two can never drift apart: an option
# added to a table but not to a page rebuilt from it fails here. The NAME
# line says what the program does: reqrouterctl's that it controls the
# instance, as most of its commands do. reqrouter(8) points to the
# installed docs (DOCDIR, as make install puts them), not to a source
# tree a reader of the installed page does not have.
cd "$(dirname "$0")/../.." || exit 1
source tools/lib/checks.sh
BUILD=${BUILD:-build}

version=$(cat VERSION)
for page in reqrouter.8 reqrouterctl.8 rrload.1; do
	name=${page%.*}
	man=$BUILD/man/$page
	bin=$BUILD/$name
	[ -x "$bin" ] || die "no binary at $bin (run make)"
	if [ ! -s "$man" ]; then
		bad "$page: no man page at $man (run make man)"
		continue
	fi
	say "== $page"
	# roff writes a hyphen as \-, and fonts as \fB...\fR: read plain text.
	text=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$man")
	check "$page: its title line names $name $version" \
		grep -q "^\.TH ${name^^} \"${page#*.}\" .*\"$name $version\"" <<<"$text"
	check "$page: has a NAME line for $name" grep -q "^$name - " <<<"$text"
	case $name in
	reqrouterctl)
		grep -q '^Commands that change the instance' <("$bin" --help) &&
			check "$page: its NAME says it controls, as its commands that change the instance do" \
				grep -q "^$name - .*control" <<<"$text"
		;;
	reqrouter)
		check "$page: points to the installed docs" \
			grep -q '/share/doc/reqrouter/docs/CONFIGURATION\.md' <<<"$text"
		check_eq "$page: not to the source" "" "$(grep -i 'in the source' <<<"$text")"
		;;
	esac
	opts=$("$bin" --help | grep -E '^ +-' | grep -oE -- '(^| )--?[A-Za-z][A-Za-z0-9-]*' |
		tr -d ' ' | sort -u)
	n=0
	missing=
	for o in $opts; do
		n=$((n + 1))
		grep -qE -- "(^|[^A-Za-z0-9-])$o([^A-Za-z0-9-]|$)" <<<"$text" ||
			missing="$missing $o"
	done
	if [ -z "$missing" ] && [ "$n" -gt 3 ]; then
		ok "$page: all $n options of $name --help are in the page"
	else
		bad "$page: options of $name --help missing from the page:${missing:- (none found in --help)}"
	fi
done
finish
