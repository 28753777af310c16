#!/usr/bin/env bash
# The main job, run inside the guest by `make run` (scripts/vm): load frac.ko on the emulated
# FRAC-1, run a workload, and show what it did and how long its jobs took.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== FRAC-1 as the guest sees it"
lspci -nn -d 1234:fac1

echo
echo "== loading frac.ko"
modprobe gpu-sched
modprobe drm_shmem_helper
insmod kernel/frac.ko
dmesg | grep -E '\bfrac\b' | grep -v taint | sed 's/^\[[^]]*\] //'
ls -l /dev/accel/

fraclat=
if [ -x bpf/fraclat ]; then
	bpf/fraclat -Q > "$FRAC_OUT/fraclat.txt" 2>&1 &
	fraclat=$!
	# Attach before the workload (loading takes seconds under TCG); a SIGINT that came
	# before the tool set its handler would be lost: background jobs start with it ignored.
	for _ in $(seq 600); do
		grep -q '^Tracing' "$FRAC_OUT/fraclat.txt" 2>/dev/null && break
		kill -0 "$fraclat" 2>/dev/null || break
		sleep 0.1
	done
fi

echo
echo "== workload: GEMM + copy + CRC32C on each queue, checked against the host"
nq=$(cat /sys/bus/pci/devices/*/frac/num_queues | head -n 1)
for q in $(seq 0 $((nq - 1))); do
	lib/frac-example -n 48 -q "$q"
done

if [ -n "$fraclat" ]; then
	kill -INT "$fraclat"
	wait "$fraclat" || true
	echo
	echo "== job latency by stage (bpf/fraclat, per queue)"
	cat "$FRAC_OUT/fraclat.txt"
fi

echo
echo "== device counters (/sys/bus/pci/devices/<bdf>/frac)"
d=$(dirname "$(ls -d /sys/bus/pci/devices/*/frac | head -n 1)")/frac
for f in jobs_submitted jobs_completed jobs_failed bytes_read bytes_written interrupts \
	 busy_ns_dma busy_ns_compute; do
	printf '%-16s %s\n' "$f" "$(cat "$d/$f")"
done
printf '%-16s %s mC, %s uW\n' hwmon "$(cat /sys/class/hwmon/hwmon*/temp1_input | head -n 1)" \
	"$(cat /sys/class/hwmon/hwmon*/power1_input | head -n 1)"
rmmod frac
