# SPDX-License-Identifier: MIT
"""Reports: kernel-test-robot-shaped markdown for CI logs, and one self-contained HTML
dashboard per report (every plot a PNG embedded as a data: URI; no external file or script).

Owns: build() (the numbers of one base/new comparison, from the store), markdown(), html()
and the plots. Rendering only draws: every figure is computed in build().
"""

import base64
import html as htmlmod
import io
import math

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt     # noqa: E402
import numpy as np                  # noqa: E402

from . import attribution, changepoint, runinfo, verdict   # noqa: E402


# The workloads tools/regress/guest-regress.py traces with fraclat, by the prefix of their
# stages in a run (runinfo.TRACED_FILES), and the timed metric that says whether each one's
# total moved: P1's NOPs (the driver's path), P3's 16 MiB copies (the device's DMA, in exec).
TRACED = [("", "P1.frac.p50_us"), ("p3:", "P3.frac.gbytes_per_s")]
TRACED_METRIC = TRACED[0][1]


def _workload(stages, prefix):
    """The stages of one traced workload, without its prefix."""
    if prefix:
        return {k[len(prefix):]: v for k, v in stages.items() if k.startswith(prefix)}
    return {k: v for k, v in stages.items() if ":" not in k}


def build(store, base_id, new_id, rel_magnitude=0.10, regress_threshold=0.05, window=50,
          pvalue=0.001, metrics=None, min_magnitude=0.0):
    base, new = store.run(base_id), store.run(new_id)
    mb, mn = store.metrics(base_id), store.metrics(new_id)
    # stage.<s>.mean_us (runinfo.fraclat_slice_metrics) feed the attribution, not the table
    # or the gate: a stage is judged by what it does to the total.
    stage_pre = runinfo.STAGE_METRIC.split("{")[0]
    names = [m for m in sorted(set(mb) & set(mn)) if (metrics is None or m in metrics)
             and not m.startswith(stage_pre)]
    rows = []
    for m in names:
        r = verdict.summarize(mb[m]["slices"], mn[m]["slices"], mb[m]["better"], rel_magnitude,
                              regress_threshold)
        r.update(metric=m, unit=mb[m]["unit"], base_slices=mb[m]["slices"],
                 new_slices=mn[m]["slices"])
        rows.append(r)
    sb, sn = store.stages(base_id), store.stages(new_id)
    def per_slice(ms):
        return {m[len(stage_pre):-len(".mean_us")]: v["slices"] for m, v in ms.items()
                if m.startswith(stage_pre)}
    # Each traced workload on its own: its timed verdict says whether its total moved.
    attrs = []
    for prefix, metric in TRACED:
        hb, hn = _workload(sb, prefix), _workload(sn, prefix)
        if not (hb and hn):
            continue
        tm = next((r for r in rows if r["metric"] == metric), None)
        a = attribution.attribute(hb, hn, slices_base=_workload(per_slice(mb), prefix),
                                  slices_new=_workload(per_slice(mn), prefix),
                                  total_moved=(tm["verdict"] == verdict.DIFFERENT) if tm else None)
        if a is None:
            continue
        a["workload"], a["prefix"] = metric.split(".")[0], prefix
        if tm:
            a["total_from"] = f"{metric} {tm['verdict']}"
        attrs.append(a)
    attr = next((a for a in attrs if a["prefix"] == ""), None)
    trends = {}
    for m in names:
        hist = store.history(m)
        med = [float(np.median(h[3])) for h in hist]
        cps = changepoint.detect(med, window, pvalue, min_magnitude) if len(med) >= 3 else []
        trends[m] = {"runs": [h[0] for h in hist], "dates": [h[1] for h in hist],
                     "medians": med, "change_points": [c.index for c in cps],
                     "cp_detail": cps}
    heat = []
    for r in store.runs():
        st = store.stages(r["id"]).get(attribution.TOTAL)
        if st:
            heat.append((r["id"], r["date"], st["buckets"]))
    return {"base": base, "new": new, "rows": rows, "attribution": attr, "attributions": attrs,
            "stages_base": sb,
            "stages_new": sn, "trends": trends, "heat": heat,
            "params": {"magnitude": rel_magnitude, "regress_threshold": regress_threshold,
                       "window": window, "pvalue": pvalue},
            "regressions": [r["metric"] for r in rows if r["regression"]],
            "unknown": [r["metric"] for r in rows if r["verdict"] == verdict.UNKNOWN]}


def _fmt(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    a = abs(v)
    return f"{v:.4g}" if a < 1e5 else f"{v:.0f}"


def _machine_line(m):
    q = (m.get("qemu_hash") or "n/a")[:12]
    return (f"{m.get('cpu_model', 'n/a')}, {m.get('cores', 'n/a')} cores, kernel "
            f"{m.get('kernel', 'n/a')}, QEMU {q} (fingerprint {m.get('fingerprint', 'n/a')})")


def _run_line(r):
    return (f"run {r['id']}: {r['commit'][:12]}{' (dirty)' if r['dirty'] else ''} "
            f"{r['date']}{' [' + r['label'] + ']' if r.get('label') else ''}")


def _attr_lines(a):
    if not a:
        return ["stage attribution: n/a (a run has no per-stage histograms)"]
    out = [f"stage attribution of {a.get('workload', 'P1')}'s traced jobs (fraclat histograms; "
           f"means {'exact, from sum_ns' if a['exact_means'] else 'estimated from log2 buckets'}): "
           f"total {a['total_base_ns'] / 1e3:.2f} -> {a['total_new_ns'] / 1e3:.2f} us "
           f"({a['total_shift_ns'] / 1e3:+.2f} us)"]
    tp = a.get("total_p")
    out.append(f"  test: {a.get('test', 'chi-square over the pooled buckets')}; traced total p "
               + (f"{tp:.2g}" if tp is not None else "n/a")
               + (f"; whether the total moved: {a['total_from']}" if a.get("total_from") else ""))
    if a["named"]:
        out.append("  stage(s) that moved: " + ", ".join(
            f"{s} ({next(r['share'] for r in a['stages'] if r['stage'] == s) * 100:.0f}% "
            "of the shift)" for s in a["named"]) + f"; together {a['explained'] * 100:.0f}%")
    elif not a.get("total_moved", True):
        out.append(f"  {a.get('total_from') or 'the traced total'}: the total is not a "
                   "confirmed move, no stage named")
    else:
        out.append(f"  no stage moved significantly (p <= {a.get('alpha', 0.01):g}) the way the "
                   "total did")
    out.append("")
    out.append("| stage | base mean us | new mean us | shift us | share | p | p of the means |")
    out.append("|---|---|---|---|---|---|---|")
    for r in a["stages"]:
        pm = f"{r['p_mean']:.2g}" if r.get("p_mean") is not None else "-"
        out.append(f"| {r['stage']} | {r['base_mean_ns'] / 1e3:.2f} | {r['new_mean_ns'] / 1e3:.2f}"
                   f" | {r['shift_ns'] / 1e3:+.2f} | {r['share'] * 100:.0f}% | {r['p']:.2g} | "
                   f"{pm} |")
    return out


def lkp_block(rep):
    """The same rows as the kernel test robot prints its comparisons."""
    def sd(x):
        return f"{x:3.0f}%" if x is not None else " n/a"
    out = [f"{rep['base']['commit'][:12]:>16} {rep['new']['commit'][:12]:>27}",
           "---------------- ---------------------------",
           "         %stddev     %change         %stddev",
           "             \\          |                \\"]
    for r in rep["rows"]:
        out.append(f"{_fmt(r['base']):>10} \u00b1{sd(r['base_stddev_pct'])} "
                   f"{r['change'] * 100:+9.1f}% {_fmt(r['new']):>10} \u00b1{sd(r['new_stddev_pct'])}"
                   f"  {r['metric']}  {r['verdict']}{'  REGRESSION' if r['regression'] else ''}")
    return out


def markdown(rep):
    b, n, p = rep["base"], rep["new"], rep["params"]
    out = ["# frac regression report", ""]
    if rep["regressions"]:
        out.append(f"**{len(rep['regressions'])} regression(s)**: " + ", ".join(
            f"{r['metric']} {r['change'] * 100:+.1f}%" for r in rep["rows"] if r["regression"]))
    else:
        out.append("No confirmed regression (DIFFERENT and worse by >= "
                   f"{p['regress_threshold'] * 100:.0f}%).")
    if rep["unknown"]:
        out.append(f"UNKNOWN (more slices would decide): {', '.join(rep['unknown'])}")
    out += ["", f"commit: {_run_line(n)}", f"base:   {_run_line(b)}",
            f"machine: {_machine_line(n['machine'])}"]
    if b["machine"].get("fingerprint") != n["machine"].get("fingerprint"):
        out.append(f"base machine differs: {_machine_line(b['machine'])}")
    out.append(f"parameters: {n.get('params') or {}}; device: {n.get('device') or {}}")
    out.append(f"verdicts: p = min(KS, MWU); DIFFERENT at p <= 0.01, SAME above the threshold "
               f"for a {p['magnitude'] * 100:.0f}% effect at the sample count; change points: "
               f"E-divisive, window {p['window']}, p {p['pvalue']}")
    out += ["", "| metric | base | new | %change | %stddev base/new | 95% CI of ratio | p | "
            "verdict |", "|---|---|---|---|---|---|---|---|"]
    for r in rep["rows"]:
        ci = r["ci"]
        cis = f"{ci[0]:.3f}-{ci[1]:.3f}" if ci[0] is not None else "n/a"
        sd = "/".join(f"{x:.1f}" if x is not None else "n/a"
                      for x in (r["base_stddev_pct"], r["new_stddev_pct"]))
        mark = " **regression**" if r["regression"] else " (better)" if r["improvement"] else ""
        out.append(f"| {r['metric']} ({r['unit'] or ''}, {r['better']} is better) | "
                   f"{_fmt(r['base'])} | {_fmt(r['new'])} | {r['change'] * 100:+.1f}% | {sd} | "
                   f"{cis} | {_fmt(r['p'])} | {r['verdict']} ({r['n_base']}/{r['n_new']} "
                   f"slices){mark} |")
    out += ["", "```"] + lkp_block(rep) + ["```"]
    for a in rep.get("attributions") or [None]:
        out += [""] + _attr_lines(a)
    cps = [(m, t) for m, t in rep["trends"].items() if t["change_points"]]
    out += ["", "change points in the history (run ids): " + (
        "; ".join(f"{m}: " + ", ".join(
            f"run {t['runs'][c.index]} ({c.rel_change() * 100:+.1f}%, p {c.pvalue:.2g})"
            for c in t["cp_detail"]) for m, t in cps) if cps else "none")]
    return "\n".join(out) + "\n"


# ---- plots ----
def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def plot_hist(sb, sn, stage):
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for st, lab, col in ((sb, "base", "tab:blue"), (sn, "new", "tab:red")):
        h = st.get(stage)
        if not h:
            continue
        lows = np.array([max(b["low"], 1) for b in h["buckets"]], float)
        cnt = np.array([b["count"] for b in h["buckets"]], float)
        ax.bar(np.log2(lows) + (0.2 if lab == "new" else -0.2), cnt / cnt.sum(), width=0.4,
               label=lab, color=col, alpha=0.8)
    ax.set_xlabel("log2(latency ns) bucket")
    ax.set_ylabel("share of jobs")
    w, _, st = stage.rpartition(":")
    ax.set_title(f"{(w.upper() + ' ') if w else ''}{st}: log2 histogram, base vs new")
    ax.legend()
    return _png(fig)


def plot_cdf(r):
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for s, lab, col in ((r["base_slices"], "base", "tab:blue"), (r["new_slices"], "new", "tab:red")):
        x = np.sort(s)
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=lab, color=col)
    ax.set_xlabel(f"{r['metric']} ({r['unit'] or ''})")
    ax.set_ylabel("CDF over slices")
    ax.set_title(f"{r['metric']}: {r['verdict']}")
    ax.legend()
    return _png(fig)


def plot_stages(a, workload="P1"):
    fig, ax = plt.subplots(figsize=(6, 3.4))
    left = np.zeros(2)
    cmap = plt.get_cmap("tab10")
    for i, r in enumerate(a["stages"]):
        vals = np.array([r["base_mean_ns"], r["new_mean_ns"]]) / 1e3
        ax.barh(["base", "new"], vals, left=left, color=cmap(i % 10), label=r["stage"])
        left += vals
    ax.set_xlabel("mean latency per stage, us (stacked)")
    ax.legend(fontsize=7, ncol=3, loc="lower right")
    ax.set_title(f"per-stage means, {workload}'s traced jobs")
    return _png(fig)


def plot_heat(heat):
    lows = sorted({b["low"] for _, _, bs in heat for b in bs})
    m = np.zeros((len(lows), len(heat)))
    for j, (_, _, bs) in enumerate(heat):
        tot = sum(b["count"] for b in bs) or 1
        for b in bs:
            m[lows.index(b["low"]), j] = b["count"] / tot
    fig, ax = plt.subplots(figsize=(7, 3.4))
    im = ax.imshow(m, aspect="auto", origin="lower", cmap="viridis", interpolation="nearest")
    ax.set_yticks(range(len(lows)))
    ax.set_yticklabels([f"{int(np.log2(max(x, 1)))}" for x in lows], fontsize=7)
    ax.set_xticks(range(len(heat)))
    ax.set_xticklabels([str(h[0]) for h in heat], fontsize=7, rotation=90)
    ax.set_xlabel("run id (in date order)")
    ax.set_ylabel("log2(total latency ns)")
    ax.set_title("total latency over time (share of jobs per bucket)")
    fig.colorbar(im, ax=ax)
    return _png(fig)


def plot_trend(metric, t, unit):
    fig, ax = plt.subplots(figsize=(7, 3))
    x = np.arange(len(t["medians"]))
    ax.plot(x, t["medians"], marker=".", color="tab:blue")
    for c in t["change_points"]:
        ax.axvline(c - 0.5, color="tab:red", linestyle="--")
    ax.set_xticks(x[::max(1, len(x) // 12)])
    ax.set_xticklabels([str(t["runs"][i]) for i in x[::max(1, len(x) // 12)]], fontsize=7)
    ax.set_xlabel("run id")
    ax.set_ylabel(unit or "")
    ax.set_title(f"{metric}: median per run, change points dashed")
    return _png(fig)


def html(rep, md_text):
    imgs = []
    for a in rep.get("attributions") or []:
        w = a.get("workload", "P1")
        for stage in [attribution.TOTAL] + [r["stage"] for r in a["stages"]]:
            st = a.get("prefix", "") + stage
            if st in rep["stages_base"] or st in rep["stages_new"]:
                imgs.append((f"log2 histogram: {w} {stage}",
                             plot_hist(rep["stages_base"], rep["stages_new"], st)))
        imgs.append((f"per-stage stacked means: {w}", plot_stages(a, w)))
    if rep["heat"]:
        imgs.append(("latency heatmap over time", plot_heat(rep["heat"])))
    for r in rep["rows"]:
        imgs.append((f"CDF {r['metric']}", plot_cdf(r)))
    for m, t in rep["trends"].items():
        unit = next((r["unit"] for r in rep["rows"] if r["metric"] == m), "")
        imgs.append((f"trend {m}", plot_trend(m, t, unit)))
    e = htmlmod.escape
    body = "\n".join(f'<figure><img alt="{e(t)}" src="data:image/png;base64,{d}">'
                     f"<figcaption>{e(t)}</figcaption></figure>" for t, d in imgs)
    title = f"frac regression report: {rep['new']['commit'][:12]} vs {rep['base']['commit'][:12]}"
    # The load check writes what it saw into the DOM, so a headless `--dump-dom` can read it.
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{e(title)}</title>
<style>body{{font-family:sans-serif;margin:1em 2em;background:#fff;color:#111}}
pre{{background:#f4f4f4;padding:1em;white-space:pre-wrap}}
figure{{display:inline-block;margin:0.5em;vertical-align:top}}
figcaption{{font-size:80%;color:#555}}</style></head>
<body data-images="{len(imgs)}">
<h1>{e(title)}</h1>
<pre>{e(md_text)}</pre>
{body}
<script>
window.addEventListener("load", function () {{
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++)
    if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  document.body.setAttribute("data-images-loaded", ok + "/" + imgs.length);
}});
</script>
</body></html>
"""
