# SPDX-License-Identifier: GPL-2.0
#
# reqrouter build. Sources are found by wildcard:
#   src/*.c             -> build/reqrouter (and build/libreqrouter.a, without main)
#   functions/*.c       -> linked into reqrouter and every tool and test
#   functions/*.bpf.c   -> the functions' XDP programs, embedded likewise
#   kern/*.bpf.c, tools/*/*.bpf.c -> build/bpf/NAME.bpf.o + build/skel/NAME.skel.h
#   tools/NAME/*.c      -> build/NAME
#   tests/unit/*.c, tests/bpf/*.c -> build/tests/NAME
#   functions/*.pkgs    -> pkg-config names whose flags every object and
#                          binary gets (a function's libraries)
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
ARCH_INC := /usr/include/$(shell $(CC) -dumpmachine)

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	  -D_GNU_SOURCE -pthread
CPPFLAGS += -Isrc -Ifunctions -Ikern -I$(BUILD)/skel -MMD -MP
LDLIBS += -lxdp -lbpf -lelf -lz -linih -lcap-ng -lpthread
# Libraries the functions need: functions/NAME.pkgs lists pkg-config names
# (whitespace-separated, '#' comments). Every binary links every function,
# so their flags go everywhere; FN_PKG_LIBS also reaches the fuzzers'
# clang links (tests/fuzz/build.mk).
FN_PKGS := $(sort $(shell sed 's/\#.*//' $(wildcard functions/*.pkgs) /dev/null))
ifneq ($(FN_PKGS),)
ifneq ($(shell pkg-config --exists $(FN_PKGS) 2>/dev/null && echo ok),ok)
$(warning functions need pkg-config packages '$(FN_PKGS)' that pkg-config cannot find: make deps)
endif
FN_PKG_CFLAGS := $(shell pkg-config --cflags $(FN_PKGS) 2>/dev/null)
FN_PKG_LIBS := $(shell pkg-config --libs $(FN_PKGS) 2>/dev/null)
endif
CPPFLAGS += $(FN_PKG_CFLAGS)
LDLIBS += $(FN_PKG_LIBS)
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
BPF_CFLAGS := -O2 -g -target bpf -Wall -Werror -I$(ARCH_INC) -Ikern -Ifunctions

SRC_MAIN := src/main.c
SRC_LIB := $(filter-out $(SRC_MAIN),$(wildcard src/*.c))
FN_SRCS := $(filter-out %.bpf.c,$(wildcard functions/*.c))
# functions/NAME.bpf.c: the XDP implementation of function NAME, embedded
# in every binary through a generated registration file.
XDPFN_NAMES := $(patsubst functions/%.bpf.c,%,$(wildcard functions/*.bpf.c))
XDPFN_GEN := $(patsubst %,$(BUILD)/gen/xdpfn_%.c,$(XDPFN_NAMES))
BPF_SRCS := $(wildcard kern/*.bpf.c tools/*/*.bpf.c functions/*.bpf.c)
TOOL_DIRS := $(sort $(dir $(filter-out %.bpf.c,$(wildcard tools/*/*.c))))
TOOLS := $(patsubst tools/%/,$(BUILD)/%,$(TOOL_DIRS))
TEST_SRCS := $(wildcard tests/unit/*.c tests/bpf/*.c)
TESTS := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(TEST_SRCS)))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
BPF_OBJS := $(patsubst %.bpf.c,$(BUILD)/bpf/%.bpf.o,$(notdir $(BPF_SRCS)))
SKELS := $(patsubst %.bpf.c,$(BUILD)/skel/%.skel.h,$(notdir $(BPF_SRCS)))
LIB := $(BUILD)/libreqrouter.a
FN_OBJS := $(call obj,$(FN_SRCS) $(XDPFN_GEN))
ALL_OBJS := $(call obj,$(SRC_MAIN) $(SRC_LIB) $(FN_SRCS) $(XDPFN_GEN) \
	$(filter-out %.bpf.c,$(wildcard tools/*/*.c)) $(TEST_SRCS))

.DELETE_ON_ERROR:
.SECONDARY: $(SKELS) $(BPF_OBJS)
.PHONY: all clean test test-fresh demo deps bench fuzz help format format-check

all: $(BUILD)/reqrouter $(TOOLS) $(BPF_OBJS)

help:
	@echo 'make            build build/reqrouter, the tools and BPF objects'
	@echo 'make demo       install packages, build, serve real requests on a'
	@echo '                two-namespace test bed and tear it down'
	@echo 'make test       install packages, build and run every test tier,'
	@echo '                then the unit and invoker tests again under ASan/UBSan'
	@echo 'make test-fresh make demo and make test on a minimal Debian 12'
	@echo '                root made with debootstrap (tools/test-fresh)'
	@echo 'make deps       install missing Debian packages (apt-get)'
	@echo 'make bench      short benchmark run (tools/bench)'
	@echo 'make format     reformat C sources with clang-format'
	@echo 'make clean      remove build/'
	@echo 'Variables: V=1 (show commands), SAN=1 (ASan/UBSan build)'

deps:
	$(Q)tools/install-deps.sh

$(BUILD)/reqrouter: $(call obj,$(SRC_MAIN)) $(LIB) $(FN_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(call obj,$(SRC_MAIN)) $(FN_OBJS) $(LIB) $(LDLIBS)

$(LIB): $(call obj,$(SRC_LIB))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Each tools/NAME/ directory is one program.
define tool_rule
$(BUILD)/$(1): $(call obj,$(filter-out %.bpf.c,$(wildcard tools/$(1)/*.c))) $(LIB) $(FN_OBJS)
	$$(call msg,LINK,$$@)
	$$(Q)$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $(LIB) $$(LDLIBS) -lm
endef
$(foreach t,$(patsubst tools/%/,%,$(TOOL_DIRS)),$(eval $(call tool_rule,$(t))))

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB) $(FN_OBJS) | $(BUILD)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(FN_OBJS) $(LIB) $(LDLIBS) -lcmocka

$(BUILD)/tests/%: $(BUILD)/obj/tests/bpf/%.o $(LIB) $(FN_OBJS) | $(BUILD)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(FN_OBJS) $(LIB) $(LDLIBS)

$(BUILD)/obj/%.o: %.c | $(SKELS)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

vpath %.bpf.c kern functions $(sort $(dir $(wildcard tools/*/*.bpf.c)))
$(BUILD)/bpf/%.bpf.o: %.bpf.c | $(BUILD)/bpf
	$(call msg,BPF,$<)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.bpf.o | $(BUILD)/skel
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

$(XDPFN_GEN): $(BUILD)/gen/xdpfn_%.c: | $(BUILD)/gen
	$(call msg,GEN,$@)
	$(Q)printf '%s\n' '/* Generated by the Makefile from functions/$*.bpf.c. */' \
		'#include "registry.h"' '#include "$*.skel.h"' \
		'RR_XDP_IMPL($*);' > $@

$(BUILD)/bpf $(BUILD)/skel $(BUILD)/tests $(BUILD)/gen:
	$(Q)mkdir -p $@

tests-build: all $(TESTS)
.PHONY: tests-build

# Every tier against the normal build, then again under ASan/UBSan.
test: deps
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)$(MAKE) --no-print-directory SAN=1 tests-build
	$(Q)BUILD=build SAN_BUILD=build/san tests/run.sh

# The README's set-up on a minimal Debian 12 root: catches a missing
# install step that this machine's own packages would hide.
test-fresh:
	$(Q)tools/test-fresh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench

format:
	$(Q)clang-format -i $(wildcard src/*.[ch] kern/*.[ch] functions/*.[ch] \
		tools/*/*.[ch] tests/*/*.[ch])

format-check:
	$(Q)clang-format --dry-run --Werror $(wildcard src/*.[ch] kern/*.[ch] \
		functions/*.[ch] tools/*/*.[ch] tests/*/*.[ch])

clean:
	$(Q)rm -rf $(BUILD)

# Extra rules that belong to one tool or test tier live beside it.
-include $(wildcard tools/*/build.mk tests/*/build.mk)
-include $(ALL_OBJS:.o=.d) $(BPF_OBJS:.o=.d)
