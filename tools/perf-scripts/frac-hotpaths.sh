#!/usr/bin/env bash
# frac-hotpaths.sh - profile frac.ko's submission and interrupt paths with perf
#
# Usage: frac-hotpaths.sh [options] [-- workload [args...]]
#
#   -o DIR     output directory (default ./frac-hotpaths)
#   -n JOBS    jobs per queue for the built-in workload (default 300)
#   -q QUEUES  queues for the built-in workload, comma list (default 0)
#   -O OPS     ops for the built-in workload, comma list (default nop,copy)
#   -j DEPTH   jobs in flight for the built-in workload (default 1)
#   -e EVENT   sampling event (default cycles; perf falls back to cpu-clock
#              where there is no PMU, as under TCG)
#   -F FREQ    sampling frequency in Hz (default 4000)
#   -s SYMS    functions to annotate, comma list (default frac_submit_jobs,
#              frac_job_run,frac_queue_process_cq,frac_queue_irq,frac_job_complete)
#   -k KO      frac.ko of the loaded module (default <repo>/kernel/frac.ko)
#   -h         this help
#
# Records `perf record -g -a` over a submit-heavy workload: tools/fracload
# (`fracload -n JOBS*queues -q QUEUES -o OPS -d DEPTH -s 4096`; built into DIR
# when the binary is absent or older than its source or <repo>/lib/libfrac.a),
# or the command given after --. The
# frac:frac_irq tracepoint is recorded with call chains too. Then writes into
# DIR:
#   perf.data, script.txt  the recording, and perf script's text of it
#   report.txt         self samples per symbol (perf report --sort dso,sym)
#   annotate.txt       perf annotate --stdio of each function of SYMS that has
#                      samples, and the three busiest frac.ko functions when none
#                      of SYMS has samples of the sampling event
#   folded.txt         every sampled stack, "comm;outer;...;inner count" (flame
#                      graph input: flamegraph.pl, speedscope)
#   folded-frac.txt    the stacks through a frac_ function
#   folded-irq.txt     the stacks at frac:frac_irq (the interrupt path; counts
#                      are interrupts, not time)
# and prints the frac.ko lines of the report, the sampled instructions of each
# annotation and the top stacks.
#
# perf annotate needs frac.ko's code: the script checks that KO's build-id is
# the loaded module's and adds KO to perf's build-id cache. It sets
# PERF_BUILDID_DIR to DIR/.debug, but perf 6.12 ignores it (a review found the
# cache in ~/.debug, DIR/.debug empty): the cache is the user's ~/.debug (TODO:
# perf --buildid-dir). Where DIR's filesystem refuses the shared mmap perf
# needs (EINVAL: 9p without cache, as the rig's results share $FRAC_OUT), the
# script says so, works in a scratch directory under ${TMPDIR:-/tmp} and
# copies its entries to DIR when it exits (a signal included; if the copy
# fails, the scratch stays and the exit status is non-zero); a DIR it cannot
# write into is refused at once. If perf names none of frac.ko's sampled
# functions, it fails rather than annotate addresses.
# Hard-IRQ code (frac_queue_irq,
# frac_queue_process_cq, frac_job_complete) only gets samples from an NMI
# driven PMU event: the cpu-clock fallback is an hrtimer interrupt, which waits
# until the handler has returned, so under TCG those functions show no samples
# and only the frac_irq tracepoint covers them: its samples sit at the
# tracepoint's call site, so frac_queue_irq's annotation (event frac:frac_irq)
# counts interrupts, and folded-irq.txt has the stacks they arrive on.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=./frac-hotpaths JOBS=300 QUEUES=0 OPS=nop,copy DEPTH=1 FREQ=4000 EVENT=cycles
SYMS=frac_submit_jobs,frac_job_run,frac_queue_process_cq,frac_queue_irq,frac_job_complete
KO=$REPO/kernel/frac.ko

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "frac-hotpaths: $*" >&2; exit 1; }

while getopts "o:n:q:O:j:e:F:s:k:h" opt; do
	case $opt in
	o) OUT=$OPTARG ;;
	n) JOBS=$OPTARG ;;
	q) QUEUES=$OPTARG ;;
	O) OPS=$OPTARG ;;
	j) DEPTH=$OPTARG ;;
	e) EVENT=$OPTARG ;;
	F) FREQ=$OPTARG ;;
	s) SYMS=$OPTARG ;;
	k) KO=$OPTARG ;;
	h) usage 0 ;;
	*) usage 2 >&2 ;;
	esac
done
shift $((OPTIND - 1))

command -v perf >/dev/null || die "perf not found (Debian: linux-perf from bookworm-backports)"
[ -d /sys/module/frac ] || die "frac.ko is not loaded"
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)

# perf record reads perf.data back through a shared mmap of the file it still
# has open for writing (to collect build-ids), and perf buildid-cache copies
# through one. A filesystem that refuses it (9p without a page cache, as the
# rig's results share $FRAC_OUT: the mapping is refused with EINVAL) left
# perf.data without build-ids and the cache empty: every frac.ko sample an
# address, every annotation empty, and exit 0. So probe the directory; where
# it refuses, work in a scratch directory and copy the results to DIR at the
# end.
mmap_probe() { # mmap_probe DIR: 0 the mapping works, 3 it is refused, else an error (said)
	python3 - "$1" <<-'PY'
	import errno, mmap, os, sys
	path = os.path.join(sys.argv[1], f".frac-hotpaths-mmap-probe.{os.getpid()}")
	try:
	    with open(path, "w+b") as f:
	        f.write(b"\0" * mmap.PAGESIZE)
	        f.flush()
	        try:
	            mmap.mmap(f.fileno(), mmap.PAGESIZE, mmap.MAP_SHARED, mmap.PROT_READ).close()
	        except OSError as e:
	            if e.errno in (errno.EINVAL, errno.ENODEV):
	                sys.exit(3)
	            raise
	except OSError as e:
	    sys.exit(f"frac-hotpaths: {sys.argv[1]}: {e.strerror}")
	finally:
	    try:
	        os.unlink(path)
	    except OSError:
	        pass
	PY
}
DEST=$OUT
rc=0
mmap_probe "$OUT" || rc=$?
[ $rc = 0 ] || [ $rc = 3 ] || die "cannot write into $DEST"
if [ $rc = 3 ]; then
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/frac-hotpaths.XXXXXX") || die "cannot create a scratch directory"
	# On every exit, failures and signals included, DIR gets what was recorded (the
	# entries, not the scratch directory's own mode); the scratch goes only once copied.
	finish() {
		local rc=$? f
		shopt -s dotglob nullglob
		f=("$OUT"/*)
		if [ ${#f[@]} = 0 ] || cp -a -t "$DEST" -- "${f[@]}"; then
			rm -rf "$OUT"
		else
			echo "frac-hotpaths: copying to $DEST failed: the results stay in $OUT" >&2
			[ $rc != 0 ] || rc=1
		fi
		exit $rc
	}
	trap finish EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
	rc=0
	mmap_probe "$OUT" || rc=$?
	[ $rc = 0 ] || die "neither $DEST nor $OUT allows the shared mmap perf needs" \
		"(set TMPDIR to a local filesystem)"
	echo "frac-hotpaths: $DEST refuses the shared mmap perf needs (EINVAL: 9p without a" \
		"cache, as \$FRAC_OUT): recording in $OUT, copied to $DEST at the end" >&2
fi
mkdir -p "$OUT/.debug"
export PERF_BUILDID_DIR=$OUT/.debug

# When perf can read /proc/kcore (root: CAP_SYS_RAWIO) it takes all kernel code
# from it and files module samples under [kernel.kallsyms]; perf annotate
# then printed nothing for them (perf 6.12 in the guest).
# Without CAP_SYS_RAWIO perf keeps frac.ko as the module [frac], with its
# symbols and code from the build-id cache.
perf_nokcore() {
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		setpriv --inh-caps=-sys_rawio --bounding-set=-sys_rawio perf "$@"
	else
		perf "$@"
	fi
}

# perf annotate reads the module's code from the build-id cache: only a .ko
# with the loaded module's build-id will do.
loaded_id=$(od -An -tx1 -v /sys/module/frac/notes/.note.gnu.build-id 2>/dev/null |
	tr -d ' \n' | cut -c33-)
ko_id=$(readelf -n "$KO" 2>/dev/null | awk '/Build ID/ { print $3 }')
if [ -z "$ko_id" ]; then
	echo "frac-hotpaths: warning: no build-id in $KO: annotate falls back to nothing" >&2
elif [ -n "$loaded_id" ] && [ "$loaded_id" != "$ko_id" ]; then
	echo "frac-hotpaths: warning: $KO (build-id $ko_id) is not the loaded frac" \
		"($loaded_id): annotations would be wrong, skipping the build-id cache" >&2
else
	perf buildid-cache -a "$KO" 2>/dev/null || perf buildid-cache -u "$KO" ||
		echo "frac-hotpaths: warning: perf buildid-cache -a $KO failed" >&2
fi

if [ $# -eq 0 ]; then
	load=$REPO/tools/fracload/fracload
	if [ ! -x "$load" ] || [ "$load" -ot "$REPO/tools/fracload/fracload.c" ] ||
	   [ "$load" -ot "$REPO/lib/libfrac.a" ]; then
		[ -f "$REPO/lib/libfrac.a" ] || die "$REPO/lib/libfrac.a missing: make -C lib"
		load=$OUT/fracload
		${CC:-cc} -O2 -g -fno-omit-frame-pointer -std=gnu11 -I"$REPO/lib" \
			-I"$REPO/include" -I"$REPO/include/uapi/drm" -I/usr/include/drm -o "$load" \
			"$REPO/tools/fracload/fracload.c" "$REPO/lib/libfrac.a" ||
			die "cannot build tools/fracload"
	fi
	# -n is per queue here, fracload's counts all jobs; 4096 bytes, as this script always used.
	nq=$(awk -F, '{ print NF }' <<< "$QUEUES")
	set -- "$load" -n $((JOBS * nq)) -q "$QUEUES" -o "$OPS" -d "$DEPTH" -s 4096
fi

# The frequency goes in the event's terms: perf record -F would also turn the
# tracepoint from every hit (period 1) into a sampled one.
case $EVENT in
*/) SAMPLE_EVENT=${EVENT%/},freq=$FREQ/ ;;
*) SAMPLE_EVENT=$EVENT/freq=$FREQ/ ;;
esac
echo "== perf record -g -a -e $SAMPLE_EVENT -e frac:frac_irq -- $*"
perf record -g -a -e "$SAMPLE_EVENT" -e frac:frac_irq --no-buildid-cache \
	-o "$OUT/perf.data" -- "$@" \
	2> "$OUT/record.log" || { cat "$OUT/record.log" >&2; die "perf record failed"; }
grep -v '^\[ perf record: Woken' "$OUT/record.log" || true

perf_nokcore report -i "$OUT/perf.data" --stdio --no-children --sort dso,sym -g none \
	--percent-limit 0 > "$OUT/report.txt" 2> "$OUT/report.log" ||
	die "perf report failed: $(tail -n 3 "$OUT/report.log")"
# "  12.34%  [frac]  [k] frac_submit_ioctl": symbols of frac.ko, busiest first,
# from the first event's table (the sampling event); all_syms also has those
# of the second table, frac_irq, whose samples sit at the tracepoint's call
# site in frac_queue_irq.
frac_lines=$(awk '/^# Samples:/ { n++ } n == 1 && $2 == "[frac]" && $3 == "[k]"' \
	"$OUT/report.txt")
frac_syms=$(awk '{ print $4 }' <<< "$frac_lines")
all_syms=$(awk '$2 == "[frac]" && $3 == "[k]" { print $4 }' "$OUT/report.txt")

# Samples in frac.ko that perf could not name (no build-id in perf.data, no
# code in the cache) read "0x00000000000046bf": say so rather than annotate
# addresses.
if [ -n "$frac_syms" ] && ! grep -qv '^0x' <<< "$frac_syms"; then
	die "perf named none of frac.ko's sampled functions (only addresses): it found" \
		"neither the module's build-id nor its code; see $DEST/record.log and $DEST/report.log"
fi
echo
echo "== frac.ko functions by self samples (perf report --no-children --sort dso,sym)"
if [ -n "$frac_lines" ]; then head -n 20 <<< "$frac_lines"; else echo "(no samples in frac.ko)"; fi

want=()
IFS=, read -r -a syms <<< "$SYMS"
for s in "${syms[@]}"; do
	grep -qxF -- "$s" <<< "$all_syms" && want+=("$s")
done
timed=0
for s in "${want[@]}"; do
	grep -qxF -- "$s" <<< "$frac_syms" && timed=1
done
if [ $timed = 0 ] && [ -n "$frac_syms" ]; then
	echo "(no time samples in $SYMS: also annotating the busiest frac.ko functions)"
	mapfile -t -O "${#want[@]}" want <<< "$(head -n 3 <<< "$frac_syms")"
fi
: > "$OUT/annotate.txt"
for s in "${want[@]}"; do
	echo "== $s" >> "$OUT/annotate.txt"
	perf_nokcore annotate -i "$OUT/perf.data" --stdio "$s" >> "$OUT/annotate.txt" \
		2>> "$OUT/annotate.log" || echo "(perf annotate $s failed)" >> "$OUT/annotate.txt"
done
echo
echo "== perf annotate --stdio: ${want[*]:-nothing to annotate}"
echo "(instructions with samples and their source line; all of it in $DEST/annotate.txt)"
# "   16.67 :   2a30:   endbr64" is a sampled instruction, "   : 26   if (...)"
# a source line.
awk '/^== / || /^ Percent \|/ { print; src = ""; next }
     $1 == ":" && $2 ~ /^[0-9]+$/ { src = $0; next }
     $2 == ":" && $1 + 0 > 0 { if (src != "") print src; src = ""; print }' \
	"$OUT/annotate.txt"

perf_nokcore script -i "$OUT/perf.data" > "$OUT/script.txt" 2> "$OUT/script.log" ||
	die "perf script failed: $(tail -n 3 "$OUT/script.log")"
python3 "$HERE/frac-stackcollapse.py" --skip-event frac:frac_irq -o "$OUT/folded.txt" \
	"$OUT/script.txt" || die "no call chains in the recording ($DEST/script.txt)"
python3 "$HERE/frac-stackcollapse.py" --event frac:frac_irq -o "$OUT/folded-irq.txt" \
	"$OUT/script.txt" || echo "frac-hotpaths: no frac_irq events recorded" >&2
grep -F 'frac_' "$OUT/folded.txt" > "$OUT/folded-frac.txt" || true

top() { # top FILE: the 10 biggest stacks, count first
	awk '{ c = $NF; sub(/ [0-9]+$/, ""); print c, $0 }' "$1" | sort -k1,1nr |
		awk 'NR <= 10 { print substr($0, 1, 300) }'
}
echo
echo "== top stacks through frac.ko ($(wc -l < "$OUT/folded-frac.txt") of" \
	"$(wc -l < "$OUT/folded.txt") stacks; $DEST/folded.txt is flame graph input)"
top "$OUT/folded-frac.txt"
echo
echo "== interrupt path: stacks at frac:frac_irq ($DEST/folded-irq.txt, counts are events)"
top "$OUT/folded-irq.txt"
