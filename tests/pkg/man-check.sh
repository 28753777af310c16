#!/usr/bin/env bash
# tests/pkg/man-check.sh BINROOT MANROOT: TAP. For every tool of man/pages, the options its
# manual page lists (MANROOT/share/man/manS/NAME.S[.gz], rendered with man) are exactly the
# options its --help lists (BINROOT/{bin,sbin}/NAME); and frac(4) against its sources: every
# module parameter of modinfo, every sysfs file of docs/ABI/testing/sysfs-driver-frac, every
# debugfs file of kernel/frac_debugfs.c and every tracepoint of docs/tracing.md is named.
# Sources are read from the repository this script is in; frac.ko must be built (KO=...).
set -uo pipefail
R=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${1:?usage: man-check.sh BINROOT MANROOT}; man=${2:?}
KO=${KO:-$R/kernel/frac.ko}
n=0 fail=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
# The long and short options of a help text: "-x", "--long" at the start of its option lines.
opts() { grep -oE '^ {0,8}(-[A-Za-z?](, )?)?(--[a-z][a-z0-9-]*)?' | grep -oE -- '-[A-Za-z?]|--[a-z][a-z0-9-]*' | sort -u; }
mapfile -t pages < <(grep -v '^#' "$R/man/pages" | grep .)
echo "1..$(( ${#pages[@]} + 4 ))"
for line in "${pages[@]}"; do
	IFS=$'\t' read -r name sec _b dir _d <<< "$line"
	f=$(ls "$man/share/man/man$sec/$name.$sec"* 2>/dev/null | head -n 1)
	exe=$bin/$dir/$name
	if [ -z "$f" ] || [ ! -x "$exe" ]; then ok 1 "man: $name.$sec and $dir/$name installed"; continue; fi
	a=$(MANWIDTH=200 man -l "$f" 2>/dev/null | awk '/^[A-Z]/ { on = ($0 ~ /^(DESCRIPTION|OPTIONS)/) } on' | opts)
	b=$(COLUMNS=200 "$exe" --help 2>&1 | opts)
	d=$(diff <(echo "$a") <(echo "$b"))
	ok $([ -n "$b" ] && [ -z "$d" ]; echo $?) "man: $name($sec) lists the options of $name --help ($(echo "$b" | wc -l))"
	[ -z "$d" ] || echo "$d" | sed 's/^/# man<  >help: /'
done
f4=$(ls "$man/share/man/man4/frac.4"* 2>/dev/null | head -n 1)
t=$(MANWIDTH=200 man -l "$f4" 2>/dev/null)
check4() {   # what, names...
	local what=$1 miss=(); shift
	for x in "$@"; do grep -qw -- "$x" <<< "$t" || miss+=("$x"); done
	ok ${#miss[@]} "man: frac(4) names every $what ($# of them)${miss:+; missing: ${miss[*]}}"
}
check4 "module parameter of modinfo" $(modinfo -F parm "$KO" | cut -d: -f1)
check4 "sysfs file of docs/ABI/testing/sysfs-driver-frac" \
	$(sed -n 's|^What:.*/\([a-z_]\+\)$|\1|p' "$R/docs/ABI/testing/sysfs-driver-frac" | sort -u)
check4 "debugfs file of kernel/frac_debugfs.c" \
	$(sed -n 's/.*debugfs_create_file("\([a-z_]*\)".*/\1/p' "$R/kernel/frac_debugfs.c")
check4 "tracepoint of docs/tracing.md" \
	$(sed -n 's/^| `\(frac_[a-z_]*\)` |.*/\1/p' "$R/docs/tracing.md")
exit $fail
