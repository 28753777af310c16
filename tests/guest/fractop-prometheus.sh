#!/usr/bin/env bash
# fractop's Prometheus exporter under a real Prometheus (make test-guest):
# tools/fractop/tests/guest-prometheus.sh. A runner of its own because Prometheus alone takes
# about 20 s to start under TCG, past tests/guest/fractop.sh's budget. Leaves frac.ko as it
# found it: loaded with the same job_timeout_ms and dbg_mask, or not loaded. Prints TAP.
. "$(dirname "${BASH_SOURCE[0]}")/lib/frac-guest.bash"

guest_begin
guest_save_frac
guest_run fractop-prometheus "$GUEST_REPO/tools/fractop/tests/guest-prometheus.sh"
guest_restore_frac
guest_dmesg_check
guest_end
