# SPDX-License-Identifier: GPL-2.0
#
# xdpprice loads reqrouter's XDP program the way the BPF program tests do
# (tests/lib/xdptest.c, which calls the daemon's src/daemon/core/xdp.c),
# and configures it with the daemon's own feature code: it links the
# tests' library and the daemon's objects, and sees their headers.
XDPPRICE_OBJS := $(call obj,$(filter-out %.bpf.c,$(wildcard tools/xdpprice/*.c)))
$(XDPPRICE_OBJS): CPPFLAGS += -Itests/lib $(DAEMON_INC)
$(BUILD)/xdpprice: $(TESTLIB) $(DAEMON_LIB)
$(BUILD)/xdpprice: LDLIBS := $(TESTLIB) $(DAEMON_LIB) $(RRLIB) $(LDLIBS) \
	$(SECCOMP_LIBS)

# The price list on this machine (tools/bench-xdp; BENCH_XDP_ARGS are
# its options, e.g. --repeat 1000000 --cpu 1 --json).
.PHONY: bench-xdp
bench-xdp: $(BUILD)/xdpprice
	$(Q)BUILD=$(BUILD) tools/bench-xdp --no-build $(BENCH_XDP_ARGS)
