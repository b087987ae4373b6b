# SPDX-License-Identifier: GPL-2.0
#
# reqrouter build. Sources are found by wildcard (docs/DESIGN.md maps them):
#   src/lib/*.c         -> build/librr.a: what the daemon, reqrouterctl and
#                          the tools share
#   src/daemon/*.c, src/daemon/FLOOR/*.c
#                       -> build/reqrouter (build/libreqrouter.a: all but main);
#                          the floors are docs/DESIGN.md's ("Where things are")
#   src/ctl/*.c         -> build/reqrouterctl
#   functions/NAME.c, functions/NAME/*.c
#                       -> function NAME: linked into reqrouter and every
#                          tool and test, and build/functions/NAME.so
#   functions/*.bpf.c, functions/*/*.bpf.c
#                       -> the functions' XDP programs, embedded likewise
#   kern/*.bpf.c, tools/*/*.bpf.c -> build/bpf/NAME.bpf.o + build/skel/NAME.skel.h
#   tools/NAME/*.c      -> build/NAME
#   tests/unit/*.c, tests/bpf/*.c -> build/tests/unit/NAME,
#                          build/tests/bpf/NAME (DIR/NAME_PART.c: a part of
#                          test NAME, as in functions/)
#   tests/lib/*.c       -> build/libtests.a, linked into every test
#   functions/*.pkgs, functions/*/*.pkgs
#                       -> pkg-config names whose flags every object and
#                          binary gets (a function's libraries)
#   functions/NAME/*.proto
#                       -> build/gen/NAME/*.pb-c.[ch] (protoc-c), a part
#                          of function NAME
# so a file dropped into functions/ is built with no other edit.

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
V ?= 0
SAN ?= 0

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# A sanitizer build lives apart so the two never mix objects.
ifeq ($(SAN),1)
BUILD := build/san
else
BUILD := build
endif
export BUILD
# clang -target bpf needs the host's multiarch include directory
# (asm/types.h). Its name is not always $(CC) -dumpmachine: clang says
# x86_64-pc-linux-gnu where Debian's directory is x86_64-linux-gnu. Ask the
# compilers and dpkg for the multiarch name and take the first that has an
# asm/ directory; -dumpmachine comes last, for systems without multiarch.
ARCH_NAMES := $(shell $(CC) -print-multiarch 2>/dev/null; \
	gcc -print-multiarch 2>/dev/null; \
	dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null; \
	$(CC) -dumpmachine 2>/dev/null)
ARCH_INC := $(patsubst %/asm,%,$(firstword $(wildcard \
	$(patsubst %,/usr/include/%/asm,$(ARCH_NAMES)))))
ifeq ($(ARCH_INC),)
$(warning no /usr/include/NAME/asm for any of '$(ARCH_NAMES)': BPF objects will not find asm/types.h)
endif

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	  -D_GNU_SOURCE -pthread
# Hardened as Debian builds its daemons (dpkg-buildflags with
# hardening=+all): stack protector, FORTIFY, format checks, PIE and full
# RELRO. Modules are -fPIC (MODULE_FLAGS comes later and wins); the BPF
# objects and the fuzzers have flags of their own.
HARDEN_CFLAGS := -fstack-protector-strong -U_FORTIFY_SOURCE \
	-D_FORTIFY_SOURCE=2 -Wformat -Werror=format-security -fPIE
HARDEN_LDFLAGS := -pie -Wl,-z,relro -Wl,-z,now
CFLAGS += $(HARDEN_CFLAGS)
LDFLAGS += $(HARDEN_LDFLAGS)
RR_VERSION := $(shell cat VERSION)
# Each part sees the public function API (include/), the shared library
# (src/lib) and what kern/ and src/ agree on; only the daemon and the tests
# see the daemon's headers (below).
CPPFLAGS += -Iinclude -Isrc/lib -Ikern -I$(BUILD)/skel -MMD -MP \
	    -DRR_VERSION='"$(RR_VERSION)"'
LDLIBS += -lxdp -lbpf -lelf -lz -linih -lcap-ng -lpthread -ldl -lm
# Only reqrouter itself talks to systemd and serves HTTP, and confines its
# cells with a seccomp filter (libseccomp, src/daemon/seccomp.c): that
# library also goes to the tests that link the daemon's objects.
SECCOMP_LIBS := $(shell pkg-config --libs libseccomp 2>/dev/null || echo -lseccomp)
RR_LDLIBS := -lsystemd -lmicrohttpd $(SECCOMP_LIBS)
# reqrouterctl reads the instance's answers with json-c.
JSONC_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSONC_LIBS := $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
$(call obj,$(CTL_SRCS)): CPPFLAGS += $(JSONC_CFLAGS)
# The one daemon-linking program whose rule is elsewhere (tests/fuzz/build.mk).
$(BUILD)/fuzz/fuzz_xdp: LDLIBS += $(SECCOMP_LIBS)
# Libraries the functions need: functions/NAME.pkgs lists pkg-config names
# (whitespace-separated, '#' comments). Every binary links every function,
# so their flags go everywhere; FN_PKG_LIBS also reaches the fuzzers'
# clang links (tests/fuzz/build.mk).
FN_PKGS := $(sort $(shell sed 's/\#.*//' \
	$(wildcard functions/*.pkgs functions/*/*.pkgs) /dev/null))
ifneq ($(FN_PKGS),)
ifneq ($(shell pkg-config --exists $(FN_PKGS) 2>/dev/null && echo ok),ok)
$(warning functions need pkg-config packages '$(FN_PKGS)' that pkg-config cannot find: make deps)
endif
FN_PKG_CFLAGS := $(shell pkg-config --cflags $(FN_PKGS) 2>/dev/null)
FN_PKG_LIBS := $(shell pkg-config --libs $(FN_PKGS) 2>/dev/null)
endif
CPPFLAGS += $(FN_PKG_CFLAGS)
LDLIBS += $(FN_PKG_LIBS)
# A function sees the public API and its libraries, nothing of src/ or kern/.
FN_CPPFLAGS := -Iinclude -MMD -MP $(FN_PKG_CFLAGS) \
	-DRR_VERSION='"$(RR_VERSION)"'
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
BPF_BASE_CFLAGS := -O2 -g -target bpf -Wall -Werror -I$(ARCH_INC) -Iinclude
BPF_CFLAGS := $(BPF_BASE_CFLAGS) -Ikern

SRC_MAIN := src/daemon/main.c
SRC_DAEMON := $(filter-out $(SRC_MAIN),$(wildcard src/daemon/*.c src/daemon/*/*.c))
# The daemon's headers, by their floor's folder: each includes the others
# by name alone (quotes only, see below).
DAEMON_INC := $(patsubst %/,-iquote %,$(sort $(dir $(wildcard src/daemon/*.h \
	src/daemon/*/*.h))))
SRC_RRLIB := $(wildcard src/lib/*.c)
# A function is functions/NAME.c alone, or every .c file in functions/NAME/.
FN_FILE_NAMES := $(patsubst functions/%.c,%,\
	$(filter-out %.bpf.c,$(wildcard functions/*.c)))
FN_DIR_NAMES := $(patsubst functions/%/,%,\
	$(sort $(dir $(filter-out %.bpf.c,$(wildcard functions/*/*.c)))))
# functions/NAME/X.proto: protoc-c's X.pb-c.c in $(BUILD)/gen/NAME/ is a
# source of function NAME, and its X.pb-c.h is found by name alone.
fn_protos = $(patsubst functions/$(1)/%.proto,$(BUILD)/gen/$(1)/%.pb-c.c,\
	$(wildcard functions/$(1)/*.proto))
fn_srcs = $(filter-out %.bpf.c,$(wildcard functions/$(1).c functions/$(1)/*.c)) \
	$(call fn_protos,$(1))
FN_PROTOS := $(wildcard functions/*/*.proto)
FN_PROTO_HDRS := $(patsubst functions/%.proto,$(BUILD)/gen/%.pb-c.h,$(FN_PROTOS))
FN_PROTO_INC := $(patsubst %/,-I%,$(sort $(dir $(FN_PROTO_HDRS))))
FN_CPPFLAGS += $(FN_PROTO_INC)
# The tests and fuzzers that call a function's code see its messages too.
CPPFLAGS += $(FN_PROTO_INC)
# Kept after a build, as every other generated file is.
.SECONDARY: $(FN_PROTO_HDRS) $(FN_PROTO_HDRS:.h=.c)
FN_SRCS := $(foreach f,$(FN_FILE_NAMES) $(FN_DIR_NAMES),$(call fn_srcs,$(f)))
# functions/NAME.bpf.c (or functions/NAME/NAME.bpf.c): the XDP
# implementation of function NAME, embedded in every binary through a
# generated registration file.
FN_BPF_SRCS := $(wildcard functions/*.bpf.c functions/*/*.bpf.c)
XDPFN_NAMES := $(patsubst %.bpf.c,%,$(notdir $(FN_BPF_SRCS)))
XDPFN_GEN := $(patsubst %,$(BUILD)/gen/xdpfn_%.c,$(XDPFN_NAMES))
BPF_SRCS := $(wildcard kern/*.bpf.c tools/*/*.bpf.c) $(FN_BPF_SRCS)
# A function's XDP program, like its C code, sees include/ alone.
FN_BPF_OBJS := $(patsubst %.bpf.c,$(BUILD)/bpf/%.bpf.o,$(notdir $(FN_BPF_SRCS)))
$(FN_BPF_OBJS): BPF_CFLAGS := $(BPF_BASE_CFLAGS)
TOOL_DIRS := $(sort $(dir $(filter-out %.bpf.c,$(wildcard tools/*/*.c))))
TOOLS := $(patsubst tools/%/,$(BUILD)/%,$(TOOL_DIRS))
TEST_SRCS := $(wildcard tests/unit/*.c tests/bpf/*.c)
# tests/lib/: what the C tests share (the frame builder, the reference
# checksum, helpers), linked into every test program and fuzzer.
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
TESTLIB := $(BUILD)/libtests.a
# A test file DIR/NAME_PART.c beside DIR/NAME.c is a part of test program
# NAME (as functions/ does it): linked into it, not a program of its own.
TEST_STEMS := $(patsubst %.c,%,$(TEST_SRCS))
test_owner = $(firstword $(foreach t,$(filter-out $(1),$(TEST_STEMS)),\
	$(if $(filter $(t)_%,$(1)),$(t))))
test_parts = $(call obj,$(addsuffix .c,$(foreach s,$(TEST_STEMS),\
	$(if $(filter $(1),$(call test_owner,$(s))),$(s)))))
TEST_MAINS := $(foreach s,$(TEST_STEMS),$(if $(call test_owner,$(s)),,$(s)))
# A tier's programs in a directory of their own, so that a unit test and a
# BPF program test may both be named after the feature they test.
TESTS := $(patsubst tests/%,$(BUILD)/tests/%,$(TEST_MAINS))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
BPF_OBJS := $(patsubst %.bpf.c,$(BUILD)/bpf/%.bpf.o,$(notdir $(BPF_SRCS)))
SKELS := $(patsubst %.bpf.c,$(BUILD)/skel/%.skel.h,$(notdir $(BPF_SRCS)))
# The daemon's objects but main (the tests link them) and the library.
DAEMON_LIB := $(BUILD)/libreqrouter.a
RRLIB := $(BUILD)/librr.a
FN_OBJS := $(call obj,$(FN_SRCS) $(XDPFN_GEN))
# The set of functions built in, rewritten only when one is added or
# removed: what links them depends on it, so that a function deleted
# from functions/ goes from the binaries too (a prerequisite that is gone
# never makes a target out of date by itself).
FN_SET := $(BUILD)/functions.set
FN_SET_NOW := $(sort $(FN_FILE_NAMES) $(FN_DIR_NAMES) $(XDPFN_NAMES))
ifneq ($(FN_SET_NOW),$(shell cat $(FN_SET) 2>/dev/null))
$(shell mkdir -p $(BUILD) && echo '$(FN_SET_NOW)' >$(FN_SET))
endif
# Every function also as a module (see the rules below).
MODULES := $(patsubst %,$(BUILD)/functions/%.so,$(FN_FILE_NAMES) $(FN_DIR_NAMES))
TEST_MODULES := $(patsubst tests/modules/%.c,$(BUILD)/tests/modules/%.so,\
	$(wildcard tests/modules/*.c))
# src/ctl/: reqrouterctl, the control client (no functions linked in).
CTL_SRCS := $(wildcard src/ctl/*.c)
ALL_OBJS := $(call obj,$(SRC_MAIN) $(SRC_DAEMON) $(SRC_RRLIB) $(FN_SRCS) $(XDPFN_GEN) \
	$(filter-out %.bpf.c,$(wildcard tools/*/*.c)) $(TEST_SRCS) $(CTL_SRCS) \
	$(TESTLIB_SRCS))

# Shell scripts, for make shellcheck: by name where they have an
# extension, by their #! line in tools/, .ci/, tests/scale/, deploy/ and
# debian/tests/ (the autopkgtests), where most have none.
SH_SCRIPTS := $(sort $(wildcard tests/*.sh tests/*/*.sh tests/*/lib/*.sh \
	tools/*.sh tools/lib/*.sh configs/*.bash-completion) \
	$(shell for f in tools/* .ci/* tests/scale/* deploy/*/* debian/tests/*; do [ -f "$$f" ] && \
		head -n 1 "$$f" | grep -qE '^\#!.*[/ ](ba)?sh$$' && echo "$$f"; done))

# Man pages: help2man turns each program's --help and --version (made from
# its option table) into roff, with the extra sections in man/NAME.h2m, so
# a page cannot document an option the program lacks or miss one it has.
MAN_PAGES := $(BUILD)/man/reqrouter.8 $(BUILD)/man/reqrouterctl.8 \
	$(BUILD)/man/rrload.1
# reqrouter.conf(5) is made from the settings table by reqrouter
# --dump-settings conf-man and kept in the tree (tests/lint/config_drift.sh
# checks it is current), as configs/reqrouter.conf is.
CONF_MAN := man/reqrouter.conf.5

# make install: PREFIX (default /usr/local) and DESTDIR as usual. The
# configuration directory is /etc whatever the prefix, because the unit
# reads its configuration there. The BPF programs are inside the binaries
# (skeletons), so no .o file is installed.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/reqrouter
# The README's links lead into docs/: installed beside it, as docs/.
DOCS := $(wildcard docs/*.md)
UNITDIR ?= $(PREFIX)/lib/systemd/system
# The unit's user (configs/reqrouter.sysusers); install makes it at once
# with systemd-sysusers when installing into the running system.
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# The function modules, for reqrouterctl deploy and --functions-dir.
MODDIR ?= $(PREFIX)/lib/reqrouter/functions
# The function API, for modules built out of tree (examples/function/):
# the headers and a pkg-config file that names them. The headers hold
# nothing of any architecture, hence share/pkgconfig.
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(PREFIX)/share/pkgconfig
API_HEADERS := $(wildcard include/reqrouter/*.h)
# The pkg-config file's function_api variable, from the header itself.
FN_API := $(shell sed -n 's/^\#define RR_FUNCTION_API \([0-9]*\).*/\1/p' \
	include/reqrouter/rr_function.h)
SYSCONFDIR ?= /etc
EXAMPLES := configs/reqrouter.conf configs/kv.txt
# What the monitoring reads, not documentation: the alert rules and the
# dashboard, where Prometheus and Grafana can be pointed at them (minimal
# images strip share/doc, not share/reqrouter).
DATADIR ?= $(PREFIX)/share/reqrouter
MONITORING := configs/reqrouter.rules.yml configs/reqrouter.grafana.json
ETC_CONF := $(DESTDIR)$(SYSCONFDIR)/reqrouter/reqrouter.conf
# The anycast kit (deploy/anycast/, docs/SCALE-OUT.md): the announcer and
# its unit where they run (the unit does nothing until enabled); the BIRD
# and sysctl examples and the drain drop-in under ANYCASTDIR, not in the
# unit's .d directory, where the drop-in would change every instance on
# every host. Their /usr/local/sbin/ becomes SBINDIR.
ANYCASTDIR ?= $(DATADIR)/anycast
ANYCAST_EXAMPLES := $(addprefix deploy/anycast/,bird-host.conf \
	bird-router.conf sysctl-router.conf)
ANYCAST_DROPIN := reqrouter@.service.d/anycast-drain.conf
# Every file install writes but the /etc one (kept while changed).
INSTALLED := $(addprefix $(DESTDIR),$(SBINDIR)/reqrouter \
	$(SBINDIR)/reqrouterctl $(BINDIR)/rrload \
	$(MANDIR)/man8/reqrouter.8 $(MANDIR)/man8/reqrouterctl.8 \
	$(MANDIR)/man1/rrload.1 $(MANDIR)/man5/reqrouter.conf.5 \
	$(UNITDIR)/reqrouter@.service \
	$(SYSUSERSDIR)/reqrouter.conf \
	$(BASHCOMPDIR)/reqrouter $(BASHCOMPDIR)/reqrouterctl \
	$(DOCDIR)/README.md $(DOCDIR)/LICENSE \
	$(addprefix $(DOCDIR)/,$(DOCS)) \
	$(addprefix $(MODDIR)/,$(notdir $(MODULES))) \
	$(addprefix $(INCLUDEDIR)/,$(API_HEADERS:include/%=%)) \
	$(PKGCONFIGDIR)/reqrouter-function.pc \
	$(addprefix $(DOCDIR)/examples/,$(notdir $(EXAMPLES))) \
	$(addprefix $(DATADIR)/,$(notdir $(MONITORING))) \
	$(SBINDIR)/reqrouter-receive-nice \
	$(SBINDIR)/reqrouter-announce $(UNITDIR)/reqrouter-announce@.service \
	$(addprefix $(ANYCASTDIR)/,$(notdir $(ANYCAST_EXAMPLES)) $(ANYCAST_DROPIN)))

.DELETE_ON_ERROR:
# The test programs' objects come in through pattern rules only: kept,
# so that a change to src/ relinks the tests without compiling them again.
.SECONDARY: $(SKELS) $(BPF_OBJS) $(call obj,$(TEST_SRCS))
.PHONY: all clean check test test-san test-fresh test-scale demo sandbox anycast-demo deps bench bench-tier fuzz \
	help format format-check shellcheck drift lint man install uninstall deb

all: $(BUILD)/reqrouter $(BUILD)/reqrouterctl $(TOOLS) $(BPF_OBJS) \
	$(MODULES) $(TEST_MODULES)

help:
	@echo 'make, make all           build reqrouter, reqrouterctl, the tools, the function'
	@echo '                         modules and the BPF objects into $(BUILD)/'
	@echo 'make demo                install the packages it needs, build, serve real'
	@echo '                         requests on a two-namespace test bed, tear it down'
	@echo 'make sandbox             = tools/sandbox up: a bed that stays, reqrouter serving'
	@echo '                         functions/ on it (tools/sandbox down removes it); one'
	@echo '                         per checkout, SANDBOX=NAME for another'
	@echo 'make check               the inner loop, a minute or two: build, make lint, the'
	@echo '                         unit and BPF program tests (no test bed, no ASan)'
	@echo 'make test                install its packages, make lint, build, run every test'
	@echo '                         tier (unit, BPF program, integration); builds on every CPU'
	@echo 'make test-san            the unit tests and tests/run.sh SAN_TESTS under'
	@echo '                         ASan/UBSan, in build/san (CI runs it beside make test)'
	@echo 'make tests-build         build what make test runs: all, the tests, man pages'
	@echo 'make tests-build-san     with SAN=1: what make test-san runs under ASan/UBSan'
	@echo 'make test-fresh          make demo and make test on a minimal Debian 12'
	@echo '                         root made with debootstrap (tools/test-fresh)'
	@echo 'make test-scale          three anycast hosts behind a router: BGP, BFD,'
	@echo '                         ECMP, drain and crash (tests/scale/, under a minute)'
	@echo 'make anycast-demo        that bed step by step (tools/anycast-bed.sh; --hold'
	@echo '                         keeps it up to work on by hand)'
	@echo 'make lint                format-check, shellcheck and drift; make test runs it'
	@echo '                         first'
	@echo 'make format              reformat the C sources with clang-format'
	@echo 'make format-check        fail if clang-format would change a C source'
	@echo 'make shellcheck          check the shell scripts (tools/, tests/, .ci/run)'
	@echo 'make drift               build, then the drift checks (tests/lint/): the docs,'
	@echo '                         man pages, completion and make help against the'
	@echo '                         tables and --help they are made from'
	@echo 'make deps                install every missing Debian package any target needs'
	@echo '                         (tools/install-deps.sh; each target asks for its own)'
	@echo 'make man                 man pages into $(BUILD)/man (help2man)'
	@echo 'make bench               short benchmark run (tools/bench)'
	@echo 'make bench-tier          the in-kernel tier against the bare XDP_TX reflector'
	@echo '                         on two beds, in alternating slices, both placements'
	@echo '                         (tools/bench-tier; BENCH_TIER_ARGS: its options)'
	@echo 'make bench-xdp           the price list of the XDP program: ns per request of'
	@echo '                         each step through BPF_PROG_TEST_RUN, instruction counts'
	@echo '                         (tools/bench-xdp; BENCH_XDP_ARGS: its options)'
	@echo 'make fuzz                = make fuzz-long (tests/fuzz/README.md)'
	@echo 'make fuzz-long           the three long fuzz runs: FUZZ_TIME seconds for'
	@echo '                         each libFuzzer target, FUZZ_XDP_FRAMES frames for XDP'
	@echo 'make fuzz-request-long   one of them: fuzz_request (rr_process)'
	@echo 'make fuzz-dns-long       one of them: fuzz_dns (the dns function)'
	@echo 'make fuzz-xdp-long       one of them: fuzz_xdp (the XDP program)'
	@echo 'make fuzz-short          the short fuzz runs that make test does'
	@echo 'make fuzz-build          build the three fuzzers and their seeds'
	@echo 'make fuzz-request-build  build fuzz_request and its seeds only'
	@echo 'make fuzz-dns-build      build fuzz_dns and its seeds only'
	@echo 'make fuzz-xdp-build      build fuzz_xdp only'
	@echo 'make install             install into $$(DESTDIR)$$(PREFIX) (default /usr/local):'
	@echo '                         binaries, man pages, systemd unit and its user'
	@echo '                         (sysusers.d), bash completion, function modules,'
	@echo '                         the function API headers and reqrouter-function.pc,'
	@echo '                         the alert rules and the Grafana dashboard and the'
	@echo '                         anycast kit (announcer; examples) in share/reqrouter/'
	@echo 'make uninstall           remove what make install put there'
	@echo 'make deb                 install the packaging set, build the Debian packages'
	@echo '                         reqrouter, reqrouter-dev, reqrouter-tools (debian/) of'
	@echo '                         git HEAD into $(BUILD)/deb/; DEB_JOBS (default 2) jobs'
	@echo 'make clean               remove $(BUILD)/'
	@echo 'make help                this list'
	@echo 'Variables: V=1 (show commands), SAN=1 (ASan/UBSan build in build/san),'
	@echo '           CC, CLANG, BUILD, PREFIX, DESTDIR, SYSCONFDIR (default /etc),'
	@echo '           FUZZ_TIME (default 600), FUZZ_XDP_FRAMES (default 10000000)'


deps:
	$(Q)tools/install-deps.sh all

# -rdynamic: function modules call the API (rr_fn_error, ...) in here.
$(BUILD)/reqrouter: $(call obj,$(SRC_MAIN)) $(DAEMON_LIB) $(RRLIB) $(FN_OBJS) \
		$(FN_SET)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -rdynamic -o $@ $(call obj,$(SRC_MAIN)) \
		-Wl,--whole-archive $(DAEMON_LIB) $(RRLIB) -Wl,--no-whole-archive \
		$(FN_OBJS) $(LDLIBS) $(RR_LDLIBS)

# Every function also as a module, build/functions/NAME.so, with
# the entry point reqrouter looks up (src/module/entry.c, which takes it
# from the public include/reqrouter/rr_module.h as an out-of-tree module
# does: examples/function/); tests/modules/ holds modules only the tests
# load. A module sees the public API alone.
# A module exports its entry point alone and binds its own symbols to
# its own definitions: a newer dns.so must use its own tables, not the
# same-named ones compiled into reqrouter (exported by -rdynamic).
# One compiler call builds a module from all its sources, so -MMD can
# record one source's headers only: the function's own headers and the
# public API are named here instead, and a change to any rebuilds it.
MODULE_FLAGS := -fPIC -shared -fvisibility=hidden -Wl,-Bsymbolic
# The link's hardening (relro, now) but -pie, which makes no library.
MODULE_LDFLAGS = $(filter-out -pie,$(LDFLAGS))
API_HDRS := $(wildcard include/reqrouter/*.h)
.SECONDEXPANSION:
$(BUILD)/functions/%.so: $$(call fn_srcs,$$*) src/module/entry.c \
		$$(wildcard functions/$$*/*.h) $(API_HDRS) $(FN_PROTO_HDRS)
	@mkdir -p $(@D)
	$(call msg,MODULE,$@)
	$(Q)$(CC) $(FN_CPPFLAGS) $(CFLAGS) $(MODULE_FLAGS) $(MODULE_LDFLAGS) -o $@ \
		$(filter %.c,$^) $(FN_PKG_LIBS)
# A hostile test module knows reqrouter's layouts: kern/shared/ is theirs.
$(BUILD)/tests/modules/%.so: tests/modules/%.c src/module/entry.c $(API_HDRS)
	@mkdir -p $(@D)
	$(call msg,MODULE,$@)
	$(Q)$(CC) $(FN_CPPFLAGS) -Ikern $(CFLAGS) $(MODULE_FLAGS) $(MODULE_LDFLAGS) -o $@ \
		$(filter %.c,$^)

$(BUILD)/reqrouterctl: $(call obj,$(CTL_SRCS)) $(RRLIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(call obj,$(CTL_SRCS)) $(RRLIB) $(LDLIBS) \
		$(JSONC_LIBS)

$(DAEMON_LIB): $(call obj,$(SRC_DAEMON))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(RRLIB): $(call obj,$(SRC_RRLIB))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
# The daemon's headers are the daemon's and the tests' (reqrouterctl
# finds what it needs of the control socket in src/lib/ctlcmd.h). The
# daemon includes its own with quotes only: src/daemon/seccomp.h must not
# hide libseccomp's <seccomp.h>.
$(call obj,$(SRC_MAIN) $(SRC_DAEMON)): CPPFLAGS += $(DAEMON_INC)
$(call obj,$(FN_SRCS)): CPPFLAGS := $(FN_CPPFLAGS)

# Each tools/NAME/ directory is one program.
define tool_rule
$(BUILD)/$(1): $(call obj,$(filter-out %.bpf.c,$(wildcard tools/$(1)/*.c))) $(RRLIB) $(FN_OBJS) \
		$(FN_SET)
	$$(call msg,LINK,$$@)
	$$(Q)$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $(RRLIB) $$(LDLIBS) -lm
endef
$(foreach t,$(patsubst tools/%/,%,$(TOOL_DIRS)),$(eval $(call tool_rule,$(t))))
# sgbase's io_uring baseline (tools/sgbase/uring.c) links liburing.
$(BUILD)/sgbase: LDLIBS += -luring

$(TESTLIB): $(call obj,$(TESTLIB_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/obj/tests/%.o: CPPFLAGS += -Itests/lib $(DAEMON_INC) -Ifunctions/dns

$(BUILD)/tests/unit/%: $(BUILD)/obj/tests/unit/%.o \
		$$(call test_parts,tests/unit/$$*) $(TESTLIB) $(DAEMON_LIB) $(RRLIB) $(FN_OBJS) \
		$(FN_SET) | $(BUILD)/tests/unit
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(call test_parts,tests/unit/$*) \
		$(FN_OBJS) $(TESTLIB) $(DAEMON_LIB) $(RRLIB) $(LDLIBS) \
		$(SECCOMP_LIBS) -lcmocka

$(BUILD)/tests/bpf/%: $(BUILD)/obj/tests/bpf/%.o \
		$$(call test_parts,tests/bpf/$$*) $(TESTLIB) $(DAEMON_LIB) $(RRLIB) $(FN_OBJS) \
		$(FN_SET) | $(BUILD)/tests/bpf
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(call test_parts,tests/bpf/$*) \
		$(FN_OBJS) $(TESTLIB) $(DAEMON_LIB) $(RRLIB) $(LDLIBS) \
		$(SECCOMP_LIBS)

$(BUILD)/obj/%.o: %.c | $(SKELS) $(FN_PROTO_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

vpath %.bpf.c kern $(sort $(dir $(FN_BPF_SRCS) $(wildcard tools/*/*.bpf.c)))
$(BUILD)/bpf/%.bpf.o: %.bpf.c | $(BUILD)/bpf
	$(call msg,BPF,$<)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c -o $@ $<

# The gathers' merges take a ticket and count with atomics that return the
# old value (BPF_FETCH, BPF_CMPXCHG): instruction set v3, kernel 5.12.
$(BUILD)/bpf/reqrouter.bpf.o: BPF_CFLAGS += -mcpu=v3

$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.bpf.o | $(BUILD)/skel
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

$(XDPFN_GEN): $(BUILD)/gen/xdpfn_%.c: | $(BUILD)/gen
	$(call msg,GEN,$@)
	$(Q)printf '%s\n' '/* Generated by the Makefile from $*.bpf.c in functions/. */' \
		'#include "registry.h"' '#include "$*.skel.h"' \
		'RR_XDP_IMPL($*);' > $@

# A function's protobuf messages in C (functions/NAME/*.proto), with the
# Debian protobuf-c compiler; made, never kept in the tree.
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: functions/%.proto
	@mkdir -p $(@D)
	$(call msg,PROTOC,$<)
	$(Q)protoc-c --proto_path=$(<D) --c_out=$(@D) $<

man: $(MAN_PAGES)

# A page names where make install puts the docs (@DOCDIR@ in man/*.h2m),
# so it is made again when DOCDIR changes: the stamp holds the last one.
$(BUILD)/man/docdir: FORCE | $(BUILD)/man
	$(Q)echo '$(DOCDIR)' | cmp -s - $@ || echo '$(DOCDIR)' >$@
FORCE:

# Without help2man, one line says so (make stops as it expands the
# recipe, so only when a page is to be made).
HELP2MAN := $(shell command -v help2man 2>/dev/null)
need_help2man = $(if $(HELP2MAN),,$(error help2man is missing, and the man \
	pages ($@) need it: apt-get install help2man, or make deps))
$(BUILD)/man/%.8: $(BUILD)/% man/%.h2m $(BUILD)/man/docdir | $(BUILD)/man
	$(need_help2man)
	$(call msg,MAN,$@)
	$(Q)sed 's|@DOCDIR@|$(DOCDIR)|g' man/$*.h2m >$(BUILD)/man/$*.h2m
	$(Q)help2man -N -s 8 --include $(BUILD)/man/$*.h2m -o $@ $(abspath $<)

$(BUILD)/man/%.1: $(BUILD)/% man/%.h2m $(BUILD)/man/docdir | $(BUILD)/man
	$(need_help2man)
	$(call msg,MAN,$@)
	$(Q)sed 's|@DOCDIR@|$(DOCDIR)|g' man/$*.h2m >$(BUILD)/man/$*.h2m
	$(Q)help2man -N -s 1 --include $(BUILD)/man/$*.h2m -o $@ $(abspath $<)

# What it installs, and no more (not the other tools, not the tests'
# modules): the package builds through here.
install: $(BUILD)/reqrouter $(BUILD)/reqrouterctl $(BUILD)/rrload $(MODULES) \
		$(MAN_PAGES)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR)/docs \
		$(DESTDIR)$(SYSCONFDIR)/reqrouter \
		$(DESTDIR)$(MODDIR) $(DESTDIR)$(INCLUDEDIR)/reqrouter \
		$(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(ANYCASTDIR)/$(dir $(ANYCAST_DROPIN))
	$(Q)install -m 0644 $(MODULES) $(DESTDIR)$(MODDIR)/
	$(Q)install -m 0644 $(API_HEADERS) $(DESTDIR)$(INCLUDEDIR)/reqrouter/
	$(Q)printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$(INCLUDEDIR)' \
		'moduledir=$(MODDIR)' 'function_api=$(FN_API)' '' \
		'Name: reqrouter-function' \
		'Description: the reqrouter function API, for function modules' \
		'Version: $(RR_VERSION)' 'Cflags: -I$${includedir}' \
		>$(DESTDIR)$(PKGCONFIGDIR)/reqrouter-function.pc
	$(Q)chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/reqrouter-function.pc
	$(Q)install -m 0755 $(BUILD)/reqrouter $(BUILD)/reqrouterctl \
		$(DESTDIR)$(SBINDIR)/
	$(Q)install -m 0755 deploy/reqrouter-receive-nice $(DESTDIR)$(SBINDIR)/
	$(Q)install -m 0755 $(BUILD)/rrload $(DESTDIR)$(BINDIR)/
	$(Q)install -m 0644 $(BUILD)/man/reqrouter.8 $(BUILD)/man/reqrouterctl.8 \
		$(DESTDIR)$(MANDIR)/man8/
	$(Q)install -m 0644 $(BUILD)/man/rrload.1 $(DESTDIR)$(MANDIR)/man1/
	$(Q)install -m 0644 $(CONF_MAN) $(DESTDIR)$(MANDIR)/man5/
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		configs/reqrouter@.service.in >$(DESTDIR)$(UNITDIR)/reqrouter@.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/reqrouter@.service
	$(Q)install -m 0644 configs/reqrouter.sysusers \
		$(DESTDIR)$(SYSUSERSDIR)/reqrouter.conf
	$(Q)if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then \
		systemd-sysusers $(SYSUSERSDIR)/reqrouter.conf; \
	fi
	$(Q)install -m 0644 configs/reqrouter.bash-completion \
		$(DESTDIR)$(BASHCOMPDIR)/reqrouter
	$(Q)install -m 0644 configs/reqrouter.bash-completion \
		$(DESTDIR)$(BASHCOMPDIR)/reqrouterctl
	$(Q)install -m 0644 README.md LICENSE $(DESTDIR)$(DOCDIR)/
	$(Q)install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/docs/
	$(Q)install -m 0644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/
	$(Q)install -m 0644 $(MONITORING) $(DESTDIR)$(DATADIR)/
	$(Q)if [ -e $(ETC_CONF) ]; then \
		echo "  KEEP     $(ETC_CONF) (exists)"; \
	else \
		install -m 0644 configs/service.conf $(ETC_CONF); \
	fi
	$(Q)install -m 0755 deploy/anycast/reqrouter-announce $(DESTDIR)$(SBINDIR)/
	$(Q)sed 's|/usr/local/sbin/|$(SBINDIR)/|g' \
		deploy/anycast/reqrouter-announce@.service \
		>$(DESTDIR)$(UNITDIR)/reqrouter-announce@.service
	$(Q)sed 's|/usr/local/sbin/|$(SBINDIR)/|g' deploy/anycast/$(ANYCAST_DROPIN) \
		>$(DESTDIR)$(ANYCASTDIR)/$(ANYCAST_DROPIN)
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/reqrouter-announce@.service \
		$(DESTDIR)$(ANYCASTDIR)/$(ANYCAST_DROPIN)
	$(Q)install -m 0644 $(ANYCAST_EXAMPLES) $(DESTDIR)$(ANYCASTDIR)/

# Removes what install put, and the /etc file only while it is unchanged.
uninstall:
	$(call msg,UNINST,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(INSTALLED)
	$(Q)if cmp -s configs/service.conf $(ETC_CONF); then \
		rm -f $(ETC_CONF); \
	elif [ -e $(ETC_CONF) ]; then \
		echo "  KEEP     $(ETC_CONF) (changed since install)"; \
	fi
	$(Q)rmdir --ignore-fail-on-non-empty $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(DOCDIR)/docs \
		$(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/reqrouter \
		$(DESTDIR)$(MODDIR) $(DESTDIR)$(dir $(MODDIR)) \
		$(DESTDIR)$(INCLUDEDIR)/reqrouter \
		$(DESTDIR)$(ANYCASTDIR)/$(dir $(ANYCAST_DROPIN)) \
		$(DESTDIR)$(ANYCASTDIR) $(DESTDIR)$(DATADIR)

# The Debian packages: reqrouter, reqrouter-dev and reqrouter-tools
# (debian/control says what each holds). tools/deb-source writes the
# source into $(BUILD)/deb/src: in a git checkout the commit HEAD (git
# archive), saying loudly when the tree has changes the package leaves
# out; elsewhere the tree, its version marked VERSION~tree. There
# dpkg-buildpackage runs debian/rules (which builds and runs make install
# into debian/tmp), so that neither the tree nor its parent directory
# gets dpkg's files; the .debs land in $(BUILD)/deb/. A clean
# environment: this make's variables (BUILD, PREFIX, DESTDIR...) must not
# reach the package's own make. Not checked (the tests need root and
# namespaces: make test, service_deb.sh), and no -dbgsym package.
DEB_ARCH = $(shell dpkg --print-architecture 2>/dev/null)
DEB_JOBS ?= 2
deb:
	$(Q)tools/install-deps.sh packaging
	$(Q)for c in dpkg-buildpackage dpkg-parsechangelog dh; do \
		command -v $$c >/dev/null || { echo "make deb: no $$c (make deps installs it)" >&2; \
			exit 1; }; done
	$(Q)rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/src
	$(Q)tools/deb-source $(BUILD)/deb/src
	$(Q)v=$$(dpkg-parsechangelog -l $(BUILD)/deb/src/debian/changelog -S Version) && \
		printf '  %-8s %s\n' DEB "$(BUILD)/deb/reqrouter{,-dev,-tools}_$${v}_*.deb"
	$(Q)cd $(BUILD)/deb/src && env -i PATH="$$PATH" HOME="$$HOME" LANG=C.UTF-8 \
		DEB_BUILD_OPTIONS="nocheck noautodbgsym $(DEB_BUILD_OPTIONS)" \
		dpkg-buildpackage -b -us -uc -J$(DEB_JOBS) >../build.log 2>&1 || \
		{ tail -n 40 ../build.log >&2; \
		  echo "make deb: dpkg-buildpackage failed (log: $(BUILD)/deb/build.log)" >&2; \
		  exit 1; }
	$(Q)v=$$(dpkg-parsechangelog -l $(BUILD)/deb/src/debian/changelog -S Version) && \
		ls $(BUILD)/deb/reqrouter_$${v}_$(DEB_ARCH).deb \
		$(BUILD)/deb/reqrouter-dev_$${v}_all.deb \
		$(BUILD)/deb/reqrouter-tools_$${v}_$(DEB_ARCH).deb >/dev/null

$(BUILD)/bpf $(BUILD)/skel $(BUILD)/tests/unit $(BUILD)/tests/bpf $(BUILD)/gen \
		$(BUILD)/man:
	$(Q)mkdir -p $@

tests-build: all $(TESTS) man
# What the sanitizer pass of make test runs (tests/run.sh): all but the
# man pages (invoker_cli_errors.sh checks every tool's command line).
tests-build-san: $(BUILD)/reqrouter $(BUILD)/reqrouterctl $(TOOLS) \
	$(BPF_OBJS) $(MODULES) $(TEST_MODULES) $(TESTS)
.PHONY: tests-build tests-build-san

# make test builds and lints on every CPU, unless it was given -j itself.
TEST_JOBS = $(if $(findstring -j,$(MAKEFLAGS)),,\
	-j$(shell nproc 2>/dev/null || echo 1))
# The static checks and the drift checks beside the build (a failure there
# needs no test bed), then every tier against the normal build. The pass
# under ASan/UBSan is test-san's: CI runs both (.ci/run), and make test
# stays within its 12 minutes on two cores, in a fresh root too.
test:
	$(Q)tools/install-deps.sh test
	$(Q)$(MAKE) --no-print-directory $(TEST_JOBS) --output-sync=target \
		lint tests-build
	$(Q)BUILD=build tests/run.sh

# The unit tests and tests/run.sh's SAN_TESTS against an ASan/UBSan build.
test-san:
	$(Q)tools/install-deps.sh test
	$(Q)$(MAKE) --no-print-directory $(TEST_JOBS) --output-sync=target \
		tests-build
	$(Q)$(MAKE) --no-print-directory $(TEST_JOBS) SAN=1 tests-build-san
	$(Q)SAN_ONLY=1 BUILD=build SAN_BUILD=build/san tests/run.sh unit integration

# The inner loop: the build, make lint (drift checks included) and the
# unit and BPF program tests, on every CPU; no test bed and no sanitizer
# build, which make test adds.
check:
	$(Q)tools/install-deps.sh test
	$(Q)$(MAKE) --no-print-directory $(TEST_JOBS) --output-sync=target \
		lint tests-build
	$(Q)BUILD=$(BUILD) tests/run.sh unit bpf

# The README's set-up on a minimal Debian 12 root: catches a missing
# install step that this machine's own packages would hide.
test-fresh:
	$(Q)tools/test-fresh

demo:
	$(Q)tools/install-deps.sh demo
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh

# A bed that stays, serving functions/ (tools/sandbox; down removes it):
# this checkout's, or SANDBOX=NAME's.
sandbox:
	$(Q)tools/install-deps.sh sandbox
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/sandbox $(if $(SANDBOX),--name $(SANDBOX)) up

# Several hosts behind a router, anycast over BGP and ECMP (tests/scale/,
# deploy/anycast/): kept out of make test so that it stays short.
test-scale:
	$(Q)tools/install-deps.sh test anycast
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/scale/run

anycast-demo:
	$(Q)tools/install-deps.sh anycast
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/anycast-bed.sh

bench:
	$(Q)tools/install-deps.sh bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench

# Issue 48's figure (tools/bench-tier; BENCH_TIER_ARGS are its options,
# e.g. --reps 5 --out bench/tier).
bench-tier: $(BUILD)/reqrouter $(BUILD)/reflector $(BUILD)/rrload
	$(Q)tools/install-deps.sh bench
	$(Q)BUILD=$(BUILD) tools/bench-tier --no-build $(BENCH_TIER_ARGS)

# Every C file in the tree, whatever its folder.
C_FILES = $(shell git ls-files '*.[ch]' 2>/dev/null || \
	find include src kern functions tools tests -name '*.[ch]')
format:
	$(Q)clang-format -i $(C_FILES)

format-check:
	$(Q)clang-format --dry-run --Werror $(C_FILES)

# -x: follow the files the scripts source (tools/testbed.sh, tools/lib/*.sh,
# common.sh), run from the top directory as the scripts' source lines expect.
# One stamp per script, so make -j checks them side by side and a script
# is checked again only when it, or a file it may source, has changed.
SH_LIBS := $(wildcard tools/testbed.sh tools/lib/*.sh tests/*/lib/*.sh)
SH_STAMPS := $(patsubst %,$(BUILD)/shellcheck/%.ok,$(SH_SCRIPTS))
$(BUILD)/shellcheck/%.ok: % $(SH_LIBS)
	@mkdir -p $(@D)
	$(Q)shellcheck -x $< && touch $@
shellcheck: $(SH_STAMPS)
	$(call msg,SHCHECK,$(words $(SH_SCRIPTS)) scripts)

# The drift checks (tests/lint/): what the docs, the man pages, the
# completion and make help say against the tables and --help they are
# made from. They need the binaries and the man pages, not root.
drift: $(BUILD)/reqrouter $(BUILD)/reqrouterctl $(MAN_PAGES)
	$(Q)BUILD=$(BUILD) tests/run.sh lint

lint: format-check shellcheck drift

clean:
	$(Q)rm -rf $(BUILD)

# Extra rules that belong to one tool or test tier live beside it.
-include $(wildcard tools/*/build.mk tests/*/build.mk)
-include $(ALL_OBJS:.o=.d) $(BPF_OBJS:.o=.d)
