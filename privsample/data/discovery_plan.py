"""The budget of private schema discovery (``privsample.data.discovery.private_schema``): the noisy row
count, the plan computed from it, the per-column split and the category threshold.

* :func:`noisy_row_count` is the one mechanism here: the number of records with discrete Gaussian noise
  (Canonne, Kamath & Steinke 2020), rho-zCDP under add/remove-one-record neighbours (sensitivity 1).
* Everything else is post-processing: :func:`plan_discovery` (the share of the budget discovery takes),
  :func:`column_split` (a column's rho for its type counts and for its values) and :func:`category_threshold`
  (the stability-based histogram's tau for a given delta) are functions of the noisy row count and public
  parameters only (``max_rows``: the privacy unit's k, ``privsample.privacy.unit``; every sigma and threshold here is
  the one the mechanisms use under that unit, so the plan is that of the run; 1: add/remove one record); the exact
  splits (``split_exact``, ``round_down``) never let the parts sum to more than the whole. The constants are utility
  choices; privacy does not depend on them.
* :func:`discovery_forecast`: what discovery would keep for an assumed (public) row count, with the same
  functions, before anything is spent (``privsample plan --rows N``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist
from typing import Any, Callable, Sequence

import numpy as np

from privsample.errors import InputError
from privsample.privacy.accountant import Accountant
from privsample.privacy.mechanisms import gaussian_measure, rho_for_sigma, sigma_for_rho
from privsample.privacy.noise import NoiseSource

__all__ = [
    "plan_discovery",
    "column_split",
    "row_count_rho",
    "round_down",
    "round_up",
    "split_exact",
    "discovery_forecast",
    "noisy_row_count",
    "min_category_records",
    "category_threshold",
    "code_test_rho",
    "distinct_rho",
    "values_rho",
    "DISTINCT_SHARE",
    "MIN_PRESENT_SIGMAS",
    "CODE_SHARE",
    "CODE_MAX_FRACTION",
    "COUNT_SHARE",
    "TARGET_FRACTION",
    "PASS_PROBABILITY",
    "MIN_SHARE",
    "MAX_SHARE",
    "SMALL_MAX_SHARE",
    "SMALL_FRACTION",
    "largest_share",
    "TYPE_SHARE",
    "TYPE_MIN_SHARE",
    "TYPE_SIGNAL",
]

# -- a column's split between its type counts and its values (utility choices; privacy does not depend on them)
TYPE_SHARE = 0.15  # largest share of a column's rho for the type/nullability counts; the rest: values/bounds
TYPE_MIN_SHARE = 0.05  # smallest share for the type counts
TYPE_SIGNAL = 30.0  # type counts get the rho that gives sigma_a = n_hat / 30 (3 sigma_a = 10% of the records),
#                     clamped to [TYPE_MIN_SHARE, TYPE_SHARE] of the column's rho

# -- planning the discovery budget from the noisy row count (utility choices; privacy does not depend on them)
COUNT_SHARE = 0.01  # share of the budget given to ``private_schema`` spent on the noisy row count
TARGET_FRACTION = 0.02  # planned share: a category holding 2% of the records passes its threshold ...
PASS_PROBABILITY = 0.9  # ... with probability >= 0.9 (normal approximation of the discrete Gaussian)
MIN_SHARE = 0.05  # planned share of the whole budget (row count included) is clamped to [5%, 50%] ...
MAX_SHARE = 0.5
SMALL_MAX_SHARE = 0.7  # ... or [5%, 70%] for a small table: one whose categories need more than
SMALL_FRACTION = 0.12  # this share of its records even at MAX_SHARE
# Why these: at epsilon = 1 a table of Adult's size (32,561 records, 15 columns) gets about the 10% that
# discovery had before (categories need about 650 records); at 10^5 records 5% keeps categories of about 1%
# (10^6: 0.1%) of the records. At 1,000 records and 15-21 columns, categories need about a third of the records
# at 50%, and most of the error is categories merged into the catch-all: 70% (about 280 records) took the mean
# 2-way error of a 1,000-row credit-like table from 0.83-0.87 to 0.70-0.73 with the number columns' error level
# (0.8: 0.64-0.69, but the number columns' error rose), and a 1,000-row Adult sample's from 0.99 to 0.98. On Car
# (1,728 records, 7 columns: about 10% at 50%) and Mushroom (8,124, 23: about 4%), 70% was worse (0.15 -> 0.17,
# 0.14 -> 0.20): there the categories pass at 50% and synthesis needs the budget. benchmarks/results/small_tables.md.


# ---------------------------------------------------------------------------------------------------
# Exact budget splits and the category threshold
# ---------------------------------------------------------------------------------------------------
def round_down(x: Fraction) -> float:
    """The largest float <= ``x`` (and >= 0): a budget part that never exceeds its exact share."""
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    return max(f, 0.0)


def round_up(x: Fraction) -> float:
    """The smallest float >= ``x``."""
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def split_exact(total: float, weights: Sequence[float]) -> list[float]:
    """Floats proportional to ``weights`` whose exact sum is <= ``total`` (and equal up to an ulp)."""
    t = Fraction(total)
    w = [Fraction(x) for x in weights]
    parts: list[float] = []
    used = Fraction(0)
    for i, wi in enumerate(w):
        p = round_down(t - used) if i == len(w) - 1 else round_down(t * wi / sum(w))
        parts.append(p)
        used += Fraction(p)
    return parts


def category_threshold(sigma: float, delta: float, max_rows: int = 1) -> float:
    """The smallest tau at which a count-1 value passes (noisy count > tau) with probability <= delta: the exact
    tail of the discrete Gaussian (``privsample.privacy.sparse_histogram.stability_threshold``, about 5% lower),
    never above the sub-Gaussian bound 1 + sigma sqrt(2 ln(1/delta)), which is used outside the exact
    function's range.

    ``max_rows`` = k > 1 (one person, at most k records): the smallest tau at which the new values one person can
    bring (counts summing to at most k) pass with total probability <= delta
    (``sparse_histogram.person_stability_threshold``: the worst case is one value held k times or k values held
    once), never above the sub-Gaussian bound max(k + sigma sqrt(2 ln(1/delta)), 1 + sigma sqrt(2 ln(k/delta))),
    under which each of the two cases passes with probability <= delta."""
    from privsample.privacy.sparse_histogram import (
        MAX_SIGMA,
        TINY_TAIL,
        person_stability_threshold,
        stability_threshold,
    )

    if max_rows != 1:
        k = int(max_rows)
        bound = max(
            k + sigma * math.sqrt(2.0 * math.log(1.0 / delta)), 1.0 + sigma * math.sqrt(2.0 * math.log(k / delta))
        )
        if 0 < sigma <= MAX_SIGMA and TINY_TAIL <= delta / k and delta < 0.5:
            return min(bound, person_stability_threshold(sigma, delta, k))
        return bound
    bound = 1.0 + sigma * math.sqrt(2.0 * math.log(1.0 / delta))
    if 0 < sigma <= MAX_SIGMA and TINY_TAIL <= delta < 0.5:
        return min(bound, stability_threshold(sigma, delta))
    return bound


# -- identifier check (utility choices; privacy does not depend on them)
DISTINCT_SHARE = 0.1  # of a text or integer column's values budget: its noisy number of distinct values first
MIN_PRESENT_SIGMAS = 10.0  # identifier-like only where the records with a value are at least this many sd of it


def distinct_rho(rho_b: float, n_hat: float = math.inf, max_rows: int = 1) -> float:
    """The rho a text or integer column spends first on its noisy number of distinct values (the identifier check
    of ``private_schema``, ``privsample.data.id_discovery``): ``DISTINCT_SHARE`` of ``rho_b``, rounded down; 0
    where the check cannot find anything, so that the column's categories, codes or grid keep all of ``rho_b``:
    where n_hat (the most records a column can have with a value) is below ``MIN_PRESENT_SIGMAS`` sd of the
    count at that rho (sensitivity ``max_rows``, the privacy unit's k), the bar (e1) sets for an identifier-like
    column, and so also below (e3)'s bar for long values, whose count (``LONG_SHARE`` <= ``DISTINCT_SHARE`` of
    rho_b) has the larger sd. A function of ``rho_b``, n_hat (a noisy count) and public constants:
    post-processing."""
    rho_d = split_exact(rho_b, [DISTINCT_SHARE, 1.0 - DISTINCT_SHARE])[0]
    if rho_d > 0 and max(float(n_hat), 1.0) < MIN_PRESENT_SIGMAS * sigma_for_rho(rho_d, max_rows * 1.0):
        return 0.0
    return rho_d


def values_rho(rho_b: float, n_hat: float = math.inf, max_rows: int = 1) -> float:
    """What a text or integer column that is not an identifier has left for its categories, codes or grid:
    ``rho_b`` less ``distinct_rho(rho_b, n_hat, max_rows)`` (exactly, rounded down)."""
    return round_down(Fraction(rho_b) - Fraction(distinct_rho(rho_b, n_hat, max_rows)))


# -- integer codes (utility choices; privacy does not depend on them)
CODE_SHARE = 0.5  # an integer column's values budget spent on its thresholded value counts first (codes test)
CODE_MAX_FRACTION = 0.1  # ... only where a value needs at most this share of the records to be released


def code_test_rho(rho_b: float, delta_col: float, n_hat: float, spent: float = 0.0, max_rows: int = 1) -> float:
    """The rho an integer column spends first on the thresholded counts of its values (the codes test of
    ``private_schema``), or 0 where the test would not pay: where a value needs more than ``CODE_MAX_FRACTION``
    of the n_hat records to pass at that rho (small tables), so the whole ``rho_b`` goes to the grid histogram.
    ``spent``: what the column's identifier check (``distinct_rho``) already took, out of the test's share, so
    that the grid's share stays ``1 - CODE_SHARE`` of ``rho_b``. A function of public quantities and n_hat only
    (post-processing)."""
    rho_c = round_down(Fraction(split_exact(rho_b, [CODE_SHARE, 1.0 - CODE_SHARE])[0]) - Fraction(spent))
    if rho_c <= 0:
        return 0.0
    tau = category_threshold(sigma_for_rho(rho_c, max_rows * 1.0), delta_col, max_rows)
    if tau > CODE_MAX_FRACTION * max(n_hat, 1.0):
        return 0.0
    return rho_c


# ---------------------------------------------------------------------------------------------------
# Row count and budget plan
# ---------------------------------------------------------------------------------------------------
def noisy_row_count(n: int, accountant: Accountant, noise: NoiseSource, rho: float) -> tuple[float, float]:
    """Spend ``rho`` on the number of records: returns (n_hat, sigma) with n_hat = max(n + Z, 1).

    Guarantee: rho-zCDP under add/remove-one-record neighbours. The count changes by exactly 1 between
    neighbours (L2 sensitivity 1) and Z is discrete Gaussian with sigma = 1/sqrt(2 rho) (Canonne, Kamath
    & Steinke 2020); under the accountant's unit (one person, at most k records) by at most k, sigma =
    k/sqrt(2 rho) (``gaussian_measure``). ``max(., 1)`` is post-processing; n_hat is public afterwards.
    """
    noisy, sigma = gaussian_measure(
        accountant, noise, np.array([int(n)], dtype=np.int64), rho, "schema: row count", measured="number of records"
    )
    return float(max(int(noisy[0]), 1)), sigma


def row_count_rho(total_rho: float, count_share: float = COUNT_SHARE) -> float:
    """The rho that pays for the noisy row count: ``count_share`` of ``total_rho``, rounded down."""
    return round_down(Fraction(count_share) * Fraction(total_rho))


def column_split(col_rho: float, n_hat: float, max_rows: int = 1) -> tuple[float, float]:
    """(rho for the type counts, rho for the values) of one column, from public quantities and n_hat.

    The type counts get the rho giving sigma_a = n_hat / TYPE_SIGNAL, clamped to [TYPE_MIN_SHARE,
    TYPE_SHARE] of ``col_rho``; the rest (exactly, rounded down) is for categories or bounds. The rho
    for the values is non-decreasing in ``col_rho``, so a larger budget never raises a threshold. ``max_rows``: the
    privacy unit's k (sigma_a of a count of sensitivity k)."""
    lo = split_exact(col_rho, [TYPE_MIN_SHARE, 1.0 - TYPE_MIN_SHARE])[0]
    hi = split_exact(col_rho, [TYPE_SHARE, 1.0 - TYPE_SHARE])[0]
    rho_a = min(max(rho_for_sigma(max(n_hat, 1.0) / TYPE_SIGNAL, max_rows * 1.0), lo), hi)
    return rho_a, round_down(Fraction(col_rho) - Fraction(rho_a))


def min_category_records(
    sigma: float, delta_col: float, pass_probability: float = PASS_PROBABILITY, max_rows: int = 1
) -> float:
    """Records a category needs to pass tau = ``category_threshold`` (at most 1 + sigma sqrt(2 ln(1/delta_col)) for
    one record per person) with probability about ``pass_probability``: tau + z sigma (z the normal quantile; the
    discrete Gaussian is close to normal)."""
    return category_threshold(sigma, delta_col, max_rows) + NormalDist().inv_cdf(pass_probability) * sigma


def _threshold_at(
    share: float, total_rho: float, count_rho: float, delta_col: float, n_hat: float, m: int, pass_probability: float,
    max_rows: int = 1,
) -> tuple[float, float]:  # fmt: skip
    """(rho for the columns, records a category needs) when discovery takes ``share`` of ``total_rho``."""
    rho = round_down(Fraction(share) * Fraction(total_rho) - Fraction(count_rho))
    if rho <= 0:
        return rho, math.inf
    col_rho = split_exact(rho, [1.0] * m)[0]
    rho_b = values_rho(column_split(col_rho, n_hat, max_rows)[1], n_hat, max_rows)  # after a text column's (e1)
    if rho_b <= 0:
        return rho, math.inf
    return rho, min_category_records(sigma_for_rho(rho_b, max_rows * 1.0), delta_col, pass_probability, max_rows)


def largest_share(max_share: float = MAX_SHARE, small_max_share: float | None = None) -> float:
    """The largest share ``plan_discovery`` may choose with these options (for the up-front budget check)."""
    if small_max_share is None:
        small_max_share = SMALL_MAX_SHARE if max_share == MAX_SHARE else max_share
    if not 0 < small_max_share <= 1:
        raise InputError(f"small_max_share must be in (0, 1] (got {small_max_share})")
    return max(float(max_share), float(small_max_share))


def plan_discovery(
    total_rho: float,
    delta: float,
    n_hat: float,
    n_columns: int,
    *,
    count_rho: float = 0.0,
    share: float | None = None,
    target_fraction: float = TARGET_FRACTION,
    pass_probability: float = PASS_PROBABILITY,
    min_share: float = MIN_SHARE,
    max_share: float = MAX_SHARE,
    small_max_share: float | None = None,
    small_fraction: float = SMALL_FRACTION,
    max_rows: int = 1,
) -> tuple[float, dict[str, Any]]:
    """The budget for column discovery, from public quantities and the noisy row count ``n_hat``.

    Returns (rho, details): ``rho`` is what the columns may spend, ``share * total_rho - count_rho``
    (rounded down), where ``count_rho`` was already spent on ``n_hat`` and ``share`` is the part of
    ``total_rho`` that discovery takes in all.

    Rule. Without ``share`` (planned): the smallest share in [min_share, max_share] at which a category
    holding ``target_fraction`` of n_hat records passes its threshold with probability about
    ``pass_probability`` (``min_category_records``, with the per-column split of ``private_schema``:
    rho/m per column, ``column_split`` for the categories, delta/m per column); min_share if less suffices (a
    large table); if even max_share is not enough, max_share, or ``small_max_share`` for a small table, one whose
    categories would need more than ``small_fraction`` of n_hat records at max_share (``small_max_share`` None:
    ``SMALL_MAX_SHARE`` with the default ``max_share``, else ``max_share``). With ``share``: that fixed
    share. ``max_rows``: the privacy unit's k (the thresholds and sigmas of one person with at most k records).
    ``details`` states the outcome: ``min_category_records`` (records a category needs at the
    chosen share, rounded up) and ``min_category_fraction`` (that over n_hat).

    Privacy: the result is a function of n_hat (a DP output) and public parameters only, hence
    post-processing; the accountant composes the later steps adaptively and refuses any overrun, so
    discovery plus synthesis never exceed the user's budget.
    """
    m = int(n_columns)
    if m < 1:
        raise InputError("discovery needs at least one column")
    if not (0 < min_share <= max_share <= 1):
        raise InputError(
            f"discovery shares must satisfy 0 < min_share <= max_share <= 1 (got {min_share}, {max_share})"
        )
    small_cap = largest_share(max_share, small_max_share)
    if share is not None and not (0 < share <= 1):
        raise InputError(f"the discovery share must be in (0, 1] (got {share})")
    if not (0 < pass_probability < 1 and 0 < target_fraction <= 1):
        raise InputError("pass_probability must be in (0, 1) and target_fraction in (0, 1]")
    delta_col = round_down(Fraction(delta) / m)
    n_hat = max(float(n_hat), 1.0)
    target = target_fraction * n_hat

    def at(s: float) -> tuple[float, float]:
        return _threshold_at(s, total_rho, count_rho, delta_col, n_hat, m, pass_probability, max_rows)

    if share is not None:
        chosen, rule = float(share), "fixed"
    else:
        chosen = _planned_share(at, target, min_share, max_share, small_cap, small_fraction * n_hat)
        rule = "planned"
    rho, need = at(chosen)
    if rho <= 0:
        raise InputError(f"the discovery share {chosen:g} does not cover the row count already spent")
    records = math.ceil(need) if math.isfinite(need) else None
    details = {
        "rule": rule,
        "share": chosen,
        "rho": rho,
        "count_rho": float(count_rho),
        "n_hat": n_hat,
        "target_fraction": float(target_fraction),
        "pass_probability": float(pass_probability),
        "min_share": float(min_share),
        "max_share": float(max_share),
        "min_category_records": records,
        "min_category_fraction": (records / n_hat) if records is not None else None,
    }
    return rho, details


def _planned_share(
    at: Callable[[float], tuple[float, float]],
    target: float,
    min_share: float,
    max_share: float,
    small_cap: float,
    small_records: float,
) -> float:
    """The planned share of ``plan_discovery`` (its docstring states the rule): ``at(s)[1]`` is the records a
    category needs at share s, ``target`` the records it should need, ``small_records`` the need beyond which
    the table is small (its cap ``small_cap``)."""
    if at(min_share)[1] <= target:
        return float(min_share)
    if at(max_share)[1] > target:
        small = at(max_share)[1] > small_records
        return float(small_cap if small else max_share)
    lo, hi = float(min_share), float(max_share)  # bisection: the threshold is non-increasing in the share
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if at(mid)[1] <= target else (mid, hi)
    return hi


def discovery_forecast(
    total_rho: float, delta: float, n_rows: int, n_columns: int, bins: int = 16, max_rows: int = 1, **plan_options: Any
) -> dict[str, Any]:
    """What private discovery would keep in a table of ``n_rows`` records (an assumed, public count, taken
    as the noisy row count) and ``n_columns`` columns, for the run's ``total_rho`` and discovery ``delta``:
    the same steps as ``privsample.data.discovery.private_schema`` with ``share=None`` (``row_count_rho``,
    ``plan_discovery``, an even split over the columns, ``column_split``, and for a numeric column
    ``privsample.data.numeric_discovery.grid_budget``). Reads no data; spends nothing.

    Returns ``share`` (of the budget discovery takes), ``rho`` (row count and columns), ``min_category_records``
    (records a category needs to be kept with probability about ``PASS_PROBABILITY``), ``sigma_categories``
    (noise sd of a category's count), ``sigma_grid`` (noise sd of a numeric column's grid histogram counts) and
    ``numeric_records`` (``presence_threshold`` of it: a value or tail holding fewer records may be clipped or
    merged); ``None`` where a column's budget is too small to split (discovery would refuse it). Where integer
    columns test for codes first (``code_test_rho``): ``code_records``, the records a code needs, and
    ``sigma_grid_integer``, their grid's noise sd after the test (else None and ``sigma_grid``). ``max_rows``: the
    privacy unit's k, as the run's accountant has it."""
    from privsample.data.grid_rules import presence_threshold
    from privsample.data.numeric_discovery import grid_budget

    m = int(n_columns)
    count_rho = row_count_rho(total_rho)
    k, unit = int(max_rows), max_rows * 1.0  # the privacy unit's k and a count's sensitivity under it
    rho_cols, details = plan_discovery(
        total_rho, delta, float(n_rows), m, count_rho=count_rho, max_rows=k, **plan_options
    )
    n_hat = details["n_hat"]
    rho_b = column_split(split_exact(rho_cols, [1.0] * m)[0], n_hat, k)[1]
    rho_v = values_rho(rho_b, n_hat, k) if rho_b > 0 else 0.0  # a text or integer column: after its (e1)
    sigma_b = sigma_for_rho(rho_v, unit) if rho_v > 0 else None
    rho_grid = grid_budget(rho_b, n_hat, bins, max_rows=k)[0] if rho_b > 0 else 0.0
    sigma_grid = sigma_for_rho(rho_grid, unit) if rho_grid > 0 else None
    delta_col = round_down(Fraction(delta) / m)
    rho_d = distinct_rho(rho_b, n_hat, k) if rho_b > 0 else 0.0
    rho_c = code_test_rho(rho_b, delta_col, n_hat, rho_d, k) if rho_v > 0 else 0.0
    if rho_c > 0:  # an integer column tests for codes first (its identifier check out of the test's share)
        sigma_c = sigma_for_rho(rho_c, unit)
        code_records = math.ceil(min_category_records(sigma_c, delta_col, max_rows=k))
        rest = round_down(Fraction(rho_v) - Fraction(rho_c))
        sigma_int = sigma_for_rho(grid_budget(rest, n_hat, bins, max_rows=k)[0], unit)
    else:
        code_records = None
        sigma_int = sigma_for_rho(grid_budget(rho_v, n_hat, bins, max_rows=k)[0], unit) if rho_v > 0 else sigma_grid
    return {
        "row_count": int(n_rows),
        "share": details["share"],
        "rho": count_rho + rho_cols,
        "min_category_records": details["min_category_records"],
        "sigma_categories": sigma_b,
        "sigma_grid": sigma_grid,
        "numeric_records": None if sigma_grid is None else presence_threshold(sigma_grid, n_hat),
        "code_records": code_records,
        "sigma_grid_integer": sigma_int,
    }
