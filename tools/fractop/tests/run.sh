#!/usr/bin/env bash
# fractop's host tests, as one TAP stream on stdout (the top-level `make test-host` keeps it in
# results/test/host-fractop.tap).
#  - tests/unit: the parser, model, formatting, layout and writers (no terminal, no device);
#    its JSON and CSV output is parsed back here.
#  - end to end: fractop itself on a fixture tree (--sysroot) built here: /sys/class/accel with
#    a frac device (counters, hwmon) and a non-frac one, /proc with processes whose fds point
#    at char devices 261:N (mknod: needs root or CAP_MKNOD, else those checks SKIP), a dup'd fd
#    and a forked one sharing a client, a socket and /dev/null. Every JSON line is parsed with
#    python3's json module, every CSV row with its csv module.
# Usage: tests/run.sh   (from tools/fractop, after make)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

results=$(mktemp)
T=$(mktemp -d)
trap 'rm -rf "$T" "$results"' EXIT

n_ok() { echo "ok - $*" >> "$results"; }
n_fail() { echo "not ok - $*" >> "$results"; }
n_skip() { echo "ok - $* # SKIP" >> "$results"; }
check() { # check DESCRIPTION COMMAND...: ok if the command succeeds
	local d=$1; shift
	if out=$("$@" 2>&1); then n_ok "$d"; else n_fail "$d"; sed 's/^/#   /' <<< "$out" >> "$results"; fi
}

# ---- unit tests ----
if [ -x tests/unit ]; then
	tests/unit tests/fixtures "$T/unit.jsonl" "$T/unit.csv" >> "$results" 2>&1
	rc=$?
	[ $rc = 0 ] || n_fail "tests/unit exited with status $rc"
else
	n_fail "tests/unit is not built"
fi

check "unit JSON: every line parses, schema_version 3, same keys on every device object" \
	python3 - "$T/unit.jsonl" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 4, f"{len(lines)} lines"
def shape(o):
    if isinstance(o, dict): return {k: shape(v) for k, v in o.items()}
    return None
shapes = set()
for l in lines:
    o = json.loads(l)
    assert o["schema_version"] == 3
    for d in o["devices"]:
        shapes.add(json.dumps({k: shape(v) for k, v in d.items() if not isinstance(v, list)}, sort_keys=True))
assert len(shapes) == 1, "device objects differ in keys"
o = json.loads(lines[0])
assert o["interval_s"] is None and o["devices"][0]["rates"]["jobs_per_s"] is None
assert o["devices"][0]["processes"][0]["comm"] == 'load\t"q"'
assert o["devices"][1]["driver"] == 'ivpu "x"'
assert json.loads(lines[1])["devices"][0]["rates"]["jobs_per_s"] == 150
EOF
check "unit JSON latency: null before the source, then counts, p50/p99 inside their bounds" \
	python3 - "$T/unit.jsonl" <<'EOF'
import json, sys
STAGES = ["total", "submit_run", "run_start", "exec", "end_irq", "irq_signal"]
KEYS = ["count", "sum_ns", "min_ns", "max_ns", "p50_ns", "p50_low_ns", "p50_high_ns",
        "p99_ns", "p99_low_ns", "p99_high_ns", "log2_ns"]
l0, l1 = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()[:2]]
assert l0["latency"]["active"] is False and all(v is None for k, v in l0["latency"].items()
                                                if k not in ("active", "note")), l0["latency"]
d0 = l0["devices"][0]
assert d0["latency_ok"] is False and len(d0["queues"]) == 2
for q in d0["queues"]:
    assert list(q["latency"]) == STAGES
    assert all(list(h) == KEYS and all(v is None for v in h.values())
               for h in q["latency"].values()), q["latency"]
lat = l1["latency"]
assert lat["active"] is True and lat["ended_eio"] == 2 and lat["unmatched"] == 1, lat
assert lat["ended_ok"] == 100
d = l1["devices"][0]
assert d["latency_ok"] is True
for st in STAGES:
    h = d["queues"][0]["latency"][st]
    assert list(h) == KEYS
    assert h["count"] == 100 and h["sum_ns"] == 5050000 and h["min_ns"] == 1000
    assert h["max_ns"] == 100000 and sum(h["log2_ns"]) == 100 and len(h["log2_ns"]) == 17
    assert h["p50_low_ns"] <= 50000 <= h["p50_high_ns"], h
    assert h["p50_low_ns"] <= h["p50_ns"] <= h["p50_high_ns"], h
    assert h["p99_low_ns"] <= 99000 <= h["p99_high_ns"] <= 100000, h
    e = d["queues"][1]["latency"][st]
    assert e["count"] == 0 and e["p50_ns"] is None and e["min_ns"] is None and e["log2_ns"] == []
assert l1["devices"][1]["latency_ok"] is False and l1["devices"][1]["queues"] == []
EOF
check "unit CSV: header and rows parse, same column count, n/a is an empty cell" \
	python3 - "$T/unit.csv" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
h = rows[0]
assert h[0] == "schema_version" and len(rows) == 9, len(rows)
for r in rows[1:]:
    assert len(r) == len(h), (len(r), len(h))
d = [dict(zip(h, r)) for r in rows[1:]]
assert d[0]["jobs_per_s"] == "" and d[2]["jobs_per_s"] == "150"
assert d[1]["driver"] == 'ivpu "x"'
assert d[2]["engine_busy_pct"] == "queue0=0;queue1=25", d[2]["engine_busy_pct"]
assert d[0]["queue_latency_count"] == "" and d[0]["queue_latency_p50_ns"] == ""
assert d[2]["queue_latency_count"] == "0=100;1=0", d[2]["queue_latency_count"]
p50 = float(d[2]["queue_latency_p50_ns"].split(";")[0][2:])
assert 45000 < p50 <= 50000 * 9 / 8 and d[2]["queue_latency_p50_ns"].endswith(";1=")
log2 = {int(k): int(v) for k, v in (x.split(":") for x in
        d[2]["queue_latency_log2_ns"].split(";")[0][2:].split(" "))}
assert sum(log2.values()) == 100 and min(log2) == 9 and max(log2) == 16, log2
EOF

# ---- the fixture tree ----
S=$T/root
fdev=$S/sys/devices/pci0000:00/0000:01:00.0
mknod_ok=1
tests/mkroot.sh "$S" || mknod_ok=0

# ---- command line ----
argcheck() { # argcheck WANT_RC ARGS...: the exit status, and exactly one line on stderr
	local want=$1; shift
	local err rc
	err=$(./fractop --sysroot "$S" "$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" = "$want" ] && [ "$(wc -l <<< "$err")" = 1 ] && [ -n "$err" ]; then
		n_ok "fractop $*: exit $want, one line: $err"
	else
		n_fail "fractop $*: exit $rc (want $want), stderr: $err"
	fi
}
argcheck 2 -d 0 -J
argcheck 2 -d abc -J
argcheck 2 -d 1e9 -J
argcheck 2 -d nan -J
argcheck 2 -n 0 -J
argcheck 2 -n 5x -J
argcheck 2 -x
argcheck 2 --bogus
argcheck 2 -J -c
argcheck 2 -J extra
argcheck 2 -D accelX -J
argcheck 2 -d
mkdir -p "$T/empty"
err=$(./fractop --sysroot "$T/empty" -J -n 1 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && grep -q "no accel device" <<< "$err" && n_ok "no accel device: exit 1, '$err'" ||
	n_fail "no accel device: exit $rc, '$err'"
mkdir -p "$T/empty2/sys/class/accel"
err=$(./fractop --sysroot "$T/empty2" -J -n 1 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && grep -q "no accel device" <<< "$err" && n_ok "empty /sys/class/accel: exit 1" ||
	n_fail "empty /sys/class/accel: exit $rc, '$err'"
err=$(./fractop --sysroot "$S" -D 7 -J -n 1 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && n_ok "-D of a missing device: exit 1, '$err'" || n_fail "-D 7: exit $rc, '$err'"
check "--help exits 0 and lists -J" bash -c './fractop --help | grep -q -- "-J, --json"'
err=$(./fractop --sysroot "$S" 2>&1 > "$T/notty"); rc=$?
[ $rc = 1 ] && n_ok "no terminal and no -J/-c: exit 1, '$err'" || n_fail "no terminal: exit $rc"

# ---- end to end: JSON and CSV from the fixture tree ----
if [ $mknod_ok = 0 ]; then
	n_skip "fractop -J on the fixture tree (mknod of 261:N needs root or CAP_MKNOD)"
	n_skip "fractop -c on the fixture tree"
	n_skip "fractop -D 1 on the fixture tree"
	n_skip "fractop -J rates over a changed counter"
else
	./fractop --sysroot "$S" -J -n 2 -d 0.1 > "$T/e2e.jsonl" 2> "$T/e2e.err"
	check "fractop -J -n 2 on the fixture tree: exit 0, nothing on stderr" \
		bash -c "[ ! -s '$T/e2e.err' ]"
	check "fractop -J: 2 lines, every key present, dedup by client id, frac and ivpu devices" \
		python3 - "$T/e2e.jsonl" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, f"{len(lines)} lines"
for l in lines:
    o = json.loads(l)
    assert o["schema_version"] == 3 and o["interval_s"] > 0
    # Each source's read has its own instant, in the order the sources run, after the
    # sample's start; the fdinfo read of a process lies between sysfs's and debugfs's.
    r = o["devices"][0]["reads"]
    t = [r[k]["t_mono"] for k in ("sysfs", "debugfs", "interrupts")]
    assert o["t_mono"] < t[0] < t[1] < t[2], (o["t_mono"], r)
    assert r["latency"] == {"t_mono": None, "interval_s": None}, r
    for p in o["devices"][0]["processes"]:
        assert t[0] < p["reads"]["fdinfo"]["t_mono"] < t[1], (p["reads"], r)
    assert o["devices"][1]["reads"]["sysfs"]["t_mono"] > t[0]
    assert o["devices"][1]["reads"]["debugfs"]["t_mono"] is None
    # The host has no frac module: the latency source says so, and every figure is null.
    assert o["latency"]["active"] is False and o["latency"]["note"].startswith("latency: "), o["latency"]
    assert o["latency"]["ended_eio"] is None
    f, v = o["devices"]
    assert f["latency_ok"] is False and v["latency_ok"] is False
    assert all(h["count"] is None and h["p99_ns"] is None for q in f["queues"]
               for h in q["latency"].values())
    assert f["device"] == "accel0" and f["driver"] == "frac" and f["pdev"] == "0000:01:00.0"
    assert all(isinstance(x, int) for x in f["counters"].values()), f["counters"]
    assert f["counters"]["jobs_completed"] == 100 and f["counters"]["num_queues"] == 4
    # The fixture's device clock stands still: busy over it is not known, the rest is a real 0.
    assert f["rates"]["busy_dma_pct"] is None and f["rates"]["busy_compute_pct"] is None
    assert all(x == 0 for k, x in f["rates"].items() if not k.startswith("busy")), f["rates"]
    assert f["temperature_c"] == 41.5 and f["power_w"] == 12.5
    # client 7 (pid 100 fds 3 and 4, pid 101 fd 3) and client 8 (pid 102)
    assert f["clients"] == 2, f["clients"]
    assert [p["pid"] for p in f["processes"]] == [100, 102], f["processes"]
    assert [e["name"] for e in f["engines"]] == ["queue0", "queue1", "queue2", "queue3"]
    assert f["engines"][0]["busy_ns"] == 3000000 and f["engines"][0]["busy_pct"] == 0
    mem = {r["region"]: r for r in f["memory"]}
    assert mem["devmem"]["total_bytes"] == 8 << 20 and mem["memory"]["shared_bytes"] == 128 << 10
    assert mem["devmem"]["purgeable_bytes"] is None
    p = f["processes"][0]
    assert p["comm"] == "load" and p["jobs_completed"] == 96 and p["jobs_per_s"] == 0
    assert p["jobs_failed"] == 2, p
    assert p["memory_bytes"] == (4 << 20) + (192 << 10)
    assert v["device"] == "accel1" and v["driver"] == "intel_vpu" and v["pdev"] == "0000:00:0b.0"
    assert all(x is None for x in v["counters"].values())
    assert all(x is None for x in v["rates"].values())
    assert v["temperature_c"] is None and v["power_w"] is None
    assert v["clients"] == 1 and [e["name"] for e in v["engines"]] == ["compute"]
    assert v["processes"][0]["pid"] == 102 and v["processes"][0]["jobs_completed"] is None
    assert v["processes"][0]["jobs_failed"] is None
    assert set(f) == set(v) and set(f["counters"]) == set(v["counters"])
    assert set(f["processes"][0]) == set(v["processes"][0])
    q = f["queues"]
    assert [x["queue"] for x in q] == [0, 1] and q[0]["timeouts"] == 1 and q[1]["jobs_in_ring"] == 2
    assert q[0]["jobs_per_s"] == 0 and v["queues"] == []
    vec = f["vectors"]
    assert [(x["irq"], x["name"], x["count"]) for x in vec] == \
        [(35, "frac-q0", 17), (36, "frac-q1", 3), (37, "frac-err", 0), (38, "-", 0)], vec
    assert all(x["per_s"] == 0 for x in vec) and v["vectors"] == []
EOF
	./fractop --sysroot "$S" -c -n 2 -d 0.1 > "$T/e2e.csv"
	check "fractop -c: header, 4 rows of equal width, n/a empty" python3 - "$T/e2e.csv" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 5, len(rows)
h = rows[0]
assert all(len(r) == len(h) for r in rows)
d = [dict(zip(h, r)) for r in rows[1:]]
assert [x["device"] for x in d] == ["accel0", "accel1"] * 2
assert d[0]["jobs_per_s"] == "0" and d[1]["jobs_per_s"] == ""
assert d[0]["clients"] == "2" and d[0]["processes"] == "2"
assert d[0]["memory_total_bytes"] == "devmem=8388608;memory=393216", d[0]["memory_total_bytes"]
assert d[1]["engine_busy_pct"] == "compute=0", d[1]["engine_busy_pct"]
assert d[0]["queue_timeouts"] == "0=1;1=0" and d[0]["queue_jobs_per_s"] == "0=0;1=0", d[0]
assert d[0]["vector_per_s"] == "frac-q0=0;frac-q1=0;frac-err=0;-=0", d[0]["vector_per_s"]
assert d[1]["queue_timeouts"] == "" and d[1]["vector_per_s"] == ""
EOF
	./fractop --sysroot "$S" -D accel1 -J -n 1 -d 0.1 > "$T/d1.jsonl"
	check "fractop -D accel1: only accel1, its client only" python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert [d["device"] for d in o["devices"]] == ["accel1"]
assert o["devices"][0]["clients"] == 1' "$T/d1.jsonl"

	# A counter that moves between the two samples: 500 jobs and 0.25 s of DMA busy time
	# over 0.5 s of device clock. The baseline is read at start, the change lands at 1 s,
	# the sample at 2 s.
	./fractop --sysroot "$S" -J -n 1 -d 2 -w "$T/rate.rec" > "$T/rate.jsonl" &
	pid=$!
	sleep 1
	echo 600 > "$fdev/frac/jobs_completed"
	echo 250000000 > "$fdev/frac/busy_ns_dma"
	echo 1500000000 > "$fdev/frac/device_clock_ns"
	echo 3 > "$fdev/frac/job_timeouts"
	sed -i 's/^drm-engine-queue1:.*/drm-engine-queue1:\t1000000000 ns/' "$S/frac8.txt"
	sed 's/completed 3 failed 0/completed 203 failed 4/' tests/fixtures/debugfs-queues.txt \
		> "$S/sys/kernel/debug/accel/0000:01:00.0/queues"
	sed 's/^ 36:          0          3/ 36:        100          3/' tests/fixtures/interrupts.txt \
		> "$S/proc/interrupts"
	cp "$S/frac8.txt" "$S/proc/102/fdinfo/7"
	wait $pid
	check "fractop -J rates: jobs/s x interval = 500, DMA busy 50%, queue1 busy, queue and vector rates" \
		python3 - "$T/rate.jsonl" <<'EOF'
import json, sys
o = json.loads(open(sys.argv[1]).read())
f = o["devices"][0]
# Each rate is over its own source's interval: the time between that source's two reads.
dt = o["interval_s"]
assert 1.9 < dt < 2.5, dt
r = f["reads"]
dsys, ddbg, dirq = (r[k]["interval_s"] for k in ("sysfs", "debugfs", "interrupts"))
assert all(1.9 < x < 2.5 for x in (dsys, ddbg, dirq)), r
assert abs(f["rates"]["jobs_per_s"] * dsys - 500) < 1e-6, (f["rates"]["jobs_per_s"], dsys)
assert abs(f["rates"]["busy_dma_pct"] - 50) < 1e-6, f["rates"]["busy_dma_pct"]
assert f["counters"]["job_timeouts"] == 3
p = [p for p in f["processes"] if p["pid"] == 102][0]
dfd = p["reads"]["fdinfo"]["interval_s"]
assert 1.9 < dfd < 2.5, p
q1 = [e for e in f["engines"] if e["name"] == "queue1"][0]
assert abs(q1["busy_pct"] - 100 / dfd) < 1e-6, (q1, dfd)
assert abs(p["busy_pct"] - 100 / dfd) < 1e-6, p
q1 = f["queues"][1]
assert abs(q1["jobs_per_s"] * ddbg - 200) < 1e-6, (q1, ddbg)
assert abs(q1["jobs_failed_per_s"] * ddbg - 4) < 1e-6, (q1, ddbg)
assert f["queues"][0]["jobs_per_s"] == 0
v36 = [v for v in f["vectors"] if v["irq"] == 36][0]
assert abs(v36["per_s"] * dirq - 100) < 1e-6, (v36, dirq)
EOF
fi

# ---- the latency source without privilege, and --no-bpf ----
# Root without CAP_BPF/CAP_PERFMON/CAP_SYS_ADMIN (setpriv drops them all): the source does not
# start, -J says why and every latency figure is null; the screen says it in the latency pane,
# which l hides and shows. --no-bpf: the same, "off".
nocaps() { setpriv --inh-caps=-all --bounding-set=-all -- "$@"; }
if command -v setpriv > /dev/null && nocaps true 2>/dev/null; then
	nocaps ./fractop --sysroot "$S" -J -n 1 -d 0.1 > "$T/nocap.jsonl" 2> "$T/nocap.err"
	check "no CAP_BPF+CAP_PERFMON: -J exits 0, nothing on stderr, note says so, latency null" \
		python3 - "$T/nocap.jsonl" "$T/nocap.err" <<'EOF'
import json, sys
assert open(sys.argv[2]).read() == ""
o = json.loads(open(sys.argv[1]).read())
assert o["latency"]["active"] is False, o["latency"]
assert o["latency"]["note"] == "latency: needs CAP_BPF+CAP_PERFMON", o["latency"]
assert all(v is None for k, v in o["latency"].items() if k not in ("active", "note"))
for d in o["devices"]:
    assert d["latency_ok"] is False
    for q in d["queues"]:
        assert all(v is None for h in q["latency"].values() for v in h.values()), q
EOF
	nocaps ./fractop --sysroot "$S" -c -n 1 -d 0.1 > "$T/nocap.csv"
	check "no CAP_BPF+CAP_PERFMON: -c latency cells empty (n/a), not 0" python3 - "$T/nocap.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows and all(r[k] == "" for r in rows for k in r if k.startswith("queue_latency_")), rows
EOF
	nocaps ./fractop --sysroot "$S" -J -n 1 -d 0.1 -w "$T/nocap.rec" > /dev/null
	check "no CAP_BPF+CAP_PERFMON: the record's header keeps the reason" \
		bash -c "head -n 1 '$T/nocap.rec' | grep -qF '\"name\":\"latency\",\"active\":false,\"why\":\"latency: needs CAP_BPF+CAP_PERFMON\"'"
	if command -v tmux > /dev/null; then
		TM="tmux -S $T/tmux-nocap.sock"
		$TM new-session -d -s n -x 120 -y 40 "LANG=C.UTF-8 setpriv --inh-caps=-all --bounding-set=-all -- ./fractop --sysroot $S -d 0.2"
		nscr() { # nscr grep-E-ARGS...: the screen matches within 10 s
			for _ in $(seq 100); do
				$TM capture-pane -t n -p > "$T/n.txt" 2>/dev/null
				grep -qE "$@" "$T/n.txt" && return 0
				sleep 0.1
			done
			sed 's/^/#   /' "$T/n.txt"
			return 1
		}
		check "no CAP_BPF+CAP_PERFMON: the screen says 'latency: needs CAP_BPF+CAP_PERFMON'" \
			nscr "^ latency: needs CAP_BPF\+CAP_PERFMON$"
		$TM send-keys -t n l
		check "l hides the latency pane" nscr -v "needs CAP_BPF"
		check "... and its rule" bash -c "! grep -q -- '─ latency' '$T/n.txt'"
		$TM send-keys -t n l
		check "l shows it again" nscr "latency: needs CAP_BPF"
		$TM send-keys -t n h
		check "help lists l (latency pane)" nscr "l 4 +show / hide the latency pane"
		$TM send-keys -t n x q
		$TM kill-server 2>/dev/null
	else
		n_skip "the unprivileged screen (no tmux)"
	fi
else
	n_skip "the latency source without privilege (no setpriv, or it cannot drop capabilities)"
fi
./fractop --sysroot "$S" -J -n 1 -d 0.1 --no-bpf > "$T/nobpf.jsonl"
check "--no-bpf: note 'latency: off (--no-bpf)', latency null" python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["latency"]["active"] is False and o["latency"]["note"] == "latency: off (--no-bpf)", o
assert all(d["latency_ok"] is False for d in o["devices"])' "$T/nobpf.jsonl"

# ---- record and replay ----
# A record of the fixture tree (with the rate run's changes in it when mknod worked), replayed:
# -J and -c byte-identical to the live run's lines; then damaged records, each one error line.
./fractop --sysroot "$S" -J -n 3 -d 0.1 -w "$T/rec.jsonl" > "$T/rec-live.jsonl" 2> "$T/rec.err"
check "-w: the live -J run exits 0, nothing on stderr; the record has a header + 4 samples" \
	bash -c "[ ! -s '$T/rec.err' ] && [ \$(wc -l < '$T/rec.jsonl') = 5 ]"
check "-r -J: the same JSON lines as the live run, byte for byte" \
	bash -c "./fractop -r '$T/rec.jsonl' -J | cmp - '$T/rec-live.jsonl'"
check "-r -J -n 2: the first two of them" \
	bash -c "./fractop -r '$T/rec.jsonl' -J -n 2 | cmp - <(head -n 2 '$T/rec-live.jsonl')"
./fractop --sysroot "$S" -c -n 2 -d 0.1 -w "$T/rec-csv.jsonl" > "$T/rec-live.csv"
check "-r -c: the same CSV as the live run, byte for byte" \
	bash -c "./fractop -r '$T/rec-csv.jsonl' -c | cmp - '$T/rec-live.csv'"
if [ -s "$T/rate.rec" ]; then
	check "-r -J of the rate run (counters moved): the same line, byte for byte" \
		bash -c "./fractop -r '$T/rate.rec' -J | cmp - '$T/rate.jsonl'"
fi
check "the record: JSON lines, a version 3 header naming the sources, one sample per line" \
	python3 - "$T/rec.jsonl" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
h = lines[0]
assert h["fractop_record"] == 3 and h["program"].startswith("fractop "), h
assert [s["name"] for s in h["sources"]] == ["sysfs", "fdinfo", "debugfs", "interrupts",
                                             "latency"], h
assert h["sources"][4]["active"] is False and h["sources"][4]["why"].startswith("latency: "), h
assert h["delay_s"] == 0.1 and h["device"] is None
t = [s["t_mono"] for s in lines[1:]]
assert len(t) == 4 and t == sorted(t), t
for s in lines[1:]:
    assert [d["node"] for d in s["devices"]] == ["accel0", "accel1"]
    assert all(d["histograms"] == [] and d["latency_ok"] is False for d in s["devices"])
    assert "lat_stats" not in s
    assert isinstance(s["devices"][0]["values"]["jobs_completed"], int)
    assert s["devices"][1]["values"] == {}
EOF

# damaged ERRTEXT FILE: -r FILE -J exits 1 with one line on stderr naming the file and ERRTEXT
damaged() {
	local want=$1 f=$2 err rc
	err=$(./fractop -r "$f" -J 2>&1 >/dev/null); rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <<< "$err")" = 1 ] && grep -qF -- "$want" <<< "$err"; then
		n_ok "-r, $want: exit 1, one line: $err"
	else
		n_fail "-r, $want: exit $rc, stderr: $err"
	fi
}
: > "$T/empty.rec"
damaged "empty file" "$T/empty.rec"
head -n 1 "$T/rec.jsonl" > "$T/hdr.rec"
damaged "no samples" "$T/hdr.rec"
head -c -1 "$T/rec.jsonl" > "$T/trunc.rec"
damaged ":5: no newline at the end (truncated?)" "$T/trunc.rec"
head -c -200 "$T/rec.jsonl" > "$T/trunc2.rec"
echo >> "$T/trunc2.rec"
damaged ":5: unterminated string" "$T/trunc2.rec"
sed -E '3s/"jobs_completed":[0-9]+/"jobs_completed":-1/' "$T/rec.jsonl" > "$T/neg.rec"
damaged ":3: bad value jobs_completed" "$T/neg.rec"
sed '1s/"fractop_record":3/"fractop_record":4/' "$T/rec.jsonl" > "$T/v4.rec"
damaged ":1: record version 4, this fractop reads 3" "$T/v4.rec"
sed -E '3s/"read_at":\{"sysfs":[0-9.e+-]+/"read_at":{"sysfs":0/' "$T/rec.jsonl" > "$T/rat.rec"
damaged ":3: bad time sysfs" "$T/rat.rec"
sed -E '3s/"latency_ok":false,"latency_queues":0/"latency_ok":false,"latency_queues":2/' \
	"$T/rec.jsonl" > "$T/latq.rec"
damaged ":3: bad latency_queues" "$T/latq.rec"
sed '2s/^/x/' "$T/rec.jsonl" > "$T/garbage.rec"
damaged ":2: bad number at byte 0" "$T/garbage.rec"
{ head -n 2 "$T/rec.jsonl"; sed -n 2p "$T/rec.jsonl"; } > "$T/time.rec"
damaged ":3: time does not advance" "$T/time.rec"
sed -n 2p "$T/rec.jsonl" > "$T/nohdr.rec"
damaged ":1: not a fractop record" "$T/nohdr.rec"
damaged "No such file or directory" "$T/absent.rec"
argcheck 2 -w "$T/x.rec" -r "$T/rec.jsonl" -J
argcheck 2 -r "$T/rec.jsonl" -D 0 -J
argcheck 2 -r "" -J
argcheck 2 -r "$T/rec.jsonl" -J --no-bpf
err=$(./fractop --sysroot "$S" -J -n 1 -d 0.1 -w "$T/no/such/dir/x.rec" 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && [ "$(wc -l <<< "$err")" = 1 ] && n_ok "-w into a missing directory: exit 1, '$err'" ||
	n_fail "-w into a missing directory: exit $rc, '$err'"

# The replay screen under tmux: sample counter, pause, step, seek, and the same numbers as -J.
if command -v tmux > /dev/null; then
	./fractop --sysroot "$S" -J -n 30 -d 0.05 -w "$T/long.rec" > "$T/long.jsonl"
	TM="tmux -S $T/tmux.sock"
	$TM new-session -d -s r -x 120 -y 40 "LANG=C.UTF-8 ./fractop -r $T/long.rec -d 60; echo \$? > $T/r.rc"
	scr() { # scr PATTERN: the replay screen shows PATTERN within 10 s
		for _ in $(seq 100); do
			$TM capture-pane -t r -p > "$T/r.txt" 2>/dev/null
			grep -qE -- "$1" "$T/r.txt" && return 0
			sleep 0.1
		done
		sed 's/^/#   /' "$T/r.txt"
		return 1
	}
	scr_gone() { # scr_gone PATTERN: the replay screen no longer shows PATTERN within 10 s
		for _ in $(seq 100); do
			$TM capture-pane -t r -p > "$T/r.txt" 2>/dev/null
			grep -qE -- "$1" "$T/r.txt" || return 0
			sleep 0.1
		done
		sed 's/^/#   /' "$T/r.txt"
		return 1
	}
	check "replay screen: starts at sample 1/31" scr "replay .*long.rec  sample 1/31 "
	$TM send-keys -t r n
	check "replay screen: n steps to 2/31 and pauses" scr "sample 2/31 .*\[paused\]"
	$TM send-keys -t r Right
	check "replay screen: Right seeks to 12/31" scr "sample 12/31 "
	$TM send-keys -t r ,
	check "replay screen: , steps back to 11/31" scr "sample 11/31 "
	$TM send-keys -t r Left Left
	check "replay screen: Left Left clamp at 1/31" scr "sample 1/31 "
	$TM send-keys -t r End
	check "replay screen: End shows 31/31 [end]" scr "sample 31/31 .*\[end\]"
	if [ $mknod_ok = 1 ]; then
	jobs=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["devices"][0]["processes"][0]["jobs_completed"])' "$T/long.jsonl")
	check "replay screen: the last sample's process row as -J has it ($jobs jobs)" scr "^ +100 load .* $jobs "
	fi
	$TM send-keys -t r Home
	check "replay screen: Home back to 1/31, still paused" scr "sample 1/31 .*\[paused\]"
	$TM send-keys -t r Space
	check "replay screen: space resumes" scr_gone "\[paused\]"
	$TM send-keys -t r q
	for _ in $(seq 50); do [ -e "$T/r.rc" ] && break; sleep 0.1; done
	check "replay screen: q exits 0" bash -c "[ \"\$(cat '$T/r.rc' 2>/dev/null)\" = 0 ]"
	$TM kill-server 2>/dev/null
else
	n_skip "the replay screen under tmux (no tmux: scripts/deps.sh installs it)"
fi

# ---- the Prometheus exporter (--listen) ----
# fractop --listen on 127.0.0.1:0 (the kernel picks the port; fractop prints it) over the
# fixture tree, a process with quote, backslash and newline in its comm; scraped with urllib:
# the exposition against tests/promcheck.py and promtool, every counter against -J's, the HTTP
# edges (404, 405, 400, HEAD, keep-alive), 16 concurrent scrapes with a stalled client open.
argcheck 2 --listen 127.0.0.1 -J
argcheck 2 --listen 127.0.0.1:9464 -J
argcheck 2 --listen 127.0.0.1:99999
argcheck 2 --listen '::1:9464'
comm_was=$(cat "$S/proc/100/comm")
printf 'lo"a\\d\nx\n' > "$S/proc/100/comm"
./fractop --sysroot "$S" -J -n 1 -d 0.1 > "$T/prom-ref.jsonl"
./fractop --sysroot "$S" --listen 127.0.0.1:0 -d 0.2 2> "$T/prom.err" &
ppid=$!
for _ in $(seq 100); do grep -qs '^fractop: serving ' "$T/prom.err" && break; sleep 0.1; done
url=$(sed -n 's/^fractop: serving //p' "$T/prom.err")
check "--listen 127.0.0.1:0: says where it serves ($url)" test -n "$url"
check "GET /metrics: 200, format 0.0.4, the exposition and naming rules (tests/promcheck.py)" \
	python3 - "$url" "$T/prom.txt" <<'EOF'
import sys, urllib.request
sys.path.insert(0, "tests")
import promcheck
r = urllib.request.urlopen(sys.argv[1], timeout=10)
assert r.status == 200
assert r.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8", r.headers
body = r.read()
assert len(body) == int(r.headers["Content-Length"])
open(sys.argv[2], "wb").write(body)
fams = promcheck.parse(body.decode())
assert not promcheck.check(fams), promcheck.check(fams)
assert len(fams) > 20, len(fams)
EOF
if command -v promtool > /dev/null; then
	check "promtool check metrics: no problem" bash -c "promtool check metrics < '$T/prom.txt'"
else
	n_skip "promtool check metrics (no promtool: scripts/deps.sh installs prometheus)"
fi
check "every frac counter and gauge as -J has it; per-client series; comm escaped and read back" \
	python3 - "$T/prom.txt" "$T/prom-ref.jsonl" "$mknod_ok" <<'EOF'
import json, sys
sys.path.insert(0, "tests")
import promcheck
fams = promcheck.parse(open(sys.argv[1]).read())
ref = json.loads(open(sys.argv[2]).read())
def val(name, **labels):
    got = [v for n, l, v in fams[name]["samples"] if all(l.get(k) == x for k, x in labels.items())]
    assert len(got) == 1, (name, labels, got)
    return got[0]
names = {"jobs_submitted": "frac_jobs_submitted_total", "jobs_completed": "frac_jobs_completed_total",
         "jobs_failed": "frac_jobs_failed_total", "job_timeouts": "frac_job_timeouts_total",
         "lost_interrupts": "frac_lost_interrupts_total", "errors": "frac_errors_total",
         "coredumps": "frac_coredumps_total", "device_jobs_done": "frac_device_jobs_done_total",
         "device_jobs_failed": "frac_device_jobs_failed_total",
         "bytes_read": "frac_dma_read_bytes_total", "bytes_written": "frac_dma_written_bytes_total",
         "interrupts": "frac_device_interrupts_total", "wedged": "frac_wedged",
         "num_queues": "frac_queues"}
d = ref["devices"][0]
c = d["counters"]
for k, n in names.items():
    assert val(n, device="accel0") == c[k], (k, n)
assert val("frac_resets_total", device="accel0", scope="queue") == c["queue_resets"]
assert val("frac_resets_total", device="accel0", scope="device") == c["device_resets"]
assert val("frac_device_clock_seconds_total", device="accel0") == c["device_clock_ns"] / 1e9
assert val("frac_device_busy_seconds_total", device="accel0", engine="dma") == c["busy_ns_dma"] / 1e9
assert val("frac_temperature_celsius", device="accel0") == d["temperature_c"]
assert val("frac_power_watts", device="accel0") == d["power_w"]
for q in d["queues"]:
    assert val("frac_queue_jobs_completed_total", device="accel0", queue=str(q["queue"])) == q["completed"]
    assert val("frac_queue_resets_total", device="accel0", queue=str(q["queue"])) == q["resets"]
for v in d["vectors"]:
    assert val("frac_interrupts_total", device="accel0", irq=str(v["irq"])) == v["count"]
assert val("frac_device_info", device="accel1", driver="intel_vpu") == 1
# accel1 (not frac) has no frac counter: absent, not 0
assert not [l for n, l, v in fams["frac_jobs_completed_total"]["samples"] if l["device"] == "accel1"]
assert val("frac_clients", device="accel0") == d["clients"]
# When each source read accel0, in the order the sources run; each client's fdinfo in between.
ts = [val("frac_source_read_timestamp_seconds", device="accel0", source=k)
      for k in ("sysfs", "debugfs", "interrupts")]
assert ts == sorted(ts) and len(set(ts)) == 3 and abs(ts[0] - ref["timestamp"]) < 60, ts
assert not [l for n, l, v in fams["frac_source_read_timestamp_seconds"]["samples"]
            if l["source"] == "latency"]
cts = [v for n, l, v in fams.get("frac_client_read_timestamp_seconds", {"samples": []})["samples"]
       if l["device"] == "accel0"]
assert all(ts[0] < t < ts[1] for t in cts), (ts, cts)
if sys.argv[3] == "1":
    p = [p for p in d["processes"] if p["pid"] == 100][0]
    assert p["comm"] == 'lo"a\\d\nx', p["comm"]
    assert val("frac_client_jobs_completed_total", pid="100") == p["jobs_completed"]
    assert val("frac_client_jobs_failed_total", pid="100") == p["jobs_failed"] == 2
    assert val("frac_client_jobs_completed_total", pid="100", comm=p["comm"], client="7")
    assert val("frac_client_engine_busy_seconds_total", pid="100", engine="queue0") == \
        [e for e in p["engines"] if e["name"] == "queue0"][0]["busy_ns"] / 1e9
    assert val("frac_client_memory_total_bytes", pid="100", region="devmem") == \
        [r for r in p["memory"] if r["region"] == "devmem"][0]["total_bytes"]
EOF
check "HTTP: 404 elsewhere, 405 for POST, 400 for garbage, 431 for a huge request, HEAD, keep-alive" \
	python3 - "$url" <<'EOF'
import http.client, socket, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
def req(method, path, body=None, headers={}):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data
r, _ = req("GET", "/")
assert r.status == 404, r.status
r, _ = req("GET", "/metricsx")
assert r.status == 404, r.status
r, _ = req("POST", "/metrics", body=b"x=1")
assert r.status == 405 and r.getheader("Allow") == "GET, HEAD", r.status
r, data = req("HEAD", "/metrics")
assert r.status == 200 and data == b"" and int(r.getheader("Content-Length")) > 1000
r, data = req("GET", "/metrics?name[]=frac_jobs_completed_total")
assert r.status == 200 and data.startswith(b"# HELP")
s = socket.create_connection((u.hostname, u.port), timeout=10)
s.sendall(b"NONSENSE\r\n\r\n")
assert s.recv(100).startswith(b"HTTP/1.1 400 "), "garbage"
s.close()
s = socket.create_connection((u.hostname, u.port), timeout=10)
s.sendall(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000)
assert s.recv(100).startswith(b"HTTP/1.1 431 "), "huge"
s.close()
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
for _ in range(3):
    c.request("GET", "/metrics")
    r = c.getresponse()
    assert r.status == 200 and r.read().startswith(b"# HELP") and not r.getheader("Connection")
c.request("GET", "/metrics", headers={"Connection": "close"})
r = c.getresponse()
assert r.status == 200 and r.getheader("Connection") == "close"
r.read()
EOF
check "16 concurrent scrapes all served while a stalled client holds a half-sent request" \
	python3 - "$url" <<'EOF'
import socket, sys, threading, urllib.parse, urllib.request
sys.path.insert(0, "tests")
import promcheck
u = urllib.parse.urlsplit(sys.argv[1])
stall = socket.create_connection((u.hostname, u.port), timeout=10)
stall.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")   # never finished
out = []
def scrape():
    body = urllib.request.urlopen(sys.argv[1], timeout=20).read().decode()
    out.append(len(promcheck.parse(body)))
ts = [threading.Thread(target=scrape) for _ in range(16)]
for t in ts: t.start()
for t in ts: t.join()
assert len(out) == 16 and len(set(out)) == 1, out
stall.close()
EOF
kill -TERM $ppid; wait $ppid; rc=$?
check "--listen: SIGTERM exits 0, stderr only the serving line" \
	bash -c "[ $rc = 0 ] && [ \$(wc -l < '$T/prom.err') = 1 ]"
echo "$comm_was" > "$S/proc/100/comm"
./fractop --sysroot "$S" --listen 127.0.0.1:0 -d 0.1 -n 3 -w "$T/prom.rec" 2> "$T/prom2.err"; rc=$?
check "--listen -n 3 -w: exits 0 after 3 samples, the record has them and the first" \
	bash -c "[ $rc = 0 ] && [ \$(wc -l < '$T/prom.rec') = 5 ]"
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1]); sys.stdout.flush(); time.sleep(5)' > "$T/busy.port" &
bpid=$!
for _ in $(seq 50); do [ -s "$T/busy.port" ] && break; sleep 0.1; done
err=$(./fractop --sysroot "$S" --listen "127.0.0.1:$(cat "$T/busy.port")" -n 1 2>&1 >/dev/null); rc=$?
kill $bpid 2>/dev/null; wait $bpid 2>/dev/null
[ $rc = 1 ] && [ "$(wc -l <<< "$err")" = 1 ] && grep -q "Address already in use" <<< "$err" &&
	n_ok "--listen on a port in use: exit 1, '$err'" || n_fail "--listen on a port in use: exit $rc, '$err'"

# ---- the Grafana dashboard (dashboards/grafana/fractop.json) against the exporter ----
DASH=../../dashboards/grafana/fractop.json
if [ $mknod_ok = 1 ]; then
	check "dashboard: parses, panels well formed, every expr's frac_ metric is exported" \
		tests/dashcheck.py --bpf-families frac_job_latency_seconds "$DASH" "$T/prom.txt" \
			"$T/dash-rules.yml"
	sed 's/frac_clients{/frac_clientz{/' "$DASH" > "$T/bad-dash.json"
	check "dashboard check refuses a metric the exporter does not export" \
		bash -c "! tests/dashcheck.py '$T/bad-dash.json' '$T/prom.txt' > '$T/bad-dash.out' 2>&1 &&
			 grep -q 'frac_clientz is not exported' '$T/bad-dash.out'"
	if command -v promtool > /dev/null; then
		check "dashboard: promtool check rules parses every expr (Grafana's variables replaced)" \
			promtool check rules "$T/dash-rules.yml"
	else
		n_skip "dashboard exprs through promtool (no promtool: scripts/deps.sh installs prometheus)"
	fi
else
	n_skip "the dashboard against the exporter (the per-client families need the mknod tree)"
fi

# ---- TAP ----
n=$(grep -cE '^(ok|not ok) ' "$results")
echo "1..$n"
awk '/^ok / { sub(/^ok /, "ok " ++i " ") } /^not ok / { sub(/^not ok /, "not ok " ++i " ") } { print }' \
	"$results"
! grep -q '^not ok ' "$results"
