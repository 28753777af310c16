#!/usr/bin/env bash
# Guest fault tests: every fault kind of the device (hang, drop-irq, error, dma, fatal, latency,
# bad-id, bad-head, dup)
# injected through debugfs while other queues carry load; checks job statuses, data, sysfs
# counters and that the device works after. Needs fault-injection=on on the device (the tests
# skip otherwise); loads frac.ko with job_timeout_ms=500 so hangs resolve quickly. With
# direct_submit on (its default) a hung job that waited for nothing is a direct one (SUBMIT
# wrote it; its BOs hold its hardware fence; drm_sched never has it): the hang tests run
# again with it off, where drm_sched's run_job writes and times every job. Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

guest_begin
guest_ok "load frac.ko job_timeout_ms=500" guest_load_frac job_timeout_ms=500
guest_run frac_fault_test "$GUEST_TESTS/frac_fault_test"
# direct_submit is writable at run time: off for the second pass, then back as it was.
DP=/sys/module/frac/parameters/direct_submit
direct_was=$(cat "$DP" 2>/dev/null)
guest_ok "direct_submit=N" eval "echo N > $DP"
guest_run "frac_fault_test hangs (direct_submit=N)" "$GUEST_TESTS/frac_fault_test" \
	-t hang -t hung_job_bo_is_active -t hang_leaves_coredump -t hang_with_backlog
guest_ok "direct_submit back to ${direct_was:-?}" eval "echo '$direct_was' > $DP"
guest_dmesg_check
guest_end
