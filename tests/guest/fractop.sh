#!/usr/bin/env bash
# fractop in the guest (make test-guest): tools/fractop/tests/guest.sh against frac.ko and a
# known workload (counters, process rows, the screen under tmux with every key, a hang, an
# unprivileged run, rmmod under a running fractop). That test unloads frac.ko; this runner
# then leaves the module as it found it: loaded again with the same job_timeout_ms and
# dbg_mask if it was loaded, unloaded if it was not. Prints TAP.
. "$(dirname "${BASH_SOURCE[0]}")/lib/frac-guest.bash"

guest_begin
guest_save_frac
guest_run fractop "$GUEST_REPO/tools/fractop/tests/guest.sh"
guest_restore_frac
guest_dmesg_check
guest_end
