#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The registrations the docs quote (RR_FUNCTION, RR_FUNCTION_FLAGS,
# RR_FUNCTION_DEF in docs/*.md, README.md and the API header's comment)
# are the code's where they name a bundled function (functions/NAME.c):
# the same port, the same description, and every hook they name
# (.handler, .init, .fini, ... or RR_FUNCTION's handler) a function that
# file defines. A quote naming a function of the reader's own (upper,
# shout) has nothing to match.
cd "$(dirname "$0")/../.." || exit 1
source tools/lib/checks.sh

out=$(python3 - docs/*.md README.md include/reqrouter/rr_function.h <<'EOF'
import re, sys

# A registration: the macro, then its arguments up to the closing
# parenthesis (one level of nesting at most: none has more).
REG = re.compile(r'\b(RR_FUNCTION(?:_FLAGS|_DEF)?)\(\s*(\w+)\s*,\s*(\d+)\s*,'
                 r'\s*"([^"]*)"((?:[^()]|\([^()]*\))*)\)')
HOOK = re.compile(r'\.(\w+)\s*=\s*([a-z_]\w*)')


def regs(text):
    # Comment leaders (" *	") are not part of a quoted registration.
    text = re.sub(r'\n\s*\*\s?', '\n', text)
    for m in REG.finditer(text):
        macro, name, port, desc, rest = m.groups()
        hooks = dict(HOOK.findall(rest))
        if macro != 'RR_FUNCTION_DEF':
            first = rest.split(',')[1].strip() if ',' in rest else ''
            if re.fullmatch(r'[a-z_]\w*', first):
                hooks['handler'] = first
        yield name, int(port), desc, hooks


for path in sys.argv[1:]:
    for name, port, desc, hooks in regs(open(path).read()):
        try:
            code = open('functions/%s.c' % name).read()
        except OSError:
            continue
        mine = [r for r in regs(code) if r[0] == name]
        if not mine:
            print('bad %s: %s: no registration in functions/%s.c' % (path, name, name))
            continue
        _, cport, cdesc, chooks = mine[0]
        what = '%s: %s' % (path, name)
        print(('ok ' if port == cport else 'bad ') +
              '%s: port %d (functions/%s.c: %d)' % (what, port, name, cport))
        print(('ok ' if desc == cdesc else 'bad ') +
              '%s: "%s" (functions/%s.c: "%s")' % (what, desc, name, cdesc))
        for hook, fn in sorted(hooks.items()):
            defined = re.search(r'^(static\s+)?[\w\s\*]*\b%s\(' % re.escape(fn),
                                code, re.M)
            same = chooks.get(hook) == fn
            print(('ok ' if defined and same else 'bad ') +
                  '%s: .%s = %s (functions/%s.c: .%s = %s)' %
                  (what, hook, fn, name, hook, chooks.get(hook)))
EOF
) || die "the registrations could not be read"
[ "$(grep -c '^ok ' <<<"$out")" -ge 6 ] ||
	bad "found too few quoted registrations of bundled functions to compare"
while read -r verdict line; do
	if [ "$verdict" = ok ]; then ok "$line"; else bad "$line"; fi
done <<<"$out"
finish
