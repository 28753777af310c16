#!/usr/bin/env bash
# Run inside the guest by scripts/bench: FRAC-1 (zero-latency) and QEMU's NVMe (null-co)
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

# accel index of the FRAC device behind PCI bridge $1 (scripts/bench puts frac1 at 00:10.0)
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
		if [ -f tests/bench/fraclat.bt ] && command -v bpftrace >/dev/null; then
			pids=()
			start_tool "$out/p4-bpftrace-$r.txt" bpftrace tests/bench/fraclat.bt
			$fb -m throughput -o nop -d 32 -T 3 -W 200 -j > "$out/p4-bpftrace-$r.json"
			stop "${pids[@]}"
		fi
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
