# frac top-level Makefile.
#   make            build what exists: QEMU with the FRAC-1 device, and the sub-projects
#   make run        the main job: boot the guest with FRAC-1 and show it
#   make test       deps check + build + emulator tests + guest tests, with a summary
#   make fuzz       a long run of the uAPI fuzzer: DURATION=<secs> [SEED=n] [FUZZ_ARGS=...]
#   make deps       install the Debian packages (root)
#   make install    tools, libfrac, man pages, the udev rule, the DKMS source (PREFIX, DESTDIR)
#   make uninstall  remove what make install installed (same PREFIX, DESTDIR)
#   make test-pkg   build the .debs from a git archive of HEAD, install, run in the guest, purge
# Variables: V=1 verbose, VM_ARGS="..." extra scripts/vm options, FRAC_CACHE=dir cache root.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
MAKEFLAGS += --no-print-directory

RESULTS  := results/test
SUBDIRS  := $(patsubst %/Makefile,%,$(wildcard kernel/Makefile lib/Makefile tools/fracbench/Makefile tools/fracload/Makefile tools/fractop/Makefile bpf/Makefile tests/emulator/Makefile tests/guest/driver/Makefile tests/guest/fuzz/Makefile))
QEMU_BIN  = $(shell scripts/build-qemu.sh --print-path 2>/dev/null)
VM       := scripts/vm $(if $(V),,-q) $(VM_ARGS)

.PHONY: all qemu subdirs $(SUBDIRS) deps run install-build install uninstall test-pkg bench regress perf-doc fuzz test test-kernel test-host test-regress test-regress-guest test-emulator test-guest \
	test-debug test-controls test-iommu test-bounce debug-kernel summary clean

all: qemu subdirs

qemu:
	@scripts/build-qemu.sh >/dev/null

subdirs: $(SUBDIRS)
$(SUBDIRS):
	@echo "  MAKE    $@"
	@$(MAKE) -C $@ $(if $(V),,-s) >/dev/null
tests/guest/driver: lib
tests/guest/fuzz: lib
# fractop builds fraclat's skeleton through bpf/'s Makefile: not both at once under -j
tools/fractop: bpf
# libfrac.mk links lib/libfrac.a: build it once, before its users, under -j
bpf tools/fracbench tools/fracload tests/emulator: lib

deps:
	@scripts/deps.sh

# The version, from one place: debian/changelog's first entry (a native package: no revision).
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
# make install: what the Debian packages ship, for any PREFIX (scripts/install has the list).
# Not QEMU, not the emulator, not the tests. LIBDIR: Debian's rules pass the multiarch one.
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
SBINDIR      ?= $(PREFIX)/sbin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
DATADIR      ?= $(PREFIX)/share
MANDIR       ?= $(DATADIR)/man
UDEVRULESDIR ?= /lib/udev/rules.d
DKMSDIR      ?= /usr/src
INSTALL_DIRS = DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" BINDIR="$(BINDIR)" SBINDIR="$(SBINDIR)" \
	LIBDIR="$(LIBDIR)" INCLUDEDIR="$(INCLUDEDIR)" DATADIR="$(DATADIR)" MANDIR="$(MANDIR)" \
	UDEVRULESDIR="$(UDEVRULESDIR)" DKMSDIR="$(DKMSDIR)" VERSION="$(VERSION)"
install-build: lib bpf tools/fracbench tools/fracload tools/fractop
	@echo "  MAN     man/out"
	@man/gen man/out
install: install-build
	@$(INSTALL_DIRS) scripts/install install
	@echo "installed frac $(VERSION) under $(DESTDIR)$(PREFIX); DKMS source in $(DESTDIR)$(DKMSDIR)/frac-$(VERSION)"
uninstall:
	@$(INSTALL_DIRS) scripts/install uninstall

run: deps all
	@$(VM) --qemu "$(QEMU_BIN)" --prop fault-injection=on -- scripts/demo.sh

# P1-P4 side by side with QEMU's NVMe in one guest run; REPS=N (default 5)
bench: deps all
	@tools/fracbench/bench $(REPS)

# HEAD against BASE (default: the merge base with the upstream, else HEAD~1), both built here
# and measured in alternating slices in one guest; report in results/regress/latest/; exit 3
# on a confirmed regression. REGRESS_ARGS: more tools/regress/regress options (--inject K=V, --aa,
# --cap N, ...).
regress: deps all
	@tools/regress/regress $(if $(BASE),--base $(BASE)) $(REGRESS_ARGS)

# docs/performance.md's generated section, from the run files in docs/bench-runs/ (a store
# built in a temporary file). To keep a make bench run there: tools/regress/fracregress
# import-bench results/bench/latest.json --export docs/bench-runs/<its stamp>.json, then
# make perf-doc.
perf-doc:
	@ls docs/bench-runs/*.json >/dev/null 2>&1 || \
		{ echo "perf-doc: no run file in docs/bench-runs/" >&2; exit 2; }
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	LC_ALL=C tools/regress/fracregress --db "$$d/runs.db" add docs/bench-runs/*.json >/dev/null && \
	tools/regress/fracregress --db "$$d/runs.db" history --source docs/bench-runs \
		--update docs/performance.md

# A long run of the uAPI fuzzer (tests/guest/fuzz.sh): DURATION=<secs> (default 600), SEED=n,
# FUZZ_ARGS="--avoid-known --procs 4 ..."; TAP, op logs and console in results/fuzz/.
DURATION ?= 600
fuzz: qemu kernel lib tests/guest/fuzz
	@rm -rf results/fuzz; mkdir -p results/fuzz
	@rc=0; $(VM) --qemu "$(QEMU_BIN)" --prop fault-injection=on --timeout $$(( $(DURATION) + 900 )) \
		--out results/fuzz --env FRAC_FUZZ_DURATION=$(DURATION) \
		$(if $(SEED),--env FRAC_FUZZ_SEED=$(SEED)) $(if $(FUZZ_ARGS),--env "FRAC_FUZZ_ARGS=$(FUZZ_ARGS)") \
		-- scripts/tap-run /run/frac-out tests/guest/fuzz.sh || rc=$$?; \
	scripts/tap-summary results/fuzz || rc=1; exit $$rc

# The tests: tests/run knows the lanes (tests/run --list), their inputs, their cache and their
# summary; make test runs every lane, make test-LANE one (after what it needs is built). See
# tests/README.md. FRAC_NO_CACHE=1 (or tests/run --no-cache) reruns lanes whose inputs are
# unchanged instead of reusing their verdict.
test: deps
	@tests/run

test-kernel:
	@tests/run kernel
test-host:
	@tests/run host
test-regress:
	@tests/run regress-host
test-emulator: qemu tests/emulator
	@tests/run emulator
test-guest: qemu subdirs
	@tests/run guest guest-qmp
test-debug: qemu
	@tests/run debug
test-controls: qemu
	@tests/run controls
test-iommu: qemu subdirs
	@tests/run iommu
test-bounce: qemu subdirs
	@tests/run bounce
test-regress-guest: qemu kernel tools/fracbench bpf
	@tests/run regress-guest
test-pkg: qemu
	@tests/run pkg

debug-kernel:
	@scripts/build-debug-kernel.sh >/dev/null

summary:
	@echo "== summary"
	@scripts/tap-summary $(RESULTS) $(wildcard $(RESULTS)/guest $(RESULTS)/guest-qmp $(RESULTS)/debug $(RESULTS)/iommu $(RESULTS)/bounce)

clean:
	@for d in $(SUBDIRS); do $(MAKE) -C $$d clean >/dev/null || true; done
	@rm -rf results man/out
