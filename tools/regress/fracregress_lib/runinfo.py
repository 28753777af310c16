# SPDX-License-Identifier: MIT
"""What a run is recorded with, and the readers of the files runs come in.

Owns: the machine fingerprint (CPU model, cores, kernel, QEMU build hash), commit and dirty
flag from git, the run-file format (README.md, "Run files"), and the import of what
`make bench` writes today (results/bench/<stamp>.json and its raw directory).
"""

import glob
import hashlib
import json
import os
import platform
import re
import subprocess
import time

RUN_FORMAT = "frac-run/1"


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def file_hash(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def machine(qemu=None):
    """This host's fingerprint; `qemu`: the QEMU binary whose hash is recorded, if any."""
    m = {"cpu_model": _cpu_model(), "cores": os.cpu_count(), "kernel": platform.release(),
         "qemu_hash": file_hash(qemu) if qemu and os.path.exists(qemu) else None}
    return fingerprinted(m)


def fingerprinted(m):
    m = dict(m)
    key = json.dumps({k: m.get(k) for k in ("cpu_model", "cores", "kernel", "qemu_hash")},
                     sort_keys=True)
    m["fingerprint"] = hashlib.sha256(key.encode()).hexdigest()[:16]
    return m


def git_state(repo):
    """(commit, dirty) of the work tree at `repo`; ('unknown', True) outside git."""
    try:
        commit = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
        st = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                            check=True, capture_output=True, text=True).stdout
        return commit, bool(st.strip())
    except (OSError, subprocess.CalledProcessError):
        return "unknown", True


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class RunFileError(Exception):
    pass


def check_run(run, where):
    """Validate a run dict; raises RunFileError naming the first problem."""
    for k in ("commit", "date", "machine", "metrics"):
        if k not in run:
            raise RunFileError(f"{where}: no {k!r}")
    if "fingerprint" not in run["machine"]:
        run["machine"] = fingerprinted(run["machine"])
    for name, m in run["metrics"].items():
        s = m.get("slices")
        if not isinstance(s, list) or not s or not all(isinstance(v, (int, float)) for v in s):
            raise RunFileError(f"{where}: metric {name}: 'slices' must be a non-empty list "
                               "of numbers")
        if m.get("better", "lower") not in ("lower", "higher"):
            raise RunFileError(f"{where}: metric {name}: 'better' is 'lower' or 'higher'")
    for stage, h in run.get("stages", {}).items():
        if "buckets" not in h or "count" not in h:
            raise RunFileError(f"{where}: stage {stage}: needs 'count' and 'buckets'")
    return run


# fraclat's bucket edges are in its display unit (usecs unless -N or -m); a run's are in ns.
UNIT_NS = {"nsecs": 1, "usecs": 1000, "msecs": 1000000}


def stages_from_fraclat(doc):
    """Per-stage histograms from one fraclat -j object (all groups summed), or {}; bucket
    edges in ns whatever unit fraclat printed them in (high inclusive: [low, high])."""
    out = {}
    for g in doc.get("groups", []):
        if g.get("status", "ok") != "ok":
            continue
        for stage, h in g.get("stages", {}).items():
            f = UNIT_NS.get(h.get("unit") or doc.get("unit") or "nsecs")
            if f is None:
                raise ValueError(f"fraclat unit {h.get('unit') or doc.get('unit')!r}")
            s = out.setdefault(stage, {"count": 0, "sum_ns": 0.0, "buckets": {}})
            s["count"] += h.get("count", 0)
            s["sum_ns"] += h.get("sum_ns", 0) or 0
            for b in h.get("buckets", []):
                hi = b.get("high")
                k = (b["low"] * f, None if hi is None else (hi + 1) * f - 1)
                s["buckets"][k] = s["buckets"].get(k, 0) + b["count"]
    return {st: {"count": s["count"], "sum_ns": s["sum_ns"],
                 "buckets": [{"low": lo, "high": hi, "count": c}
                             for (lo, hi), c in sorted(s["buckets"].items())]}
            for st, s in out.items()}


def load_run_file(path):
    try:
        with open(path) as f:
            run = json.load(f)
    except (OSError, ValueError) as e:
        raise RunFileError(f"{path}: {e}")
    if run.get("format") != RUN_FORMAT:
        raise RunFileError(f"{path}: not a run file (format {run.get('format')!r}, "
                           f"want {RUN_FORMAT!r})")
    if "fraclat" in run:     # a fraclat -j object as it came, instead of "stages"
        run.setdefault("stages", stages_from_fraclat(run.pop("fraclat")))
    return check_run(run, path)


# ---- make bench's files (tools/fracbench/guest-bench.sh, tools/fracbench/bench-report.py) ----

def _fio_lat(doc, p):
    job = doc["jobs"][0]["read"]
    lat = job.get("lat_ns", {})
    pct = lat["percentile"] if "percentile" in lat else job["clat_ns"]["percentile"]
    return float(pct[f"{p:.6f}"])


# (metric, raw file pattern, value, unit, better): one slice per repetition file.
BENCH_METRICS = [
    ("P1.frac.p50_us", "p1-frac", lambda d: d["lat_ns"]["p50"] / 1e3, "us", "lower"),
    ("P1.frac.p99_us", "p1-frac", lambda d: d["lat_ns"]["p99"] / 1e3, "us", "lower"),
    ("P1.nvme.p50_us", "p1-nvme", lambda d: _fio_lat(d, 50) / 1e3, "us", "lower"),
    ("P1.nvme.p99_us", "p1-nvme", lambda d: _fio_lat(d, 99) / 1e3, "us", "lower"),
    ("P1bh.frac.p50_us", "p1-fracbh", lambda d: d["lat_ns"]["p50"] / 1e3, "us", "lower"),
    ("P2.frac.jobs_per_s", "p2-frac", lambda d: d["jobs_per_sec"], "jobs/s", "higher"),
    ("P2.nvme.iops", "p2-nvme", lambda d: d["jobs"][0]["read"]["iops"], "IO/s", "higher"),
    ("P2bh.frac.jobs_per_s", "p2-fracbh", lambda d: d["jobs_per_sec"], "jobs/s", "higher"),
    ("P3.frac.gbytes_per_s", "p3-frac", lambda d: d["gbytes_per_sec"], "GB/s", "higher"),
    ("P3.host_memcpy.gbytes_per_s", "p3-host-memcpy", lambda d: d["gbytes_per_sec"], "GB/s",
     "higher"),
    ("P3.guest_memcpy.gbytes_per_s", "p3-guest-memcpy", lambda d: d["gbytes_per_sec"], "GB/s",
     "higher"),
    ("P4.none.jobs_per_s", "p4-none", lambda d: d["jobs_per_sec"], "jobs/s", "higher"),
    ("P4.tools.jobs_per_s", "p4-bpf", lambda d: d["jobs_per_sec"], "jobs/s", "higher"),
    ("P4.bpftrace.jobs_per_s", "p4-bpftrace", lambda d: d["jobs_per_sec"], "jobs/s", "higher"),
]
# Same-repetition ratios, the figures make bench reports (a / b per repetition).
BENCH_RATIOS = [
    ("P1.ratio_p50", "P1.frac.p50_us", "P1.nvme.p50_us", "lower"),
    ("P2.ratio", "P2.frac.jobs_per_s", "P2.nvme.iops", "higher"),
    ("P3.ratio", "P3.frac.gbytes_per_s", "P3.host_memcpy.gbytes_per_s", "higher"),
]


def _load_reps(raw, pattern):
    out = {}
    for path in glob.glob(os.path.join(raw, pattern + "-*.json")):
        m = re.search(r"-(\d+)\.json$", path)
        if not m or not re.fullmatch(re.escape(pattern) + r"-\d+\.json", os.path.basename(path)):
            continue
        try:
            with open(path) as f:
                out[int(m.group(1))] = json.load(f)
        except (OSError, ValueError):
            continue
    return out


def bench_metrics(raw):
    """{metric: {"unit", "better", "slices"}} from a make bench raw directory."""
    metrics, by_rep = {}, {}
    for name, pattern, get, unit, better in BENCH_METRICS:
        reps = _load_reps(raw, pattern)
        vals = {}
        for r, d in sorted(reps.items()):
            try:
                vals[r] = float(get(d))
            except (KeyError, IndexError, TypeError, ValueError):
                continue
        if vals:
            by_rep[name] = vals
            metrics[name] = {"unit": unit, "better": better,
                             "slices": [vals[r] for r in sorted(vals)]}
    for name, a, b, better in BENCH_RATIOS:
        if a in by_rep and b in by_rep:
            reps = sorted(r for r in set(by_rep[a]) & set(by_rep[b]) if by_rep[b][r])
            if reps:
                metrics[name] = {"unit": "x", "better": better,
                                 "slices": [by_rep[a][r] / by_rep[b][r] for r in reps]}
    return metrics


def bench_summary_metrics(doc):
    """Fallback when the raw directory is gone: the summary's min/median/max per figure
    (three values, not slices; the run's params say so)."""
    metrics = {}
    for fig, v in (doc.get("figures") or {}).items():
        if not v or "ratio" not in v:
            continue
        r = v["ratio"]
        metrics[f"{fig}.ratio_summary"] = {"unit": "x", "better": "lower" if "P1" in fig
                                           else "higher",
                                           "slices": [r["min"], r["median"], r["max"]]}
    return metrics


# The traced workloads' files (tools/regress/guest-regress.py), by the prefix their stages
# carry in a run: P1's under their own names (total, exec, ...), P3's as p3:total, p3:exec.
TRACED_FILES = {"": r"fraclat-(\d+)\.json", "p3:": r"fraclat-p3-(\d+)\.json"}


def _fraclat_last(raw, prefix=""):
    """{k: per-stage histograms} from the last object of each traced file of one workload
    (fraclat -j JSON lines), stage names with the workload's prefix."""
    out = {}
    for fl in glob.glob(os.path.join(raw, "fraclat-*.json")):
        m = re.fullmatch(TRACED_FILES[prefix], os.path.basename(fl))
        if not m:
            continue
        try:
            with open(fl) as f:
                lines = [json.loads(x) for x in f if x.strip()]
        except (OSError, ValueError):
            continue
        if lines:
            out[int(m.group(1))] = {prefix + st: h
                                    for st, h in stages_from_fraclat(lines[-1]).items()}
    return out


def _traced_slices(raw):
    """Every traced slice of every workload: [(prefix, k, stages)]."""
    return [(p, k, st) for p in TRACED_FILES for k, st in sorted(_fraclat_last(raw, p).items())]


def fraclat_stages(raw):
    """Every traced slice's stages (the last object of each file) summed: the run's pooled
    per-stage histograms, P3's prefixed (TRACED_FILES)."""
    pooled = {}
    for _, _, stages in _traced_slices(raw):
        for st, h in stages.items():
            p = pooled.setdefault(st, {"count": 0, "sum_ns": 0.0, "buckets": {}})
            p["count"] += h["count"]
            p["sum_ns"] += h["sum_ns"]
            for b in h["buckets"]:
                k = (b["low"], b.get("high"))
                p["buckets"][k] = p["buckets"].get(k, 0) + b["count"]
    return {st: {"count": p["count"], "sum_ns": p["sum_ns"],
                 "buckets": [{"low": lo, "high": hi, "count": c}
                             for (lo, hi), c in sorted(p["buckets"].items())]}
            for st, p in pooled.items()}


STAGE_METRIC = "stage.{}.mean_us"


def fraclat_slice_metrics(raw):
    """Each traced slice's exact mean per stage (sum_ns / count), one slice per fraclat file:
    metrics stage.<stage>.mean_us, which attribution tests slice by slice as the verdicts
    test the timed metrics (a pooled histogram of thousands of jobs calls any drift of the
    host significant)."""
    vals = {}
    for _, _, stages in _traced_slices(raw):
        for st, h in stages.items():
            if h["count"] and h.get("sum_ns") is not None:
                vals.setdefault(st, []).append(h["sum_ns"] / h["count"] / 1e3)
    return {STAGE_METRIC.format(st): {"unit": "us", "better": "lower", "slices": v}
            for st, v in vals.items()}


def import_raw(raw, repo, qemu=None, label=None, commit=None, dirty=None, device=None):
    """A run from a directory of per-slice files named as guest-bench.sh names them
    (p1-frac-<slice>.json, ...; fraclat-*.json for the stages): the A/B harness's side."""
    if not os.path.isdir(raw):
        raise RunFileError(f"{raw}: not a directory")
    metrics = bench_metrics(raw)
    if not metrics:
        raise RunFileError(f"{raw}: no per-slice files (p1-frac-1.json, ...)")
    metrics.update(fraclat_slice_metrics(raw))
    params = {"reps_from": "raw per-slice files"}
    if commit is None:
        commit, d = git_state(repo)
        dirty = d if dirty is None else dirty
        params["commit_from"] = "the work tree at import time"
    run = {"format": RUN_FORMAT, "commit": commit, "dirty": bool(dirty), "date": now(),
           "machine": machine(qemu), "device": device or {}, "params": params,
           "metrics": metrics, "stages": fraclat_stages(raw), "label": label,
           "source": os.path.abspath(raw)}
    return check_run(run, raw)


def import_bench(path, repo, qemu=None):
    """A run dict from results/bench/<stamp>.json (and its raw directory, when present)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise RunFileError(f"{path}: {e}")
    if "figures" not in doc:
        raise RunFileError(f"{path}: not a make bench summary (no 'figures')")
    raw = doc.get("raw") or ""
    if not os.path.isdir(raw):      # moved with its directory: results/bench/<stamp>/bench
        raw = os.path.join(os.path.splitext(path)[0], "bench")
    params = {"reps_from": "raw per-repetition files"}
    metrics = bench_metrics(raw) if os.path.isdir(raw) else {}
    if not metrics:
        metrics = bench_summary_metrics(doc)
        params = {"reps_from": "summary min/median/max only: the raw files were not found"}
    if not metrics:
        raise RunFileError(f"{path}: no figures to import")
    stamp = os.path.splitext(os.path.basename(os.path.realpath(path)))[0]
    m = re.fullmatch(r"(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z", stamp)
    date = (f"{m[1]}-{m[2]}-{m[3]}T{m[4]}:{m[5]}:{m[6]}Z" if m else
            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(path))))
    commit, dirty = doc.get("commit"), doc.get("dirty")
    if commit is None:      # summaries before 2026-12-05 do not record it: the tree's, marked so
        commit, dirty = git_state(repo)
        params["commit_from"] = "the work tree at import time, not recorded by make bench"
    if not doc.get("machine"):
        params["machine_from"] = "this host at import time, not recorded by make bench"
    params.update(doc.get("params") or {})
    stages = fraclat_stages(raw) if os.path.isdir(raw) else {}
    run = {"format": RUN_FORMAT, "commit": commit, "dirty": bool(dirty), "date": date,
           "machine": doc.get("machine") or machine(qemu), "device": doc.get("device", {}),
           "params": params, "metrics": metrics, "stages": stages,
           "source": os.path.abspath(path)}
    return check_run(run, path)
