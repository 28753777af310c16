#!/usr/bin/env bash
# fractop's exporter scraped by a real Prometheus, in the guest (TAP): Debian's prometheus
# (scripts/deps.sh) on loopback scrapes fractop --listen every second while a known workload
# (tools/fracload) runs; Prometheus's HTTP API must then give the workload's count for
# frac_jobs_completed_total, the per-queue counters must add up to it, the job latency
# histogram (frac_job_latency_seconds, the BPF source) must count every job, and
# histogram_quantile() of it must lie where the workload's own median and p99 allow (fracload
# -j's per-job submit/done windows and device times); every expr of the Grafana dashboard
# (dashboards/grafana/fractop.json) must evaluate. Runs through
# tests/guest/fractop-prometheus.sh in make test-guest; by hand:
#
#   scripts/vm -q --qemu "$(scripts/build-qemu.sh --print-path)" --prop fault-injection=on \
#       -- scripts/tap-run /run/frac-out tests/guest/fractop-prometheus.sh
#
# Prometheus's TSDB lives in a temporary directory under /tmp (tmpfs in the guest); its log is
# kept in $FRAC_OUT/fractop-prometheus.log when $FRAC_OUT is set. Waits are bounded polls.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../../../tests/guest/lib/frac-guest.bash"

F=$GUEST_REPO/tools/fractop/fractop
LOAD=$GUEST_REPO/tools/fracload/fracload
DASH=$GUEST_REPO/dashboards/grafana/fractop.json
T=$(mktemp -d)
PROM_PID= FT_PID=
cleanup() {
	[ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
	[ -n "$FT_PID" ] && kill "$FT_PID" 2>/dev/null && wait "$FT_PID" 2>/dev/null
	[ -n "${FRAC_OUT:-}" ] && [ -d "$FRAC_OUT" ] && cp "$T/prom.log" "$FRAC_OUT/fractop-prometheus.log" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

guest_begin
finish() { guest_diag "$*"; guest_dmesg_check; guest_end; exit; }
PROM=http://127.0.0.1:19090
# value EXPR: the single result's value of an instant query (empty if none or more than one);
# non-zero if the query failed or its result is not a vector. Read in bash, not by a python3
# per query: the waits below poll with it, and under TCG each python3 took 2-15 s of the guest's
# CPU, which Prometheus and the workload need. An instant vector's JSON is
# {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},"value":[T,"V"]},...]}}
# and no label value here holds '"value":['.
value() {
	local j r
	j=$(curl -sf -G --data-urlencode "query=$1" "$PROM/api/v1/query") || return
	[[ $j == *'"status":"success"'* && $j == *'"resultType":"vector"'* ]] || return
	r=${j#*'"value":['}
	if [ "$r" = "$j" ] || [[ $r == *'"value":['* ]]; then echo; return 0; fi
	r=${r#*,\"}
	echo "${r%%\"*}"
}
both() { "$1" "$2" "$3" && "$4" "$5" "$6"; }
wait_value() { # wait_value EXPR WANT: the query gives WANT within 60 s (scrapes are 1 s apart)
	local v
	for _ in $(seq 120); do
		v=$(value "$1")
		[ "$v" = "$2" ] && return 0
		sleep 0.5
	done
	guest_diag "$1 = '$v', want $2"
	return 1
}

guest_have_device || { guest_result SKIP "fractop and Prometheus" "no FRAC-1"; guest_end; exit; }
command -v prometheus > /dev/null ||
	{ guest_result SKIP "fractop and Prometheus" "no prometheus (scripts/deps.sh)"; guest_end; exit; }
[ -x "$F" ] && [ -x "$LOAD" ] || finish "build tools/fractop and tools/fracload first"
guest_ok "frac.ko loads" guest_load_frac || finish "the driver did not load"
SYS=$(readlink -f /sys/class/accel/accel0/device)/frac
guest_ok "lo is up" ip link set lo up

"$F" --listen 127.0.0.1:0 -d 0.5 2> "$T/fractop.err" &
FT_PID=$!
for _ in $(seq 100); do grep -qs '^fractop: serving ' "$T/fractop.err" && break; sleep 0.1; done
url=$(sed -n 's/^fractop: serving //p' "$T/fractop.err")
target=${url#http://}; target=${target%/metrics}
guest_ok "fractop --listen serves ($url)" test -n "$target"
cat > "$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: fractop
    static_configs:
      - targets: ['$target']
EOF
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address=127.0.0.1:19090 > "$T/prom.log" 2>&1 &
PROM_PID=$!
ready() { for _ in $(seq 240); do curl -sf "$PROM/-/ready" > /dev/null && return 0; sleep 0.5; done; return 1; }
guest_ok "prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') is ready" ready ||
	finish "$(tail -n 5 "$T/prom.log")"
guest_ok "Prometheus scrapes fractop: up{job=\"fractop\"} = 1" wait_value 'up{job="fractop"}' 1

j0=$(cat "$SYS/jobs_completed")
guest_ok "Prometheus has the device's count before the workload ($j0)" \
	wait_value 'frac_jobs_completed_total{device="accel0"}' "$j0"
# The workload runs until Prometheus has scraped its client's series (a fixed count of 3000
# jobs was over before any scrape saw the client in a loaded CI run), then stops on SIGTERM
# and says how many jobs it ran: M, the ground truth of everything below.
"$LOAD" -n 1000000 -q 0,1,2,3 -o copy,gemm -d 8 -j > "$T/load.json" 2> "$T/load.err" &
L=$!
seen_client() {
	local v
	for _ in $(seq 240); do
		v=$(value 'max_over_time(frac_client_jobs_completed_total{comm="fracload"}[5m])')
		[ -n "$v" ] && [ "${v%%.*}" -gt 0 ] 2>/dev/null && return 0
		kill -0 $L 2> /dev/null || return 1
		sleep 0.5
	done
	return 1
}
seen_client; seen=$?
kill -TERM $L
wait $L; lrc=$?
M=$(python3 -c 'import json, sys; o = json.load(open(sys.argv[1])); assert o["stopped"]; print(o["jobs"])' "$T/load.json" 2>/dev/null)
guest_ok "fracload ran until Prometheus saw its client, then SIGTERM: ${M:-no} jobs, exit $lrc" \
	test $seen = 0 -a $lrc = 0 -a -n "$M"
M=${M:-0}
j1=$(cat "$SYS/jobs_completed")
guest_ok "sysfs: jobs_completed grew by the workload's $M" test $((j1 - j0)) = $M
guest_ok "Prometheus: frac_jobs_completed_total = $j0 + $M" \
	wait_value 'frac_jobs_completed_total{device="accel0"}' "$j1"
guest_ok "Prometheus: the queues' frac_queue_jobs_completed_total sum to it" \
	wait_value 'sum(frac_queue_jobs_completed_total{device="accel0"})' "$j1"
fl=$(cat "$SYS/jobs_failed"); to=$(cat "$SYS/job_timeouts")
guest_ok "Prometheus: frac_jobs_failed_total = $fl and frac_job_timeouts_total = $to, as sysfs" \
	both wait_value 'frac_jobs_failed_total{device="accel0"}' "$fl" \
		wait_value 'frac_job_timeouts_total{device="accel0"}' "$to"
v=$(value 'max_over_time(frac_client_jobs_completed_total{comm="fracload"}[5m])')
guest_ok "Prometheus saw fracload's client: at most $M jobs, more than 0 ($v)" \
	python3 -c 'import sys; v = sys.argv[1]; assert v and 0 < float(v) <= int(sys.argv[2])' "$v" $M

# Job latency: fractop attached before the workload and nothing else ran, so the histogram
# holds exactly the workload's jobs; its quantiles are checked against the workload's own
# per-job bounds: each job's measured total lies in [its device time, its submit-to-done
# window], so the true p-quantile lies in [that of the device times, that of the windows], and
# histogram_quantile() interpolates inside the log2 bucket that holds it: between the lower
# bound of the device times' p-quantile's bucket and the upper bound of the windows'.
guest_ok "Prometheus: frac_job_latency_seconds_count, total stage, summed over queues = $M" \
	wait_value 'sum(frac_job_latency_seconds_count{device="accel0",stage="total"})' "$M"
guest_ok "Prometheus: every stage counted $M times" \
	wait_value 'count(sum by (stage) (frac_job_latency_seconds_count{device="accel0"}) == '$M')' 6
for p in 0.5 0.99; do
	v=$(value "histogram_quantile($p, sum by (le) (frac_job_latency_seconds_bucket{device=\"accel0\",stage=\"total\"}))")
	guest_ok "Prometheus: histogram_quantile($p) of the total ($v s) inside the workload's bounds" \
		python3 - "$T/load.json" "$p" "$v" <<'EOF'
import json, math, sys
jobs = json.load(open(sys.argv[1]))["job_list"]
p, q = float(sys.argv[2]), float(sys.argv[3]) * 1e9
def rank(xs):  # nearest rank, as Prometheus picks its bucket (rank p * count)
    xs = sorted(xs)
    return xs[max(0, math.ceil(p * len(xs)) - 1)]
dev = rank(j["dev_ns"] for j in jobs)
span = rank(j["done_ns"] - j["submit_ns"] for j in jobs)
lo = 2 ** int(math.log2(dev)) - 1          # the bucket below dev's: its le
hi = 2 ** (int(math.log2(span)) + 1) - 1   # span's bucket's le
print(f"# p{p * 100:g}: Prometheus {q:.0f} ns; workload: device {dev} ns, window {span} ns; "
      f"allowed [{lo}, {hi}] ns")
assert all(j["status"] == 0 for j in jobs) and len(jobs) > 0
assert lo * (1 - 1e-9) <= q <= hi * (1 + 1e-9), (q, lo, hi)
EOF
done

# The dashboard: every metric it names is one Prometheus ingested from fractop during the run
# (the per-client ones only existed while fracload ran), and every expr evaluates.
curl -sf "$PROM/api/v1/label/__name__/values" |
	python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)["data"]))' > "$T/ingested.names"
guest_ok "the dashboard's metrics are all among those Prometheus ingested ($(wc -l < "$T/ingested.names"))" \
	"$GUEST_REPO/tools/fractop/tests/dashcheck.py" "$DASH" "$T/ingested.names" "$T/rules.yml"
guest_ok "every expr of the dashboard evaluates in Prometheus, and most give a result" \
	python3 - "$T/rules.yml" "$PROM" <<'EOF'
import json, sys, urllib.parse, urllib.request
exprs = [json.loads(l.split("expr: ", 1)[1]) for l in open(sys.argv[1]) if "expr: " in l]
empty = []
for e in exprs:
    u = sys.argv[2] + "/api/v1/query?" + urllib.parse.urlencode({"query": e})
    r = json.load(urllib.request.urlopen(u, timeout=30))
    assert r["status"] == "success", (e, r)
    if not r["data"]["result"]:
        empty.append(e)
print(f"# {len(exprs)} exprs, {len(empty)} without a result now: {empty}")
assert len(empty) <= len(exprs) // 2, empty
EOF

kill -TERM "$FT_PID"; wait "$FT_PID"; rc=$?; FT_PID=
guest_ok "fractop --listen: SIGTERM exits 0" test $rc = 0
kill -TERM "$PROM_PID"; wait "$PROM_PID"; PROM_PID=
guest_diag "$SECONDS s in the guest"
guest_dmesg_check
guest_end
