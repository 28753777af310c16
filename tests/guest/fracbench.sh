#!/usr/bin/env bash
# Guest tests of fracbench: bad arguments get one line and exit 2, every mode runs and its
# JSON adds up, --verify checks data, --batch submits several jobs to an ioctl, --local-queue
# submits on the CPU's queue. Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

FB=$GUEST_REPO/tools/fracbench/fracbench
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

guest_begin
guest_ok "load frac.ko" guest_load_frac

# bad ARGS...: exit status 2 and exactly one line on stderr, naming fracbench
bad() {
	local rc
	"$FB" "$@" > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q '^fracbench: ' "$T/err" &&
		[ ! -s "$T/out" ] && return 0
	guest_diag "fracbench $*: exit $rc, stderr: $(head -c 300 "$T/err")"
	return 1
}
guest_ok "bad mode: one line, exit 2" bad -m sideways
guest_ok "bad op: one line, exit 2" bad -o divide
guest_ok "qdepth 0: one line, exit 2" bad -d 0
guest_ok "qdepth over 1024: one line, exit 2" bad -d 1025
guest_ok "threads 0: one line, exit 2" bad -t 0
guest_ok "bad size suffix: one line, exit 2" bad -s 4q
guest_ok "negative time: one line, exit 2" bad -T -1
guest_ok "device index over 63: one line, exit 2" bad -D 64
guest_ok "stray argument: one line, exit 2" bad extra
guest_ok "batch 0: one line, exit 2" bad -m throughput -d 8 -b 0
guest_ok "batch over 64: one line, exit 2" bad -m throughput -d 128 -b 65
guest_ok "batch over the queue depth: one line, exit 2" bad -m throughput -d 4 -b 8

# Against the device: more queues than it has is refused, non-zero exit with a message.
more_queues() {
	local nq
	nq=$(cat /sys/class/accel/accel*/device/frac/num_queues 2>/dev/null | head -n 1)
	[ "${nq:-16}" -lt 16 ] || { guest_diag "the device has 16 queues"; return 1; }
	"$FB" -q 16 -n 1 > /dev/null 2> "$T/err" && return 1
	grep -q "^fracbench: 16 queues asked, device has $nq$" "$T/err" ||
		{ guest_diag "$(cat "$T/err")"; return 1; }
}
guest_ok "more queues than the device has: refused" more_queues

# json ARGS...: run fracbench -j ARGS into $T/j.json
json() { "$FB" -j "$@" > "$T/j.json" 2> "$T/err" || { guest_diag "$(cat "$T/err")"; return 1; }; }
# check PYTHON-EXPR: evaluated with d = the JSON object
check() {
	python3 - "$T/j.json" "$1" <<'EOF' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    print("# " + json.dumps(d)[:400])
sys.exit(0 if ok else 1)
EOF
}
lat_sane='d["lat_ns"]["min"] <= d["lat_ns"]["p50"] <= d["lat_ns"]["p90"] <= d["lat_ns"]["p99"] <= d["lat_ns"]["p99_9"] <= d["lat_ns"]["max"] and d["lat_ns"]["min"] > 0'

guest_ok "latency: 200 NOP jobs, JSON" json -m latency -n 200 -W 10
guest_ok "latency: 200 jobs, no errors, QD1" \
	check 'd["mode"] == "latency" and d["jobs"] == 200 and d["errors"] == 0 and d["qdepth"] == 1'
guest_ok "latency: percentiles ordered" check "$lat_sane"
guest_ok "throughput: 2 threads x QD8 x 300 copies, verified" \
	json -m throughput -o copy -s 16k -t 2 -d 8 -n 300 -W 10 -V
guest_ok "throughput: 600 jobs, no errors, 600 x 16 KiB moved" \
	check 'd["jobs"] == 600 and d["errors"] == 0 and d["jobs_per_sec"] > 0 and d["gbytes_per_sec"] > 0'
guest_ok "throughput: percentiles ordered" check "$lat_sane"
guest_ok "mixed: copy, CRC32C, fill and GEMM verified" json -m mixed -n 80 -d 4 -W 4 -V
guest_ok "mixed: no errors" check 'd["op"] == "mixed" and d["jobs"] == 80 and d["errors"] == 0'
guest_ok "bandwidth: 4 x 8 MiB copies" json -m bandwidth -s 8M -n 4 -W 1
guest_ok "bandwidth: 32 MiB moved, GB/s from bytes and time" \
	check 'd["jobs"] == 4 and abs(d["gbytes_per_sec"] - 4 * 8 * 2**20 / d["seconds"] / 1e9) < 1e-3 * d["gbytes_per_sec"] + 1e-4'
guest_ok "--batch: QD16, 8 copies to a SUBMIT_BATCH, 2 threads, verified" \
	json -m throughput -o copy -s 8k -t 2 -d 16 -b 8 -n 200 -W 5 -V
guest_ok "--batch: 400 jobs (205 a thread: a short last batch), no errors, batch in JSON" \
	check 'd["jobs"] == 400 and d["errors"] == 0 and d["batch"] == 8 and d["qdepth"] == 16'
guest_ok "--local-queue: 100 jobs on the CPU's queue" json -m latency -L -n 100 -W 5
guest_ok "--local-queue: no errors, reported in JSON" \
	check 'd["local_queue"] is True and d["jobs"] == 100 and d["errors"] == 0'
guest_ok "text output: jobs and round-trip lines" \
	eval '"$FB" -n 50 -W 5 | grep -q "^  round trip us: min [0-9.]* avg"'

guest_dmesg_check
guest_end
