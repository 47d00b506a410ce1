"""Exact threshold of the stability-based (thresholded) histogram with discrete Gaussian noise.

Mechanism. Every *observed* value v of a column gets the noisy count h_v + Z_v, Z_v i.i.d. discrete
Gaussian N_Z(0, sigma^2) (pmf proportional to exp(-z^2 / (2 sigma^2)) on the integers; Canonne, Kamath &
Steinke 2020); v is released, with its noisy count, iff h_v + Z_v > tau (Korolova et al. 2009).

Neighbours: add/remove one record, which adds 1 to one value's count. Two cases (Wilkins, Kifer, Zhang &
Karrer 2024, "Exact Privacy Analysis of the Gaussian Sparse Histogram Mechanism", with one partition
per record):

* the value is already observed in the smaller table: both outputs are the same post-processing of a
  vector of noisy counts that differ by 1 in one cell (L2 sensitivity 1), so the step is
  1/(2 sigma^2)-zCDP;
* the value is new (count 1 in the larger table, absent in the smaller): the larger table's output is,
  with probability 1 - p, distributed exactly as the smaller table's, and with probability
  p = P[1 + Z > tau] it also contains v, which the smaller table never releases. Its privacy profile is
  exactly delta(epsilon) = p for every epsilon >= ln(1/(1 - p)), and no decomposition in approximate
  zCDP (Bun & Steinke 2016, Def. 8.1) has a delta below p (the event "v released" has probability 0 on
  one side and p on the other).

So the step is (1/(2 sigma^2), p)-approximate zCDP and p is the smallest delta of that form: the exact
delta of the threshold is the tail P[Z > tau - 1] of the *discrete* Gaussian, not its sub-Gaussian
bound exp(-(tau - 1)^2 / (2 sigma^2)). Standalone, the whole profile of one column is
max(delta_Gauss(epsilon), p) (one case or the other, never both); the zCDP accountant composes the two
parts by adding them, which is what makes this delta composable with the rest of a run.

The continuous-Gaussian formula Phi(-(tau - 1) / sigma) does NOT carry over: the discrete tail
P[Z >= k] is about Phi(-(k - 1/2) / sigma) (each integer holds the mass of a unit interval around it),
larger than Phi(-k / sigma), so the tail is summed over the discrete pmf here.

Person-level neighbours (``privsample.privacy.unit``: add/remove one person, at most k records). The person's
records add at most k to values already observed (L2 change <= k, paid by sigma calibrated to sensitivity k) and
bring new values with counts c_1..c_j >= 1, sum_i c_i <= k; the outputs differ beyond the Gaussian part only when a
new value passes, so delta is the largest sum_i h(c_i), h(c) = P[c + Z > tau] = P[Z >= T + 1 - c], T = floor(tau)
(a union bound; as h >= 0 increases in c, the largest sum has sum_i c_i = k). Worst case: if h(k) < 1/2 then
T + 1 - k >= 1 (P[Z >= 0] > 1/2), so on c = 0..k the increments h(c) - h(c - 1) = P[Z = T + 1 - c] grow with c (the
pmf decreases on the positive integers): h is convex there. For j parts, majorization gives the largest sum at
(k - j + 1, 1, ..., 1), phi(j) = h(k - j + 1) + (j - 1) h(1), convex in j, so its largest value is at j = 1 or
j = k: the worst case is max(h(k), k h(1)) (one value held k times, or k values held once). If h(k) >= 1/2 that
threshold is refused anyway (delta < 1/2). :func:`person_stability_delta` computes it (the exact maximum over the
partitions of k when h(k) >= 1/2), :func:`person_stability_threshold` the smallest integer T with
h(k) <= delta and k h(1) <= delta: T = max(k - 1 + T_1(delta), T_1(delta / k)), T_1 = :func:`stability_threshold`
(both conditions are necessary, and together sufficient by the above). At k = 1 both are the row-level functions.

Numerics. :func:`discrete_gaussian_tail` returns an upper bound on P[Z >= k] within a relative 1e-9 of
it: the numerator is the exactly rounded sum (``math.fsum``) of the pmf terms from k to a point past
which they are below exp(-90) of the first, plus a geometric bound on the rest; the denominator is the
larger of its partial sum over |z| <= 14 sigma and sigma sqrt(2 pi) (Poisson summation:
sum_z exp(-z^2/(2 sigma^2)) = sigma sqrt(2 pi) sum_j exp(-2 pi^2 sigma^2 j^2) >= sigma sqrt(2 pi)), both
lower bounds; both carry a relative margin of 1e-10 for the floating-point exponentials and sums.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "discrete_gaussian_tail",
    "stability_delta",
    "stability_threshold",
    "person_stability_delta",
    "person_stability_threshold",
    "MAX_SIGMA",
    "TINY_TAIL",
]

MAX_SIGMA = 1e6  # above this the sums get long (O(sigma) terms); callers fall back to the sub-Gaussian bound
TINY_TAIL = 1e-299  # tails below this (where the exponentials underflow) are reported as this upper bound
_REL = 1e-10  # relative margin for float exp (a few ulp), the rounded exponent and the sums
_CUTOFF = 90.0  # terms beyond exp(-90) of the first are bounded geometrically, not summed
_CHUNK = 1 << 20


def _check_sigma(sigma: float) -> float:
    if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and 0 < sigma <= MAX_SIGMA):
        raise ValueError(f"sigma must be in (0, {MAX_SIGMA:g}], got {sigma!r}")
    return float(sigma)


def _sum_terms(sigma: float, lo: int, hi: int) -> float:
    """Sum of exp(-z^2 / (2 sigma^2)) over the integers lo..hi (|z| < 2^26, so z^2 is exact in a float)."""
    two_s2 = 2.0 * sigma * sigma
    parts = []
    for start in range(lo, hi + 1, _CHUNK):
        z = np.arange(start, min(start + _CHUNK, hi + 1), dtype=np.float64)
        parts.append(math.fsum(np.exp(-(z * z) / two_s2).tolist()))
    return math.fsum(parts)


def _normaliser_lower(sigma: float) -> float:
    """A lower bound on sum_z exp(-z^2 / (2 sigma^2)) over all integers z."""
    poisson = sigma * math.sqrt(2.0 * math.pi)
    if sigma <= 1e4:
        m = int(math.ceil(14.0 * sigma)) + 1
        partial = 1.0 + 2.0 * _sum_terms(sigma, 1, m)
        poisson = max(poisson, partial)
    return poisson * (1.0 - _REL)


def _tail_upper(sigma: float, k: int, normaliser: float) -> float:
    if k <= 0:
        return 1.0
    two_s2 = 2.0 * sigma * sigma
    if k * k / two_s2 > 700.0:  # sub-Gaussian: P[Z >= k] <= exp(-k^2/(2 sigma^2)) < 1e-304 < TINY_TAIL
        return TINY_TAIL
    end = int(math.ceil(math.sqrt(k * k + _CUTOFF * two_s2)))
    head = _sum_terms(sigma, k, end)
    # for z >= end + 1: f(z + 1) / f(z) = exp(-(2z + 1) / (2 sigma^2)) <= r, so the rest is <= f(end + 1) / (1 - r)
    a = (end + 1) * (end + 1) / two_s2
    one_minus_r = -math.expm1(-(2 * end + 3) / two_s2)
    rest = math.exp(-a) / one_minus_r  # below exp(-90) sigma / 13 of the head: it only needs to be there
    p = (head + rest) * (1.0 + _REL) / normaliser
    return min(max(math.nextafter(p, math.inf), TINY_TAIL), 1.0)


def discrete_gaussian_tail(sigma: float, k: int) -> float:
    """P[Z >= k] for Z ~ N_Z(0, sigma^2), the discrete Gaussian, as an upper bound within a relative 1e-9.

    ``k`` is an integer; for k <= 0 (a tail of at least 1/2) the bound returned is 1.0, and tails below
    ``TINY_TAIL`` are returned as ``TINY_TAIL``. ``sigma`` must be in (0, ``MAX_SIGMA``]."""
    sigma = _check_sigma(sigma)
    if int(k) != k:
        raise ValueError(f"k must be an integer, got {k!r}")
    return _tail_upper(sigma, int(k), _normaliser_lower(sigma))


def stability_delta(sigma: float, tau: float) -> float:
    """The delta the threshold costs: P[1 + Z > tau], the probability that a value with count 1 is
    released by the rule "noisy count > tau" (Z discrete Gaussian with scale ``sigma``).

    The noisy count is an integer, so 1 + Z > tau iff Z >= floor(tau): the exact tail
    :func:`discrete_gaussian_tail` (sigma, floor(tau)). With ``sigma``'s noise, the step is
    (1/(2 sigma^2), stability_delta(sigma, tau))-approximate zCDP under add/remove-one neighbours (see
    the module docstring), and no smaller delta certifies it."""
    if not (isinstance(tau, (int, float)) and math.isfinite(tau)):
        raise ValueError(f"tau must be a finite number, got {tau!r}")
    return discrete_gaussian_tail(sigma, math.floor(tau))


def stability_threshold(sigma: float, delta: float) -> float:
    """The smallest threshold tau with :func:`stability_delta` (sigma, tau) <= ``delta`` (for the rule
    "noisy count > tau").

    It is the integer k = min{k >= 1 : P[Z >= k] <= delta}: any tau in [k, k + 1) costs the same delta,
    and any tau < k costs more. It is at most the sub-Gaussian threshold 1 + sigma sqrt(2 ln(1/delta)),
    and about 1/2 + sigma (sqrt(2 ln(1/delta)) - z) below it, z the normal quantile with Phi(-z) = delta
    (P[Z >= k] is about Phi(-(k - 1/2) / sigma)). ``delta`` must be in [``TINY_TAIL``, 1/2)."""
    sigma = _check_sigma(sigma)
    if not (isinstance(delta, (int, float)) and TINY_TAIL <= delta < 0.5):
        raise ValueError(f"delta must be in [{TINY_TAIL:g}, 0.5), got {delta!r}")
    normaliser = _normaliser_lower(sigma)
    # P[Z >= 0] > 1/2 > delta, so k >= 1; the sub-Gaussian bound P[Z >= t] <= exp(-t^2/(2 sigma^2)) gives hi.
    lo = 0  # tail(lo) > delta
    hi = max(1, int(math.ceil(sigma * math.sqrt(2.0 * math.log(1.0 / delta)))))
    while _tail_upper(sigma, hi, normaliser) > delta:  # the upper bound's margin could exceed the true tail's
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _tail_upper(sigma, mid, normaliser) <= delta:
            hi = mid
        else:
            lo = mid
    return float(hi)


def _tail_any(sigma: float, k: int) -> float:
    """P[Z >= k] as :func:`discrete_gaussian_tail`, or its sub-Gaussian bound exp(-k^2 / (2 sigma^2)) (Canonne,
    Kamath & Steinke 2020) for k > 0 beyond ``MAX_SIGMA``."""
    if sigma <= MAX_SIGMA:
        return discrete_gaussian_tail(sigma, k)
    return 1.0 if k <= 0 else min(1.0, math.exp(-k * k / (2.0 * sigma * sigma)))


def person_stability_delta(sigma: float, tau: float, max_rows: int = 1) -> float:
    """The delta of the threshold ``tau`` when one person brings at most ``max_rows`` = k records (module docstring):
    the largest sum_i P[c_i + Z > tau] over counts c_i >= 1 with sum_i c_i <= k, at most 1. It is
    max(P[k + Z > tau], k P[1 + Z > tau]) when P[k + Z > tau] < 1/2, else the exact maximum over the partitions of k
    (1 where k > 1000). At k = 1: :func:`stability_delta`."""
    k = int(max_rows)
    if k < 1:
        raise ValueError(f"max_rows must be >= 1, got {max_rows!r}")
    if not (isinstance(tau, (int, float)) and math.isfinite(tau)):
        raise ValueError(f"tau must be a finite number, got {tau!r}")
    if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
    if k == 1:
        return _tail_any(float(sigma), math.floor(tau))
    t = math.floor(tau)
    h = [0.0] + [_tail_any(float(sigma), t + 1 - c) for c in range(1, k + 1)]
    if h[k] < 0.5:
        return min(1.0, max(h[k], k * h[1]))
    if k > 1000:
        return 1.0
    best = [0.0] * (k + 1)  # best[n]: the largest sum over the partitions of n (unbounded knapsack)
    for n in range(1, k + 1):
        best[n] = max(h[c] + best[n - c] for c in range(1, n + 1))
    return min(1.0, best[k])


def person_stability_threshold(sigma: float, delta: float, max_rows: int = 1) -> float:
    """The smallest threshold tau with :func:`person_stability_delta` (sigma, tau, max_rows) <= ``delta``: the
    integer max(k - 1 + T_1(delta), T_1(delta / k)), T_1 = :func:`stability_threshold` (module docstring). At
    k = 1 it is :func:`stability_threshold`. ``delta / k`` must be in [``TINY_TAIL``, 1/2)."""
    k = int(max_rows)
    if k < 1:
        raise ValueError(f"max_rows must be >= 1, got {max_rows!r}")
    if k == 1:
        return stability_threshold(sigma, delta)
    return float(max(k - 1 + stability_threshold(sigma, delta), stability_threshold(sigma, delta / k)))
