# SPDX-License-Identifier: MIT
"""Change points in a metric's history: E-divisive means with a t-test, as Apache Otava does.

Owns: detect() and its two steps, following otava/analysis.py (compute_change_points,
split, merge) and otava/change_point_divisive/ (the detector loop, the q-hat of the pair
distance calculator, the t-test tester):
 - split: windows of `window` points, half a window apart; in each, E-divisive picks the
   point maximising q-hat (Matteson & James) over the intervals found so far and keeps it
   while a two-sided Student t-test of the two sides has p <= 10 x `pvalue` ("weak" points);
   a window starts at the last point found or half a window on, whichever is later;
 - merge: repeatedly drop the weak point with the largest p-value (or, once all are below
   `pvalue`, the one with the smallest relative change if that is <= `min_magnitude`), and
   recompute its neighbours' t-tests on the intervals that are left.
Defaults are Otava's: window 50, p-value 0.001. One deviation: after dropping a point, merge
recomputes its left and right neighbours (whose intervals changed); Otava's merge recomputes
the right neighbour and the one after it. The q-hat here is computed from a 2-D prefix
sum of the distance matrix (all (tau, kappa) at once), not Otava's H/V cumulative sums; both
give Q(tau, kappa) = 2/(n+m) sum|X-Y| - 2m/((n+m)(n-1)) sum_{i<k}|Xi-Xk| - 2n/((n+m)(m-1))
sum_{j<k}|Yj-Yk| with X = Z[start:tau], Y = Z[tau:kappa].
"""

from dataclasses import dataclass

import numpy as np
from scipy.stats import ttest_ind_from_stats


@dataclass
class ChangePoint:
    index: int          # first point of the new regime
    qhat: float = 0.0
    pvalue: float = 1.0
    mean_before: float = 0.0
    mean_after: float = 0.0
    std_before: float = 0.0
    std_after: float = 0.0

    def rel_change(self):
        return self.mean_after / self.mean_before - 1.0 if self.mean_before else 0.0

    def magnitude(self):
        fwd = self.rel_change()
        bwd = self.mean_before / self.mean_after - 1.0 if self.mean_after else 0.0
        return max(abs(fwd), abs(bwd))


def _qhat_candidate(z):
    """(tau, qhat) maximising Q over 0 < tau < kappa <= len(z), tau relative to z."""
    n = len(z)
    d = np.abs(z[:, None] - z[None, :])
    s = np.zeros((n + 1, n + 1))
    s[1:, 1:] = d.cumsum(0).cumsum(1)

    def block(r0, r1, c0, c1):   # sum d[r0:r1, c0:c1], broadcasting
        return s[r1, c1] - s[r0, c1] - s[r1, c0] + s[r0, c0]

    tau = np.arange(1, n)[:, None]          # X = z[0:tau], n_x = tau
    kappa = np.arange(2, n + 1)[None, :]    # Y = z[tau:kappa], n_y = kappa - tau
    valid = kappa > tau
    tk = np.where(valid, kappa, tau + 1)
    nx, ny = tau.astype(float), (tk - tau).astype(float)
    between = block(0, tau, tau, tk)
    within_x = block(0, tau, 0, tau) / 2
    within_y = block(tau, tk, tau, tk) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        cx = np.where(nx > 1, 2 * ny / ((nx + ny) * (nx - 1)), 0.0)
        cy = np.where(ny > 1, 2 * nx / ((nx + ny) * (ny - 1)), 0.0)
    q = 2 / (nx + ny) * between - cx * within_x - cy * within_y
    q = np.where(valid, q, -np.inf)
    i, _ = np.unravel_index(np.argmax(q), q.shape)
    return int(i + 1), float(q.max())


def _intervals(cps, n):
    bounds = [0] + [c.index for c in cps] + [n]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)
            if bounds[i] != bounds[i + 1]]


def _ttest(left, right):
    m1, m2 = float(np.mean(left)), float(np.mean(right))
    s1 = float(np.std(left)) if len(left) >= 2 else 0.0
    s2 = float(np.std(right)) if len(right) >= 2 else 0.0
    p = 1.0
    if len(left) + len(right) - 2 > 0:
        with np.errstate(all="ignore"):
            p = ttest_ind_from_stats(m1, s1, len(left), m2, s2, len(right)).pvalue
        if not np.isfinite(p):
            p = 1.0 if m1 == m2 else 0.0
    return float(p), m1, m2, s1, s2


def _tested(index, qhat, series, cps_sorted):
    """A change point at `index` with its t-test against the neighbouring intervals."""
    lo = max([c.index for c in cps_sorted if c.index < index], default=0)
    hi = min([c.index for c in cps_sorted if c.index > index], default=len(series))
    p, m1, m2, s1, s2 = _ttest(series[lo:index], series[index:hi])
    return ChangePoint(index, qhat, p, m1, m2, s1, s2)


def _edivisive(z, max_p):
    """The detector loop on one window: best candidate of all intervals, kept while
    significant; stops at the first that is not."""
    cps = []
    while True:
        best = None
        for a, b in _intervals(cps, len(z)):
            if b - a > 1:
                tau, q = _qhat_candidate(z[a:b])
                if best is None or q > best[1]:
                    best = (a + tau, q)
        if best is None:
            return cps
        cp = _tested(best[0], best[1], z, cps)
        if cp.pvalue > max_p:
            return cps
        cps = sorted(cps + [cp], key=lambda c: c.index)


def split(series, window=50, max_p=0.01):
    series = np.asarray(series, float)
    step = max(1, window // 2)
    start, found = 0, {}
    while start < len(series):
        end = min(start + window, len(series))
        new = _edivisive(series[start:end], max_p)
        last = start + new[-1].index if new else 0
        for c in new:
            found.setdefault(start + c.index, c.qhat)
        start = max(last, start + step)
    cps = []
    for idx in sorted(found):
        cps.append(ChangePoint(idx, found[idx]))
    return [_tested(c.index, c.qhat, series, [o for o in cps if o is not c]) for c in cps]


def merge(cps, series, max_p=0.001, min_magnitude=0.0):
    series = np.asarray(series, float)
    cps = list(cps)
    while cps:
        weakest = max(cps, key=lambda c: c.pvalue)
        if weakest.pvalue < max_p:
            weakest = min(cps, key=lambda c: c.magnitude())
            if weakest.magnitude() > min_magnitude:
                return cps
        i = cps.index(weakest)
        del cps[i]
        for j in (i - 1, i):
            if 0 <= j < len(cps):
                cps[j] = _tested(cps[j].index, cps[j].qhat, series,
                                 [c for k, c in enumerate(cps) if k != j])
    return cps


def detect(series, window=50, pvalue=0.001, min_magnitude=0.0):
    """Otava's compute_change_points: split with the relaxed first-pass p-value, then merge."""
    if window < 2:
        raise ValueError("window must be at least 2")
    if not 0 < pvalue < 1:
        raise ValueError("p-value must be in (0, 1)")
    first = pvalue * 10 if pvalue < 0.05 else (pvalue * 2 if pvalue < 0.5 else pvalue)
    return merge(split(series, window, first), series, pvalue, min_magnitude)
