#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A function module built out of tree, against what make install put in a
# DESTDIR and nothing else: every installed header of the function API
# compiles on its own with only the installed include directory (so a
# public header that includes one of src/ or kern/ fails here), a bundled
# function's XDP program compiles against them too, pkg-config names them
# with the API version, and examples/function/, copied outside the tree
# and built by its own Makefile through pkg-config, gives a module that
# the installed reqrouter lists and serves on a test bed.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

# make test runs this: its MAKEFLAGS are not ours.
unset MAKEFLAGS MFLAGS MAKELEVEL
rr_bed 1
D=$RR_TMP/dest
make --no-print-directory install DESTDIR="$D" PREFIX=/usr >"$RR_TMP/install.log" 2>&1
check_eq "make install DESTDIR=... PREFIX=/usr: exit 0" 0 $?
INC=$D/usr/include

say "== the installed headers, each on its own"
# clang -target bpf needs the host's asm/ directory, as the Makefile finds.
ARCH_INC=
for a in $(gcc -print-multiarch 2>/dev/null) \
	$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null) \
	$(gcc -dumpmachine 2>/dev/null); do
	[ -d "/usr/include/$a/asm" ] && ARCH_INC=/usr/include/$a && break
done
[ -n "$ARCH_INC" ] || die "no /usr/include/NAME/asm for the BPF compiler"
# compiles HEADER COMPILER...: a file that includes HEADER alone compiles,
# from a directory outside the tree so that nothing of it is found.
# shellcheck disable=SC2317 # called through check
compiles() {
	local name=$1
	shift
	(cd "$RR_TMP" && printf '#include <reqrouter/%s>\n' "$name" |
		"$@" -Wall -Wextra -Werror -fsyntax-only -I"$INC" -x c -)
}
n=0
for h in "$INC"/reqrouter/*.h; do
	name=${h##*/}
	n=$((n + 1))
	if [[ $name == rr_xdp* ]]; then
		cmd=(clang -target bpf -I"$ARCH_INC")
	else
		cmd=(gcc -std=gnu11)
	fi
	check "$name compiles with only $INC" compiles "$name" "${cmd[@]}"
done
check "at least the four API headers are installed ($n)" test "$n" -ge 4
check "a bundled function's XDP program (echo.bpf.c) builds against them" \
	clang -O2 -target bpf -I"$ARCH_INC" -I"$INC" -Wall -Werror \
	-c -o "$RR_TMP/echo.bpf.o" functions/echo.bpf.c

say "== pkg-config reqrouter-function"
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/share/pkgconfig
check_eq "--modversion is reqrouter's version" "$(cat VERSION)" \
	"$(pkg-config --modversion reqrouter-function)"
check_eq "function_api is the headers' RR_FUNCTION_API" \
	"$(sed -n 's/^#define RR_FUNCTION_API \([0-9]*\).*/\1/p' "$INC/reqrouter/rr_function.h")" \
	"$(pkg-config --variable=function_api reqrouter-function)"
check_eq "--cflags names the installed include directory" "-I$INC" \
	"$(pkg-config --cflags reqrouter-function | xargs)"

say "== examples/function, built outside the tree"
cp -r examples/function "$RR_TMP/src"
make --no-print-directory -C "$RR_TMP/src" >"$RR_TMP/build.log" 2>&1
rc=$?
sed 's/^/    /' "$RR_TMP/build.log"
check_eq "its make: exit 0" 0 "$rc"
check "the compiler was given the installed headers and no tree path" \
	bash -c "grep -q -- '-I$INC' '$RR_TMP/build.log' &&
		! grep -Eq -- '-I[^ ]*(src|kern)' '$RR_TMP/build.log'"
check "rot13.so exports the module entry point" bash -c \
	"nm -D --defined-only '$RR_TMP/src/rot13.so' | grep -qw rr_module_functions"
mkdir -p "$RR_TMP/mods"
cp "$RR_TMP/src/rot13.so" "$RR_TMP/mods/"

say "== the installed reqrouter takes it"
RR=$D/usr/sbin/reqrouter
out=$("$RR" --functions-dir "$RR_TMP/mods" --list 2>&1)
check "--list shows rot13 on port 9013, from its module" \
	grep -Eq '^rot13 +9013 .*\[module\]' <<<"$out"
rr_start oot -i "$TB_IF_SRV" -q 1 --functions-dir "$RR_TMP/mods" ||
	die "reqrouter with the out-of-tree module did not start"
check_eq "it answers on port 9013" "Uryyb, jbeyq" "$(cli_ask 1 9013 'Hello, world')"
check_eq "the bundled reverse still answers" "olleh" "$(cli_ask 1 1232 hello)"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

make --no-print-directory uninstall DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
check "uninstall removes the headers and the .pc file" test ! -e "$INC/reqrouter" \
	-a ! -e "$D/usr/share/pkgconfig/reqrouter-function.pc"
finish
