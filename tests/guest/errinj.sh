#!/usr/bin/env bash
# Guest error-path injection (the idea of xe's xe_fault_injection): every step of probe, file
# open, BO creation, SUBMIT and reset that frac.ko marks ALLOW_ERROR_INJECTION is made to fail
# in turn through fail_function, and a workload is run into it. Each case checks that the
# injection was hit, that the failure reached user space as an error (not a hang, not a
# crash), and that the device works again afterwards. The group ends with the dmesg check; on
# the debug kernel the lane also fails on KASAN, lockdep and kmemleak reports (scripts/kcheck).
# Then frac_failnth_test makes every slab and page allocation of open, BO_CREATE, mmap, PRIME
# export/import, SUBMIT and WAIT, and with FRAC_FAILNTH_BIND_SITES set bind's, fail in turn (fail-nth), checking errno, state and the
# device after each.
# Needs CONFIG_FUNCTION_ERROR_INJECTION + CONFIG_FAIL_FUNCTION (the debug kernel): SKIPs
# otherwise. Needs fault-injection=on on the device for the reset cases. Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

FF=/sys/kernel/debug/fail_function
BENCH=$GUEST_REPO/tools/fracbench/fracbench
# Every injectable step: a test fails when one loses its annotation (or gets inlined).
PROBE_STEPS="frac_hw_discover frac_queues_init frac_job_sched_init frac_irq_init frac_sysfs_init"
IOCTL_STEPS="frac_file_jobs_init frac_shmem_map frac_bo_build_sgl frac_devmem_bo_create
	frac_job_create frac_job_prepare frac_job_reserve_id frac_job_add_deps"
RESET_STEPS="frac_queue_hw_reset frac_device_hw_reset"

sysfs_dir() { echo /sys/class/accel/accel*/device/frac | cut -d' ' -f1; }
counter() { cat "$(sysfs_dir)/$1"; }

# Arm @fn to fail its next @times calls (-ENOMEM, or NULL for pointer steps).
arm() { # arm FN [TIMES]
	local fn=$1 times=${2:-1}
	echo "$fn" > "$FF/inject" || return 1
	if [ "$fn" = frac_job_create ]; then echo 0 > "$FF/$fn/retval"; else printf %#x -12 > "$FF/$fn/retval"; fi
	echo 100 > "$FF/probability"; echo 1 > "$FF/interval"; echo "$times" > "$FF/times"
	echo 0 > "$FF/space"; echo 1 > "$FF/verbose"
}
disarm() { echo > "$FF/inject"; }
# Was the armed step called (all its failures used)?
hit() { [ "$(cat "$FF/times")" = 0 ]; }

# The device runs verified jobs of every kind it has, host and device memory.
device_works() {
	"$BENCH" -n 8 -W 0 -o copy -s 64k -V > /dev/null &&
		"$BENCH" -n 8 -W 0 -o fill -s 64k -M > /dev/null &&
		"$BENCH" -n 8 -W 0 -o crc32c -s 4k -V > /dev/null
}

# A probe step fails: unbind the device, arm the step (fail_function needs frac.ko loaded to
# know it), bind again: the probe fails, leaves no accel node, and the next bind works.
probe_case() { # probe_case FN
	local fn=$1 rc=0 bdf drv=/sys/bus/pci/drivers/frac
	bdf=$(guest_bdf) || return 1
	guest_load_frac job_timeout_ms=500 || return 1
	echo "$bdf" > $drv/unbind || return 1
	arm "$fn" || { echo "$bdf" > $drv/bind; return 1; }
	echo "$bdf" > $drv/bind 2>/dev/null && { guest_diag "$fn: the bind succeeded"; rc=1; }
	hit || { guest_diag "$fn: not called during probe"; rc=1; }
	disarm
	if ls /dev/accel/accel* > /dev/null 2>&1; then
		guest_diag "$fn: probe failed yet an accel node exists"; rc=1
	fi
	echo "$bdf" > $drv/bind || { guest_diag "$fn: the bind after it failed"; rc=1; }
	for _ in $(seq 50); do ls /dev/accel/accel* > /dev/null 2>&1 && break; sleep 0.1; done
	device_works || { guest_diag "$fn: the device does not work after a clean probe"; rc=1; }
	return $rc
}

# An open/BO/SUBMIT step fails: the workload sees an error; the same workload then works.
ioctl_case() { # ioctl_case FN
	local fn=$1 rc=0 opt=
	[ "$fn" = frac_devmem_bo_create ] && opt=-M
	arm "$fn" || return 1
	if "$BENCH" -n 4 -W 0 -o fill -s 64k $opt > /dev/null 2>&1; then
		guest_diag "$fn: fracbench succeeded with the step failing"; rc=1
	fi
	hit || { guest_diag "$fn: not called"; rc=1; }
	disarm
	device_works || { guest_diag "$fn: the device does not work after the failure"; rc=1; }
	return $rc
}

# The queue reset fails to quiesce: the driver falls back to a device reset; the hung job
# ends -ETIMEDOUT (fracbench fails), device_resets moves by one, queue_resets by none.
queue_reset_case() {
	local rc=0 q0 d0 bdf
	bdf=$(guest_bdf)
	q0=$(counter queue_resets) d0=$(counter device_resets)
	arm frac_queue_hw_reset || return 1
	echo "hang 0" > "/sys/kernel/debug/accel/$bdf/inject_fault" || return 1
	if "$BENCH" -q 1 -n 1 -W 0 > /dev/null 2>&1; then
		guest_diag "the hung job did not fail"; rc=1
	fi
	hit || { guest_diag "frac_queue_hw_reset: not called"; rc=1; }
	disarm
	[ "$(counter queue_resets)" = "$q0" ] || { guest_diag "queue_resets moved"; rc=1; }
	[ "$(counter device_resets)" = $((d0 + 1)) ] ||
		{ guest_diag "device_resets $d0 -> $(counter device_resets), want +1"; rc=1; }
	device_works || { guest_diag "the device does not work after the fallback reset"; rc=1; }
	return $rc
}

# The device reset after a fatal error never quiesces: the device is wedged (sysfs wedged 1),
# jobs fail -EIO instead of reaching it, and a reload brings it back.
device_reset_case() {
	local rc=0 bdf
	bdf=$(guest_bdf)
	arm frac_device_hw_reset || return 1
	echo fatal > "/sys/kernel/debug/accel/$bdf/inject_fault" || return 1
	for _ in $(seq 50); do hit && break; sleep 0.1; done
	hit || { guest_diag "frac_device_hw_reset: not called after a fatal error"; rc=1; }
	disarm
	sleep 0.2
	[ "$(cat "$(sysfs_dir)/wedged")" = 1 ] || { guest_diag "not wedged"; rc=1; }
	if "$BENCH" -n 1 -W 0 > /dev/null 2>&1; then
		guest_diag "a job succeeded on a wedged device"; rc=1
	fi
	guest_unload_frac || rc=1
	guest_load_frac job_timeout_ms=500 || rc=1
	device_works || { guest_diag "the device does not work after a reload"; rc=1; }
	return $rc
}

guest_begin
if [ ! -d $FF ]; then
	guest_result SKIP "error-path injection" "no $FF (needs CONFIG_FAIL_FUNCTION)"
	guest_end; exit
fi
guest_ok "load frac.ko job_timeout_ms=500" guest_load_frac job_timeout_ms=500
for fn in $PROBE_STEPS $IOCTL_STEPS $RESET_STEPS; do
	guest_ok "$fn is injectable" grep -q "^$fn[[:space:]]" "$FF/injectable"
done
for fn in $PROBE_STEPS; do guest_ok "probe step $fn fails cleanly" probe_case "$fn"; done
for fn in $IOCTL_STEPS; do guest_ok "step $fn fails cleanly" ioctl_case "$fn"; done
if [ -e "/sys/kernel/debug/accel/$(guest_bdf)/inject_fault" ] &&
	grep -q '^0x1234$' /sys/bus/pci/devices/"$(guest_bdf)"/vendor; then
	guest_ok "a queue that will not quiesce: device reset instead" queue_reset_case
	guest_ok "a device that will not quiesce: wedged, then reloaded" device_reset_case
else
	guest_result SKIP "reset steps" "no inject_fault (fault-injection=on)"
fi
guest_run "frac_failnth_test" "$GUEST_TESTS/frac_failnth_test"
guest_ok "unload frac.ko" guest_unload_frac
guest_dmesg_check
guest_end
