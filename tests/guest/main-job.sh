#!/usr/bin/env bash
# The README's main command, `make run`, is scripts/demo.sh in a guest: run it here (fewer jobs)
# and check that it ends well and shows what it promises. demo.sh itself compares fraclat's
# count of jobs by status with the workload's own (tools/fracload -j) and exits 1 if they differ.
# Needs the device with fault-injection=on (make test-guest's boot has it). Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

guest_begin
guest_save_frac
guest_ok "frac.ko unloaded first (demo.sh loads its own)" guest_unload_frac
T=$(mktemp -d)
FRAC_OUT=$T FRAC_DEMO_JOBS=600 "$GUEST_REPO/scripts/demo.sh" > "$T/out.txt" 2>&1
rc=$?
sed 's/^/#   /' "$T/out.txt"
has() { grep -qE -- "$1" "$T/out.txt"; }
guest_ok "scripts/demo.sh (make run's job) exits 0 (exit $rc)" test $rc = 0
guest_ok "the workload's own count: 600 jobs, one -EIO, one -ETIMEDOUT" \
	has "600 jobs on queues .*ended: .* 1 -EIO, 1 -ETIMEDOUT"
guest_ok "fraclat agrees with the workload, job for job and status for status" \
	has "fraclat agrees with the workload: 600 jobs"
guest_ok "a row of stage p50/p99 per queue" \
	bash -c "[ \$(grep -cE '^   [0-9]+ +[0-9]+  [0-9.]+ / [0-9.]+' '$T/out.txt') = $(cat /sys/bus/pci/devices/*/frac/num_queues 2>/dev/null | head -n1 || echo 4) ]"
# (Its process row is not checked: a short workload may have closed its fd by the busiest
# sample; tests/guest/fractop.sh checks the rows against a workload held still.)
guest_ok "fractop's busiest second, with per-queue latency" \
	grep -qE '^   queue 0: .*total latency p50 [0-9.]+ us' "$T/out.txt"
guest_ok "the record replays on its own (fractop -r ... -J)" \
	bash -c "'$GUEST_REPO/tools/fractop/fractop' -r '$T/fractop.rec' -J | tail -n1 | grep -q '\"schema_version\"'"
guest_ok "frac.ko is unloaded after it" bash -c '! grep -q "^frac " /proc/modules'
rm -rf "$T"
guest_restore_frac
guest_dmesg_check
guest_end
