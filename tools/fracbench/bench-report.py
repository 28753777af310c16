#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench-report: summarise a `make bench` run (P1-P4; goals in docs/performance.md).

Usage: bench-report.py RAW_DIR [--json OUT]

RAW_DIR holds the per-repetition JSON files written by tools/fracbench/guest-bench.sh and
tools/fracbench/bench (p1-frac-1.json, p1-nvme-1.json, ...). Every figure is printed as
min / median / max over the repetitions, with the ratio of the two figures of each line
computed per repetition (both were measured in the same repetition, side by side).
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys


def load(raw, pattern):
    """{rep: parsed JSON} for files raw/<pattern>-<rep>.json"""
    out = {}
    for path in glob.glob(os.path.join(raw, pattern + "-*.json")):
        m = re.search(r"-(\d+)\.json$", path)
        if not m:
            continue
        try:
            with open(path) as f:
                out[int(m.group(1))] = json.load(f)
        except (OSError, ValueError) as e:
            print(f"bench-report: skipping {path}: {e}", file=sys.stderr)
    return out


def fio_job(doc):
    return doc["jobs"][0]["read"]


def fio_clat_pct(doc, p):
    """fio completion latency percentile, ns (clat_ns percentiles are keyed '50.000000')"""
    pct = fio_job(doc)["clat_ns"]["percentile"]
    return float(pct[f"{p:.6f}"])


def fio_lat_pct(doc, p):
    """fio total latency (submit to completion) percentile when present, else clat"""
    lat = fio_job(doc).get("lat_ns", {})
    if "percentile" in lat:
        return float(lat["percentile"][f"{p:.6f}"])
    return fio_clat_pct(doc, p)


def perf_stat_counts(path):
    """{event: count} of a `perf stat -x,` output file (lines "value,unit,event,...")."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) >= 3 and parts[0].replace(".", "", 1).isdigit():
                    out[parts[2]] = float(parts[0])
    except OSError:
        pass
    return out


def per_job_counts(raw, name, units, prefix="p2cs-"):
    """{rep: {event: count per job}} for <prefix><name>-<rep>.{txt,json}; @units(doc) the
    jobs or I/Os the run completed."""
    out = {}
    for r, doc in load(raw, f"{prefix}{name}").items():
        n = units(doc)
        c = perf_stat_counts(os.path.join(raw, f"{prefix}{name}-{r}.txt"))
        if n and c:
            out[r] = {k: v / n for k, v in c.items()}
    return out


def count_lines(res, key, a, b, label_a, label_b, note):
    """Per-job context switches and work items, @a against @b ({rep: {event: per job}}), into
    res[key + "_cs_per_job"] and res[key + "_work_per_job"]; labels take the event's name."""
    for ev, suffix in (("context-switches", "_cs_per_job"),
                       ("workqueue:workqueue_execute_start", "_work_per_job")):
        va = {r: v[ev] for r, v in a.items() if ev in v}
        vb = {r: v[ev] for r, v in b.items() if ev in v}
        if va and vb:
            name = ev.split(":")[-1]
            res[key + suffix] = line("", label_a.format(name), va, label_b.format(name), vb,
                                     "", 1, 2, note)


def stats(values):
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def fmt(s, unit, scale=1.0, digits=1):
    return (f"{s['min'] / scale:.{digits}f} / {s['median'] / scale:.{digits}f} / "
            f"{s['max'] / scale:.{digits}f} {unit}")


def line(name, label_a, a, label_b, b, unit, scale, digits, ratio_note):
    """a, b: {rep: value}; prints both and their per-repetition ratio a/b"""
    reps = sorted(set(a) & set(b))
    if not reps:
        print(f"{name:4} {label_a} vs {label_b}: no data")
        return None
    va = [a[r] for r in reps]
    vb = [b[r] for r in reps]
    ratio = [x / y for x, y in zip(va, vb) if y]
    sa, sb, sr = stats(va), stats(vb), stats(ratio)
    print(f"{name:4} {label_a:34} {fmt(sa, unit, scale, digits)}")
    print(f"     {label_b:34} {fmt(sb, unit, scale, digits)}")
    print(f"     {'ratio ' + ratio_note:34} {sr['min']:.2f} / {sr['median']:.2f} / "
          f"{sr['max']:.2f}x   ({len(reps)} repetitions)")
    return {"a": label_a, "b": label_b, "unit": unit, "a_stats": sa, "b_stats": sb,
            "ratio": sr, "reps": len(reps)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", help="directory of raw per-repetition JSON files")
    ap.add_argument("--json", metavar="OUT", help="also write the summary as JSON")
    ap.add_argument("--meta", metavar="FILE",
                    help="a JSON object (commit, dirty, date, machine, device, params) "
                    "copied into the summary, for fracregress import-bench")
    args = ap.parse_args()
    if not os.path.isdir(args.raw):
        ap.exit(2, f"bench-report: {args.raw}: not a directory\n")

    raw = args.raw
    res = {}
    print("== make bench: min / median / max over repetitions "
          "(zero-latency FRAC-1 and QEMU NVMe null-co, one guest run)")

    p1f, p1n = load(raw, "p1-frac"), load(raw, "p1-nvme")
    res["P1_p50"] = line("P1", "frac QD1 round trip p50", {r: d["lat_ns"]["p50"] for r, d in p1f.items()},
                         "nvme 4k O_DIRECT read QD1 p50", {r: fio_lat_pct(d, 50) for r, d in p1n.items()},
                         "us", 1e3, 1, "frac/nvme (goal <= 1.0)")
    res["P1_p99"] = line("", "frac QD1 round trip p99", {r: d["lat_ns"]["p99"] for r, d in p1f.items()},
                         "nvme 4k O_DIRECT read QD1 p99", {r: fio_lat_pct(d, 99) for r, d in p1n.items()},
                         "us", 1e3, 1, "frac/nvme")

    p2f, p2n = load(raw, "p2-frac"), load(raw, "p2-nvme")
    p2batch = max([d.get("batch", 1) for d in p2f.values()] or [1])
    res["P2"] = line("P2", "frac jobs/s, QD32, all queues" +
                     (f", {p2batch} to a SUBMIT_BATCH" if p2batch > 1 else ""),
                     {r: d["jobs_per_sec"] for r, d in p2f.items()},
                     "nvme 4k randread IOPS, QD32", {r: fio_job(d)["iops"] for r, d in p2n.items()},
                     "k/s", 1e3, 1, "frac/nvme (goal >= 1.0)")

    # Per job at QD32: context switches and work items of the whole guest (perf stat -a),
    # frac's per job against nvme's per 4 KiB read.
    count_lines(res, "P2", per_job_counts(raw, "frac", lambda d: d["jobs"]),
                per_job_counts(raw, "nvme", lambda d: fio_job(d)["total_ios"]),
                "frac {} per job QD32", "nvme {} per I/O", "frac/nvme (goal <= 1.0)")

    p1l, p1ln = load(raw, "p1load-frac"), load(raw, "p1load-nvme")
    p2l, p2ln = load(raw, "p2load-frac"), load(raw, "p2load-nvme")
    if p2l and p2ln:
        res["P2load"] = line("P2ld", "frac jobs/s QD32, a host core busy",
                             {r: d["jobs_per_sec"] for r, d in p2l.items()},
                             "nvme IOPS QD32, the same load", {r: fio_job(d)["iops"] for r, d in p2ln.items()},
                             "k/s", 1e3, 1, "frac/nvme (goal >= 1.5)")
        res["P1load_p50"] = line("", "frac QD1 p50, a host core busy",
                                 {r: d["lat_ns"]["p50"] for r, d in p1l.items()},
                                 "nvme QD1 p50, the same load",
                                 {r: fio_lat_pct(d, 50) for r, d in p1ln.items()},
                                 "us", 1e3, 1, "frac/nvme (goal <= 0.8)")
    else:
        print("P2ld not measured (FRAC_BENCH_ONLY without p2load)")

    p1b, p2b = load(raw, "p1-fracbh"), load(raw, "p2-fracbh")
    if p1b and p2b:
        res["P1_bh_p50"] = line("P1bh", "frac, fetch in a BH, QD1 p50",
                                {r: d["lat_ns"]["p50"] for r, d in p1b.items()},
                                "nvme 4k O_DIRECT read QD1 p50",
                                {r: fio_lat_pct(d, 50) for r, d in p1n.items()},
                                "us", 1e3, 1, "frac/nvme")
        res["P2_bh"] = line("P2bh", "frac, fetch in a BH, jobs/s QD32",
                            {r: d["jobs_per_sec"] for r, d in p2b.items()},
                            "nvme 4k randread IOPS, QD32", {r: fio_job(d)["iops"] for r, d in p2n.items()},
                            "k/s", 1e3, 1, "frac/nvme")
    else:
        print("P1bh not measured: no second FRAC-1 with fetch-in-doorbell=off")

    # D: direct submission on against off, in the same repetition.
    d_any = False
    for fig, label, key, unit, scale in (
            ("p1", "QD1 p50", lambda d: d["lat_ns"]["p50"], "us", 1e3),
            ("p1bh", "QD1 p50, fetch in a BH", lambda d: d["lat_ns"]["p50"], "us", 1e3),
            ("p2", "jobs/s QD32", lambda d: d["jobs_per_sec"], "k/s", 1e3),
            ("p2bh", "jobs/s QD32, fetch in a BH", lambda d: d["jobs_per_sec"], "k/s", 1e3)):
        on, off = load(raw, f"d-on-{fig}"), load(raw, f"d-off-{fig}")
        if on and off:
            res["D_" + fig] = line("D" if not d_any else "", f"frac {label}, direct on",
                                   {r: key(d) for r, d in on.items()},
                                   f"frac {label}, direct off",
                                   {r: key(d) for r, d in off.items()},
                                   unit, scale, 1, "on/off")
            d_any = True
    # Per job at QD1, direct on against off: the work a direct job saves.
    count_lines(res, "D_p1", per_job_counts(raw, "on-p1cs", lambda d: d["jobs"], prefix="d-"),
                per_job_counts(raw, "off-p1cs", lambda d: d["jobs"], prefix="d-"),
                "frac {} per job QD1, direct on", "direct off", "on/off")
    if not d_any:
        print("D    not measured (FRAC_BENCH_ONLY without d, or no direct_submit parameter)")

    # B: QD32 with jobs batched to a SUBMIT_BATCH against a SUBMIT per job, same repetition.
    b_any = False
    for fig, label in (("p2", "jobs/s QD32"), ("p2bh", "jobs/s QD32, fetch in a BH")):
        on, off = load(raw, f"b-batch-{fig}"), load(raw, f"b-single-{fig}")
        if on and off:
            res["B_" + fig] = line("B" if not b_any else "", f"frac {label}, batched",
                                   {r: d["jobs_per_sec"] for r, d in on.items()},
                                   f"frac {label}, a SUBMIT per job",
                                   {r: d["jobs_per_sec"] for r, d in off.items()},
                                   "k/s", 1e3, 1, "batched/single")
            b_any = True
    if not b_any:
        print("B    not measured (FRAC_BENCH_ONLY without b)")

    p3f, p3h, p3g = load(raw, "p3-frac"), load(raw, "p3-host-memcpy"), load(raw, "p3-guest-memcpy")
    res["P3"] = line("P3", "frac 64 MiB copy GB/s", {r: d["gbytes_per_sec"] for r, d in p3f.items()},
                     "host memcpy 64 MiB GB/s", {r: d["gbytes_per_sec"] for r, d in p3h.items()},
                     "GB/s", 1, 2, "frac/host memcpy (goal >= 0.8)")
    res["P3_guest"] = line("", "guest memcpy 64 MiB GB/s", {r: d["gbytes_per_sec"] for r, d in p3g.items()},
                           "host memcpy 64 MiB GB/s", {r: d["gbytes_per_sec"] for r, d in p3h.items()},
                           "GB/s", 1, 2, "guest/host memcpy")

    p3it, p3ii = load(raw, "p3i-translated"), load(raw, "p3i-identity")
    if p3it or p3ii:
        res["P3i"] = line("P3i", "frac 64 MiB copy GB/s, IOMMU",
                          {r: d["gbytes_per_sec"] for r, d in p3it.items()},
                          "host memcpy 64 MiB GB/s", {r: d["gbytes_per_sec"] for r, d in p3h.items()},
                          "GB/s", 1, 2, "frac IOMMU/host memcpy")
        res["P3i_identity"] = line("", "frac 64 MiB copy GB/s, IOMMU",
                                   {r: d["gbytes_per_sec"] for r, d in p3it.items()},
                                   "same, identity-mapped", {r: d["gbytes_per_sec"] for r, d in p3ii.items()},
                                   "GB/s", 1, 2, "translated/identity")

    p4n, p4l, p4b, p4t = (load(raw, "p4-none"), load(raw, "p4-fraclat"), load(raw, "p4-bpf"),
                          load(raw, "p4-bpftrace"))
    if p4n and p4b:
        none = {r: d["jobs_per_sec"] for r, d in p4n.items()}
        if p4l:
            res["P4_fraclat"] = line("P4", "frac jobs/s, fraclat alone",
                                     {r: d["jobs_per_sec"] for r, d in p4l.items()},
                                     "frac jobs/s, no tools", none,
                                     "k/s", 1e3, 1, "with/without (goal >= 0.98)")
        res["P4_bpf"] = line("" if p4l else "P4", "frac jobs/s, fraclat+fracirq+fracdma",
                             {r: d["jobs_per_sec"] for r, d in p4b.items()},
                             "frac jobs/s, no tools", none,
                             "k/s", 1e3, 1, "with/without (goal >= 0.95)")
        # Each bpftrace reference: its throughput, and the loss of the three tools as a share
        # of its loss, per repetition. A repetition where bpftrace lost nothing gives no
        # ratio (counted, not hidden).
        for key, label, p4t in (("", "bpftrace, per-stage events", p4t),
                                ("1", "bpftrace, frac_job_done", load(raw, "p4-bpftrace1"))):
            if not p4t:
                continue
            res["P4_bpftrace" + key] = line("", f"frac jobs/s, {label}",
                                            {r: d["jobs_per_sec"] for r, d in p4t.items()},
                                            "frac jobs/s, no tools", none,
                                            "k/s", 1e3, 1, "with/without")
            reps = sorted(set(p4n) & set(p4b) & set(p4t))
            share, skipped = [], 0
            for r in reps:
                lost_bt = none[r] - p4t[r]["jobs_per_sec"]
                if none[r] and lost_bt > 0:
                    share.append((none[r] - p4b[r]["jobs_per_sec"]) / lost_bt)
                else:
                    skipped += 1
            if share:
                st = stats(share)
                print(f"     {'loss, 3 tools/that (goal <= 0.2)':34} {st['min']:.2f} / "
                      f"{st['median']:.2f} / {st['max']:.2f}x   ({len(share)} repetitions"
                      f"{f', {skipped} with no bpftrace loss' if skipped else ''})")
                res["P4_loss_share" + key] = {"a": "throughput lost with the tools",
                                              "b": f"throughput lost with {label}",
                                              "ratio": st, "reps": len(share),
                                              "no_bpftrace_loss": skipped}
        # BPF program runs and their own run time per job (bpf_stats, around the timed run;
        # warm-up jobs included in both counts): what the tools cost, free of the host's noise.
        def bpf_per_job(case):
            out = {}
            for r, d in load(raw, f"p4-{case}").items():
                try:
                    with open(os.path.join(raw, f"p4-{case}-{r}.progs0.json")) as f:
                        p0 = {p["id"]: p for p in json.load(f)}
                    with open(os.path.join(raw, f"p4-{case}-{r}.progs1.json")) as f:
                        p1 = json.load(f)
                except (OSError, ValueError):
                    continue
                jobs = d["jobs"] + 200 * d.get("threads", 1)
                cnt = sum(p.get("run_cnt", 0) - p0.get(p["id"], {}).get("run_cnt", 0) for p in p1)
                ns = sum(p.get("run_time_ns", 0) - p0.get(p["id"], {}).get("run_time_ns", 0)
                         for p in p1)
                if jobs:
                    out[r] = (cnt / jobs, ns / jobs)
            return out
        for case, label in (("fraclat", "fraclat alone"), ("bpf", "fraclat+fracirq+fracdma"),
                            ("bpftrace", "bpftrace, per-stage events"),
                            ("bpftrace1", "bpftrace, frac_job_done")):
            v = bpf_per_job(case)
            if v:
                runs, ns = stats([x[0] for x in v.values()]), stats([x[1] for x in v.values()])
                print(f"     {'BPF runs / ns per job, ' + label:34} {runs['median']:.2f} runs, "
                      f"{ns['min']:.0f} / {ns['median']:.0f} / {ns['max']:.0f} ns   "
                      f"({len(v)} repetitions)")
                res["P4_bpf_per_job_" + case] = {"runs": runs, "ns": ns, "reps": len(v)}
    else:
        print("P4   not measured: bpf/fraclat, fracirq and fracdma are not built, or not asked for")

    p5f, p5t = load(raw, "p5-fractop"), load(raw, "p5-top")
    if p5f and p5t:
        res["P5"] = line("P5", "fractop CPU s per 60 s (1 s, BPF)",
                         {r: d["cpu_s"] for r, d in p5f.items()},
                         "top -b -d 1 CPU s, same 60 s", {r: d["cpu_s"] for r, d in p5t.items()},
                         "s", 1, 2, "fractop/top (goal <= 0.5)")
    else:
        print("P5   not measured: tools/fractop, tools/fracload, tmux or top missing")

    # T: the same runs with frac.ko built without tracepoints and with them disabled,
    # two of each per repetition in alternating order; their mean per repetition.
    def tload(pattern, key):
        out = {}
        for path in glob.glob(os.path.join(raw, pattern + "-*.jsonl")):
            m = re.search(r"-(\d+)\.jsonl$", path)
            with open(path) as f:
                vals = [key(json.loads(line)) for line in f if line.strip()]
            if m and vals:
                out[int(m.group(1))] = statistics.mean(vals)
        return out

    tt = tload("t-trace-tput", lambda d: d["jobs_per_sec"])
    tn = tload("t-notrace-tput", lambda d: d["jobs_per_sec"])
    if tt and tn:
        res["T_tput"] = line("T", "frac jobs/s, tracepoints disabled", tt,
                             "frac jobs/s, built without them", tn,
                             "k/s", 1e3, 2, "disabled/none (goal ~1.0)")
        res["T_p50"] = line("", "frac QD1 p50, tracepoints disabled",
                            tload("t-trace-lat", lambda d: d["lat_ns"]["p50"]),
                            "frac QD1 p50, built without them",
                            tload("t-notrace-lat", lambda d: d["lat_ns"]["p50"]),
                            "us", 1e3, 2, "disabled/none (goal ~1.0)")

    meta = {}
    if args.meta:       # unreadable: the summary is still written, without it
        try:
            with open(args.meta) as m:
                meta = json.load(m)
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as e:
            print(f"bench-report: --meta {args.meta}: {e}; the summary records no commit "
                  "or machine", file=sys.stderr)
            meta = {}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(meta, raw=os.path.abspath(raw), figures=res), f, indent=1)
    only = (os.environ.get("FRAC_BENCH_ONLY") or "p1,p2,p3").split(",")
    missing = [k for k, f in (("P1_p50", "p1"), ("P2", "p2"), ("P3", "p3"))
               if f in only and not res.get(k)]
    if missing:
        print(f"bench-report: no data for {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
