# SPDX-License-Identifier: MIT
"""Stage attribution: which stage's histogram moved, and how much of the total it explains.

Owns: attribute(). fraclat's five stages of a job add up to its total exactly (bpf/README.md:
the device times are clamped into [run, interrupt]), so the mean total is the sum of the
stage means, and a change of the mean total is the sum of the stages' changes: a stage's
share of the shift is its mean change over the total's. Means come from fraclat's exact
`sum_ns` / `count` when the run has them, else from the log2 buckets (geometric bucket
middles, an estimate; the result says which).

Whether a stage moved is tested one of two ways. With per-slice means (the A/B harness
traces several slices a side, interleaved as the timed ones are), the test is on each
slice's *fraction* of the total (stage mean / total mean): the host's load scales every
stage of a slice alike, and the fraction cancels that common drift, where a test on the
stage means would see it in every stage. p = min(KS, MWU) over the slices, as the verdicts
do. A stage that is nearly all of the total cannot move its fraction (P3's copies: exec is
97% of a job; a DMA 20% slower moved exec's mean from 67.1 to 80.5 ms in every traced slice
and its fraction not at all, p 0.36), so a stage that is at least half of the total
(DOMINANT) also counts as moved when its means themselves moved (the same test on the
per-slice means, `p_mean`), the way the total did, while the rest of the job (total - stage)
did not move (`p_rest` > alpha): a slowdown common to every stage moves the rest too (a
review's case: head 5% slower in every stage named exec, 60% of the total, by its means
alone). Only such a stage: for the others the common drift is what the fraction is there to
cancel (on the means, a slice-to-slice drift of 10% named a second stage beside an injected
one). Without slices: a chi-square test of homogeneity of the two runs' pooled bucket counts,
the weaker test: over thousands of jobs it calls any drift of the host between two traced
slices significant (measured: two runs of the same build, one traced slice each, gave
p < 1e-30 on every stage but exec, zero for NOPs). A result says which test it used.

Stages are named only when the total moved: `total_moved` as the caller knows it (the report
passes the verdict of the timed metric the traced workload measures), else the total's own
test (per-slice means, or chi-square). Then each stage that moved (p <= alpha) the same way as
the total, taken in order of share, until `explain` (80%) of the total's shift is reached.
"""

import numpy as np
from scipy.stats import chi2_contingency

from . import verdict

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


MIN_SLICES = 3
# A stage at least this part of the total (per-slice median) is tested on its means too.
DOMINANT = 0.5


def attribute(base, new, alpha=0.01, explain=0.8, slices_base=None, slices_new=None,
              require_total=True, total_moved=None):
    """base, new: {stage: {"count", "sum_ns", "buckets"}} (pooled); slices_base/new:
    {stage: [per-slice mean]} when the runs traced several slices. Returns a dict with the
    total's shift, a row per stage (means, shift, share, p), the test used and the stages
    named (may be empty). require_total=False names moved stages even when the total did
    not move (the stage test alone; the report never does this)."""
    stages = [s for s in STAGE_ORDER if s in base and s in new]
    stages += sorted(s for s in base if s in new and s not in stages and s != TOTAL)
    if not stages:
        return None
    sa, sb = slices_base or {}, slices_new or {}
    # A stage is tested per slice when both runs have its mean in every traced slice
    # (fraclat leaves a stage without jobs out of a slice, and a fraction pairs a slice's
    # stage with that slice's total); others fall back to the pooled chi-square, and say so.
    def sliced(s):
        return all(len(x.get(s, [])) >= MIN_SLICES and len(x[s]) == len(x.get(TOTAL, []))
                   for x in (sa, sb))
    per_stage = {s: sliced(s) and sliced(TOTAL) for s in stages + [TOTAL]}
    per_slice = any(per_stage.values())
    pooled = [s for s in stages if not per_stage[s]]

    def p_of(s, fraction=True):
        if not per_stage[s]:
            return hist_pvalue(base[s], new[s])
        a, b = np.asarray(sa[s], float), np.asarray(sb[s], float)
        if s != TOTAL and fraction:     # the fraction of the total, slice by slice
            a, b = a / np.asarray(sa[TOTAL], float), b / np.asarray(sb[TOTAL], float)
        return verdict.pvalue(a, b)

    rows, exact = [], True
    for s in stages:
        ma, ea = _mean(base[s])
        mb, eb = _mean(new[s])
        exact = exact and ea and eb
        r = {"stage": s, "base_mean_ns": ma, "new_mean_ns": mb, "shift_ns": mb - ma,
             "p": p_of(s)}
        if per_stage[s]:    # which way the stage's fraction of the total went
            fa = np.median(np.asarray(sa[s], float) / np.asarray(sa[TOTAL], float))
            fb = np.median(np.asarray(sb[s], float) / np.asarray(sb[TOTAL], float))
            r["fraction_base"], r["fraction_new"] = float(fa), float(fb)
            r["p_mean"] = p_of(s, fraction=False)
            # the rest of the job (total - stage), slice by slice: a common drift moves it too
            r["p_rest"] = verdict.pvalue(
                np.asarray(sa[TOTAL], float) - np.asarray(sa[s], float),
                np.asarray(sb[TOTAL], float) - np.asarray(sb[s], float))
        rows.append(r)
    if TOTAL in base and TOTAL in new:
        ta, tb = _mean(base[TOTAL])[0], _mean(new[TOTAL])[0]
        tp = p_of(TOTAL)
    else:
        ta, tb = sum(r["base_mean_ns"] for r in rows), sum(r["new_mean_ns"] for r in rows)
        tp = None
    total_shift = tb - ta
    for r in rows:
        r["share"] = r["shift_ns"] / total_shift if total_shift else 0.0
    named, acc = [], 0.0
    moved = total_moved if total_moved is not None else (tp is None or tp <= alpha)
    if moved or not require_total:
        for r in sorted(rows, key=lambda r: -r["share"]):
            if acc >= explain:
                break
            if r["share"] <= 0:
                continue
            # per slice: the stage's part of the total grew the way the total went (a stage
            # that only kept its part while another grew has not moved); or, for a stage that
            # is most of the total, its means moved (share > 0: the way the total did)
            if per_stage[r["stage"]]:
                by_fraction = r["p"] <= alpha and \
                    (r["fraction_new"] - r["fraction_base"]) * total_shift > 0
                by_mean = r["fraction_base"] >= DOMINANT and r["p_mean"] <= alpha and \
                    r["p_rest"] > alpha
                if not (by_fraction or by_mean):
                    continue
            elif r["p"] > alpha:
                continue
            named.append(r["stage"])
            acc += r["share"]
    return {"total_base_ns": ta, "total_new_ns": tb, "total_shift_ns": total_shift,
            "total_p": tp, "total_moved": moved, "stages": rows, "named": named, "explained": acc,
            "exact_means": exact, "alpha": alpha,
            "test": (f"per-slice fraction of the total, min(KS, MWU), {len(sa[TOTAL])}/"
                     f"{len(sb[TOTAL])} slices"
                     + (f"; chi-square over the pooled buckets for {', '.join(pooled)}"
                        if pooled else "")
                     if per_slice else "chi-square over the pooled buckets")}
