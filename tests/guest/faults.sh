#!/usr/bin/env bash
# Guest fault tests: every fault kind of the device (hang, drop-irq, error, dma, fatal, latency)
# injected through debugfs while other queues carry load; checks job statuses, data, sysfs
# counters and that the device works after. Needs fault-injection=on on the device (the tests
# skip otherwise); loads frac.ko with job_timeout_ms=500 so hangs resolve quickly. With
# direct_submit on (its default) a hung job that went to an idle ring is a direct one (SUBMIT
# wrote it; its BOs hold its hardware fence; drm_sched never has it): the hang tests run
# again with it off, where drm_sched's run_job writes and times every job. Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

guest_begin
guest_ok "load frac.ko job_timeout_ms=500" guest_load_frac job_timeout_ms=500
guest_run frac_fault_test "$GUEST_TESTS/frac_fault_test"
guest_ok "reload frac.ko job_timeout_ms=500 direct_submit=N" \
	guest_load_frac job_timeout_ms=500 direct_submit=N
guest_run "frac_fault_test hangs (direct_submit=N)" "$GUEST_TESTS/frac_fault_test" \
	-t hang -t hung_job_bo_is_active -t hang_leaves_coredump -t hang_with_backlog
# The next runner loads frac.ko only if it is not loaded: with direct_submit as by default.
guest_ok "reload frac.ko job_timeout_ms=500" eval 'rmmod frac && guest_load_frac job_timeout_ms=500'
guest_dmesg_check
guest_end
