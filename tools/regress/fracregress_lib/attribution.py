# SPDX-License-Identifier: MIT
"""Stage attribution: which stage's histogram moved, and how much of the total it explains.

Owns: attribute(). fraclat's five stages of a job add up to its total exactly (bpf/README.md:
the device times are clamped into [run, interrupt]), so the mean total is the sum of the
stage means, and a change of the mean total is the sum of the stages' changes: a stage's
share of the shift is its mean change over the total's. Means come from fraclat's exact
`sum_ns` / `count` when the run has them, else from the log2 buckets (geometric bucket
middles, an estimate; the result says which).

A stage is named when its histogram moved (chi-square test of homogeneity of the two runs'
bucket counts, p <= alpha), it moved the same way as the total, and, taken in order of
share, it is among the stages needed to reach `explain` (80%) of the total's shift.
"""

import numpy as np
from scipy.stats import chi2_contingency

STAGE_ORDER = ["submit_run", "run_start", "exec", "end_irq", "irq_signal"]
TOTAL = "total"


def _mean(h):
    if h.get("sum_ns") is not None and h.get("count"):
        return h["sum_ns"] / h["count"], True
    n = sum(b["count"] for b in h["buckets"])
    if not n:
        return 0.0, False
    mids = [np.sqrt(max(b["low"], 1) * (b["high"] if b.get("high") else 2 * max(b["low"], 1)))
            for b in h["buckets"]]
    return float(np.dot(mids, [b["count"] for b in h["buckets"]]) / n), False


def hist_pvalue(ha, hb):
    """Chi-square homogeneity p-value of two histograms' bucket counts (1.0 if one bucket)."""
    lows = sorted({b["low"] for b in ha["buckets"]} | {b["low"] for b in hb["buckets"]})
    if len(lows) < 2:
        return 1.0
    ca = {b["low"]: b["count"] for b in ha["buckets"]}
    cb = {b["low"]: b["count"] for b in hb["buckets"]}
    table = np.array([[ca.get(x, 0) for x in lows], [cb.get(x, 0) for x in lows]], float)
    table = table[:, table.sum(0) > 0]
    if table.shape[1] < 2 or (table.sum(1) == 0).any():
        return 1.0
    return float(chi2_contingency(table)[1])


def attribute(base, new, alpha=0.01, explain=0.8):
    """base, new: {stage: {"count", "sum_ns", "buckets"}}. Returns a dict with the total's
    shift, a row per stage (means, shift, share, p) and the stages named (may be empty)."""
    stages = [s for s in STAGE_ORDER if s in base and s in new]
    stages += sorted(s for s in base if s in new and s not in stages and s != TOTAL)
    if not stages:
        return None
    rows, exact = [], True
    for s in stages:
        ma, ea = _mean(base[s])
        mb, eb = _mean(new[s])
        exact = exact and ea and eb
        rows.append({"stage": s, "base_mean_ns": ma, "new_mean_ns": mb, "shift_ns": mb - ma,
                     "p": hist_pvalue(base[s], new[s])})
    if TOTAL in base and TOTAL in new:
        ta, tb = _mean(base[TOTAL])[0], _mean(new[TOTAL])[0]
        tp = hist_pvalue(base[TOTAL], new[TOTAL])
    else:
        ta, tb = sum(r["base_mean_ns"] for r in rows), sum(r["new_mean_ns"] for r in rows)
        tp = None
    total_shift = tb - ta
    for r in rows:
        r["share"] = r["shift_ns"] / total_shift if total_shift else 0.0
    named, acc = [], 0.0
    for r in sorted(rows, key=lambda r: -r["share"]):
        if acc >= explain or r["share"] <= 0 or r["p"] > alpha:
            break
        named.append(r["stage"])
        acc += r["share"]
    return {"total_base_ns": ta, "total_new_ns": tb, "total_shift_ns": total_shift,
            "total_p": tp, "stages": rows, "named": named, "explained": acc,
            "exact_means": exact}
