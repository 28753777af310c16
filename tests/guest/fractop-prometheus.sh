#!/usr/bin/env bash
# fractop's Prometheus exporter under a real Prometheus (make test-guest):
# tools/fractop/tests/guest-prometheus.sh. A runner of its own because Prometheus alone takes
# about 20 s to start under TCG, past tests/guest/fractop.sh's budget. Leaves frac.ko as it
# found it: loaded with the same job_timeout_ms and dbg_mask, or not loaded. Prints TAP.
. "$(dirname "${BASH_SOURCE[0]}")/lib/frac-guest.bash"

guest_begin
params=()
if [ -d /sys/module/frac ]; then
	for p in job_timeout_ms dbg_mask; do
		params+=("$p=$(cat /sys/module/frac/parameters/$p)")
	done
fi
guest_run fractop-prometheus "$GUEST_REPO/tools/fractop/tests/guest-prometheus.sh"
if [ ${#params[@]} -gt 0 ]; then
	guest_ok "frac.ko loaded as found (${params[*]})" guest_load_frac "${params[@]}"
else
	guest_ok "frac.ko not loaded, as found" guest_unload_frac
fi
guest_dmesg_check
guest_end
