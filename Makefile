# SPDX-License-Identifier: GPL-2.0
# Build: BPF objects -> skeletons -> one binary, xdpreplay.
#   make            build              make V=1     show full commands
#   make test       all tests          make demo    the main job on the test bed
#   make vmlinux    regenerate vmlinux/vmlinux.h from the running kernel's BTF
#   make bench      benchmarks (scripts/bench-*.sh)
#   make vmtest KERNEL=6.1 TESTS=count/   tests inside a VM of Debian's kernel (5.10, 6.1, 6.12, newest)
#   make matrix     the smoke pass on all four kernels, written to docs/kernels.md
#   make format     clang-format the C and BPF sources    make format-check  what CI runs
#   make man        man pages (.output/man)   make install / uninstall   PREFIX=/usr/local DESTDIR=

# The one place that says which clang builds BPF: clang-14 cannot build kfunc/kptr code.
BPF_CLANG ?= $(firstword $(shell command -v clang-16 clang-19 2>/dev/null))
CC ?= gcc
BPFTOOL ?= bpftool
OUTPUT := .output
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

PKGS := libbpf libxdp libelf zlib libcrypto json-c libmicrohttpd libcurl libmosquitto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# A search across senders under MPI when MPICH is installed (make MPI= builds without it)
MPI ?= $(shell pkg-config --exists mpich 2>/dev/null && echo mpich)
ifneq ($(MPI),)
PKG_CFLAGS += -DXR_MPI $(shell pkg-config --cflags $(MPI))
PKG_LIBS += $(shell pkg-config --libs $(MPI))
endif

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
	  -std=gnu11 -D_GNU_SOURCE -DXR_VERSION='"$(VERSION)"' \
	  -I$(OUTPUT) -Ibpf -Iuser $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -lpthread -lm
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Ibpf \
	      -Wall -Werror -Wno-compare-distinct-pointer-types

# Whatever the folders hold: bpf/*.bpf.c are programs (one skeleton each), bpf/**/*.h their
# headers; user/**/*.c one binary. A new protocol's files are found without naming them here.
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_HDRS := $(shell find bpf -name '*.h')
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(shell find user -name '*.c' | sort)
USER_HDRS := $(shell find user -name '*.h')
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
# Everything but main(), linked into the unit tests and the fuzz targets too.
LIB_OBJS := $(filter-out $(OUTPUT)/user/cmd/main.o,$(USER_OBJS))

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# make install: PREFIX (default /usr/local) and DESTDIR as usual; the binary carries its BPF objects.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
DATADIR ?= $(PREFIX)/share/xdpreplay

.PHONY: all clean test demo vmlinux bench vmtest matrix check-clang fuzz fuzz-build fuzz-ci sanitize format format-check \
	man install uninstall
.DELETE_ON_ERROR:
.SECONDARY:

all: check-clang xdpreplay tests/unit man

check-clang:
	@test -n "$(BPF_CLANG)" || { echo "error: no clang-16 or clang-19 for BPF (run scripts/deps.sh)" >&2; exit 1; }

$(OUTPUT):
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) vmlinux/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(OUTPUT)/user/%.o: user/%.c $(USER_HDRS) $(BPF_HDRS) $(SKELS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# the AES-NI precompute only; it runs where the CPU says it can
$(OUTPUT)/user/proto/lorawan/aesni.o: CFLAGS += -maes -mssse3

xdpreplay: $(USER_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Man pages: one per command, made from the binary's own --help (scripts/mkman.py)
man: $(OUTPUT)/man/xdpreplay.8

$(OUTPUT)/man/xdpreplay.8: xdpreplay scripts/mkman.py
	$(call msg,MAN,$(OUTPUT)/man)
	$(Q)rm -rf $(OUTPUT)/man && python3 scripts/mkman.py ./xdpreplay $(OUTPUT)/man

install: xdpreplay man
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(DATADIR)
	install -m 0755 xdpreplay $(DESTDIR)$(SBINDIR)/xdpreplay
	install -m 0644 $(OUTPUT)/man/*.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 scripts/completion.bash $(DESTDIR)$(COMPLETIONDIR)/xdpreplay
	install -m 0644 scripts/grafana-dashboard.json $(DESTDIR)$(DATADIR)/grafana-dashboard.json

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/xdpreplay $(DESTDIR)$(MANDIR)/man8/xdpreplay.8 \
		$(DESTDIR)$(MANDIR)/man8/xdpreplay-*.8 $(DESTDIR)$(COMPLETIONDIR)/xdpreplay \
		$(DESTDIR)$(DATADIR)/grafana-dashboard.json

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
	$(Q)$(MAKE) --no-print-directory format-check
	$(Q)$(MAKE) --no-print-directory -j2 all
	$(Q)$(MAKE) --no-print-directory -j2 sanitize fuzz-build
	$(Q)bash tests/run.sh

# Debian's kernel (tests/vm/kernel.sh fetches and caches it) under QEMU, this checkout inside
KERNEL ?= 6.12
vmtest:
	$(Q)bash scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory -j2 all
	$(Q)bash tests/vm/vmtest.sh -k $(KERNEL) -- bash tests/run.sh $(TESTS)

matrix:
	$(Q)bash scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory -j2 all
	$(Q)bash tests/vm/matrix.sh -d docs/kernels.md

demo:
	$(Q)bash scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory -j2 all
	$(Q)bash scripts/demo.sh

bench:
	$(Q)bash scripts/deps.sh --bench
	$(Q)$(MAKE) --no-print-directory -j2 all
	$(Q)for b in scripts/bench-*.sh; do [ $$b = scripts/bench-lib.sh ] || bash $$b || exit 1; done
	$(Q)python3 scripts/bench_report.py docs

# Fuzz targets (tests/fuzz/fuzz_*.c): libFuzzer with ASan and UBSan, built with clang-16 against
# the same modules. `make fuzz` runs each for FUZZ_SECS (default 600), `make fuzz-ci` for 20 s;
# corpora live in tests/fuzz/corpus/NAME and grow as the fuzzer finds new paths.
FUZZ_CC ?= clang-16
FUZZ_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
FUZZ_LIB_OBJS := $(patsubst $(OUTPUT)/%.o,$(OUTPUT)/fuzz/%.o,$(LIB_OBJS))
FUZZ_SECS ?= 600

$(OUTPUT)/fuzz/user/%.o: user/%.c $(USER_HDRS) $(BPF_HDRS) $(SKELS)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(filter-out -Werror,$(CFLAGS)) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(OUTPUT)/fuzz/user/proto/lorawan/aesni.o: CFLAGS += -maes -mssse3

$(OUTPUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(FUZZ_LIB_OBJS)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(filter-out -Werror,$(CFLAGS)) $(FUZZ_FLAGS) -fsanitize=fuzzer $(filter-out %.h,$^) $(LDLIBS) -o $@

fuzz-build: check-clang $(FUZZ_BINS)

fuzz: fuzz-build
	$(Q)FUZZ_SECS=$(FUZZ_SECS) bash tests/fuzz/run.sh

fuzz-ci: fuzz-build
	$(Q)FUZZ_SECS=20 bash tests/fuzz/run.sh

# The unit tests and the binary with ASan and UBSan (float-cast-overflow too), for tests/run.sh.
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_OBJS := $(patsubst $(OUTPUT)/%.o,$(OUTPUT)/san/%.o,$(USER_OBJS))

$(OUTPUT)/san/user/%.o: user/%.c $(USER_HDRS) $(BPF_HDRS) $(SKELS)
	@mkdir -p $(@D)
	$(call msg,SAN-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(OUTPUT)/san/user/proto/lorawan/aesni.o: CFLAGS += -maes -mssse3

xdpreplay-san: $(SAN_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ $(LDLIBS) -o $@

tests/unit-san: tests/unit.c $(filter-out $(OUTPUT)/san/user/cmd/main.o,$(SAN_OBJS))
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ $(LDLIBS) -o $@

sanitize: check-clang xdpreplay-san tests/unit-san

# Formatting is mechanical: .clang-format (kernel style, 100 columns), one pinned clang-format.
CLANG_FORMAT ?= clang-format-16
FORMAT_SRCS = $(shell find bpf user tests -name '*.[ch]' -not -path '*/corpus/*' -not -path '*/seeds/*' | sort)

format:
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_SRCS)

format-check:
	$(call msg,FORMAT,$(words $(FORMAT_SRCS)) files)
	$(Q)$(CLANG_FORMAT) --dry-run -Werror $(FORMAT_SRCS) 2>&1 | head -n 20; \
	 $(CLANG_FORMAT) --dry-run -Werror $(FORMAT_SRCS) >/dev/null 2>&1 || \
	 { echo "format-check: run 'make format' (clang-format-16) and commit" >&2; exit 1; }

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) xdpreplay tests/unit xdpreplay-san tests/unit-san
