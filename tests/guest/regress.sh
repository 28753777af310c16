#!/usr/bin/env bash
# Guest regression tests (frac_regress_test), a fixture per module load. regress
# (job_timeout_ms=5000): a WAIT racing SUBMIT's id publication, a dma-buf import with too many
# segments, new BOs reading as zeros, private mappings refused, a device BO's clear yielding the
# CPU, a failed SUBMIT writing nothing back, WAIT's timeout under signals and after EINTR, HIGH
# priority refused to nobody, host BO memory charged to its memory cgroup, the per-file limit of
# unwaited jobs, and a device->device copy (its end held back by injected latency) called over
# by a device reset or a fatal error writing nothing once WAIT has returned. direct
# (job_timeout_ms=10000): direct submission on and off, device memory back at once after a
# direct job, a context's order and priorities kept, SUBMITs racing resets, a killed file's
# direct job keeping its destination until it ran. timeout (job_timeout_ms=1): the copy called
# over by the job timeout. Last, unplug (job_timeout_ms=5000): mmap of a device BO racing the
# device's removal (the test rescans; the rescan is checked here too), poll() woken for a job
# the removal keeps from the device, and a fatal AER error (aer_inject) whose recovery fails
# wedging the device. A test fails, not skips, without what it needs (the device, device memory, fault injection,
# debugfs, udmabuf, a memory cgroup controller, two CPUs, its job_timeout_ms, aer_inject). No
# test depends on another's leftovers or on the order they run in. Unloads frac.ko at the end,
# so that the runners after it load it with their own parameters. FRAC_KO selects another
# frac.ko. Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

PROG=$GUEST_TESTS/frac_regress_test

guest_begin
# Explicitly the default timeout: a runner before this one may have left another loaded.
guest_ok "load frac.ko job_timeout_ms=5000" guest_load_frac job_timeout_ms=5000
guest_run "frac_regress_test -f regress" "$PROG" -f regress
# direct's killed-file test holds jobs 2.5 s behind GEMMs: a timeout with room for a slow host.
guest_ok "reload frac.ko job_timeout_ms=10000" guest_load_frac job_timeout_ms=10000
guest_run "frac_regress_test -f direct (job_timeout_ms=10000)" "$PROG" -f direct
guest_ok "reload frac.ko job_timeout_ms=1" guest_load_frac job_timeout_ms=1
guest_run "frac_regress_test -f timeout (job_timeout_ms=1)" "$PROG" -f timeout
# unplug's poll test holds a job 20 s on the device: the default timeout again.
guest_ok "reload frac.ko job_timeout_ms=5000" guest_load_frac job_timeout_ms=5000
# unplug's failed PCIe recovery injects its fatal error through aer_inject.
modprobe aer_inject 2> /dev/null
if guest_have_device; then
	bdf=$(guest_bdf)
	guest_run "frac_regress_test -f unplug" "$PROG" -f unplug
	echo 1 > /sys/bus/pci/rescan
	for _ in $(seq 100); do ls /dev/accel/accel* > /dev/null 2>&1 && break; sleep 0.1; done
	guest_ok "rescan: the device is back" test -e "/sys/bus/pci/devices/$bdf"
else
	guest_run "frac_regress_test -f unplug" "$PROG" -f unplug
fi
guest_ok "rmmod frac" guest_unload_frac
guest_dmesg_check
guest_end
