#!/usr/bin/env bash
# The main job, run inside the guest by `make run` (scripts/vm): show the FRAC-1 device.
set -euo pipefail
echo "== FRAC-1 as the guest sees it (lspci -vvv -d 1234:fac1)"
lspci -vvv -d 1234:fac1
cat <<'NOTE'

== note
The FRAC-1 device model runs inside QEMU (emulator/frac_npu.c). The guest above is the host's
Debian 6.12 kernel booted in that QEMU; the frac.ko driver, its job latency histograms and
the BPF tools will be shown here once they are wired into this demo.
NOTE
