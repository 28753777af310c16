#!/usr/bin/env bash
# Guest regression tests of issue 9 (frac_regress_test): a WAIT racing SUBMIT's id publication,
# a dma-buf import with too many segments, new BOs reading as zeros, a failed SUBMIT writing
# back, WAIT's timeout under signals and after EINTR, HIGH priority for nobody, the per-file
# limit of unwaited jobs, clearing a big device BO (mem-size >= 1G only); a device->device copy
# called over by a device reset, a fatal error and, with job_timeout_ms=1, a job timeout
# (nothing is written after WAIT returns); last, mmap of a device BO racing the device's
# removal (a rescan brings it back); direct submission (issue 15): on and off, a context's
# order kept, and a killed file's direct copy keeping its destination until it ran. Unloads frac.ko at the end, so that the runners after it
# load it with their own parameters. FRAC_KO selects another frac.ko. Prints TAP.
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
