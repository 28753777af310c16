#!/usr/bin/env bash
# fractop in the guest against frac.ko and a known workload (TAP). Runs inside scripts/vm with
# fault injection on; not yet part of `make test-guest` (which runs tests/guest/*.sh):
#
#   scripts/vm -q --qemu "$(scripts/build-qemu.sh --print-path)" --prop fault-injection=on \
#       -- scripts/tap-run /run/frac-out tools/fractop/tests/guest.sh
#
# FRAC_KO=path picks another frac.ko (default kernel/frac.ko). Checked: fractop -J's counters
# against the workload's count (bpf/fracload), its process row, device and process jobs/s,
# the debugfs queues' sum against sysfs, the MSI-X vectors, a hang on queue 1 (a timeout and
# a reset on that queue only), an unprivileged run, the screen under tmux (rows, keys,
# resize, q), and the device going away under a running fractop.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../../../tests/guest/lib/frac-guest.bash"

F=$GUEST_REPO/tools/fractop/fractop
LOAD=$GUEST_REPO/bpf/fracload
T=$(mktemp -d)
TM="tmux -S $T/tmux.sock"
trap '$TM kill-server 2>/dev/null; rm -rf "$T"' EXIT

guest_begin
finish() { guest_diag "$*"; guest_dmesg_check; guest_end; exit; }
py() { # py ARGS... <<'EOF' script EOF: ok if the script does not raise; its traceback as diagnostics
	python3 - "$@" 2>&1 | sed 's/^/#   /'
	return "${PIPESTATUS[0]}"
}

guest_have_device || { guest_result SKIP "fractop in the guest" "no FRAC-1"; guest_end; exit; }
[ -x "$F" ] && [ -x "$LOAD" ] || finish "build tools/fractop and bpf/ first"
guest_ok "frac.ko loads (job_timeout_ms=1000)" guest_load_frac job_timeout_ms=1000 ||
	finish "the driver did not load"
SYS=$(readlink -f /sys/class/accel/accel0/device)/frac
DBG=/sys/kernel/debug/accel/$(guest_bdf)
nq=$(cat "$SYS/num_queues")

"$F" -J -n 1 -d 0.3 > "$T/idle.jsonl"
guest_ok "fractop -J -n 1: a complete line, frac counters, hwmon, $nq queues" \
	py "$T/idle.jsonl" "$nq" <<'EOF'
import json, sys
o = json.loads(open(sys.argv[1]).read())
d = o["devices"][0]
assert o["schema_version"] == 1 and d["device"] == "accel0" and d["driver"] == "frac"
assert all(isinstance(v, int) for v in d["counters"].values()), d["counters"]
assert d["counters"]["num_queues"] == int(sys.argv[2])
assert d["temperature_c"] is not None and d["power_w"] is not None
assert all(v is not None for v in d["rates"].values()), d["rates"]
assert len(d["queues"]) == int(sys.argv[2]) and d["queues"][0]["completed"] is not None
assert [v["name"] for v in d["vectors"]][-1] == "frac-err", d["vectors"]
EOF

# ---- a known workload, watched while it runs ----
N=20000
j0=$(cat "$SYS/jobs_completed")
"$LOAD" -n $N -q 0,1,2,3 -o copy,gemm,crc32c -D 8 > "$T/load.txt" 2>&1 &
L=$!
"$F" -J -n 3 -d 1 > "$T/busy.jsonl" 2> "$T/busy.err"
running=0; kill -0 $L 2>/dev/null && running=1
TERM=xterm-256color $TM new-session -d -s g -x 120 -y 40 \
	"LANG=C.UTF-8 $F -d 0.5 2> $T/ui.err; echo \$? > $T/ui.rc"
sleep 3
$TM capture-pane -t g -p > "$T/screen1.txt"
$TM send-keys -t g Right s
sleep 1
$TM capture-pane -t g -p > "$T/screen2.txt"
$TM resize-window -t g -x 40 -y 10
sleep 1
$TM capture-pane -t g -p > "$T/screen3.txt"
$TM send-keys -t g h
sleep 0.5
$TM capture-pane -t g -p > "$T/screen4.txt"
$TM send-keys -t g x q
for _ in $(seq 50); do [ -e "$T/ui.rc" ] && break; sleep 0.1; done
wait $L; lrc=$?
guest_ok "fracload $N jobs: exit 0" test $lrc = 0
if [ $running = 0 ]; then
	guest_result SKIP "fractop -J saw fracload's process row" "the workload ended before the sample"
	guest_result SKIP "device jobs/s = process jobs/s (10%)" "the workload ended before the sample"
else
	guest_ok "fractop -J saw fracload's process row, 4 queues, 1 client" \
		py "$T/busy.jsonl" $L <<'EOF'
import json, sys
rows = [p for l in open(sys.argv[1]) for p in json.loads(l)["devices"][0]["processes"]
        if p["pid"] == int(sys.argv[2])]
assert rows, "no row for the workload"
p = rows[-1]
assert p["comm"] == "fracload" and p["clients"] == 1 and p["jobs_completed"] > 0, p
assert [e["name"] for e in p["engines"]] == ["queue0", "queue1", "queue2", "queue3"], p
assert p["memory_bytes"] > 0, p
EOF
	guest_ok "device jobs/s = process jobs/s (10%) where fracload is the only client" \
		py "$T/busy.jsonl" $L <<'EOF'
import json, sys
n = 0
for l in open(sys.argv[1]):
    d = json.loads(l)["devices"][0]
    ps = [p for p in d["processes"] if p["pid"] == int(sys.argv[2])]
    if d["clients"] != 1 or not ps or ps[0]["jobs_per_s"] is None:
        continue
    dev, proc = d["rates"]["jobs_per_s"], ps[0]["jobs_per_s"]
    assert dev > 100 and abs(dev - proc) <= 0.1 * dev, (dev, proc)
    n += 1
assert n, "no line with a rate for the workload"
EOF
fi
guest_ok "fractop -J: nothing on stderr" test ! -s "$T/busy.err"

"$F" -J -n 1 -d 0.3 > "$T/after.jsonl"
guest_ok "after the workload: jobs_completed grew by $N, debugfs queues sum to it, vectors counted" \
	py "$T/after.jsonl" "$j0" $N <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1]).read())["devices"][0]
c = d["counters"]
assert c["jobs_completed"] - int(sys.argv[2]) == int(sys.argv[3]), c
assert sum(q["completed"] for q in d["queues"]) == c["jobs_completed"], d["queues"]
assert all(q["jobs_in_ring"] == 0 for q in d["queues"]), d["queues"]
assert d["clients"] == 0 and d["processes"] == []
assert all(v["count"] is not None for v in d["vectors"]) and \
    sum(v["count"] for v in d["vectors"]) > 0, d["vectors"]
EOF

guest_ok "the screen: the device header and the fracload row" \
	bash -c "grep -q 'accel0 frac' '$T/screen1.txt' && grep -q ' fracload ' '$T/screen1.txt'"
guest_ok "the screen: Right selects queue 1, s sorts by the selected engine" \
	bash -c "grep -q '^ queue 1:' '$T/screen2.txt' && grep -q 'sort: selected engine' '$T/screen2.txt'"
guest_ok "the screen at 40x10 still draws its first line" grep -q "^fractop" "$T/screen3.txt"
guest_ok "the screen: h shows the help" grep -q "fractop keys" "$T/screen4.txt"
guest_ok "the screen: q exits 0, nothing on stderr" \
	bash -c "[ \"\$(cat '$T/ui.rc' 2>/dev/null)\" = 0 ] && [ ! -s '$T/ui.err' ]"

# ---- a hang on queue 1: one timeout and one reset, on that queue only ----
"$F" -J -n 1 -d 0.2 > "$T/before-hang.jsonl"
if echo "hang 1" > "$DBG/inject_fault" 2>/dev/null; then
	"$LOAD" -n 4 -q 1 -o copy -D 1 > "$T/hang.txt" 2>&1
	"$F" -J -n 1 -d 0.3 > "$T/after-hang.jsonl"
	guest_ok "a hang on queue 1: counted on queue 1 only, and in the sysfs sums" \
		py "$T/after-hang.jsonl" "$T/before-hang.jsonl" <<'EOF'
import json, sys
now = json.loads(open(sys.argv[1]).read())["devices"][0]
was = json.loads(open(sys.argv[2]).read())["devices"][0]
dq = [{k: n[k] - w[k] for k in ("timeouts", "resets", "failed")}
      for n, w in zip(now["queues"], was["queues"])]
assert dq[1] == {"timeouts": 1, "resets": 1, "failed": 1}, dq
assert all(x == {"timeouts": 0, "resets": 0, "failed": 0} for i, x in enumerate(dq) if i != 1), dq
for k in ("job_timeouts", "queue_resets", "jobs_failed"):
    assert now["counters"][k] - was["counters"][k] == 1, k
EOF
else
	guest_result SKIP "a hang on queue 1" "no fault injection (--prop fault-injection=on)"
fi

# ---- unprivileged: sysfs and hwmon yes, other processes' fds and debugfs no ----
"$LOAD" -n 400 -q 0 -D 1 > /dev/null 2>&1 &
L=$!
sleep 0.5
setpriv --reuid=65534 --regid=65534 --clear-groups "$F" -J -n 1 -d 0.3 > "$T/nobody.jsonl" \
	2> "$T/nobody.err"; rc=$?
wait $L
guest_ok "as uid 65534: exit 0, counters and hwmon shown, queue figures null, denied counted" \
	py "$T/nobody.jsonl" "$rc" "$nq" <<'EOF'
import json, sys
assert sys.argv[2] == "0"
o = json.loads(open(sys.argv[1]).read())
d = o["devices"][0]
assert o["procs_denied"] > 0 and o["procs_denied"] <= o["procs_seen"], o
assert d["counters"]["jobs_completed"] is not None and d["temperature_c"] is not None
assert len(d["queues"]) == int(sys.argv[3]) and all(q["completed"] is None for q in d["queues"])
assert d["processes"] == [], d["processes"]
EOF

# ---- the device goes away under a running fractop ----
"$F" -J -n 4 -d 0.5 > "$T/gone.jsonl" 2> "$T/gone.err" &
J=$!
sleep 1.2
guest_ok "rmmod frac under a running fractop" guest_unload_frac
wait $J; rc=$?
guest_ok "fractop goes on without the device: exit 0, later lines have no device" \
	py "$T/gone.jsonl" "$rc" <<'EOF'
import json, sys
assert sys.argv[2] == "0"
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 4 and lines[0]["devices"] and lines[-1]["devices"] == [], lines
EOF
err=$("$F" -J -n 1 2>&1 >/dev/null); rc=$?
guest_ok "no device: exit 1 with a message ($err)" test $rc = 1 -a -n "$err"

guest_dmesg_check
guest_end
