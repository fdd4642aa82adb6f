# SPDX-License-Identifier: GPL-2.0
# Build: BPF objects -> skeletons -> one binary, xdpreplay.
#   make            build              make V=1     show full commands
#   make test       all tests          make demo    the main job on the test bed
#   make vmlinux    regenerate vmlinux/vmlinux.h from the running kernel's BTF
#   make bench      benchmarks (scripts/bench-*.sh)

# The one place that says which clang builds BPF: clang-14 cannot build kfunc/kptr code.
BPF_CLANG ?= $(firstword $(shell command -v clang-16 clang-19 2>/dev/null))
CC ?= gcc
BPFTOOL ?= bpftool
OUTPUT := .output
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

PKGS := libbpf libxdp libelf zlib libpcap libcrypto json-c libmicrohttpd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
	  -std=gnu11 -D_GNU_SOURCE -DXR_VERSION='"$(VERSION)"' \
	  -I$(OUTPUT) -Ibpf -Iuser $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -lpthread -lm
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Ibpf \
	      -Wall -Werror -Wno-compare-distinct-pointer-types

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(wildcard user/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/%.o,$(USER_SRCS))
# Modules without libbpf state, linked into the unit tests too.
LIB_OBJS := $(filter-out $(OUTPUT)/main.o,$(USER_OBJS))

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all clean test demo vmlinux bench check-clang
.DELETE_ON_ERROR:
.SECONDARY:

all: check-clang xdpreplay tests/unit

check-clang:
	@test -n "$(BPF_CLANG)" || { echo "error: no clang-16 or clang-19 for BPF (run scripts/deps.sh)" >&2; exit 1; }

$(OUTPUT):
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(OUTPUT)/%.o: user/%.c $(wildcard user/*.h) bpf/xdpreplay.h $(SKELS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# the AES-NI precompute (user/aesni.c) only; it runs where the CPU says it can
$(OUTPUT)/aesni.o: CFLAGS += -maes -mssse3

xdpreplay: $(USER_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

tests/unit: tests/unit.c $(LIB_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

vmlinux:
	$(call msg,GEN,vmlinux/vmlinux.h)
	$(Q)$(BPFTOOL) btf dump file $(or $(VMLINUX_BTF),/sys/kernel/btf/vmlinux) format c > vmlinux/vmlinux.h

# test, demo and bench install what they need first (scripts/deps.sh is the one place for that),
# then build with a fresh make so that the clang just installed is found.
test:
	$(Q)bash scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bash tests/run.sh

demo:
	$(Q)bash scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bash scripts/demo.sh

bench:
	$(Q)bash scripts/deps.sh --bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)for b in scripts/bench-*.sh; do bash $$b || exit 1; done

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) xdpreplay tests/unit
