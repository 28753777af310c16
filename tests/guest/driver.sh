#!/usr/bin/env bash
# Guest driver tests: the frac uAPI (every ioctl's happy path, every error with its errno),
# every command against a host reference, and concurrent submission from threads and
# processes on all queues. Loads frac.ko with its default parameters. Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

guest_begin
guest_ok "load frac.ko managed_irqs=Y" guest_load_frac managed_irqs=Y
for t in uapi cmd neg stress; do
	guest_run "frac_${t}_test" "$GUEST_TESTS/frac_${t}_test"
done
guest_dmesg_check
guest_end
