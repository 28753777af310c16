#!/usr/bin/env bash
# Guest PCIe tests driven from the host: AER errors (correctable, non-fatal, fatal) while jobs
# run, then surprise removal with jobs in flight. Needs the host side: scripts/vm --qmp SOCK
# with tests/host/qmp-agent.py serving $FRAC_OUT/qmp (make test-guest runs both), native PCIe
# hotplug (-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off: with ACPI hotplug QEMU
# never reports the link of the root port active, so the bus reset of a fatal error's recovery
# fails), and fault-injection=on to hold jobs in flight; skips what it cannot do. Loads frac.ko
# with job_timeout_ms=20000 so the held jobs outlive the recoveries. Prints TAP.
. "$(dirname "$0")/../lib/frac-guest.bash"

# Ask the host agent (see tests/host/qmp-agent.py); prints the reply.
qmp() { # qmp JSON [TIMEOUT_S]
	local d=${FRAC_OUT:-/nonexistent}/qmp n
	n=$d/$(date +%s%N)-$$
	[ -f "$d/ready" ] || return 1
	echo "$1" > "$n.req.tmp" && mv "$n.req.tmp" "$n.req" || return 1
	for _ in $(seq $((${2:-30} * 10 + 100))); do
		[ -f "$n.rep" ] && { cat "$n.rep"; return 0; }
		sleep 0.1
	done
	return 1
}

guest_begin
guest_ok "load frac.ko job_timeout_ms=20000" guest_load_frac job_timeout_ms=20000
# Harness filters stop at the first match: the exclusion first.
guest_run "frac_pcie_test (AER)" "$GUEST_TESTS/frac_pcie_test" -T unplug -f pcie
# The removal last: the device is gone after it.
guest_run "frac_pcie_test (unplug)" "$GUEST_TESTS/frac_pcie_test" -t unplug
if guest_have_device; then
	guest_result SKIP "rmmod frac after the removal" "the device is still there"
	guest_result SKIP "QEMU finalized frac0 (DEVICE_DELETED)" "the device is still there"
else
	guest_ok "rmmod frac after the removal" rmmod frac
	# The device model's business: QEMU frees the device, as it does NVMe.
	reply=$(qmp '{"agent": "wait-event", "event": "DEVICE_DELETED", "timeout": 10}' 10)
	if grep -q DEVICE_DELETED <<< "$reply"; then
		guest_result OK "QEMU finalized frac0 (DEVICE_DELETED)"
	else
		echo "# no DEVICE_DELETED within 10 s, frac-npu not finalized: $reply"
		guest_result FAIL "QEMU finalized frac0 (DEVICE_DELETED)"
	fi
fi
guest_dmesg_check
guest_end
