#!/usr/bin/env bash
# Guest smoke test: the FRAC-1 device enumerates and its PCI capabilities decode.
# Runs inside the guest (scripts/vm); prints TAP, exits non-zero on any failure.
set -uo pipefail

ID=1234:fac1
n=0 failed=0
ok() { # ok DESCRIPTION CONDITION...
	local desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
has() { grep -qE -- "$1" <<< "$out"; }

echo "1..8"
out=$(lspci -d "$ID" 2>&1)
ok "device $ID enumerates" test -n "$out"
out=$(lspci -vvv -d "$ID" 2>&1)
ok "class is Processing accelerators" has 'Processing accelerators'
ok "MSI-X capability decodes" has 'Capabilities: \[[0-9a-f]+\] MSI-X: Enable[+-] Count=[0-9]+'
ok "PCI Express capability decodes" has 'Capabilities: \[[0-9a-f]+\] Express \(v2\)'
ok "DevCap advertises FLReset+" has 'ExtTag.* FLReset\+'
ok "AER capability decodes" has 'Capabilities: \[[0-9a-f]+ v[0-9]+\] Advanced Error Reporting'
ok "BAR0 is a 64-bit memory BAR" has 'Region 0: Memory at [0-9a-f]+ \(64-bit'
# Last of the boot (tests run in name order): nothing before it may have splatted either.
ok "dmesg has no BUG:, WARNING:, Oops or UBSAN" eval '! dmesg | grep -qE "BUG:|WARNING:|Oops|UBSAN"'
if [ $failed -ne 0 ]; then
	echo "# lspci -vvv -d $ID:"
	sed 's/^/# /' <<< "$out"
fi
exit $((failed != 0))
