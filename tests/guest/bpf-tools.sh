#!/usr/bin/env bash
# Guest test of the libbpf tools in bpf/ (fraclat, fracirq, fracdma, fracsnoop).
# Runs inside the guest (scripts/vm), prints TAP, exits non-zero on any failure.
#
# A known workload (tools/fracload: N jobs of known ops and sizes on known queues) runs with
# every tool attached, once through tp_btf/fentry and once through the raw_tp/kprobe
# fallbacks; tests/guest/bpf-tools/check.py then checks the counts, that the stages add up to
# the total of every job, that the JSON parses, and that every job's total lies inside the
# workload's own window for it (fracload -j: CLOCK_MONOTONIC before its SUBMIT and after its
# WAIT) and holds its device time. A bpftrace script and trace-cmd record alongside the main
# run (the tools must coexist with them; trace-cmd must see every job), but their latencies
# are not compared with the tools': two tracers stamping one event differ by whatever
# preempts them in between (a 2 ms tolerance on the max failed one make test in three).
# Nothing here asserts how fast anything is.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/frac-guest.bash"	# guest_load_frac, guest_have_device

REPO=$GUEST_REPO
BPF=$REPO/bpf
LOAD=$REPO/tools/fracload/fracload
CHECK=$REPO/tests/guest/bpf-tools/check.py
BT=$REPO/tests/guest/bpf-tools/fraclat-total.bt
T=$(mktemp -d /tmp/bpf-tools.XXXXXX)
OUT=${FRAC_OUT:-$T}/bpf-tools
mkdir -p "$OUT"
TOOLS=(fraclat fracirq fracdma fracsnoop)
N=48		# main run: 4 queues x 4 ops x 3
NFB=16		# fallback run
FLOOD=256	# flood run: jobs in flight at once, on one queue behind a delayed first job
LEAST=$((FLOOD / 2))	# the flood run fails unless this many jobs were in flight at once
NIRQ=4000	# interrupt flood: nops on one queue, IRQ_DEPTH of them in flight at once
IRQ_DEPTH=256
PLAN=87
n=0 failed=0 was_loaded=0 pids=() tc_pid=

echo "1..$PLAN"
ok() { # ok DESCRIPTION COMMAND...: one TAP line from the command's status
	local desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
tap() { # number the "ok - "/"not ok - " lines of check.py
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) n=$((n + 1)); echo "ok $n ${line#ok }" ;;
		"not ok - "*) n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n ${line#not ok }" ;;
		*) echo "$line" ;;
		esac
	done
}
diag() { sed 's/^/# /' "$@"; }
finish() {
	local p
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ "$was_loaded" = 1 ] || guest_unload_frac 2>/dev/null
	while [ $n -lt $PLAN ]; do
		n=$((n + 1))
		case "$1" in
		"SKIP "*) echo "ok $n - not run # $1" ;;
		*) echo "not ok $n - not run: $1"; failed=$((failed + 1)) ;;
		esac
	done
	cp -r "$T"/. "$OUT"/ 2>/dev/null
	rm -rf "$T"
	exit $((failed != 0))
}
# wait_for FILE PATTERN [SECS]: until the file has a line matching PATTERN
wait_for() {
	local i
	for ((i = 0; i < ${3:-120} * 10; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "# timed out waiting for '$2' in $(basename "$1"):"; diag "$1"
	return 1
}
# bg NAME COMMAND...: run in the background, stdout to $T/NAME.out, stderr to $T/NAME.err
bg() { local name=$1; shift; "$@" > "$T/$name.out" 2> "$T/$name.err" & pids+=($!); }
stop_all() { # SIGINT the background tracers and wait for them
	local p rc=0
	for p in ${pids[@]}; do kill -INT "$p" 2>/dev/null; done
	for p in ${pids[@]}; do wait "$p" || rc=1; done
	pids=()
	return $rc
}
# one_line_err RC PATTERN COMMAND...: exit status RC and exactly one stderr line matching PATTERN
one_line_err() {
	local want=$1 pat=$2 rc; shift 2
	"$@" > "$T/err.out" 2> "$T/err.txt"; rc=$?
	if [ $rc = "$want" ] && [ "$(wc -l < "$T/err.txt")" = 1 ] && grep -q -- "$pat" "$T/err.txt"; then
		return 0
	fi
	echo "# $*: exit $rc (want $want), stderr:"; diag "$T/err.txt"
	return 1
}
each_tool_fails() { # each_tool_fails PATTERN [PREFIX...]: every tool exits non-zero with PATTERN
	local pat=$1 t rc bad=0; shift
	for t in "${TOOLS[@]}"; do
		"$@" "$BPF/$t" > "$T/err.out" 2> "$T/err.txt"; rc=$?
		if [ $rc = 0 ] || ! grep -q -- "$t: $pat" "$T/err.txt"; then
			echo "# $t: exit $rc, stderr:"; diag "$T/err.txt"; bad=1
		fi
	done
	return $bad
}

for t in "${TOOLS[@]}" hist_test; do
	[ -x "$BPF/$t" ] || { echo "# $BPF/$t not built (make -C bpf)"; finish "bpf tools not built"; }
done
[ -x "$LOAD" ] || { echo "# $LOAD not built (make -C tools/fracload)"; finish "fracload not built"; }

# ---- percentiles and arguments (no module needed) ---------------------------------------
hist_test() { "$BPF/hist_test" > "$T/hist_test.txt" || { diag "$T/hist_test.txt"; return 1; }; }
ok "percentiles: the exact nearest-rank value inside the bounds every tool prints" hist_test
ok "fraclat: bad interval: one line, exit 2" \
	one_line_err 2 "^fraclat: invalid interval 'x'$" "$BPF/fraclat" x
ok "fracirq: bad count: one line, exit 2" \
	one_line_err 2 "^fracirq: invalid count '0'$" "$BPF/fracirq" 1 0
ok "fracsnoop: bad queue: one line, exit 2" \
	one_line_err 2 "^fracsnoop: invalid queue 'abc'$" "$BPF/fracsnoop" -q abc
ok "fracdma: bad linear step: one line, exit 2" \
	one_line_err 2 "^fracdma: invalid linear step '0'$" "$BPF/fracdma" -L 0
help_ok() {
	local t
	for t in "${TOOLS[@]}"; do
		"$BPF/$t" --help > "$T/help.txt" 2>&1 && grep -q "USAGE: $t" "$T/help.txt" ||
			{ echo "# $t --help:"; diag "$T/help.txt"; return 1; }
	done
}
ok "--help of every tool" help_ok

# ---- without the module -----------------------------------------------------------------
if [ -e /sys/module/frac ]; then
	was_loaded=1
	guest_unload_frac 2>/dev/null
fi
if [ -e /sys/module/frac ]; then
	skip "every tool: 'frac module not loaded', non-zero exit" "frac is loaded and in use"
else
	ok "every tool: 'frac module not loaded', non-zero exit" \
		each_tool_fails "frac module not loaded (no frac tracepoints)"
fi

# ---- load the driver --------------------------------------------------------------------
guest_have_device || finish "SKIP no FRAC-1 device"
ok "frac.ko loads" guest_load_frac || finish "the driver did not load"

ok "every tool as nobody: 'permission denied', non-zero exit" \
	each_tool_fails "permission denied" setpriv --reuid=65534 --regid=65534 --clear-groups

# Root is not privileged by its uid: without capabilities, one line; with CAP_BPF and CAP_PERFMON
# only, the module's BTF cannot be looked up (CAP_SYS_ADMIN), so raw_tp, said in one line.
caps() { setpriv --bounding-set "-all$1" --inh-caps "-all$1" "${@:2}"; }
ok "every tool as root without capabilities: one 'permission denied' line, exit 1" eval \
	'for t in "${TOOLS[@]}"; do one_line_err 1 "^$t: permission denied: needs CAP_BPF" \
		caps "" "$BPF/$t" || return 1; done'
bpf_perfmon_only() {
	local t rc
	for t in fraclat fracsnoop fracdma; do	# one 1 s interval (fracsnoop: 1 s), then exit
		if [ $t = fracsnoop ]; then set -- 1; else set -- 1 1; fi
		caps ",+bpf,+perfmon" "$BPF/$t" -j "$@" > "$T/err.out" 2> "$T/err.txt"
		rc=$?
		if [ $rc != 0 ] || ! grep -q "^$t: attaching with raw_tp, not tp_btf: looking up the frac module's BTF needs CAP_SYS_ADMIN" "$T/err.txt" ||
			[ "$(grep -vc '^Tracing' "$T/err.txt")" != 1 ]; then
			echo "# $t: exit $rc, stderr:"; diag "$T/err.txt"; return 1
		fi
	done
}
ok "fraclat, fracsnoop, fracdma with CAP_BPF+CAP_PERFMON: raw_tp, and one line why" \
	bpf_perfmon_only
irq_perfmon_only() { # its handlers through kprobe.multi links: no perf event, no paranoid check
	local rc
	caps ",+bpf,+perfmon" "$BPF/fracirq" -j 1 1 > "$T/err.out" 2> "$T/err.txt"
	rc=$?
	[ $rc = 0 ] && [ "$(grep -vc '^Tracing' "$T/err.txt")" = 2 ] &&
		grep -q "^fracirq: attaching with raw_tp, not tp_btf: looking up" "$T/err.txt" &&
		grep -q "^fracirq: attaching with kprobe.multi, not fentry/fexit: looking up" \
			"$T/err.txt" ||
		{ echo "# perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid), exit $rc:"
		  diag "$T/err.txt"; return 1; }
}
ok "fracirq with CAP_BPF+CAP_PERFMON: kprobe.multi whatever perf_event_paranoid, said why" \
	irq_perfmon_only

# ---- the attach probes: each tool probes (attach, detach) every BTF target it will use ---
D=$T/probes; mkdir -p "$D"
if command -v strace > /dev/null; then
	for t in "${TOOLS[@]}"; do	# one 1 s interval (fracsnoop: 1 s), then exit
		if [ $t = fracsnoop ]; then set -- 1; else set -- 1 1; fi
		strace -o "$D/$t.strace" -e trace=bpf,close "$BPF/$t" -j "$@" > /dev/null \
			2> "$D/$t.err" || { echo "# $t under strace:"; diag "$D/$t.err"; }
	done
	python3 "$CHECK" probes "$D" > "$T/check.out" 2>&1
	tap < "$T/check.out"
else
	for t in "${TOOLS[@]}"; do skip "$t: probes every BTF target it uses" "no strace"; done
fi

# ---- main run: tp_btf + fentry, with bpftrace and trace-cmd on the same events ----------
# Attach order matters for the comparison: a tracepoint runs its probes in the order they
# were registered, and each stamps its own time, so the reference tracers go first and
# fraclat's timestamps come after theirs at both ends of every job.
dmesg_start=$(dmesg | wc -l)
D=$T/main; mkdir -p "$D"
start_main() {
	bg bpftrace bpftrace "$BT" && wait_for "$T/bpftrace.out" "^Attaching" || return 1
	bg trace-cmd stdbuf -oL trace-cmd record -C mono -o "$D/trace.dat" \
		-e frac:frac_job_submit -e frac:frac_fence_signal &&
		wait_for "$T/trace-cmd.out" "Hit Ctrl^C" || return 1
	tc_pid=${pids[-1]}
	bg lat "$BPF/fraclat" -j && wait_for "$T/lat.err" "^Tracing" || return 1
	bg snoop "$BPF/fracsnoop" -j && wait_for "$T/snoop.err" "^Tracing" || return 1
	bg irq "$BPF/fracirq" -j && wait_for "$T/irq.err" "^Tracing" || return 1
	bg dma "$BPF/fracdma" -j && wait_for "$T/dma.err" "^Tracing" || return 1
}
ok "bpftrace, trace-cmd and the four tools attach" start_main
# bpftrace attaches to tracepoints through perf events, whose programs do not run while
# another such program runs on the CPU: a frac interrupt arriving during bpftrace's
# frac_job_submit program would hide that interrupt's frac_fence_signal from it (counted as
# a miss in `bpftool prog`). Interrupts on one CPU and the workload on another avoid that.
pin_irqs() {
	local irq cpu=$(($(nproc) - 1))
	[ $cpu -gt 0 ] || return 0
	for irq in $(awk '/ frac-/ { sub(":", "", $1); print $1 }' /proc/interrupts); do
		echo $cpu > /proc/irq/$irq/smp_affinity_list || return 1
	done
}
ok "frac interrupts on CPU $(($(nproc) - 1)), the workload on CPU 0" pin_irqs
run_load() { # run_load DIR fracload-args...: the workload, its summary in DIR/load.json
	local d=$1; shift
	taskset -c 0 "$LOAD" -j "$@" > "$d/load.json" 2> "$T/load.err" ||
		{ echo "# fracload failed:"; diag "$T/load.err"; return 1; }
	# the last BOs are freed after fracload exits (the scheduler frees jobs): fracdma's
	[ -n "${NO_BO_WAIT:-}" ] || sleep 2
}
ok "fracload: $N jobs, 4 ops x 4 queues, 4 jobs per SUBMIT_BATCH" \
	run_load "$D" -n $N -q 0,1,2,3 -o copy,fill,crc32c,gemm -b 4 -d 8
stop_main() {
	# trace-cmd first: it copies /proc/kallsyms into its file, which changes size while the
	# tools unload their programs.
	if [ -n "$tc_pid" ]; then
		kill -INT "$tc_pid"
		wait "$tc_pid" || { diag "$T/trace-cmd.err"; stop_all; return 1; }
		pids=("${pids[@]/$tc_pid}")
	fi
	bpftool prog show > "$D/progs.txt" 2>&1	# run counts and misses, for diagnosis
	stop_all || { diag "$T"/*.err; return 1; }
	mv "$T/lat.out" "$D/lat.json"; mv "$T/snoop.out" "$D/snoop.json"
	mv "$T/irq.out" "$D/irq.json"; mv "$T/dma.out" "$D/dma.json"; mv "$T/bpftrace.out" "$D/bt.out"
	trace-cmd report -t -i "$D/trace.dat" > "$D/trace.txt" 2> "$T/report.err" ||
		{ diag "$T/report.err"; return 1; }
}
ok "every tracer exits cleanly on SIGINT" stop_main
python3 "$CHECK" main "$D" > "$T/check.out" 2>&1
tap < "$T/check.out"

# ---- fallbacks: raw_tp + kprobe.multi ---------------------------------------------------
D=$T/fallback; mkdir -p "$D"
start_fallback() {
	# -L 1: linear buckets of 1 us, so that the JSON has an overflow bucket (high null)
	bg lat "$BPF/fraclat" -j -O -L 1 --no-btf && wait_for "$T/lat.err" "^Tracing" || return 1
	bg snoop "$BPF/fracsnoop" -j --no-btf && wait_for "$T/snoop.err" "^Tracing" || return 1
	bg irq "$BPF/fracirq" -j --no-btf && wait_for "$T/irq.err" "^Tracing" || return 1
	bg dma "$BPF/fracdma" -j --no-btf && wait_for "$T/dma.err" "^Tracing" || return 1
}
ok "the four tools attach with --no-btf" start_fallback
ok "fracload: $NFB jobs, 2 ops x 2 queues" run_load "$D" -n $NFB -q 1,3 -o fill,copy -s 8192
stop_fallback() {
	stop_all || { diag "$T"/*.err; return 1; }
	mv "$T/lat.out" "$D/lat.json"; mv "$T/snoop.out" "$D/snoop.json"
	mv "$T/irq.out" "$D/irq.json"; mv "$T/dma.out" "$D/dma.json"
}
ok "every tool exits cleanly on SIGINT" stop_fallback
python3 "$CHECK" fallback "$D" > "$T/check.out" 2>&1
tap < "$T/check.out"

# ---- flood: a backlog of jobs in flight, nothing lost --------------------------------
# fraclat and fracsnoop (one program per job, no job table); the first job of queue 0 takes 2 s
# longer (fault injection "latency", under the 5 s job timeout), so the $FLOOD jobs queued
# behind it are in flight together: fracload says how many had not ended right after its last
# SUBMIT. Then jobs that fail: 8 copies on queue 1, the first 3 failed by the device ("error");
# then 6 nops on queue 2, all but the last without a job id (their events carry job 0).
# check.py: every job the workloads submitted is measured, none lost, the no-id ones too.
D=$T/flood; mkdir -p "$D"
FI=/sys/kernel/debug/accel/$(guest_bdf)/inject_fault
start_flood() {
	bg lat "$BPF/fraclat" -j && wait_for "$T/lat.err" "^Tracing" || return 1
	bg snoop "$BPF/fracsnoop" -j && wait_for "$T/snoop.err" "^Tracing" || return 1
}
if [ -w "$FI" ]; then
	ok "fraclat and fracsnoop attach for the flood" start_flood
	ok "fracload: $FLOOD jobs submitted before any is waited for" eval \
		'echo "latency 0 2000" > "$FI" && NO_BO_WAIT=1 run_load "$D" -n $FLOOD -q 0 -o nop -d $FLOOD &&
		 mv "$D/load.json" "$D/load1.json"'
	run_failing() { # fracload exits 1 when jobs failed: its JSON says which
		echo "error 1 3" > "$FI" || return 1
		taskset -c 0 "$LOAD" -j -n 8 -q 1 -o copy -s 4096 > "$D/load2.json" \
			2> "$T/load.err"
		[ $? = 1 ] && python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["failed"] != 3)' \
			"$D/load2.json" || { diag "$T/load.err"; return 1; }
	}
	ok "fracload: 8 jobs on queue 1, 3 of them failed by the device" run_failing
	ok "fracload: 6 jobs on queue 2, 5 of them without a job id (NO_JOB_ID)" eval \
		'NO_BO_WAIT=1 run_load "$D" -n 6 -q 2 -o nop -U && mv "$D/load.json" "$D/load3.json" &&
		 mv "$D/load1.json" "$D/load.json"'
	stop_flood() {
		stop_all || { diag "$T"/*.err; return 1; }
		mv "$T/lat.out" "$D/lat.json"; mv "$T/snoop.out" "$D/snoop.json"
	}
	ok "fraclat and fracsnoop exit cleanly on SIGINT" stop_flood
	python3 "$CHECK" flood "$D" $LEAST > "$T/check.out" 2>&1
	tap < "$T/check.out"
else
	for i in $(seq 14); do skip "flood run" "no $FI (fault-injection=on)"; done
fi

# ---- interrupt flood: the interrupt stage is exact ------------------------------------
# $NIRQ nops on queue 0 with $IRQ_DEPTH in flight and no fault: a run of the queue's handler
# consumed 9 to 18 records on average in the runs measured, some of them arriving while it ran,
# of jobs run after it began. Every job was ended by an interrupt handler, so fraclat and
# fracsnoop (one program per job, no job table) must measure each with its
# interrupt: no-irq 0 (only a timeout scan or a reset ends a job without one), clamped 0 (the
# device cannot start a job before its run nor end it after the handler found its record,
# and the driver converts each job's device times within those two: see check.py), each
# job's stages adding up to its total, and every job counted. (Before commit 43c231b, with the
# interrupt time guessed from the queue's last frac_irq, this flood had 28 no-irq and 184 clamped.)
D=$T/irqflood; mkdir -p "$D"
start_irqflood() {
	bg lat "$BPF/fraclat" -j && wait_for "$T/lat.err" "^Tracing" || return 1
	bg snoop "$BPF/fracsnoop" -j && wait_for "$T/snoop.err" "^Tracing" || return 1
}
ok "fraclat and fracsnoop attach (interrupt flood)" start_irqflood
ok "fracload: $NIRQ nops on queue 0, $IRQ_DEPTH in flight" \
	run_load "$D" -n $NIRQ -q 0 -o nop -d $IRQ_DEPTH
stop_irqflood() {
	stop_all || { diag "$T"/*.err; return 1; }
	mv "$T/lat.out" "$D/lat.json"; mv "$T/snoop.out" "$D/snoop.json"
}
ok "fraclat and fracsnoop exit cleanly on SIGINT (interrupt flood)" stop_irqflood
python3 "$CHECK" irqflood "$D" > "$T/check.out" 2>&1
tap < "$T/check.out"
# How far the jobs' own stamps moved the sampled clock offset (frac_job_clock_offset()).
echo "# debugfs clock after the flood:"
diag "/sys/kernel/debug/accel/$(guest_bdf)/clock" 2>/dev/null || echo "# (no debugfs clock)"

# ---- text output, interval and count ----------------------------------------------------
D=$T/text; mkdir -p "$D"
start_text() {
	bg lat "$BPF/fraclat" -Q -L 1000 && wait_for "$T/lat.out" "^Tracing" || return 1
	bg snoop "$BPF/fracsnoop" && wait_for "$T/snoop.err" "^Tracing" || return 1
	bg irq "$BPF/fracirq" && wait_for "$T/irq.out" "^Tracing" || return 1
	bg dma "$BPF/fracdma" -s && wait_for "$T/dma.out" "^Tracing" || return 1
}
ok "the four tools attach (text output)" start_text
run_load "$D" -n 8 -q 0,1 -o crc32c,timestamp > /dev/null
stop_all > /dev/null
for t in lat snoop irq dma; do mv "$T/$t.out" "$D/frac$t.txt"; done
has() { grep -q -- "$2" "$D/$1" || { echo "# no '$2' in $1:"; diag "$D/$1"; return 1; }; }
ok "fraclat: per-queue linear histograms and summary lines" eval \
	'has fraclat.txt "^dev = 0, queue = 1$" && has fraclat.txt "^ *usecs *: count *distribution" &&
	 has fraclat.txt "^ *0 *: [1-4] "  &&
	 [ "$(grep -c "^count 4 " "$D/fraclat.txt")" = 12 ]'
ok "fracsnoop: a line per job" eval \
	'[ "$(grep -c " fracload " "$D/fracsnoop.txt")" = 8 ] && has fracsnoop.txt "TOTAL(us)"'
ok "fracirq: vectors and histograms" eval \
	'has fracirq.txt "^0 *0 *frac-q0 " && has fracirq.txt "^handler time, frac-q1 (irq" &&
	 has fracirq.txt "^interrupt -> fence signalled, dev 0 queue 1"'
ok "fracdma: per-direction table and size histogram" eval \
	'has fracdma.txt "^0 *map *to_device *1 *16384 " &&
	 has fracdma.txt "^0 *map *from_device *1 *16384 " && has fracdma.txt "^map sizes, dev 0"'
interval_count() { # fracdma 1 2: two JSON objects, then exits by itself
	"$BPF/fracdma" -j 1 2 > "$D/interval.json" 2> /dev/null &&
		[ "$(python3 -c 'import json,sys; print(len([json.loads(l) for l in open(sys.argv[1])]))' \
			"$D/interval.json")" = 2 ]
}
ok "interval and count: fracdma -j 1 2 prints two objects and exits" interval_count

dmesg_clean() {
	local hits
	hits=$(dmesg | tail -n +$((dmesg_start + 1)) | grep -E "$GUEST_DMESG_PATTERN") || return 0
	echo "# dmesg:"; echo "$hits" | head -n 40 | sed 's/^/#   /'
	return 1
}
ok "dmesg has no BUG:, WARNING:, Oops or UBSAN while the tools ran" dmesg_clean

[ $n = $PLAN ] || echo "# ran $n of $PLAN checks"
finish "the plan"
