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
	test-debug test-controls test-iommu debug-kernel summary clean

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

# Every test target records TAP under $(RESULTS)/ and keeps going; `summary` decides.
# The build is a test too (build.tap): a component that fails to build is reported, and the
# tests still run with what did build.
# lane NAME: run `make NAME KEEP_GOING=1` and append its wall time to $(RESULTS)/lane-times.txt,
# which the summary prints (README and tests/guest/README.md quote these).
lane = s=$$(date +%s); $(MAKE) $(1) KEEP_GOING=1; \
	echo "$(1) $$(( $$(date +%s) - s ))" >> $(RESULTS)/lane-times.txt
# A debug kernel not in the cache (a fresh machine) is built in the background from the start,
# at nice 19: it takes the cores the build and the stock lanes leave idle, and test-debug's own
# scripts/build-debug-kernel.sh waits on the cache lock for it rather than starting over.
test: deps
	@rm -rf $(RESULTS); mkdir -p $(RESULTS); date +%s > $(RESULTS)/.test-start
	@if ! scripts/build-debug-kernel.sh --print-path > /dev/null 2>&1; then \
		echo "== debug kernel not cached: building it in the background (nice 19; log: $(RESULTS)/debug-kernel-bg.log)"; \
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL nohup nice -n 19 scripts/build-debug-kernel.sh \
			> $(RESULTS)/debug-kernel-bg.log 2>&1 < /dev/null & \
	fi
	@echo "== build"
	@date +%s > $(RESULTS)/.build-start
	@n=0; t=$(RESULTS)/build.tap; echo "1..$(words qemu $(SUBDIRS))" > $$t; \
	for c in qemu $(SUBDIRS); do n=$$((n + 1)); \
		if $(MAKE) $$c > $(RESULTS)/build-$${c//\//-}.log 2>&1; then echo "ok $$n - build $$c"; \
		else echo "not ok $$n - build $$c (log: $(RESULTS)/build-$${c//\//-}.log)"; \
			tail -n 15 $(RESULTS)/build-$${c//\//-}.log | sed 's/^/# /'; fi; \
	done | tee -a $$t; echo 0 > $(RESULTS)/build.rc
	@echo "build $$(( $$(date +%s) - $$(cat $(RESULTS)/.build-start) ))" >> $(RESULTS)/lane-times.txt
	@$(call lane,test-kernel)
	@$(call lane,test-host)
	@$(call lane,test-regress)
	@$(call lane,test-emulator)
	@$(call lane,test-guest)
	@$(call lane,test-debug)
	@$(call lane,test-controls)
	@$(call lane,test-iommu)
	@$(call lane,test-regress-guest)
	@$(call lane,test-pkg)
	@echo "== summary"
	@echo "wall time per lane (s): $$(tr '\n' ' ' < $(RESULTS)/lane-times.txt)total $$(( \
		$$(date +%s) - $$(cat $(RESULTS)/.test-start) ))"
	@scripts/tap-summary $(TAP_DIRS)

# W=1, sparse and checkpatch --strict on frac.ko
test-kernel:
	@mkdir -p $(RESULTS)
	@echo "== kernel static checks"
	@rc=0; scripts/tap-lane $(RESULTS)/kernel.tap bash kernel/check.sh || rc=$$?; \
		[ -n "$(KEEP_GOING)" ] || exit $$rc

# Host unit tests, no guest: tools/fractop (fdinfo parser, model, formatting, layout, JSON/CSV
# writers, and fractop itself on a fixture /proc and /sys). A build failure leaves a TAP file
# without results, which tap-summary counts as a failure.
test-host:
	@mkdir -p $(RESULTS)
	@echo "== host tests (tools/fractop, scripts/kcheck)"
	@rc=0; scripts/tap-lane $(RESULTS)/host-fractop.tap \
		bash -c '$(MAKE) -C tools/fractop -s >/dev/null && tools/fractop/tests/run.sh' || rc=$$?; \
	scripts/tap-lane $(RESULTS)/host-kcheck.tap tests/host/kcheck-test.sh || rc=$$?; \
	scripts/tap-lane $(RESULTS)/host-verdict.tap tests/host/verdict-test.sh || rc=$$?; \
	[ -n "$(KEEP_GOING)" ] || exit $$rc

# Host tests of tools/regress (fracregress): change points on synthetic series, A/A and A/B
# verdicts, stage attribution, the store on SQLite and on a PostgreSQL server the test starts
# and stops, the HTML report rendered by headless chromium. About 1 minute on 2 cores.
test-regress:
	@mkdir -p $(RESULTS)
	@echo "== host tests (tools/regress)"
	@rc=0; scripts/tap-lane $(RESULTS)/host-regress.tap tools/regress/tests/run.py || rc=$$?; \
		[ -n "$(KEEP_GOING)" ] || exit $$rc

# The A/B harness in a guest (tools/regress/tests/guest-ab.sh): an A/A of two identical
# devices and an injected completion latency, one boot (215 s here on a loaded host).
test-regress-guest: qemu kernel tools/fracbench bpf
	@mkdir -p $(RESULTS)
	@echo "== guest tests (tools/regress: A/A and an injected regression)"
	@rc=0; scripts/tap-lane $(RESULTS)/regress-guest.tap \
		tools/regress/tests/guest-ab.sh $(RESULTS)/regress-guest || rc=$$?; \
		[ -n "$(KEEP_GOING)" ] || exit $$rc

# The Debian packages end to end (tests/pkg/run.sh): built with dpkg-buildpackage in a git
# archive of HEAD, lintian, make install/uninstall into a DESTDIR, the man pages against --help,
# then installed with apt (DKMS builds frac.ko), frac.ko loaded with modprobe and a workload
# run with the installed tools in one guest, and purged, checking that nothing is left. It
# installs into / (root) and purges on any exit. Committed changes only: it builds HEAD.
test-pkg: qemu
	@mkdir -p $(RESULTS)
	@echo "== package tests (debs, DKMS, udev, man pages; one boot)"
	@rc=0; QEMU="$(QEMU_BIN)" scripts/tap-lane $(RESULTS)/pkg.tap tests/pkg/run.sh $(RESULTS)/pkg || \
		rc=$$?; [ -n "$(KEEP_GOING)" ] || exit $$rc

test-emulator: qemu
	@mkdir -p $(RESULTS)
	@if [ -x tests/emulator/run.sh ] || [ -f tests/emulator/run.sh ]; then \
		echo "== emulator tests"; \
		rc=0; QEMU="$(QEMU_BIN)" scripts/tap-lane $(RESULTS)/emulator.tap bash tests/emulator/run.sh || \
			rc=$$?; [ -n "$(KEEP_GOING)" ] || exit $$rc; \
	else echo "== emulator tests: tests/emulator/run.sh not present, skipped"; fi
	@echo "== emulator static checks (QEMU checkpatch.pl, guest errors, names)"
	@rc=0; QEMU="$(QEMU_BIN)" scripts/tap-lane $(RESULTS)/emulator-checkpatch.tap \
		bash tests/emulator/checkpatch.sh || rc=$$?; [ -n "$(KEEP_GOING)" ] || exit $$rc

# One boot per group of device properties: tests/guest/*.sh with fault injection on; then
# tests/guest/qmp/*.sh (AER, unplug) with a QMP socket that tests/host/qmp-agent.py serves for
# them, and native PCIe hotplug (with ACPI hotplug, QEMU's root port never shows its link
# active again after a bus reset, so a fatal error's recovery fails).
# The stock boot runs every tests/guest/*.sh: at load average 8-10, scripts/vm's default 600 s
# killed it in perf-scripts, the ninth of thirteen runners. GUEST_TIMEOUT: seconds.
GUEST_TIMEOUT ?= 2400
# KFENCE, in the stock kernel but off by default: on, it samples one allocation every 100 ms
# for use-after-free and out-of-bounds accesses, which the runners' dmesg check catches (BUG:).
STOCK_APPEND := --append kfence.sample_interval=100
GUEST_QMP_VM_ARGS := --prop fault-injection=on --qmp $(RESULTS)/qmp.sock \
	--qemu-arg -global --qemu-arg ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off
test-guest: qemu
	@mkdir -p $(RESULTS)
	@echo "== guest tests (one boot: $(notdir $(wildcard tests/guest/*.sh)))"
	@rm -rf $(RESULTS)/guest
	@rc=0; $(VM) --qemu "$(QEMU_BIN)" --prop fault-injection=on --timeout $(GUEST_TIMEOUT) \
		$(STOCK_APPEND) --out $(RESULTS)/guest -- \
		scripts/tap-run /run/frac-out $(wildcard tests/guest/*.sh) || rc=$$?; \
	[ -n "$$(ls $(RESULTS)/guest/*.tap 2>/dev/null)" ] || \
		{ printf 'not ok 1 - guest boot (exit %s: %s see %s)\n' $$rc \
			"$$(scripts/boot-why $(RESULTS)/guest)" $(RESULTS)/guest/console.log \
			> $(RESULTS)/guest-boot.tap; echo 1 > $(RESULTS)/guest-boot.rc; }; \
	if [ -n "$(wildcard tests/guest/qmp/*.sh)" ]; then \
		echo "== guest tests driven over QMP (one boot: $(notdir $(wildcard tests/guest/qmp/*.sh)))"; \
		rm -rf $(RESULTS)/guest-qmp $(RESULTS)/qmp.sock; qrc=0; \
		tests/host/qmp-agent.py --socket $(RESULTS)/qmp.sock --dir $(RESULTS)/guest-qmp/qmp & \
		agent=$$!; \
		$(VM) --qemu "$(QEMU_BIN)" $(GUEST_QMP_VM_ARGS) $(STOCK_APPEND) --out $(RESULTS)/guest-qmp -- \
			scripts/tap-run /run/frac-out $(wildcard tests/guest/qmp/*.sh) || qrc=$$?; \
		kill $$agent 2>/dev/null || true; wait $$agent 2>/dev/null || true; \
		[ -n "$$(ls $(RESULTS)/guest-qmp/*.tap 2>/dev/null)" ] || \
			{ printf 'not ok 1 - guest boot (exit %s: %s see %s)\n' $$qrc \
				"$$(scripts/boot-why $(RESULTS)/guest-qmp)" \
				$(RESULTS)/guest-qmp/console.log > $(RESULTS)/guest-qmp-boot.tap; \
				echo 1 > $(RESULTS)/guest-qmp-boot.rc; }; \
		[ $$qrc = 0 ] || rc=$$qrc; \
	fi; [ -n "$(KEEP_GOING)" ] || exit $$rc

# The debug-kernel lane: scripts/build-debug-kernel.sh (KASAN, lockdep, kmemleak, debug objects,
# fault injection; built once, cached under $(FRAC_CACHE)), then one boot per group with
# scripts/test-debug; scripts/kcheck fails a group on the first kernel report in its console
# log, a taint other than O/E, lockdep turned off, or a kmemleak suspect after frac's unload,
# even when every test passed. The IOMMU lane: the same with -device intel-iommu, where a DMAR
# fault fails too. See tests/guest/README.md.
DEBUG_GROUPS := driver faults \
	$(patsubst tests/guest/%.sh,%,$(wildcard tests/guest/errinj.sh tests/guest/fuzz*.sh \
		tests/guest/regress.sh)) reload removal pcie
IOMMU_GROUPS := driver faults
# The IOMMU lane runs on the stock kernel (the debug kernel's driver group alone takes 4-10x
# longer); IOMMU_ARGS= runs it on the debug kernel. DEBUG_BUDGET=S (seconds, kernel build
# included): test-debug starts no group after S, and each group not started fails; unset in
# make test, where every group runs.
IOMMU_ARGS   ?= --stock
DEBUG_BUDGET ?=
# Groups booted at a time in the debug lane (scripts/test-debug --jobs).
DEBUG_JOBS ?= 2
TAP_DIRS     := $(RESULTS) $(RESULTS)/guest $(RESULTS)/guest-qmp $(RESULTS)/debug $(RESULTS)/iommu
debug-kernel:
	@scripts/build-debug-kernel.sh >/dev/null

test-debug: qemu
	@mkdir -p $(RESULTS)
	@echo "== debug kernel lane (one boot per group: $(DEBUG_GROUPS))"
	@rm -rf $(RESULTS)/debug
	@rc=0; scripts/test-debug --qemu "$(QEMU_BIN)" --jobs $(DEBUG_JOBS) \
		$(if $(DEBUG_BUDGET),--budget $(DEBUG_BUDGET)) \
		$(if $(DEBUG_DEADLINE),--deadline $(DEBUG_DEADLINE)) \
		--results $(RESULTS)/debug $(DEBUG_GROUPS) || rc=$$?; \
	[ -n "$(KEEP_GOING)" ] || exit $$rc

# The debug lane's negative controls (tests/controls/run.sh): one debug-kernel boot loads a
# test-only module that commits one bug per checker (KASAN, lockdep, kmemleak, UBSAN, DMA-API
# debug, hung task); each passes only when scripts/kcheck fails that bug's part of the log.
test-controls: qemu
	@mkdir -p $(RESULTS)
	@echo "== debug lane controls (one boot: each checker must fire and fail kcheck)"
	@rc=0; QEMU="$(QEMU_BIN)" scripts/tap-lane $(RESULTS)/controls.tap tests/controls/run.sh \
		$(RESULTS)/controls || rc=$$?; [ -n "$(KEEP_GOING)" ] || exit $$rc

test-iommu: qemu
	@mkdir -p $(RESULTS)
	@echo "== IOMMU lane: intel-iommu (one boot per group: $(IOMMU_GROUPS))"
	@rm -rf $(RESULTS)/iommu
	@rc=0; scripts/test-debug --iommu $(IOMMU_ARGS) --qemu "$(QEMU_BIN)" --results $(RESULTS)/iommu \
		$(IOMMU_GROUPS) || rc=$$?; [ -n "$(KEEP_GOING)" ] || exit $$rc

summary:
	@echo "== summary"
	@scripts/tap-summary $(TAP_DIRS)

clean:
	@for d in $(SUBDIRS); do $(MAKE) -C $$d clean >/dev/null || true; done
	@rm -rf results man/out
