# SPDX-License-Identifier: GPL-2.0
#
# The fuzzers (tests/fuzz/README.md), included by the top-level Makefile.
#   $(BUILD)/fuzz/fuzz_request  libFuzzer + ASan/UBSan over rr_serve_unlimited(); its
#                               sources are built here with clang, apart
#                               from the gcc-built library
#   $(BUILD)/fuzz/fuzz_dns      libFuzzer + ASan/UBSan over the dns
#                               function's handler, DNS messages in
#   $(BUILD)/fuzz/fuzz_xdp      the XDP program under bpf_prog_test_run_opts,
#                               its in-kernel tier against rr_serve()
#   $(BUILD)/fuzz/seeds/        seed corpus written by gen_seeds
#   $(BUILD)/fuzz/dns-seeds/    fuzz_dns's, written by gen_dns_seeds
# make fuzz-build builds them, make fuzz-short runs the make-test versions,
# make fuzz (= fuzz-long) the long ones.

FUZZ_DIR := $(BUILD)/fuzz
FUZZ_TIME ?= 600
FUZZ_XDP_FRAMES ?= 10000000

FUZZ_CFLAGS := -O1 -g -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	-D_GNU_SOURCE -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
# The functions and what their init() calls (function API 2: settings,
# counters, the setting readers; config.c reads --fn-config files; API 4:
# the gather calls; rr_fn_log(), reqrouter's log, which routes libbpf's
# and libxdp's).
FUZZ_FN_SRCS := src/lib/registry.c src/lib/module.c src/lib/function.c \
	src/lib/fn_setting.c src/lib/config.c src/lib/config_values.c \
	src/lib/settings.c src/lib/parse.c src/lib/gather.c src/lib/log.c \
	$(FN_SRCS)
FUZZ_FN_LIBS := $(FN_PKG_LIBS) -linih -ldl -lxdp -lbpf
FUZZ_REQ_SRCS := tests/fuzz/fuzz_request.c tests/lib/frames.c \
	src/lib/packet.c $(FUZZ_FN_SRCS)
FUZZ_REQ_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_REQ_SRCS))
FUZZ_DNS_SRCS := tests/fuzz/fuzz_dns.c $(FUZZ_FN_SRCS)
FUZZ_DNS_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_DNS_SRCS))
# fuzz_xdp is fuzz_xdp.c and its parts, fuzz_xdp_*.c.
FUZZ_XDP_OBJS := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/host/%.o,\
	$(wildcard tests/fuzz/fuzz_xdp*.c))
FUZZ_HOST_OBJS := $(FUZZ_XDP_OBJS) \
	$(patsubst %,$(FUZZ_DIR)/host/%.o,gen_seeds gen_dns_seeds)

.PHONY: fuzz-build fuzz-request-build fuzz-dns-build fuzz-xdp-build fuzz-short fuzz-long fuzz-request-long fuzz-dns-long fuzz-xdp-long

fuzz-build: fuzz-request-build fuzz-dns-build fuzz-xdp-build
fuzz-request-build: $(FUZZ_DIR)/fuzz_request $(FUZZ_DIR)/seeds/.stamp
fuzz-dns-build: $(FUZZ_DIR)/fuzz_dns $(FUZZ_DIR)/dns-seeds/.stamp
fuzz-xdp-build: $(FUZZ_DIR)/fuzz_xdp

# Instrumented for coverage and sanitizers; libFuzzer's main() comes in at
# link time only.
$(FUZZ_DIR)/obj/%.o: %.c | $(FN_PROTO_HDRS)
	@mkdir -p $(@D)
	$(call msg,FUZZCC,$<)
	$(Q)$(CLANG) $(CPPFLAGS) -Itests/lib $(DAEMON_INC) -Ifunctions/dns $(FUZZ_CFLAGS) \
		-fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_DIR)/fuzz_request: $(FUZZ_REQ_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_FN_LIBS)

$(FUZZ_DIR)/fuzz_dns: $(FUZZ_DNS_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_FN_LIBS)

# The XDP fuzzer and the seed generator are ordinary programs.
$(FUZZ_DIR)/host/%.o: tests/fuzz/%.c | $(SKELS)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CPPFLAGS) -Itests/lib $(DAEMON_INC) -Ifunctions/dns $(CFLAGS) -c -o $@ $<

# The functions (and their generated XDP registrations) are objects, not
# archive members, so the linker keeps the registry's sections.
$(FUZZ_DIR)/fuzz_xdp: $(FUZZ_XDP_OBJS) $(FN_OBJS) $(TESTLIB) $(DAEMON_LIB) $(RRLIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(TESTLIB) $(DAEMON_LIB) $(RRLIB) $(LDLIBS)

$(FUZZ_DIR)/gen_seeds: $(FUZZ_DIR)/host/gen_seeds.o $(TESTLIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

$(FUZZ_DIR)/seeds/.stamp: $(FUZZ_DIR)/gen_seeds
	$(call msg,SEEDS,$(@D))
	$(Q)rm -rf $(@D) && mkdir -p $(@D) && $< $(@D) && touch $@

$(FUZZ_DIR)/gen_dns_seeds: $(FUZZ_DIR)/host/gen_dns_seeds.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

$(FUZZ_DIR)/dns-seeds/.stamp: $(FUZZ_DIR)/gen_dns_seeds
	$(call msg,SEEDS,$(@D))
	$(Q)rm -rf $(@D) && mkdir -p $(@D) && $< $(@D) && touch $@

fuzz-short: fuzz-build
	$(Q)bash tests/integration/packet_fuzz.sh
	$(Q)bash tests/integration/dns_fuzz.sh
	$(Q)bash tests/integration/packet_fuzz_xdp.sh

fuzz-long: fuzz-request-long fuzz-dns-long fuzz-xdp-long

fuzz-request-long: fuzz-build
	$(Q)tests/fuzz/run-request.sh -t $(FUZZ_TIME) -c $(FUZZ_DIR)/corpus

fuzz-dns-long: fuzz-build
	$(Q)tests/fuzz/run-dns.sh -t $(FUZZ_TIME) -c $(FUZZ_DIR)/dns-corpus

# 77: not root, already said why.
fuzz-xdp-long: fuzz-build
	$(Q)tests/fuzz/run-xdp.sh -n $(FUZZ_XDP_FRAMES) || [ $$? -eq 77 ]

fuzz: fuzz-long

-include $(sort $(FUZZ_REQ_OBJS:.o=.d) $(FUZZ_DNS_OBJS:.o=.d)) $(FUZZ_HOST_OBJS:.o=.d)
