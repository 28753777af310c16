#!/usr/bin/env bash
# Static checks of frac.ko, as TAP: a W=1 build without warnings, sparse (C=2) without
# warnings, and scripts/checkpatch.pl --strict from linux-source-6.12.
#
# Ignored checkpatch types: CONSTANT_COMPARISON (static_asserts that pin uAPI values to
# hardware values compare two constants on purpose); in frac_trace.h also
# PARENTHESIS_ALIGNMENT and OPEN_ENDED_LINE, which the TRACE_EVENT() layout of every
# in-tree trace header trips.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
kver=${KVER:-$(ls /lib/modules | sort -V | tail -n 1)}
kdir=/lib/modules/$kver/build
cache=${FRAC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/frac}/checkpatch
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
n=0 fail=0

tap() {	# ok? description [log]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && sed 's/^/# /' "$3" | head -n 30
		fail=1
	fi
}

echo "1..3"
make -s -C "$kdir" M="$PWD" clean >/dev/null 2>&1
make -C "$kdir" M="$PWD" W=1 modules > "$log/w1" 2>&1
rc=$?
grep -E 'warning:|error:' "$log/w1" > "$log/w1.warn"
[ $rc = 0 ] && [ ! -s "$log/w1.warn" ]; tap $? "kernel: W=1 build without warnings" "$log/w1.warn"

if command -v sparse >/dev/null; then
	make -C "$kdir" M="$PWD" C=2 W=1 modules > "$log/sparse" 2>&1
	grep -E 'warning:|error:' "$log/sparse" > "$log/sparse.warn"
	[ ! -s "$log/sparse.warn" ]; tap $? "kernel: sparse without warnings" "$log/sparse.warn"
else
	n=$((n + 1)); echo "not ok $n - kernel: sparse without warnings # sparse not installed"; fail=1
fi

src=/usr/src/linux-source-6.12.tar.xz
if [ ! -x "$cache/scripts/checkpatch.pl" ] && [ -f "$src" ]; then
	mkdir -p "$cache"
	tar -C "$cache" --strip-components=1 -xf "$src" \
		--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch' 2>/dev/null
fi
if [ -x "$cache/scripts/checkpatch.pl" ]; then
	cp="$cache/scripts/checkpatch.pl --no-tree --strict --terse --show-types -f"
	{ $cp --ignore CONSTANT_COMPARISON $(ls frac_*.c frac_*.h | grep -v frac_trace.h)
	  $cp --ignore CONSTANT_COMPARISON,PARENTHESIS_ALIGNMENT,OPEN_ENDED_LINE frac_trace.h
	} > "$log/cp" 2>&1
	grep -E ': (ERROR|WARNING|CHECK):' "$log/cp" > "$log/cp.warn"
	[ ! -s "$log/cp.warn" ]; tap $? "kernel: checkpatch --strict clean" "$log/cp.warn"
else
	n=$((n + 1)); echo "not ok $n - kernel: checkpatch --strict clean # no $src"; fail=1
fi
make -s -C "$kdir" M="$PWD" W=1 modules >/dev/null 2>&1
exit $fail
