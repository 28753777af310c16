#!/usr/bin/env python3
"""Check the outputs of the frac BPF tools against a known workload.

Usage: check.py main DIR      the BTF run: every tool, bpftrace and trace-cmd
       check.py fallback DIR  the raw_tp/kprobe.multi run: every tool, fraclat -O
       check.py flood DIR N   fraclat and fracsnoop over a flood of at least N jobs
                              in flight (load.json), then jobs that fail
                              (load2.json), then jobs without a job id (load3.json):
                              every job measured, none lost
       check.py irqflood DIR  fraclat and fracsnoop over a flood of nops on one
                              queue (load.json) that no fault ends: every job
                              measured with its interrupt, none clamped
       check.py probes DIR    DIR/<tool>.strace (strace -e trace=bpf,close of each
                              tool's start): every BTF target a program is loaded
                              against was probed first, its probe attached and
                              detached

DIR holds load.json (fracload -j, with each job's own ground truth), lat.json,
snoop.json, irq.json, dma.json (the tools' -j output) and, for main, trace.txt
(trace-cmd report -t, recorded alongside). Latencies are checked against the
workload's own windows, never against another tracer's figures (which differ
by a preemption between two probes of one event: that made the bpftrace
comparison flaky). Prints one TAP line per check without its number
("ok - ..." / "not ok - ...") and "# " diagnostics; the caller numbers them.
The number of lines does not depend on the results.
"""
import json
import os
import re
import sys

STAGES = ["submit_run", "run_start", "exec", "end_irq", "irq_signal"]
SCHEMA = 2
EIO = -5
README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bpf/README.md")


def load_schema(path=README):
    """bpf/README.md's schema block (the first ``` block under "## JSON"): {type: [(key,
    kind, subtype)]}, kind "" (a value), "obj", "list" or "map"."""
    with open(path) as f:
        text = f.read()
    block = text[text.index("\n## JSON\n"):].split("```\n", 2)[1]
    types = {}
    for line in block.splitlines():
        name, *keys = line.split()
        fields = []
        for k in keys:
            key, _, t = k.partition(":")
            if not t:
                fields.append((key, "", None))
            elif t == "map":
                fields.append((key, "map", None))
            elif t.startswith("["):
                fields.append((key, "list", t.strip("[]")))
            else:
                fields.append((key, "obj", t))
        types[name] = fields
    return types


def schema_errors(types, tname, o, path):
    """Where @o is not a @tname: keys missing, extra or out of order; a null without
    a non-null *_reason beside it."""
    if not isinstance(o, dict):
        return [f"{path}: not an object: {o!r}"]
    want = [k for k, _, _ in types[tname]]
    if list(o) != want:
        return [f"{path} ({tname}): keys {list(o)}, want {want}"]
    errs = []
    if any(v is None for k, v in o.items() if not k.endswith("_reason")) and \
            not any(v is not None for k, v in o.items() if k.endswith("_reason")):
        errs.append(f"{path} ({tname}): a null without a reason: {o}")
    for key, kind, sub in types[tname]:
        v = o[key]
        if kind == "obj" and v is not None:	# a null object: its reason is checked above
            errs += schema_errors(types, sub, v, f"{path}.{key}")
        elif kind == "list":
            if not isinstance(v, list):
                errs.append(f"{path}.{key}: not a list")
            else:
                for i, e in enumerate(v):
                    errs += schema_errors(types, sub, e, f"{path}.{key}[{i}]")
        elif kind == "map" and not (isinstance(v, dict) or v is None):
            errs.append(f"{path}.{key}: not an object or null")
    return errs


def check_schema(d, files):
    """Every object in DIR's @files ({file: root type}; fracsnoop's by "type")."""
    types, errs, n = load_schema(), [], 0
    for f, root in files.items():
        for i, o in enumerate(load_json_lines(f"{d}/{f}")):
            t = root if root != "fracsnoop" else f"fracsnoop_{o.get('type')}"
            if t not in types:
                errs.append(f"{f}:{i + 1}: no type {t} in the schema")
                continue
            errs += schema_errors(types, t, o, f"{f}:{i + 1}")
            n += 1
    return n > 0 and not errs, f"{n} objects in {', '.join(files)}, {len(errs)} not as " \
        "the schema", *errs[:5]


def load_json_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class Checker:
    def __init__(self, d):
        self.d = d
        self.cache = {}

    def get(self, name):
        if name not in self.cache:
            self.cache[name] = load_json_lines(f"{self.d}/{name}")
        return self.cache[name]

    def load(self, name="load.json"):
        return self.get(name)[0]

    def snoop(self):
        """fracsnoop's job events (its other objects are "type": "stats")."""
        return [e for e in self.get("snoop.json") if e["type"] == "job"]

    def lost(self, name):
        """The "lost" counters of a tool's objects, summed (fraclat: one object per
        interval; fracsnoop: its "stats" objects)."""
        acc = {}
        for obj in self.get(name):
            if "lost" in obj:
                for k, v in obj["lost"].items():
                    acc[k] = acc.get(k, 0) + v
        return acc

    def ended(self):
        """fraclat's "ended" counters (measured jobs by status), summed."""
        acc = {}
        for obj in self.get("lat.json"):
            for k, v in obj["ended"].items():
                acc[k] = acc.get(k, 0) + v
        return acc

    def lat_total(self):
        """fraclat's groups summed over its intervals: {stage: [count, sum, min, max]}."""
        acc = {}
        for obj in self.get("lat.json"):
            for g in obj["groups"]:
                for st, h in g["stages"].items():
                    a = acc.setdefault(st, [0, 0, None, None])
                    a[0] += h["count"]
                    a[1] += h["sum_ns"]
                    if h["count"]:
                        a[2] = h["min_ns"] if a[2] is None else min(a[2], h["min_ns"])
                        a[3] = h["max_ns"] if a[3] is None else max(a[3], h["max_ns"])
        return acc


def run(checks):
    for desc, fn in checks:
        try:
            res = fn()
            diag = []
            if isinstance(res, tuple):
                res, diag = res[0], res[1:]
        except Exception as e:  # a missing or malformed file fails the check, not the run
            res, diag = False, [f"{type(e).__name__}: {e}"]
        print(f"{'ok' if res else 'not ok'} - {desc}")
        for line in diag:
            for l in str(line).splitlines():
                print(f"# {l}")


def common_checks(c, attach_lat, attach_irq):
    """Checks of both runs."""
    def parses():
        n = {f: len(c.get(f)) for f in ("lat.json", "snoop.json", "irq.json", "dma.json")}
        return all(n.values()), f"objects per file: {n}"

    def attach():
        got = (c.get("lat.json")[0]["attach"], c.get("irq.json")[0]["attach"])
        return got == (attach_lat, attach_irq), f"attach: {got}"

    def lat_counts():
        n = c.load()["jobs"]
        acc = c.lat_total()
        counts = {st: acc.get(st, [0])[0] for st in STAGES + ["total"]}
        return all(v == n for v in counts.values()), f"jobs {n}, fraclat counts {counts}"

    def lat_sums():
        acc = c.lat_total()
        parts = sum(acc[st][1] for st in STAGES)
        return parts == acc["total"][1], f"stage sums {parts} ns, total {acc['total'][1]} ns"

    def snoop_jobs():
        ld, ev = c.load(), c.snoop()
        keys = {(e["dev"], e["queue"], e["ctx"], e["job"]) for e in ev}
        queues, ops = {}, {}
        for e in ev:
            queues[str(e["queue"])] = queues.get(str(e["queue"]), 0) + 1
            ops[e["op"]] = ops.get(e["op"], 0) + 1
        ok = (len(ev) == ld["jobs"] and len(keys) == len(ev) and queues == ld["queues"] and
              ops == ld["ops"] and all(e["pid"] == ld["pid"] and e["status"] == 0 for e in ev))
        return ok, f"events {len(ev)} (distinct {len(keys)}), jobs {ld['jobs']}", \
            f"queues {queues} vs {ld['queues']}", f"ops {ops} vs {ld['ops']}"

    def snoop_sums():
        bad = [e for e in c.snoop()
               if sum(e[st + "_ns"] for st in STAGES) != e["total_ns"]]
        return bool(c.snoop()) and not bad, *[f"does not add up: {e}" for e in bad[:3]]

    def snoop_bytes():
        ld = c.load()
        got = {}
        for e in c.snoop():
            got[e["op"]] = got.get(e["op"], 0) + e["bytes"]
        return got == ld["job_bytes"], f"bytes per op {got} vs {ld['job_bytes']}"

    def irq_counts():
        ld = c.load()
        sig, per_q, irqs, handled = 0, {}, 0, 0
        for obj in c.get("irq.json"):
            for s in obj["irq_signal"]:
                sig += s["latency"]["count"]
                per_q[str(s["queue"])] = per_q.get(str(s["queue"]), 0) + s["latency"]["count"]
            irqs += sum(v["count"] for v in obj["vectors"])
            handled += sum(h["time"]["count"] for h in obj["handlers"])
        ok = sig == ld["jobs"] and per_q == ld["queues"] and irqs == handled and irqs > 0
        return ok, f"fences signalled in handlers {sig} (per queue {per_q}) vs jobs " \
            f"{ld['jobs']} ({ld['queues']})", f"frac_irq events {irqs}, handler runs {handled}"

    def dma_counts():
        # Per direction: fracload maps what the device reads TO_DEVICE and what it
        # writes FROM_DEVICE, so both directions must show, each as the workload made it.
        ld = c.load()
        got = {}
        for obj in c.get("dma.json"):
            for s in obj["dma"]:
                a = got.setdefault(s["op"], {}).setdefault(s["dir"], [0, 0])
                a[0] += s["count"]
                a[1] += s["bytes"]
        want = {d: [n, ld["host_bo_bytes_by_dir"][d]]
                for d, n in ld["host_bos_by_dir"].items() if n}
        return got.get("map") == want and got.get("unmap") == want and \
            set(want) == {"to_device", "from_device"}, \
            f"map/unmap per direction [count, bytes]: {got}, fracload: {want}"

    def schema():
        bad = {f: sum(1 for o in c.get(f) if o.get("schema_version") != SCHEMA)
               for f in ("lat.json", "snoop.json", "irq.json", "dma.json")}
        return not any(bad.values()), f"objects without schema_version {SCHEMA}: {bad}"

    def nothing_lost():
        got = {f: c.lost(f) for f in ("lat.json", "snoop.json")}
        finals = [o for o in c.get("snoop.json") if o["type"] == "stats" and o["final"]]
        ok = all(v.get("total", 0) == 0 for v in got.values()) and len(finals) == 1
        return ok, f"lost: {got}", f"fracsnoop final stats objects: {len(finals)}"

    def snoop_run_totals():
        """fracsnoop's final object: the run's totals, not its last second's."""
        objs = c.get("snoop.json")
        jobs = sum(1 for o in objs if o["type"] == "job")
        stats = [o for o in objs if o["type"] == "stats"]
        if not stats or not stats[-1]["final"] or stats[-1]["run"] is None:
            return False, "no final stats object with the run's totals"
        run = stats[-1]["run"]
        ended = sum(run["ended"].values())
        lost = {k: sum(o["lost"][k] for o in stats) for k in run["lost"]}
        return ended == jobs and run["lost"] == lost and \
            all(o["run"] is None for o in stats[:-1]), \
            f"run: ended {ended}, lost {run['lost']}; job lines {jobs}, lost summed over the " \
            f"{len(stats)} stats objects {lost}"

    def schema_all():
        return check_schema(c.d, {"lat.json": "fraclat", "snoop.json": "fracsnoop",
                                  "irq.json": "fracirq", "dma.json": "fracdma",
                                  "load.json": "fracload"})

    return [
        ("JSON output of every tool parses", parses),
        ("every JSON object as bpf/README.md's schema, each null with a reason", schema_all),
        (f"every JSON object has schema_version {SCHEMA}", schema),
        ("fraclat and fracsnoop report no job lost, fracsnoop its final counters", nothing_lost),
        ("fracsnoop's final object: the run's jobs ended = its job lines, lost = the sum of "
         "its reports", snoop_run_totals),
        (f"attach types {attach_lat} / {attach_irq}", attach),
        ("fraclat counts every job in every stage", lat_counts),
        ("fraclat stage sums add up to the total", lat_sums),
        ("fracsnoop: one event per job, queues, ops and pid as submitted", snoop_jobs),
        ("fracsnoop: the stages of every job add up to its total", snoop_sums),
        ("fracsnoop: bytes per op as submitted", snoop_bytes),
        ("fracirq: a signal latency per job and queue, a handler run per interrupt", irq_counts),
        ("fracdma: map and unmap counts and bytes per direction as the host BOs", dma_counts),
    ]


def truth_checks(c):
    """The tools against the workload's own ground truth (fracload -j's job
    list): each job's submit -> fence-signalled interval lies inside the window
    from just before its SUBMIT to just after its WAIT returned, and holds the
    device time of its completion record. Bounds, not tolerances: they hold
    whatever the host's noise, and a tool that mis-times (units, a wrong event,
    a swapped stamp) falls outside them."""
    def windows():
        return {(j["queue"], j["job"]): j for j in c.load()["job_list"]}

    def snoop_in_windows():
        w, bad = windows(), []
        for e in c.snoop():
            j = w.get((e["queue"], e["job"]))
            if j is None:
                bad.append(f"job q{e['queue']}/{e['job']}: not the workload's")
            elif not j["dev_ns"] <= e["total_ns"] <= j["done_ns"] - j["submit_ns"]:
                bad.append(f"job q{e['queue']}/{e['job']}: total {e['total_ns']} ns outside "
                           f"[device {j['dev_ns']}, window {j['done_ns'] - j['submit_ns']}]")
        return (len(w) == c.load()["jobs"] and not bad and
                len(c.snoop()) == len(w)), f"{len(w)} jobs, {len(bad)} outside", \
            *bad[:5]

    def lat_in_windows():
        jobs = list(windows().values())
        spans = [j["done_ns"] - j["submit_ns"] for j in jobs]
        dev = [j["dev_ns"] for j in jobs]
        n, tsum, tmin, tmax = c.lat_total()["total"]
        ok = (n == len(jobs) and sum(dev) <= tsum <= sum(spans) and min(dev) <= tmin and
              tmax <= max(spans) and tmin <= tmax)
        return ok, f"fraclat total: count {n}, sum {tsum}, min {tmin}, max {tmax} ns", \
            f"workload: {len(jobs)} jobs, windows sum {sum(spans)} max {max(spans)} ns, " \
            f"device sum {sum(dev)} min {min(dev)} ns"

    def snoop_exec_is_device_time():
        # WAIT returned each job's device times (t_end - t_start); the driver converts both
        # with one offset, so the tool's exec is their difference to the nanosecond, unless
        # the tool clamped the job (flagged, and then not compared).
        w, ev = windows(), c.snoop()
        cmp = [(e, w.get((e["queue"], e["job"]))) for e in ev if not e["clamped"]]
        bad = [f"job q{e['queue']}/{e['job']}: exec {e['exec_ns']} ns, device "
               f"{j and j['dev_ns']} ns" for e, j in cmp if not j or e["exec_ns"] != j["dev_ns"]]
        nonzero = sum(1 for _, j in cmp if j and j["dev_ns"])
        return bool(nonzero) and not bad, \
            f"{len(cmp)} jobs compared ({nonzero} with device time), " \
            f"{len(ev) - len(cmp)} clamped, {len(bad)} with another exec", *bad[:5]

    return [
        ("fracsnoop: every job's total inside the workload's window, over its device time",
         snoop_in_windows),
        ("fracsnoop: each job's exec is its device time as WAIT returned it",
         snoop_exec_is_device_time),
        ("fraclat: total's count, sum, min and max inside the workload's windows",
         lat_in_windows),
    ]


def main_checks(c):
    def trace_cmd_count():
        n, pat = 0, re.compile(r"frac_fence_signal:\s+dev=\d+ queue=\d+ ctx=\d+ job=\d+")
        with open(f"{c.d}/trace.txt") as f:
            n = sum(1 for line in f if pat.search(line))
        return n == c.load()["jobs"], f"trace-cmd saw {n} fence signals, jobs {c.load()['jobs']}"

    return common_checks(c, "tp_btf", "tp_btf+fentry") + truth_checks(c) + [
        ("trace-cmd, recording alongside, saw every job", trace_cmd_count),
    ]


def fallback_checks(c):
    """The fallback run's fraclat is grouped by op (-O)."""
    def per_op():
        got = {}
        for obj in c.get("lat.json"):
            for g in obj["groups"]:
                got[g["op"]] = got.get(g["op"], 0) + g["stages"]["total"]["count"]
        return got == c.load()["ops"], f"fraclat -O totals {got} vs {c.load()['ops']}"

    return [("fraclat -O: a group per op, counts as submitted", per_op)]


def flood_checks(c, least):
    """A flood of jobs in flight (before commit dc3c894 the tools matched jobs in a
    table of jobs in flight, and a full table lost jobs): with one program per job on
    frac_job_done there is no such table, so every job the workloads submitted is
    measured, none lost, whatever the backlog (256 here: the old tools' default table held that many, and lost the 5
    jobs without an id below, which are measured now). Then the failed jobs: counted
    by status, out of fraclat's histograms."""
    loads = ("load.json", "load2.json", "load3.json")

    def jobs():
        return sum(c.load(n)["jobs"] for n in loads)

    def statuses():
        got = {}
        for name in loads:
            for j in c.load(name)["job_list"]:
                if j["status"] is not None:
                    got[j["status"]] = got.get(j["status"], 0) + 1
        return got

    def flooded():
        ld = c.load()
        return ld["inflight_after_submit"] >= least, \
            f"{ld['inflight_after_submit']} of {ld['jobs']} jobs in flight after the last " \
            f"SUBMIT, at least {least} wanted"

    def lat_exact():
        lost, ended = c.lost("lat.json"), c.ended()
        n = sum(ended.values())
        return n == jobs() and lost.get("total") == 0, \
            f"fraclat: ended {ended} = {n}, lost {lost.get('total')}, " \
            f"the workloads submitted {jobs()}", f"lost: {lost}"

    def lat_hist_is_ok_jobs():
        acc, ended = c.lat_total(), c.ended()
        n = acc.get("total", [0])[0]
        groups = [g["status"] for o in c.get("lat.json") for g in o["groups"]]
        return n == ended.get("ok") and set(groups) <= {"ok"}, \
            f"histogram count {n}, ended ok {ended.get('ok')}, group statuses {set(groups)}"

    def lat_failed_by_status():
        ended, st = c.ended(), statuses()
        return ended.get("eio") == st.get(EIO, 0) and st.get(EIO, 0) == 3, \
            f"fraclat eio {ended.get('eio')}, workload statuses {st}"

    def snoop_exact():
        ev, lost = c.snoop(), c.lost("snoop.json")
        keys = {(e["dev"], e["queue"], e["seqno"]) for e in ev}
        return len(ev) == jobs() and len(keys) == len(ev) and lost.get("total") == 0, \
            f"fracsnoop: {len(ev)} events ({len(keys)} distinct by queue and seqno), " \
            f"lost {lost.get('total')}, the workloads submitted {jobs()}", f"lost: {lost}"

    def snoop_statuses():
        want = {(j["queue"], j["job"]): j["status"] for j in c.load("load2.json")["job_list"]}
        got = {(e["queue"], e["job"]): e["status"] for e in c.snoop() if e["queue"] == 1}
        return got == want, f"queue 1: fracsnoop {sorted(got.items())}", \
            f"workload {sorted(want.items())}"

    def snoop_workloads():
        w = {(j["queue"], j["job"]) for n in loads for j in c.load(n)["job_list"]}
        bad = [e for e in c.snoop() if (e["queue"], e["job"]) not in w]
        return not bad, *[f"not the workload's: {e}" for e in bad[:3]]

    def noid():
        want = c.load("load3.json")["noid_jobs"]
        got = sum(1 for e in c.snoop() if e["queue"] == 2 and e["job"] == 0)
        counted = (c.lost("lat.json").get("noid"), c.lost("snoop.json").get("noid"))
        return got == want and want == 5 and counted == (0, 0), \
            f"no-job-id jobs: fracsnoop events {got}, the workload {want}; " \
            f"noid counted lost by fraclat, fracsnoop: {counted}"

    def schema_flood():
        return check_schema(c.d, {"lat.json": "fraclat", "snoop.json": "fracsnoop",
                                  **{n: "fracload" for n in loads}})

    return [
        ("flood: every JSON object as bpf/README.md's schema, each null with a reason",
         schema_flood),
        (f"flood: at least {least} jobs in flight at once (the workload's count)", flooded),
        ("fracsnoop measures every job without a job id, none counted lost (noid 0)", noid),
        ("fraclat: every job submitted is measured, none lost", lat_exact),
        ("fraclat: the histograms hold the ok jobs only", lat_hist_is_ok_jobs),
        ("fraclat: the failed jobs counted by status as the workload saw them",
         lat_failed_by_status),
        ("fracsnoop: one event per job submitted, each job once, none lost", snoop_exact),
        ("fracsnoop: every event is a job of the workloads", snoop_workloads),
        ("fracsnoop: the failed jobs' statuses as the workload saw them", snoop_statuses),
    ]


# A job's device times reach the host clock through a sampled offset, which the host's noise
# can skew: in a CI run of 2026-12-05 a skewed sample put both device times of 32 of 4000
# flooded nops before their run (64 adjustments, each job's exec read 0), after 4 of 4000 in
# an earlier run. Since commit d90f1d6 the driver converts each job's times with that offset
# moved into the range the job's own host stamps allow (frac_job_clock_offset()): the device
# cannot start a job before its run nor end it after its interrupt. Only a device time longer than the job's
# run -> interrupt on the host could still be clamped; a nop's is far shorter. So the bound
# is 0, whatever the host's noise, and each job's exec is the device's own.


def irqflood_checks(c):
    """A flood of nops on one queue, every job ended by its queue's interrupt handler
    (the interrupt time is each record's own since commit 43c231b): each is measured
    with its interrupt (no-irq only for a job a timeout scan or a reset ended), no
    device time clamped, each job's stages add up to its total,
    fraclat counts every job of the workload, losing none, and fracsnoop has an event
    for each one its ring buffer did not drop."""
    def sums(key):
        return sum(o[key] for o in c.get("lat.json"))

    def snoop_stats(key):
        return sum(o[key] for o in c.get("snoop.json") if o["type"] == "stats")

    def lat_every_job():
        n, acc, lost = c.load()["jobs"], c.lat_total(), c.lost("lat.json")
        counts = {st: acc.get(st, [0])[0] for st in STAGES + ["total"]}
        return all(v == n for v in counts.values()) and lost.get("total") == 0, \
            f"jobs {n}, fraclat counts {counts}", f"lost: {lost}"

    def lat_irq_exact():
        got = {k: sums(k) for k in ("clamped", "noirq", "nodev", "norun", "nocomplete")}
        return all(v == 0 for v in got.values()), \
            f"fraclat: {got}, over {c.lat_total().get('total', [0])[0]} jobs of " \
            f"{c.load()['jobs']}"

    def lat_sums():
        acc = c.lat_total()
        parts = sum(acc[st][1] for st in STAGES)
        return parts == acc["total"][1], f"stage sums {parts} ns, total {acc['total'][1]} ns"

    def snoop_every_job():
        # A full ring buffer is fracsnoop's documented loss (seen with trace-cmd
        # recording alongside): counted, it keeps the sum exact.
        ld, ev, lost = c.load(), c.snoop(), c.lost("snoop.json")
        keys = {(e["dev"], e["queue"], e["seqno"]) for e in ev}
        ok = (len(ev) + lost.get("total", -1) == ld["jobs"] and len(keys) == len(ev) and
              lost.get("total") == lost.get("rb_dropped"))
        return ok, f"fracsnoop: {len(ev)} events ({len(keys)} distinct) + lost " \
            f"{lost.get('total')}, jobs {ld['jobs']}", f"lost: {lost}"

    def snoop_irq_exact():
        ev = c.snoop()
        flags = {k: sum(1 for e in ev if e[k]) for k in
                 ("clamped", "noirq", "nodev", "norun", "nocomplete")}
        bad = [e for e in ev if sum(e[st + "_ns"] or 0 for st in STAGES) != e["total_ns"]]
        ex = [e for e in ev if e["clamped"] or e["noirq"]][:3]
        return bool(ev) and not any(flags.values()) and not bad, \
            f"fracsnoop: jobs flagged {flags}, counted clamped {snoop_stats('clamped')} " \
            f"noirq {snoop_stats('noirq')}; {len(bad)} not adding up", \
            *[f"flagged: {e}" for e in ex], *[f"does not add up: {e}" for e in bad[:3]]

    def schema_irqflood():
        return check_schema(c.d, {"lat.json": "fraclat", "snoop.json": "fracsnoop",
                                  "load.json": "fracload"})

    return [
        ("interrupt flood: every JSON object as bpf/README.md's schema", schema_irqflood),
        ("interrupt flood: fraclat counts every job in every stage, none lost", lat_every_job),
        ("interrupt flood: fraclat: no-irq 0, clamped 0 (no other adjustment)",
         lat_irq_exact),
        ("interrupt flood: fraclat stage sums add up to the total", lat_sums),
        ("interrupt flood: fracsnoop: one event per job, or counted dropped by its ring buffer",
         snoop_every_job),
        ("interrupt flood: fracsnoop: no job no-irq or clamped, each job's stages add up "
         "to its total", snoop_irq_exact),
    ]


PROBE_TOOLS = ["fraclat", "fracsnoop", "fracdma", "fracirq"]
BPF_RE = re.compile(r"^(?:\d+\s+)?bpf\((BPF_[A-Z_]+), \{(.*)\}, \d+\) = (-?\d+)")
CLOSE_RE = re.compile(r"^(?:\d+\s+)?close\((\d+)\)\s+= 0")


def probe_checks(d):
    """From strace of a tool's start: the tool's probe programs (BPF_PROG_TYPE_TRACING,
    2 instructions, license "GPL") and its own programs (the object's license "Dual
    BSD/GPL"). Every (attach type, BTF id) one of its own TRACING programs is loaded
    against must have had a probe before any of them loaded, that probe attached
    (RAW_TRACEPOINT_OPEN or LINK_CREATE on its fd succeeded) and its link closed."""
    def field(attrs, name):
        m = re.search(rf"\b{name}=([^,}}]+)", attrs)
        return m.group(1) if m else None

    def check(tool):
        probes, progs, probe_fds, links = {}, [], {}, {}
        first_prog = None
        with open(f"{d}/{tool}.strace") as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            m = BPF_RE.match(line)
            if m:
                cmd, attrs, ret = m.group(1), m.group(2), int(m.group(3))
                if cmd == "BPF_PROG_LOAD" and "BPF_PROG_TYPE_TRACING" in attrs:
                    key = (field(attrs, "expected_attach_type"), field(attrs, "attach_btf_id"))
                    if field(attrs, "license") == '"GPL"' and field(attrs, "insn_cnt") == "2":
                        if ret >= 0:
                            probe_fds[ret] = key
                            probes.setdefault(key, "loaded")
                    elif ret >= 0:
                        progs.append(key)
                        if first_prog is None:
                            first_prog = i
                elif cmd in ("BPF_RAW_TRACEPOINT_OPEN", "BPF_LINK_CREATE") and ret >= 0:
                    fd = int(field(attrs, "prog_fd") or -1)
                    if fd in probe_fds and first_prog is None:
                        links[ret] = probe_fds[fd]
                        probes[probe_fds[fd]] = "attached"
                continue
            m = CLOSE_RE.match(line)
            if m:
                fd = int(m.group(1))
                if fd in links:
                    probes[links.pop(fd)] = "attached and detached"
                probe_fds.pop(fd, None)
        bad = [k for k in dict.fromkeys(progs) if probes.get(k) != "attached and detached"]
        return bool(progs) and not bad, \
            f"{tool}: {len(set(progs))} BTF targets loaded against, {len(probes)} probed", \
            *[f"{t} btf id {i}: probe {probes.get((t, i), 'none')}" for t, i in bad]

    return [(f"{t}: every BTF target it loads a program against probed first, attached "
             "and detached", lambda t=t: check(t)) for t in PROBE_TOOLS]


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "probes":
        run(probe_checks(sys.argv[2]))
        return 0
    if not ((len(sys.argv) == 3 and sys.argv[1] in ("main", "fallback", "irqflood")) or
            (len(sys.argv) == 4 and sys.argv[1] == "flood")):
        print(__doc__, file=sys.stderr)
        return 2
    c = Checker(sys.argv[2])
    if sys.argv[1] == "flood":
        run(flood_checks(c, int(sys.argv[3])))
    elif sys.argv[1] == "main":
        run(main_checks(c))
    elif sys.argv[1] == "irqflood":
        run(irqflood_checks(c))
    else:
        run(common_checks(c, "raw_tp", "raw_tp+kprobe.multi") + truth_checks(c) + fallback_checks(c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
