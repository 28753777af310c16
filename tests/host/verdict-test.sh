#!/usr/bin/env bash
# Negative controls of make test's verdict: each case feeds the real harness (scripts/tap-run,
# scripts/tap-summary, scripts/known-report, scripts/kcheck) a run that went wrong, and passes
# only when the harness reports it as a failure; a few positive controls show the same harness
# passes the run done right. Prints TAP.
set -uo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
n=0 fail=0
res() { # res ok|fail DESC [OUTPUT]
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"; fail=1
		[ -n "${3:-}" ] && sed 's/^/#   /' <<< "$3"
	fi
}
# verdict DESC WANT(pass|fail) PATTERN DIR-OR-FILE... : tap-summary's verdict and output
verdict() {
	local desc=$1 want=$2 pat=$3 out rc; shift 3
	out=$("$R/scripts/tap-summary" --skips "$T/skips" "$@" 2>&1); rc=$?
	if { [ "$want" = pass ] && [ $rc = 0 ]; } || { [ "$want" = fail ] && [ $rc = 1 ]; }; then
		if [ -z "$pat" ] || grep -q -E -- "$pat" <<< "$out"; then res ok "$desc"; return; fi
	fi
	res fail "$desc (exit $rc, want $want${pat:+, output matching /$pat/})" "$out"
}
# runner NAME: a test script at $T/bin/NAME.sh printing the here-document
runner() { mkdir -p "$T/bin"; cat > "$T/bin/$1.sh"; chmod +x "$T/bin/$1.sh"; }
# run DIR NAME...: the runners through scripts/tap-run, as a guest runs them
run() { local d=$T/$1; shift; local a=(); for r in "$@"; do a+=("$T/bin/$r.sh"); done
	"$R/scripts/tap-run" "$d" "${a[@]}" > /dev/null 2>&1; echo "$d"; }

printf 'guest/listed.tap\tone # SKIP no widget in this lane$\tno widget in this lane\n' > "$T/skips"
echo "TAP version 13"

# ---- tap-summary: a run that went right passes ---------------------------------------------
runner clean <<'EOF'
echo "TAP version 13"; echo "ok 1 - one"; echo "ok 2 - two"; echo "1..2"
EOF
d=$(run guest clean)
verdict "control: a clean runner passes" pass '^2 passed, 0 failed, 0 skipped$' "$d"

# ---- a runner that dies mid-way --------------------------------------------------------------
runner crash <<'EOF'
echo "TAP version 13"; echo "ok 1 - one"; echo "ok 2 - two"; kill -SEGV $$
EOF
d=$(run crash crash)
verdict "a runner that crashes after two results fails (no plan, exit by signal)" fail \
	'crash .*\(no plan\) \(exit status 139\)' "$d"
runner noplan <<'EOF'
echo "ok 1 - one"; echo "ok 2 - two"
EOF
d=$(run noplan noplan)
verdict "a runner without its plan fails even with exit status 0" fail '\(no plan\)' "$d"
d=$(run died clean); rm "$d/clean.rc"
verdict "a runner whose exit status was never written (its guest died) fails" fail \
	'no exit status' "$d"
d=$(run never clean); echo never-started >> "$d/expected"
verdict "a runner listed to run that left no TAP fails" fail 'never-started .*never ran' "$d"
verdict "a TAP file named on the command line that does not exist fails" fail \
	'gone .*no such file' "$d/clean.tap" "$d/gone.tap"
runner short <<'EOF'
echo "1..3"; echo "ok 1 - one"; echo "ok 2 - two"
EOF
d=$(run short short)
verdict "a plan of 3 with 2 results fails" fail 'planned 3, ran 2' "$d"
runner bail <<'EOF'
echo "1..2"; echo "ok 1 - one"; echo "Bail out! the device is gone"; echo "ok 2 - two"
EOF
d=$(run bail bail)
verdict "Bail out! fails" fail 'Bail out! the device is gone' "$d"
runner exit1 <<'EOF'
echo "1..1"; echo "ok 1 - one"; exit 3
EOF
d=$(run exit1 exit1)
verdict "a non-zero exit status with every result ok fails" fail 'exit status 3' "$d"
runner empty <<'EOF'
echo "TAP version 13"
EOF
d=$(run empty empty)
verdict "a runner with no result fails" fail 'no results' "$d"

# ---- skips and TODOs -------------------------------------------------------------------------
runner listed <<'EOF'
echo "1..2"; echo "ok 1 - one # SKIP no widget in this lane"; echo "ok 2 - two"
EOF
d=$(run guest listed)
verdict "control: a skip tests/allowed-skips lists passes, counted by its reason" pass \
	'^ +1  no widget in this lane$' "$d/listed.tap"
mkdir -p "$T/other"; cp "$d/listed.tap" "$d/listed.rc" "$T/other/"
verdict "the same skip in a lane the list does not name fails" fail \
	'a skip tests/allowed-skips does not list' "$T/other/listed.tap"
runner unlisted <<'EOF'
echo "1..2"; echo "ok 1 - one"; echo "ok 2 - two # SKIP the budget was spent"
EOF
d=$(run guest unlisted)
verdict "an unlisted skip fails" fail 'two # SKIP the budget was spent +<- a skip' "$d"
runner skipplan <<'EOF'
echo "1..0 # SKIP perf not installed"
EOF
d=$(run guest skipplan)
verdict "an unlisted skipped plan (1..0, then SKIP) fails" fail 'a skipped plan' "$d"
runner todo <<'EOF'
echo "1..2"; echo "ok 1 - one"; echo "not ok 2 - two # TODO known, not frac: whatever"
EOF
d=$(run guest todo)
verdict "an unlisted TODO fails" fail 'a TODO tests/allowed-skips does not list' "$d"
runner lower <<'EOF'
echo "1..1"; echo "ok 1 - one #skip lower case"
EOF
d=$(run guest lower)
verdict "a skip in lower case without a space is a skip too" fail 'a skip tests/allowed-skips' "$d"

# ---- the project's own list is well formed and every entry can match -------------------------
out=$("$R/scripts/tap-summary" --skips "$R/tests/allowed-skips" "$T/guest/clean.tap" 2>&1)
[ $? = 0 ] && res ok "tests/allowed-skips parses" || res fail "tests/allowed-skips parses" "$out"
printf 'x\tbad(\treason\n' > "$T/badskips"
out=$("$R/scripts/tap-summary" --skips "$T/badskips" "$T/guest/clean.tap" 2>&1)
[ $? != 0 ] && grep -q 'bad regex' <<< "$out" && res ok "a malformed allowed-skips line is an error" ||
	res fail "a malformed allowed-skips line is an error" "$out"

# ---- known kernel reports --------------------------------------------------------------------
# pciehp's report on a hot-unplug, as lockdep prints it; $1 is put in the chain's #1 stack at
# the line given by $2 (0: nowhere).
lockdep() { # lockdep EXTRA-LINE AT-LINE
	local extra=$1 at=$2 i
	{
	echo "[  100.000000] frac 0000:01:00.0: removed"
	echo "[  100.100000] ======================================================"
	echo "[  100.100001] WARNING: possible circular locking dependency detected"
	echo "[  100.100002] 6.12.95-frac-debug #1 Not tainted"
	echo "[  100.100003] ------------------------------------------------------"
	echo "[  100.100004] irq/24-pciehp/89 is trying to acquire lock:"
	echo "[  100.100005] ffff888104a1c1a8 (&ctrl->reset_lock){++++}-{4:4}, at: pciehp_unconfigure_device+0x1a2/0x3c0"
	echo "[  100.100006] "
	echo "[  100.100007] but task is already holding lock:"
	echo "[  100.100008] ffffffff8a1e2f40 (pci_rescan_remove_lock){+.+.}-{4:4}, at: pciehp_unconfigure_device+0x9c/0x3c0"
	echo "[  100.100009] "
	echo "[  100.100010] which lock already depends on the new lock."
	echo "[  100.100011] "
	echo "[  100.100012] the existing dependency chain (in reverse order) is:"
	echo "[  100.100013] "
	echo "[  100.100014] -> #1 (pci_rescan_remove_lock){+.+.}-{4:4}:"
	for ((i = 17; i < 200; i++)); do
		if [ "$i" = "$at" ]; then echo "[  100.1$i]        $extra"
		else echo "[  100.1$i]        pci_generic_frame_$i+0x10/0x20"; fi
		[ "$i" = 60 ] && { echo "[  100.2000] "; echo "[  100.2001] -> #0 (&ctrl->reset_lock){++++}-{4:4}:"; }
	done
	echo "[  100.3000] "
	echo "[  100.3001] stack backtrace:"
	echo "[  100.3002] CPU: 1 UID: 0 PID: 89 Comm: irq/24-pciehp Not tainted 6.12.95-frac-debug #1"
	echo "[  100.3003] Call Trace:"
	echo "[  100.3004]  <TASK>"
	echo "[  100.3005]  pciehp_unconfigure_device+0x1a2/0x3c0"
	echo "[  100.3006]  pciehp_disable_slot+0x6d/0x130"
	echo "[  100.3007]  </TASK>"
	echo "[  100.3008] frac 0000:01:00.0: later line"
	} > "$T/lockdep.log"
	echo "$T/lockdep.log"
}
kr() { # kr DESC WANT(known|unknown) LOG
	local out rc ln
	ln=$(grep -n -m1 'circular locking dependency' "$3" | cut -d: -f1)
	out=$("$R/scripts/known-report" "$3" "$ln" 2>&1); rc=$?
	if { [ "$2" = known ] && [ $rc = 0 ]; } || { [ "$2" = unknown ] && [ $rc = 1 ]; }; then
		res ok "$1"
	else
		res fail "$1 (exit $rc, want $2)" "$out"
	fi
}
kr "control: pciehp's lockdep report with no frac in it is the known one" known "$(lockdep x 0)"
kr "the same report with a [frac] frame at its line 120 is not known" unknown \
	"$(lockdep 'frac_pci_remove+0x44/0x90 [frac]' 121)"
kr "the same report with a frac frame after line 180 is not known" unknown \
	"$(lockdep 'frac_job_free+0x44/0x90 [frac]' 185)"
kr "the same report with frac.ko's lock class in its chain is not known" unknown \
	"$(lockdep 'lock(&fdev->reset_lock);' 40)"
kr "the same report with frac.ko's work item in its chain is not known" unknown \
	"$(lockdep '(work_completion)(&fdev->reset_work){+.+.}-{0:0}:' 40)"
kr "the same report with frac.ko's workqueue in its chain is not known" unknown \
	"$(lockdep '((wq_completion)frac-tdr){+.+.}-{0:0}:' 40)"
log=$(lockdep x 0); sed -i 's/$/\r/' "$log"
kr "control: the known report in a serial console log (CR LF lines) is known" known "$log"
log=$(lockdep 'frac_pci_remove+0x44/0x90 [frac]' 121); sed -i 's/$/\r/' "$log"
kr "the same with a [frac] frame at line 120, CR LF lines, is not known" unknown "$log"
log=$(lockdep x 0); sed -i 's/pci_rescan_remove_lock/&_other/g' "$log"
kr "a circular report between other locks is not known" unknown "$log"
log=$(lockdep x 0); sed -i '/stack backtrace:/,$d' "$log"
kr "a report cut short (no stack backtrace) is not known" unknown "$log"
# Through kcheck, as the debug lane judges a boot.
d=$T/kcheck-frac120; mkdir -p "$d/kcheck"; cp "$(lockdep 'frac_pci_remove+0x44/0x90 [frac]' 121)" "$d/console.log"
touch "$d/kcheck/done"; echo 12288 > "$d/kcheck/tainted"; echo 0 > "$d/kcheck/debug_locks"
: > "$d/kcheck/kmemleak"; echo yes > "$d/kcheck/frac-unloaded"
"$R/scripts/kcheck" --name c "$d" > "$T/k.tap"; echo $? > "$T/k.rc"
verdict "kcheck fails a lockdep report whose frac frame is at line 120" fail \
	'not ok 2 - c: no kernel report in the console log \(first: WARNING: possible circular' "$T/k.tap"
d=$T/kcheck-known; mkdir -p "$d/kcheck"; cp "$(lockdep x 0)" "$d/console.log"
touch "$d/kcheck/done"; echo 12288 > "$d/kcheck/tainted"; echo 0 > "$d/kcheck/debug_locks"
: > "$d/kcheck/kmemleak"; echo yes > "$d/kcheck/frac-unloaded"
mkdir -p "$T/debug"
"$R/scripts/kcheck" --name "debug pcie" "$d" > "$T/debug/debug-pcie-kernel.tap"
echo $? > "$T/debug/debug-pcie-kernel.rc"
out=$("$R/scripts/tap-summary" "$T/debug/debug-pcie-kernel.tap" 2>&1)
[ $? = 0 ] && grep -q 'pciehp' <<< "$out" &&
	res ok "control: the known pciehp report in the pcie group passes as tests/allowed-skips lists it" ||
	res fail "control: the known pciehp report in the pcie group passes as tests/allowed-skips lists it" "$out"
mkdir -p "$T/debug2/debug"; cp "$T/debug/debug-pcie-kernel.tap" "$T/debug2/debug/debug-driver-kernel.tap"
cp "$T/debug/debug-pcie-kernel.rc" "$T/debug2/debug/debug-driver-kernel.rc"
out=$("$R/scripts/tap-summary" "$T/debug2/debug/debug-driver-kernel.tap" 2>&1)
[ $? = 1 ] && res ok "the same known report in another group fails" ||
	res fail "the same known report in another group fails" "$out"
echo "1..$n"
exit $fail
