#!/usr/bin/env bash
# The debug lane's negative controls: is each checker the lane relies on alive, and does
# scripts/kcheck fail the lane when it fires? One boot of the debug kernel
# (scripts/build-debug-kernel.sh) loads tests/controls/module's kcheck_ctl.ko once per bug
# (tests/controls/guest.sh, under scripts/kcheck-guest as a debug group runs), then each bug's
# part of the kernel log is judged alone by the real scripts/kcheck, which must fail it naming
# the report the bug's checker prints:
#   uaf       KASAN: slab-use-after-free
#   abba      lockdep: possible circular locking dependency
#   oob       UBSAN: array-index-out-of-bounds
#   dma-size  DMA-API debug: an unmap of another size than the map
#   dma-held  DMA-API debug: a mapping still held when the driver unbinds
#   hung      hung-task detection: a task blocked in D state
#   leak      kmemleak: the suspect, in the scan after the run (the whole boot's kcheck)
# and the whole boot's kcheck must fail too, with every checker it requires active. The boot has
# a FRAC-1 and no frac.ko: the DMA bugs bind kcheck_ctl to it as a PCI driver.
# A control that is not caught is a failure of this lane. Prints TAP.
#
# Usage: tests/controls/run.sh [OUTDIR]   (default results/test/controls)
# Environment: QEMU (default: scripts/build-qemu.sh), KCHECK_REQUIRE (as scripts/test-debug).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:-$REPO/results/test/controls}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
cd "$REPO"
REQUIRE=${KCHECK_REQUIRE-kasan,lockdep,kmemleak,dma-api,ubsan,hung-task}
n=0 fail=0
res() { n=$((n + 1)); if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
diag() { sed 's/^/#   /'; }
echo "TAP version 13"

QEMU=${QEMU:-$(scripts/build-qemu.sh 2> "$OUT/qemu.log" | tail -n1)}
K=$(scripts/build-debug-kernel.sh 2> "$OUT/kernel.log" | tail -n1)
if [ ! -x "$QEMU" ] || [ ! -f "$K/done" ]; then
	res fail "the debug kernel and QEMU (logs: $OUT/kernel.log, $OUT/qemu.log)"
	echo "1..$n"; exit 1
fi
# The module from a snapshot, built against the debug kernel's build kit.
rm -rf "$OUT/module"; cp -r tests/controls/module "$OUT/module"
if make -C "$OUT/module" KDIR="$K/build" > "$OUT/module.log" 2>&1 && [ -f "$OUT/module/kcheck_ctl.ko" ]; then
	res ok "kcheck_ctl.ko against the debug kernel $(cat "$K/kernelrelease")"
else
	res fail "kcheck_ctl.ko against the debug kernel (log: $OUT/module.log)"
	tail -n 20 "$OUT/module.log" | diag
	echo "1..$n"; exit 1
fi
vm=$OUT/boot
rm -rf "$vm"
scripts/vm --qemu "$QEMU" -q --out "$vm" --timeout 900 --kernel "$K/bzImage" \
	--bind "$K/modules/lib/modules:/lib/modules" --env KCHECK_CTL_KO="$OUT/module/kcheck_ctl.ko" \
	-- scripts/kcheck-guest /run/frac-out tests/controls/guest.sh > "$vm.stdout" 2>&1
vrc=$?
if [ -f "$vm/guest.tap" ] && [ "$(cat "$vm/guest.rc" 2>/dev/null)" = 0 ] && [ -f "$vm/kcheck/done" ]; then
	res ok "the controls' guest loaded every bug and ran to the end"
else
	res fail "the controls' guest loaded every bug and ran to the end (vm exit $vrc: $(scripts/boot-why "$vm" "$vm.stdout"))"
	{ cat "$vm/guest.tap" 2>/dev/null; tail -n 20 "$vm.stdout"; } | diag
fi

# control BUG PATTERN DESC: kcheck on BUG's part of the log alone fails check 2 with PATTERN
control() {
	local bug=$1 pat=$2 desc=$3 d=$OUT/$1 out rc
	rm -rf "$d"; mkdir -p "$d/kcheck"
	awk -v b="kcheck-ctl: begin $bug\$" -v e="kcheck-ctl: end $bug\$" \
		'{ sub(/\r$/, "") } $0 ~ b { on = 1 } on { print } on && $0 ~ e { exit }' "$vm/console.log" \
		> "$d/console.log" 2>/dev/null
	# Everything but the log is a clean run's, so that only the report can fail it.
	touch "$d/kcheck/done"; echo 12288 > "$d/kcheck/tainted"; echo 1 > "$d/kcheck/debug_locks"
	: > "$d/kcheck/kmemleak"; echo yes > "$d/kcheck/frac-unloaded"; echo 0 > "$d/kcheck/dma-api-errors"
	cp "$vm/kcheck/checkers" "$d/kcheck/" 2>/dev/null
	if ! grep -q "kcheck-ctl: end $bug\$" "$d/console.log"; then
		res fail "control $bug: $desc (its part of the kernel log is missing or cut short)"
		return
	fi
	out=$(scripts/kcheck --name "ctl $bug" --require "$REQUIRE" "$d" 2>&1); rc=$?
	if [ "$rc" = 1 ] && grep -q -E "^not ok 2 - ctl $bug: no kernel report in the console log \\(first: .*$pat" <<< "$out"; then
		res ok "control $bug: $desc: scripts/kcheck fails it ($(grep -m1 '^not ok 2' <<< "$out" | sed 's/.*(first: //; s/;.*//'))"
	else
		res fail "control $bug: $desc: scripts/kcheck fails it with /$pat/ (exit $rc)"
		{ echo "$out"; echo "--- its log:"; head -n 60 "$d/console.log"; } | diag
	fi
}
control uaf 'BUG: KASAN: slab-use-after-free in ctl_uaf' "KASAN reports a use-after-free"
control abba 'possible circular locking dependency detected' "lockdep reports an AB-BA lock order"
control oob 'UBSAN: array-index-out-of-bounds' "UBSAN reports an index past an array's end"
control dma-size 'WARNING: CPU: [0-9]+ PID: [0-9]+ at kernel/dma/debug.c' \
	"DMA-API debug reports an unmap of another size"
grep -q -E 'DMA-API: kcheck_ctl [0-9a-f:.]+: device driver frees DMA memory with different size' "$OUT/dma-size/console.log" ||
	res fail "control dma-size: the report is DMA-API's 'frees DMA memory with different size'"
control dma-held 'WARNING: CPU: [0-9]+ PID: [0-9]+ at kernel/dma/debug.c' \
	"DMA-API debug reports a mapping held at unbind"
grep -q -E 'DMA-API: [a-z_]+ [0-9a-f:.]+: device driver has pending DMA allocations while released from device' \
	"$OUT/dma-held/console.log" ||
	res fail "control dma-held: the report is DMA-API's 'pending DMA allocations while released'"
control hung 'INFO: task kcheck_ctl_hung:[0-9]+ blocked for more than [0-9]+ seconds' \
	"hung-task detection reports a task in D state"

# The whole boot: kcheck fails it (the reports, the taint, the leak) with every required
# checker active, and the leak is kcheck_ctl's.
out=$(scripts/kcheck --name controls --require "$REQUIRE" "$vm" 2>&1); rc=$?
if [ "$rc" = 1 ] && grep -q -E '^not ok 6 - controls: kmemleak' <<< "$out" &&
	grep -q -E 'ctl_leak|kcheck_ctl leak' "$vm/kcheck/kmemleak"; then
	res ok "control leak: kmemleak reports the dropped object, and scripts/kcheck fails it"
else
	res fail "control leak: kmemleak reports the dropped object, and scripts/kcheck fails it (exit $rc)"
	{ echo "$out"; head -n 30 "$vm/kcheck/kmemleak" 2>/dev/null; } | diag
fi
if grep -q -E '^not ok 9 - controls: DMA-API debug counted no error \(it counted 2;' <<< "$out"; then
	res ok "DMA-API debug counted both DMA bugs, and scripts/kcheck fails the count"
else
	res fail "DMA-API debug counted both DMA bugs, and scripts/kcheck fails the count"
	{ grep -E '^(not )?ok 9' <<< "$out"; cat "$vm/kcheck/dma-api-errors" 2>/dev/null; } | diag
fi
if grep -q -E '^ok 8 - controls: the checkers the lane requires are active' <<< "$out"; then
	res ok "every checker the debug lane requires was active ($REQUIRE)"
else
	res fail "every checker the debug lane requires was active ($REQUIRE)"
	{ grep -E '^(not )?ok 8' <<< "$out"; cat "$vm/kcheck/checkers" 2>/dev/null; } | diag
fi
echo "1..$n"
exit $fail
