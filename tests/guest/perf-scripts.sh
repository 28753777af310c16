#!/usr/bin/env bash
# Guest test of tools/perf-scripts: the stage report and CSV, the timeline JSON
# (from perf and from trace-cmd) and the hot-path profile, on a known workload
# (tools/fracload: N jobs on each of two queues). Counts and structure only,
# no timing thresholds. Runs inside the guest (scripts/vm; make test-guest);
# prints TAP, exits non-zero on any failure. Loads frac.ko if it is not loaded
# (and unloads it again).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/frac-guest.bash"	# guest_load_frac, guest_have_device

cd "$GUEST_REPO" || exit 1
REPO=$PWD
P=$REPO/tools/perf-scripts
export PAGER=cat PERF_PAGER=cat

N=5		# jobs per queue for the stage report and the perf timeline
M=3		# jobs for the trace-cmd timeline
HP_JOBS=60	# jobs for the hot-path profile

n=0 failed=0
T0=$SECONDS
ok() { # ok DESCRIPTION CONDITION...: one TAP line; returns the condition's status
	local desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $desc"; return 0; fi
	echo "not ok $n - $desc"
	failed=$((failed + 1))
	return 1
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
diag() { sed 's/^/# /' "$@"; }
took() { echo "# $1: $((SECONDS - $2)) s"; }

if ! command -v perf >/dev/null; then echo "1..0 # SKIP perf not installed"; exit 0; fi
if ! guest_have_device; then echo "1..0 # SKIP no FRAC-1 device"; exit 0; fi

W=$(mktemp -d /tmp/perf-scripts.XXXXXX)
dmesg_start=$(dmesg | wc -l)
loaded=0
if [ ! -d /sys/module/frac ]; then
	guest_load_frac && loaded=1
fi
if [ ! -d /sys/module/frac ]; then printf '1..1\nnot ok 1 - frac.ko loads\n'; exit 1; fi
cleanup() {
	[ "$loaded" = 1 ] && rmmod frac
	[ -n "${FRAC_OUT:-}" ] && [ -d "$FRAC_OUT" ] && mkdir -p "$FRAC_OUT/perf-scripts" &&
		cp "$W"/*.txt "$W"/*.csv "$W"/*.json "$FRAC_OUT/perf-scripts/" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# Two queues: the first and the last.
nq=$(cat /sys/bus/pci/devices/*/frac/num_queues 2>/dev/null | head -n 1)
if [ "${nq:-0}" -lt 2 ]; then echo "1..0 # SKIP the device has fewer than 2 queues"; exit 0; fi
QA=0 QB=$((nq - 1))
echo "1..20"

# 1: the pure-Python part, on synthetic events.
python3 "$P/test_frac_jobs.py" > "$W/unit.txt" 2>&1
ok "frac_jobs.py unit tests" test $? = 0 || diag "$W/unit.txt"

# 2: the workload, prebuilt (make -C tools/fracload) or built here. It runs one job in
# flight (-d 1) of 4096 bytes, as the perf scripts' workload always did; its -n counts the
# jobs of all queues.
LOAD=$REPO/tools/fracload/fracload
if [ ! -x "$LOAD" ] || [ "$LOAD" -ot tools/fracload/fracload.c ] || [ "$LOAD" -ot lib/libfrac.a ]; then
	LOAD=$W/fracload
	cc -O2 -g -fno-omit-frame-pointer -std=gnu11 -Ilib -Iinclude -Iinclude/uapi/drm \
		-I/usr/include/drm -o "$LOAD" tools/fracload/fracload.c lib/libfrac.a > "$W/cc.txt" 2>&1
fi
ok "fracload is built" test -x "$LOAD" || diag "$W/cc.txt"

# 3-9: frac-stages-record / -report on N jobs on each of queues QA and QB,
# ops alternating copy, crc32c (per queue: ceil(N/2) copy, floor(N/2) crc32c).
t=$SECONDS
(cd "$W" && "$P/frac-stages-record" -o "$W/stages.data" -- \
	"$LOAD" -n $((2 * N)) -q "$QA,$QB" -o copy,crc32c -d 1 -s 4096) > "$W/record.txt" 2>&1
ok "frac-stages-record records $N jobs on queues $QA and $QB" test $? = 0 || diag "$W/record.txt"
took "perf record -a -k mono -e frac:*" $t
t=$SECONDS
"$P/frac-stages-report" -i "$W/stages.data" --csv "$W/stages.csv" > "$W/stages.txt" 2>&1
rc=$?
took "frac-stages-report" $t
diag "$W/stages.txt"
queue_jobs() { # queue_jobs Q: "N T" = the "dev D queue Q: N jobs" header and its total row count
	awk -v q="$1" '$1 == "dev" && $3 == "queue" && $4 == q ":" { n = $5; t = 1; next }
		t && $1 == "total" { print n, $2; exit }' "$W/stages.txt"
}
ok "report: queue $QA has $N jobs" test $rc = 0 -a "$(queue_jobs $QA)" = "$N $N"
ok "report: queue $QB has $N jobs" test "$(queue_jobs $QB)" = "$N $N"
ncopy=$(((N + 1) / 2 * 2)) ncrc=$((N / 2 * 2))
per_op() { grep -q "^op copy: $ncopy jobs" "$W/stages.txt" && grep -q "^op crc32c: $ncrc jobs" "$W/stages.txt"; }
ok "report: per op, $ncopy copy and $ncrc crc32c jobs" per_op
ok "report: states how many negative deltas were clamped" \
	grep -qE '^clamped negative deltas: [0-9]+ in [0-9]+ jobs' "$W/stages.txt"
python3 - "$W/stages.csv" $((2 * N)) > "$W/csv-check.txt" 2>&1 <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = int(sys.argv[2])
stages = ["submit_run_ns", "run_devstart_ns", "dev_exec_ns", "devend_irq_ns", "irq_fence_ns"]
rows_ok = len(rows) == want and all(r["status"] == "0" for r in rows)
print("rows %s" % ("ok" if rows_ok else "FAIL"))
print("# %d rows (want %d), status %s" % (len(rows), want, sorted(set(r["status"] for r in rows))))
bad = []
for r in rows:
    vals = [int(r[s]) for s in stages]
    if min(vals) < 0 or sum(vals) != int(r["total_ns"]):
        bad.append("job %s: stages %s total %s" % (r["job"], vals, r["total_ns"]))
print("sums %s" % ("ok" if rows and not bad else "FAIL"))
for b in bad[:5]:
    print("#   " + b)
EOF
grep '^#' "$W/csv-check.txt"
ok "CSV: $((2 * N)) rows, all status 0" grep -qx 'rows ok' "$W/csv-check.txt"
ok "CSV: every row's stage columns are >= 0 and add up to total_ns" \
	grep -qx 'sums ok' "$W/csv-check.txt"
sed -n '1,3p' "$W/stages.csv" | diag

# 10-12: the timeline JSON from the same recording.
cat > "$W/check_timeline.py" <<'EOF'
# check_timeline.py FILE Q=JOBS...: Chrome trace structure, nesting, tracks
import json, sys
tol = 0.002		# us: float rounding of ns / 1000
trace = json.load(open(sys.argv[1]))
want = dict((int(a.split("=")[0]), int(a.split("=")[1])) for a in sys.argv[2:])
evs = trace["traceEvents"]
xs = [e for e in evs if e.get("ph") == "X"]
errs = {"structure": [], "nesting": [], "tracks": []}
for e in xs:
    for k, typ in (("ts", (int, float)), ("dur", (int, float)), ("pid", int), ("tid", int),
                   ("name", str)):
        if not isinstance(e.get(k), typ):
            errs["structure"].append("X event without %s: %s" % (k, e))
    if isinstance(e.get("dur"), (int, float)) and e["dur"] < 0:
        errs["structure"].append("negative dur: %s" % e)
pnames = dict((e["pid"], e["args"]["name"]) for e in evs
              if e.get("ph") == "M" and e["name"] == "process_name")
tnames = dict(((e["pid"], e["tid"]), e["args"]["name"]) for e in evs
              if e.get("ph") == "M" and e["name"] == "thread_name")
for e in xs:
    if e["pid"] not in pnames or (e["pid"], e["tid"]) not in tnames:
        errs["structure"].append("slice on an unnamed process/track: %s" % e)
        break
tracks = {}
for e in xs:
    tracks.setdefault((e["pid"], e["tid"]), []).append(e)
for key, es in tracks.items():
    jobs = sorted((e for e in es if e.get("cat") == "job"), key=lambda e: e["ts"])
    for a, b in zip(jobs, jobs[1:]):
        if b["ts"] < a["ts"] + a["dur"] - tol:
            errs["nesting"].append("jobs overlap on %s: %s / %s" % (tnames[key], a["name"], b["name"]))
    for j in jobs:
        kids = sorted((e for e in es if e.get("cat") == "stage" and
                       e["args"]["job"] == j["args"]["job"] and e["args"]["ctx"] == j["args"]["ctx"]),
                      key=lambda e: e["ts"])
        if len(kids) != 5:
            errs["nesting"].append("%s: %d stage slices" % (j["name"], len(kids)))
            continue
        if abs(kids[0]["ts"] - j["ts"]) > tol:
            errs["nesting"].append("%s: first stage does not start with the job" % j["name"])
        for a, b in zip(kids, kids[1:]):
            if abs(a["ts"] + a["dur"] - b["ts"]) > tol:
                errs["nesting"].append("%s: %s and %s do not abut" % (j["name"], a["name"], b["name"]))
        if abs(kids[-1]["ts"] + kids[-1]["dur"] - (j["ts"] + j["dur"])) > tol:
            errs["nesting"].append("%s: last stage does not end with the job" % j["name"])
per_queue = {}
primary = {}
for key, es in tracks.items():
    name = tnames[key]
    q = int(name.split()[1])
    per_queue[q] = per_queue.get(q, 0) + len(es)
    if name == "queue %d" % q:
        primary[q] = primary.get(q, 0) + 1
if sorted(per_queue) != sorted(want):
    errs["tracks"].append("queues %s, want %s" % (sorted(per_queue), sorted(want)))
for q, jobs in want.items():
    if primary.get(q) != 1:
        errs["tracks"].append("queue %d: %s primary tracks" % (q, primary.get(q)))
    if per_queue.get(q) != 6 * jobs:
        errs["tracks"].append("queue %d: %s slices, want %d" % (q, per_queue.get(q), 6 * jobs))
for k in ("structure", "nesting", "tracks"):
    print("%s %s" % (k, "ok" if not errs[k] else "FAIL"))
    for m in errs[k][:5]:
        print("#   " + m)
print("# %d slices on %d tracks: %s" % (len(xs), len(tracks), ", ".join(
    "%s %d" % (tnames[k], len(v)) for k, v in sorted(tracks.items()))))
EOF
t=$SECONDS
"$P/frac-timeline-report" -i "$W/stages.data" -o "$W/timeline.json" > "$W/timeline.txt" 2>&1
diag "$W/timeline.txt"
python3 "$W/check_timeline.py" "$W/timeline.json" "$QA=$N" "$QB=$N" > "$W/check.txt" 2>&1
took "frac-timeline-report + check" $t
grep '^#' "$W/check.txt"
ok "timeline (perf): JSON loads, every X event has ts/dur/pid/tid/name" grep -qx 'structure ok' "$W/check.txt"
ok "timeline (perf): each job's stage slices abut inside its job slice" grep -qx 'nesting ok' "$W/check.txt"
ok "timeline (perf): one track per queue used, $((6 * N)) slices each" grep -qx 'tracks ok' "$W/check.txt"

# 13-14: trace-cmd record -C mono + report -t, through the same scripts.
if command -v trace-cmd >/dev/null; then
	t=$SECONDS
	(cd "$W" && trace-cmd record -C mono -e frac -o "$W/t.dat" \
		"$LOAD" -n "$M" -q "$QB" -o nop -d 1 -s 4096) > "$W/tc-record.txt" 2>&1 &&
		trace-cmd report -t -i "$W/t.dat" > "$W/tc-report.txt" 2>&1
	took "trace-cmd record + report" $t
	python3 "$P/frac-stages.py" --by queue "$W/tc-report.txt" > "$W/tc-stages.txt" 2>&1
	ok "frac-stages.py on trace-cmd report: $M jobs on queue $QB" \
		test "$(awk -v q="$QB" '$1 == "dev" && $4 == q ":" { print $5 }' \
			"$W/tc-stages.txt")" = "$M"
	diag "$W/tc-stages.txt" | head -n 12
	python3 "$P/frac-timeline.py" -o "$W/tc-timeline.json" "$W/tc-report.txt" > /dev/null 2>&1 &&
		python3 "$W/check_timeline.py" "$W/tc-timeline.json" "$QB=$M" > "$W/tc-check.txt" 2>&1
	grep '^#' "$W/tc-check.txt"
	ok "timeline (trace-cmd): valid, nested, $((6 * M)) slices on queue $QB" \
		test "$(grep -c -x -E '(structure|nesting|tracks) ok' "$W/tc-check.txt")" = 3
else
	skip "frac-stages.py on trace-cmd report" "trace-cmd not installed"
	skip "timeline (trace-cmd)" "trace-cmd not installed"
fi

# 15-19: the hot-path profile, written where a user reads it from the host: the
# rig's results share (9p, which refuses the shared mmap perf needs: the script
# must say so and still name and annotate frac.ko's functions).
HP=$W/hp
if [ -n "${FRAC_OUT:-}" ] && [ -d "$FRAC_OUT" ]; then
	HP=$FRAC_OUT/perf-scripts/hp
	rm -rf "$HP"
fi
t=$SECONDS
"$P/frac-hotpaths.sh" -o "$HP" -F 2000 -- "$LOAD" -n "$HP_JOBS" -q "$QA" -o nop,copy -d 1 -s 4096 \
	> "$W/hotpaths.txt" 2>&1
rc=$?
took "frac-hotpaths.sh" $t
ok "frac-hotpaths.sh runs (-o $HP)" test $rc = 0 || tail -n 20 "$W/hotpaths.txt" | diag
if [ "$HP" != "$W/hp" ] && [ "$(findmnt -no FSTYPE -T "$FRAC_OUT")" = 9p ]; then
	ok "on 9p: one line says it recorded in a scratch directory, then DIR has perf.data" \
		eval 'grep -q "refuses the shared mmap perf needs" "$W/hotpaths.txt" &&
			test -s "$HP/perf.data"'
else
	skip "on 9p: recorded in a scratch directory" "$HP is not on 9p"
fi
sed -n '/^== frac.ko functions/,$p' "$W/hotpaths.txt" | cut -c1-240 | head -n 45 | diag
annotated() { grep -qE '^== frac_[a-z_]+$' "$HP/annotate.txt" &&
	grep -q 'Disassembly of \[frac\]' "$HP/annotate.txt"; }
ok "annotate output names a frac function with its [frac] disassembly" annotated
ok "folded stacks: non-empty, 'a;b;c count' lines" \
	test -s "$HP/folded.txt" -a "$(grep -cvE '^[^ ].* [0-9]+$' "$HP/folded.txt")" = 0
ok "folded stacks contain frac_ frames" grep -q 'frac_' "$HP/folded.txt"

# 20: nothing the kernel should not have said while perf and trace-cmd ran.
dmesg | tail -n +$((dmesg_start + 1)) | grep -E "$GUEST_DMESG_PATTERN" > "$W/dmesg.txt"
ok "dmesg has no BUG:, WARNING:, Oops or UBSAN" test ! -s "$W/dmesg.txt" || diag "$W/dmesg.txt"

echo "# perf-scripts: $((SECONDS - T0)) s"
exit $((failed != 0))
