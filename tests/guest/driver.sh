#!/usr/bin/env bash
# Guest driver tests: the frac uAPI (every ioctl's happy path, every error with its errno),
# every command against a host reference, and concurrent submission from threads and
# processes on all queues. Loads frac.ko with its default parameters. Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

guest_begin
guest_ok "load frac.ko" guest_load_frac
for t in uapi cmd neg stress; do
	guest_run "frac_${t}_test" "$GUEST_TESTS/frac_${t}_test"
done
# The last CPU offline, then back: every queue's jobs still end by their interrupt (its
# vector moves to an online CPU), none through the timeout's completion check.
cpu_offline_jobs() {
	local cpu=$(($(nproc) - 1)) sys lost0 to0 rc=0
	sys=$(echo /sys/class/accel/accel*/device/frac | cut -d' ' -f1)
	[ -w "/sys/devices/system/cpu/cpu$cpu/online" ] ||
		{ guest_diag "cpu$cpu cannot go offline"; return 1; }
	lost0=$(cat "$sys/lost_interrupts") to0=$(cat "$sys/job_timeouts")
	echo 0 > "/sys/devices/system/cpu/cpu$cpu/online" || return 1
	"$GUEST_REPO/tools/fracbench/fracbench" -n 40 -W 0 -d 4 -m throughput > /dev/null || rc=1
	"$GUEST_REPO/tools/fracbench/fracbench" -n 40 -W 0 -L > /dev/null || rc=1
	echo 1 > "/sys/devices/system/cpu/cpu$cpu/online" || rc=1
	[ "$(cat "$sys/lost_interrupts")" = "$lost0" ] ||
		{ guest_diag "lost interrupts: $lost0 -> $(cat "$sys/lost_interrupts")"; rc=1; }
	[ "$(cat "$sys/job_timeouts")" = "$to0" ] ||
		{ guest_diag "timeouts: $to0 -> $(cat "$sys/job_timeouts")"; rc=1; }
	return $rc
}
if [ "$(nproc)" -gt 1 ]; then
	guest_ok "last CPU offline: jobs on every queue end by their interrupt" cpu_offline_jobs
else
	guest_result SKIP "last CPU offline: jobs on every queue end by their interrupt" "one CPU"
fi

# docs/ABI/testing/sysfs-driver-frac names every file of frac/ and frac_queues/<N>/, and only
# those: the documentation cannot drift from the driver.
abi_matches_sysfs() {
	local abi=$GUEST_REPO/docs/ABI/testing/sysfs-driver-frac dev doc have rc=0 q
	dev=$(readlink -f /sys/class/accel/accel0/device) || return 1
	doc=$(sed -n 's|^What:[[:space:]]*/sys/bus/pci/devices/<bdf>/frac/\([a-z_0-9]\{1,\}\)$|\1|p' "$abi" | sort)
	have=$(ls "$dev/frac" | sort)
	[ "$doc" = "$have" ] || { guest_diag "frac/: $(diff <(echo "$doc") <(echo "$have") | grep '^[<>]' | xargs)"; rc=1; }
	doc=$(sed -n 's|^What:[[:space:]]*/sys/bus/pci/devices/<bdf>/frac_queues/<N>/\([a-z_0-9]\{1,\}\)$|\1|p' "$abi" | sort)
	for q in $(seq 0 $(($(cat "$dev/frac/num_queues") - 1))); do
		have=$(ls "$dev/frac_queues/$q" | sort)
		[ "$doc" = "$have" ] ||
			{ guest_diag "frac_queues/$q/: $(diff <(echo "$doc") <(echo "$have") | grep '^[<>]' | xargs)"; rc=1; }
	done
	[ "$(ls "$dev/frac_queues" | wc -l)" = "$(cat "$dev/frac/num_queues")" ] || rc=1
	return $rc
}
guest_ok "docs/ABI/testing/sysfs-driver-frac names exactly the files of frac/ and frac_queues/<N>/" \
	abi_matches_sysfs

guest_dmesg_check
guest_end
