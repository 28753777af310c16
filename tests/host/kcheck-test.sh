#!/usr/bin/env bash
# Host tests of scripts/kcheck, the debug lane's judge: feed it made-up guest outputs and check
# each verdict. Prints TAP.
set -uo pipefail
KCHECK=${KCHECK:-$(cd "$(dirname "$0")/../.." && pwd)/scripts/kcheck}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
n=0 fail=0
t() { # t DESC expected-rc dir [grep-pattern]
	local desc=$1 want=$2 dir=$3 pat=${4:-} out rc
	n=$((n + 1))
	out=$("$KCHECK" --name t ${KARGS:-} "$dir" 2>&1); rc=$?
	if [ "$rc" = "$want" ] && { [ -z "$pat" ] || grep -q -E -- "$pat" <<< "$out"; }; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc (rc $rc, want $want${pat:+, output matching /$pat/})"
		sed 's/^/#   /' <<< "$out"; fail=1
	fi
}
mk() { # mk NAME: a clean guest output
	local d=$T/$1
	mkdir -p "$d/kcheck"
	printf '[    0.000000] Linux version 6.12.95-frac-debug\n[    1.000000] frac 0000:01:00.0: ok\n' > "$d/console.log"
	touch "$d/kcheck/done"; echo 12288 > "$d/kcheck/tainted"; echo 1 > "$d/kcheck/debug_locks"
	: > "$d/kcheck/kmemleak"; echo 4294900000 > "$d/kcheck/jiffies-start"
	echo yes > "$d/kcheck/frac-unloaded"; echo "rmmod frac: exit 0" > "$d/kcheck/rmmod"
	echo 0 > "$d/kcheck/dma-api-errors"
	printf 'kasan 1\nlockdep 1\nkmemleak 1\ndma-api 1\nubsan 1\nkfence 0\nhung-task 1\n' \
		> "$d/kcheck/checkers"
	echo "$d"
}
leak() { # leak DIR JIFFIES COMM [ASCII]: one suspect as Linux 6.12's print_unreferenced() has it
	printf 'unreferenced object 0xffff888100a1b2c0 (size 64):\n  comm "%s", pid 7, jiffies %s\n  hex dump (first 32 bytes):\n    6a 69 66 66 69 65 73 20 31 00 00 00 00 00 00 00  %s\n  backtrace (crc 5a5a5a5a):\n    frac_bo_create+0x1/0x2 [frac]\n    drm_ioctl+0x493/0xad0\n' \
		"$3" "$2" "${4:-................}" >> "$1/kcheck/kmemleak"
}
echo "TAP version 13"
d=$(mk clean); t "a clean run passes every check" 0 "$d" '^ok 6 - t: kmemleak: no leak after frac was unloaded$'
d=$(mk boot); leak "$d" 4294890000 swapper/0
t "a suspect allocated before the tests fails too (a boot-time object the tests leaked)" 1 "$d" \
	'^not ok 6 .*\(1 objects; 1 allocated before the tests began\)'
d=$(mk ours); leak "$d" 4294890000 swapper/0; leak "$d" 4294950000 frac_uapi_test
t "two suspects, one from before the tests: both counted" 1 "$d" \
	'^not ok 6 .*\(2 objects; 1 allocated before the tests began\)'
d=$(mk ours-shown); leak "$d" 4294950000 frac_uapi_test
t "the failing suspect's block is in the diagnostics" 1 "$d" '^#   .*comm "frac_uapi_test"'
d=$(mk at-start); leak "$d" 4294900000 frac_uapi_test
t "a suspect allocated at the very jiffy the tests began is the tests'" 1 "$d" \
	'^not ok 6 .*\(1 objects; 0 allocated before the tests began\)'
d=$(mk ascii); leak "$d" 4294950000 frac_uapi_test 'jiffies 1.......'
t "'jiffies N' in the hex dump's ASCII column is not the allocation time" 1 "$d" \
	'^not ok 6 .*\(1 objects; 0 allocated before the tests began\)'
d=$(mk nostart); rm "$d/kcheck/jiffies-start"; leak "$d" 4294890000 swapper/0
t "without jiffies-start a suspect still fails" 1 "$d" '^not ok 6 .*\(1 objects\)$'
d=$(mk garbage); echo 'cat: /sys/kernel/debug/kmemleak: Device or resource busy' > "$d/kcheck/kmemleak"
t "a report that is not a list of suspects fails" 1 "$d" '^not ok 6 .*\(0 objects'
d=$(mk leakline); echo '[   99.000000] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)' >> "$d/console.log"
t "kmemleak's console line is a kernel report" 1 "$d" '^not ok 2 .*first: kmemleak: 1 new suspected'
d=$(mk kasan); echo '[   50.000000] BUG: KASAN: slab-use-after-free in frac_job_free+0x1/0x2 [frac]' >> "$d/console.log"
t "a KASAN report fails check 2" 1 "$d" '^not ok 2 .*first: BUG: KASAN'
d=$(mk hung); echo '[  300.000000] INFO: task frac_uapi_test:231 blocked for more than 60 seconds.' >> "$d/console.log"
t "a hung task fails check 2" 1 "$d" '^not ok 2 .*first: INFO: task frac_uapi_test:231 blocked'
d=$(mk softlockup); echo '[  300.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [frac_stress_tes:99]' >> "$d/console.log"
t "a soft lockup fails check 2" 1 "$d" '^not ok 2 .*first: watchdog: BUG: soft lockup'
d=$(mk hardlockup); echo '[  300.000000] watchdog: CPU1: Watchdog detected hard LOCKUP on cpu 0' >> "$d/console.log"
t "a hard lockup fails check 2" 1 "$d" '^not ok 2 .*hard LOCKUP'
d=$(mk taint); echo 12800 > "$d/kcheck/tainted"
t "a W taint fails check 4" 1 "$d" '^not ok 4 .*\(tainted=12800: WOE\)'
d=$(mk locks); echo 0 > "$d/kcheck/debug_locks"
t "debug_locks 0 fails check 5" 1 "$d" '^not ok 5 '
d=$(mk crash); rm "$d/kcheck/done"
t "a guest that did not finish fails check 1" 1 "$d" '^not ok 1 '
d=$(mk loaded); echo no > "$d/kcheck/frac-unloaded"
echo "rmmod: ERROR: Module frac is in use" > "$d/kcheck/rmmod"
t "frac.ko still loaded at the kmemleak scan fails check 7" 1 "$d" '^not ok 7 .*Module frac is in use'
d=$(mk nounload); rm "$d/kcheck/frac-unloaded"
t "no record of frac.ko's unload fails check 7" 1 "$d" '^not ok 7 .*not collected'
d=$(mk nolockdep); rm "$d/kcheck/debug_locks"
t "a kernel without lockdep: check 5 skips where no checker is required" 0 "$d" \
	'^ok 5 .* # SKIP no lockdep in this kernel'
KARGS="--require kasan,lockdep,kmemleak"
t "a kernel without lockdep fails check 5 where the lane requires lockdep" 1 "$d" \
	'^not ok 5 .*which the lane requires'
d=$(mk nokmemleak); rm "$d/kcheck/kmemleak"
t "a kernel without kmemleak fails check 6 where the lane requires kmemleak" 1 "$d" \
	'^not ok 6 .*which the lane requires'
d=$(mk nokasan); sed -i 's/^kasan 1$/kasan 0/' "$d/kcheck/checkers"
t "KASAN not active fails check 8 where the lane requires it" 1 "$d" '^not ok 8 .*not active: kasan\)'
d=$(mk nodma); sed -i 's/^dma-api 1$/dma-api 0/' "$d/kcheck/checkers"
KARGS="--require dma-api,ubsan"
t "DMA-API debug disabled fails check 8 where the lane requires it" 1 "$d" '^not ok 8 .*not active: dma-api\)'
d=$(mk nocheckers); rm "$d/kcheck/checkers"
t "no record of the checkers fails check 8 where the lane requires one" 1 "$d" '^not ok 8 .*not collected'
d=$(mk allon)
t "every required checker active passes check 8" 0 "$d" '^ok 8 .*active \(dma-api ubsan\)'
d=$(mk dmaerr); echo 3 > "$d/kcheck/dma-api-errors"
t "DMA-API debug's error count above 0 fails check 9 (it prints only the first)" 1 "$d" \
	'^not ok 9 .*counted 3'
d=$(mk nodmaerr); rm "$d/kcheck/dma-api-errors"
t "no DMA-API error count where the lane requires DMA-API debug fails check 9" 1 "$d" \
	'^not ok 9 .*not collected'
d=$(mk died); rm "$d/kcheck/done" "$d/kcheck/debug_locks" "$d/kcheck/kmemleak"
t "a guest that died: checks 5 and 6 say not collected, not 'no lockdep'" 1 "$d" \
	'^not ok 5 .*not collected: the guest did not finish'
KARGS="--require kasn"
t "an unknown checker is a usage error" 2 "$d" "unknown checker 'kasn'"
KARGS=
echo "1..$n"
exit $fail
