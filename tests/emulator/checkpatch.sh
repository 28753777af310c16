#!/usr/bin/env bash
# Static checks of the device model, as TAP: QEMU's scripts/checkpatch.pl on every emulator/
# C file and header (no errors, no warnings: QEMU's style, 80 columns); every guest error
# through FRAC_GUEST_ERR with a trace event of its own (as hw/nvme's NVME_GUEST_ERR); and no
# emulator function named like a frac.ko function (the emulator's are all frac_npu_*); the op
# names of the two tables that cannot use libfrac's frac_op_name() (the emulator's and the
# trace header's) are the uAPI's DRM_FRAC_OP_*.
#
# Usage: tests/emulator/checkpatch.sh
#   QEMU=<qemu-system-x86_64 from scripts/build-qemu.sh>  its qemu-src link gives checkpatch.pl
#   FRAC_QEMU_SRC=<QEMU source tree>                       else this one
#   (default: the tree scripts/build-qemu.sh unpacked, ${FRAC_CACHE:-~/.cache/frac}/qemu-*)
# Exit status: 0 all passed, 1 a check failed.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
cache=${FRAC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/frac}
src=${FRAC_QEMU_SRC:-}
if [ -z "$src" ] && [ -n "${QEMU:-}" ] && [ -d "$(dirname "$QEMU")/qemu-src" ]; then
	src=$(dirname "$QEMU")/qemu-src
fi
if [ -z "$src" ]; then
	src=$(ls -d "$cache"/qemu-[0-9]* 2>/dev/null | sort -V | tail -n 1)
fi
cp=${src:+$src/scripts/checkpatch.pl}
files=$(cd "$REPO" && ls emulator/*.c emulator/*.h)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
n=0 fail=0

echo "TAP version 13"
echo "1..$(($(echo "$files" | wc -l) + 3))"
for f in $files; do
	n=$((n + 1))
	if [ -z "$cp" ] || [ ! -f "$cp" ]; then
		echo "not ok $n - checkpatch: $f # no QEMU scripts/checkpatch.pl (run scripts/build-qemu.sh)"
		fail=1
		continue
	fi
	(cd "$REPO" && perl "$cp" --no-tree --terse -f "$f") > "$log" 2>&1
	if grep -qE '^total: 0 errors, 0 warnings' "$log" || ! grep -qE ': (ERROR|WARNING):' "$log"; then
		echo "ok $n - checkpatch: $f"
	else
		echo "not ok $n - checkpatch: $f"
		grep -E ': (ERROR|WARNING):' "$log" | head -n 30 | sed 's/^/# /'
		fail=1
	fi
done

# qemu_log_mask only in FRAC_GUEST_ERR itself; each use names a distinct trace-events event.
n=$((n + 1))
bad=$(cd "$REPO" && grep -n 'qemu_log_mask' emulator/*.c emulator/*.h |
	grep -v -E '^emulator/frac_npu.h:[0-9]+: +qemu_log_mask\(LOG_GUEST_ERROR, "frac-npu: " fmt')
names=$(cd "$REPO" && grep -ho 'FRAC_GUEST_ERR([a-z0-9_]*' emulator/*.c | sed 's/.*(//' | sort)
for e in $names; do
	grep -q "^$e(" "$REPO/emulator/trace-events" || bad="$bad${bad:+$'\n'}$e: not in trace-events"
done
for e in $(echo "$names" | uniq -d); do
	bad="$bad${bad:+$'\n'}$e: more than one guest error"
done
if [ -z "$bad" ] && [ -n "$names" ]; then
	echo "ok $n - every guest error goes through FRAC_GUEST_ERR with its own trace event ($(echo "$names" | wc -l))"
else
	echo "not ok $n - every guest error goes through FRAC_GUEST_ERR with its own trace event"
	echo "${bad:-no FRAC_GUEST_ERR found}" | sed 's/^/# /'
	fail=1
fi

# Function definitions: a name at the start of a line followed by '(' after a return type.
defs() { sed -n -E 's/^[a-zA-Z_][a-zA-Z0-9_ *]*[ *]([a-z_][a-z0-9_]*)\(.*/\1/p' "$@" | sort -u; }
n=$((n + 1))
shared=$(comm -12 <(defs "$REPO"/emulator/*.c) <(defs "$REPO"/kernel/*.c "$REPO"/kernel/*.h))
if [ -z "$shared" ]; then
	echo "ok $n - no emulator function shares a name with a kernel/ function"
else
	echo "not ok $n - no emulator function shares a name with a kernel/ function"
	echo "$shared" | sed 's/^/# /'
	fail=1
fi
# "<value> <name>" lines of each table, sorted: the uAPI's (DRM_FRAC_OP_<NAME>, lower case), the
# emulator's ([FRAC_OP_<NAME>] = "<name>": kernel/frac_queue.c pins FRAC_OP_* to DRM_FRAC_OP_*)
# and frac_trace.h's ({ <value>, "<name>" } in frac_trace_op_name).
n=$((n + 1))
uapi=$(sed -n -E 's/^#define[[:space:]]+DRM_FRAC_OP_([A-Z0-9_]+)[[:space:]]+([0-9]+).*/\2 \1/p' \
	"$REPO/include/uapi/drm/frac_accel.h" | tr 'A-Z' 'a-z' | sort)
hwval=$(sed -n -E 's/^[[:space:]]+FRAC_OP_([A-Z0-9_]+) = ([0-9]+),.*/\1 \2/p' "$REPO/include/frac_hw.h")
emu=$(sed -n -E 's/^[[:space:]]+\[FRAC_OP_([A-Z0-9_]+)\] = "([a-z0-9_]+)",$/\1 \2/p' \
	"$REPO/emulator/frac_npu_queue.c" | while read -r op name; do
		echo "$(echo "$hwval" | awk -v op="$op" '$1 == op { print $2 }') $name"; done | sort)
trc=$(sed -n '/define frac_trace_op_name/,/)$/p' "$REPO/kernel/frac_trace.h" |
	sed -n -E 's/.*\{ ([0-9]+), "([a-z0-9_]+)" \}.*/\1 \2/p' | sort)
if [ -n "$uapi" ] && [ "$emu" = "$uapi" ] && [ "$trc" = "$uapi" ]; then
	echo "ok $n - op names of emulator/frac_npu_queue.c and kernel/frac_trace.h are the uAPI's ($(echo "$uapi" | wc -l))"
else
	echo "not ok $n - op names of emulator/frac_npu_queue.c and kernel/frac_trace.h are the uAPI's"
	diff <(echo "$uapi") <(echo "$emu") | sed 's/^/# uapi vs emulator: /'
	diff <(echo "$uapi") <(echo "$trc") | sed 's/^/# uapi vs frac_trace.h: /'
	fail=1
fi
exit $fail
