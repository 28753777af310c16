#!/usr/bin/env bash
# Guest fault tests: every fault kind of the device (hang, drop-irq, error, dma, fatal, latency)
# injected through debugfs while other queues carry load; checks job statuses, data, sysfs
# counters and that the device works after. Needs fault-injection=on on the device (the tests
# skip otherwise); loads frac.ko with job_timeout_ms=500 so hangs resolve quickly. The hang
# tests run again with direct_submit on, where the hung job is a direct one (SUBMIT wrote it
# to the ring; its BOs hold its hardware fence). Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

guest_begin
guest_ok "load frac.ko job_timeout_ms=500" guest_load_frac job_timeout_ms=500
guest_run frac_fault_test "$GUEST_TESTS/frac_fault_test"
guest_ok "reload frac.ko job_timeout_ms=500 direct_submit=Y" \
	guest_load_frac job_timeout_ms=500 direct_submit=Y
guest_run "frac_fault_test hangs (direct_submit=Y)" "$GUEST_TESTS/frac_fault_test" \
	-t hang -t hung_job_bo_is_active -t hang_leaves_coredump -t hang_with_backlog
# The next runner loads frac.ko only if it is not loaded: not with direct submission on.
guest_ok "reload frac.ko job_timeout_ms=500 direct_submit=N" \
	guest_load_frac job_timeout_ms=500 direct_submit=N
guest_dmesg_check
guest_end
