#!/usr/bin/env bash
# Run inside the guest by tools/fracbench/bench: FRAC-1 (zero-latency) and QEMU's NVMe (null-co)
# measured side by side, REPS times each. Raw results go to $FRAC_OUT/bench/*.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
reps=${FRAC_BENCH_REPS:-5}
# FRAC_BENCH_ONLY: a comma list of the figures to measure (p1,p2,p2load,p3,p4,p5,t,d,b,p3i;
# default all). p3i needs the FRAC device behind an IOMMU (tools/fracbench/bench boots a guest
# with one for it); without, it is left out.
only=,${FRAC_BENCH_ONLY:-p1,p2,p2load,p3,p4,p5,t,d,b,p3i},
want() { [[ $only == *,$1,* ]]; }
# Jobs per SUBMIT_BATCH in the QD32 figures (P2, P2bh, P2ld and P2's counts): fracbench refills
# its window of 32 eight jobs, one ioctl, at a time. B measures it against a SUBMIT per job.
PB=8
out=$FRAC_OUT/bench
mkdir -p "$out"

modprobe gpu-sched
modprobe drm_shmem_helper
insmod kernel/frac.ko
if want p1 || want p2 || want p2load; then
	[ -b /dev/nvme0n1 ] || { echo "guest-bench: no /dev/nvme0n1" >&2; exit 1; }
fi

# accel index of the FRAC device behind PCI bridge $1 (tools/fracbench/bench puts frac1 at 00:10.0)
accel_behind() {
	local a
	for a in /sys/class/accel/accel*; do
		case $(readlink -f "$a/device") in
		*/"$1"/*) echo "${a##*accel}"; return 0 ;;
		esac
	done
	return 1
}
find_devs() {	# sets main (the device the figures use), bh (frac1, may be empty) and fb
	local a i
	bh=$(accel_behind 0000:00:10.0) || bh=
	main=
	for a in /sys/class/accel/accel*; do
		i=${a##*accel}
		[ "$i" != "$bh" ] && { main=$i; break; }
	done
	[ -n "$main" ] || { echo "guest-bench: no FRAC device" >&2; exit 1; }
	fb="tools/fracbench/fracbench -D $main"
}
find_devs

start_tool() {	# out-file tool args...: start, and wait until it has attached
	local out=$1 pid
	shift
	"$@" > "$out" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		grep -q '^Tracing\|^Attaching' "$out" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	pids+=("$pid")
}

stop() {	# SIGINT the tools, SIGKILL whatever is left after 10 s
	kill -INT "$@" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$@" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$@" 2>/dev/null || true
	wait "$@" 2>/dev/null || true
}

fio_args() {	# name iodepth engine [runtime [ramp]]: the fio command line, as words
	echo fio --name="$1" --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1 \
	    --iodepth="$2" --ioengine="$3" --size=1G --randrepeat=0 --norandommap \
	    --time_based --runtime="${4:-3}" --ramp_time="${5:-1}" --output-format=json
}
fio_run() { $(fio_args "$@"); }

# The host's load for P1load/P2load: tools/fracbench/bench spins one host core while this
# file exists (it polls every 0.1 s); 1 s to settle either way.
host_load() {
	if [ "$1" = on ]; then : > "$out/host-load"; else rm -f "$out/host-load"; fi
	sleep 1
}

# Context switches and work items of the whole guest over one run of "$@" (perf stat -a),
# into $1: per job they are compared with nvme's per I/O.
perf_counts() {	# out-file command...
	local f=$1; shift
	perf stat -a -x, -o "$f" -e context-switches -e workqueue:workqueue_execute_start -- "$@"
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }	# utime + stime of PID
p5_once() {	# repetition: writes p5-fractop-R.json and p5-top-R.json
	local r=$1 sock=/tmp/p5-tmux.$1 lp fp t0 t1 w0 w1 hz ts
	hz=$(getconf CLK_TCK)
	tools/fracload/fracload -n 1000000 -q "$(seq -s, 0 $(($(cat /sys/class/accel/accel$main/device/frac/num_queues) - 1)))" \
		-o copy,gemm -d 4 -D "$main" > /dev/null 2> "$out/p5-fracload-$r.err" &
	lp=$!
	TERM=xterm-256color tmux -S "$sock" new-session -d -x 120 -y 40 \
		"LANG=C.UTF-8 tools/fractop/fractop -D $main -d 1"
	# Ready: the latency pane says how it attached (the BPF load is over) and a sample drew.
	for _ in $(seq 600); do
		tmux -S "$sock" capture-pane -p 2>/dev/null | grep -q "attached with" && break
		sleep 0.1
	done
	fp=$(pgrep -n -x fractop) || { tmux -S "$sock" kill-server; kill -TERM "$lp"; wait "$lp"; return 1; }
	sleep 2
	t0=$(cpu_ticks "$fp") w0=$(date +%s.%N)
	ts=$(bash -c 'top -b -d 1 -n 60 > /dev/null; times' | tail -n 1)
	t1=$(cpu_ticks "$fp") w1=$(date +%s.%N)
	tmux -S "$sock" kill-server
	kill -TERM "$lp"; wait "$lp" || true
	python3 - "$t0" "$t1" "$hz" "$w0" "$w1" "$ts" "$out/p5-fractop-$r.json" "$out/p5-top-$r.json" <<'EOF'
import json, re, sys
t0, t1, hz, w0, w1, ts, fo, to = sys.argv[1:]
def secs(x):	# bash times: 0m1.234s
    m, s = re.fullmatch(r"(\d+)m([\d.]+)s", x).groups()
    return int(m) * 60 + float(s)
u, s = ts.split()
window = float(w1) - float(w0)
json.dump({"cpu_s": (int(t1) - int(t0)) / int(hz), "window_s": window}, open(fo, "w"))
json.dump({"cpu_s": secs(u) + secs(s), "window_s": window}, open(to, "w"))
EOF
}

# P3i, one repetition: 64 MiB copies with the FRAC device's IOMMU group translated (the
# kernel's default domain type, read before the first change) and identity-mapped, in a random
# order. A group's type can be changed only while no driver is bound: frac.ko is unloaded
# around each change. Writes p3i-translated-R.json and p3i-identity-R.json.
p3i_default=
p3i_once() {
	local grp m t rc=0
	grp=$(readlink -f "/sys/class/accel/accel$main/device/iommu_group") &&
		[ -w "$grp/type" ] || { echo "guest-bench: P3i: no IOMMU group for accel$main" >&2; return 1; }
	[ -n "$p3i_default" ] || p3i_default=$(cat "$grp/type")
	for m in $(printf 'translated\nidentity\n' | shuf); do
		t=$p3i_default
		[ "$m" = identity ] && t=identity
		rmmod frac
		if ! echo "$t" > "$grp/type"; then
			echo "guest-bench: P3i: cannot set $grp/type to $t" >&2
			rc=1
		fi
		insmod kernel/frac.ko
		find_devs
		[ "$(cat "$grp/type")" = "$t" ] || continue
		$fb -m bandwidth -s 64M -n 10 -j > "$out/p3i-$m-$1.json"
		echo "$m $t" >> "$out/p3i-order-$1.txt"
	done
	rmmod frac
	echo "$p3i_default" > "$grp/type" || rc=1
	insmod kernel/frac.ko
	find_devs
	return $rc
}

for r in $(seq 1 "$reps"); do
	echo "guest-bench: repetition $r of $reps" >&2
	# P1: QD1 round trip of a minimal job vs a 4 KiB O_DIRECT read. -L: on the submitting
	# CPU's queue, as blk-mq submits a read on its CPU's NVMe queue.
	if want p1; then
		$fb -m latency -o nop -L -T 3 -W 200 -j > "$out/p1-frac-$r.json"
		fio_run p1 1 psync > "$out/p1-nvme-$r.json"
	fi
	# P2: small jobs at QD32 over all queues, $PB to a SUBMIT_BATCH, vs 4 KiB random reads at
	# QD32.
	if want p2; then
		$fb -m throughput -o nop -d 32 -b $PB -T 3 -W 200 -j > "$out/p2-frac-$r.json"
		fio_run p2 32 io_uring > "$out/p2-nvme-$r.json"
	fi
	# Context switches and work items per job at QD32 against nvme's per I/O (perf stat -a
	# over the whole run: no warm-up, no ramp, so every job or I/O counted is in the count).
	if want p2 && command -v perf > /dev/null; then
		perf_counts "$out/p2cs-frac-$r.txt" $fb -m throughput -o nop -d 32 -b $PB -T 3 -W 0 -j \
			> "$out/p2cs-frac-$r.json"
		perf_counts "$out/p2cs-nvme-$r.txt" $(fio_args p2cs 32 io_uring 3 0) \
			> "$out/p2cs-nvme-$r.json"
	fi
	# P1 and P2 with one host core spinning (tools/fracbench/bench's host_load), both drivers.
	if want p2load; then
		host_load on
		$fb -m latency -o nop -L -T 3 -W 200 -j > "$out/p1load-frac-$r.json"
		fio_run p1 1 psync > "$out/p1load-nvme-$r.json"
		$fb -m throughput -o nop -d 32 -b $PB -T 3 -W 200 -j > "$out/p2load-frac-$r.json"
		fio_run p2 32 io_uring > "$out/p2load-nvme-$r.json"
		host_load off
	fi
	# P1 and P2 again on frac1: the fetch in a bottom half, as in QEMU's nvme model.
	if [ -n "$bh" ] && want p1 && want p2; then
		tools/fracbench/fracbench -D "$bh" -m latency -o nop -L -T 3 -W 200 -j \
			> "$out/p1-fracbh-$r.json"
		tools/fracbench/fracbench -D "$bh" -m throughput -o nop -d 32 -b $PB -T 3 -W 200 -j \
			> "$out/p2-fracbh-$r.json"
	fi
	# B: QD32 with $PB jobs to a SUBMIT_BATCH against a SUBMIT per job, on both devices, in a
	# random order per repetition, each pair back to back.
	if want b; then
		for m in $(printf '%s\n' batch single | shuf); do
			b=$([ $m = batch ] && echo $PB || echo 1)
			$fb -m throughput -o nop -d 32 -b $b -T 3 -W 200 -j > "$out/b-$m-p2-$r.json"
			[ -z "$bh" ] || tools/fracbench/fracbench -D "$bh" -m throughput -o nop -d 32 \
				-b $b -T 3 -W 200 -j > "$out/b-$m-p2bh-$r.json"
			echo "$m" >> "$out/b-order-$r.txt"
		done
	fi
	# D: direct submission (frac.ko's direct_submit) on against off, in a random order per
	# repetition: P1 and P2 on both devices, each pair run back to back.
	if want d && [ -w /sys/module/frac/parameters/direct_submit ]; then
		was=$(cat /sys/module/frac/parameters/direct_submit)
		for m in $(printf '%s\n' on off | shuf); do
			echo $([ $m = on ] && echo 1 || echo 0) > /sys/module/frac/parameters/direct_submit
			$fb -m latency -o nop -L -T 3 -W 200 -j > "$out/d-$m-p1-$r.json"
			# Context switches and work items per job at QD1 (a direct job skips
			# drm_sched's run_job and free_job work items).
			command -v perf > /dev/null &&
				perf_counts "$out/d-$m-p1cs-$r.txt" $fb -m latency -o nop -L -T 2 -W 0 -j \
					> "$out/d-$m-p1cs-$r.json"
			$fb -m throughput -o nop -d 32 -T 3 -W 200 -j > "$out/d-$m-p2-$r.json"
			if [ -n "$bh" ]; then
				tools/fracbench/fracbench -D "$bh" -m latency -o nop -L -T 3 -W 200 -j \
					> "$out/d-$m-p1bh-$r.json"
				tools/fracbench/fracbench -D "$bh" -m throughput -o nop -d 32 -T 3 -W 200 -j \
					> "$out/d-$m-p2bh-$r.json"
			fi
			echo "$m" >> "$out/d-order-$r.txt"
		done
		echo "$was" > /sys/module/frac/parameters/direct_submit
	fi
	# P3: 64 MiB copies, and memcpy of the same size inside the guest.
	if want p3; then
		$fb -m bandwidth -s 64M -n 10 -j > "$out/p3-frac-$r.json"
		tools/fracbench/memcpy-bench 64 10 > "$out/p3-guest-memcpy-$r.json"
	fi
	# P3i: the copies above through the IOMMU, and identity-mapped (only in a guest with one).
	if want p3i && [ -e "/sys/class/accel/accel$main/device/iommu_group" ]; then
		p3i_once "$r" || echo "guest-bench: P3i repetition $r failed" >&2
	fi
	# P4: QD32 throughput with nothing attached, with fraclat alone, with fraclat + fracirq +
	# fracdma, and with a bpftrace script of the same histograms (fraclat.bt following jobs
	# through the per-stage events; fraclat-done.bt on frac_job_done), one 3 s slice each per
	# repetition in a random order (adjacent slices share the host's mood; a fixed order
	# would give one side the same neighbour every time).
	if want p4 && [ -x bpf/fraclat ] && [ -x bpf/fracirq ] && [ -x bpf/fracdma ]; then
		cases="none fraclat bpf"
		command -v bpftrace >/dev/null && cases="$cases bpftrace bpftrace1"
		sysctl -qw kernel.bpf_stats_enabled=1 || true
		for c in $(printf '%s\n' $cases | shuf); do
			pids=()
			case $c in
			fraclat) start_tool "$out/p4-fraclat-$r.txt" bpf/fraclat ;;
			bpf)
				for t in fraclat fracirq fracdma; do
					start_tool "$out/p4-$t-all-$r.txt" "bpf/$t"
				done ;;
			bpftrace) start_tool "$out/p4-bpftrace-$r.txt" bpftrace tools/fracbench/fraclat.bt ;;
			bpftrace1)
				start_tool "$out/p4-bpftrace1-$r.txt" bpftrace tools/fracbench/fraclat-done.bt ;;
			esac
			# BPF run counts and times (kernel.bpf_stats_enabled) around the timed run:
			# program runs per job and their own ns, free of the host's noise.
			bpftool prog show -j > "$out/p4-$c-$r.progs0.json" 2>/dev/null || true
			$fb -m throughput -o nop -d 32 -T 3 -W 200 -j > "$out/p4-$c-$r.json"
			bpftool prog show -j > "$out/p4-$c-$r.progs1.json" 2>/dev/null || true
			[ ${#pids[@]} = 0 ] || stop "${pids[@]}"
			echo "$c" >> "$out/p4-order-$r.txt"
		done
		sysctl -qw kernel.bpf_stats_enabled=0 || true
	fi
	# P5: fractop's CPU time over 60 s at its default 1 s refresh (the screen under tmux, the
	# BPF latency pane on, a workload on every queue), against procps `top -b -d 1 -n 60` run
	# over the same 60 s. fractop's is the delta of its utime+stime across the window (after
	# its BPF load and first draw), top's its whole run (bash's `times` for the child).
	if want p5 && [ -x tools/fractop/fractop ] && [ -x tools/fracload/fracload ] && command -v tmux > /dev/null &&
	   command -v top > /dev/null; then
		p5_once "$r" || echo "guest-bench: P5 repetition $r failed" >&2
	fi
	# T: disabled tracepoints against a frac.ko built without them, in turn.
	if want t && [ -n "${FRAC_NOTRACE_KO:-}" ] && [ -f "$FRAC_NOTRACE_KO" ]; then
		for v in notrace trace notrace trace; do
			[ $((r % 2)) = 0 ] && v=$([ "$v" = trace ] && echo notrace || echo trace)
			rmmod frac
			if [ "$v" = notrace ]; then insmod "$FRAC_NOTRACE_KO"; else insmod kernel/frac.ko; fi
			find_devs
			$fb -m latency -o nop -q 1 -T 2 -W 200 -j >> "$out/t-$v-lat-$r.jsonl"
			$fb -m throughput -o nop -d 32 -T 2 -W 200 -j >> "$out/t-$v-tput-$r.jsonl"
		done
		rmmod frac
		insmod kernel/frac.ko
		find_devs
	fi
done
rmmod frac
