# frac_jobs.py - follow frac jobs through the frac:* trace events
# SPDX-License-Identifier: GPL-2.0
#
# The shared part of the frac perf scripts (frac-stages.py, frac-timeline.py):
# it turns the driver's job events into jobs with their stage times, whether
# the events come from perf script handlers or from `trace-cmd report` text,
# and renders percentiles, CSV rows and Chrome/Perfetto trace JSON.
#
# A job is (dev, ctx, job) as in docs/tracing.md. Its time points are
#
#     submit  frac_job_submit event
#     run     frac_job_run event
#     start   dev_start_ns of frac_job_complete (device time, CLOCK_MONOTONIC)
#     end     dev_end_ns of frac_job_complete
#     irq     irq_ns of frac_job_complete: when the interrupt handler found
#             the job's record (CLOCK_MONOTONIC); 0 when no interrupt ended it
#             (timeout scan, reset): then the complete event's own time, and
#             the job counts as "no irq". Events of a frac.ko without irq_ns:
#             the last frac_irq of the job's queue (or of the shared vector,
#             queue -1) on the CPU that logged frac_job_complete, after the
#             job's run (a guess: a busy handler also ends jobs that ran after
#             it began, docs/tracing.md)
#     fence   frac_fence_signal event
#
# and its stages are the differences of consecutive points; total is
# fence - submit. Event times and device times only line up when the events
# were recorded on CLOCK_MONOTONIC (perf record -k mono, trace-cmd record
# -C mono). A raw difference that is negative (device clock offset error, or
# a point taken on another CPU) is clamped: each point is raised to the one
# before it and lowered to the fence, so every stage is >= 0 and the stages
# still add up to the total exactly. Clamped differences are counted per
# stage and reported.
#
# No perf imports here: the module is plain Python 3 and can be tested alone.

import csv
import json
import math
import re

# DRM_FRAC_OP_* of include/uapi/drm/frac_accel.h, as libfrac's frac_op_name() names them;
# test_frac_jobs.py checks this against the header.
OP_NAMES = {0: "nop", 1: "copy", 2: "fill", 3: "crc32c", 4: "gemm", 5: "timestamp"}

# (key, label): the stages in order; point i to point i + 1.
STAGES = (
    ("submit_run", "submit->run"),
    ("run_devstart", "run->device start"),
    ("dev_exec", "device execution"),
    ("devend_irq", "device end->irq"),
    ("irq_fence", "irq->fence"),
)
TOTAL = ("total", "total")
POINTS = ("submit", "run", "dev_start", "dev_end", "irq", "fence")

CSV_FIELDS = (
    ["dev", "queue", "ctx", "job", "seqno", "op", "ncmds", "bytes", "prio", "status",
     "comm", "pid"]
    + [k + "_ns" for k, _ in STAGES]
    + ["total_ns", "clamped", "irq_matched"]
    # the raw time points (event times and device times), before clamping
    + ["t_" + p + "_ns" for p in POINTS]
)

U32_NEG1 = 0xFFFFFFFF


def op_name(op):
    """Name of an op given as a number (perf) or already decoded (trace-cmd)."""
    if isinstance(op, int):
        return OP_NAMES.get(op, str(op))
    return str(op)


def signed32(v):
    """A u32 field that stands for an s32 (queue -1 of frac_irq)."""
    v = int(v)
    return v - (1 << 32) if v >= 0x80000000 else v


class Job(object):
    __slots__ = ("dev", "queue", "ctx", "job", "seqno", "op", "ncmds", "bytes", "prio",
                 "status", "comm", "pid", "t_submit", "t_run", "t_doorbell", "t_irq",
                 "t_complete", "t_fence", "dev_start", "dev_end", "irq_matched",
                 "_stages")

    def __init__(self, dev, queue, ctx, job):
        self.dev, self.queue, self.ctx, self.job = dev, queue, ctx, job
        self.seqno = None
        self.op = "?"
        self.ncmds = self.bytes = self.prio = None
        self.status = None
        self.comm, self.pid = "", None
        self.t_submit = self.t_run = self.t_doorbell = self.t_irq = None
        self.t_complete = self.t_fence = None
        self.dev_start = self.dev_end = None
        self.irq_matched = False
        self._stages = None

    @property
    def complete(self):
        """Seen from submit to fence."""
        return self.t_submit is not None and self.t_fence is not None

    @property
    def has_device_times(self):
        return (self.t_run is not None and self.dev_start and self.dev_end and
                self.t_complete is not None)

    def raw_points(self):
        irq = self.t_irq if self.t_irq is not None else self.t_complete
        return [self.t_submit, self.t_run, self.dev_start, self.dev_end, irq, self.t_fence]

    def stages(self):
        """(clamped points, {stage: ns}, [stage keys whose raw difference was < 0]).

        Stages are None when the job has no device times (a job ended by a
        reset): then only total is known.
        """
        if self._stages is not None:
            return self._stages
        total = self.t_fence - self.t_submit
        if not self.has_device_times:
            vals = dict((k, None) for k, _ in STAGES)
            vals["total"] = total
            self._stages = (None, vals, [])
            return self._stages
        raw = self.raw_points()
        clamped = []
        for i, (key, _) in enumerate(STAGES):
            if raw[i + 1] < raw[i]:
                clamped.append(key)
        pts = [raw[0]]
        for p in raw[1:-1]:
            pts.append(min(max(p, pts[-1]), raw[-1]))
        pts.append(raw[-1])
        vals = {}
        for i, (key, _) in enumerate(STAGES):
            vals[key] = pts[i + 1] - pts[i]
        vals["total"] = total
        self._stages = (pts, vals, clamped)
        return self._stages

    def csv_row(self):
        _, vals, clamped = self.stages()
        row = {
            "dev": self.dev, "queue": self.queue, "ctx": self.ctx, "job": self.job,
            "seqno": self.seqno if self.seqno is not None else "",
            "op": self.op, "ncmds": "" if self.ncmds is None else self.ncmds,
            "bytes": "" if self.bytes is None else self.bytes,
            "prio": "" if self.prio is None else self.prio,
            "status": self.status if self.status is not None else "",
            "comm": self.comm, "pid": "" if self.pid is None else self.pid,
            "total_ns": vals["total"],
            "clamped": "|".join(clamped),
            "irq_matched": int(self.irq_matched),
        }
        for key, _ in STAGES:
            row[key + "_ns"] = "" if vals[key] is None else vals[key]
        for p, t in zip(POINTS, self.raw_points()):
            row["t_" + p + "_ns"] = "" if t is None else t
        return row


class JobTracker(object):
    """Feed it frac events in time order; it keeps the jobs."""

    def __init__(self):
        self.live = {}		# (dev, ctx, job) -> Job
        self.jobs = []		# complete jobs, in fence order
        self.last_irq = {}	# (dev, cpu) -> (ts, queue)
        self.counts = {}	# event name -> count
        self.orphans = 0	# events of jobs whose submit was not seen
        self.timeouts = 0
        self.resets = 0
        self.first_ts = None
        self.last_ts = None

    # -- events ---------------------------------------------------------------

    def _seen(self, name, ts):
        self.counts[name] = self.counts.get(name, 0) + 1
        if self.first_ts is None or ts < self.first_ts:
            self.first_ts = ts
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts

    def _job(self, dev, queue, ctx, job):
        j = self.live.get((dev, ctx, job))
        if j is None:
            self.orphans += 1
        return j

    def submit(self, ts, cpu, dev, queue, ctx, job, ncmds, op, prio, nbytes,
               comm="", pid=None):
        self._seen("frac_job_submit", ts)
        j = Job(dev, queue, ctx, job)
        j.t_submit, j.ncmds, j.op, j.prio, j.bytes = ts, ncmds, op_name(op), prio, nbytes
        j.comm, j.pid = comm, pid
        self.live[(dev, ctx, job)] = j

    def run(self, ts, cpu, dev, queue, ctx, job, seqno):
        self._seen("frac_job_run", ts)
        j = self._job(dev, queue, ctx, job)
        if j is not None:
            j.t_run, j.seqno = ts, seqno

    def doorbell(self, ts, cpu, dev, queue, ctx, job, seqno):
        self._seen("frac_job_doorbell", ts)
        j = self.live.get((dev, ctx, job))
        if j is not None:
            j.t_doorbell = ts

    def irq(self, ts, cpu, dev, vector, queue):
        self._seen("frac_irq", ts)
        self.last_irq[(dev, cpu)] = (ts, signed32(queue))

    def complete(self, ts, cpu, dev, queue, ctx, job, seqno, status, dev_start, dev_end,
                 irq_ns=None):
        self._seen("frac_job_complete", ts)
        j = self._job(dev, queue, ctx, job)
        if j is None:
            return
        j.t_complete, j.status = ts, status
        j.dev_start, j.dev_end = dev_start, dev_end
        if irq_ns is not None:	# the driver says: exact, or 0 for no interrupt
            if irq_ns:
                j.t_irq, j.irq_matched = irq_ns, True
            return
        irq = self.last_irq.get((dev, cpu))
        if (irq is not None and irq[1] in (queue, -1) and irq[0] <= ts and
                j.t_run is not None and irq[0] >= j.t_run):
            j.t_irq, j.irq_matched = irq[0], True

    def fence(self, ts, cpu, dev, queue, ctx, job, seqno, error):
        self._seen("frac_fence_signal", ts)
        j = self.live.pop((dev, ctx, job), None)
        if j is None:
            self.orphans += 1
            return
        j.t_fence = ts
        if j.status is None:
            j.status = error
        if j.t_complete is None:	# no complete event: fence without device times
            j.t_complete = ts
        self.jobs.append(j)

    def timeout(self, ts):
        self._seen("frac_job_timeout", ts)
        self.timeouts += 1

    def reset(self, ts):
        self._seen("frac_reset", ts)
        self.resets += 1

    def other(self, name, ts):
        self._seen(name, ts)

    def event(self, name, ts, cpu, f, comm="", pid=None):
        """One event with its fields in a dict (names as in frac_trace.h)."""
        if name.startswith("frac:"):
            name = name[5:]
        if name == "frac_job_submit":
            self.submit(ts, cpu, f["dev"], f["queue"], f["ctx"], f["job"], f["ncmds"],
                        f["op"], f["prio"], f["bytes"], comm, pid)
        elif name == "frac_job_run":
            self.run(ts, cpu, f["dev"], f["queue"], f["ctx"], f["job"], f["seqno"])
        elif name == "frac_job_doorbell":
            self.doorbell(ts, cpu, f["dev"], f["queue"], f["ctx"], f["job"], f["seqno"])
        elif name == "frac_irq":
            self.irq(ts, cpu, f["dev"], f["vector"], f["queue"])
        elif name == "frac_job_complete":
            start = f.get("dev_start_ns", f.get("start"))
            end = f.get("dev_end_ns", f.get("end"))
            irq_ns = f.get("irq_ns", f.get("irq"))
            self.complete(ts, cpu, f["dev"], f["queue"], f["ctx"], f["job"], f["seqno"],
                          signed32(f["status"]), start, end, irq_ns)
        elif name == "frac_fence_signal":
            self.fence(ts, cpu, f["dev"], f["queue"], f["ctx"], f["job"], f["seqno"],
                       signed32(f["error"]))
        elif name == "frac_job_timeout":
            self.timeout(ts)
        elif name == "frac_reset":
            self.reset(ts)
        else:
            self.other(name, ts)

    # -- results --------------------------------------------------------------

    @property
    def incomplete(self):
        """Jobs submitted but not signalled within the recording."""
        return len(self.live)

    def sorted_jobs(self):
        return sorted(self.jobs, key=lambda j: (j.t_submit, j.dev, j.ctx, j.job))


# -- trace-cmd report / perf script text --------------------------------------

# trace-cmd report:   comm-pid [cpu] [flags] secs.frac: event: args
# perf script:        comm pid [cpu] secs.frac: frac:event: args
_LINE = re.compile(r"^\s*(?P<comm>.*?)[- ](?P<pid>\d+)\s+(?:\(\s*\d+\)\s+)?"
                   r"\[(?P<cpu>\d+)\]\s+(?:[^\s:]{1,8}\s+)?(?P<secs>\d+)\.(?P<frac>\d+):"
                   r"\s+(?:\d+\s+)?(?:frac:)?(?P<event>frac_\w+):\s*(?P<args>.*)$")
_NUM = re.compile(r"^-?(?:0x[0-9a-fA-F]+|\d+)$")


def _value(s):
    return int(s, 0) if _NUM.match(s) else s


def parse_text_line(line):
    """(event, ts_ns, cpu, fields, comm, pid) of one frac event line, or None.

    Timestamps keep every digit printed: use `trace-cmd report -t` and
    `perf script --ns` for nanoseconds.
    """
    m = _LINE.match(line)
    if not m:
        return None
    frac = m.group("frac")
    ts = int(m.group("secs")) * 1000000000 + int((frac + "000000000")[:9])
    fields = {}
    for tok in m.group("args").split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            fields[k] = _value(v)
        else:
            fields[tok] = True
    return (m.group("event"), ts, int(m.group("cpu")), fields, m.group("comm").strip(),
            int(m.group("pid")))


def feed_text(tracker, lines):
    """Feed trace-cmd report (or perf script) text lines; returns lines used."""
    used = 0
    for line in lines:
        ev = parse_text_line(line)
        if ev is None:
            continue
        name, ts, cpu, fields, comm, pid = ev
        try:
            tracker.event(name, ts, cpu, fields, comm, pid)
        except KeyError:
            continue	# an event printed without the fields we need
        used += 1
    return used


# -- statistics ---------------------------------------------------------------

def percentile(sorted_vals, p):
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_vals:
        return None
    k = max(0, int(math.ceil(p / 100.0 * len(sorted_vals))) - 1)
    return sorted_vals[min(k, len(sorted_vals) - 1)]


def stage_stats(jobs):
    """{stage key: (count, p50, p90, p99, max)} over jobs with the stage known."""
    out = {}
    for key, _ in STAGES + (TOTAL,):
        vals = sorted(v for v in (j.stages()[1][key] for j in jobs) if v is not None)
        if vals:
            out[key] = (len(vals), percentile(vals, 50), percentile(vals, 90),
                        percentile(vals, 99), vals[-1])
        else:
            out[key] = (0, None, None, None, None)
    return out


def clamp_counts(jobs):
    """({stage key: clamped count}, jobs with any clamp, {stage key: most negative raw ns})."""
    per = dict((k, 0) for k, _ in STAGES)
    worst = {}
    njobs = 0
    for j in jobs:
        clamped = j.stages()[2]
        if clamped:
            njobs += 1
            raw = j.raw_points()
        for k in clamped:
            per[k] += 1
            i = [key for key, _ in STAGES].index(k)
            worst[k] = min(worst.get(k, 0), raw[i + 1] - raw[i])
    return per, njobs, worst


def clock_offset(jobs):
    """Median of dev_start - run over jobs with device times, or None."""
    vals = sorted(j.dev_start - j.t_run for j in jobs if j.has_device_times)
    return percentile(vals, 50) if vals else None


def group(jobs, by):
    """[(label, jobs)] grouped by "queue" (dev, queue) or "op"."""
    groups = {}
    for j in jobs:
        key = (j.dev, j.queue) if by == "queue" else (j.op,)
        groups.setdefault(key, []).append(j)
    out = []
    for key in sorted(groups):
        label = ("dev %d queue %d" % key) if by == "queue" else ("op %s" % key[0])
        out.append((label, groups[key]))
    return out


def format_table(jobs, unit="us"):
    """Lines of a stage table for these jobs."""
    div = {"ns": 1.0, "us": 1e3, "ms": 1e6}[unit]
    fmt = "%.0f" if unit == "ns" else "%.1f" if unit == "us" else "%.3f"
    stats = stage_stats(jobs)
    lines = ["  %-20s %7s %12s %12s %12s %12s" %
             ("stage", "count", "p50 " + unit, "p90 " + unit, "p99 " + unit, "max " + unit)]
    for key, label in STAGES + (TOTAL,):
        n, p50, p90, p99, mx = stats[key]
        cells = ["-" if v is None else fmt % (v / div) for v in (p50, p90, p99, mx)]
        lines.append("  %-20s %7d %12s %12s %12s %12s" % ((label, n) + tuple(cells)))
    return lines


def report_lines(tracker, by=("queue", "op"), unit="us"):
    jobs = tracker.sorted_jobs()
    ok = [j for j in jobs if j.status == 0]
    failed = len(jobs) - len(ok)
    lines = ["frac job stages: %d jobs (%d ok, %d failed), %d incomplete, "
             "%d events of unseen jobs" % (len(jobs), len(ok), failed, tracker.incomplete,
                                            tracker.orphans)]
    if tracker.first_ts is not None:
        lines.append("events: %s over %.3f ms" % (
            ", ".join("%s %d" % (k.replace("frac_", ""), v)
                      for k, v in sorted(tracker.counts.items())),
            (tracker.last_ts - tracker.first_ts) / 1e6))
    if tracker.timeouts or tracker.resets:
        lines.append("timeouts: %d, resets: %d" % (tracker.timeouts, tracker.resets))
    off = clock_offset(ok)
    if off is not None:
        lines.append("clock check: device start - run, median %.1f us" % (off / 1e3))
        if abs(off) > 1000000000:
            lines.append("WARNING: device times are %.1f s away from event times: record "
                         "with perf record -k mono or trace-cmd record -C mono" % (off / 1e9))
    per, njobs, worst = clamp_counts(ok)
    lines.append("clamped negative deltas: %d in %d jobs (%s)" % (
        sum(per.values()), njobs, ", ".join(
            "%s %d" % (label, per[k]) + (" down to %.1f us" % (worst[k] / 1e3) if per[k] else "")
            for k, label in STAGES)))
    no_irq = sum(1 for j in ok if not j.irq_matched)
    if no_irq:
        lines.append("jobs without a matching irq (completion found by polling): %d" % no_irq)
    lines.append("stats over the %d ok jobs; failed jobs are in the CSV" % len(ok))
    for b in by:
        for label, js in group(ok, b):
            lines.append("")
            lines.append("%s: %d jobs" % (label, len(js)))
            lines.extend(format_table(js, unit))
    return lines


def write_csv(path_or_file, jobs):
    own = isinstance(path_or_file, str)
    f = open(path_or_file, "w", newline="") if own else path_or_file
    try:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for j in jobs:
            w.writerow(j.csv_row())
    finally:
        if own:
            f.close()


# -- Chrome / Perfetto trace JSON ---------------------------------------------

def _us(ns):
    return ns / 1000.0


def chrome_trace(jobs, title="frac jobs"):
    """A Chrome trace-event dict: one process per device, one track per queue.

    Each job is an "X" slice spanning submit..fence with one child "X" slice
    per stage, the children abutting in time. A job that starts before the
    previous job on its queue has ended (several jobs in flight, or a waiter
    that ran before the fence event was logged) goes to an extra lane of that
    queue, "queue N (lane 2)", so slices on a track always nest.
    """
    events = []
    lanes = {}		# (dev, queue) -> [end ns of each lane]
    tracks = {}		# (dev, queue, lane) -> tid
    devs = set()
    for j in jobs:
        if not j.complete:
            continue
        devs.add(j.dev)
        ends = lanes.setdefault((j.dev, j.queue), [])
        for lane, end in enumerate(ends):
            if end <= j.t_submit:
                break
        else:
            lane = len(ends)
            ends.append(0)
        ends[lane] = j.t_fence
        pid = 1000 + j.dev
        tid = pid * 100000 + j.queue * 1000 + lane
        tracks[(j.dev, j.queue, lane)] = tid
        pts, vals, clamped = j.stages()
        args = {"dev": j.dev, "queue": j.queue, "ctx": j.ctx, "job": j.job,
                "seqno": j.seqno, "op": j.op, "ncmds": j.ncmds, "bytes": j.bytes,
                "status": j.status, "comm": j.comm, "pid": j.pid}
        if clamped:
            args["clamped"] = ",".join(clamped)
        events.append({"ph": "X", "cat": "job", "name": "%s ctx %d job %d" % (j.op, j.ctx, j.job),
                       "pid": pid, "tid": tid, "ts": _us(j.t_submit),
                       "dur": _us(j.t_fence - j.t_submit), "args": args})
        if pts is None:
            continue
        for i, (key, label) in enumerate(STAGES):
            events.append({"ph": "X", "cat": "stage", "name": label, "pid": pid, "tid": tid,
                           "ts": _us(pts[i]), "dur": _us(pts[i + 1] - pts[i]),
                           "args": {"ctx": j.ctx, "job": j.job, "ns": vals[key]}})
    meta = []
    for dev in sorted(devs):
        pid = 1000 + dev
        meta.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                     "args": {"name": "frac accel%d" % dev}})
        meta.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                     "args": {"sort_index": dev}})
    for (dev, queue, lane), tid in sorted(tracks.items()):
        name = "queue %d" % queue if lane == 0 else "queue %d (lane %d)" % (queue, lane + 1)
        meta.append({"ph": "M", "name": "thread_name", "pid": 1000 + dev, "tid": tid,
                     "args": {"name": name}})
        meta.append({"ph": "M", "name": "thread_sort_index", "pid": 1000 + dev, "tid": tid,
                     "args": {"sort_index": queue * 1000 + lane}})
    return {"traceEvents": meta + events, "displayTimeUnit": "ns",
            "otherData": {"title": title, "clock": "CLOCK_MONOTONIC (if recorded with "
                          "perf -k mono / trace-cmd -C mono)"}}


def write_json(path, obj):
    if path == "-":
        import sys
        json.dump(obj, sys.stdout)
        sys.stdout.write("\n")
        return
    with open(path, "w") as f:
        json.dump(obj, f)
        f.write("\n")
