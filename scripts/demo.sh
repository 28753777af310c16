#!/usr/bin/env bash
# The main job, run inside the guest by `make run` (scripts/vm, the device with fault injection
# on): load frac.ko on the emulated FRAC-1, run a mixed workload with two injected faults while
# bpf/fraclat and tools/fractop watch it, then show what the workload did by its own count and
# what the tools saw: a per-queue table of stage p50/p99, fractop's view of the busiest second,
# the device counters, and where to look next. Files land in $FRAC_OUT (results/vm/latest/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
O=$FRAC_OUT
JOBS=${FRAC_DEMO_JOBS:-4000}

echo "== FRAC-1 as the guest sees it"
lspci -nn -d 1234:fac1

echo
echo "== loading frac.ko (job_timeout_ms=500: the injected hang ends in half a second)"
modprobe gpu-sched
modprobe drm_shmem_helper
insmod "${FRAC_KO:-kernel/frac.ko}" job_timeout_ms=500
dmesg | grep -E '\bfrac\b' | grep -v taint | sed 's/^\[[^]]*\] //'
ls -l /dev/accel/
bdf=$(basename "$(readlink -f /sys/class/accel/accel0/device)")
sys=/sys/bus/pci/devices/$bdf/frac
nq=$(cat "$sys/num_queues")
queues=$(seq -s, 0 $((nq - 1)))

echo
echo "== the results against the host: frac-example, 8 jobs of GEMM, copy and CRC32C per queue"
for q in $(seq 0 $((nq - 1))); do
	lib/frac-example -n 8 -q "$q"
done

# The tools attach before the workload: loading BPF takes seconds under TCG.
lat= top=
if [ -x bpf/fraclat ]; then
	bpf/fraclat -Q -j > "$O/fraclat.json" 2> "$O/fraclat.err" &
	lat=$!
	for _ in $(seq 600); do
		grep -q '^Tracing' "$O/fraclat.err" 2>/dev/null && break
		kill -0 "$lat" 2>/dev/null || break
		sleep 0.1
	done
fi
if [ -x tools/fractop/fractop ]; then
	tools/fractop/fractop -J -d 1 -w "$O/fractop.rec" > "$O/fractop.jsonl" 2> "$O/fractop.err" &
	top=$!
	for _ in $(seq 600); do
		[ -s "$O/fractop.jsonl" ] && break
		kill -0 "$top" 2>/dev/null || break
		sleep 0.1
	done
fi

echo
echo "== workload: tools/fracload, $JOBS jobs of copy, GEMM, CRC32C and FILL over queues $queues,"
echo "   8 in flight; injected first: a device error on queue 1's next job, a hang on queue 2's"
dbg=/sys/kernel/debug/accel/$bdf/inject_fault
if [ -w "$dbg" ] && [ "$nq" -ge 3 ]; then
	echo "error 1" > "$dbg"
	echo "hang 2" > "$dbg"
else
	echo "   (no $dbg, or fewer than 3 queues: no faults injected)"
fi
rc=0
tools/fracload/fracload -n "$JOBS" -q "$queues" -o copy,gemm,crc32c,fill -d 8 -j \
	> "$O/fracload.json" 2> "$O/fracload.err" || rc=$?
sleep 1.5	# fractop's last full interval
[ -n "$top" ] && { kill -INT "$top"; wait "$top" || true; }
[ -n "$lat" ] && { kill -INT "$lat"; wait "$lat" || true; }

check=0
python3 - "$O" "$rc" <<'EOF' || check=1
import json, os, sys
from collections import Counter

out, rc = sys.argv[1], int(sys.argv[2])
bad = False
load = json.load(open(os.path.join(out, "fracload.json")))
jobs = load["job_list"]
status = Counter(j["status"] for j in jobs)
names = {0: "ok", -125: "-ECANCELED", -110: "-ETIMEDOUT", -5: "-EIO", -19: "-ENODEV"}
print("\n== what the workload did (its own count, fracload exit %d)" % rc)
print("   %d jobs on queues %s; ended: %s" % (load["jobs"], ", ".join(load["queues"]),
      ", ".join("%d %s" % (n, names.get(s, s)) for s, n in sorted(status.items(), reverse=True))))

def us(ns):
    return "-" if ns is None else ("%.0f" % (ns / 1e3) if ns >= 1e4 else "%.1f" % (ns / 1e3))

path = os.path.join(out, "fraclat.json")
lines = open(path).read().split("\n") if os.path.exists(path) else []
lines = [l for l in lines if l.strip()]
if lines:
    lat = json.loads(lines[-1])
    stages = ["submit_run", "run_start", "exec", "end_irq", "irq_signal", "total"]
    hdr = ["submit>run", "run>start", "exec", "end>irq", "irq>fence", "total"]
    print("\n== job latency by stage, per queue, in us: p50 / p99 (bpf/fraclat -Q, ok jobs, "
          "attached with %s)" % lat["attach"])
    print("   %-5s %6s  " % ("queue", "jobs") + "  ".join("%-15s" % h for h in hdr))
    for g in sorted(lat["groups"], key=lambda g: g["queue"]):
        st = g["stages"]
        cells = ["%s / %s" % (us(st[s]["p50_ns"]), us(st[s]["p99_ns"])) for s in stages]
        print("   %-5s %6d  " % (g["queue"], st["total"]["count"]) +
              "  ".join("%-15s" % c for c in cells))
    e = lat["ended"]
    print("   jobs by fence status: " + ", ".join("%s %d" % (k, v) for k, v in e.items() if v))
    # The tool against the workload's own count: every job, each with its status.
    want = {"ok": status[0], "cancelled": status[-125], "timedout": status[-110],
            "eio": status[-5], "enodev": status[-19]}
    want["other"] = len(jobs) - sum(want.values())
    if want == e:
        print("   fraclat agrees with the workload: %d jobs, the same statuses" % len(jobs))
    else:
        print("   fraclat DISAGREES with the workload, which says %s" % want)
        bad = True
    lost = {k: v for k, v in lat["lost"].items() if v}
    print("   lost by the tool: %s" % (", ".join("%s %d" % kv for kv in lost.items()) or "none"))
else:
    print("\n== job latency: bpf/fraclat did not run (see %s/fraclat.err)" % out)

path = os.path.join(out, "fractop.jsonl")
samples = []
if os.path.exists(path):
    for l in open(path):
        try:
            samples.append(json.loads(l))
        except ValueError:
            pass
if samples:
    busiest = max(samples, key=lambda s: s["devices"][0]["rates"]["jobs_per_s"] or 0)
    d = busiest["devices"][0]
    r = d["rates"]
    print("\n== tools/fractop -J, its busiest second of the run (all %d samples in fractop.jsonl)"
          % len(samples))
    def f(v, fmt="%.0f"):
        return "n/a" if v is None else fmt % v
    print("   %s %s %s: %s jobs/s, %s failed/s, DMA busy %s%%, compute busy %s%%, %s C, %s W"
          % (d["device"], d["driver"], d["pdev"], f(r["jobs_per_s"]), f(r["jobs_failed_per_s"]),
             f(r["busy_dma_pct"], "%.2f"), f(r["busy_compute_pct"], "%.3f"),
             f(d["temperature_c"], "%.1f"), f(d["power_w"], "%.1f")))
    for q in d["queues"]:
        t = (q.get("latency") or {}).get("total") or {}
        print("   queue %d: %s jobs/s, %s in the ring; total latency p50 %s us, p99 %s us" %
              (q["queue"], f(q["jobs_per_s"]), q["jobs_in_ring"], us(t.get("p50_ns")),
               us(t.get("p99_ns"))))
    for p in d["processes"]:
        print("   pid %d %s: %s jobs/s, %s jobs so far, %d KiB of BOs" %
              (p["pid"], p["comm"], f(p["jobs_per_s"]), p["jobs_completed"],
               (p["memory_bytes"] or 0) // 1024))
    if not busiest["latency"]["active"]:
        print("   latency: %s" % busiest["latency"]["note"])
else:
    print("\n== tools/fractop did not run (see %s/fractop.err)" % out)
sys.exit(1 if bad else 0)
EOF

echo
echo "== device counters (sysfs frac/: docs/ABI/testing/sysfs-driver-frac)"
for f in jobs_submitted jobs_completed jobs_failed job_timeouts queue_resets device_resets \
	 bytes_read bytes_written interrupts; do
	printf '   %-16s %s\n' "$f" "$(cat "$sys/$f")"
done
rmmod frac
[ "$check" = 0 ] || { echo "demo: the tools did not agree with the workload (above)" >&2; exit 1; }

cat <<EOF

== where to look next
   this run in fractop's screen:  tools/fractop/fractop -r results/vm/latest/fractop.rec
                                  (on the host; space pauses, , and . step: tools/fractop/README.md)
   fractop live:                  tools/fractop/fractop on a terminal of a guest with frac.ko
   every job of a run:            bpf/fracsnoop (bpf/README.md); stages in perf: tools/perf-scripts/
   files of this run:             results/vm/latest/ (fraclat.json, fractop.jsonl, fracload.json)
   regression reports:            tools/regress/README.md
EOF
