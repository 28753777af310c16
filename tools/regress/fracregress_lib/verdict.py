# SPDX-License-Identifier: MIT
"""Two-run verdicts, as Chromium's pinpoint makes them, and the bootstrap CI of the ratio.

Owns: compare() (DIFFERENT / SAME / UNKNOWN from the slices of one metric in two runs),
high_threshold() (the effect-size- and sample-count-dependent SAME threshold), the
sequential loop that adds slices to an UNKNOWN up to a cap, and median_ratio_ci().

The logic follows catapult's dashboard/pinpoint/models/compare/compare.py: p = min(KS p,
Mann-Whitney U p), because MWU misses changes of spread and KS is weak on discrete values;
DIFFERENT when p <= 0.01 (the low threshold); SAME when p > the high threshold; UNKNOWN in
between. The high threshold is pinpoint's construction (thresholds_performance.py): for two
normal samples of size n whose means are `magnitude` interquartile ranges apart, the 99th
percentile of MWU's p-value, so a real difference of that size is called SAME at most 1% of the
time. pinpoint ships a table from a million simulations; here the percentile is simulated
on first use (4000 trials, fixed seed) and cached in memory and in a JSON file
($FRAC_REGRESS_CACHE, default results/regress-thresholds.json). Sample counts above 30 are
rounded down to a multiple of 10 (the threshold falls with n, so this errs towards UNKNOWN).
Against pinpoint's published table (README.md, "What was measured") the simulated values agree
to within the simulation's own spread at the 99th percentile.
"""

import json
import os

import numpy as np
from scipy import stats

LOW_THRESHOLD = 0.01
DIFFERENT, SAME, UNKNOWN = "DIFFERENT", "SAME", "UNKNOWN"
# pinpoint's range of magnitudes (multiples of the IQR); finer effects need more samples than a
# CI run can afford, coarser ones need two.
MAGNITUDE_RANGE = (0.3, 4.0)
SIM_TRIALS = 4000


_CACHE = None
CACHE_PATH = os.environ.get("FRAC_REGRESS_CACHE", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "results",
    "regress-thresholds.json"))


def _cache():
    global _CACHE
    if _CACHE is None:
        try:
            with open(CACHE_PATH) as f:
                _CACHE = {k: float(v) for k, v in json.load(f).items()}
        except (OSError, ValueError, AttributeError):
            _CACHE = {}
    return _CACHE


def _high_threshold(mag10, n):
    key = f"{mag10},{n},{SIM_TRIALS}"
    c = _cache()
    if key not in c:
        c[key] = _simulate(mag10, n)
        try:
            os.makedirs(os.path.dirname(CACHE_PATH), exist_ok=True)
            tmp = CACHE_PATH + f".{os.getpid()}"
            with open(tmp, "w") as f:
                json.dump(c, f)
            os.replace(tmp, CACHE_PATH)
        except OSError:
            pass        # an unwritable cache costs time, not correctness
    return c[key]


def _simulate(mag10, n):
    rng = np.random.default_rng(1000 * mag10 + n)
    d = mag10 / 10 * (stats.norm.ppf(0.75) - stats.norm.ppf(0.25))
    a = rng.standard_normal((SIM_TRIALS, n))
    b = rng.standard_normal((SIM_TRIALS, n)) + d
    p = stats.mannwhitneyu(a, b, alternative="two-sided", axis=1, method="asymptotic").pvalue
    return float(min(1.0, np.percentile(p, 99)))


def high_threshold(magnitude_iqr, n):
    """SAME threshold for samples of size n and an effect of `magnitude_iqr` IQRs."""
    m = min(max(magnitude_iqr, MAGNITUDE_RANGE[0]), MAGNITUDE_RANGE[1])
    n = max(2, min(int(n), 400))
    if n > 30:
        n -= n % 10
    return _high_threshold(int(round(m * 10)), n)


def magnitude_in_iqr(a, b, rel):
    """The effect worth finding, `rel` of a's median, in multiples of the pooled IQR (as
    pinpoint's job state turns a comparison magnitude into IQRs)."""
    iqr = stats.iqr(np.concatenate([a, b]))
    med = abs(float(np.median(a)))
    if iqr <= 0:
        return MAGNITUDE_RANGE[1]
    return rel * med / iqr


def pvalue(a, b):
    """min(KS, MWU) two-sided p-value of two samples."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    # Two constant samples (a stage the device model times exactly): equal ones are the same,
    # different ones still get the tests' p, which the sample sizes bound (5 and 5: 0.004),
    # not 0.
    if np.all(a == a[0]) and np.all(b == b[0]) and a[0] == b[0]:
        return 1.0
    ks = stats.ks_2samp(a, b).pvalue
    mwu = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
    return float(min(ks, mwu))


def compare(a, b, rel_magnitude=0.10):
    """(verdict, p, low, high) for slices a (base) and b (new)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) == 0 or len(b) == 0:
        return UNKNOWN, None, LOW_THRESHOLD, None
    n = min(len(a), len(b))
    high = high_threshold(magnitude_in_iqr(a, b, rel_magnitude), n)
    p = pvalue(a, b)
    if p <= LOW_THRESHOLD:
        v = DIFFERENT
    elif p > high:
        v = SAME
    else:
        v = UNKNOWN
    return v, p, LOW_THRESHOLD, high


def sequential(more_a, more_b, start=10, step=10, cap=60, rel_magnitude=0.10):
    """pinpoint's loop: compare; while UNKNOWN and below `cap` slices a side, ask each side
    for `step` more (more_x(k) returns k new slices). Returns (verdict, p, a, b); the caller
    reports an UNKNOWN that stayed UNKNOWN at the cap as such."""
    a, b = list(more_a(start)), list(more_b(start))
    while True:
        v, p, _, _ = compare(a, b, rel_magnitude)
        if v != UNKNOWN or min(len(a), len(b)) >= cap:
            return v, p, a, b
        a += list(more_a(step))
        b += list(more_b(step))


def median_ratio_ci(a, b, confidence=0.95, n_resamples=2000, seed=0):
    """Bootstrap CI (BCa when scipy can, percentile otherwise) of median(b) / median(a)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or len(b) < 2 or np.median(a) == 0:
        return None, None

    def ratio(x, y, axis=-1):
        return np.median(y, axis=axis) / np.median(x, axis=axis)

    for method in ("BCa", "percentile"):
        try:
            with np.errstate(all="ignore"):
                res = stats.bootstrap((a, b), ratio, vectorized=True, paired=False,
                                      confidence_level=confidence, n_resamples=n_resamples,
                                      method=method, random_state=np.random.default_rng(seed))
            lo, hi = res.confidence_interval
            if np.isfinite(lo) and np.isfinite(hi):
                return float(lo), float(hi)
        except Exception:
            continue
    return None, None


def summarize(a, b, better="lower", rel_magnitude=0.10, regress_threshold=0.05):
    """Everything the report's row needs for one metric."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    v, p, low, high = compare(a, b, rel_magnitude)
    ma, mb = float(np.median(a)), float(np.median(b))
    change = (mb / ma - 1.0) if ma else float("nan")
    worse = change > 0 if better == "lower" else change < 0
    lo, hi = median_ratio_ci(a, b)
    return {"base": ma, "new": mb, "change": change,
            "base_stddev_pct": float(np.std(a, ddof=1) / abs(ma) * 100) if len(a) > 1 and ma else None,
            "new_stddev_pct": float(np.std(b, ddof=1) / abs(mb) * 100) if len(b) > 1 and mb else None,
            "n_base": len(a), "n_new": len(b), "verdict": v, "p": p, "low": low, "high": high,
            "ci": (lo, hi), "better": better,
            "regression": v == DIFFERENT and worse and abs(change) >= regress_threshold,
            "improvement": v == DIFFERENT and not worse and abs(change) >= regress_threshold}
