#!/usr/bin/env bash
# Guest removal test, without the host: a fatal AER error injected by the guest (aer_inject)
# whose recovery fails in this machine, then the device removed through sysfs with jobs
# pending, files open and BOs held (every job ends, ioctls -ENODEV, the BOs' mmaps keep their
# pages, clean close; on the debug kernel DMA-API debug checks that no mapping outlives the
# removal), then a rescan brings it back and it works. Loads frac.ko with
# job_timeout_ms=20000. Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

guest_begin
guest_ok "load frac.ko job_timeout_ms=20000" guest_load_frac job_timeout_ms=20000
if ! modprobe aer_inject 2> /dev/null; then
	guest_result SKIP "removal after a failed recovery" "no aer_inject module"
elif ! guest_have_device; then
	guest_result SKIP "removal after a failed recovery" "no frac device"
else
	bdf=$(guest_bdf)
	guest_run "frac_pcie_test (local)" "$GUEST_TESTS/frac_pcie_test" -f local
	echo 1 > /sys/bus/pci/rescan
	for _ in $(seq 100); do ls /dev/accel/accel* > /dev/null 2>&1 && break; sleep 0.1; done
	guest_ok "rescan: the device is back" test -e "/sys/bus/pci/devices/$bdf"
	guest_run "frac_uapi_test (after the rescan)" "$GUEST_TESTS/frac_uapi_test" -t submit_wait \
		-t syncobj_out
	guest_ok "rmmod frac" guest_unload_frac
	rmmod aer_inject 2> /dev/null
fi
guest_dmesg_check
guest_end
