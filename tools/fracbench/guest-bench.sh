#!/usr/bin/env bash
# Run inside the guest by tools/fracbench/bench: FRAC-1 (zero-latency) and QEMU's NVMe (null-co)
# measured side by side, REPS times each. Raw results go to $FRAC_OUT/bench/*.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
reps=${FRAC_BENCH_REPS:-5}
out=$FRAC_OUT/bench
mkdir -p "$out"

modprobe gpu-sched
modprobe drm_shmem_helper
insmod kernel/frac.ko
[ -b /dev/nvme0n1 ] || { echo "guest-bench: no /dev/nvme0n1" >&2; exit 1; }

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

fio_run() {	# name iodepth engine [extra]
	fio --name="$1" --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1 \
	    --iodepth="$2" --ioengine="$3" --size=1G --randrepeat=0 --norandommap \
	    --time_based --runtime="${4:-3}" --ramp_time=1 --output-format=json
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

for r in $(seq 1 "$reps"); do
	echo "guest-bench: repetition $r of $reps" >&2
	# P1: QD1 round trip of a minimal job vs a 4 KiB O_DIRECT read. -L: on the submitting
	# CPU's queue, as blk-mq submits a read on its CPU's NVMe queue.
	$fb -m latency -o nop -L -T 3 -W 200 -j > "$out/p1-frac-$r.json"
	fio_run p1 1 psync > "$out/p1-nvme-$r.json"
	# P2: small jobs at QD32 over all queues vs 4 KiB random reads at QD32.
	$fb -m throughput -o nop -d 32 -T 3 -W 200 -j > "$out/p2-frac-$r.json"
	fio_run p2 32 io_uring > "$out/p2-nvme-$r.json"
	# P1 and P2 again on frac1: the fetch in a bottom half, as in QEMU's nvme model.
	if [ -n "$bh" ]; then
		tools/fracbench/fracbench -D "$bh" -m latency -o nop -L -T 3 -W 200 -j \
			> "$out/p1-fracbh-$r.json"
		tools/fracbench/fracbench -D "$bh" -m throughput -o nop -d 32 -T 3 -W 200 -j \
			> "$out/p2-fracbh-$r.json"
	fi
	# P3: 64 MiB copies, and memcpy of the same size inside the guest.
	$fb -m bandwidth -s 64M -n 10 -j > "$out/p3-frac-$r.json"
	tools/fracbench/memcpy-bench 64 10 > "$out/p3-guest-memcpy-$r.json"
	# P4: throughput with the BPF tools attached, when they are built.
	if [ -x bpf/fraclat ] && [ -x bpf/fracirq ] && [ -x bpf/fracdma ]; then
		$fb -m throughput -o nop -d 32 -T 3 -W 200 -j > "$out/p4-none-$r.json"
		pids=()
		for t in fraclat fracirq fracdma; do
			start_tool "$out/p4-$t-$r.txt" "bpf/$t"
		done
		$fb -m throughput -o nop -d 32 -T 3 -W 200 -j > "$out/p4-bpf-$r.json"
		stop "${pids[@]}"
		if [ -f tools/fracbench/fraclat.bt ] && command -v bpftrace >/dev/null; then
			pids=()
			start_tool "$out/p4-bpftrace-$r.txt" bpftrace tools/fracbench/fraclat.bt
			$fb -m throughput -o nop -d 32 -T 3 -W 200 -j > "$out/p4-bpftrace-$r.json"
			stop "${pids[@]}"
		fi
	fi
	# P5: fractop's CPU time over 60 s at its default 1 s refresh (the screen under tmux, the
	# BPF latency pane on, a workload on every queue), against procps `top -b -d 1 -n 60` run
	# over the same 60 s. fractop's is the delta of its utime+stime across the window (after
	# its BPF load and first draw), top's its whole run (bash's `times` for the child).
	if [ -x tools/fractop/fractop ] && [ -x tools/fracload/fracload ] && command -v tmux > /dev/null &&
	   command -v top > /dev/null; then
		p5_once "$r" || echo "guest-bench: P5 repetition $r failed" >&2
	fi
	# T: disabled tracepoints against a frac.ko built without them, in turn.
	if [ -n "${FRAC_NOTRACE_KO:-}" ] && [ -f "$FRAC_NOTRACE_KO" ]; then
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
