#!/usr/bin/env bash
# Build and run the FRAC-1 emulator tests (qtest, no guest kernel); TAP on stdout.
#
# Usage: tests/emulator/run.sh [FILTER]
#   QEMU=<qemu-system-x86_64 with frac-npu>   else scripts/build-qemu.sh provides one
#   FILTER                                     run only tests whose "group: name" contains it
#   FRAC_TEST_VERBOSE=1                        time every test
# Exit status: 0 all passed, 1 a test failed, 2 usage/build error, 124 timed out.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

make -s -C "$HERE" >&2 || exit 2
if [ -z "${QEMU:-}" ]; then
	QEMU=$("$HERE/../../scripts/build-qemu.sh" | tail -n 1) || exit 2
fi
# The whole run takes seconds; the bound only guards against a wedged QEMU.
exec timeout -k 10 "${FRAC_EMU_TIMEOUT:-300}" "$HERE/frac_emu_test" "$QEMU" "$@"
