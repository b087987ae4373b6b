# SPDX-License-Identifier: GPL-2.0
#
# tests/bpf/progs/NAME.bpf.c: XDP programs only the BPF tests load, built as
# a function's XDP program is (the public include/ alone) and embedded in
# the test that includes build/skel/NAME.skel.h.
TEST_BPF_OBJS := $(patsubst tests/bpf/progs/%.bpf.c,$(BUILD)/bpf/%.bpf.o,\
	$(wildcard tests/bpf/progs/*.bpf.c))
.SECONDARY: $(TEST_BPF_OBJS)
$(TEST_BPF_OBJS): $(BUILD)/bpf/%.bpf.o: tests/bpf/progs/%.bpf.c | $(BUILD)/bpf
	$(call msg,BPF,$<)
	$(Q)$(CLANG) -O2 -g -target bpf -Wall -Werror -I$(ARCH_INC) -Iinclude \
		-MMD -MP -c -o $@ $<
$(BUILD)/obj/tests/bpf/tier_verdict.o: $(BUILD)/skel/verdict_fn.skel.h
-include $(TEST_BPF_OBJS:.o=.d)
